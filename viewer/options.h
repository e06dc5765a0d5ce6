/* shapematch-view's command line: the options, their defaults and their checks. */
#ifndef SM_VIEW_OPTIONS_H
#define SM_VIEW_OPTIONS_H

#include "render.h"

#include <shapematch/shapematch.h>
#include <stdbool.h>

/// --interop: share the particle buffers between OpenCL and OpenGL where the device offers it
/// (auto), insist (on), or copy through the host (off).
typedef enum interop_mode { INTEROP_AUTO, INTEROP_ON, INTEROP_OFF } interop_mode;

typedef struct options {
    const char *scene, *screenshot, *record, *script, *report, *device;
    int frames, width, height, max_steps;
    bool headless;
    interop_mode interop;
    sm_backend backend;
    view_colour colour;
} options;

/// The usage text (--help, and after a usage error).
extern const char *const view_usage;

/// Parses the command line into *o (defaults for what it does not give); returns -1 to go on,
/// else the exit code (0 after --help, 2 after a usage error, printed with the usage). The
/// arguments it quotes in its errors are made printable (script_printable()). With --frames
/// and no DISPLAY or WAYLAND_DISPLAY it draws headless.
int view_parse_options(int argc, char **argv, options *o);

#endif
