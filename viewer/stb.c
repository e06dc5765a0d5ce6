/* The implementation of stb_image_write (Debian's libstb-dev ships the single-file headers). */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
