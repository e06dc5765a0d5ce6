/* Reading whole files: scene files, kernel sources from $SM_KERNEL_DIR and cached program
 * binaries. */
#include "files.h"
#include "world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

sm_read_status sm_read_file(const char *path, size_t limit, char **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    FILE *file = fopen(path, "rb");
    if (!file) return SM_READ_CANNOT_OPEN;
    // grown as it fills, so pipes and files that change size read the same way
    size_t capacity = 1 << 16, used = 0;
    char *text = malloc(capacity);
    while (text) {
        used += fread(text + used, 1, capacity - used - 1, file);
        if (used < capacity - 1) break;
        if (capacity >= limit) {
            free(text), fclose(file);
            return SM_READ_TOO_LARGE;
        }
        char *grown = realloc(text, capacity * 2);
        if (!grown) free(text);
        text = grown;
        capacity *= 2;
    }
    const int saved = errno;
    bool failed = text && ferror(file);
    fclose(file);
    if (!text) return SM_READ_NO_MEMORY;
    if (failed) {
        free(text);
        errno = saved;
        return SM_READ_FAILED;
    }
    text[used] = '\0';
    *out = text;
    *out_size = used;
    return SM_READ_OK;
}
