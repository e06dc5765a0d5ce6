/* The memory budget (sm_world_def.memory_budget, README "Memory"), on both backends:
 *   - the estimate, made before anything is sampled, against what worlds drawn at random
 *     (every shape, grid and explicit clusters, every mode, contact on and off) then use: the
 *     particles exactly, the device's buffers exactly when the memberships are known (explicit
 *     clusters) and within 20% otherwise (the memberships of grid clusters within 40%), the
 *     host's peak within [0.75, 1.1] of the estimate;
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
/// whose redzones and freed-memory quarantine add to every allocation, 1.5.
#if defined(__SANITIZE_ADDRESS__)
#define PEAK_BOUND 1.5
#else
#define PEAK_BOUND 1.1
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
    int32_t offsets[65], indices[8192];
} drawn_object;

/// A random object of `scale` particles or so: any shape, grid clusters (1 to 6 cells per axis,
/// overlap 0 to 0.5) or, with `explicit_clusters`, a random list of clusters over a points
/// shape; any mode; colliding or not.
static void draw_object(rng *r, int scale, bool explicit_clusters, drawn_object *o)
{
    sm_object_def *d = &o->def;
    *d = sm_object_def_default();
    d->mode = (sm_mode)(int)rng_uniform(r, 0, 3);
    d->collisions.enabled = rng_uniform(r, 0, 1) < 0.5;
    const int kind = explicit_clusters ? 0 : (int)rng_uniform(r, 0, 5);
    const double side = cbrt((double)scale);
    switch (kind) {
    case 0: {
        const int n = 10 + (int)rng_uniform(r, 0, 2000);
        d->shape.type = SM_SHAPE_POINTS;
        for (int i = 0; i < n; i++) o->points[i] = rng_in_ball(r, 1.0);
        d->shape.points = o->points, d->shape.point_count = n;
        break;
    }
    case 1:
        for (int a = 0; a < 3; a++) d->shape.resolution[a] = 2 + (int)rng_uniform(r, 0, 2 * side);
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
        for (int a = 0; a < 3; a++) d->clusters.grid[a] = 1 + (int)rng_uniform(r, 0, 6);
        d->clusters.overlap = rng_uniform(r, 0, 0.5);
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

/// 40 random worlds of 1 to 3 objects on each backend: the estimate made before the objects
/// are added against the world they make (after a step, when the device buffers exist).
static void estimates_match_what_worlds_use(void)
{
    rng r = {27};
    double worst_device = 0.0, worst_memberships = 0.0;
    for (int b = 0; b < 2; b++)
        for (int draw = 0; draw < 40; draw++) {
            const bool explicit_clusters = draw % 4 == 0, collisions = rng_uniform(&r, 0, 1) < 0.5;
            const int count = 1 + (int)rng_uniform(&r, 0, 3);
            static drawn_object objects[3];
            sm_object_def defs[3];
            for (int i = 0; i < count; i++) {
                draw_object(&r, 200 + (int)rng_uniform(&r, 0, 8000), explicit_clusters, &objects[i]);
                defs[i] = objects[i].def;
            }
            sm_world *world = empty_world(b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU, collisions, 0);
            if (!world) return;
            sm_memory_estimate e;
            ENSURE_OK(sm_world_estimate_memory(world, defs, count, &e));
            for (int i = 0; i < count; i++) ENSURE_OK(sm_world_add_object(world, &defs[i], NULL));
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            const sm_counts c = sm_world_get_counts(world);
            ENSURE(e.particles == c.particles);
            ENSURE(e.clusters >= c.clusters);
            const double membership_error = fabs((double)e.memberships / c.memberships - 1.0);
            worst_memberships = fmax(worst_memberships, membership_error);
            if (explicit_clusters) ENSURE(e.memberships == c.memberships && e.clusters == c.clusters);
            else ENSURE_RANGE(membership_error, 0.0, 0.4);
            if (b) {
                const sm_memory m = sm_world_get_memory(world);
                const int64_t buffers = m.device_bytes - m.other_bytes; // colliders and targets: none here
                const double device_error = fabs((double)e.device_bytes / (double)buffers - 1.0);
                worst_device = fmax(worst_device, device_error);
                if (explicit_clusters) ENSURE(e.device_bytes == buffers);
                else ENSURE_RANGE(device_error, 0.0, 0.2);
            } else {
                ENSURE(e.device_bytes == 0);
            }
            sm_world_destroy(world);
        }
    printf("  worst relative error: memberships %.3f, device bytes %.3f\n", worst_memberships, worst_device);
}

/// Draw `draw` of host_estimate_bounds_the_peak's objects.
static void draw_peak_object(int draw, drawn_object *object)
{
    rng r = {41 + 1000 * (uint64_t)draw};
    draw_object(&r, 100000 + (int)rng_uniform(&r, 0, 300000), false, object);
    if (object->def.shape.type == SM_SHAPE_POINTS) { // too few to measure: a box instead
        object->def.shape = sm_object_def_default().shape;
        for (int a = 0; a < 3; a++) object->def.shape.resolution[a] = 50 + draw * 4;
    }
}

/// In a process of its own (nothing freed before to reuse): the peak resident memory while
/// draw `draw`'s object is added and stepped once on the CPU reference, over the estimate.
static int measure_host_peak(int draw)
{
    static drawn_object object;
    draw_peak_object(draw, &object);
    sm_world *world = empty_world(SM_BACKEND_CPU, object.def.collisions.enabled, 0);
    sm_memory_estimate e = {0};
    if (!world || sm_world_estimate_memory(world, &object.def, 1, &e) != SM_OK) return 1;
    reset_peak();
    const int64_t before = resident_bytes();
    if (sm_world_add_object(world, &object.def, NULL) != SM_OK || sm_world_step(world, 1.0 / 60.0, 1) != SM_OK) return 1;
    printf("%.6f\n", (double)(peak_resident_bytes() - before) / (double)e.host_bytes);
    sm_world_destroy(world);
    return 0;
}

/// The host's peak while random objects of 100,000 to 400,000 particles are added, each in a
/// fresh process, on the CPU reference: within [0.75, 1.1] of the estimate.
static void host_estimate_bounds_the_peak(void)
{
    for (int draw = 0; draw < 8; draw++) {
        char command[4200];
        snprintf(command, sizeof command, "/proc/%d/exe measure-host-peak %d", (int)getpid(), draw);
        FILE *child = popen(command, "r");
        double ratio = -1.0;
        ENSURE(child && fscanf(child, "%lf", &ratio) == 1);
        if (child) ENSURE(pclose(child) == 0);
        static drawn_object object;
        draw_peak_object(draw, &object);
        printf("  draw %d: %s, grid %d x %d x %d, overlap %.2f, %s: peak / estimate %.3f\n", draw,
               sm_shape_name(object.def.shape.type), object.def.clusters.grid[0], object.def.clusters.grid[1],
               object.def.clusters.grid[2], object.def.clusters.overlap,
               object.def.collisions.enabled ? "colliding" : "not colliding", ratio);
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
        draw_object(&r, 5000, draw % 2 == 0, &object);
        sm_world *probe = empty_world(SM_BACKEND_CPU, true, 0);
        if (!probe) return;
        sm_memory_estimate e;
        ENSURE_OK(sm_world_estimate_memory(probe, &object.def, 1, &e));
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
    if (argc == 3 && strcmp(argv[1], "measure-host-peak") == 0) return measure_host_peak(atoi(argv[2]));
    static const sm_test_case tests[] = {
        TEST(estimates_match_what_worlds_use),
        TEST(host_estimate_bounds_the_peak),
        TEST(a_budget_one_byte_short_refuses),
        TEST(a_memory_bomb_is_refused_before_it_is_sampled),
        TEST(a_thin_mesh_lattice_is_checked_after_sampling),
        TEST(memory_budget_variable),
        TEST(mesh_collider_fields_count_against_the_budget),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
