/* The shapematch command: inspect and run scene files. */
#include "bench.h"
#include "npy.h"
#include "parse.h"

#include <shapematch/shapematch.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_USAGE = 2 };

static const char *usage_main =
    "usage: shapematch <command> [options]\n"
    "\n"
    "Soft bodies by meshless shape matching (Mueller et al. 2005).\n"
    "\n"
    "commands:\n"
    "  info SCENE      print the size of a scene: totals, then one line per object\n"
    "  run SCENE       run a scene headless and optionally write its trajectory (.npy) and surfaces (.ply)\n"
    "  compare SCENE   run a scene on the CPU reference and on OpenCL and print how far apart they are\n"
    "  devices         list the OpenCL devices\n"
    "  bench           measure: the paper's Fig. 8 (bench fig8), a scene's speed, passes and memory (bench scene)\n"
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
    "  steps=N substeps=N frames=N wall_s=S steps_per_s=R particles=N backend=NAME [device=\"NAME\"]\n"
    "and, with collisions on, the overlaps left at the end:\n"
    "  contacts=N max_depth_ratio=R mean_depth_ratio=R   (depth over the smaller radius of each pair)\n"
    "\n"
    "options:\n"
    "  --backend NAME   opencl (float, on an OpenCL device) or cpu (the double-precision CPU\n"
    "                   reference); default: opencl when a device is available, else cpu\n"
    "  --device SEL     OpenCL device: index or part of the name ('shapematch devices' lists\n"
    "                   them); default: $SM_DEVICE, else the first GPU, else the first device\n"
    "  --steps N        number of steps of length dt to run (default: the scene's \"steps\", else 600)\n"
    "  --collisions on|off  contact between objects, overriding the scene's \"collisions\"\n"
    "  --every K        write a frame every K steps (default 1)\n"
    "  --out FILE.npy   write the trajectory as a NumPy array of shape (frames, particles, 3),\n"
    "                   float32 from OpenCL and float64 from the CPU: frame 0 is the initial\n"
    "                   state, then one frame every K steps; particles in scene order, column i\n"
    "                   the same particle in every frame, across cuts. A scene with cuts also\n"
    "                   writes FILE.objects.npy: int32 (frames, particles), the object each\n"
    "                   particle is in (a cut's front piece is a new object id)\n"
    "  --mesh-out DIR   write the skinned surfaces of the scene's mesh objects, merged into one\n"
    "                   binary little-endian PLY per frame (DIR/frame_000000.ply, ...: the same\n"
    "                   frames as --out): float x, y, z, nx, ny, nz per vertex, objects in id\n"
    "                   order, and triangles as lists of 3 int indices, as the surfaces are at\n"
    "                   that frame (after a cut: the pieces and their caps); DIR is created if missing\n"
    "  --profile        print the mean time of each pass per solver step on standard error\n"
    "                   (on OpenCL, device times; each step then waits for the device)\n"
    "  --verbose        print every notice of the library (e.g. clusters with fewer modes)\n"
    "  --help           show this text\n"
    "\n"
    "frames=N counts the frames written (of --out, else of --mesh-out).\n"
    "Progress is shown on a terminal. Ctrl-C stops the run and keeps the frames written so far.\n"
    "Positions are checked at every written frame, every 100 steps and at the end; a non-finite\n"
    "position stops the run with an error naming the step and the particle.\n";

static const char *usage_compare =
    "usage: shapematch compare SCENE [options]\n"
    "\n"
    "Runs SCENE from the same initial state on the CPU reference (double) and on OpenCL (float)\n"
    "and prints, every K steps, the largest and the mean per-particle distance between the two,\n"
    "relative to the diagonal of the scene's initial bounding box, measured two ways:\n"
    "  single      one OpenCL step from the reference's state (arithmetic error alone)\n"
    "  trajectory  both runs independent since step 0 (includes the divergence of chaotic motion)\n"
    "The last line is\n"
    "  max_single_step_error=E1 max_trajectory_error=E2\n"
    "and the exit status is 1 when E1 exceeds 1e-5.\n"
    "\n"
    "options:\n"
    "  --steps N        steps to run (default: the scene's \"steps\", else 600)\n"
    "  --every K        compare every K steps and at the last (default 10)\n"
    "  --collisions on|off  contact between objects, overriding the scene's \"collisions\"; with\n"
    "                   contact each line adds both runs' overlapping pairs and largest depth\n"
    "                   (contacts_cpu= contacts_opencl= max_depth_cpu= max_depth_opencl=)\n"
    "  --device SEL     OpenCL device, as for run\n"
    "  --verbose        print every notice of the library\n"
    "  --help           show this text\n";

static const char *usage_devices =
    "usage: shapematch devices\n"
    "\n"
    "Lists the OpenCL devices: index, name, platform, version, type and double precision.\n"
    "The index or part of the name selects one with --device or $SM_DEVICE.\n";

/// The tolerance of compare's single-step error (issue: the device computes the reference's step).
#define SM_COMPARE_TOLERANCE 1e-5

/// The signal that ended a run (SIGINT or SIGTERM), 0 while none did; the exit status is then
/// 128 plus its number, as a shell reports a process the signal killed.
static volatile sig_atomic_t interrupted = 0, stepping = 0;
/// The worlds stepping: a signal cancels their step in progress (sm_world_cancel()).
static sm_world *volatile stepping_worlds[3];

/// While stepping, Ctrl-C ends the run within the solver step in progress (its step is cancelled
/// and not counted) and keeps the frames written; before that (loading a scene, writing frame 0)
/// it ends the process at once.
static void on_interrupt(int signal_number)
{
    if (!stepping) {
        signal(signal_number, SIG_DFL);
        raise(signal_number);
        return;
    }
    interrupted = signal_number;
    for (int k = 0; k < 3; k++)
        if (stepping_worlds[k]) sm_world_cancel(stepping_worlds[k]);
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
    error_line("%s: %s", tag, message);
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
    char message[2048], printable[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    fprintf(stderr, "shapematch%s%s: %s\nRun 'shapematch%s%s --help' for usage.\n", command ? " " : "",
            command ? command : "", sm_printable(message, printable, sizeof printable), command ? " " : "",
            command ? command : "");
    return EXIT_USAGE;
}

/// What the command line changes in a scene's world def.
typedef struct world_options {
    const char *device;
    bool profile;
    int collisions; ///< -1: as the scene says; 0: off; 1: on
} world_options;

/// Whether the world built with these options has contact between objects.
static bool collisions_on(const sm_scene *scene, world_options wo)
{
    return wo.collisions >= 0 ? wo.collisions == 1 : sm_scene_world_def(scene).collisions.enabled;
}

/// Builds a loaded scene's world on `backend`; prints the error and returns false on failure.
static bool create(const sm_scene *scene, const char *path, sm_backend backend, world_options wo, log_state *log,
                   sm_world **world)
{
    sm_world_def def = sm_scene_world_def(scene);
    def.backend = backend;
    def.device = wo.device;
    def.profile = wo.profile;
    def.check_interval = 60; // stop a diverging run with a message instead of writing NaN
    def.collisions.enabled = collisions_on(scene, wo);
    def.log = print_log;
    def.log_user = log;
    if (sm_scene_create_world(scene, &def, world) != SM_OK) {
        error_line("%s: %s", path, sm_last_error());
        return false;
    }
    return true;
}

/// Loads a scene and builds its world; prints the error and returns false on failure.
static bool load(const char *path, sm_backend backend, world_options wo, log_state *log, sm_scene **scene,
                 sm_world **world)
{
    if (sm_scene_load_file(path, scene) != SM_OK) {
        error_line("%s", sm_last_error());
        return false;
    }
    if (!create(*scene, path, backend, wo, log, world)) {
        sm_scene_destroy(*scene);
        *scene = NULL;
        return false;
    }
    return true;
}

static void report_hidden_notices(const log_state *log)
{
    if (log->hidden_notices > 0)
        error_line("%d notice%s hidden (use --verbose to see them)", log->hidden_notices,
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
    if (!load(path, SM_BACKEND_CPU, (world_options){NULL, false, -1}, &log, &scene, &world)) return 1;
    sm_counts counts = sm_world_get_counts(world);
    const sm_collisions collisions = sm_scene_world_def(scene).collisions;
    printf("objects=%d clusters=%d particles=%d memberships=%d", counts.objects, counts.clusters, counts.particles,
           counts.memberships);
    if (collisions.enabled)
        printf(" collisions=on iterations=%d restitution=%g friction=%g\n", collisions.iterations, collisions.restitution,
               collisions.friction);
    else
        printf(" collisions=off\n");
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        char name[512];
        sm_printable(info.name, name, sizeof name); // a name from the file: no terminal escapes, no line breaks
        for (char *c = name; *c; c++)
            if (*c == '\n' || *c == '\t') *c = ' ';
        printf("object %d%s%s%s shape=%s mode=%s particles=%d clusters=%d memberships=%d mass=%g", o,
               name[0] ? " \"" : "", name, name[0] ? "\"" : "", sm_shape_name(info.shape),
               sm_mode_name(info.mode), info.particle_count, info.cluster_count, info.membership_count, info.mass);
        if (info.collides) printf(" particle_radius=%g%s", info.particle_radius, info.self_collides ? " self_collision=on" : "");
        printf("\n");
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
    int32_t object = -1;
    return sm_world_get_particle_objects(world, particle, 1, &object) == SM_OK ? object : -1;
}

static void print_profile(const sm_world *world)
{
    sm_profile p = sm_world_get_profile(world);
    if (p.steps == 0) return;
    // shares of the passes' sum: on OpenCL the wall time of a step also holds uploads and waits
    double passes = 0.0;
    for (int pass = 0; pass < SM_PASS_COUNT; pass++) passes += p.pass_ms[pass];
    for (int pass = 0; pass < SM_PASS_COUNT; pass++)
        fprintf(stderr, "profile: %-16s %9.4f ms per solver step (%4.1f%%)\n", sm_pass_name((sm_pass)pass),
                p.pass_ms[pass] / (double)p.steps, passes > 0.0 ? 100.0 * p.pass_ms[pass] / passes : 0.0);
    fprintf(stderr, "profile: %-16s %9.4f ms per solver step in the passes, %.4f ms of wall time, over %lld solver steps\n",
            "total", passes / (double)p.steps, p.step_ms / (double)p.steps, (long long)p.steps);
}

typedef struct options {
    const char *path, *out_path, *mesh_out, *device;
    long long steps, every;
    sm_backend backend;
    bool verbose, profile;
    int collisions; ///< -1: as the scene says; 0: off; 1: on
} options;

/// Whether the space-separated list `allowed` names option `name`.
static bool allows(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = strstr(allowed, name); s; s = strstr(s + 1, name))
        if ((s == allowed || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0')) return true;
    return false;
}

/// Parses the options of run and compare (those in `allowed`); returns -1 to go on, else the
/// exit status (after --help or a usage error).
static int parse_options(const char *command, const char *usage, const char *allowed, int argc, char **argv, options *o)
{
    char seen[512] = " "; // the options given so far, each between spaces
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
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (a[0] == '-' && a[1] != '\0' && !allows(allowed, name)) return usage_error(command, "unknown option '%s'", a);
        if (a[0] == '-' && a[1] != '\0') {
            char key[40];
            snprintf(key, sizeof key, " %s ", name);
            if (strstr(seen, key)) return usage_error(command, "option '%s' is given twice", name);
            if (strlen(seen) + strlen(name) + 2 < sizeof seen) strcat(strcat(seen, name), " ");
        }
        bool takes_value = strcmp(name, "--steps") == 0 || strcmp(name, "--every") == 0 || strcmp(name, "--out") == 0 ||
                           strcmp(name, "--mesh-out") == 0 || strcmp(name, "--backend") == 0 ||
                           strcmp(name, "--device") == 0 || strcmp(name, "--collisions") == 0;
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error(command, "option '%s' needs a value", name);
            value = argv[++i];
        } else if (!takes_value && value) {
            return usage_error(command, "option '%s' takes no value (got '%s')", name, a);
        }
        if (strcmp(name, "--verbose") == 0) {
            o->verbose = true;
        } else if (strcmp(name, "--profile") == 0) {
            o->profile = true;
        } else if (strcmp(name, "--steps") == 0) {
            if (!parse_int(value, 0, INT32_MAX, &o->steps))
                return usage_error(command, "--steps needs an integer >= 0, got '%s'", value);
        } else if (strcmp(name, "--every") == 0) {
            if (!parse_int(value, 1, INT32_MAX, &o->every))
                return usage_error(command, "--every needs an integer >= 1, got '%s'", value);
        } else if (strcmp(name, "--out") == 0) {
            if (!*value) return usage_error(command, "--out needs a file name");
            o->out_path = value;
        } else if (strcmp(name, "--mesh-out") == 0) {
            if (!*value) return usage_error(command, "--mesh-out needs a folder name");
            o->mesh_out = value;
        } else if (strcmp(name, "--device") == 0) {
            if (!*value) return usage_error(command, "--device needs an index or part of a device name");
            o->device = value;
        } else if (strcmp(name, "--collisions") == 0) {
            if (strcmp(value, "on") == 0) o->collisions = 1;
            else if (strcmp(value, "off") == 0) o->collisions = 0;
            else return usage_error(command, "--collisions needs on or off, got '%s'", value);
        } else if (strcmp(name, "--backend") == 0) {
            if (strcmp(value, "cpu") == 0) o->backend = SM_BACKEND_CPU;
            else if (strcmp(value, "opencl") == 0) o->backend = SM_BACKEND_OPENCL;
            else return usage_error(command, "unknown backend '%s' (choose cpu or opencl)", value);
        } else if (o->path) {
            return usage_error(command, "one scene at a time ('%s' is extra)", a);
        } else {
            o->path = a;
        }
    }
    if (!o->path) return usage_error(command, "a scene file is required");
    if (o->device && o->backend == SM_BACKEND_CPU)
        return usage_error(command, "--device selects an OpenCL device; it does not apply to --backend cpu");
    if (o->device) { // a device that is named and not there is a usage error, never a fallback
        sm_device_info info;
        if (sm_opencl_device_for(o->device, &info) != SM_OK) return usage_error(command, "--device: %s", sm_last_error());
    }
    return -1;
}

/// The skinned surfaces of a world written as one binary little-endian PLY per frame (run
/// --mesh-out). Each frame has the surfaces as they are then: after a cut, the pieces' clipped
/// triangles and the caps that seal them.
typedef struct ply_writer {
    const char *folder;
    int32_t vertex_count, triangle_count; ///< over all objects' surfaces, merged
    int32_t cuts;                         ///< the world's cuts when the topology below was taken (-1: never)
    float *position, *normal;             ///< 4 floats per vertex, as sm_world_get_float4() reads them
    unsigned char *vertex_bytes;          ///< one frame's vertex element: 6 floats per vertex
    unsigned char *face_bytes;            ///< the face element: 1 + 3 * 4 bytes per triangle
    long long frames;                     ///< files written
    char path[4096];                      ///< the file being written, for messages
    bool created;                         ///< whether ply_open() created the folder
    struct stat folder_status;            ///< the folder's, for telling another path that names it
} ply_writer;

static unsigned char *put_u32(unsigned char *at, uint32_t v)
{
    for (int b = 0; b < 4; b++) at[b] = (unsigned char)(v >> (8 * b));
    return at + 4;
}

static unsigned char *put_float(unsigned char *at, float f)
{
    uint32_t v;
    memcpy(&v, &f, sizeof v);
    return put_u32(at, v);
}

static void ply_close(ply_writer *w)
{
    free(w->position), free(w->normal), free(w->vertex_bytes), free(w->face_bytes);
    w->position = w->normal = NULL;
    w->vertex_bytes = w->face_bytes = NULL;
}

/// Prepares writing `world`'s surfaces into `folder`, which it creates when missing; prints the
/// error and returns false when the world has no surface or the folder cannot be made.
static bool ply_open(ply_writer *w, const sm_world *world, const char *folder, const char *scene_path)
{
    *w = (ply_writer){.folder = folder, .cuts = -1};
    if (sm_world_get_surface_vertex_count(world) == 0) {
        error_line("the scene has no surfaces to write: no object of %s has a skinned surface (a \"mesh\" "
                        "object has one unless its \"surface\" is false)", scene_path);
        return false;
    }
    if (mkdir(folder, 0777) == 0) {
        w->created = true;
    } else if (errno != EEXIST) {
        error_line("cannot create the folder %s: %s", folder, strerror(errno));
        return false;
    }
    if (stat(folder, &w->folder_status) != 0 || !S_ISDIR(w->folder_status.st_mode)) {
        error_line("cannot write meshes into %s: not a folder", folder);
        return false;
    }
    return true;
}

/// Whether `name` has the form of a frame file of --mesh-out: frame_NNNNNN.ply (six digits or more).
static bool ply_frame_name(const char *name)
{
    if (strncmp(name, "frame_", 6) != 0) return false;
    const size_t digits = strspn(name + 6, "0123456789");
    return digits >= 6 && strcmp(name + 6 + digits, ".ply") == 0;
}

/// Whether `path` is (or would be) one of the frame files of the --mesh-out folder `w` opened:
/// a frame's name in a folder that is that folder, compared by device and inode so that other
/// spellings of it count; and an existing file that is one of the folder's frame files under
/// another name (a link to it).
static bool ply_is_frame(const ply_writer *w, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (ply_frame_name(slash ? slash + 1 : path)) {
        char parent[PATH_MAX];
        const size_t length = !slash || slash == path ? 1 : (size_t)(slash - path);
        struct stat status;
        if (length < sizeof parent) {
            snprintf(parent, sizeof parent, "%.*s", (int)length, !slash ? "." : slash == path ? "/" : path);
            if (stat(parent, &status) == 0 && status.st_dev == w->folder_status.st_dev &&
                status.st_ino == w->folder_status.st_ino)
                return true;
        }
    }
    struct stat file;
    if (stat(path, &file) != 0 || !S_ISREG(file.st_mode) || file.st_dev != w->folder_status.st_dev) return false;
    DIR *folder = opendir(w->folder);
    bool found = false;
    // cppcheck-suppress readdirCalled ; one thread reads this stream (readdir_r is deprecated)
    for (struct dirent *entry; folder && !found && (entry = readdir(folder));) {
        char frame[PATH_MAX];
        struct stat status;
        found = ply_frame_name(entry->d_name) &&
                (size_t)snprintf(frame, sizeof frame, "%s/%s", w->folder, entry->d_name) < sizeof frame &&
                stat(frame, &status) == 0 && status.st_dev == file.st_dev && status.st_ino == file.st_ino;
    }
    if (folder) closedir(folder);
    return found;
}

/// Whether two paths name one existing file (compared by device and inode).
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/// The file of the scene's that `path` names (by device and inode): the scene file, or one read
/// for its meshes (sm_scene_get_files()); NULL when none.
static const char *scene_input_at(const sm_scene *scene, const char *path)
{
    const char *const *files = NULL;
    int32_t count = 0;
    if (!path || sm_scene_get_files(scene, &files, &count) != SM_OK) return NULL;
    for (int32_t i = 0; i < count; i++)
        if (same_file(path, files[i])) return files[i];
    return NULL;
}

/// The file of the scene's that is one of the frames of the --mesh-out folder `w`; NULL when none.
static const char *scene_input_in_frames(const sm_scene *scene, const ply_writer *w)
{
    const char *const *files = NULL;
    int32_t count = 0;
    if (sm_scene_get_files(scene, &files, &count) != SM_OK) return NULL;
    for (int32_t i = 0; i < count; i++)
        if (ply_is_frame(w, files[i])) return files[i];
    return NULL;
}

/// Takes the surfaces' vertex count and triangles again when the world was cut since they were
/// last taken (a cut clips triangles, adds vertices and caps); prints the error on failure.
static bool ply_topology(ply_writer *w, const sm_world *world)
{
    const sm_cut_info *cuts = NULL;
    int32_t cut_count = 0;
    sm_world_get_cuts(world, &cuts, &cut_count);
    if (cut_count == w->cuts) return true;
    ply_close(w);
    w->vertex_count = sm_world_get_surface_vertex_count(world);
    w->triangle_count = 0;
    const sm_counts counts = sm_world_get_counts(world);
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        if (sm_world_get_object(world, o, &info) == SM_OK) w->triangle_count += info.surface_triangle_count;
    }
    w->position = malloc(sizeof(float) * 4 * (size_t)w->vertex_count + 1);
    w->normal = malloc(sizeof(float) * 4 * (size_t)w->vertex_count + 1);
    w->vertex_bytes = malloc(sizeof(float) * 6 * (size_t)w->vertex_count + 1);
    w->face_bytes = malloc(13 * (size_t)w->triangle_count + 1);
    if (!w->position || !w->normal || !w->vertex_bytes || !w->face_bytes) {
        error_line("out of memory for %d surface vertices", w->vertex_count);
        return false;
    }
    unsigned char *at = w->face_bytes;
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        const int32_t *triangles = NULL;
        int32_t count = 0;
        if (sm_world_get_object(world, o, &info) != SM_OK ||
            sm_world_get_surface_triangles(world, o, &triangles, &count) != SM_OK) {
            error_line("%s", sm_last_error());
            return false;
        }
        for (int32_t t = 0; t < count; t++) {
            *at++ = 3;
            for (int c = 0; c < 3; c++) at = put_u32(at, (uint32_t)(info.first_surface_vertex + triangles[3 * t + c]));
        }
    }
    w->cuts = cut_count;
    return true;
}

/// Writes the surfaces' current state as the next frame's file; prints the error (naming the
/// file) and returns false on failure, removing the incomplete file.
static bool ply_write_frame(ply_writer *w, const sm_world *world, long long step)
{
    snprintf(w->path, sizeof w->path, "%s/frame_%06lld.ply", w->folder, w->frames);
    if (!ply_topology(w, world)) return false;
    if (sm_world_get_float4(world, SM_FIELD_SURFACE_POSITION, 0, w->vertex_count, w->position) != SM_OK ||
        sm_world_get_float4(world, SM_FIELD_SURFACE_NORMAL, 0, w->vertex_count, w->normal) != SM_OK) {
        error_line("step %lld: %s", step, sm_last_error());
        return false;
    }
    unsigned char *at = w->vertex_bytes;
    for (int32_t i = 0; i < w->vertex_count; i++) {
        for (int a = 0; a < 3; a++) at = put_float(at, w->position[4 * i + a]);
        for (int a = 0; a < 3; a++) at = put_float(at, w->normal[4 * i + a]);
    }
    FILE *file = fopen(w->path, "wb");
    if (!file) {
        error_line("cannot write %s: %s", w->path, strerror(errno));
        return false;
    }
    bool ok = fprintf(file,
                      "ply\nformat binary_little_endian 1.0\ncomment shapematch step %lld time %.9g s\n"
                      "element vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
                      "property float nx\nproperty float ny\nproperty float nz\n"
                      "element face %d\nproperty list uchar int vertex_indices\nend_header\n",
                      step, sm_world_get_time(world), w->vertex_count, w->triangle_count) > 0;
    ok = ok && fwrite(w->vertex_bytes, sizeof(float) * 6, (size_t)w->vertex_count, file) == (size_t)w->vertex_count;
    ok = ok && fwrite(w->face_bytes, 13, (size_t)w->triangle_count, file) == (size_t)w->triangle_count;
    int error = ok ? 0 : errno;
    if (fclose(file) != 0 && ok) ok = false, error = errno;
    if (!ok) {
        error_line("cannot write %s: %s", w->path, error ? strerror(error) : "write failed");
        remove(w->path);
        return false;
    }
    w->frames++;
    return true;
}

/// Appends a frame (`xyz`, or else `ints`) to an .npy file and hands it to the system at once: a
/// frame counts as written (writer->frames) only once that succeeded, so a full disk stops the
/// run at the frame it could not take. Returns 0, or -1 with errno set.
static int npy_put(npy_writer *writer, const double *xyz, const int32_t *ints)
{
    if ((xyz ? npy_write_frame(writer, xyz) : npy_write_ints(writer, ints)) != 0) return -1;
    if (fflush(writer->file) != 0) {
        writer->frames--;
        return -1;
    }
    return 0;
}

static int command_run(int argc, char **argv)
{
    options o = {.steps = -1, .every = 1, .backend = SM_BACKEND_DEFAULT, .collisions = -1};
    int parsed = parse_options("run", usage_run,
                               "--steps --every --out --mesh-out --backend --device --collisions --profile --verbose", argc,
                               argv, &o);
    if (parsed >= 0) return parsed;
    const char *path = o.path, *out_path = o.out_path, *mesh_out = o.mesh_out;
    long long steps = o.steps, every = o.every;

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    log_state log = {o.verbose, 0};
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    const world_options wo = {o.device, o.profile, o.collisions};
    if (!load(path, o.backend, wo, &log, &scene, &world)) return 1;
    const bool on_device = strcmp(sm_world_backend_name(world), "opencl") == 0;
    sm_scene_info info = sm_scene_get_info(scene);
    if (steps < 0) steps = info.steps;
    const int32_t n = sm_world_get_counts(world).particles;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)n);
    if (!xyz) {
        error_line("out of memory for %d positions", n);
        sm_world_destroy(world);
        sm_scene_destroy(scene);
        return 1;
    }

    int status = 0;
    npy_writer npy = {0}, pieces = {0};
    ply_writer ply = {0};
    // with cuts, which object each particle is in, frame by frame, beside the trajectory
    char pieces_path[4200] = "";
    int32_t *owner = NULL;
    if (out_path && info.cut_count > 0) {
        const size_t length = strlen(out_path);
        const bool suffix = length >= 4 && strcmp(out_path + length - 4, ".npy") == 0;
        snprintf(pieces_path, sizeof pieces_path, "%.*s.objects.npy", (int)(suffix ? length - 4 : length), out_path);
    }
    // no output may overwrite the scene file, a file read for its meshes or another output:
    // checked before any is opened (the folder of --mesh-out, made here when missing, is removed
    // again when nothing is written)
    const char *input = NULL;
    if (out_path && (input = scene_input_at(scene, out_path))) {
        status = strcmp(input, path) == 0
                     ? usage_error("run", "--out %s is the scene file: choose another file", out_path)
                     : usage_error("run", "--out %s is %s, which the scene reads: choose another file", out_path, input);
        goto done;
    }
    if (pieces_path[0] && ((input = scene_input_at(scene, pieces_path)) || same_file(pieces_path, out_path))) {
        status = usage_error("run", "--out %s: the objects file written beside it in a scene with cuts, %s, is %s%s",
                             out_path, pieces_path, !input ? "--out itself" : strcmp(input, path) == 0 ? "the scene file" : input,
                             input && strcmp(input, path) != 0 ? ", which the scene reads" : "");
        goto done;
    }
    if (mesh_out && !ply_open(&ply, world, mesh_out, path)) {
        status = 1;
        goto done;
    }
    if (mesh_out && (input = scene_input_in_frames(scene, &ply))) {
        status = usage_error("run", "%s %s is one of the frames of --mesh-out %s (frame_NNNNNN.ply)",
                             strcmp(input, path) == 0 ? "the scene file" : "the scene reads", input, mesh_out);
        goto done;
    }
    if (mesh_out && out_path && ply_is_frame(&ply, out_path)) {
        status = usage_error("run", "--out %s is one of the frames of --mesh-out %s (frame_NNNNNN.ply): choose another file",
                             out_path, mesh_out);
        goto done;
    }
    if (mesh_out && pieces_path[0] && ply_is_frame(&ply, pieces_path)) {
        status = usage_error("run", "--out %s: the objects file written beside it in a scene with cuts, %s, is one of the "
                             "frames of --mesh-out %s", out_path, pieces_path, mesh_out);
        goto done;
    }
    if (pieces_path[0]) {
        owner = malloc(sizeof *owner * (size_t)(n > 0 ? n : 1));
        if (!owner || npy_open_ints(&pieces, pieces_path, n) != 0) {
            error_line("cannot write %s: %s", pieces_path, owner ? strerror(errno) : "out of memory");
            status = 1;
            goto done;
        }
    }
    if (out_path && npy_open(&npy, out_path, n, on_device) != 0) {
        error_line("cannot write %s: %s", out_path, strerror(errno));
        status = 1;
        goto done;
    }
    sm_world_get_positions(world, 0, n, xyz);
    if (out_path && npy_put(&npy, xyz, NULL) != 0) {
        error_line("cannot write %s: %s", out_path, strerror(errno));
        status = 1;
        goto done;
    }
    if (owner && (sm_world_get_particle_objects(world, 0, n, owner) != SM_OK || npy_put(&pieces, NULL, owner) != 0)) {
        error_line("cannot write %s: %s", pieces_path, strerror(errno));
        status = 1;
        goto done;
    }
    if (mesh_out && !ply_write_frame(&ply, world, 0)) {
        status = 1;
        goto done;
    }

    stepping_worlds[0] = world;
    stepping = 1; // from here on Ctrl-C ends the run cleanly, keeping what was written
    const bool progress = isatty(STDERR_FILENO);
    const double start = now_s();
    double last_progress = start;
    long long done_steps = 0;
    for (long long s = 1; s <= steps && !interrupted; s++) {
        if (sm_scene_step(scene, world) != SM_OK) {
            if (interrupted) break; // (cancelled: the step is not counted)
            error_line("%s: step %lld: %s", path, s, sm_last_error());
            status = 1;
            break;
        }
        done_steps = s;
        // reading positions makes the host wait for the device: only for frames and checks
        const bool frame = (out_path || mesh_out) && s % every == 0;
        if (!frame && s % 100 != 0 && s != steps) continue;
        if (sm_world_get_positions(world, 0, n, xyz) != SM_OK) {
            error_line("%s: step %lld: %s", path, s, sm_last_error());
            status = 1;
            break;
        }
        int32_t bad = first_non_finite(xyz, n);
        if (bad >= 0) {
            error_line("%s: step %lld: particle %d (object %d) has a non-finite position; stopping",
                    path, s, bad, object_of(world, bad));
            status = 1;
            break;
        }
        if (frame && out_path && npy_put(&npy, xyz, NULL) != 0) {
            error_line("cannot write %s: %s", out_path, strerror(errno));
            status = 1;
            break;
        }
        if (frame && owner &&
            (sm_world_get_particle_objects(world, 0, n, owner) != SM_OK || npy_put(&pieces, NULL, owner) != 0)) {
            error_line("cannot write %s: %s", pieces_path, strerror(errno));
            status = 1;
            break;
        }
        if (frame && mesh_out && !ply_write_frame(&ply, world, s)) {
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
        error_line("interrupted after %lld of %lld steps%s", done_steps, steps,
                out_path || mesh_out ? "; the frames so far are kept" : "");
        status = 128 + interrupted;
    }
    report_hidden_notices(&log);
    if (o.profile) print_profile(world);
    // the overlaps left at the end, with collisions on (after the timing: it reads the positions)
    sm_contact_stats contact = {.pairs = -1};
    if (collisions_on(scene, wo))
        if (sm_world_get_contact_stats(world, &contact) != SM_OK) {
            error_line("%s", sm_last_error());
            contact.pairs = -1;
        }
    // the files finished before the summary counts their frames: one whose header cannot be
    // rewritten still says it holds none
    if (pieces.file && npy_close(&pieces) != 0) {
        error_line("cannot finish %s: %s", pieces_path, strerror(errno));
        if (status == 0) status = 1;
    }
    if (npy.file && npy_close(&npy) != 0) {
        error_line("cannot finish %s: %s", out_path, strerror(errno));
        if (status == 0) status = 1;
        npy.frames = 0;
    }
    printf("steps=%lld substeps=%d frames=%lld wall_s=%.3f steps_per_s=%.1f particles=%d backend=%s", done_steps,
           info.substeps, (long long)(out_path ? npy.frames : ply.frames), wall, wall > 0 ? (double)done_steps / wall : 0.0, n,
           sm_world_backend_name(world));
    if (on_device) printf(" device=\"%s\"", sm_world_device_name(world));
    if (contact.pairs >= 0)
        printf(" contacts=%lld max_depth_ratio=%.4g mean_depth_ratio=%.4g dropped_contacts=%lld", (long long)contact.pairs,
               contact.max_depth_ratio, contact.mean_depth_ratio, (long long)contact.dropped);
    printf("\n");

done:
    stepping_worlds[0] = NULL; // (before it goes)
    if (pieces.file && npy_close(&pieces) != 0) {
        error_line("cannot finish %s: %s", pieces_path, strerror(errno));
        if (status == 0) status = 1;
    }
    free(owner);
    if (out_path && npy.file && npy_close(&npy) != 0) {
        error_line("cannot finish %s: %s", out_path, strerror(errno));
        if (status == 0) status = 1;
    }
    ply_close(&ply);
    if (ply.created && ply.frames == 0) rmdir(mesh_out); // made by this run, which wrote nothing into it
    free(xyz);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
    return status;
}

/// Largest and mean distance between two position sets, over `scale`; NaN counts as infinite.
static void deviation(const double *a, const double *b, int32_t n, double scale, double *out_max, double *out_mean)
{
    double largest = 0.0, sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double dx = a[3 * i] - b[3 * i], dy = a[3 * i + 1] - b[3 * i + 1], dz = a[3 * i + 2] - b[3 * i + 2];
        double d = sqrt(dx * dx + dy * dy + dz * dz) / scale;
        if (!(d <= INFINITY)) d = INFINITY;
        largest = d > largest ? d : largest;
        sum += d;
    }
    *out_max = largest;
    *out_mean = n > 0 ? sum / n : 0.0;
}

/// Diagonal of the bounding box of n points (1 when they coincide, so errors stay absolute).
static double diagonal(const double *xyz, int32_t n)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], xyz[3 * i + a]);
            hi[a] = fmax(hi[a], xyz[3 * i + a]);
        }
    double d = n > 0 ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                            (hi[2] - lo[2]) * (hi[2] - lo[2]))
                     : 0.0;
    return d > 0.0 ? d : 1.0;
}

static int command_compare(int argc, char **argv)
{
    options o = {.steps = -1, .every = 10, .backend = SM_BACKEND_OPENCL, .collisions = -1};
    int parsed = parse_options("compare", usage_compare, "--steps --every --device --collisions --verbose", argc, argv, &o);
    if (parsed >= 0) return parsed;

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    log_state log = {o.verbose, 0};
    sm_scene *scene = NULL;
    // the reference, the device's own trajectory, and the device restarted from the reference
    sm_world *reference = NULL, *trajectory = NULL, *single = NULL;
    double *ref_xyz = NULL, *traj_xyz = NULL, *single_xyz = NULL;
    int status = 1;
    const world_options wo = {o.device, false, o.collisions};
    if (!load(o.path, SM_BACKEND_CPU, wo, &log, &scene, &reference)) return 1;
    if (!create(scene, o.path, SM_BACKEND_OPENCL, wo, &log, &trajectory) ||
        !create(scene, o.path, SM_BACKEND_OPENCL, wo, &log, &single))
        goto done;
    const bool contact = collisions_on(scene, wo);
    const sm_scene_info info = sm_scene_get_info(scene);
    const long long steps = o.steps >= 0 ? o.steps : info.steps;
    const int32_t n = sm_world_get_counts(reference).particles;
    ref_xyz = malloc(sizeof(double) * 3 * (size_t)n + 1);
    traj_xyz = malloc(sizeof(double) * 3 * (size_t)n + 1);
    single_xyz = malloc(sizeof(double) * 3 * (size_t)n + 1);
    if (!ref_xyz || !traj_xyz || !single_xyz) {
        error_line("out of memory for %d particles", n);
        goto done;
    }
    sm_world_get_positions(reference, 0, n, ref_xyz);
    const double scale = diagonal(ref_xyz, n);
    char shown[1024];
    printf("scene=%s particles=%d steps=%lld every=%lld diagonal_m=%g device=\"%s\"\n",
           sm_printable(o.path, shown, sizeof shown), n, steps, o.every, scale,
           sm_world_device_name(trajectory));

    stepping_worlds[0] = reference, stepping_worlds[1] = trajectory, stepping_worlds[2] = single;
    stepping = 1;
    double worst_single = 0.0, worst_trajectory = 0.0;
    long long s = 1;
    for (; s <= steps && !interrupted; s++) {
        const bool sampled = s % o.every == 0 || s == steps;
        // (b) the device restarted from the reference's state on sampled steps; in a scene with cuts
        // it follows the reference on the host every step (no device work), so that its cuts divide
        // the reference's own positions and its layout stays the reference's
        const bool restart = sampled || info.cut_count > 0;
        if (restart && sm_world_copy_state(single, reference) != SM_OK) break;
        // the scene's script (springs, cuts) for this step, on each world from its own state (the
        // device's own trajectory may divide its particles otherwise at a cut: then its error is
        // measured between different particles)
        if (sm_scene_apply(scene, reference) != SM_OK || sm_scene_apply(scene, trajectory) != SM_OK ||
            (restart && sm_scene_apply(scene, single) != SM_OK))
            break;
        if (sampled && sm_world_step(single, info.dt, info.substeps) != SM_OK) break;
        if (sm_world_step(reference, info.dt, info.substeps) != SM_OK || sm_world_step(trajectory, info.dt, info.substeps) != SM_OK)
            break;
        if (!sampled) continue;
        if (sm_world_get_positions(reference, 0, n, ref_xyz) != SM_OK ||
            sm_world_get_positions(trajectory, 0, n, traj_xyz) != SM_OK ||
            sm_world_get_positions(single, 0, n, single_xyz) != SM_OK)
            break;
        double single_max, single_mean, traj_max, traj_mean;
        deviation(ref_xyz, single_xyz, n, scale, &single_max, &single_mean);
        deviation(ref_xyz, traj_xyz, n, scale, &traj_max, &traj_mean);
        printf("step=%lld single_max=%.3e single_mean=%.3e trajectory_max=%.3e trajectory_mean=%.3e", s, single_max,
               single_mean, traj_max, traj_mean);
        if (contact) {
            // chaotic contact makes trajectories part: compare what they do, not where each particle is
            sm_contact_stats ref_contact, cl_contact;
            if (sm_world_get_contact_stats(reference, &ref_contact) != SM_OK ||
                sm_world_get_contact_stats(trajectory, &cl_contact) != SM_OK)
                break;
            printf(" contacts_cpu=%lld contacts_opencl=%lld max_depth_cpu=%.4f max_depth_opencl=%.4f", (long long)ref_contact.pairs,
                   (long long)cl_contact.pairs, ref_contact.max_depth_ratio, cl_contact.max_depth_ratio);
        }
        printf("\n");
        fflush(stdout);
        worst_single = fmax(worst_single, single_max);
        worst_trajectory = fmax(worst_trajectory, traj_max);
    }
    if (s <= steps && !interrupted) {
        error_line("%s: step %lld: %s", o.path, s, sm_last_error());
        goto done;
    }
    printf("max_single_step_error=%.3e max_trajectory_error=%.3e\n", worst_single, worst_trajectory);
    if (interrupted) {
        error_line("interrupted after %lld of %lld steps", s - 1, steps);
        status = 128 + interrupted;
    } else if (!(worst_single <= SM_COMPARE_TOLERANCE)) {
        error_line("the single-step error %.3e exceeds %g", worst_single, SM_COMPARE_TOLERANCE);
        status = 1;
    } else {
        status = 0;
    }
    report_hidden_notices(&log);
done:
    for (int k = 0; k < 3; k++) stepping_worlds[k] = NULL; // (before they go)
    free(ref_xyz), free(traj_xyz), free(single_xyz);
    sm_world_destroy(reference), sm_world_destroy(trajectory), sm_world_destroy(single);
    sm_scene_destroy(scene);
    return status;
}

static int command_devices(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_devices, stdout);
            return 0;
        }
        return usage_error("devices", "unexpected argument '%s'", argv[i]);
    }
    sm_device_info devices[64];
    int32_t count = 0;
    if (sm_opencl_devices(devices, 64, &count) != SM_OK) {
        error_line("%s", sm_last_error());
        return 1;
    }
    for (int32_t i = 0; i < count && i < 64; i++)
        printf("%d: %s (%s) %s %s%s\n", devices[i].index, devices[i].name, devices[i].platform, devices[i].version,
               devices[i].gpu ? "gpu" : "not-gpu", devices[i].fp64 ? " fp64" : "");
    return 0;
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
    if (strcmp(command, "compare") == 0) return command_compare(argc - 2, argv + 2);
    if (strcmp(command, "devices") == 0) return command_devices(argc - 2, argv + 2);
    if (strcmp(command, "bench") == 0) return sm_tool_bench(argc - 2, argv + 2);
    return usage_error(NULL, "unknown command '%s' (commands: info, run, compare, devices, bench)", command);
}
