/* Plasticity (paper section 4.5; docs/algorithm.md step 8). */
#include "math3.h"
#include "support.h"

#include <stdlib.h>

/// Height (y extent) of the world's particles.
static double height(const sm_world *world)
{
    int32_t n = sm_world_get_counts(world).particles;
    double *x = get_positions(world), lo = INFINITY, hi = -INFINITY;
    for (int32_t i = 0; i < n; i++) lo = fmin(lo, x[3 * i + 1]), hi = fmax(hi, x[3 * i + 1]);
    free(x);
    return hi - lo;
}

typedef struct pressed {
    double height;     ///< final height over rest height
    double speed;      ///< final largest speed, m/s
    double det_error;  ///< worst |det(S_p) - 1|
    double strain;     ///< largest ||S_p - I||_F
} pressed;

/// A 1 m cube of 5x5x5 particles on a 2x2x2 grid, pressed between forces of 0.05 N on each
/// particle of its top and bottom layers for 2 s (to about 60% of its height), released, and
/// left 20 s to settle (damping 2/s), without gravity.
static pressed press_and_release(const char *mode, bool plastic, bool volume_preservation)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"mode\": \"%s\","
             " \"alpha\": 0.5, \"beta\": 0.8, \"volume_preservation\": %s, \"damping\": 2, \"clusters\": {\"grid\": [2, 2, 2]}%s}]}",
             mode, volume_preservation ? "true" : "false",
             plastic ? ", \"plasticity\": {\"yield\": 0.05, \"creep\": 20, \"max\": 0.4}" : "");
    sm_world *world = world_from_json(json);
    if (!world) return (pressed){NAN, NAN, NAN, NAN};
    const double rest_height = height(world);
    for (int32_t i = 0; i < 125; i++) {
        int layer = (i / 5) % 5; // y index in the lattice (x fastest, then y, then z)
        if (layer == 4) sm_world_set_force(world, i, v3(0, -0.05, 0));
        if (layer == 0) sm_world_set_force(world, i, v3(0, 0.05, 0));
    }
    for (int s = 0; s < 120; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    for (int32_t i = 0; i < 125; i++) sm_world_set_force(world, i, v3(0, 0, 0));
    for (int s = 0; s < 1200; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));

    pressed p = {height(world) / rest_height, max_speed(world, 0), 0.0, 0.0};
    for (int32_t c = 0; c < sm_world_get_counts(world).clusters; c++) {
        sm_cluster_info info;
        sm_world_get_cluster(world, c, &info);
        p.det_error = fmax(p.det_error, fabs(m3_det(info.plastic) - 1.0));
        p.strain = fmax(p.strain, sqrt(m3_norm2(m3_sub(info.plastic, m3_identity()))));
    }
    sm_world_destroy(world);
    return p;
}

/// Pressed beyond yield, a plastic cube keeps a permanent deformation (measured: 71-73% of its
/// height) with det(S_p) = 1 and ||S_p - I||_F <= max + 0.5 max^3 (the bound holds before the
/// volume normalisation); an elastic cube recovers its height (measured: within 1e-3).
static void pressed_cube_keeps_plastic_deformation(void)
{
    const double max = 0.4;
    const char *modes[] = {"linear", "quadratic"};
    for (int m = 0; m < 2; m++)
        for (int vp = 0; vp < 2; vp++) {
            pressed plastic = press_and_release(modes[m], true, vp);
            pressed elastic = press_and_release(modes[m], false, vp);
            printf("  %-9s volume preservation %-3s: plastic height %.3f (|det S_p - 1| %.2g, ||S_p - I|| %.3f), elastic height "
                   "%.5f; largest speeds at the end %.2g and %.2g m/s\n", modes[m], vp ? "on" : "off", plastic.height,
                   plastic.det_error, plastic.strain, elastic.height, plastic.speed, elastic.speed);
            ENSURE(plastic.height < 0.8);
            ENSURE(plastic.speed < tolerance(1e-6, 5e-5)); // (float: its rest jitters by round-off / h)
            ENSURE_SMALL(plastic.det_error, tolerance_exact());
            ENSURE(plastic.strain > 0.05); // beyond yield
            ENSURE(plastic.strain <= max + 0.5 * max * max * max);

            ENSURE_SMALL(elastic.height - 1.0, 0.01);
            ENSURE(elastic.speed < tolerance(1e-6, 5e-5));
        }
}

/// The plastic state is bounded however hard the cube is pressed (1 N per particle flattens it
/// to a few percent of its height), and rigid mode accepts no plasticity. The bound
/// max + 0.5 max^3 after the volume normalisation holds for max <= 0.5 (worst case over random
/// S_p: 0.5616 for max 0.5); beyond it, it does not (0.926 for max 0.7, unbounded as max
/// approaches 1, where det(S_p) can reach 0).
static void plastic_state_stays_bounded_under_crushing(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"mode\": \"quadratic\","
        " \"alpha\": 0.5, \"beta\": 0.8, \"damping\": 2, \"clusters\": {\"grid\": [2, 2, 2]},"
        " \"plasticity\": {\"yield\": 0, \"creep\": 50, \"max\": 0.5}}]}");
    if (!world) return;
    for (int32_t i = 0; i < 64; i++) {
        int layer = (i / 4) % 4;
        if (layer == 3) sm_world_set_force(world, i, v3(0, -1, 0));
        if (layer == 0) sm_world_set_force(world, i, v3(0, 1, 0));
    }
    double worst_det = 0.0, worst_strain = 0.0;
    for (int s = 0; s < 600; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        for (int32_t c = 0; c < sm_world_get_counts(world).clusters; c++) {
            sm_cluster_info info;
            sm_world_get_cluster(world, c, &info);
            worst_det = fmax(worst_det, fabs(m3_det(info.plastic) - 1.0));
            worst_strain = fmax(worst_strain, sqrt(m3_norm2(m3_sub(info.plastic, m3_identity()))));
        }
    }
    printf("  crushed: worst |det S_p - 1| %.3g, largest ||S_p - I|| %.4f (max 0.5, bound %.4f)\n", worst_det, worst_strain,
           0.5 + 0.5 * 0.125);
    ENSURE(!world_has_nan(world));
    ENSURE_SMALL(worst_det, tolerance_exact());
    ENSURE(worst_strain > 0.5); // the normalisation does push past max
    ENSURE(worst_strain <= 0.5 + 0.5 * 0.5 * 0.5 * 0.5);
    sm_world_destroy(world);

    sm_scene *scene = NULL;
    ENSURE(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\", \"mode\": \"rigid\", \"plasticity\": {}}]}", "rigid",
                                &scene) == SM_ERROR_SCENE);
    ENSURE(strstr(sm_last_error(), "plasticity") != NULL);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(pressed_cube_keeps_plastic_deformation),
        TEST(plastic_state_stays_bounded_under_crushing),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
