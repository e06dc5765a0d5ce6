/* The smaller terms of the step (docs/algorithm.md steps 4c-4f, substeps, tau, fixed particles) and
 * the invariance of the whole step under a change of units. */
#include "math3.h"
#include "support.h"

#include <stdlib.h>
#include <threads.h>
#include <time.h>

static const char *const cube =
    "{\"gravity\": [0, -9.81, 0], \"ground\": {\"height\": -0.3}, \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4],"
    " \"position\": [0, 1, 0], \"rotation\": [10, 20, 30], \"velocity\": [1, 0, 0], \"angular_velocity\": [0, 2, 1],"
    " \"mode\": \"quadratic\", \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.5}, \"damping\": 0.5 %s}]}";

static sm_world *cube_world(const char *extra)
{
    char json[1024];
    snprintf(json, sizeof json, cube, extra);
    return world_from_json(json);
}

/// A step of dt with s substeps is exactly s steps of dt / s.
static void substeps_are_repeated_steps(void)
{
    sm_world *a = cube_world(""), *b = cube_world("");
    if (!a || !b) return;
    for (int s = 0; s < 50; s++) {
        ENSURE_OK(sm_world_step(a, 0.04, 4));
        for (int k = 0; k < 4; k++) ENSURE_OK(sm_world_step(b, 0.04 / 4, 1));
    }
    double *xa = get_positions(a), *xb = get_positions(b);
    ENSURE(memcmp(xa, xb, sizeof(double) * 3 * 64) == 0);
    free(xa), free(xb);
    sm_world_destroy(a), sm_world_destroy(b);
}

static int cancel_later(void *world)
{
    thrd_sleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    sm_world_cancel(world);
    return 0;
}

/// "sm_world_cancel() stops a step between two of its solver steps and leaves the world as they
/// left it": a step of 100,000 solver steps, cancelled from another thread 20 ms in, returns
/// SM_ERROR_CANCELLED after k of them, its time advanced by k h, and its particles exactly where
/// k single solver steps put them; a cancel before a step stops it before its first, leaving the
/// world exactly as it was (whether or not k reached 1), and the step after that runs whole.
static void cancel_stops_between_solver_steps(void)
{
    sm_world *a = cube_world(""), *b = cube_world("");
    if (!a || !b) return;
    // cancelled before its first solver step: nothing moved, not even by rounding
    double *before = get_positions(b);
    sm_world_cancel(b);
    ENSURE(sm_world_step(b, 0.01, 2) == SM_ERROR_CANCELLED && sm_world_get_time(b) == 0.0);
    double *after = get_positions(b);
    ENSURE(memcmp(before, after, sizeof(double) * 3 * 64) == 0);
    free(before), free(after);
    const int32_t substeps = 100000;
    const double dt = 1.0, h = dt / substeps;
    thrd_t thread;
    ENSURE(thrd_create(&thread, cancel_later, a) == thrd_success);
    const sm_result r = sm_world_step(a, dt, substeps);
    thrd_join(thread, NULL);
    const double time = sm_world_get_time(a);
    const long long k = llround(time / h);
    printf("  %s: cancelled after %lld of %d solver steps (%s)\n", sm_world_backend_name(a), k, substeps, sm_result_name(r));
    ENSURE(r == SM_ERROR_CANCELLED && k >= 0 && k < substeps);
    for (long long s = 0; s < k; s++) ENSURE_OK(sm_world_step(b, h, 1));
    ENSURE(sm_world_get_time(b) == time);
    double *xa = get_positions(a), *xb = get_positions(b);
    ENSURE(memcmp(xa, xb, sizeof(double) * 3 * 64) == 0);
    free(xa), free(xb);
    sm_world_cancel(a);
    ENSURE(sm_world_step(a, 0.01, 2) == SM_ERROR_CANCELLED && sm_world_get_time(a) == time);
    ENSURE_OK(sm_world_step(a, 0.01, 2));
    ENSURE(sm_world_get_time(a) > time);
    sm_world_destroy(a), sm_world_destroy(b);
}

/// tau sets alpha = min(1, h / tau): tau = 2h behaves as alpha = 0.5, tau < h as alpha = 1.
static void tau_sets_alpha(void)
{
    const double h = 1.0 / 64.0; // a power of two, so h / tau is exact
    const char *pairs[][2] = {{", \"alpha\": 0.5", ", \"tau\": 0.03125"}, {", \"alpha\": 1", ", \"tau\": 0.001"}};
    for (int p = 0; p < 2; p++) {
        sm_world *a = cube_world(pairs[p][0]), *b = cube_world(pairs[p][1]);
        if (!a || !b) return;
        for (int s = 0; s < 100; s++) sm_world_step(a, h, 1), sm_world_step(b, h, 1);
        double *xa = get_positions(a), *xb = get_positions(b);
        ENSURE(memcmp(xa, xb, sizeof(double) * 3 * 64) == 0);
        free(xa), free(xb);
        sm_world_destroy(a), sm_world_destroy(b);
    }
}

/// One particle in a cluster of its own has itself as goal, which isolates steps 4c-4f: damping
/// multiplies v by 1 - k h each step (and stops it when k h >= 1), a force accelerates by f / m,
/// and an object's force is shared by mass, so that every particle gets the same acceleration.
static void damping_and_forces_act_on_velocity(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, 0, 0], \"objects\": ["
        " {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"velocity\": [1, 2, 3], \"damping\": 3},"
        " {\"shape\": \"points\", \"points\": [[5, 0, 0]], \"velocity\": [1, 0, 0], \"damping\": 100},"
        " {\"shape\": \"points\", \"points\": [[0, 5, 0], [1, 5, 0]], \"masses\": [1, 3], \"force\": [8, 0, 0],"
        "  \"clusters\": {\"lists\": [[0], [1]]}}]}");
    if (!world) return;
    const double h = 0.01;
    double v0[12];
    sm_world_get_velocities(world, 0, 4, v0);
    for (int s = 0; s < 50; s++) ENSURE_OK(sm_world_step(world, h, 1));
    double v[12];
    sm_world_get_velocities(world, 0, 4, v);
    const double decay = pow(1.0 - 3.0 * h, 50);
    for (int a = 0; a < 3; a++) ENSURE_SMALL(v[a] - v0[a] * decay, tolerance(1e-14, 2e-6));
    ENSURE(v[3] == 0.0 && v[4] == 0.0 && v[5] == 0.0); // k h = 1: stopped, not reversed
    // 8 N on 4 kg: 2 m/s^2 for both particles, after 0.5 s 1 m/s. (A one-particle cluster's
    // centre m x / m can be one ulp off x, which alpha (g - x) / h turns into ~1e-14 m/s a step.)
    ENSURE_SMALL(v[6] - 1.0, tolerance_exact());
    ENSURE_SMALL(v[9] - 1.0, tolerance_exact());
    // a per-particle force replaces the object's share
    ENSURE_OK(sm_world_set_force(world, 3, v3(0, 3, 0)));
    ENSURE_OK(sm_world_step(world, h, 1));
    sm_world_get_velocities(world, 0, 4, v);
    ENSURE_SMALL(v[9] - 1.0, tolerance_exact());
    ENSURE_SMALL(v[10] - 0.01, tolerance_exact());
    ENSURE(sm_world_set_force(world, 4, v3(0, 0, 0)) == SM_ERROR_INVALID_ARGUMENT);
    sm_world_destroy(world);
}

/// Fixed particles never move and report rest, whatever the object's initial velocity, and
/// still take part in the match: a beam held at one end hangs from it.
static void fixed_particles_hold(void)
{
    sm_world *world = world_from_json(
        "{\"substeps\": 4, \"objects\": [{\"shape\": \"box\", \"size\": [2, 0.2, 0.2], \"resolution\": [10, 2, 2],"
        " \"velocity\": [0, 1, 0], \"mode\": \"linear\", \"alpha\": 1, \"beta\": 0, \"damping\": 1,"
        " \"fixed\": [0, 10, 20, 30]}]}");
    if (!world) return;
    double *rest = get_rest_positions(world);
    for (int s = 0; s < 300; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 4));
    double *x = get_positions(world), *v = get_velocities(world);
    const int fixed[] = {0, 10, 20, 30};
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 3; a++) {
            ENSURE_SMALL(x[3 * fixed[k] + a] - rest[3 * fixed[k] + a], tolerance_hold());
            ENSURE(v[3 * fixed[k] + a] == 0.0);
        }
    // the free end (x index 9) hangs below the held end, and the object did not fall away
    ENSURE(x[3 * 9 + 1] < rest[3 * 9 + 1] - 0.1);
    ENSURE(x[3 * 9 + 1] > -2.5);
    free(rest), free(x), free(v);
    sm_world_destroy(world);
}

/// The step does not depend on the units: lengths scaled by 1e-3 and masses by 1e6 (the
/// pseudo-inverse thresholds are relative, the offsets are scaled by each cluster's size)
/// give the same motion, scaled. A flat cluster and rank-deficient quadratic clusters are
/// included, so the thresholds are exercised.
static void motion_is_independent_of_units(void)
{
    const char *scene =
        "{\"gravity\": [0, %.17g, 0], \"ground\": {\"height\": %.17g, \"friction\": 0.3}, \"objects\": ["
        " {\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [5, 4, 3], \"mass\": %.17g,"
        "  \"position\": [0, %.17g, 0], \"rotation\": [10, 20, 30], \"velocity\": [%.17g, 0, 0], \"angular_velocity\": [0, 2, 1],"
        "  \"mode\": \"quadratic\", \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.3}, \"damping\": 1,"
        "  \"cap\": {}, \"plasticity\": {\"yield\": 0.05, \"creep\": 2, \"max\": 0.3}},"
        " {\"shape\": \"box\", \"size\": [%.17g, %.17g, 0], \"resolution\": [4, 4, 1], \"mass\": %.17g,"
        "  \"position\": [%.17g, %.17g, 0], \"rotation\": [40, 0, 0], \"mode\": \"linear\", \"beta\": 0.7,"
        "  \"clusters\": {\"grid\": [2, 2, 1]}, \"damping\": 1}]}";
    double xs[2][3 * 76];
    for (int u = 0; u < 2; u++) {
        const double l = u ? 1e-3 : 1.0, m = u ? 1e6 : 1.0;
        char json[2048];
        snprintf(json, sizeof json, scene, -9.81 * l, -0.5 * l, 1.0 * l, 0.6 * l, 0.4 * l, 2.0 * m, 1.0 * l, 0.5 * l, 1.2 * l,
                 0.8 * l, 0.5 * m, 2.0 * l, 1.5 * l);
        sm_world *world = world_from_json(json);
        if (!world) return;
        ENSURE(sm_world_get_counts(world).particles == 76);
        for (int s = 0; s < 120; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        sm_world_get_positions(world, 0, 76, xs[u]);
        for (int i = 0; i < 3 * 76; i++) xs[u][i] /= l;
        sm_world_destroy(world);
    }
    double worst = 0.0;
    for (int i = 0; i < 3 * 76; i++) worst = fmax(worst, fabs(xs[0][i] - xs[1][i]));
    printf("  largest difference after 120 steps, in the metre scene's units: %.3g m\n", worst);
    ENSURE_SMALL(worst, tolerance(1e-9, 2e-5)); // (float: 1e-7 of positions near 1e3 units)
}

/// The energy of a free particle pulled toward `target` with stiffness k: m |v|^2 / 2 + k |t - x|^2 / 2.
static double spring_energy(const sm_world *world, double m, double k, sm_vec3 target)
{
    double x[3], v[3];
    sm_world_get_positions(world, 0, 1, x);
    sm_world_get_velocities(world, 0, 1, v);
    const sm_vec3 u = v3_sub(target, v3(x[0], x[1], x[2]));
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * k * v3_dot(u, u);
}

/// "A spring of any stiffness is stable" (step 4d): a free particle of random mass (log-uniform
/// across the documented 1e-12 to 1e12 kg), at a random place and speed, pulled toward a random
/// point by a target (sm_world_set_target) or by a scene's spring with damping, for 100 frames
/// of 1e-9 to 10 s (log-uniform, the documented range of dt) in 1 to 4 substeps, at
/// stiffnesses that make h^2 k / m anything from 1e-6 to 1e10: the spring's energy,
/// m |v|^2 / 2 + k |t - x|^2 / 2, never grows from one frame to the next (up to the rounding of
/// the particle's place: on OpenCL positions are pairs of floats and targets floats). With the
/// explicit force k (t - x) it grows without bound once h^2 k / m passes about 4.
static void springs_of_any_stiffness_never_add_energy(void)
{
    rng r = {20261127};
    int grew = 0, stiff = 0;
    double worst = 0.0;
    for (int draw = 0; draw < 40; draw++) {
        const bool scene_spring = draw % 2 == 1;
        // masses across the documented [1e-12, 1e12] kg, solver steps from the shortest a scene
        // takes (1e-9 s) to frames of the longest (10 s)
        const double m = exp(rng_uniform(&r, log(1e-12), log(1e12)));
        const int substeps = 1 + (int)rng_uniform(&r, 0.0, 4.0);
        const double dt = exp(rng_uniform(&r, log(1e-9 * substeps), log(10.0)));
        const double h = dt / substeps, k = exp(rng_uniform(&r, log(1e-6), log(1e10))) * m / (h * h);
        const double c = scene_spring && rng_uniform(&r, 0, 1) < 0.7 ? exp(rng_uniform(&r, log(1e-6), log(1e8))) * m / dt : 0.0;
        const double reach = exp(rng_uniform(&r, log(1e-3), log(10.0)));
        const sm_vec3 target = rng_in_ball(&r, reach), v0 = v3_scale(rng_in_ball(&r, reach), 1.0 / dt);
        stiff += h * h * k / m > 4.0;
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"dt\": %.17g, \"substeps\": %d, \"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"points\","
                 " \"points\": [[0, 0, 0]], \"mass\": %.17g, \"velocity\": [%.17g, %.17g, %.17g]}]%s",
                 dt, substeps, m, v0.x, v0.y, v0.z, scene_spring ? ", \"springs\": [" : "}");
        if (scene_spring)
            snprintf(json + strlen(json), sizeof json - strlen(json),
                     "{\"object\": 0, \"particle\": 0, \"target\": [%.17g, %.17g, %.17g], \"stiffness\": %.17g,"
                     " \"damping\": %.17g}]}", target.x, target.y, target.z, k, c);
        sm_scene *scene = NULL;
        sm_world *world = NULL;
        ENSURE_OK(sm_scene_load_string(json, "spring", &scene));
        if (!scene || create_world(scene, sm_test_backend, &world) != SM_OK) {
            ENSURE(false);
            sm_scene_destroy(scene);
            continue;
        }
        if (!scene_spring) ENSURE_OK(sm_world_set_target(world, 0, target, k));
        // the energy of rounding the particle's place and the target (relative 1e-15 in double,
        // 1e-7 in float) by the distances involved
        const double place = tolerance(1e-15, 1e-7) * (v3_length(target) + reach);
        const double floor = 0.5 * k * place * place + 0.5 * m * (place / h) * (place / h);
        double before = spring_energy(world, m, k, target);
        const double start = before;
        for (int frame = 0; frame < 100; frame++) {
            ENSURE_OK(scene_spring ? sm_scene_step(scene, world) : sm_world_step(world, dt, substeps));
            const double now = spring_energy(world, m, k, target);
            worst = fmax(worst, (now - before) / start);
            if (!(now <= before * (1.0 + tolerance(1e-12, 1e-5)) + floor)) {
                printf("  draw %d (%s): frame %d: the energy grew from %.6g to %.6g J (m %.3g kg, dt %.3g s in %d, k %.3g N/m,"
                       " h^2 k / m %.3g, c %.3g N s/m)\n", draw, scene_spring ? "scene spring" : "target", frame, before,
                       now, m, dt, substeps, k, h * h * k / m, c);
                grew++;
                break;
            }
            before = now;
        }
        sm_world_destroy(world);
        sm_scene_destroy(scene);
    }
    printf("  40 draws, %d with h^2 k / m past 4: largest growth in a frame %.3g of the starting energy\n", stiff, worst);
    ENSURE(grew == 0);
    ENSURE(stiff >= 10); // the draws reach where the explicit spring fails
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(substeps_are_repeated_steps),
        TEST(cancel_stops_between_solver_steps),
        TEST(tau_sets_alpha),
        TEST(damping_and_forces_act_on_velocity),
        TEST(fixed_particles_hold),
        TEST(motion_is_independent_of_units),
        TEST(springs_of_any_stiffness_never_add_energy),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
