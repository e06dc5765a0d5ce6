/* The shapematch command: inspect and run scene files. */
#include "npy.h"

#include <shapematch/shapematch.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

static const char *usage_main =
    "usage: shapematch <command> [options]\n"
    "\n"
    "Soft bodies by meshless shape matching (Mueller et al. 2005).\n"
    "\n"
    "commands:\n"
    "  info SCENE    print the size of a scene: totals, then one line per object\n"
    "  run SCENE     run a scene headless and optionally write its trajectory (.npy)\n"
    "\n"
    "Run 'shapematch <command> --help' for the options of a command.\n";

static const char *usage_info =
    "usage: shapematch info SCENE\n"
    "\n"
    "Loads SCENE (a JSON scene file, see scenes/README.md) and prints\n"
    "  objects=N clusters=N particles=N memberships=N\n"
    "then one line per object with its shape, mode and sizes.\n";

static const char *usage_run =
    "usage: shapematch run SCENE [options]\n"
    "\n"
    "Runs SCENE and ends with a one-line summary on standard output:\n"
    "  steps=N substeps=N frames=N wall_s=S steps_per_s=R particles=N backend=NAME\n"
    "\n"
    "options:\n"
    "  --backend NAME   cpu (the double-precision CPU reference; the default)\n"
    "  --steps N        number of steps of length dt to run (default: the scene's \"steps\", else 600)\n"
    "  --every K        write a frame every K steps (default 1)\n"
    "  --out FILE.npy   write the trajectory as a NumPy float64 array of shape\n"
    "                   (frames, particles, 3): frame 0 is the initial state, then one frame\n"
    "                   every K steps; particles in scene order\n"
    "  --profile        print the mean time of each pass per solver step on standard error\n"
    "  --verbose        print every notice of the library (e.g. clusters with fewer modes)\n"
    "  --help           show this text\n"
    "\n"
    "Progress is shown on a terminal. Ctrl-C stops the run and keeps the frames written so far.\n"
    "A non-finite position stops the run with an error naming the step and the particle.\n";

static volatile sig_atomic_t interrupted = 0, stepping = 0;

/// While stepping, Ctrl-C ends the run after the current step and keeps the frames written;
/// before that (loading a scene, writing frame 0) it ends the process at once.
static void on_interrupt(int signal_number)
{
    if (!stepping) {
        signal(signal_number, SIG_DFL);
        raise(signal_number);
        return;
    }
    interrupted = 1;
}

typedef struct log_state {
    bool verbose;
    int hidden_notices;
} log_state;

static void print_log(sm_log_level level, const char *message, void *user)
{
    log_state *state = user;
    if (level == SM_LOG_NOTICE && !state->verbose) {
        state->hidden_notices++;
        return;
    }
    const char *tag = level == SM_LOG_ERROR ? "error" : level == SM_LOG_WARNING ? "warning" : "notice";
    fprintf(stderr, "shapematch: %s: %s\n", tag, message);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int usage_error(const char *command, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *command, const char *format, ...)
{
    fprintf(stderr, "shapematch%s%s: ", command ? " " : "", command ? command : "");
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\nRun 'shapematch%s%s --help' for usage.\n", command ? " " : "", command ? command : "");
    return EXIT_USAGE;
}

/// Parses a whole decimal integer in [lo, hi]; false when `text` is anything else.
static bool parse_int(const char *text, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/// Loads a scene and builds its world; prints the error and returns false on failure.
static bool load(const char *path, sm_backend backend, log_state *log, sm_scene **scene, sm_world **world)
{
    if (sm_scene_load_file(path, scene) != SM_OK) {
        fprintf(stderr, "shapematch: %s\n", sm_last_error());
        return false;
    }
    sm_world_def def = sm_scene_world_def(*scene);
    def.backend = backend;
    def.log = print_log;
    def.log_user = log;
    if (sm_scene_create_world(*scene, &def, world) != SM_OK) {
        fprintf(stderr, "shapematch: %s: %s\n", path, sm_last_error());
        sm_scene_destroy(*scene);
        *scene = NULL;
        return false;
    }
    return true;
}

static void report_hidden_notices(const log_state *log)
{
    if (log->hidden_notices > 0)
        fprintf(stderr, "shapematch: %d notice%s hidden (use --verbose to see them)\n", log->hidden_notices,
                log->hidden_notices == 1 ? "" : "s");
}

static int command_info(int argc, char **argv)
{
    const char *path = NULL;
    bool verbose = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_info, stdout);
            return 0;
        } else if (strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return usage_error("info", "unknown option '%s'", argv[i]);
        } else if (path) {
            return usage_error("info", "one scene at a time ('%s' is extra)", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path) return usage_error("info", "a scene file is required");

    log_state log = {verbose, 0};
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    if (!load(path, SM_BACKEND_CPU, &log, &scene, &world)) return 1;
    sm_counts counts = sm_world_get_counts(world);
    printf("objects=%d clusters=%d particles=%d memberships=%d\n", counts.objects, counts.clusters, counts.particles,
           counts.memberships);
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        printf("object %d%s%s%s shape=%s mode=%s particles=%d clusters=%d memberships=%d mass=%g\n", o,
               info.name[0] ? " \"" : "", info.name, info.name[0] ? "\"" : "", sm_shape_name(info.shape),
               sm_mode_name(info.mode), info.particle_count, info.cluster_count, info.membership_count, info.mass);
    }
    report_hidden_notices(&log);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
    return 0;
}

/// The first non-finite coordinate among n particles, or -1.
static int32_t first_non_finite(const double *xyz, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(xyz[3 * i]) || !isfinite(xyz[3 * i + 1]) || !isfinite(xyz[3 * i + 2])) return i;
    return -1;
}

static int32_t object_of(const sm_world *world, int32_t particle)
{
    sm_counts counts = sm_world_get_counts(world);
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        if (particle < info.first_particle + info.particle_count) return o;
    }
    return -1;
}

static void print_profile(const sm_world *world)
{
    sm_profile p = sm_world_get_profile(world);
    if (p.steps == 0) return;
    for (int pass = 0; pass < SM_PASS_COUNT; pass++)
        fprintf(stderr, "profile: %-16s %9.4f ms per solver step (%4.1f%%)\n", sm_pass_name((sm_pass)pass),
                p.pass_ms[pass] / (double)p.steps, 100.0 * p.pass_ms[pass] / p.step_ms);
    fprintf(stderr, "profile: %-16s %9.4f ms per solver step over %lld solver steps\n", "total", p.step_ms / (double)p.steps,
            (long long)p.steps);
}

static int command_run(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL;
    long long steps = -1, every = 1;
    sm_backend backend = SM_BACKEND_CPU;
    bool verbose = false, profile = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        // options take their value as the next argument or after '='
        const char *value = NULL;
        const char *eq = strchr(a, '=');
        char name[32] = "";
        if (a[0] == '-' && a[1] == '-' && eq && eq - a < (long)sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        bool takes_value = strcmp(name, "--steps") == 0 || strcmp(name, "--every") == 0 || strcmp(name, "--out") == 0 ||
                           strcmp(name, "--backend") == 0;
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error("run", "option '%s' needs a value", name);
            value = argv[++i];
        }
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            fputs(usage_run, stdout);
            return 0;
        } else if (strcmp(name, "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(name, "--profile") == 0) {
            profile = true;
        } else if (strcmp(name, "--steps") == 0) {
            if (!parse_int(value, 0, INT32_MAX, &steps)) return usage_error("run", "--steps needs an integer >= 0, got '%s'", value);
        } else if (strcmp(name, "--every") == 0) {
            if (!parse_int(value, 1, INT32_MAX, &every)) return usage_error("run", "--every needs an integer >= 1, got '%s'", value);
        } else if (strcmp(name, "--out") == 0) {
            if (!*value) return usage_error("run", "--out needs a file name");
            out_path = value;
        } else if (strcmp(name, "--backend") == 0) {
            if (strcmp(value, "cpu") == 0) backend = SM_BACKEND_CPU;
            else if (strcmp(value, "opencl") == 0) backend = SM_BACKEND_OPENCL;
            else return usage_error("run", "unknown backend '%s' (choose cpu or opencl)", value);
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("run", "unknown option '%s'", a);
        } else if (path) {
            return usage_error("run", "one scene at a time ('%s' is extra)", a);
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("run", "a scene file is required");

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    log_state log = {verbose, 0};
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    if (!load(path, backend, &log, &scene, &world)) return 1;
    sm_scene_info info = sm_scene_get_info(scene);
    if (steps < 0) steps = info.steps;
    const int32_t n = sm_world_get_counts(world).particles;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)n);
    if (!xyz) {
        fprintf(stderr, "shapematch: out of memory for %d positions\n", n);
        sm_world_destroy(world);
        sm_scene_destroy(scene);
        return 1;
    }

    int status = 0;
    npy_writer npy = {0};
    if (out_path && npy_open(&npy, out_path, n) != 0) {
        fprintf(stderr, "shapematch: cannot write %s: %s\n", out_path, strerror(errno));
        status = 1;
        goto done;
    }
    sm_world_get_positions(world, 0, n, xyz);
    if (out_path && npy_write_frame(&npy, xyz) != 0) {
        fprintf(stderr, "shapematch: cannot write %s: %s\n", out_path, strerror(errno));
        status = 1;
        goto done;
    }

    stepping = 1; // from here on Ctrl-C ends the run cleanly, keeping what was written
    const bool progress = isatty(STDERR_FILENO);
    const double start = now_s();
    double last_progress = start;
    long long done_steps = 0;
    for (long long s = 1; s <= steps && !interrupted; s++) {
        if (sm_world_step(world, info.dt, info.substeps) != SM_OK) {
            fprintf(stderr, "shapematch: step %lld: %s\n", s, sm_last_error());
            status = 1;
            break;
        }
        done_steps = s;
        sm_world_get_positions(world, 0, n, xyz);
        int32_t bad = first_non_finite(xyz, n);
        if (bad >= 0) {
            fprintf(stderr, "shapematch: step %lld: particle %d (object %d) has a non-finite position; stopping\n", s,
                    bad, object_of(world, bad));
            status = 1;
            break;
        }
        if (out_path && s % every == 0 && npy_write_frame(&npy, xyz) != 0) {
            fprintf(stderr, "shapematch: cannot write %s: %s\n", out_path, strerror(errno));
            status = 1;
            break;
        }
        double t = now_s();
        if (progress && (t - last_progress >= 0.25 || s == steps)) {
            double rate = (double)s / (t - start);
            fprintf(stderr, "\rstep %lld/%lld  %3.0f%%  %.1f steps/s  eta %.0f s   ", s, steps, 100.0 * (double)s / (double)steps,
                    rate, (double)(steps - s) / rate);
            last_progress = t;
        }
    }
    const double wall = now_s() - start;
    if (progress) fprintf(stderr, "\r%*s\r", 60, "");
    if (interrupted) {
        fprintf(stderr, "shapematch: interrupted after %lld of %lld steps%s\n", done_steps, steps,
                out_path ? "; the frames so far are kept" : "");
        status = EXIT_INTERRUPTED;
    }
    report_hidden_notices(&log);
    if (profile) print_profile(world);
    printf("steps=%lld substeps=%d frames=%lld wall_s=%.3f steps_per_s=%.1f particles=%d backend=%s\n", done_steps,
           info.substeps, (long long)(out_path ? npy.frames : 0), wall, wall > 0 ? (double)done_steps / wall : 0.0, n,
           sm_world_backend_name(world));

done:
    if (out_path && npy.file && npy_close(&npy) != 0) {
        fprintf(stderr, "shapematch: cannot finish %s: %s\n", out_path, strerror(errno));
        if (status == 0) status = 1;
    }
    free(xyz);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(command, "--version") == 0) {
        printf("shapematch %d.%d.%d\n", SM_VERSION_MAJOR, SM_VERSION_MINOR, SM_VERSION_PATCH);
        return 0;
    }
    if (strcmp(command, "info") == 0) return command_info(argc - 2, argv + 2);
    if (strcmp(command, "run") == 0) return command_run(argc - 2, argv + 2);
    return usage_error(NULL, "unknown command '%s' (commands: info, run)", command);
}
