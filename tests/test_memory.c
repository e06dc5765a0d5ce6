/* The memory budget (sm_world_def.memory_budget, README "Memory"), on both backends:
 *   - the estimate, made before anything is sampled, against what worlds drawn at random
 *     (points, a mesh's vertices, boxes, spheres, capsules, tori; grids of 1 to 1024 cells per
 *     axis with overlaps of 0 to 10, and explicit clusters; every mode, contact on and off, the
 *     OpenCL work-group threshold drawn) then use: the particles, clusters, memberships and the
 *     device's buffers exactly; grids of over 2^26 memberships refused by the estimate as the
 *     builder refuses them, before sampling; the host's peak (one object of grid clusters, in a
 *     fresh process) within [0.75, 1.1] of the estimate;
 *   - a budget one byte short refuses the objects with SM_ERROR_OUT_OF_MEMORY naming the
 *     figures and leaves the world as it was; the estimate itself passes;
 *   - a scene far beyond the host's memory (2^26 particles, 64 such objects) is refused before
 *     it is sampled: the process's peak memory does not grow;
 *   - $SM_MEMORY_BUDGET takes byte counts with K, M, G, T and "none", and names itself when
 *     it is anything else;
 *   - a mesh collider's distance field counts against the budget, before it is built;
 *   - a lattice inside a thin mesh, estimated at almost nothing, is checked when sampled. */
#include "support.h"

#include <stdlib.h>
#include <unistd.h>

/// The largest peak / estimate accepted: 1.1; under AddressSanitizer (tests/sanitize/run.sh),
/// whose redzones add to every allocation, 1.5, its freed-memory quarantine off in the measuring
/// process (a quarantine keeps a grid's freed (region, particle) lists resident beside the
/// world's arrays, adding two peaks that follow each other).
#if defined(__SANITIZE_ADDRESS__)
#define PEAK_BOUND 1.5
#define PEAK_ENVIRONMENT "ASAN_OPTIONS=\"$ASAN_OPTIONS:quarantine_size_mb=0\" "
#else
#define PEAK_BOUND 1.1
#define PEAK_ENVIRONMENT ""
#endif

/// The process's resident and peak resident memory, bytes.
static int64_t resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lld %lld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (int64_t)resident * sysconf(_SC_PAGESIZE);
}

/// The process's peak resident memory since the last reset_peak() (VmHWM), bytes.
static int64_t peak_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kib) == 1) break;
    if (f) fclose(f);
    return (int64_t)kib * 1024;
}

/// Starts the peak over from the current resident memory.
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) fputs("5", f), fclose(f);
}

/// Storage for a random object def's arrays.
typedef struct drawn_object {
    sm_object_def def;
    sm_vec3 points[2048];
    int32_t offsets[65], indices[8192], triangles[3 * 8];
} drawn_object;

/// A cluster grid's cells along one axis, from its whole range [1, 1024]: log-uniform, so that
/// coarse grids (regions of many particles) are drawn as often as fine ones (regions of few or
/// none, dropped, their particles joining the nearest kept cluster).
static int32_t draw_cells(rng *r) { return (int32_t)fmin(1024.0, floor(exp(rng_uniform(r, 0, log(1025.0))))); }

/// A random object of `scale` particles or so: any shape (a list of points, a mesh's vertices,
/// the lattice shapes), grid clusters (1 to 1024 cells per axis, overlap 0 to 10: half the draws
/// in [0, 1], half in [0, 10]) or, with `explicit_clusters`, a random list of clusters over a
/// points shape; any mode; colliding or not.
static void draw_object(rng *r, int scale, bool explicit_clusters, drawn_object *o)
{
    sm_object_def *d = &o->def;
    *d = sm_object_def_default();
    d->mode = (sm_mode)(int)rng_uniform(r, 0, 3);
    d->collisions.enabled = rng_uniform(r, 0, 1) < 0.5;
    const int kind = explicit_clusters ? 0 : (int)rng_uniform(r, 0, 6);
    const double side = cbrt((double)scale);
    switch (kind) {
    case 0:
    case 5: { // points, or a mesh's vertices (its skinned surface off: its bindings are estimated)
        const int n = 1 + (int)rng_uniform(r, 0, 2000);
        for (int i = 0; i < n; i++) o->points[i] = rng_in_ball(r, 1.0);
        if (kind == 0) {
            d->shape.type = SM_SHAPE_POINTS;
            d->shape.points = o->points, d->shape.point_count = n;
        } else {
            d->shape.type = SM_SHAPE_MESH;
            d->shape.mesh_vertices = o->points, d->shape.mesh_vertex_count = n;
            for (int t = 0; t < 3 * 8; t++) o->triangles[t] = (int32_t)rng_uniform(r, 0, n);
            d->shape.mesh_triangles = o->triangles, d->shape.mesh_triangle_count = 8;
            d->surface.enabled = false;
        }
        break;
    }
    case 1:
        for (int a = 0; a < 3; a++) d->shape.resolution[a] = 1 + (int)rng_uniform(r, 0, 2 * side);
        d->shape.size = (sm_vec3){rng_uniform(r, 0.2, 2), rng_uniform(r, 0.2, 2), rng_uniform(r, 0.2, 2)};
        break;
    case 2: d->shape.type = SM_SHAPE_SPHERE, d->shape.radius = 1.0, d->shape.spacing = 1.6 / side; break;
    case 3: d->shape.type = SM_SHAPE_CAPSULE, d->shape.radius = 0.5, d->shape.length = 1.0, d->shape.spacing = 1.2 / side; break;
    default:
        d->shape.type = SM_SHAPE_TORUS, d->shape.major_radius = 1.0, d->shape.minor_radius = 0.4;
        d->shape.spacing = 1.9 / side;
        break;
    }
    if (explicit_clusters) { // 1 to 64 clusters of distinct random particles, the first of all
        const int n = d->shape.point_count, clusters = 1 + (int)rng_uniform(r, 0, 64);
        int order[2048], used = 0;
        for (int i = 0; i < n; i++) order[i] = i;
        o->offsets[0] = 0;
        for (int c = 0; c < clusters; c++) {
            const int room = (8192 - n) / clusters, members = c == 0 ? n : 1 + (int)rng_uniform(r, 0, room < n ? room : n);
            for (int m = 0; m < members; m++) { // a partial shuffle: members distinct
                const int pick = m + (int)rng_uniform(r, 0, n - m), t = order[m];
                order[m] = order[pick], order[pick] = t;
                o->indices[used++] = order[m];
            }
            o->offsets[c + 1] = used;
        }
        d->clusters.list_offsets = o->offsets, d->clusters.list_indices = o->indices, d->clusters.list_count = clusters;
    } else {
        for (int a = 0; a < 3; a++) d->clusters.grid[a] = draw_cells(r);
        d->clusters.overlap = rng_uniform(r, 0, 1) < 0.5 ? rng_uniform(r, 0, 1) : rng_uniform(r, 0, 10);
    }
}

static sm_world *empty_world(sm_backend backend, bool collisions, int64_t budget)
{
    sm_world_def def = sm_world_def_default();
    def.backend = backend;
    def.collisions.enabled = collisions;
    def.memory_budget = budget;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&def, &world));
    return world;
}

/// Worlds whose estimate holds more memberships than this are not built here (the estimate's
/// arithmetic does not change with the size; building and stepping does, under valgrind).
#define BUILD_MEMBERSHIPS 50000

/// 40 random worlds of 1 to 3 objects on each backend: the estimate made before the objects are
/// added against the world they make (after a step, when the device buffers exist): particles,
/// clusters, memberships and (OpenCL) the device's buffers all exact. On OpenCL the work-group
/// threshold ($SM_LARGE_CLUSTER) is drawn too, log-uniform in [4, 20000], so that clusters reach
/// it (and particles left in no region of a grid carry clusters past it). Draws the builder
/// refuses (over 2^26 grid memberships) must be refused by the estimate with the same error;
/// draws of over BUILD_MEMBERSHIPS estimated memberships are drawn again.
static void estimates_match_what_worlds_use(void)
{
    rng r = {27};
    int refused = 0, redrawn = 0;
    for (int b = 0; b < 2; b++)
        for (int draw = 0; draw < 40; draw++) {
            const bool explicit_clusters = draw % 4 == 0, collisions = rng_uniform(&r, 0, 1) < 0.5;
            char threshold[32];
            snprintf(threshold, sizeof threshold, "%d", (int)exp(rng_uniform(&r, log(4.0), log(20000.0))));
            if (b) setenv("SM_LARGE_CLUSTER", threshold, 1);
            const int count = 1 + (int)rng_uniform(&r, 0, 3);
            static drawn_object objects[3];
            sm_object_def defs[3];
            for (int i = 0; i < count; i++) {
                draw_object(&r, 100 + (int)rng_uniform(&r, 0, 4000), explicit_clusters, &objects[i]);
                defs[i] = objects[i].def;
            }
            sm_world *world = empty_world(b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU, collisions, 0);
            unsetenv("SM_LARGE_CLUSTER");
            if (!world) return;
            sm_memory_estimate e;
            const sm_result estimated = sm_world_estimate_memory(world, defs, count, &e);
            if (estimated != SM_OK) { // refused as the builder refuses it, before sampling
                ENSURE(estimated == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "cluster memberships; use fewer cells"));
                for (int i = 0; i < count; i++)
                    if (sm_world_estimate_memory(world, &defs[i], 1, &e) != SM_OK) {
                        char message[512];
                        snprintf(message, sizeof message, "%s", sm_last_error());
                        ENSURE(sm_world_add_object(world, &defs[i], NULL) == estimated && strcmp(sm_last_error(), message) == 0);
                        break;
                    }
                sm_world_destroy(world);
                refused++, draw--;
                continue;
            }
            if (e.memberships > BUILD_MEMBERSHIPS) {
                sm_world_destroy(world);
                redrawn++, draw--;
                continue;
            }
            for (int i = 0; i < count; i++) ENSURE_OK(sm_world_add_object(world, &defs[i], NULL));
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            const sm_counts c = sm_world_get_counts(world);
            ENSURE(e.particles == c.particles && e.clusters == c.clusters && e.memberships == c.memberships);
            if (b) {
                const sm_memory m = sm_world_get_memory(world);
                const int64_t buffers = m.device_bytes - m.other_bytes; // colliders and targets: none here
                if (e.device_bytes != buffers) {
                    printf("  draw %d: device bytes estimated %lld, used %lld (threshold %s)\n", draw,
                           (long long)e.device_bytes, (long long)buffers, threshold);
                    ENSURE(false);
                }
            } else {
                ENSURE(e.device_bytes == 0);
            }
            sm_world_destroy(world);
        }
    printf("  80 worlds built: particles, clusters, memberships and device bytes exact; %d draws refused as the "
           "builder refuses them, %d of over %d memberships drawn again\n",
           refused, redrawn, BUILD_MEMBERSHIPS);
}

/// Grids whose (region, particle) pairs exceed the builder's limit (2^26) are refused by the
/// estimate, before anything is sampled, with the builder's own error: 6 seeded draws of a box
/// of 40 to 80 particles a side, 8 to 64 cells per axis, overlap 4 to 10; sm_world_add_object()
/// refuses them with the same sentence, and the process's peak memory grows by less than 8 MB
/// (sampling the box would take more).
static void grids_over_the_limit_are_refused_before_sampling(void)
{
    rng r = {83};
    for (int draw = 0; draw < 6; draw++) {
        sm_object_def def = sm_object_def_default();
        for (int a = 0; a < 3; a++) {
            def.shape.resolution[a] = 40 + (int)rng_uniform(&r, 0, 41);
            def.clusters.grid[a] = 8 + (int)rng_uniform(&r, 0, 57);
        }
        def.clusters.overlap = rng_uniform(&r, 4, 10);
        sm_world *world = empty_world(draw % 2 ? SM_BACKEND_OPENCL : SM_BACKEND_CPU, true, 0);
        if (!world) return;
        reset_peak();
        const int64_t before = peak_resident_bytes();
        sm_memory_estimate e;
        ENSURE(sm_world_estimate_memory(world, &def, 1, &e) == SM_ERROR_INVALID_ARGUMENT);
        char message[512];
        snprintf(message, sizeof message, "%s", sm_last_error());
        ENSURE(strstr(message, "cells with overlap") && strstr(message, "gives over 67108864 cluster memberships"));
        ENSURE(sm_world_add_object(world, &def, NULL) == SM_ERROR_INVALID_ARGUMENT && strcmp(sm_last_error(), message) == 0);
        ENSURE(sm_world_get_counts(world).particles == 0);
        ENSURE_RANGE((double)(peak_resident_bytes() - before), 0.0, 8e6);
        sm_world_destroy(world);
    }
}

/// Draw `draw` of host_estimate_bounds_the_peak's objects, at attempt *attempt (-1: the first
/// attempt whose estimate is made, at most 150 MB, and of clusters x particles at most 1e8, a
/// bound on the builder's search of the nearest cluster for each particle left in no region:
/// seconds beyond it; its number into *attempt).
static void draw_peak_object(int draw, drawn_object *object, int *attempt)
{
    rng r = {41 + 1000 * (uint64_t)draw};
    sm_world *probe = *attempt < 0 ? empty_world(SM_BACKEND_CPU, true, INT64_MAX) : NULL; // (the object's collisions decide)
    for (int k = 0;; k++) {
        draw_object(&r, 50000 + (int)rng_uniform(&r, 0, 150000), false, object);
        if (object->def.shape.type == SM_SHAPE_POINTS || object->def.shape.type == SM_SHAPE_MESH) { // too few: a box
            const sm_object_def drawn = object->def;
            object->def = sm_object_def_default();
            object->def.mode = drawn.mode, object->def.collisions = drawn.collisions, object->def.clusters = drawn.clusters;
            for (int a = 0; a < 3; a++) object->def.shape.resolution[a] = 40 + (int)rng_uniform(&r, 0, 20);
        }
        if (*attempt >= 0) {
            if (k == *attempt) break;
            continue;
        }
        sm_memory_estimate e;
        if (sm_world_estimate_memory(probe, &object->def, 1, &e) == SM_OK && e.host_bytes <= 150000000 &&
            (double)e.clusters * (double)e.particles <= 1e8) {
            *attempt = k;
            break;
        }
    }
    sm_world_destroy(probe);
}

/// In a process of its own (nothing freed before to reuse): the peak resident memory while
/// the object of draw `draw` at `attempt` is added and stepped once on the CPU reference, over
/// the estimate.
static int measure_host_peak(int draw, int attempt)
{
    static drawn_object object;
    draw_peak_object(draw, &object, &attempt);
    sm_world *world = empty_world(SM_BACKEND_CPU, object.def.collisions.enabled, 0);
    sm_memory_estimate e = {0};
    if (!world || sm_world_estimate_memory(world, &object.def, 1, &e) != SM_OK) return 1;
    reset_peak();
    const int64_t before = resident_bytes();
    if (sm_world_add_object(world, &object.def, NULL) != SM_OK || sm_world_step(world, 1.0 / 60.0, 1) != SM_OK) {
        fprintf(stderr, "draw %d: %s\n", draw, sm_last_error());
        sm_world_destroy(world);
        return 1;
    }
    printf("%.6f\n", (double)(peak_resident_bytes() - before) / (double)e.host_bytes);
    sm_world_destroy(world);
    return 0;
}

/// The host's peak while random objects of 50,000 to 200,000 particles (grids over the whole
/// range, see draw_object()) are added, each in a fresh process, on the CPU reference: within
/// [0.75, 1.1] of the estimate.
static void host_estimate_bounds_the_peak(void)
{
    for (int draw = 0; draw < 8; draw++) {
        static drawn_object object;
        int attempt = -1;
        draw_peak_object(draw, &object, &attempt);
        sm_world *probe = empty_world(SM_BACKEND_CPU, object.def.collisions.enabled, 0);
        sm_memory_estimate e = {0};
        ENSURE_OK(sm_world_estimate_memory(probe, &object.def, 1, &e));
        sm_world_destroy(probe);
        char command[4200];
        snprintf(command, sizeof command, PEAK_ENVIRONMENT "/proc/%d/exe measure-host-peak %d %d", (int)getpid(), draw, attempt);
        FILE *child = popen(command, "r");
        double ratio = -1.0;
        ENSURE(child && fscanf(child, "%lf", &ratio) == 1);
        if (child) ENSURE(pclose(child) == 0);
        printf("  draw %d: %s of %lld particles, grid %d x %d x %d, overlap %.2f, %s: %lld clusters, %lld memberships, "
               "estimate %.0f MB, peak / estimate %.3f\n",
               draw, sm_shape_name(object.def.shape.type), (long long)e.particles, object.def.clusters.grid[0],
               object.def.clusters.grid[1], object.def.clusters.grid[2], object.def.clusters.overlap,
               object.def.collisions.enabled ? "colliding" : "not colliding", (long long)e.clusters,
               (long long)e.memberships, (double)e.host_bytes / 1e6, ratio);
        ENSURE_RANGE(ratio, 0.75, PEAK_BOUND);
    }
}

/// A budget one byte short of the estimate refuses the objects with SM_ERROR_OUT_OF_MEMORY,
/// naming the bytes needed, and leaves the world empty; the estimate itself passes. On OpenCL
/// the device's part is refused the same way ($SM_DEVICE_MEMORY_LIMIT standing in for a
/// smaller device), exactly at the bound.
static void a_budget_one_byte_short_refuses(void)
{
    rng r = {5};
    for (int draw = 0; draw < 10; draw++) {
        static drawn_object object;
        sm_world *probe = empty_world(SM_BACKEND_CPU, true, 0);
        if (!probe) return;
        sm_memory_estimate e;
        do // (a world of at most BUILD_MEMBERSHIPS memberships)
            draw_object(&r, 5000, draw % 2 == 0, &object);
        while (sm_world_estimate_memory(probe, &object.def, 1, &e) != SM_OK || e.memberships > BUILD_MEMBERSHIPS);
        sm_world_destroy(probe);

        sm_world *tight = empty_world(SM_BACKEND_CPU, true, e.host_bytes - 1);
        sm_result result = sm_world_add_object(tight, &object.def, NULL);
        ENSURE(result == SM_ERROR_OUT_OF_MEMORY);
        char bytes[64];
        snprintf(bytes, sizeof bytes, "(%lld bytes for %lld particles", (long long)e.host_bytes, (long long)e.particles);
        ENSURE(strstr(sm_last_error(), bytes) && strstr(sm_last_error(), "memory_budget"));
        ENSURE(sm_world_get_counts(tight).particles == 0);
        sm_world_destroy(tight);
        sm_world *exact = empty_world(SM_BACKEND_CPU, true, e.host_bytes);
        ENSURE_OK(sm_world_add_object(exact, &object.def, NULL));
        sm_world_destroy(exact);

        // the device, through the same estimate
        sm_world *device = empty_world(SM_BACKEND_OPENCL, true, INT64_MAX);
        if (!device) return;
        ENSURE_OK(sm_world_estimate_memory(device, &object.def, 1, &e));
        char limit[64];
        snprintf(limit, sizeof limit, "%lld", (long long)e.device_bytes - 1);
        setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
        ENSURE(sm_world_add_object(device, &object.def, NULL) == SM_ERROR_OUT_OF_MEMORY);
        snprintf(bytes, sizeof bytes, "(%lld bytes for a world of", (long long)e.device_bytes);
        ENSURE(strstr(sm_last_error(), bytes) && strstr(sm_last_error(), "$SM_DEVICE_MEMORY_LIMIT"));
        snprintf(limit, sizeof limit, "%lld", (long long)e.device_bytes);
        setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
        ENSURE_OK(sm_world_add_object(device, &object.def, NULL));
        unsetenv("SM_DEVICE_MEMORY_LIMIT");
        sm_world_destroy(device);
    }
}

/// A scene of 64 objects of 2^26 particles each (every one within the per-object limit) is
/// refused by the host's available memory, and one such box or a sphere of as many particles by
/// an 8 GiB budget (on OpenCL, by the device's memory where that holds less than the scene needs,
/// about 9.5 GB), at once, before any object is sampled: the process's peak memory grows by less
/// than 64 MB.
static void a_memory_bomb_is_refused_before_it_is_sampled(void)
{
    static const char *const object[] = {
        "{\"shape\": \"box\", \"resolution\": [4096, 4096, 4]}",
        "{\"shape\": \"sphere\", \"radius\": 1, \"spacing\": 0.004}",
    };
    // the OpenCL device opened first (its driver's own memory is not the scene's)
    sm_scene *small = NULL;
    ENSURE_OK(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\"}]}", "small.json", &small));
    sm_world *warm = NULL;
    ENSURE_OK(create_world(small, SM_BACKEND_OPENCL, &warm));
    ENSURE_OK(sm_world_step(warm, 0.01, 1));
    sm_world_destroy(warm);
    sm_scene_destroy(small);
    for (int b = 0; b < 2; b++)
        for (int s = 0; s < 3; s++) {
            char json[8192] = "{\"objects\": [";
            const int copies = s == 0 ? 64 : 1;
            for (int i = 0; i < copies; i++) {
                if (i) strcat(json, ", ");
                strcat(json, object[s == 2]);
            }
            strcat(json, "]}");
            if (s == 0) unsetenv("SM_MEMORY_BUDGET");
            else setenv("SM_MEMORY_BUDGET", "8G", 1);
            sm_scene *scene = NULL;
            ENSURE_OK(sm_scene_load_string(json, "bomb.json", &scene));
            if (!scene) continue;
            reset_peak();
            const int64_t before = peak_resident_bytes();
            sm_world *world = NULL;
            ENSURE(create_world(scene, b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU, &world) == SM_ERROR_OUT_OF_MEMORY);
            ENSURE(!world);
            // refused by the host's available memory or, on OpenCL, the device's, or by the budget
            ENSURE(strstr(sm_last_error(), "the scene ("));
            if (s == 0) ENSURE(strstr(sm_last_error(), b ? "(CL_DEVICE_GLOBAL_MEM_SIZE)" : "(MemAvailable in /proc/meminfo)"));
            else if (b && strstr(sm_last_error(), "(CL_DEVICE_GLOBAL_MEM_SIZE)")) ENSURE(strstr(sm_last_error(), "a device with more memory"));
            else ENSURE(strstr(sm_last_error(), "($SM_MEMORY_BUDGET)") && strstr(sm_last_error(), "raise the budget"));
            ENSURE_RANGE((double)(peak_resident_bytes() - before), 0.0, 64e6);
            sm_scene_destroy(scene);
        }
    unsetenv("SM_MEMORY_BUDGET");
}

/// A lattice inside a mesh is only estimated before sampling (from the volume it encloses, about
/// 0 for a thin mesh): the particles sampled are checked against the budget again, as a box's
/// are before. A closed slab of 1 x t x 1 m (t a seeded random draw in [1e-6, 1e-4] m) with a
/// lattice of 0.001 m holds about 10^6 particles, over 300 MB: refused by a budget of 100 MB
/// with SM_ERROR_OUT_OF_MEMORY naming the count, the world as it was; a lattice of 0.01 m fits.
static void a_thin_mesh_lattice_is_checked_after_sampling(void)
{
    rng r = {71};
    for (int b = 0; b < 2; b++) {
        const double t = rng_uniform(&r, 1e-6, 1e-4);
        sm_vec3 corners[8];
        for (int c = 0; c < 8; c++) corners[c] = (sm_vec3){c & 1 ? 0.5 : -0.5, c & 2 ? 0.5 * t : -0.5 * t, c & 4 ? 0.5 : -0.5};
        int32_t triangles[36] = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                 2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6}; // outwards
        sm_world *world = empty_world(b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU, false, 100 << 20);
        if (!world) continue;
        sm_object_def def = sm_object_def_default();
        def.shape.type = SM_SHAPE_MESH;
        def.shape.mesh_vertices = corners, def.shape.mesh_vertex_count = 8;
        def.shape.mesh_triangles = triangles, def.shape.mesh_triangle_count = 12;
        def.shape.mesh_particles = SM_MESH_PARTICLES_LATTICE;
        def.shape.spacing = 0.001;
        def.surface.enabled = false;
        sm_memory_estimate estimate;
        ENSURE_OK(sm_world_estimate_memory(world, &def, 1, &estimate));
        ENSURE(estimate.particles <= 100001); // the estimate from the volume, t / 1e-9
        ENSURE(sm_world_add_object(world, &def, NULL) == SM_ERROR_OUT_OF_MEMORY);
        if (!strstr(sm_last_error(), "the lattice of ") || !strstr(sm_last_error(), "inside the mesh needs") ||
            !strstr(sm_last_error(), "(sm_world_def.memory_budget)")) {
            printf("  %s\n", sm_last_error());
            ENSURE(false);
        }
        ENSURE(sm_world_get_counts(world).objects == 0 && sm_world_get_counts(world).particles == 0);
        def.shape.spacing = 0.01;
        ENSURE_OK(sm_world_add_object(world, &def, NULL));
        ENSURE_RANGE(sm_world_get_counts(world).particles, 9000, 10201);
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        sm_world_destroy(world);
    }
}

/// $SM_MEMORY_BUDGET: byte counts with K, M, G or T (powers of 1024) and "none" are taken; any
/// other text is an error that names the variable and the text.
static void memory_budget_variable(void)
{
    sm_object_def def = sm_object_def_default();
    static const struct {
        const char *value;
        bool fits;
    } cases[] = {{"64G", true}, {"1T", true}, {"none", true}, {"20000000", true}, {"1.5M", true}, {"1K", false},
                 {"1000", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("SM_MEMORY_BUDGET", cases[i].value, 1);
        sm_world *world = empty_world(SM_BACKEND_CPU, false, 0);
        if (!world) continue;
        const sm_result result = sm_world_add_object(world, &def, NULL);
        ENSURE(result == (cases[i].fits ? SM_OK : SM_ERROR_OUT_OF_MEMORY));
        if (!cases[i].fits) ENSURE(strstr(sm_last_error(), "($SM_MEMORY_BUDGET)"));
        sm_world_destroy(world);
    }
    static const char *const bad[] = {"junk", "-5", "12Q", "0", "1e30", "\x1b[2J"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("SM_MEMORY_BUDGET", bad[i], 1);
        sm_world *world = empty_world(SM_BACKEND_CPU, false, 0);
        if (!world) continue;
        ENSURE(sm_world_add_object(world, &def, NULL) == SM_ERROR_INVALID_ARGUMENT);
        ENSURE(strstr(sm_last_error(), "$SM_MEMORY_BUDGET must be a byte count"));
        ENSURE(!strchr(sm_last_error(), '\x1b'));
        sm_world_destroy(world);
    }
    unsetenv("SM_MEMORY_BUDGET");
    sm_world_def negative = sm_world_def_default();
    negative.memory_budget = -1;
    sm_world *world = NULL;
    ENSURE(sm_world_create(&negative, &world) == SM_ERROR_INVALID_ARGUMENT && !world);
}

/// A mesh collider's field (4 bytes a node, on the host and on the device) counts against the
/// budget, checked before the field is built: 8 draws of a mesh (the bowl, the stairs), a scale
/// in [0.5, 2] and a cell in [0.03, 0.12] m. In a world with a budget 1 byte short of its
/// estimate plus the field the collider is refused with SM_ERROR_OUT_OF_MEMORY naming the
/// field's nodes and the world keeps no collider; at the bound it is added; and the world's
/// estimate then counts the field, exactly. On OpenCL the same through $SM_DEVICE_MEMORY_LIMIT.
static void mesh_collider_fields_count_against_the_budget(void)
{
    rng r = {31};
    for (int draw = 0; draw < 8; draw++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/meshes/%s", SM_SCENES_DIR, draw % 2 ? "stairs.obj" : "bowl.obj");
        sm_collider_def def = sm_collider_def_default();
        def.shape = SM_COLLIDER_MESH;
        def.mesh = path;
        const double scale = rng_uniform(&r, 0.5, 2.0);
        def.scale = (sm_vec3){scale, scale * rng_uniform(&r, 0.8, 1.25), scale};
        def.cell = rng_uniform(&r, 0.03, 0.12);
        // the field's nodes, from a world without a budget
        sm_world *probe = empty_world(SM_BACKEND_CPU, false, INT64_MAX);
        if (!probe) return;
        ENSURE_OK(sm_world_add_collider(probe, &def, NULL));
        sm_collider_info info;
        ENSURE_OK(sm_world_get_collider(probe, 0, &info));
        const int64_t nodes = (int64_t)info.nodes[0] * info.nodes[1] * info.nodes[2], field = 4 * nodes;
        sm_world_destroy(probe);
        char named[96];
        snprintf(named, sizeof named, "a mesh collider's field of %lld nodes", (long long)nodes);

        // the host
        sm_world *empty = empty_world(SM_BACKEND_CPU, false, INT64_MAX);
        sm_memory_estimate before, after;
        ENSURE_OK(sm_world_estimate_memory(empty, NULL, 0, &before));
        sm_world_destroy(empty);
        sm_world *tight = empty_world(SM_BACKEND_CPU, false, before.host_bytes + field - 1);
        ENSURE(sm_world_add_collider(tight, &def, NULL) == SM_ERROR_OUT_OF_MEMORY);
        ENSURE(strstr(sm_last_error(), named) && strstr(sm_last_error(), "larger cells"));
        ENSURE(sm_world_get_collider_count(tight) == 0);
        sm_world_destroy(tight);
        sm_world *exact = empty_world(SM_BACKEND_CPU, false, before.host_bytes + field);
        ENSURE_OK(sm_world_add_collider(exact, &def, NULL));
        ENSURE_OK(sm_world_estimate_memory(exact, NULL, 0, &after));
        ENSURE(after.host_bytes == before.host_bytes + field);
        sm_world_destroy(exact);
        printf("  draw %d: %s at scale %.2f, cell %.3f m: %lld nodes; refused 1 byte short, added at the bound\n", draw,
               draw % 2 ? "stairs" : "bowl", scale, def.cell, (long long)nodes);

        // the device
        sm_world *device = empty_world(SM_BACKEND_OPENCL, false, INT64_MAX);
        if (!device) continue;
        ENSURE_OK(sm_world_estimate_memory(device, NULL, 0, &before));
        char limit[64];
        snprintf(limit, sizeof limit, "%lld", (long long)(before.device_bytes + field - 1));
        setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
        ENSURE(sm_world_add_collider(device, &def, NULL) == SM_ERROR_OUT_OF_MEMORY);
        snprintf(named, sizeof named, "with mesh-collider fields of %lld nodes", (long long)nodes);
        ENSURE(strstr(sm_last_error(), named) && strstr(sm_last_error(), "$SM_DEVICE_MEMORY_LIMIT"));
        ENSURE(sm_world_get_collider_count(device) == 0);
        snprintf(limit, sizeof limit, "%lld", (long long)(before.device_bytes + field));
        setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
        ENSURE_OK(sm_world_add_collider(device, &def, NULL));
        unsetenv("SM_DEVICE_MEMORY_LIMIT");
        ENSURE_OK(sm_world_estimate_memory(device, NULL, 0, &after));
        ENSURE(after.device_bytes == before.device_bytes + field);
        ENSURE_OK(sm_world_step(device, 1.0 / 60.0, 1)); // (the field reaches the device)
        sm_world_destroy(device);
    }
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "measure-host-peak") == 0) return measure_host_peak(atoi(argv[2]), atoi(argv[3]));
    static const sm_test_case tests[] = {
        TEST(estimates_match_what_worlds_use),
        TEST(grids_over_the_limit_are_refused_before_sampling),
        TEST(host_estimate_bounds_the_peak),
        TEST(a_budget_one_byte_short_refuses),
        TEST(a_memory_bomb_is_refused_before_it_is_sampled),
        TEST(a_thin_mesh_lattice_is_checked_after_sampling),
        TEST(memory_budget_variable),
        TEST(mesh_collider_fields_count_against_the_budget),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
