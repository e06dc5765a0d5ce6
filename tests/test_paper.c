/* The paper's figures as scenes (scenes/paper/, notes in scenes/README.md): each test loads the
 * shipped scene file and checks what the figure shows, on the CPU reference. (compare_test.sh
 * runs the same scenes on OpenCL against the reference.) */
#include "math3.h"
#include "support.h"

#include <stdlib.h>
#include <string.h>

/// The world of scenes/paper/NAME on the CPU reference, with its scene in *out_scene.
static sm_world *paper_world(const char *name, sm_scene **out_scene)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/paper/%s", SM_SCENES_DIR, name);
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    ENSURE_OK(sm_scene_load_file(path, &scene));
    if (scene) ENSURE_OK(create_world(scene, sm_test_backend, &world));
    if (world && out_scene) *out_scene = scene;
    else sm_scene_destroy(scene);
    return world;
}


/// Extent of object `object` along axis `axis` (0: x, 1: y, 2: z).
static double object_extent(const sm_world *world, int32_t object, int axis)
{
    sm_object_info info;
    sm_world_get_object(world, object, &info);
    double *x = get_positions(world), lo = INFINITY, hi = -INFINITY;
    for (int32_t i = info.first_particle; i < info.first_particle + info.particle_count; i++)
        lo = fmin(lo, x[3 * i + axis]), hi = fmax(hi, x[3 * i + axis]);
    free(x);
    return hi - lo;
}

/// Fig. 9 and Fig. 1: the sizes the paper gives (384 objects, 2,448 clusters, 55,200 points; 145
/// objects, 1,728 clusters, 24,618 points), and fig9_massive's spheres carry skinned surfaces.
static void massive_scenes_have_the_papers_sizes(void)
{
    static const struct {
        const char *name;
        int32_t objects, clusters, particles;
    } sizes[] = {{"fig9_massive.json", 384, 2448, 55200}, {"fig1_teaser.json", 145, 1728, 24618}};
    for (int k = 0; k < 2; k++) {
        sm_world *world = paper_world(sizes[k].name, NULL);
        if (!world) return;
        const sm_counts counts = sm_world_get_counts(world);
        printf("  %s: %d objects, %d clusters, %d particles, %d surface vertices\n", sizes[k].name, counts.objects,
               counts.clusters, counts.particles, sm_world_get_surface_vertex_count(world));
        ENSURE(counts.objects == sizes[k].objects);
        ENSURE(counts.clusters == sizes[k].clusters);
        ENSURE(counts.particles == sizes[k].particles);
        if (k == 0) {
            int32_t skinned = 0;
            for (int32_t o = 0; o < counts.objects; o++) {
                sm_object_info info;
                ENSURE_OK(sm_world_get_object(world, o, &info));
                skinned += info.surface_vertex_count > 0;
                if (info.surface_vertex_count > 0) ENSURE(info.shape == SM_SHAPE_SPHERE);
            }
            ENSURE(skinned > 0);
        }
        sm_world_destroy(world);
    }
}

/// Fig. 7: pulled by the same spring from the same surface point, the stick with more clusters
/// follows further: the tip displacement grows with the number of clusters (1, 2, 5).
static void stick_tip_follows_further_with_more_clusters(void)
{
    sm_scene *scene = NULL;
    sm_world *world = paper_world("fig7_sticks.json", &scene);
    if (!world) return;
    double rest[3 * 3];
    for (int k = 0; k < 3; k++) {
        sm_object_info info;
        ENSURE_OK(sm_world_get_object(world, k, &info));
        ENSURE(info.particle_count == 60);
        ENSURE(info.cluster_count == (k == 0 ? 1 : k == 1 ? 2 : 5));
        sm_world_get_positions(world, info.first_particle + 29, 1, &rest[3 * k]);
    }
    for (int s = 0; s < sm_scene_get_info(scene).steps; s++) ENSURE_OK(sm_scene_step(scene, world));
    double moved[3];
    for (int k = 0; k < 3; k++) {
        sm_object_info info;
        sm_world_get_object(world, k, &info);
        double x[3];
        sm_world_get_positions(world, info.first_particle + 29, 1, x);
        moved[k] = sqrt(pow(x[0] - rest[3 * k], 2) + pow(x[1] - rest[3 * k + 1], 2) + pow(x[2] - rest[3 * k + 2], 2));
    }
    printf("  tip displacement after %d steps: %.3f m (1 cluster), %.3f m (2), %.3f m (5)\n", sm_scene_get_info(scene).steps,
           moved[0], moved[1], moved[2]);
    ENSURE(moved[0] > 0.05);
    ENSURE(moved[1] > moved[0]);
    ENSURE(moved[2] > moved[1]);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}


/// Fig. 6: after the plate and the walls have moved away, each plastic cube keeps its own
/// permanent deformation: the flattened one stays low and wide, the squeezed one narrow and tall
/// (a cube of 1 m at rest).
static void plastic_cubes_keep_two_rest_states(void)
{
    sm_scene *scene = NULL;
    sm_world *world = paper_world("fig6_plasticity.json", &scene);
    if (!world) return;
    const int32_t steps = sm_scene_get_info(scene).steps;
    for (int s = 0; s < steps; s++) ENSURE_OK(sm_scene_step(scene, world));
    ENSURE(sm_world_get_time(world) > 4.0); // the colliders moved away at 3 s
    const double flat_w = object_extent(world, 0, 0), flat_h = object_extent(world, 0, 1);
    const double thin_w = object_extent(world, 1, 0), thin_h = object_extent(world, 1, 1);
    printf("  after unloading: flattened cube %.3f m wide, %.3f m high; squeezed cube %.3f m wide, %.3f m high\n", flat_w,
           flat_h, thin_w, thin_h);
    ENSURE(flat_h < 0.75 && flat_w > 1.15);
    ENSURE(thin_w < 0.75 && thin_h > 1.1);
    ENSURE(!world_has_nan(world));
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// Fig. 11: the duck squeezed to a tenth of its height has no NaN, and within 300 steps of the
/// plate's release it is back within 1% of its size (RMS from the best rigid fit of its rest shape).
static void squeezed_duck_recovers(void)
{
    sm_scene *scene = NULL;
    sm_world *world = paper_world("fig11_duck.json", &scene);
    if (!world) return;
    const double height0 = object_extent(world, 0, 1), size = object_size(world, 0);
    sm_object_info info;
    ENSURE_OK(sm_world_get_object(world, 0, &info));
    ENSURE(info.surface_vertex_count == 2108 && info.surface_triangle_count == 4212);
    // the plate holds from 1.5 s to 2 s, then lifts
    double squeezed = INFINITY;
    int32_t step = 0;
    for (; sm_world_get_time(world) < 2.0 - 1e-9; step++) {
        ENSURE_OK(sm_scene_step(scene, world));
        squeezed = fmin(squeezed, object_extent(world, 0, 1));
        if (world_has_nan(world)) break;
    }
    ENSURE(!world_has_nan(world));
    printf("  duck %.3f m high at rest, %.3f m squeezed (%.1f%%)\n", height0, squeezed, 100.0 * squeezed / height0);
    ENSURE(squeezed <= 0.1 * height0 + tolerance(1e-9, 1e-6)); // (the plate holds it at 10%)
    double rms = INFINITY;
    int32_t recovered_at = -1;
    for (int32_t s = 1; s <= 300; s++) {
        ENSURE_OK(sm_scene_step(scene, world));
        rms = rigid_fit_rms(world, 0);
        if (recovered_at < 0 && rms < 0.01 * size) recovered_at = s;
    }
    printf("  RMS from the rigid fit 300 steps after release: %.4f of its size (first below 1%% after %d steps)\n",
           rms / size, recovered_at);
    ENSURE(!world_has_nan(world));
    ENSURE(rms < 0.01 * size);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// Henriques & Wuensche 2007 (3.1.2, method 3), scenes/paper/hw2007_cap.json: two soft cubes with
/// volume preservation thrown at a wall. The capped one stays within 2 times its rest radius
/// (its area does not blow up) and its goal transform within the cap's bound, ||T||_F^2 <=
/// (sqrt(hard) + sqrt(3))^2, while it is deformed past the soft cap; the uncapped one swells further.
static void deformation_cap_bounds_an_impact(void)
{
    sm_scene *scene = NULL;
    sm_world *world = paper_world("hw2007_cap.json", &scene);
    if (!world) return;
    const double rest = object_radius(world, 0, true);
    const double bound = pow(sqrt(6.0) + sqrt(3.0), 2.0);
    double radius[2] = {0.0, 0.0}, largest_t = 0.0;
    for (int s = 0; s < sm_scene_get_info(scene).steps; s++) {
        ENSURE_OK(sm_scene_step(scene, world));
        for (int o = 0; o < 2; o++) radius[o] = fmax(radius[o], object_radius(world, o, false));
        sm_cluster_info cluster;
        ENSURE_OK(sm_world_get_cluster(world, 0, &cluster));
        double t2 = 0.0;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) t2 += cluster.transform[r][c] * cluster.transform[r][c];
        largest_t = fmax(largest_t, t2);
    }
    printf("  largest radius / rest: capped %.3f, uncapped %.3f; capped ||T||^2 up to %.3f (soft 4, bound %.2f)\n",
           radius[0] / rest, radius[1] / rest, largest_t, bound);
    ENSURE(radius[0] < 2.0 * rest);
    ENSURE(radius[1] > radius[0]);
    ENSURE_RANGE(largest_t, 4.0, bound);
    ENSURE(!world_has_nan(world));
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// det of A_pq of object `object` (one cluster) from the current and rest positions.
static double linear_match_det(const sm_world *world, int32_t object)
{
    sm_object_info info;
    sm_world_get_object(world, object, &info);
    double *x = get_positions(world), *x0 = get_rest_positions(world), *m = get_masses(world);
    sm_vec3 c = {0, 0, 0}, c0 = {0, 0, 0};
    for (int32_t i = info.first_particle; i < info.first_particle + info.particle_count; i++) {
        c = v3_add(c, v3_scale(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), m[i] / info.mass));
        c0 = v3_add(c0, v3_scale(v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), m[i] / info.mass));
    }
    sm_mat3 apq = m3_zero();
    for (int32_t i = info.first_particle; i < info.first_particle + info.particle_count; i++) {
        const sm_vec3 p = v3_sub(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), c), q = v3_sub(v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), c0);
        apq = m3_add(apq, m3_scale(m3_outer(p, q), m[i]));
    }
    free(x), free(x0), free(m);
    return m3_det(apq);
}

/// Henriques & Wuensche 2007 (inversion): an object mirrored through its centre of mass (every
/// particle reflected across a plane through it, so its linear match has det < 0) returns to a
/// non-inverted state within 60 steps, in every mode, with one cluster and with 2x2x2: the goals
/// come from the closest proper rotation, which is never a reflection.
static void mirrored_objects_turn_back(void)
{
    const char *modes[] = {"rigid", "linear", "quadratic"};
    for (int m = 0; m < 3; m++)
        for (int grid = 1; grid <= 2; grid++) {
            char json[512];
            snprintf(json, sizeof json,
                     "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"size\": [1, 0.6, 0.4],"
                     " \"resolution\": [6, 4, 3], \"mode\": \"%s\", \"alpha\": 0.5, \"clusters\": {\"grid\": [%d, %d, %d]}}]}",
                     modes[m], grid, grid, grid);
            sm_world *world = world_from_json(json);
            if (!world) return;
            const int32_t n = sm_world_get_counts(world).particles;
            double *x = get_positions(world);
            for (int32_t i = 0; i < n; i++) x[3 * i] = -x[3 * i]; // the centre of mass is at the origin
            ENSURE_OK(sm_world_set_positions(world, 0, n, x));
            free(x);
            ENSURE(linear_match_det(world, 0) < 0.0);
            int turned = -1;
            for (int s = 1; s <= 60 && turned < 0; s++) {
                ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
                if (linear_match_det(world, 0) > 0.0) turned = s;
            }
            printf("  %-9s %d cluster%s: det(A_pq) > 0 after %d steps\n", modes[m], grid * grid * grid, grid > 1 ? "s" : "",
                   turned);
            ENSURE(turned > 0);
            ENSURE(!world_has_nan(world));
            sm_world_destroy(world);
        }
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(massive_scenes_have_the_papers_sizes),
        TEST(stick_tip_follows_further_with_more_clusters),
        TEST(plastic_cubes_keep_two_rest_states),
        TEST(squeezed_duck_recovers),
        TEST(deformation_cap_bounds_an_impact),
        TEST(mirrored_objects_turn_back),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
