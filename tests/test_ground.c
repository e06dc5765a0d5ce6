/* The ground plane (docs/algorithm.md step 7) and the pusher (step 7b). */
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

/// One free particle (a single-particle cluster: its goal is itself) isolates step 7 exactly:
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
    const double exact = tolerance(1e-15, 1e-6); // (float: one rounding of O(1) values)
    ENSURE_SMALL(v[1] - 0.5 * 4.0, exact);
    ENSURE_SMALL(v[0] - 0.75 * 2.0, exact);
    ENSURE_SMALL(v[2] - 0.75 * 1.0, exact);
    ENSURE_SMALL(x[0] - 0.2, exact); // the horizontal position keeps this step's motion
    // the fixed particle below the plane is left alone
    ENSURE(x[4] == -1.0 && v[4] == 0.0);
    sm_world_destroy(world);
}

/// The friction limit (docs/algorithm.md steps 7 and 7a): the ground, and a collider, take
/// friction mu of a particle's sliding speed s (relative to the solid, across its normal), but
/// no more than its shape matching gives back in a step from one size rho of its clusters away:
/// after the step the slide is (1 - min(mu, alpha rho / (h s))) s, alpha its object's stiffness
/// in the step. A rigid box of 2x2x2 particles (one cluster, so every particle's size is the
/// half diagonal) slides half into the ground, or into a tilted plane collider moving at up to
/// 5 m/s, at random speeds, restitutions, frictions, stiffnesses (alpha, or tau) and steps (h
/// from 1e-4 to 1 s; seeded), so that the limit binds in some draws and not in others; the
/// particles that stay out keep their velocity.
static void friction_takes_at_most_one_size_a_step(void)
{
    rng r = {20261127};
    int limited = 0, free = 0;
    for (int draw = 0; draw < 40; draw++) {
        const bool collider = draw % 2 == 1;
        const double h = exp(rng_uniform(&r, log(1e-4), log(1.0))), mu = rng_uniform(&r, 0.0, 1.0);
        const double e = rng_uniform(&r, 0.0, 1.0), edge = rng_uniform(&r, 0.05, 2.0);
        // the stiffness: alpha, or a time constant tau (alpha = min(1, h / tau))
        const bool timed = rng_uniform(&r, 0.0, 1.0) < 0.5;
        const double stiffness = timed ? exp(rng_uniform(&r, log(1e-4), log(10.0))) : rng_uniform(&r, 0.01, 1.0);
        const double alpha = timed ? fmin(1.0, h / stiffness) : stiffness;
        char stiff[64];
        snprintf(stiff, sizeof stiff, "\"%s\": %.17g", timed ? "tau" : "alpha", stiffness);
        sm_vec3 n = v3(0.0, 1.0, 0.0), w = v3(0.0, 0.0, 0.0);
        if (collider) {
            v3_direction(v3(rng_uniform(&r, -0.5, 0.5), 1.0, rng_uniform(&r, -0.5, 0.5)), &n);
            w = rng_in_ball(&r, 5.0);
        }
        sm_vec3 side = v3(1.0, 0.0, 0.0);
        v3_direction(v3_cross(n, rng_in_ball(&r, 1.0)), &side);
        // across the normal at 0.01 to 100 times what the limit allows (rho = sqrt 3 edge / 2, the
        // half diagonal: the particles lie at the corners), into the solid at a quarter edge a step
        const double rho = 0.5 * sqrt(3.0) * edge;
        const double slide = exp(rng_uniform(&r, log(0.01), log(100.0))) * alpha * rho / h;
        const sm_vec3 v = v3_add(v3_add(w, v3_scale(side, slide)), v3_scale(n, -0.25 * edge / h));
        char json[2048];
        if (collider) {
            // the plane passes through the box's centre at the end of the step
            snprintf(json, sizeof json,
                     "{\"gravity\": [0, 0, 0], \"colliders\": [{\"shape\": \"plane\", \"position\": [%.17g, %.17g, %.17g],"
                     " \"normal\": [%.17g, %.17g, %.17g], \"restitution\": %.17g, \"friction\": %.17g,"
                     " \"motion\": {\"type\": \"linear\", \"times\": [0, 1], \"offsets\": [[0, 0, 0], [%.17g, %.17g, %.17g]]}}],"
                     " \"objects\": [{\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [2, 2, 2],"
                     " \"mode\": \"rigid\", %s, \"velocity\": [%.17g, %.17g, %.17g]}]}",
                     h * v.x - h * w.x, h * v.y - h * w.y, h * v.z - h * w.z, n.x, n.y, n.z, e, mu, w.x, w.y, w.z, edge, edge,
                     edge, stiff, v.x, v.y, v.z);
        } else {
            snprintf(json, sizeof json,
                     "{\"gravity\": [0, 0, 0], \"ground\": {\"height\": %.17g, \"restitution\": %.17g, \"friction\": %.17g},"
                     " \"objects\": [{\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [2, 2, 2],"
                     " \"mode\": \"rigid\", %s, \"velocity\": [%.17g, %.17g, %.17g]}]}",
                     h * v.y, e, mu, edge, edge, edge, stiff, v.x, v.y, v.z);
        }
        sm_world *world = world_from_json(json);
        if (!world) return;
        double x0[24], u[24];
        sm_world_get_positions(world, 0, 8, x0);
        ENSURE_SMALL(v3_length(v3(x0[0], x0[1], x0[2])) - rho, 1e-12 * rho);
        ENSURE_OK(sm_world_step(world, h, 1));
        sm_world_get_velocities(world, 0, 8, u);
        const double share = fmin(mu, alpha * rho / (h * slide)), scale = v3_length(v) + v3_length(w);
        int touched = 0;
        for (int i = 0; i < 8; i++) {
            const sm_vec3 start = v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), after = v3(u[3 * i], u[3 * i + 1], u[3 * i + 2]);
            // inside the solid at the end of the step: its side of the box's centre (the origin at
            // the start), where the plane is then
            const bool inside = v3_dot(start, n) < 0.0;
            sm_vec3 expected = v;
            if (inside) {
                touched++;
                const sm_vec3 relative = v3_sub(v, w);
                const double normal = v3_dot(relative, n);
                const sm_vec3 across = v3_sub(relative, v3_scale(n, normal));
                expected = v3_add(v3_add(w, v3_scale(n, -e * normal)), v3_scale(across, 1.0 - share));
            }
            ENSURE_SMALL(v3_length(v3_sub(after, expected)) / scale, tolerance(1e-9, 1e-4));
        }
        ENSURE(touched == 4);
        if (mu > share) limited++;
        else free++;
        sm_world_destroy(world);
    }
    printf("  %d draws where the limit binds, %d where friction acts whole\n", limited, free);
    ENSURE(limited >= 10 && free >= 10);
}

/// The pusher (Henriques & Wuensche 2007, 3.2): after a step no free particle is inside the
/// sphere, those it held are on its surface along the line from its centre, their inward
/// velocity relative to the sphere is gone, and a sphere moving through a resting box carries
/// the particles it touches along at its speed. Removing it leaves the particles alone.
static void pusher_pushes_particles_out(void)
{
    sm_world *world = world_from_json("{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [6, 6, 6],"
                                      " \"mode\": \"linear\", \"alpha\": 0.2}]}");
    if (!world) return;
    const int32_t n = sm_world_get_counts(world).particles;
    const sm_vec3 velocity = {3.0, 0.0, 0.0};
    sm_pusher pusher = {.enabled = true, .center = {-0.5, 0.13, 0.02}, .radius = 0.3, .velocity = velocity};
    ENSURE_OK(sm_world_set_pusher(world, &pusher));
    const double h = 1.0 / 60.0;
    for (int s = 0; s < 10; s++) {
        ENSURE_OK(sm_world_step(world, h, 1));
        double *x = get_positions(world), *v = get_velocities(world);
        int touched = 0;
        const double surface = tolerance(1e-12, 1e-6); // (float: positions rounded to 1e-7 of a metre or so)
        for (int32_t i = 0; i < n; i++) {
            const sm_vec3 d = v3(x[3 * i] - pusher.center.x, x[3 * i + 1] - pusher.center.y, x[3 * i + 2] - pusher.center.z);
            const double distance = v3_length(d);
            ENSURE(distance >= pusher.radius * (1.0 - surface));
            if (distance > pusher.radius * (1.0 + surface)) continue;
            touched++;
            // on the surface: no approach toward the sphere's centre relative to its motion
            const sm_vec3 n_out = v3_scale(d, 1.0 / distance);
            ENSURE(v3_dot(v3_sub(v3(v[3 * i], v[3 * i + 1], v[3 * i + 2]), velocity), n_out) >= -surface / h);
        }
        ENSURE(touched > 0);
        free(x), free(v);
        pusher.center = v3_add(pusher.center, v3_scale(velocity, h));
        ENSURE_OK(sm_world_set_pusher(world, &pusher));
    }
    // the box was pushed along +x by a sphere moving at 3 m/s for 1/6 s: its centre of mass moved
    const sm_vec3 p = linear_momentum(world, 0);
    printf("  momentum after the push: (%.3f, %.3f, %.3f) kg m/s\n", p.x, p.y, p.z);
    ENSURE(p.x > 0.1);
    // removed: a step moves particles only by their velocities and goals, as without it
    pusher.enabled = false;
    ENSURE_OK(sm_world_set_pusher(world, &pusher));
    sm_world *twin = world_from_json("{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [6, 6, 6],"
                                     " \"mode\": \"linear\", \"alpha\": 0.2}]}");
    if (!twin) return;
    ENSURE_OK(sm_world_copy_state(twin, world));
    ENSURE_OK(sm_world_step(world, h, 1));
    ENSURE_OK(sm_world_step(twin, h, 1));
    double *a = get_positions(world), *b = get_positions(twin);
    for (int32_t i = 0; i < 3 * n; i++) ENSURE(a[i] == b[i]);
    free(a), free(b);
    // bad spheres are refused
    pusher = (sm_pusher){.enabled = true, .radius = 0.0};
    ENSURE(sm_world_set_pusher(world, &pusher) == SM_ERROR_INVALID_ARGUMENT);
    sm_world_destroy(twin);
    sm_world_destroy(world);
}

/// An object's mode, alpha and beta change while the world runs: a scrambled linear box
/// switched to rigid with alpha 1 snaps to a rigid motion of its rest shape in one step
/// (paper 3.3: alpha 1 moves particles to their goals), switching to quadratic works for an
/// object created linear, and bad values are refused with the old ones kept.
static void object_params_change_while_running(void)
{
    sm_world *world = world_from_json("{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4],"
                                      " \"mode\": \"linear\", \"alpha\": 0.1, \"beta\": 0.5}]}");
    if (!world) return;
    rng r = {7};
    scramble(world, 0, 0.2, &r);
    const double before = rigid_fit_rms(world, 0);
    sm_object_params params;
    ENSURE_OK(sm_world_get_object_params(world, 0, &params));
    ENSURE(params.mode == SM_MODE_LINEAR && params.alpha == 0.1 && params.beta == 0.5);
    params.mode = SM_MODE_RIGID;
    params.alpha = 1.0;
    ENSURE_OK(sm_world_set_object_params(world, 0, &params));
    ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    const double after = rigid_fit_rms(world, 0);
    printf("  rigid-fit RMS %.3g m before, %.3g m after one rigid step with alpha 1\n", before, after);
    ENSURE(before > 0.02);
    ENSURE_SMALL(after, tolerance(1e-9, 1e-6));

    params.mode = SM_MODE_QUADRATIC;
    params.alpha = 0.5;
    params.beta = 0.8;
    ENSURE_OK(sm_world_set_object_params(world, 0, &params));
    scramble(world, 0, 0.1, &r);
    for (int s = 0; s < 30; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    ENSURE(!world_has_nan(world));
    sm_object_info info;
    ENSURE_OK(sm_world_get_object(world, 0, &info));
    ENSURE(info.mode == SM_MODE_QUADRATIC);

    sm_object_params bad = params;
    bad.alpha = 1.5;
    ENSURE(sm_world_set_object_params(world, 0, &bad) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(sm_world_set_object_params(world, 1, &params) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE_OK(sm_world_get_object_params(world, 0, &bad));
    ENSURE(bad.alpha == 0.5 && bad.beta == 0.8);
    sm_world_destroy(world);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(no_particle_below_the_ground),
        TEST(dropped_box_comes_to_rest),
        TEST(impact_applies_restitution_and_friction),
        TEST(friction_takes_at_most_one_size_a_step),
        TEST(pusher_pushes_particles_out),
        TEST(object_params_change_while_running),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
