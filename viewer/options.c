/* shapematch-view's command line (options.h). */
#include "options.h"
#include "script.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const view_usage =
    "usage: shapematch-view SCENE [options]\n"
    "\n"
    "Runs SCENE (a JSON scene file) in a window. Press H in the window for the key bindings;\n"
    "objects with a skinned surface show it instead of their particles (M: surfaces, particles, both);\n"
    "the camera follows the objects to keep them in view (T: on, off).\n"
    "\n"
    "options:\n"
    "  --frames N            simulate and draw N frames, one time step each, then exit\n"
    "  --headless            draw without a window system, through EGL (a GPU's EGL device where\n"
    "                        there is one): with --frames, on machines without X; the default\n"
    "                        there when --frames is given and DISPLAY is not set\n"
    "  --screenshot FILE     write the last frame drawn as a PNG\n"
    "  --record DIR          write every frame as DIR/frame_00001.png, ...\n"
    "  --script FILE         timed mouse and key events (format in viewer/script.h)\n"
    "  --report FILE         at exit, write what happened as JSON: picks (when, where, where the\n"
    "                        particle is at the end and at rest), springs, each object's\n"
    "                        centre of mass and RMS radius at the start and end, and the mean\n"
    "                        distance of its particles to their goals; the cuts, and the pieces\n"
    "  --interop auto|on|off share the particle buffers between OpenCL and OpenGL (cl_khr_gl_sharing);\n"
    "                        auto (default) uses it where the device offers it, else copies through\n"
    "                        the host; on fails where it is not offered\n"
    "  --backend NAME        opencl or cpu (default: opencl when a device is available)\n"
    "  --device SEL          OpenCL device: index or part of the name (default: $SM_DEVICE, else\n"
    "                        the first GPU, else the first device)\n"
    "  --size WxH            window size in pixels, default 1280x720\n"
    "  --colour MODE         object (default), cluster or strain (distance to the goal)\n"
    "  --max-steps N         time steps per frame at most, default 4\n"
    "  --help                show this text\n";

static bool parse_int(const char *text, int lo, int *out)
{
    if (!isdigit((unsigned char)text[0])) return false; // digits only: no sign, no spaces
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < lo || value > 1000000000) return false;
    *out = (int)value;
    return true;
}

/// Parses WxH: two whole numbers from 64 to 16384 and nothing else around them.
static bool parse_size(const char *text, int *width, int *height)
{
    if (!isdigit((unsigned char)text[0])) return false;
    char *end = NULL;
    const long w = strtol(text, &end, 10);
    if (*end != 'x' || !isdigit((unsigned char)end[1])) return false;
    const long h = strtol(end + 1, &end, 10);
    if (*end != '\0' || w < 64 || h < 64 || w > 16384 || h > 16384) return false;
    *width = (int)w, *height = (int)h;
    return true;
}

/// Whether `arg` is an option that takes a value.
static bool takes_value(const char *arg)
{
    static const char *names[] = {"--frames", "--screenshot", "--record", "--script", "--report", "--device", "--max-steps",
                                  "--size", "--interop", "--backend", "--colour", "--color"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(arg, names[i]) == 0) return true;
    return false;
}

int view_parse_options(int argc, char **argv, options *o)
{
    char shown[256];
    *o = (options){.width = 1280, .height = 720, .max_steps = 4, .interop = INTEROP_AUTO, .backend = SM_BACKEND_DEFAULT};
    char seen[512] = " "; // the options given so far, each between spaces
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        bool ok = true, takes = true;
        if (arg[0] == '-' && strlen(arg) < 40) {
            char key[48];
            snprintf(key, sizeof key, " %s ", strcmp(arg, "--color") == 0 ? "--colour" : arg);
            if (strstr(seen, key)) {
                script_printable(arg, 64, shown, sizeof shown);
                fprintf(stderr, "shapematch-view: option %s is given twice\n\n%s", shown, view_usage);
                return 2;
            }
            if (strlen(seen) + strlen(key) < sizeof seen) strcat(seen, key + 1);
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(view_usage, stdout);
            return 0;
        } else if (strcmp(arg, "--headless") == 0) {
            takes = false;
            o->headless = true;
        } else if (arg[0] != '-') {
            takes = false;
            if (o->scene) {
                script_printable(arg, 64, shown, sizeof shown);
                fprintf(stderr, "shapematch-view: a second scene, %s: give one\n\n%s", shown, view_usage);
                return 2;
            }
            o->scene = arg;
        } else if (!takes_value(arg)) {
            script_printable(arg, 64, shown, sizeof shown); // no terminal escapes echoed
            fprintf(stderr, "shapematch-view: unknown option %s\n\n%s", shown, view_usage);
            return 2;
        } else if (!value) {
            ok = false;
        } else if (strcmp(arg, "--frames") == 0) ok = parse_int(value, 1, &o->frames);
        else if (strcmp(arg, "--screenshot") == 0) o->screenshot = value;
        else if (strcmp(arg, "--record") == 0) o->record = value;
        else if (strcmp(arg, "--script") == 0) o->script = value;
        else if (strcmp(arg, "--report") == 0) o->report = value;
        else if (strcmp(arg, "--device") == 0) o->device = value;
        else if (strcmp(arg, "--max-steps") == 0) ok = parse_int(value, 1, &o->max_steps);
        else if (strcmp(arg, "--size") == 0) ok = parse_size(value, &o->width, &o->height);
        else if (strcmp(arg, "--interop") == 0) {
            ok = strcmp(value, "auto") == 0 || strcmp(value, "on") == 0 || strcmp(value, "off") == 0;
            o->interop = value[1] == 'u' ? INTEROP_AUTO : value[1] == 'n' ? INTEROP_ON : INTEROP_OFF;
        } else if (strcmp(arg, "--backend") == 0) {
            ok = strcmp(value, "cpu") == 0 || strcmp(value, "opencl") == 0;
            o->backend = value[0] == 'c' ? SM_BACKEND_CPU : SM_BACKEND_OPENCL;
        } else if (strcmp(arg, "--colour") == 0 || strcmp(arg, "--color") == 0) {
            ok = strcmp(value, "object") == 0 || strcmp(value, "cluster") == 0 || strcmp(value, "strain") == 0;
            o->colour = value[0] == 'o' ? VIEW_COLOUR_OBJECT : value[0] == 'c' ? VIEW_COLOUR_CLUSTER : VIEW_COLOUR_STRAIN;
        }
        if (!ok) {
            fprintf(stderr, "shapematch-view: bad or missing value for %s\n\n%s", arg, view_usage); // a known option
            return 2;
        }
        if (takes) a++;
    }
    if (!o->scene) {
        fprintf(stderr, "shapematch-view: no scene file given\n\n%s", view_usage);
        return 2;
    }
    if (o->headless && o->frames == 0) {
        fprintf(stderr, "shapematch-view: --headless needs --frames N (there is no window to close)\n\n%s", view_usage);
        return 2;
    }
    const char *display = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
    if (o->frames > 0 && !(display && *display) && !(wayland && *wayland)) o->headless = true;
    return -1;
}

