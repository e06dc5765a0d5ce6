/* shapematch bench: the paper's Fig. 8 experiment (time per step against the number of points),
 * and the steps per second, per-pass times and memory of a scene. Timings are wall time with
 * the device synchronised (one position read back) at the end of each timed run. */
#include "bench.h"
#include "parse.h"

#include <shapematch/shapematch.h>
#ifdef SM_TOOL_OPENCL
#include <shapematch/shapematch_opencl.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *usage_bench =
    "usage: shapematch bench scene SCENE [--steps N] [--repeat R] [--backend opencl|cpu] [--device SEL] [--collisions on|off]\n"
    "                        [--substeps N]\n"
    "       shapematch bench fig8 [--out DIR] [--max-points N] [--cpu-max-points N] [--backend opencl|cpu|both]\n"
    "                        [--device SEL]\n"
    "\n"
    "scene: steps per second of SCENE (the median of R timed runs of N steps after 10 warm-up steps;\n"
    "       defaults 5 and 100, 20 on the CPU reference), the milliseconds per solver step of each\n"
    "       pass (OpenCL event profiling on a second world), and the device memory per particle,\n"
    "       per cluster membership and per cluster. --substeps runs each step in N solver steps\n"
    "       instead of the scene's substeps (the paper measured one solver step per frame).\n"
    "fig8:  the paper's Fig. 8: one object of N points at random positions pulled toward random\n"
    "       goal positions (its rest shape), N from 1,000 to --max-points (default 1,000,000)\n"
    "       log-spaced, linear and quadratic, 1, 8 and 64 clusters; and a many-object variant\n"
    "       (objects of 1,000 points and 8 linear clusters), on every OpenCL device (--device: the\n"
    "       one it selects, an index or part of a name). The CPU reference stops at\n"
    "       --cpu-max-points (default 100,000). Writes DIR/fig8.csv (default DIR: bench) and, when\n"
    "       gnuplot is installed (apt-get install gnuplot-nox), the log-log plot DIR/fig8.png.\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/// Waits for the world's device: one position read back.
static sm_result sync_world(const sm_world *world)
{
    double x[3];
    return sm_world_get_counts(world).particles > 0 ? sm_world_get_positions(world, 0, 1, x) : SM_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench_usage_error(const char *message, const char *value)
{
    char printable[1024];
    fprintf(stderr, "shapematch bench: %s%s%s\n\n%s", message, value ? " " : "",
            value ? sm_printable(value, printable, sizeof printable) : "", usage_bench);
    return 2;
}

static void quiet_log(sm_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != SM_LOG_NOTICE) error_line("%s", message);
}

/* ---- The floor: bytes a step must move, over the copy bandwidth ----------------------------- */

/// Bytes the shape-matching passes (1-4 of docs/algorithm.md, and the ground) read and write per
/// solver step in this layout, each array element touched once per pass that uses it: per
/// membership its CSR entries, rest offset (and quadratic weights) and its particle's position
/// pair, twice (moments, then blending); per cluster its record, rest data and step state; per
/// particle its state read and written. (The collide passes are not in it.)
static double layout_bytes(sm_counts c, bool quadratic, bool ground)
{
    const double k = c.memberships, n = c.particles, m = c.clusters;
    const double w = quadratic ? 36.0 : 0.0, fit = quadratic ? 144.0 : 0.0;
    const double moments = k * (4 + 16 + w + 32) + m * (32 + 32 + 48 + fit);
    const double rotation = m * (48 + 16 + 16 + 48);
    const double goal = m * (32 + 80 + 48 + fit + 48 + 48 + 144);
    const double blend = n * (4 + 8 + 32 + 16 + 16 + 32 + 16 + 16) + k * (4 + 4 + 16) + m * (32 + 144 + 32);
    const double floor_ground = ground ? n * (32 + 16 + 16 + 32 + 16) : 0.0;
    return moments + rotation + goal + blend + floor_ground;
}

/// The device's copy bandwidth, GB/s (bytes read plus bytes written per second): the best of a
/// few clEnqueueCopyBuffer runs of 256 MB; 0 where it cannot be measured (the CPU reference).
static double copy_bandwidth(const sm_world *world)
{
#ifdef SM_TOOL_OPENCL
    cl_context context = sm_world_get_cl_context(world);
    cl_command_queue queue = sm_world_get_cl_queue(world);
    if (!context || !queue) return 0.0;
    const size_t bytes = (size_t)256 << 20;
    cl_int status = CL_SUCCESS;
    cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &status);
    cl_mem b = status == CL_SUCCESS ? clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &status) : NULL;
    double best = 0.0;
    const unsigned char zero = 0;
    if (status == CL_SUCCESS) status = clEnqueueFillBuffer(queue, a, &zero, 1, 0, bytes, 0, NULL, NULL);
    if (status == CL_SUCCESS) status = clFinish(queue);
    for (int run = 0; run < 6 && status == CL_SUCCESS; run++) {
        const double start = now_s();
        status = clEnqueueCopyBuffer(queue, run % 2 ? b : a, run % 2 ? a : b, 0, 0, bytes, 0, NULL, NULL);
        if (status == CL_SUCCESS) status = clFinish(queue);
        const double rate = 2.0 * (double)bytes / (now_s() - start) / 1e9;
        if (run > 0 && rate > best) best = rate; // (the first run pages the buffers in)
    }
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    return status == CL_SUCCESS ? best : 0.0;
#else
    (void)world;
    return 0.0;
#endif
}

/// A --device that cannot be used, as `run` refuses it: with the CPU reference alone, or one that
/// does not exist (a usage error, 2); -1 when it can be used or none was given.
static int check_device(const char *device, bool opencl)
{
    if (!device) return -1;
    if (!opencl) return bench_usage_error("--device selects an OpenCL device; it does not apply to --backend cpu", NULL);
    sm_device_info info;
    if (sm_opencl_device_for(device, &info) != SM_OK) return bench_usage_error("--device:", sm_last_error());
    return -1;
}

/* ---- bench scene ------------------------------------------------------------------------ */

/// One step of the scene in `substeps` solver steps (the scene's own when < 1).
static sm_result scene_step(const sm_scene *scene, sm_world *world, long long substeps)
{
    if (substeps < 1) return sm_scene_step(scene, world);
    const sm_result r = sm_scene_apply(scene, world);
    return r == SM_OK ? sm_world_step(world, sm_scene_get_info(scene).dt, (int32_t)substeps) : r;
}

static int bench_scene(int argc, char **argv)
{
    const char *path = NULL, *device = NULL;
    long long steps = -1, repeat = 5, substeps = -1; // substeps: as the scene says
    int collisions = -1; // as the scene says
    sm_backend backend = SM_BACKEND_OPENCL;
    char seen[256] = " ";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] == '-' && option_repeated(seen, sizeof seen, a)) return bench_usage_error("an option is given twice:", a);
        if (strcmp(a, "--steps") == 0 || strcmp(a, "--repeat") == 0) {
            long long *target = a[2] == 's' ? &steps : &repeat;
            if (!value || !parse_int(value, 1, 1000000000, target)) return bench_usage_error(a, "needs an integer >= 1");
            i++;
        } else if (strcmp(a, "--substeps") == 0) {
            if (!value || !parse_int(value, 1, 1000, &substeps)) return bench_usage_error("--substeps needs an integer from 1 to 1000, got", value);
            i++;
        } else if (strcmp(a, "--backend") == 0) {
            if (!value || (strcmp(value, "opencl") && strcmp(value, "cpu"))) return bench_usage_error("--backend needs opencl or cpu, got", value);
            backend = strcmp(value, "cpu") == 0 ? SM_BACKEND_CPU : SM_BACKEND_OPENCL;
            i++;
        } else if (strcmp(a, "--collisions") == 0) {
            if (!value || (strcmp(value, "on") && strcmp(value, "off"))) return bench_usage_error("--collisions needs on or off, got", value);
            collisions = strcmp(value, "on") == 0;
            i++;
        } else if (strcmp(a, "--device") == 0) {
            if (!value) return bench_usage_error("--device needs a value", NULL);
            device = value;
            i++;
        } else if (a[0] == '-') {
            return bench_usage_error("unknown option", a);
        } else if (!path) {
            path = a;
        } else {
            return bench_usage_error("one scene at a time; extra:", a);
        }
    }
    if (!path) return bench_usage_error("bench scene needs a scene file", NULL);
    int refused = check_device(device, backend != SM_BACKEND_CPU);
    if (refused >= 0) return refused;
    if (steps < 0) steps = backend == SM_BACKEND_CPU ? 20 : 100;

    double *rates = calloc((size_t)repeat, sizeof *rates);
    if (!rates) {
        error_line("out of memory for the times of %lld runs (--repeat)", repeat);
        return 1;
    }
    sm_scene *scene = NULL;
    if (sm_scene_load_file(path, &scene) != SM_OK) {
        error_line("%s", sm_last_error());
        free(rates);
        return 1;
    }
    sm_world *worlds[2] = {NULL, NULL}; // timed, profiled
    int status = 1;
    for (int w = 0; w < 2; w++) {
        sm_world_def def = sm_scene_world_def(scene);
        def.backend = backend;
        def.device = device;
        def.profile = w == 1;
        if (collisions >= 0) def.collisions.enabled = collisions == 1;
        def.log = quiet_log;
        if (sm_scene_create_world(scene, &def, &worlds[w]) != SM_OK) {
            error_line("%s: %s", path, sm_last_error());
            goto done;
        }
    }
    const sm_scene_info info = sm_scene_get_info(scene);
    const sm_counts counts = sm_world_get_counts(worlds[0]);
    // warm up (programs built, buffers made and uploaded, caches warm), then the timed runs
    for (int s = 0; s < 10; s++)
        if (scene_step(scene, worlds[0], substeps) != SM_OK) goto failed;
    if (sync_world(worlds[0]) != SM_OK) goto failed;
    for (long long r = 0; r < repeat; r++) {
        const double start = now_s();
        for (long long s = 0; s < steps; s++)
            if (scene_step(scene, worlds[0], substeps) != SM_OK) goto failed;
        if (sync_world(worlds[0]) != SM_OK) goto failed;
        rates[r] = (double)steps / (now_s() - start);
    }
    qsort(rates, (size_t)repeat, sizeof *rates, compare_doubles);
    const double median = repeat % 2 ? rates[repeat / 2] : 0.5 * (rates[repeat / 2 - 1] + rates[repeat / 2]);
    char date[32];
    const time_t t = time(NULL);
    struct tm utc;
    if (!gmtime_r(&t, &utc) || strftime(date, sizeof date, "%Y-%m-%d", &utc) == 0) snprintf(date, sizeof date, "unknown");
    char shown[1024];
    printf("scene=%s backend=%s device=\"%s\" date=%s\n", sm_printable(path, shown, sizeof shown), sm_world_backend_name(worlds[0]),
           *sm_world_device_name(worlds[0]) ? sm_world_device_name(worlds[0]) : "the CPU reference (one thread)", date);
    printf("objects=%d clusters=%d particles=%d memberships=%d dt=%g substeps=%d collisions=%s\n", counts.objects,
           counts.clusters, counts.particles, counts.memberships, info.dt,
           substeps > 0 ? (int)substeps : info.substeps,
           sm_world_get_object(worlds[0], 0, &(sm_object_info){0}) == SM_OK && collisions != 0 &&
                   (collisions == 1 || sm_scene_world_def(scene).collisions.enabled)
               ? "on"
               : "off");
    printf("steps_per_second=%.1f ms_per_step=%.3f (median of %lld runs of %lld steps; slowest %.1f, fastest %.1f steps/s)\n",
           median, 1e3 / median, repeat, steps, rates[0], rates[repeat - 1]);

    // per pass, on the profiled world (OpenCL: the device's own event times; each step then waits)
    for (int s = 0; s < 10 + steps; s++)
        if (scene_step(scene, worlds[1], substeps) != SM_OK) goto failed;
    const sm_profile p = sm_world_get_profile(worlds[1]);
    double passes = 0.0;
    for (int pass = 0; pass < SM_PASS_COUNT; pass++) passes += p.pass_ms[pass];
    printf("%-18s %12s %8s\n", "pass", "ms/solver step", "share");
    for (int pass = 0; pass < SM_PASS_COUNT; pass++)
        if (p.pass_ms[pass] > 0.0)
            printf("%-18s %12.4f %7.1f%%\n", sm_pass_name((sm_pass)pass), p.pass_ms[pass] / (double)p.steps,
                   100.0 * p.pass_ms[pass] / passes);
    printf("%-18s %12.4f\n", "all passes", passes / (double)p.steps);
    if (p.launches > 0)
        printf("launches_per_solver_step=%.2f (kernels enqueued by the profiled world's steps, per solver step)\n",
               (double)p.launches / (double)p.steps);

    // how close the shape-matching passes come to the floor of their layout
    const double bandwidth = copy_bandwidth(worlds[0]);
    if (bandwidth > 0.0) {
        bool quadratic = false;
        for (int32_t o = 0; o < counts.objects; o++) {
            sm_object_info object;
            if (sm_world_get_object(worlds[0], o, &object) == SM_OK) quadratic |= object.mode == SM_MODE_QUADRATIC;
        }
        const double bytes = layout_bytes(counts, quadratic, sm_scene_world_def(scene).ground.enabled);
        const double floor_ms = 1e3 * bytes / (bandwidth * 1e9);
        const double achieved = (p.pass_ms[SM_PASS_CLUSTER_MOMENTS] + p.pass_ms[SM_PASS_ROTATION] + p.pass_ms[SM_PASS_GOAL_TRANSFORM] +
                                 p.pass_ms[SM_PASS_BLEND_INTEGRATE] + p.pass_ms[SM_PASS_GROUND]) /
                                (double)p.steps;
        printf("floor: copy bandwidth %.1f GB/s (clEnqueueCopyBuffer, read + write); the shape-matching passes (1-4 and "
               "the ground) move %.2f MB per solver step in this layout: floor %.4f ms, achieved %.4f ms (%.2f x the "
               "floor; %.1f GB/s)\n",
               bandwidth, bytes / 1e6, floor_ms, achieved, achieved / floor_ms, bytes / (achieved * 1e-3) / 1e9);
    }

    const sm_memory m = sm_world_get_memory(worlds[0]);
    if (m.device_bytes > 0)
        printf("device memory: %.2f MB in all; %.1f bytes per particle, %.1f per cluster membership, %.1f per cluster, "
               "surfaces %.2f MB, collision grid %.2f MB, other %.2f MB\n",
               m.device_bytes / 1e6, (double)m.particle_bytes / counts.particles,
               counts.memberships ? (double)m.membership_bytes / counts.memberships : 0.0,
               counts.clusters ? (double)m.cluster_bytes / counts.clusters : 0.0, m.surface_bytes / 1e6, m.contact_bytes / 1e6,
               m.other_bytes / 1e6);
    status = 0;
    goto done;
failed:
    error_line("%s: %s", path, sm_last_error());
done:
    free(rates);
    sm_world_destroy(worlds[0]), sm_world_destroy(worlds[1]);
    sm_scene_destroy(scene);
    return status;
}

/* ---- bench fig8 ------------------------------------------------------------------------- */

/// Deterministic uniform numbers in [0, 1) (splitmix64).
static double uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/// One Fig. 8 world: `objects` objects of `points` random points each in a 1 m cube (their rest
/// shape, the goals), placed at other random positions; no gravity, no ground. Returns
/// SM_ERROR_OUT_OF_MEMORY with *out NULL (and sm_last_error() not set) when the points' own
/// arrays cannot be allocated.
static sm_result fig8_world(sm_backend backend, const char *device, int32_t objects, int32_t points, sm_mode mode,
                            int grid, sm_world **out)
{
    *out = NULL;
    sm_vec3 *rest = malloc(sizeof *rest * (size_t)points);
    double *start = malloc(sizeof *start * 3 * (size_t)points);
    if (!rest || !start) {
        free(rest), free(start);
        return SM_ERROR_OUT_OF_MEMORY;
    }
    sm_world_def wd = sm_world_def_default();
    wd.backend = backend;
    wd.device = device;
    wd.gravity = (sm_vec3){0.0, 0.0, 0.0};
    wd.log = quiet_log;
    sm_result result = sm_world_create(&wd, out);
    if (result != SM_OK) {
        free(rest), free(start);
        return result;
    }
    uint64_t seed = 0x5eed0000u + (uint64_t)points;
    for (int32_t o = 0; o < objects && result == SM_OK; o++) {
        for (int32_t i = 0; i < points; i++) rest[i] = (sm_vec3){uniform(&seed), uniform(&seed), uniform(&seed)};
        sm_object_def od = sm_object_def_default();
        od.shape.type = SM_SHAPE_POINTS;
        od.shape.points = rest, od.shape.point_count = points;
        od.mode = mode;
        od.clusters.grid[0] = od.clusters.grid[1] = od.clusters.grid[2] = grid;
        od.position = (sm_vec3){1.5 * (o % 32), 1.5 * ((o / 32) % 32), 1.5 * (o / 1024)};
        int32_t index = 0;
        result = sm_world_add_object(*out, &od, &index);
        if (result != SM_OK) break;
        sm_object_info info;
        sm_world_get_object(*out, index, &info);
        for (int32_t i = 0; i < 3 * points; i++) start[i] = uniform(&seed) + (i % 3 == 0 ? od.position.x : i % 3 == 1 ? od.position.y : od.position.z);
        result = sm_world_set_positions(*out, info.first_particle, points, start);
    }
    free(rest), free(start);
    return result;
}

/// Milliseconds per step of a world: a warm-up, then enough steps for about 0.3 s (3 to 200).
static sm_result time_steps(sm_world *world, double *out_ms)
{
    sm_result result = SM_OK;
    for (int s = 0; s < 2 && result == SM_OK; s++) result = sm_world_step(world, 1.0 / 60.0, 1);
    if (result == SM_OK) result = sync_world(world);
    double start = now_s();
    if (result == SM_OK) result = sm_world_step(world, 1.0 / 60.0, 1);
    if (result == SM_OK) result = sync_world(world);
    const double one = now_s() - start;
    const int steps = one > 0.1 ? 3 : one < 0.0015 ? 200 : (int)(0.3 / one);
    start = now_s();
    for (int s = 0; s < steps && result == SM_OK; s++) result = sm_world_step(world, 1.0 / 60.0, 1);
    if (result == SM_OK) result = sync_world(world);
    *out_ms = 1e3 * (now_s() - start) / steps;
    return result;
}

/// Runs gnuplot on `script`, a file name relative to `folder`, with `folder` as its working
/// directory and no shell between: the script names its files relative to the folder, so no
/// path is ever quoted for a shell or for gnuplot. `shown` names the script in messages.
/// Returns 0 when gnuplot succeeded, -1 when it is not installed, 1 when it failed (the error
/// printed).
static int run_gnuplot(const char *folder, const char *script, const char *shown)
{
    // the child's failure to enter the folder or to start gnuplot, back to the parent: the pipe
    // closes on a successful exec, so the parent reads nothing then
    int report[2];
    if (pipe(report) != 0) {
        error_line("cannot run gnuplot: %s", strerror(errno));
        return 1;
    }
    if (fcntl(report[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(report[1], F_SETFD, FD_CLOEXEC) != 0) {
        error_line("cannot run gnuplot: %s", strerror(errno));
        close(report[0]), close(report[1]);
        return 1;
    }
    fflush(stdout), fflush(stderr);
    const pid_t child = fork();
    if (child < 0) {
        error_line("cannot run gnuplot: %s", strerror(errno));
        close(report[0]), close(report[1]);
        return 1;
    }
    if (child == 0) {
        int failure[2] = {0, 0}; // what failed (0: chdir, 1: exec), errno
        if (chdir(folder) != 0) {
            failure[1] = errno;
        } else {
            char *const args[] = {"gnuplot", (char *)script, NULL};
            execvp("gnuplot", args);
            failure[0] = 1, failure[1] = errno;
        }
        if (write(report[1], failure, sizeof failure) < 0) _exit(126);
        _exit(127);
    }
    close(report[1]);
    int failure[2] = {0, 0};
    ssize_t got;
    do got = read(report[0], failure, sizeof failure);
    while (got < 0 && errno == EINTR);
    close(report[0]);
    int wait_status = 0;
    pid_t waited;
    do waited = waitpid(child, &wait_status, 0);
    while (waited < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof failure) {
        if (failure[0] == 1 && failure[1] == ENOENT) return -1;
        error_line("cannot run gnuplot%s%s: %s", failure[0] ? "" : " in ", failure[0] ? "" : folder, strerror(failure[1]));
        return 1;
    }
    if (waited < 0) {
        error_line("gnuplot on %s: %s", shown, strerror(errno));
        return 1;
    }
    if (WIFSIGNALED(wait_status)) {
        error_line("gnuplot failed on %s: killed by signal %d", shown, WTERMSIG(wait_status));
        return 1;
    }
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        error_line("gnuplot failed on %s (exit status %d)", shown, WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
        return 1;
    }
    return 0;
}

static int bench_fig8(int argc, char **argv)
{
    const char *dir = "bench";
    long long max_points = 1000000, cpu_max_points = 100000;
    bool cpu = true, opencl = true;
    const char *selected = NULL; // (--device: one OpenCL device, else every one)
    char seen[256] = " ";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] == '-' && option_repeated(seen, sizeof seen, a)) return bench_usage_error("an option is given twice:", a);
        if (strcmp(a, "--out") == 0 && value) {
            dir = value, i++;
        } else if ((strcmp(a, "--max-points") == 0 || strcmp(a, "--cpu-max-points") == 0) && value) {
            if (!parse_int(value, 1000, 100000000, a[2] == 'm' ? &max_points : &cpu_max_points))
                return bench_usage_error(a, "needs an integer of at least 1000");
            i++;
        } else if (strcmp(a, "--backend") == 0 && value) {
            cpu = strcmp(value, "cpu") == 0 || strcmp(value, "both") == 0;
            opencl = strcmp(value, "opencl") == 0 || strcmp(value, "both") == 0;
            if (!cpu && !opencl) return bench_usage_error("--backend needs opencl, cpu or both, got", value);
            i++;
        } else if (strcmp(a, "--device") == 0 && value) {
            selected = value, i++;
        } else {
            return bench_usage_error("unknown or incomplete option", a);
        }
    }
    const int refused = check_device(selected, opencl);
    if (refused >= 0) return refused;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        error_line("cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    // the files, in DIR; the plot script names them relative to it (gnuplot runs there)
    char csv_path[4096], plot_path[4096], script_path[4096], shown[4096];
    if ((size_t)snprintf(csv_path, sizeof csv_path, "%s/fig8.csv", dir) >= sizeof csv_path ||
        (size_t)snprintf(plot_path, sizeof plot_path, "%s/fig8.png", dir) >= sizeof plot_path ||
        (size_t)snprintf(script_path, sizeof script_path, "%s/fig8.gp", dir) >= sizeof script_path) {
        error_line("--out: the folder name is too long: %s", dir);
        return 1;
    }
    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        error_line("cannot write %s: %s", csv_path, strerror(errno));
        return 1;
    }
    fprintf(csv, "backend,device,variant,mode,clusters,points,ms_per_step\n");
    // the backends: the CPU reference, then each OpenCL device
    sm_device_info devices[16];
    int32_t device_count = 0;
    if (opencl && selected) {
        if (sm_opencl_device_for(selected, &devices[0]) != SM_OK) {
            error_line("%s", sm_last_error());
            fclose(csv);
            return 1;
        }
        device_count = 1;
    } else if (opencl && sm_opencl_devices(devices, 16, &device_count) != SM_OK) {
        error_line("no OpenCL device (%s): measuring the CPU reference only", sm_last_error());
        device_count = 0;
    }
    char selectors[16][16];
    int status = 0;
    for (int b = cpu ? -1 : 0; b < device_count; b++) {
        const sm_backend backend = b < 0 ? SM_BACKEND_CPU : SM_BACKEND_OPENCL;
        const char *selector = NULL, *label = b < 0 ? "cpu" : "opencl";
        if (b >= 0) {
            snprintf(selectors[b], sizeof selectors[b], "%d", devices[b].index);
            selector = selectors[b];
        }
        const char *device_name = b < 0 ? "CPU reference" : devices[b].name;
        const long long limit = b < 0 ? cpu_max_points : max_points;
        // (variant, mode, clusters per object): the paper's six series, then many objects
        const struct {
            const char *variant;
            sm_mode mode;
            int grid;
        } series[] = {{"one", SM_MODE_LINEAR, 1},    {"one", SM_MODE_LINEAR, 2},    {"one", SM_MODE_LINEAR, 4},
                      {"one", SM_MODE_QUADRATIC, 1}, {"one", SM_MODE_QUADRATIC, 2}, {"one", SM_MODE_QUADRATIC, 4},
                      {"many", SM_MODE_LINEAR, 2}};
        for (size_t k = 0; k < sizeof series / sizeof series[0]; k++) {
            for (int step = 0; step <= 24; step++) {
                const long long points = llround(1000.0 * pow(10.0, step / 4.0));
                if (points > limit) break;
                const bool many = strcmp(series[k].variant, "many") == 0;
                const int32_t objects = many ? (int32_t)llround(points / 1000.0) : 1, each = many ? 1000 : (int32_t)points;
                if ((long long)objects * each > limit) break;
                sm_world *world = NULL;
                double ms = 0.0;
                sm_result r = fig8_world(backend, selector, objects, each, series[k].mode, series[k].grid, &world);
                const bool no_memory = r == SM_ERROR_OUT_OF_MEMORY && !world;
                if (r == SM_OK) r = time_steps(world, &ms);
                sm_world_destroy(world);
                if (r != SM_OK) {
                    error_line("%s, %lld points: %s", label, points, no_memory ? "out of memory for the points" : sm_last_error());
                    status = 1;
                    break;
                }
                const int clusters = series[k].grid * series[k].grid * series[k].grid;
                fprintf(csv, "%s,\"%s\",%s,%s,%d,%lld,%.6f\n", label, device_name, series[k].variant,
                        sm_mode_name(series[k].mode), clusters, (long long)objects * each, ms);
                fflush(csv);
                printf("fig8: %-6s %-40.40s %-4s %-9s %2d clusters %9lld points %10.3f ms/step\n", label, device_name,
                       series[k].variant, sm_mode_name(series[k].mode), clusters, (long long)objects * each, ms);
                fflush(stdout);
                if (b < 0 && ms > 3000.0) break; // the CPU reference: no longer series than that
            }
        }
    }
    if (ferror(csv) | fclose(csv)) {
        error_line("cannot write %s: %s", csv_path, strerror(errno));
        return 1;
    }
    printf("fig8: wrote %s\n", sm_printable(csv_path, shown, sizeof shown));

    // the plot, in the style of the paper's Fig. 8 (log-log, one line per series)
    FILE *gp = fopen(script_path, "w");
    if (!gp) {
        error_line("cannot write %s: %s", script_path, strerror(errno));
        return 1;
    }
    fprintf(gp,
            "# gnuplot script written by shapematch bench fig8; run it in its folder: gnuplot fig8.gp\n"
            "set terminal pngcairo size 900,700 font ',11'\n"
            "set output 'fig8.png'\n"
            "set datafile separator ','\n"
            "set logscale xy\n"
            "set grid\n"
            "set key top left font ',9' spacing 0.9\n"
            "set xrange [700:1.5e6]\n"
            "set xlabel 'number of points'\n"
            "set ylabel 'time per step (ms)'\n"
            "set title 'shapematch: the paper''s Fig. 8 (random points pulled toward random goals)'\n"
            "series(b, v, m, c) = sprintf('%%s %%s %%s, %%d cluster%%s', b, v, m, c, c > 1 ? 's' : '')\n"
            "plot for [b in 'cpu opencl'] for [m in 'linear quadratic'] for [c in '1 8 64'] 'fig8.csv' \\\n"
            "     using (strcol(1) eq b && strcol(3) eq 'one' && strcol(4) eq m && $5 == c ? $6 : NaN):7 \\\n"
            "     with linespoints title series(b, 'one object', m, c+0), \\\n"
            "  for [b in 'cpu opencl'] 'fig8.csv' using (strcol(1) eq b && strcol(3) eq 'many' ? $6 : NaN):7 \\\n"
            "     with linespoints dashtype 2 title series(b, 'objects of 1000 points', 'linear', 8)\n");
    if (ferror(gp) | fclose(gp)) {
        error_line("cannot write %s: %s", script_path, strerror(errno));
        return 1;
    }
    // an old plot must not pass for this run's
    struct stat plot;
    if (lstat(plot_path, &plot) == 0 && !S_ISREG(plot.st_mode) && !S_ISLNK(plot.st_mode)) {
        error_line("cannot write the plot %s: not a regular file", plot_path);
        return 1;
    }
    if (remove(plot_path) != 0 && errno != ENOENT) {
        error_line("cannot replace %s: %s", plot_path, strerror(errno));
        return 1;
    }
    const int plotted = run_gnuplot(dir, "fig8.gp", script_path);
    if (plotted < 0) {
        printf("fig8: gnuplot is not installed (apt-get install gnuplot-nox): the plot script is %s\n",
               sm_printable(script_path, shown, sizeof shown));
    } else if (plotted > 0) {
        status = 1;
    } else if (stat(plot_path, &plot) != 0 || !S_ISREG(plot.st_mode) || plot.st_size == 0) {
        error_line("gnuplot ran %s but wrote no plot %s", script_path, plot_path);
        status = 1;
    } else {
        printf("fig8: wrote %s\n", sm_printable(plot_path, shown, sizeof shown));
    }
    return status;
}

int sm_tool_bench(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(usage_bench, argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    if (strcmp(argv[0], "scene") == 0) return bench_scene(argc - 1, argv + 1);
    if (strcmp(argv[0], "fig8") == 0) return bench_fig8(argc - 1, argv + 1);
    return bench_usage_error("unknown benchmark (scene or fig8):", argv[0]);
}
