/* Cutting (Henriques & Wuensche 2007): an object severed by a plane becomes two objects that keep
 * simulating and fall apart; skinned surfaces are clipped and sealed closed; every other object
 * is untouched; the CPU reference and the OpenCL pipeline agree after a cut. */
#include "math3.h"
#include "support.h"

#include <stdlib.h>
#include <string.h>

static const sm_backend backends[2] = {SM_BACKEND_CPU, SM_BACKEND_OPENCL};

static sm_world *new_world(sm_backend backend, bool ground)
{
    sm_world_def wd = sm_world_def_default();
    wd.backend = backend;
    wd.ground.enabled = ground;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    return world;
}

/// A 0.8 m cube's corners and triangles (outward), for a skinned surface.
static const sm_vec3 cube_corners[8] = {{-0.4, -0.4, -0.4}, {0.4, -0.4, -0.4}, {0.4, 0.4, -0.4}, {-0.4, 0.4, -0.4},
                                        {-0.4, -0.4, 0.4},  {0.4, -0.4, 0.4},  {0.4, 0.4, 0.4},  {-0.4, 0.4, 0.4}};
static const int32_t cube_triangles[36] = {0, 3, 2, 0, 2, 1, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                           3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};

/// A 1 m box of 8 x 8 x 8 particles at `position`, 2 x 2 x 2 clusters.
static sm_object_def box_def(sm_vec3 position)
{
    sm_object_def od = sm_object_def_default();
    od.shape.resolution[0] = od.shape.resolution[1] = od.shape.resolution[2] = 8;
    od.clusters.grid[0] = od.clusters.grid[1] = od.clusters.grid[2] = 2;
    od.position = position;
    return od;
}

/// Centre of mass of an object.
static sm_vec3 center_of(const sm_world *world, int32_t object)
{
    sm_object_info info;
    ENSURE_OK(sm_world_get_object(world, object, &info));
    double *x = get_positions(world), *m = get_masses(world);
    sm_vec3 c = {0, 0, 0};
    double mass = 0.0;
    const int32_t *list = NULL;
    int32_t count = 0;
    ENSURE_OK(sm_world_get_object_particles(world, object, &list, &count));
    for (int32_t k = 0; k < count; k++) {
        const int32_t i = list[k];
        c.x += m[i] * x[3 * i], c.y += m[i] * x[3 * i + 1], c.z += m[i] * x[3 * i + 2];
        mass += m[i];
    }
    free(x), free(m);
    return (sm_vec3){c.x / mass, c.y / mass, c.z / mass};
}

static bool all_finite(const sm_world *world)
{
    double *x = get_positions(world);
    const int32_t n = sm_world_get_counts(world).particles;
    bool finite = true;
    for (int32_t i = 0; i < 3 * n; i++) finite = finite && isfinite(x[i]);
    free(x);
    return finite;
}

/// "A box cut in half becomes two objects whose particle counts add up, that keep simulating and
/// separate under gravity": the box hangs by its left top edge; after the cut the right half falls.
static void a_box_cut_in_half_falls_apart(void)
{
    for (int b = 0; b < 2; b++) {
        sm_world *world = new_world(backends[b], false);
        if (!world) return;
        sm_object_def od = box_def((sm_vec3){0, 2, 0});
        int32_t fixed[8];
        for (int z = 0; z < 8; z++) fixed[z] = 0 + 7 * 8 + z * 64; // x = 0, y = 7 (top), every z: the box's order is x fastest
        od.fixed = fixed, od.fixed_count = 8;
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
        sm_cut_info info;
        ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.0, 2.0, 0.0}, {1.0, 0.0, 0.0}}, &info));
        const sm_counts counts = sm_world_get_counts(world);
        printf("  %s: cut into %d + %d particles, %d clusters in all (%d kept whole, %d degraded)\n",
               sm_world_backend_name(world), info.back_particles, info.front_particles, counts.clusters, info.kept_clusters,
               info.degraded_clusters);
        ENSURE(info.cut && info.back_object == 0 && info.front_object == 1 && counts.objects == 2);
        ENSURE(info.back_particles + info.front_particles == 512 && counts.particles == 512);
        ENSURE(info.back_particles == 256); // the plane x = 0 halves an 8-wide lattice
        sm_object_info pieces[2];
        ENSURE_OK(sm_world_get_object(world, 0, &pieces[0]));
        ENSURE_OK(sm_world_get_object(world, 1, &pieces[1]));
        ENSURE(pieces[0].cluster_count == 8 && pieces[1].cluster_count == 8); // the 2x2x2 grid over each half
        ENSURE_SMALL(pieces[0].mass + pieces[1].mass - 1.0, 1e-12);
        const sm_vec3 before[2] = {center_of(world, 0), center_of(world, 1)};
        for (int s = 0; s < 60; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        const sm_vec3 after[2] = {center_of(world, 0), center_of(world, 1)};
        const double drop[2] = {before[0].y - after[0].y, before[1].y - after[1].y};
        const double apart[2] = {sqrt(pow(before[0].x - before[1].x, 2) + pow(before[0].y - before[1].y, 2)),
                                 sqrt(pow(after[0].x - after[1].x, 2) + pow(after[0].y - after[1].y, 2))};
        printf("  %s: one second later the hanging half dropped %.3f m (stretching as a half box made alone does), the "
               "free half %.3f m; their centres %.3f m apart, %.3f m at the cut\n",
               sm_world_backend_name(world), drop[0], drop[1], apart[1], apart[0]);
        ENSURE(all_finite(world));
        ENSURE_RANGE(drop[1], 4.0, 5.5); // in free fall: 4.9 m
        ENSURE(apart[1] > apart[0] + 1.0); // they came apart
        // a plane that misses the object changes nothing
        ENSURE_OK(sm_world_cut(world, 1, (sm_plane){{0.0, 100.0, 0.0}, {0.0, 1.0, 0.0}}, &info));
        ENSURE(!info.cut && sm_world_get_counts(world).objects == 2);
        ENSURE(sm_world_cut(world, 2, (sm_plane){{0, 0, 0}, {1, 0, 0}}, &info) == SM_ERROR_INVALID_ARGUMENT);
        // the same counts, other particles: a twin cut with the plane turned round is not its copy
        sm_world *twin = new_world(backends[b], false);
        ENSURE_OK(sm_world_add_object(twin, &od, NULL));
        ENSURE_OK(sm_world_cut(twin, 0, (sm_plane){{0.0, 2.0, 0.0}, {-1.0, 0.0, 0.0}}, &info));
        ENSURE(sm_world_get_counts(twin).clusters == sm_world_get_counts(world).clusters);
        ENSURE(sm_world_copy_state(twin, world) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "cut differently"));
        sm_world_destroy(twin);
        ENSURE(sm_world_cut(world, 0, (sm_plane){{0, 0, 0}, {0, 0, 0}}, &info) == SM_ERROR_INVALID_ARGUMENT);
        sm_world_destroy(world);
    }
}

/// "A cut leaves every other object's trajectory bit-identical", on both backends.
static void other_objects_are_untouched_bit_for_bit(void)
{
    for (int b = 0; b < 2; b++) {
        sm_world *worlds[2];
        for (int w = 0; w < 2; w++) {
            worlds[w] = new_world(backends[b], true);
            if (!worlds[w]) return;
            for (int o = 0; o < 3; o++) {
                sm_object_def od = box_def((sm_vec3){2.0 * o, 1.0 + 0.5 * o, 0.0});
                od.mode = o == 2 ? SM_MODE_QUADRATIC : SM_MODE_LINEAR;
                od.angular_velocity = (sm_vec3){0.0, 1.0, 2.0};
                if (o == 2) { // a skinned surface, whose positions and normals are kept too
                    od.surface.vertices = cube_corners, od.surface.vertex_count = 8;
                    od.surface.triangles = cube_triangles, od.surface.triangle_count = 12;
                }
                ENSURE_OK(sm_world_add_object(worlds[w], &od, NULL));
            }
        }
        for (int s = 0; s < 90; s++) {
            if (s == 30) ENSURE_OK(sm_world_cut(worlds[1], 1, (sm_plane){{2.0, 0.0, 0.0}, {1.0, 0.3, 0.0}}, NULL));
            for (int w = 0; w < 2; w++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
        }
        ENSURE(sm_world_get_counts(worlds[1]).objects == 4);
        double *x[2] = {get_positions(worlds[0]), get_positions(worlds[1])};
        // objects 0 and 2 keep their ids and their particles their indices (the front piece is object 3)
        int differ = 0;
        for (int32_t i = 0; i < 512; i++)
            for (int k = 0; k < 3; k++) differ += x[0][3 * i + k] != x[1][3 * i + k] || x[0][3 * (1024 + i) + k] != x[1][3 * (1024 + i) + k];
        // and the surface of object 2, right after a cut and 60 steps later
        for (int when = 0; when < 2; when++) {
            if (when == 0) ENSURE_OK(sm_world_cut(worlds[1], 0, (sm_plane){{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}, NULL));
            else {
                ENSURE_OK(sm_world_cut(worlds[0], 0, (sm_plane){{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}, NULL));
                for (int w = 0; w < 2; w++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
            }
            for (int field = 0; field < 2; field++) {
                float surface[2][8 * 4];
                for (int w = 0; w < 2; w++) {
                    sm_object_info info;
                    ENSURE_OK(sm_world_get_object(worlds[w], 2, &info));
                    ENSURE_OK(sm_world_get_float4(worlds[w], field == 0 ? SM_FIELD_SURFACE_POSITION : SM_FIELD_SURFACE_NORMAL,
                                                  info.first_surface_vertex, 8, surface[w]));
                }
                differ += memcmp(surface[0], surface[1], sizeof surface[0]) != 0;
            }
        }
        printf("  %s: 60 steps after the cut, %d coordinates of the other two objects (and their surface) differ from "
               "the uncut run\n", backends[b] == SM_BACKEND_CPU ? "cpu" : "opencl", differ);
        ENSURE(differ == 0);
        free(x[0]), free(x[1]);
        sm_world_destroy(worlds[0]), sm_world_destroy(worlds[1]);
    }
}

/// "The CPU reference and the OpenCL pipeline agree after a cut": one device step from the
/// reference's state lands within 1e-5 of it, and the pieces' trajectories stay close.
static void cpu_and_opencl_agree_after_a_cut(void)
{
    // the reference, the device's own run, and the device restarted from the reference each step
    sm_world *worlds[2], *single = new_world(SM_BACKEND_OPENCL, true);
    const sm_plane plane = {{0.03, 0.0, 0.0}, {1.0, 0.2, 0.1}};
    for (int b = 0; b < 3; b++) {
        sm_world *world = b < 2 ? (worlds[b] = new_world(backends[b], true)) : single;
        if (!world) return;
        sm_object_def od = box_def((sm_vec3){0.0, 1.0, 0.0});
        od.mode = SM_MODE_QUADRATIC;
        od.plasticity.enabled = true;
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
        if (b < 2)
            for (int s = 0; s < 40; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    }
    ENSURE_OK(sm_world_copy_state(single, worlds[0])); // so that its particles divide as the reference's
    for (int b = 0; b < 3; b++) ENSURE_OK(sm_world_cut(b < 2 ? worlds[b] : single, 0, plane, NULL));
    const sm_counts counts[2] = {sm_world_get_counts(worlds[0]), sm_world_get_counts(worlds[1])};
    ENSURE(counts[0].objects == 2 && counts[0].clusters == counts[1].clusters && counts[0].memberships == counts[1].memberships);
    double worst_single = 0.0;
    for (int s = 0; s < 60; s++) {
        ENSURE_OK(sm_world_copy_state(single, worlds[0]));
        ENSURE_OK(sm_world_step(single, 1.0 / 60.0, 1));
        for (int b = 0; b < 2; b++) ENSURE_OK(sm_world_step(worlds[b], 1.0 / 60.0, 1));
        double *a = get_positions(worlds[0]), *c = get_positions(single);
        for (int32_t i = 0; i < 3 * counts[0].particles; i++) worst_single = fmax(worst_single, fabs(a[i] - c[i]));
        free(a), free(c);
    }
    // the trajectories by their pieces' centres: the pieces rest on the ground, whose friction
    // acts on a particle once it is below the ground, so a rounding can move one particle by
    // millimetres in a step on one backend and not on the other
    double *a = get_positions(worlds[0]), *c = get_positions(worlds[1]), worst_trajectory = 0.0, worst_center = 0.0;
    for (int32_t i = 0; i < 3 * counts[0].particles; i++) worst_trajectory = fmax(worst_trajectory, fabs(a[i] - c[i]));
    for (int32_t o = 0; o < counts[0].objects; o++) {
        const int32_t *list = NULL;
        int32_t count = 0;
        ENSURE_OK(sm_world_get_object_particles(worlds[0], o, &list, &count));
        for (int axis = 0; axis < 3; axis++) {
            double sum = 0.0;
            for (int32_t k = 0; k < count; k++) sum += a[3 * list[k] + axis] - c[3 * list[k] + axis];
            worst_center = fmax(worst_center, fabs(sum / count));
        }
    }
    free(a), free(c);
    printf("  after the cut: worst single device step %.3g m from the reference; after 60 steps the pieces' centres "
           "%.3g m apart (particles up to %.3g m)\n",
           worst_single, worst_center, worst_trajectory);
    ENSURE_SMALL(worst_single, 1e-5);
    ENSURE_SMALL(worst_center, 5e-4); // 0.05% of the box
    sm_world_destroy(worlds[0]), sm_world_destroy(worlds[1]), sm_world_destroy(single);
}

/// "One device step after a cut lands within 1e-5 of the reference", drawn (seeded): 1 or 2
/// objects (boxes of 3 to 8 particles a side, spheres, capsules and tori, 0.4 to 1.5 m across),
/// every mode, every volume treatment, the cap or not, plasticity (linear and quadratic) or not,
/// 1 to 3 clusters a side with overlaps up to 0.5, beta from 0 to 1, turned and spinning, falling
/// freely; cut 1 to 3 times at random steps by planes of any normal through a random particle of
/// a random object or piece. After each cut, for 10 steps of 1/60 s in 1 to 4 substeps, the
/// device steps from the reference's state: every particle lands within 1e-5 of the largest
/// object's size of where the reference's step puts it. (Not on the ground: a particle that
/// float rounding puts just below the ground on one backend only takes friction there alone,
/// and with a ground 1 of 60 seeds of this draw had a step 1.7e-2 of the size apart.)
static void single_device_steps_agree_after_random_cuts(void)
{
    static const char *const shapes[4] = {
        "\"shape\": \"box\", \"size\": [%.6g, %.6g, %.6g], \"resolution\": [%d, %d, %d]",
        "\"shape\": \"sphere\", \"radius\": %.6g, \"spacing\": %.6g",
        "\"shape\": \"capsule\", \"radius\": %.6g, \"length\": %.6g, \"spacing\": %.6g",
        "\"shape\": \"torus\", \"major_radius\": %.6g, \"minor_radius\": %.6g, \"spacing\": %.6g"};
    static const char *const modes[3] = {"rigid", "linear", "quadratic"};
    static const char *const volumes[4] = {"true", "\"projection\"", "\"scale\"", "false"};
    rng r = {1717};
    double worst_all = 0.0;
    int cuts_made = 0;
    const int draws = 12;
    for (int draw = 0; draw < draws; draw++) {
        char json[4096];
        const int substeps = 1 + (int)rng_uniform(&r, 0, 4), objects = 1 + (int)rng_uniform(&r, 0, 2);
        int length = snprintf(json, sizeof json, "{\"substeps\": %d, \"objects\": [", substeps);
        double largest = 0.0;
        for (int o = 0; o < objects; o++) {
            const double extent = rng_uniform(&r, 0.4, 1.5);
            const int mode = (draw + o) % 3;
            char shape[256], extra[256] = "";
            switch ((draw / 3 + o) % 4) {
            case 0:
                snprintf(shape, sizeof shape, shapes[0], extent, extent * rng_uniform(&r, 0.5, 1), extent * rng_uniform(&r, 0.5, 1),
                         3 + (int)rng_uniform(&r, 0, 6), 3 + (int)rng_uniform(&r, 0, 6), 3 + (int)rng_uniform(&r, 0, 6));
                break;
            case 1: snprintf(shape, sizeof shape, shapes[1], 0.5 * extent, extent * rng_uniform(&r, 0.12, 0.25)); break;
            case 2: snprintf(shape, sizeof shape, shapes[2], 0.2 * extent, 0.6 * extent, extent * rng_uniform(&r, 0.08, 0.15)); break;
            default: snprintf(shape, sizeof shape, shapes[3], 0.35 * extent, 0.15 * extent, extent * rng_uniform(&r, 0.07, 0.12)); break;
            }
            int e = 0;
            if (rng_uniform(&r, 0, 1) < 0.5) {
                const double soft = rng_uniform(&r, 3, 10);
                e += snprintf(extra + e, sizeof extra - (size_t)e, ", \"cap\": {\"soft\": %.6g, \"hard\": %.6g}", soft,
                              soft + rng_uniform(&r, 0.1, 5));
            }
            if (mode != 0 && rng_uniform(&r, 0, 1) < 0.6)
                snprintf(extra + e, sizeof extra - (size_t)e,
                         ", \"plasticity\": {\"yield\": %.6g, \"creep\": %.6g, \"max\": %.6g}", rng_uniform(&r, 0, 0.1),
                         pow(10.0, rng_uniform(&r, 0, 3)), rng_uniform(&r, 0.05, 0.5));
            const int grid = 1 + (int)rng_uniform(&r, 0, 3);
            largest = fmax(largest, extent);
            length += snprintf(json + length, sizeof json - (size_t)length,
                               "%s{%s, \"position\": [%.6g, %.6g, %.6g], \"rotation\": [%.6g, %.6g, %.6g],"
                               " \"angular_velocity\": [%.6g, %.6g, %.6g], \"mode\": \"%s\", \"volume_preservation\": %s,"
                               " \"beta\": %.6g, \"clusters\": {\"grid\": [%d, %d, %d], \"overlap\": %.6g}%s}",
                               o ? ", " : "", shape, 2.0 * o, 0.8 + rng_uniform(&r, 0, 0.5), 0.0, rng_uniform(&r, 0, 360),
                               rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360), rng_uniform(&r, -2, 2), rng_uniform(&r, -2, 2),
                               rng_uniform(&r, -2, 2), modes[mode], volumes[(int)rng_uniform(&r, 0, 4)], rng_uniform(&r, 0, 1),
                               grid, grid, grid, rng_uniform(&r, 0, 0.5), extra);
        }
        snprintf(json + length, sizeof json - (size_t)length, "]}");
        sm_world *reference = world_from_json_on(json, SM_BACKEND_CPU), *device = world_from_json_on(json, SM_BACKEND_OPENCL);
        if (!reference || !device) {
            fprintf(stderr, "  draw %d: %s\n", draw, json);
            sm_world_destroy(reference), sm_world_destroy(device);
            continue;
        }
        const int cuts = 1 + (int)rng_uniform(&r, 0, 3);
        double worst = 0.0;
        for (int c = 0; c < cuts; c++) {
            const int before = 5 + (int)rng_uniform(&r, 0, 25);
            for (int s = 0; s < before; s++) ENSURE_OK(sm_world_step(reference, 1.0 / 60.0, substeps));
            ENSURE_OK(sm_world_copy_state(device, reference)); // so that its particles divide as the reference's
            const int32_t object = (int32_t)rng_uniform(&r, 0, sm_world_get_counts(reference).objects);
            const int32_t *list = NULL;
            int32_t count = 0;
            ENSURE_OK(sm_world_get_object_particles(reference, object, &list, &count));
            if (count == 0) continue;
            const int32_t through = list[(int32_t)rng_uniform(&r, 0, count)];
            double at[3];
            ENSURE_OK(sm_world_get_positions(reference, through, 1, at));
            const sm_plane plane = {{at[0], at[1], at[2]}, rng_in_ball(&r, 1.0)};
            sm_cut_info info[2];
            ENSURE_OK(sm_world_cut(reference, object, plane, &info[0]));
            ENSURE_OK(sm_world_cut(device, object, plane, &info[1]));
            ENSURE(info[0].cut == info[1].cut);
            const sm_counts counts[2] = {sm_world_get_counts(reference), sm_world_get_counts(device)};
            ENSURE(counts[0].objects == counts[1].objects && counts[0].clusters == counts[1].clusters &&
                   counts[0].memberships == counts[1].memberships);
            cuts_made += info[0].cut;
            const int32_t n = counts[0].particles;
            for (int s = 0; s < 10; s++) {
                ENSURE_OK(sm_world_copy_state(device, reference));
                ENSURE_OK(sm_world_step(device, 1.0 / 60.0, substeps));
                ENSURE_OK(sm_world_step(reference, 1.0 / 60.0, substeps));
                double *a = get_positions(reference), *b = get_positions(device);
                for (int32_t i = 0; i < n; i++) {
                    const double d = sqrt(pow(a[3 * i] - b[3 * i], 2) + pow(a[3 * i + 1] - b[3 * i + 1], 2) +
                                          pow(a[3 * i + 2] - b[3 * i + 2], 2)) / largest;
                    worst = d <= worst ? worst : (d <= INFINITY ? d : INFINITY);
                }
                free(a), free(b);
            }
        }
        if (!(worst <= 1e-5) || getenv("SM_TEST_VERBOSE"))
            fprintf(stderr, "  draw %d: %d cuts, single device step %.3e of the size from the reference\n  scene: %s\n", draw,
                    cuts, worst, json);
        ENSURE_SMALL(worst, 1e-5);
        worst_all = fmax(worst_all, worst);
        sm_world_destroy(reference), sm_world_destroy(device);
    }
    printf("  %d draws, %d cuts: the largest single device step after a cut %.3e of the object's size from the reference\n",
           draws, cuts_made, worst_all);
    ENSURE(cuts_made >= draws);
}

/// Every undirected edge of a triangle list shared by exactly two triangles, every directed edge
/// used once (closed and consistently oriented); returns the number of edges that are not.
static int32_t bad_edges(const int32_t *t, int32_t count)
{
    int32_t bad = 0;
    for (int32_t a = 0; a < count; a++)
        for (int e = 0; e < 3; e++) {
            const int32_t u = t[3 * a + e], v = t[3 * a + (e + 1) % 3];
            int32_t same = 0, opposite = 0;
            for (int32_t b = 0; b < count; b++)
                for (int f = 0; f < 3; f++) {
                    const int32_t p = t[3 * b + f], q = t[3 * b + (f + 1) % 3];
                    same += p == u && q == v;
                    opposite += p == v && q == u;
                }
            bad += !(same == 1 && opposite == 1);
        }
    return bad;
}

/// "A cut of a closed mesh (the duck) gives two closed, consistently oriented meshes", whose
/// vertices then move with their pieces. The duck is assimp's test model: from the folder
/// $SM_ASSIMP_MODELS where that is set (bench/gpu_device.sh points it at the GPU bundle's copy),
/// else from the system's.
static void the_duck_cut_gives_two_closed_meshes(void)
{
    const char *models = getenv("SM_ASSIMP_MODELS");
    char path[4096];
    snprintf(path, sizeof path, "%s/Collada/duck.dae", models && models[0] ? models : SM_ASSIMP_MODELS);
    sm_mesh mesh;
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    if (!mesh.vertices) return;
    ENSURE(sm_mesh_open_edges(&mesh) == 0);
    // centred and scaled to about 1 m
    sm_vec3 lo = mesh.vertices[0], hi = mesh.vertices[0];
    for (int32_t v = 0; v < mesh.vertex_count; v++) {
        lo = (sm_vec3){fmin(lo.x, mesh.vertices[v].x), fmin(lo.y, mesh.vertices[v].y), fmin(lo.z, mesh.vertices[v].z)};
        hi = (sm_vec3){fmax(hi.x, mesh.vertices[v].x), fmax(hi.y, mesh.vertices[v].y), fmax(hi.z, mesh.vertices[v].z)};
    }
    const double scale = 1.0 / fmax(hi.x - lo.x, fmax(hi.y - lo.y, hi.z - lo.z));
    for (int32_t v = 0; v < mesh.vertex_count; v++)
        mesh.vertices[v] = (sm_vec3){(mesh.vertices[v].x - 0.5 * (lo.x + hi.x)) * scale, (mesh.vertices[v].y - 0.5 * (lo.y + hi.y)) * scale,
                                     (mesh.vertices[v].z - 0.5 * (lo.z + hi.z)) * scale};
    for (int b = 0; b < 2; b++) {
        // the duck cut, and the same duck whole (how closely its skin follows its particles anyway)
        sm_world *world = new_world(backends[b], true), *whole = new_world(backends[b], true);
        if (!world || !whole) break;
        sm_object_def od = sm_object_def_default();
        od.shape.type = SM_SHAPE_MESH;
        od.shape.mesh_vertices = mesh.vertices, od.shape.mesh_vertex_count = mesh.vertex_count;
        od.shape.mesh_triangles = mesh.triangles, od.shape.mesh_triangle_count = mesh.triangle_count;
        od.shape.mesh_particles = SM_MESH_PARTICLES_LATTICE;
        od.shape.spacing = 0.1;
        od.clusters.grid[0] = od.clusters.grid[1] = od.clusters.grid[2] = 2;
        od.position = (sm_vec3){0.0, 0.8, 0.0};
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
        ENSURE_OK(sm_world_add_object(whole, &od, NULL));
        for (int s = 0; s < 10; s++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE_OK(sm_world_step(whole, 1.0 / 60.0, 1));
        }
        sm_cut_info info;
        ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.013, 0.0, 0.007}, {1.0, 0.1, 0.2}}, &info));
        ENSURE(info.cut && info.open_loops == 0 && info.cap_triangles > 0);
        int32_t triangles[2] = {0, 0}, bad[2] = {0, 0};
        for (int o = 0; o < 2; o++) {
            const int32_t *t = NULL;
            ENSURE_OK(sm_world_get_surface_triangles(world, o, &t, &triangles[o]));
            bad[o] = t ? bad_edges(t, triangles[o]) : -1;
        }
        printf("  %s: duck (%d triangles) cut into surfaces of %d and %d triangles (%d sealing the section); edges not "
               "shared by exactly two oppositely oriented triangles: %d and %d\n",
               sm_world_backend_name(world), mesh.triangle_count, triangles[0], triangles[1], info.cap_triangles, bad[0], bad[1]);
        ENSURE(triangles[0] > 0 && triangles[1] > 0 && bad[0] == 0 && bad[1] == 0);
        ENSURE(triangles[0] + triangles[1] > mesh.triangle_count);
        // the skin follows the pieces: 30 steps later (the pieces on the ground, apart) every vertex
        // is as near its own piece's particles as the whole duck's vertices are to the duck's
        for (int s = 0; s < 30; s++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE_OK(sm_world_step(whole, 1.0 / 60.0, 1));
        }
        double farthest[2] = {0.0, 0.0};
        sm_world *measured[2] = {world, whole};
        for (int w = 0; w < 2; w++) {
            const int32_t nv = sm_world_get_surface_vertex_count(measured[w]);
            float *v = malloc(sizeof(float) * 4 * (size_t)nv);
            double *x = get_positions(measured[w]);
            ENSURE_OK(sm_world_get_float4(measured[w], SM_FIELD_SURFACE_POSITION, 0, nv, v));
            for (int o = 0; o < sm_world_get_counts(measured[w]).objects; o++) {
                sm_object_info piece;
                ENSURE_OK(sm_world_get_object(measured[w], o, &piece));
                for (int32_t k = piece.first_surface_vertex; k < piece.first_surface_vertex + piece.surface_vertex_count; k++) {
                    double nearest = INFINITY;
                    const int32_t *list = NULL;
                    int32_t count = 0;
                    ENSURE_OK(sm_world_get_object_particles(measured[w], o, &list, &count));
                    for (const int32_t *i = list; i < list + count; i++)
                        nearest = fmin(nearest, pow(v[4 * k] - x[3 * *i], 2) + pow(v[4 * k + 1] - x[3 * *i + 1], 2) +
                                                    pow(v[4 * k + 2] - x[3 * *i + 2], 2));
                    farthest[w] = fmax(farthest[w], sqrt(nearest));
                }
            }
            free(v), free(x);
        }
        printf("  %s: farthest surface vertex from its own object's particles 30 steps after the cut: %.3f m (the whole "
               "duck: %.3f m; lattice spacing 0.1 m)\n",
               sm_world_backend_name(world), farthest[0], farthest[1]);
        // (the pieces' grids make some small clusters, whose linear fits carry a vertex bound to them
        // farther off than the whole duck's large ones do: docs/cutting.md)
        ENSURE(farthest[1] < 0.25 && farthest[0] < 0.5);
        sm_world_destroy(world), sm_world_destroy(whole);
    }
    sm_mesh_free(&mesh);
}

/// A triangulated torus in the xz plane (major radius R, minor r), outward-oriented.
static void torus_mesh(double R, double r, int major, int minor, sm_vec3 **vertices, int32_t **triangles)
{
    *vertices = malloc(sizeof(sm_vec3) * (size_t)(major * minor));
    *triangles = malloc(sizeof(int32_t) * 6 * (size_t)(major * minor));
    for (int i = 0; i < major; i++)
        for (int j = 0; j < minor; j++) {
            const double u = 2.0 * 3.14159265358979 * i / major, w = 2.0 * 3.14159265358979 * j / minor;
            (*vertices)[i * minor + j] = (sm_vec3){(R + r * cos(w)) * cos(u), r * sin(w), (R + r * cos(w)) * sin(u)};
        }
    int32_t t = 0;
    for (int i = 0; i < major; i++)
        for (int j = 0; j < minor; j++) {
            const int32_t a = i * minor + j, b = ((i + 1) % major) * minor + j, c = ((i + 1) % major) * minor + (j + 1) % minor,
                          d = i * minor + (j + 1) % minor;
            int32_t *q = &(*triangles)[3 * t];
            q[0] = a, q[1] = d, q[2] = c, q[3] = a, q[4] = c, q[5] = b;
            t += 2;
        }
}

/// "A concave cross-section (a torus cut through its hole) is sealed without triangles outside
/// the section": the cut y = 0.01 of a torus leaves an annulus on each piece, and no cap triangle
/// lies in the hole or outside the tube.
static void a_torus_cut_through_its_hole_is_sealed(void)
{
    const double R = 0.6, r = 0.25;
    sm_vec3 *vertices;
    int32_t *triangles;
    torus_mesh(R, r, 48, 24, &vertices, &triangles);
    sm_world *world = new_world(SM_BACKEND_CPU, false);
    if (!world) return;
    sm_object_def od = sm_object_def_default();
    od.shape.type = SM_SHAPE_TORUS;
    od.shape.major_radius = R, od.shape.minor_radius = r, od.shape.spacing = 0.08;
    od.clusters.grid[0] = od.clusters.grid[2] = 3;
    od.surface.vertices = vertices, od.surface.vertex_count = 48 * 24;
    od.surface.triangles = triangles, od.surface.triangle_count = 2 * 48 * 24;
    ENSURE_OK(sm_world_add_object(world, &od, NULL));
    // the caps lie where the cut moved the plane: 1e-4 of the particles' bounding box's diagonal
    // to its front (sm_world_cut)
    double *x = get_positions(world), lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < sm_world_get_counts(world).particles; i++)
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], x[3 * i + k]), hi[k] = fmax(hi[k], x[3 * i + k]);
    free(x);
    const double plane_y = 0.01 + 1e-4 * sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                              (hi[2] - lo[2]) * (hi[2] - lo[2]));
    sm_cut_info info;
    ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.0, 0.01, 0.0}, {0.0, 1.0, 0.0}}, &info));
    ENSURE(info.cut && info.cap_triangles > 0);
    const int32_t nv = sm_world_get_surface_vertex_count(world);
    float *v = malloc(sizeof(float) * 4 * (size_t)nv);
    ENSURE_OK(sm_world_get_float4(world, SM_FIELD_SURFACE_POSITION, 0, nv, v));
    int32_t outside = 0, caps = 0, bad[2] = {0, 0};
    double area = 0.0;
    for (int o = 0; o < 2; o++) {
        sm_object_info piece;
        const int32_t *t = NULL;
        int32_t count = 0;
        ENSURE_OK(sm_world_get_object(world, o, &piece));
        ENSURE_OK(sm_world_get_surface_triangles(world, o, &t, &count));
        bad[o] = bad_edges(t, count);
        for (int32_t k = 0; k < count; k++) {
            const float *p[3];
            for (int c = 0; c < 3; c++) p[c] = &v[4 * (piece.first_surface_vertex + t[3 * k + c])];
            if (!(fabs(p[0][1] - plane_y) < 1e-6 && fabs(p[1][1] - plane_y) < 1e-6 && fabs(p[2][1] - plane_y) < 1e-6))
                continue;
            caps++; // a triangle on the plane: a cap triangle
            const double cx = (p[0][0] + p[1][0] + p[2][0]) / 3.0, cz = (p[0][2] + p[1][2] + p[2][2]) / 3.0;
            const double d = sqrt(cx * cx + cz * cz);
            outside += !(d > R - r && d < R + r);
            area += 0.5 * fabs((p[1][0] - p[0][0]) * (p[2][2] - p[0][2]) - (p[2][0] - p[0][0]) * (p[1][2] - p[0][2]));
        }
    }
    free(v);
    // the section of the surface's polygonal tube: annulus between its outer and inner circles at y = 0.01
    const double half_chord = sqrt(r * r - 0.01 * 0.01);
    const double exact = 3.14159265358979 * (pow(R + half_chord, 2) - pow(R - half_chord, 2));
    printf("  torus cut through its hole: %d cap triangles (both pieces), %d with their centre outside the annulus; cap "
           "area %.4f m^2 over both pieces (2 x %.4f for the smooth annulus); bad edges %d and %d\n",
           caps, outside, area, exact, bad[0], bad[1]);
    ENSURE(caps == info.cap_triangles && outside == 0 && bad[0] == 0 && bad[1] == 0);
    ENSURE_RANGE(area / (2.0 * exact), 0.97, 1.0); // the polygon is inscribed: slightly smaller
    free(vertices), free(triangles);
    sm_world_destroy(world);
}

/// a S + b T scaled to determinant 1: the plastic state a new cluster inherits from particles
/// whose old clusters' mean states, weighted by their masses, add up to a S + b T.
static sm_mat3 unit_det_mix(double a, sm_mat3 s, double b, sm_mat3 t)
{
    const sm_mat3 m = m3_add(m3_scale(s, a), m3_scale(t, b));
    return m3_scale(m, 1.0 / cbrt(m3_det(m)));
}

/// The Frobenius norm of a - b.
static double m3_difference(sm_mat3 a, sm_mat3 b) { return sqrt(m3_norm2(m3_sub(a, b))); }

/// "Plastic state carries over where a cluster survives whole": explicit clusters wholly on one
/// side keep their S_p exactly; a new cluster inherits the mass-weighted mean, over its
/// particles, of the mean S_p of the old clusters holding each, scaled to determinant 1.
static void clusters_that_survive_keep_their_plastic_state(void)
{
    sm_world *world = new_world(SM_BACKEND_CPU, true);
    if (!world) return;
    sm_object_def od = box_def((sm_vec3){0.0, 0.6, 0.0});
    // three clusters: the left three x-layers, the right three, and the middle four
    int32_t offsets[4] = {0}, indices[3 * 512], n = 0, k = 0;
    for (int c = 0; c < 3; c++) {
        for (int32_t i = 0; i < 512; i++) {
            const int x = i % 8;
            if ((c == 0 && x < 3) || (c == 1 && x > 4) || (c == 2 && x >= 2 && x <= 5)) indices[n++] = i;
        }
        offsets[++k] = n;
    }
    od.clusters.list_offsets = offsets, od.clusters.list_indices = indices, od.clusters.list_count = 3;
    od.plasticity.enabled = true, od.plasticity.yield = 0.01;
    od.linear_velocity = (sm_vec3){0.0, -6.0, 0.0}; // a hard landing bends it
    ENSURE_OK(sm_world_add_object(world, &od, NULL));
    for (int s = 0; s < 40; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    sm_cluster_info before[3];
    for (int c = 0; c < 3; c++) ENSURE_OK(sm_world_get_cluster(world, c, &before[c]));
    const double bent = fabs(before[0].plastic.m[0][0] - 1.0) + fabs(before[0].plastic.m[1][1] - 1.0);
    double *x = get_positions(world);
    const double middle = 0.5 * (x[3 * 3] + x[3 * 4]); // between the 4th and 5th x-layers of row 0
    free(x);
    sm_cut_info info;
    ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{middle, 0.0, 0.0}, {1.0, 0.0, 0.0}}, &info));
    sm_cluster_info after[4];
    for (int c = 0; c < 4; c++) ENSURE_OK(sm_world_get_cluster(world, c, &after[c]));
    printf("  explicit clusters cut: %d kept whole (S_p of the left one was %.3g from I), %d + %d particles\n",
           info.kept_clusters, bent, info.back_particles, info.front_particles);
    ENSURE(info.kept_clusters == 2 && bent > 1e-3);
    // back piece: the left cluster and the middle's left half; front piece: the right cluster and the middle's right half
    ENSURE(memcmp(&after[0].plastic, &before[0].plastic, sizeof(sm_mat3)) == 0);
    ENSURE(memcmp(&after[2].plastic, &before[1].plastic, sizeof(sm_mat3)) == 0);
    // the middle's halves, particles of equal mass: on the left, x-layer 2 in the left and middle
    // clusters and layer 3 in the middle alone, (S_left + S_mid) / 2 + S_mid for each pair of
    // particles; on the right, layer 4 in the middle alone and layer 5 in the middle and right
    // ones, S_mid + (S_mid + S_right) / 2
    const double left = m3_difference(after[1].plastic, unit_det_mix(0.5, before[0].plastic, 1.5, before[2].plastic));
    const double right = m3_difference(after[3].plastic, unit_det_mix(1.5, before[2].plastic, 0.5, before[1].plastic));
    printf("  new clusters' S_p against the mean of their particles' old clusters: %.2g (left), %.2g (right)\n", left,
           right);
    ENSURE_RANGE(left, 0.0, 1e-12);
    ENSURE_RANGE(right, 0.0, 1e-12);
    sm_world_destroy(world);
}

/// "Timed cuts in the scene file reproduce a cutting sequence on both backends"; bad cuts are
/// reported with their field.
static void scenes_cut_on_time(void)
{
    static const char *json =
        "{\"dt\": 0.0166666666666667, \"ground\": {},"
        " \"objects\": [{\"shape\": \"box\", \"resolution\": [6, 6, 6], \"position\": [0, 1, 0], \"clusters\": {\"grid\": [2, 2, 2]}}],"
        " \"cuts\": [{\"time\": 0.25, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]},"
        "          {\"time\": 0.5, \"object\": 1, \"point\": [0, 0, 0.01], \"normal\": [0, 0, 1]}]}";
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "cuts", &scene));
    if (!scene) return;
    sm_world *worlds[2];
    for (int b = 0; b < 2; b++) {
        ENSURE_OK(create_world(scene, backends[b], &worlds[b]));
        if (!worlds[b]) return;
        int32_t objects_at[3] = {0, 0, 0};
        for (int s = 0; s < 60; s++) {
            ENSURE_OK(sm_scene_step(scene, worlds[b]));
            if (s == 13) objects_at[0] = sm_world_get_counts(worlds[b]).objects; // before 0.25 s
            if (s == 15) objects_at[1] = sm_world_get_counts(worlds[b]).objects;
            if (s == 31) objects_at[2] = sm_world_get_counts(worlds[b]).objects;
        }
        printf("  %s: objects after 14, 16 and 32 steps: %d, %d, %d\n", sm_world_backend_name(worlds[b]), objects_at[0],
               objects_at[1], objects_at[2]);
        ENSURE(objects_at[0] == 1 && objects_at[1] == 2 && objects_at[2] == 3 && all_finite(worlds[b]));
    }
    double *a = get_positions(worlds[0]), *c = get_positions(worlds[1]), worst = 0.0;
    for (int32_t i = 0; i < 3 * 216; i++) worst = fmax(worst, fabs(a[i] - c[i]));
    printf("  the scene's cuts on both backends: positions %.3g m apart after 1 s\n", worst);
    ENSURE_SMALL(worst, 1e-3);
    free(a), free(c);
    sm_world_destroy(worlds[0]), sm_world_destroy(worlds[1]);
    sm_scene_destroy(scene);

    static const char *bad[] = {
        "{\"objects\": [{\"shape\": \"box\"}], \"cuts\": [{\"time\": 0.1, \"object\": 1, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]}]}",
        "{\"objects\": [{\"shape\": \"box\"}], \"cuts\": [{\"time\": 0.1, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [0, 0, 0]}]}",
        "{\"objects\": [{\"shape\": \"box\"}], \"cuts\": [{\"time\": 0.5, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]},"
        " {\"time\": 0.1, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]}]}",
        "{\"objects\": [{\"shape\": \"box\"}], \"cuts\": [{\"time\": 0.1, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]},"
        " {\"time\": 0.2, \"object\": 2, \"point\": [0, 0, 0], \"normal\": [0, 1, 0]}]}",
    };
    static const char *expected[] = {"cut 0: field \"object\"", "cut 0: field \"normal\"", "cut 1: field \"time\"",
                                     "cut 1: field \"object\""};
    for (int i = 0; i < 4; i++) {
        sm_scene *s = NULL;
        const sm_result r = sm_scene_load_string(bad[i], "bad", &s);
        if (r != SM_ERROR_SCENE || !strstr(sm_last_error(), expected[i]))
            fprintf(stderr, "bad cut scene %d: %s: %s\n", i, sm_result_name(r), sm_last_error());
        ENSURE(r == SM_ERROR_SCENE && strstr(sm_last_error(), expected[i]));
        sm_scene_destroy(s);
    }
}

/// A piece that no explicit cluster covers still cuts cleanly: its surface is left unbound (a
/// warning), nothing is read out of range, and both pieces keep simulating.
static void a_piece_without_clusters(void)
{
    static const sm_vec3 corners[8] = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {0.5, 0.5, -0.5}, {-0.5, 0.5, -0.5},
                                       {-0.5, -0.5, 0.5},  {0.5, -0.5, 0.5},  {0.5, 0.5, 0.5},  {-0.5, 0.5, 0.5}};
    static const int32_t faces[36] = {0, 3, 2, 0, 2, 1, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                      3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};
    for (int b = 0; b < 2; b++) {
        sm_world *world = new_world(backends[b], true);
        if (!world) return;
        sm_object_def od = sm_object_def_default();
        od.position = (sm_vec3){0.0, 1.0, 0.0};
        int32_t offsets[2] = {0, 0}, indices[64];
        for (int32_t i = 0; i < 64; i++)
            if (i % 4 < 2) indices[offsets[1]++] = i; // one cluster: the left half only
        od.clusters.list_offsets = offsets, od.clusters.list_indices = indices, od.clusters.list_count = 1;
        od.surface.vertices = corners, od.surface.vertex_count = 8;
        od.surface.triangles = faces, od.surface.triangle_count = 12;
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
        sm_cut_info info;
        ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}}, &info));
        sm_object_info front;
        ENSURE_OK(sm_world_get_object(world, 1, &front));
        printf("  %s: the uncovered piece: %d particles, %d clusters, %d surface vertices\n", sm_world_backend_name(world),
               front.particle_count, front.cluster_count, front.surface_vertex_count);
        ENSURE(info.cut && front.cluster_count == 0 && front.particle_count == 32);
        for (int s = 0; s < 30; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        ENSURE(all_finite(world));
        sm_world_destroy(world);
    }
}

/// A world's state is copied only into a world whose surfaces were cut alike: two boxes with a
/// skinned cube, cut between the same particle layers (x = ±1/6) along planes at seeded random
/// offsets, hold the same particles and clusters but surfaces split in other places, and
/// sm_world_copy_state() refuses them naming the surfaces; a twin cut along the same plane takes
/// the copy of the source 5 steps on, and a step later its surface is the source's (a surface
/// cut from other positions, even by rounding, is another surface: compare restarts its device
/// world from the reference's state before each cut for this reason).
static void copies_need_surfaces_cut_alike(void)
{
    static const sm_vec3 corners[8] = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {0.5, 0.5, -0.5}, {-0.5, 0.5, -0.5},
                                       {-0.5, -0.5, 0.5},  {0.5, -0.5, 0.5},  {0.5, 0.5, 0.5},  {-0.5, 0.5, 0.5}};
    static const int32_t faces[36] = {0, 3, 2, 0, 2, 1, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                      3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};
    rng r = {57};
    for (int draw = 0; draw < 6; draw++) {
        const sm_backend backend = backends[draw % 2];
        const double offset = rng_uniform(&r, -0.15, 0.15), other = rng_uniform(&r, -0.15, 0.15);
        sm_object_def od = sm_object_def_default();
        od.position = (sm_vec3){0.0, 1.0, 0.0};
        od.clusters.grid[0] = 2;
        od.surface.vertices = corners, od.surface.vertex_count = 8;
        od.surface.triangles = faces, od.surface.triangle_count = 12;
        sm_world *worlds[3];
        const double planes[3] = {offset, offset, fabs(other - offset) > 1e-3 ? other : offset + 0.01};
        for (int w = 0; w < 3; w++) {
            worlds[w] = new_world(backend, true);
            if (!worlds[w]) return;
            ENSURE_OK(sm_world_add_object(worlds[w], &od, NULL));
            ENSURE_OK(sm_world_cut(worlds[w], 0, (sm_plane){{planes[w], 0.0, 0.0}, {1.0, 0.0, 0.0}}, NULL));
        }
        for (int s = 0; s < 5; s++) ENSURE_OK(sm_world_step(worlds[0], 1.0 / 60.0, 1)); // the source has moved on
        ENSURE(sm_world_get_counts(worlds[2]).particles == sm_world_get_counts(worlds[0]).particles &&
               sm_world_get_counts(worlds[2]).clusters == sm_world_get_counts(worlds[0]).clusters);
        const sm_result refused = sm_world_copy_state(worlds[2], worlds[0]);
        ENSURE(refused == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "surfaces differ"));
        ENSURE_OK(sm_world_copy_state(worlds[1], worlds[0]));
        for (int w = 0; w < 2; w++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
        const int32_t nv = sm_world_get_surface_vertex_count(worlds[0]);
        float *v[2] = {malloc(sizeof(float) * 4 * (size_t)nv), malloc(sizeof(float) * 4 * (size_t)nv)};
        double apart = 0.0;
        for (int w = 0; w < 2; w++) ENSURE_OK(sm_world_get_float4(worlds[w], SM_FIELD_SURFACE_POSITION, 0, nv, v[w]));
        for (int32_t i = 0; i < 4 * nv; i++) apart = fmax(apart, fabs((double)v[0][i] - v[1][i]));
        printf("  %s: cuts at x = %.3f and %.3f: copy %s; the copy's surface a step later %.3g m from the source's\n",
               sm_world_backend_name(worlds[0]), planes[0], planes[2], refused == SM_OK ? "taken" : "refused", apart);
        ENSURE(apart <= (backend == SM_BACKEND_CPU ? 0.0 : 1e-6));
        free(v[0]), free(v[1]);
        for (int w = 0; w < 3; w++) sm_world_destroy(worlds[w]);
    }
}

/// "A particle keeps its index across any number of cuts, and an object its id": worlds drawn
/// at random (seeded: 2 to 4 boxes and spheres, any mode, random cut planes through random
/// objects at random steps, 1 to 5 cuts), on both backends. At every cut every particle keeps
/// its rest position and mass (bit for bit) and its position (bit for bit on the CPU, to the
/// float on OpenCL); the front piece gets the next id and every other object keeps its id and
/// its particles; each object's particle list and the particles' objects agree; and no
/// particle's position jumps between steps (a renumbering would move a column by metres).
static void particles_keep_their_index_and_objects_their_id_through_cuts(void)
{
    rng r = {28};
    for (int draw = 0; draw < 6; draw++) {
        const sm_backend backend = backends[draw % 2];
        sm_world *world = new_world(backend, true);
        if (!world) return;
        const int objects = 2 + (int)rng_uniform(&r, 0, 3);
        for (int o = 0; o < objects; o++) {
            sm_object_def od = box_def((sm_vec3){1.5 * o, 1.0 + rng_uniform(&r, 0, 1), 0.0});
            if (rng_uniform(&r, 0, 1) < 0.4) {
                od.shape.type = SM_SHAPE_SPHERE;
                od.shape.radius = 0.4, od.shape.spacing = 0.12;
            }
            od.mode = (sm_mode)(int)rng_uniform(&r, 0, 3);
            od.angular_velocity = rng_in_ball(&r, 2.0);
            ENSURE_OK(sm_world_add_object(world, &od, NULL));
        }
        const int32_t n = sm_world_get_counts(world).particles;
        double *rest0 = get_rest_positions(world), *mass0 = get_masses(world);
        const int cuts = 1 + (int)rng_uniform(&r, 0, 5);
        int next_cut = 10, made = 0;
        double largest_jump = 0.0;
        for (int s = 0; s < 90; s++) {
            double *x = get_positions(world);
            if (s == next_cut && made < cuts) {
                const sm_counts before = sm_world_get_counts(world);
                const int32_t object = (int32_t)rng_uniform(&r, 0, before.objects);
                const int32_t *list = NULL;
                int32_t count = 0;
                ENSURE_OK(sm_world_get_object_particles(world, object, &list, &count));
                // keep the other objects' lists to compare
                int32_t *others = malloc(sizeof *others * (size_t)n), *owner = malloc(sizeof *owner * (size_t)n);
                ENSURE_OK(sm_world_get_particle_objects(world, 0, n, others));
                const int32_t through = list[(int32_t)rng_uniform(&r, 0, count)];
                const sm_plane plane = {{x[3 * through], x[3 * through + 1], x[3 * through + 2]}, rng_in_ball(&r, 1.0)};
                sm_cut_info info;
                ENSURE_OK(sm_world_cut(world, object, plane, &info));
                double *after = get_positions(world), *rest = get_rest_positions(world), *mass = get_masses(world);
                ENSURE(memcmp(rest, rest0, sizeof(double) * 3 * (size_t)n) == 0 &&
                       memcmp(mass, mass0, sizeof(double) * (size_t)n) == 0);
                double moved = 0.0;
                for (int32_t i = 0; i < 3 * n; i++) moved = fmax(moved, fabs(after[i] - x[i]) / fmax(1.0, fabs(x[i])));
                ENSURE(backend == SM_BACKEND_CPU ? moved == 0.0 : moved < 1e-7);
                ENSURE_OK(sm_world_get_particle_objects(world, 0, n, owner));
                const sm_counts now = sm_world_get_counts(world);
                ENSURE(now.objects == before.objects + (info.cut ? 1 : 0));
                ENSURE(!info.cut || (info.back_object == object && info.front_object == before.objects));
                int wrong = 0;
                for (int32_t i = 0; i < n; i++)
                    wrong += others[i] != object ? owner[i] != others[i]
                                                 : owner[i] != object && owner[i] != info.front_object;
                for (int32_t o = 0; o < now.objects; o++) {
                    ENSURE_OK(sm_world_get_object_particles(world, o, &list, &count));
                    for (int32_t k = 0; k < count; k++) wrong += owner[list[k]] != o || (k > 0 && list[k] <= list[k - 1]);
                }
                ENSURE(wrong == 0);
                free(after), free(rest), free(mass), free(others), free(owner);
                made += info.cut;
                next_cut = s + 1 + (int)rng_uniform(&r, 0, 15);
            }
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            double *y = get_positions(world), step = 0.0;
            for (int32_t i = 0; i < n; i++)
                step = fmax(step, sqrt(pow(y[3 * i] - x[3 * i], 2) + pow(y[3 * i + 1] - x[3 * i + 1], 2) +
                                       pow(y[3 * i + 2] - x[3 * i + 2], 2)));
            largest_jump = fmax(largest_jump, step);
            free(x), free(y);
        }
        printf("  draw %d (%s): %d objects, %d cuts; largest step of a particle %.3f m\n", draw,
               sm_world_backend_name(world), objects, made, largest_jump);
        ENSURE(made > 0 && all_finite(world));
        ENSURE(largest_jump < 0.5); // (a renumbered column would jump by about the object's size, 1 m)
        free(rest0), free(mass0);
        sm_world_destroy(world);
    }
}

/// "A scene can have springs and cuts": without gravity, a spring on a particle of a box pulls
/// it toward a target 3 m off; a cut at 0.2 s puts that particle in the front piece, and the
/// spring keeps pulling the same particle: 4 s on it is near the target, with its piece, and the
/// back piece has stayed behind, on both backends.
static void scene_springs_follow_their_particles_through_cuts(void)
{
    static const char json[] =
        "{\"dt\": 0.0166666666666667, \"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [3, 3, 3],"
        " \"damping\": 1}],"
        " \"springs\": [{\"object\": 0, \"particle\": 26, \"target\": [3, 0, 0], \"stiffness\": 1, \"damping\": 0.5}],"
        " \"cuts\": [{\"time\": 0.2, \"object\": 0, \"point\": [0.1, 0, 0], \"normal\": [1, 0, 0]}]}";
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "springs_and_cuts", &scene));
    if (!scene) return;
    for (int b = 0; b < 2; b++) {
        sm_world *world = NULL;
        ENSURE_OK(create_world(scene, backends[b], &world));
        if (!world) continue;
        for (int s = 0; s < 240; s++) ENSURE_OK(sm_scene_step(scene, world));
        int32_t object = -1;
        double x[3];
        ENSURE_OK(sm_world_get_particle_objects(world, 26, 1, &object));
        ENSURE_OK(sm_world_get_positions(world, 26, 1, x));
        const double off = sqrt(pow(x[0] - 3.0, 2) + pow(x[1], 2) + pow(x[2], 2));
        const sm_vec3 back = center_of(world, 0), front = center_of(world, 1);
        printf("  %s: 4 s on, the pulled particle (object %d) is %.3f m from its target; the pieces' centres at x = "
               "%.3f (back) and %.3f m (front)\n", sm_world_backend_name(world), object, off, back.x, front.x);
        ENSURE(sm_world_get_counts(world).objects == 2 && object == 1);
        ENSURE(off < 0.5);
        ENSURE(front.x > 2.0 && back.x < 1.0);
        sm_world_destroy(world);
    }
    sm_scene_destroy(scene);
}

/// "A particle on the plane goes behind it, on both backends": boxes of random lattices, sizes,
/// turns and places, left at rest for up to 30 steps, cut through a random particle's layer with
/// a normal along one of the lattice's axes, of either sign and any length from 1e-300 to 1e300:
/// the pieces are the layers on either side, the cut one behind, on the CPU reference and OpenCL
/// alike (whose positions differ from the reference's by rounding).
static void particles_on_the_plane_go_behind_it_on_both_backends(void)
{
    rng r = {20261126};
    int mismatched = 0, draws = 0;
    double wander = 0.0; // the largest distance from the plane of a cut layer's particle, in D
    for (int draw = 0; draw < 24; draw++) {
        int res[3];
        for (int k = 0; k < 3; k++) res[k] = 2 + (int)rng_uniform(&r, 0.0, 7.0);
        const double scale = pow(10.0, rng_uniform(&r, -2.0, 1.0));
        sm_object_def od = sm_object_def_default();
        for (int k = 0; k < 3; k++) od.shape.resolution[k] = res[k];
        od.shape.size = (sm_vec3){scale * rng_uniform(&r, 0.3, 1.0), scale * rng_uniform(&r, 0.3, 1.0),
                                  scale * rng_uniform(&r, 0.3, 1.0)};
        od.position = rng_in_ball(&r, 100.0);
        od.rotation = (sm_vec3){rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360)};
        const int steps = (int)rng_uniform(&r, 0.0, 31.0), axis = (int)rng_uniform(&r, 0.0, 3.0);
        const int32_t n = res[0] * res[1] * res[2], chosen = (int32_t)rng_uniform(&r, 0.0, n);
        const int32_t stride = axis == 0 ? 1 : axis == 1 ? res[0] : res[0] * res[1];
        const double sign = rng_uniform(&r, -1.0, 1.0) < 0.0 ? -1.0 : 1.0, length = pow(10.0, rng_uniform(&r, -300, 300));
        int32_t *objects[2] = {NULL, NULL};
        sm_plane plane = {{0, 0, 0}, {0, 0, 0}};
        sm_vec3 unit = {0, 0, 0};
        for (int b = 0; b < 2; b++) {
            sm_world_def wd = sm_world_def_default();
            wd.backend = backends[b];
            wd.gravity = (sm_vec3){0, 0, 0};
            wd.ground.enabled = false;
            sm_world *world = NULL;
            ENSURE_OK(sm_world_create(&wd, &world));
            if (!world) break;
            ENSURE_OK(sm_world_add_object(world, &od, NULL));
            if (b == 0) { // the plane: through the chosen particle, along the lattice's axis
                double *x = get_positions(world);
                const int32_t next = (chosen / stride) % res[axis] + 1 < res[axis] ? chosen + stride : chosen - stride;
                sm_vec3 d = v3_sub(v3(x[3 * next], x[3 * next + 1], x[3 * next + 2]),
                                   v3(x[3 * chosen], x[3 * chosen + 1], x[3 * chosen + 2]));
                if (next < chosen) d = v3_scale(d, -1.0);
                plane.point = v3(x[3 * chosen], x[3 * chosen + 1], x[3 * chosen + 2]);
                unit = v3_scale(d, sign / v3_length(d));
                plane.normal = v3_scale(unit, length);
                free(x);
            }
            for (int s = 0; s < steps; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            double *x = get_positions(world);
            const double diagonal = v3_length(od.shape.size);
            for (int32_t i = 0; i < n; i++)
                if ((i / stride) % res[axis] == (chosen / stride) % res[axis])
                    wander = fmax(wander, fabs(v3_dot(v3_sub(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), plane.point), unit)) /
                                              diagonal);
            free(x);
            sm_cut_info info;
            ENSURE_OK(sm_world_cut(world, 0, plane, &info));
            objects[b] = malloc(sizeof(int32_t) * (size_t)n);
            ENSURE_OK(sm_world_get_particle_objects(world, 0, n, objects[b]));
            sm_world_destroy(world);
        }
        if (!objects[0] || !objects[1]) {
            free(objects[0]), free(objects[1]);
            continue;
        }
        const int layer = (chosen / stride) % res[axis];
        int wrong = 0;
        for (int32_t i = 0; i < n; i++) {
            const int at = (i / stride) % res[axis];
            const int expected = sign > 0.0 ? (at <= layer ? 0 : 1) : (at >= layer ? 0 : 1);
            // (a plane behind every particle cuts nothing: all of them stay in object 0)
            wrong += objects[0][i] != expected || objects[1][i] != expected;
        }
        mismatched += wrong > 0;
        draws++;
        free(objects[0]), free(objects[1]);
    }
    printf("  %d boxes cut through a layer on both backends: %d split otherwise; the cut layers lay within %.2g of "
           "the box's diagonal of the plane\n",
           draws, mismatched, wander);
    ENSURE(draws == 24 && mismatched == 0);
}

/// "A scene's ids name what the file means": a cut that misses makes no piece, and the later
/// cuts still cut the pieces the file names, on both backends.
static void a_scene_cut_that_misses_shifts_no_later_cut(void)
{
    static const char *json =
        "{\"dt\": 0.01, \"gravity\": [0, 0, 0],"
        " \"objects\": [{\"shape\": \"box\", \"resolution\": [3, 3, 3]},"
        "               {\"shape\": \"box\", \"resolution\": [4, 4, 4], \"position\": [3, 0, 0]}],"
        " \"cuts\": [{\"time\": 0.02, \"object\": 0, \"point\": [5, 0, 0], \"normal\": [1, 0, 0]},"
        "          {\"time\": 0.03, \"object\": 1, \"point\": [3, 0, 0], \"normal\": [1, 0, 0]},"
        "          {\"time\": 0.04, \"object\": 3, \"point\": [0, 0.01, 0], \"normal\": [0, 1, 0]},"
        "          {\"time\": 0.05, \"object\": 2, \"point\": [0, 0.01, 0], \"normal\": [0, 1, 0]}]}";
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "missed cut", &scene));
    if (!scene) return;
    for (int b = 0; b < 2; b++) {
        sm_world *world = NULL;
        ENSURE_OK(create_world(scene, backends[b], &world));
        if (!world) continue;
        for (int s = 0; s < 10; s++) ENSURE_OK(sm_scene_step(scene, world));
        const sm_cut_info *cuts = NULL;
        int32_t count = 0;
        ENSURE_OK(sm_world_get_cuts(world, &cuts, &count));
        printf("  %s: %d cuts cut, %d objects; the second cut object %d\n", sm_world_backend_name(world), count,
               sm_world_get_counts(world).objects, count > 1 ? cuts[1].back_object : -1);
        // cut 1 makes world object 2 (the file's 3), cut 2 cuts it, cut 3 names cut 0's missing piece
        ENSURE(count == 2 && cuts[0].back_object == 1 && cuts[0].front_object == 2 && cuts[1].back_object == 2 &&
               cuts[1].front_object == 3 && sm_world_get_counts(world).objects == 4);
        sm_world_destroy(world);
    }
    sm_scene_destroy(scene);
}

/// sm_scene_apply() makes each of the scene's cuts once: called twice before a step (a caller's
/// retry, or a cancelled step) it cut the back piece again, found nothing to cut, and lost the id
/// of the front piece that a later cut names.
static void a_scene_applied_twice_cuts_once(void)
{
    static const char *json =
        "{\"dt\": 0.05, \"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4]}],"
        " \"cuts\": [{\"time\": 0, \"object\": 0, \"point\": [0, 0, 0], \"normal\": [1, 0, 0]},"
        "          {\"time\": 0.05, \"object\": 1, \"point\": [0, 0, 0], \"normal\": [0, 1, 0]}]}";
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "applied twice", &scene));
    if (!scene) return;
    for (int b = 0; b < 2; b++) {
        sm_world *world = NULL;
        ENSURE_OK(create_world(scene, backends[b], &world));
        if (!world) continue;
        for (int s = 0; s < 3; s++) {
            ENSURE_OK(sm_scene_apply(scene, world));
            ENSURE_OK(sm_scene_apply(scene, world));
            ENSURE_OK(sm_world_step(world, 0.05, 1));
        }
        const sm_cut_info *cuts = NULL;
        int32_t count = 0;
        ENSURE_OK(sm_world_get_cuts(world, &cuts, &count));
        printf("  %s: %d cuts, %d objects\n", sm_world_backend_name(world), count, sm_world_get_counts(world).objects);
        ENSURE(count == 2 && sm_world_get_counts(world).objects == 3 && cuts[1].back_object == 1);
        sm_world_destroy(world);
    }
    sm_scene_destroy(scene);
}

/// A cut rebuilds the objects and nothing else: names taken before it stay valid (the same
/// strings, sm_object_info.name "valid while the world lives"), the state check keeps its count
/// of steps (a world cut every 5 steps was checked at step 39 instead of 10), and a cancel asked
/// for before it still stops the next step. (Each was lost when a cut swapped in a whole new
/// world record.) Both backends.
static void a_cut_keeps_names_checks_and_cancels(void)
{
    for (int b = 0; b < 2; b++) {
        sm_world_def wd = sm_world_def_default();
        wd.backend = backends[b];
        wd.gravity = (sm_vec3){0.0, 0.0, 0.0};
        wd.check_interval = 10;
        sm_world *world = NULL;
        ENSURE_OK(sm_world_create(&wd, &world));
        if (!world) continue;
        const char *names[2] = {"first", "second"};
        for (int o = 0; o < 2; o++) {
            sm_object_def od = box_def((sm_vec3){3.0 * o, 0.0, 0.0});
            od.name = names[o];
            ENSURE_OK(sm_world_add_object(world, &od, NULL));
        }
        sm_object_info before[2], after[2];
        for (int o = 0; o < 2; o++) ENSURE_OK(sm_world_get_object(world, o, &before[o]));
        // object 1 faster than check_speed (1e5 m/s); object 0 loses a sliver every 5 steps
        const int32_t n = sm_world_get_counts(world).particles;
        double *v = calloc(3 * (size_t)n, sizeof(double));
        for (int32_t i = 512; i < 1024; i++) v[3 * i] = 2e5;
        ENSURE_OK(sm_world_set_velocities(world, 0, n, v));
        free(v);
        sm_result r = SM_OK;
        int step = 0;
        while (r == SM_OK && step < 40) {
            if (++step % 5 == 0) ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{-0.45 + 0.02 * step, 0.0, 0.0}, {-1.0, 0.0, 0.0}}, NULL));
            r = sm_world_step(world, 1e-6, 1);
        }
        printf("  %s: %d objects; the state check stopped it at step %d (%s)\n", sm_world_backend_name(world),
               sm_world_get_counts(world).objects, step, sm_result_name(r));
        ENSURE(r == SM_ERROR_DIVERGED && step == 10 && sm_world_get_counts(world).objects > 2);
        for (int o = 0; o < 2; o++) {
            ENSURE_OK(sm_world_get_object(world, o, &after[o]));
            ENSURE(after[o].name == before[o].name && strcmp(before[o].name, names[o]) == 0);
        }
        // a cancel before a cut stops the step after it
        sm_world_cancel(world);
        ENSURE_OK(sm_world_cut(world, 1, (sm_plane){{3.0, 0.0, 0.0}, {1.0, 0.0, 0.0}}, NULL));
        ENSURE(sm_world_step(world, 1e-6, 4) == SM_ERROR_CANCELLED);
        sm_world_destroy(world);
    }
}

/// A surface of points (vertices and no triangle) is cut like the particles, every vertex going
/// to its side's piece; so are the vertices of a surface that no triangle uses (they were
/// dropped, and a surface of points could not be cut at all).
static void a_surface_of_points_is_cut(void)
{
    sm_vec3 corners[9];
    memcpy(corners, cube_corners, sizeof cube_corners);
    corners[8] = (sm_vec3){0.3, 0.0, 0.0};
    const int32_t *cube = cube_triangles;
    for (int b = 0; b < 2; b++) {
        for (int k = 0; k < 2; k++) { // 8 points alone; the cube's 12 triangles and a ninth vertex of none
            sm_world *world = new_world(backends[b], false);
            if (!world) continue;
            sm_object_def od = box_def((sm_vec3){0.0, 0.0, 0.0});
            od.surface.vertices = corners;
            od.surface.vertex_count = k == 0 ? 8 : 9;
            od.surface.triangles = k == 0 ? NULL : cube;
            od.surface.triangle_count = k == 0 ? 0 : 12;
            ENSURE_OK(sm_world_add_object(world, &od, NULL));
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            sm_cut_info info;
            ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.1, 0.0, 0.0}, {1.0, 0.0, 0.0}}, &info));
            sm_object_info pieces[2] = {{0}, {0}};
            ENSURE(info.cut);
            ENSURE_OK(sm_world_get_object(world, 0, &pieces[0]));
            ENSURE_OK(sm_world_get_object(world, 1, &pieces[1]));
            printf("  %s, %s: the pieces' surfaces hold %d and %d vertices, %d and %d triangles\n", sm_world_backend_name(world),
                   k == 0 ? "8 points" : "a cube and a lone vertex", pieces[0].surface_vertex_count, pieces[1].surface_vertex_count,
                   pieces[0].surface_triangle_count, pieces[1].surface_triangle_count);
            if (k == 0) ENSURE(pieces[0].surface_vertex_count == 4 && pieces[1].surface_vertex_count == 4);
            else {
                // the lone vertex (x 0.3) is the front piece's: the cube's four front corners, the
                // cut points and it
                float *x = malloc(sizeof(float) * 4 * (size_t)sm_world_get_surface_vertex_count(world));
                ENSURE_OK(sm_world_get_float4(world, SM_FIELD_SURFACE_POSITION, 0, sm_world_get_surface_vertex_count(world), x));
                bool lone = false;
                for (int32_t j = 0; j < pieces[1].surface_vertex_count; j++) {
                    const float *p = x + 4 * (pieces[1].first_surface_vertex + j);
                    lone = lone || (fabs(p[0] - 0.3) < 0.05 && fabs(p[1]) < 0.05 && fabs(p[2]) < 0.05);
                }
                ENSURE(lone && pieces[1].surface_triangle_count > 0 && pieces[0].surface_triangle_count > 0);
                free(x);
            }
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE(all_finite(world));
            sm_world_destroy(world);
        }
    }
}

/// A cut that leaves one light particle on its own, far from the origin: its one-particle cluster
/// is centred on it exactly (sm_world_append_cluster()), not at m x / m, whose rounding (1e-17 m
/// at 300 m) gave it a size whose moments on a float device were below the normal floats: the
/// particle turned NaN a step after the cut (test_random_stability's draw 1039, cutting). And an
/// object of one such point is taken on OpenCL (it was refused, its rounding taken for its size).
/// Both fall as the reference's do.
static void one_particle_pieces_of_light_objects_stay_finite(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, -9.81, 0], \"objects\": ["
        " {\"shape\": \"points\", \"points\": [[-19.191, 319.7844, -23.9666], [-22.6452, 320.1635, -23.5423],"
        "  [-1.57561, 284.2761, -18.612], [-2.30408, 316.6365, 11.5507], [16.6184, 301.53272, -24.7491]],"
        "  \"mode\": \"linear\", \"mass\": 2.75e-12},"
        " {\"shape\": \"points\", \"points\": [[0.1234567, 0.3, 0.7]], \"mass\": 1e-6}]}");
    if (!world) return;
    sm_cut_info info;
    // x = 15 leaves the particle at x = 16.6 alone in front
    ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{15.0, 0.0, 0.0}, {1.0, 0.0, 0.0}}, &info));
    ENSURE(info.front_object >= 0);
    const double h = 1.0 / 60.0;
    for (int s = 0; s < 30; s++) ENSURE_OK(sm_world_step(world, h, 2));
    ENSURE(!world_has_nan(world));
    double v[3];
    // the lone particles fall freely: v = -g t (both the cut piece's and the one-point object's)
    ENSURE_OK(sm_world_get_velocities(world, 4, 1, v));
    ENSURE_SMALL(v[1] + 9.81 * 30 * h, tolerance(1e-9, 1e-4));
    ENSURE_OK(sm_world_get_velocities(world, 5, 1, v));
    ENSURE_SMALL(v[1] + 9.81 * 30 * h, tolerance(1e-9, 1e-4));
    sm_world_destroy(world);
}

int main(int argc, char **argv)
{
    const sm_test_case tests[] = {
        TEST(a_box_cut_in_half_falls_apart),
        TEST(one_particle_pieces_of_light_objects_stay_finite),
        TEST(particles_keep_their_index_and_objects_their_id_through_cuts),
        TEST(scene_springs_follow_their_particles_through_cuts),
        TEST(other_objects_are_untouched_bit_for_bit),
        TEST(cpu_and_opencl_agree_after_a_cut),
        TEST(single_device_steps_agree_after_random_cuts),
        TEST(the_duck_cut_gives_two_closed_meshes),
        TEST(a_torus_cut_through_its_hole_is_sealed),
        TEST(clusters_that_survive_keep_their_plastic_state),
        TEST(scenes_cut_on_time),
        TEST(particles_on_the_plane_go_behind_it_on_both_backends),
        TEST(a_scene_cut_that_misses_shifts_no_later_cut),
        TEST(a_cut_keeps_names_checks_and_cancels),
        TEST(a_scene_applied_twice_cuts_once),
        TEST(a_surface_of_points_is_cut),
        TEST(a_piece_without_clusters),
        TEST(copies_need_surfaces_cut_alike),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
