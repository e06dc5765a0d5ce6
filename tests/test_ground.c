/* The ground plane (algorithm.md step 9). */
#include "math3.h"
#include "support.h"

#include <stdlib.h>

/// After every step, no particle is below the plane: shapes thrown down hard, spinning, in
/// every mode, with one and with several substeps.
static void no_particle_below_the_ground(void)
{
    for (int substeps = 1; substeps <= 4; substeps += 3) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"substeps\": %d, \"ground\": {\"height\": 0.5, \"restitution\": 0.5, \"friction\": 0.1}, \"objects\": ["
                 " {\"shape\": \"box\", \"position\": [0, 2, 0], \"velocity\": [1, -30, 0], \"angular_velocity\": [3, 1, 0],"
                 "  \"mode\": \"rigid\", \"alpha\": 1},"
                 " {\"shape\": \"sphere\", \"position\": [3, 1.5, 0], \"velocity\": [0, -100, 2], \"mode\": \"linear\","
                 "  \"clusters\": {\"grid\": [2, 2, 2]}},"
                 " {\"shape\": \"torus\", \"spacing\": 0.1, \"position\": [-3, 3, 0], \"rotation\": [90, 0, 0],"
                 "  \"velocity\": [0, -10, 0], \"mode\": \"quadratic\", \"clusters\": {\"grid\": [3, 1, 3]}, \"cap\": {}},"
                 " {\"shape\": \"capsule\", \"spacing\": 0.1, \"radius\": 0.2, \"position\": [0, 1, 3], \"mode\": \"quadratic\","
                 "  \"alpha\": 0.1, \"beta\": 0.9, \"damping\": 1}]}",
                 substeps);
        sm_world *world = world_from_json(json);
        if (!world) return;
        const int32_t n = sm_world_get_counts(world).particles;
        double lowest = INFINITY;
        for (int s = 0; s < 600; s++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, substeps));
            double *x = get_positions(world);
            for (int32_t i = 0; i < n; i++) lowest = fmin(lowest, x[3 * i + 1]);
            free(x);
        }
        ENSURE(lowest >= 0.5);
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
    }
}

/// A box dropped onto the ground comes to rest on it: with damping 0.5/s, after 40 s no particle
/// moves more than 1e-4 of the size in a second (measured 2e-6 to 5e-6), the lowest particles
/// lie on the plane and the centre of mass is about half the size above it. (Without damping
/// the box keeps ringing: the step conserves the energy of its internal oscillation and the
/// ground alone removes too little; measured about 5 cm of motion per second after 40 s.)
static void dropped_box_comes_to_rest(void)
{
    const char *modes[] = {"rigid", "linear", "quadratic"};
    for (int m = 0; m < 3; m++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"ground\": {\"height\": 0.5}, \"objects\": [{\"shape\": \"box\", \"position\": [0, 2.5, 0],"
                 " \"rotation\": [10, 20, 30], \"mode\": \"%s\", \"damping\": 0.5}]}",
                 modes[m]);
        sm_world *world = world_from_json(json);
        if (!world) return;
        double *before = NULL;
        for (int s = 1; s <= 2400; s++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            if (s == 2340) before = get_positions(world);
        }
        double *x = get_positions(world);
        double moved = 0.0, lowest = INFINITY, centre = 0.0;
        for (int32_t i = 0; i < 64; i++) {
            for (int a = 0; a < 3; a++) moved = fmax(moved, fabs(x[3 * i + a] - before[3 * i + a]));
            lowest = fmin(lowest, x[3 * i + 1]);
            centre += x[3 * i + 1] / 64.0;
        }
        printf("  %-9s after 40 s: largest motion over the last second %.3g m, centre %.4f m above the plane\n", modes[m], moved,
               centre - 0.5);
        ENSURE(moved < 1e-4);
        ENSURE(lowest == 0.5);
        ENSURE_RANGE(centre - 0.5, 0.45, 0.5);
        free(before), free(x);
        sm_world_destroy(world);
    }
}

/// One free particle (a single-particle cluster: its goal is itself) isolates step 9 exactly:
/// on impact it is put on the plane, v.y becomes -e v.y and v.x, v.z are scaled by 1 - mu.
static void impact_applies_restitution_and_friction(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, -10, 0], \"ground\": {\"height\": 0, \"restitution\": 0.5, \"friction\": 0.25}, \"objects\": ["
        " {\"shape\": \"points\", \"points\": [[0, 0.05, 0]], \"velocity\": [2, -3, 1], \"mode\": \"rigid\", \"alpha\": 1},"
        " {\"shape\": \"points\", \"points\": [[1, -1, 0]], \"fixed\": [0]}]}");
    if (!world) return;
    const double h = 0.1;
    ENSURE_OK(sm_world_step(world, h, 1));
    double x[6], v[6];
    sm_world_get_positions(world, 0, 2, x);
    sm_world_get_velocities(world, 0, 2, v);
    // before the ground: v = (2, -3 - 10 h, 1) = (2, -4, 1), y = 0.05 + h (-4) = -0.35 < 0
    ENSURE_SMALL(x[1], 0.0);
    ENSURE_SMALL(v[1] - 0.5 * 4.0, 1e-15);
    ENSURE_SMALL(v[0] - 0.75 * 2.0, 1e-15);
    ENSURE_SMALL(v[2] - 0.75 * 1.0, 1e-15);
    ENSURE_SMALL(x[0] - 0.2, 1e-15); // the horizontal position keeps this step's motion
    // the fixed particle below the plane is left alone
    ENSURE(x[4] == -1.0 && v[4] == 0.0);
    sm_world_destroy(world);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(no_particle_below_the_ground),
        TEST(dropped_box_comes_to_rest),
        TEST(impact_applies_restitution_and_friction),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
