/* Colliders (docs/algorithm.md step 7a): static and kinematic planes, boxes and spheres that particles
 * cannot enter, with restitution and friction, in the CPU reference (the OpenCL kernel is
 * checked against it in test_opencl). */
#include "math3.h"
#include "support.h"

#include <stdlib.h>
#include <string.h>

/// Whether (x, y, z) is strictly inside collider `info` by more than `slack`.
static bool inside(const sm_collider_info *info, const double *x, double slack)
{
    const sm_vec3 d = v3(x[0] - info->center.x, x[1] - info->center.y, x[2] - info->center.z);
    switch (info->shape) {
    case SM_COLLIDER_PLANE: return v3_dot(d, v3(info->axes.m[0][1], info->axes.m[1][1], info->axes.m[2][1])) < -slack;
    case SM_COLLIDER_SPHERE: return v3_length(d) < info->radius - slack;
    case SM_COLLIDER_BOX: {
        const sm_vec3 local = m3_apply(m3_transpose(info->axes), d);
        return fabs(local.x) < 0.5 * info->size.x - slack && fabs(local.y) < 0.5 * info->size.y - slack &&
               fabs(local.z) < 0.5 * info->size.z - slack;
    }
    }
    return false;
}

/// After every step no free particle is inside any collider: soft objects thrown at a turned
/// static box, a static sphere and a tilted plane, and squeezed by a plate moving down (0.6 m
/// thick: the squeezed box's goals push its top particles up to 0.22 m in a substep, and a
/// thinner plate would let them through to its upper face).
static void no_particle_inside_a_collider(void)
{
    sm_world *world = world_from_json(
        "{\"substeps\": 2, \"ground\": {}, \"colliders\": ["
        " {\"shape\": \"box\", \"position\": [0, 0.5, 0], \"size\": [1.5, 0.4, 1.5], \"rotation\": [0, 30, 15]},"
        " {\"shape\": \"sphere\", \"position\": [3, 0.5, 0], \"radius\": 0.5},"
        " {\"shape\": \"plane\", \"position\": [-3, 0.2, 0], \"normal\": [0.3, 1, 0]},"
        " {\"shape\": \"box\", \"position\": [6, 2.4, 0], \"size\": [3, 0.6, 3],"
        "  \"motion\": {\"type\": \"linear\", \"times\": [0.5, 1.5], \"offsets\": [[0, 0, 0], [0, -1.9, 0]]}}],"
        " \"objects\": ["
        " {\"shape\": \"box\", \"position\": [0, 2, 0], \"velocity\": [0, -8, 0], \"mode\": \"linear\"},"
        " {\"shape\": \"sphere\", \"spacing\": 0.15, \"position\": [3, 2.5, 0.1], \"velocity\": [0, -5, 0],"
        "  \"mode\": \"quadratic\", \"clusters\": {\"grid\": [2, 2, 2]}},"
        " {\"shape\": \"box\", \"position\": [-3, 2, 0], \"mode\": \"rigid\", \"alpha\": 1},"
        " {\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [6, 0.6, 0], \"mode\": \"linear\", \"damping\": 1}]}");
    if (!world) return;
    const int32_t n = sm_world_get_counts(world).particles, colliders = sm_world_get_collider_count(world);
    ENSURE(colliders == 4);
    int touched[4] = {0, 0, 0, 0};
    const double surface = tolerance(1e-9, 1e-6); // (float: positions rounded to 1e-7 of a metre or so)
    for (int s = 0; s < 120; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        double *x = get_positions(world);
        for (int32_t c = 0; c < colliders; c++) {
            sm_collider_info info;
            ENSURE_OK(sm_world_get_collider(world, c, &info));
            for (int32_t i = 0; i < n; i++) {
                ENSURE(!inside(&info, &x[3 * i], surface));
                touched[c] += !inside(&info, &x[3 * i], -surface); // on the surface
            }
        }
        free(x);
    }
    for (int c = 0; c < 4; c++) ENSURE(touched[c] > 0); // every collider had work
    // the plate came down to 0.2 m above the ground: the squeezed box is at most that thick
    double *x = get_positions(world), top = -INFINITY;
    sm_object_info box;
    ENSURE_OK(sm_world_get_object(world, 3, &box));
    for (int32_t i = box.first_particle; i < box.first_particle + box.particle_count; i++) top = fmax(top, x[3 * i + 1]);
    printf("  squeezed box: highest particle %.4f m (the plate's underside is at 0.2 m)\n", top);
    ENSURE_RANGE(top, 0.0, 0.2 + surface);
    ENSURE(!world_has_nan(world));
    free(x);
    sm_world_destroy(world);
}

/// One free particle isolates the response: moved out along the normal, its approach speed
/// relative to the collider reflected with restitution, its tangential velocity scaled by 1 - mu.
static void impact_applies_restitution_and_friction(void)
{
    // a plane tilted about z: normal n = (sin 30, cos 30, 0)
    sm_world *world = world_from_json(
        "{\"gravity\": [0, 0, 0], \"colliders\": [{\"shape\": \"plane\", \"normal\": [0.5, 0.8660254037844386, 0],"
        " \"restitution\": 0.5, \"friction\": 0.25}],"
        " \"objects\": [{\"shape\": \"points\", \"points\": [[0, 0.01, 0]], \"velocity\": [0, -1, 2], \"mode\": \"rigid\"}]}");
    if (!world) return;
    const double h = 0.1;
    ENSURE_OK(sm_world_step(world, h, 1));
    double x[3], v[3];
    sm_world_get_positions(world, 0, 1, x);
    sm_world_get_velocities(world, 0, 1, v);
    const sm_vec3 n = v3(0.5, 0.8660254037844386, 0.0);
    // on the plane, and v = -e (v.n) n + (1 - mu) (v - (v.n) n) for the incoming v = (0, -1, 2)
    const double exact = tolerance(1e-15, 1e-6); // (float: one rounding of O(1) values)
    ENSURE_SMALL(v3_dot(v3(x[0], x[1], x[2]), n), exact);
    const sm_vec3 v_in = v3(0.0, -1.0, 2.0);
    const double vn = v3_dot(v_in, n);
    const sm_vec3 expected = v3_add(v3_scale(n, -0.5 * vn), v3_scale(v3_sub(v_in, v3_scale(n, vn)), 0.75));
    ENSURE_SMALL(v[0] - expected.x, exact);
    ENSURE_SMALL(v[1] - expected.y, exact);
    ENSURE_SMALL(v[2] - expected.z, exact);
    sm_world_destroy(world);
}

/// A kinematic plate rising at 1 m/s under a resting particle carries it: the particle's
/// velocity becomes the plate's (no restitution), and it stays on the plate's top face.
static void moving_plate_carries_particles(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, -9.81, 0], \"colliders\": [{\"shape\": \"box\", \"position\": [0, -0.1, 0], \"size\": [2, 0.2, 2],"
        " \"restitution\": 0, \"friction\": 1, \"motion\": {\"type\": \"linear\", \"times\": [0, 10], \"offsets\": [[0, 0, 0], [0, 10, 0]]}}],"
        " \"objects\": [{\"shape\": \"points\", \"points\": [[0.3, 0, 0]], \"mode\": \"rigid\"}]}");
    if (!world) return;
    for (int s = 1; s <= 60; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        double x[3], v[3];
        sm_world_get_positions(world, 0, 1, x);
        sm_world_get_velocities(world, 0, 1, v);
        ENSURE_SMALL(x[1] - s / 60.0, tolerance(1e-12, 1e-6)); // the plate's top face is at y = t
        ENSURE_SMALL(v[1] - 1.0, tolerance(1e-12, 1e-4)); // (float: (x(t+h) - x(t)) / h)
        ENSURE_SMALL(x[0] - 0.3, tolerance(1e-12, 1e-6));
    }
    ENSURE_SMALL(sm_world_get_time(world) - 1.0, 1e-12);
    sm_world_destroy(world);
}

/// A particle dropped on a static box bounces back to restitution^2 of its height (elastic: all
/// of it); a sphere collider catches a ball of particles.
static void restitution_sets_the_bounce(void)
{
    const double restitutions[2] = {1.0, 0.5};
    for (int k = 0; k < 2; k++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"gravity\": [0, -10, 0], \"colliders\": [{\"shape\": \"box\", \"size\": [2, 1, 2], \"restitution\": %g,"
                 " \"friction\": 0}], \"objects\": [{\"shape\": \"points\", \"points\": [[0, 1.5, 0]], \"mode\": \"rigid\"}]}",
                 restitutions[k]);
        sm_world *world = world_from_json(json);
        if (!world) return;
        // fall from 1 m above the top face (y = 0.5), then rise: the apex after the bounce
        double apex = -INFINITY;
        bool bounced = false;
        for (int s = 0; s < 3000; s++) {
            ENSURE_OK(sm_world_step(world, 1e-3, 1));
            double x[3], v[3];
            sm_world_get_positions(world, 0, 1, x);
            sm_world_get_velocities(world, 0, 1, v);
            bounced = bounced || v[1] > 0.0;
            if (bounced) apex = fmax(apex, x[1]);
            if (bounced && v[1] < 0.0) break;
        }
        const double expected = 0.5 + restitutions[k] * restitutions[k] * 1.0;
        printf("  restitution %.1f: apex %.4f m (expected %.4f m)\n", restitutions[k], apex, expected);
        ENSURE_RANGE(apex, expected - 0.02, expected + 0.02);
        sm_world_destroy(world);
    }
}

/// The scripted motions: keyframes interpolate linearly and hold outside; the sinusoid follows
/// a sin(2 pi f t + phase) with its derivative as velocity.
static void scripted_motion(void)
{
    sm_world *world = world_from_json(
        "{\"colliders\": [{\"shape\": \"sphere\", \"position\": [1, 2, 3],"
        "  \"motion\": {\"type\": \"linear\", \"times\": [1, 2, 4], \"offsets\": [[0, 0, 0], [2, 0, 0], [2, -4, 0]]}},"
        " {\"shape\": \"box\", \"position\": [0, 1, 0], \"motion\": {\"type\": \"sinusoidal\", \"amplitude\": [0, 0.5, 0],"
        "  \"frequency\": 2, \"phase\": 90}}],"
        " \"objects\": [{\"shape\": \"points\", \"points\": [[0, 100, 0]]}]}");
    if (!world) return;
    const double times[] = {0.5, 1.5, 3.0, 5.0};
    const sm_vec3 where[] = {{1, 2, 3}, {2, 2, 3}, {3, 0, 3}, {3, -2, 3}};
    const sm_vec3 speed[] = {{0, 0, 0}, {2, 0, 0}, {0, -2, 0}, {0, 0, 0}};
    double t = 0.0;
    for (int k = 0; k < 4; k++) {
        ENSURE_OK(sm_world_step(world, times[k] - t, 1));
        t = times[k];
        sm_collider_info a, b;
        ENSURE_OK(sm_world_get_collider(world, 0, &a));
        ENSURE_OK(sm_world_get_collider(world, 1, &b));
        ENSURE_SMALL(v3_length(v3_sub(a.center, where[k])), 1e-12);
        ENSURE_SMALL(v3_length(v3_sub(a.velocity, speed[k])), 1e-12);
        const double angle = 2.0 * SM_PI * 2.0 * t + SM_PI / 2.0;
        ENSURE_SMALL(b.center.y - (1.0 + 0.5 * sin(angle)), 1e-12);
        ENSURE_SMALL(b.velocity.y - 0.5 * 4.0 * SM_PI * cos(angle), 1e-12);
    }
    sm_world_destroy(world);
}

/// Bad colliders are refused with a message naming the collider and the field.
static void bad_colliders_are_refused(void)
{
    static const struct {
        const char *json, *expect;
    } cases[] = {
        {"{\"colliders\": [{\"shape\": \"cone\"}], \"objects\": [{\"shape\": \"box\"}]}", "collider 0: field \"shape\""},
        {"{\"colliders\": [{\"shape\": \"sphere\"}, {\"shape\": \"sphere\", \"radius\": 0}], \"objects\": [{\"shape\": \"box\"}]}",
         "collider 1: field \"radius\""},
        {"{\"colliders\": [{\"shape\": \"plane\", \"normal\": [0, 0, 0]}], \"objects\": [{\"shape\": \"box\"}]}",
         "collider 0: field \"normal\""},
        {"{\"colliders\": [{\"shape\": \"plane\", \"size\": [1, 1, 1]}], \"objects\": [{\"shape\": \"box\"}]}",
         "field \"size\": does not apply"},
        {"{\"colliders\": [{\"shape\": \"box\", \"motion\": {\"type\": \"linear\", \"times\": [1, 1], \"offsets\": [[0,0,0],[0,0,0]]}}],"
         " \"objects\": [{\"shape\": \"box\"}]}",
         "field \"motion.times[1]\""},
        {"{\"colliders\": [{\"shape\": \"box\", \"motion\": {\"type\": \"linear\", \"times\": [1], \"offsets\": []}}],"
         " \"objects\": [{\"shape\": \"box\"}]}",
         "field \"motion.offsets\""},
        {"{\"colliders\": [{\"shape\": \"box\", \"motion\": {\"type\": \"sinusoidal\", \"times\": [1]}}], \"objects\": [{\"shape\": \"box\"}]}",
         "applies to linear motion only"},
        {"{\"colliders\": [{\"shape\": \"box\", \"frition\": 0.1}], \"objects\": [{\"shape\": \"box\"}]}", "did you mean \"friction\""},
        {"{\"springs\": [{\"object\": 1, \"particle\": 0, \"target\": [0, 0, 0]}], \"objects\": [{\"shape\": \"box\"}]}",
         "spring 0: field \"object\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sm_scene *scene = NULL;
        ENSURE(sm_scene_load_string(cases[k].json, "test", &scene) == SM_ERROR_SCENE);
        if (!strstr(sm_last_error(), cases[k].expect)) {
            printf("  case %zu: \"%s\" does not contain \"%s\"\n", k, sm_last_error(), cases[k].expect);
            ENSURE(false);
        }
        sm_scene_destroy(scene);
    }
    // through the API: a def not from its constructor, a sphere without a radius
    sm_world_def wd = sm_world_def_default();
    wd.backend = SM_BACKEND_CPU;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    sm_collider_def cd;
    memset(&cd, 0, sizeof cd);
    ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT);
    cd = sm_collider_def_default();
    cd.shape = SM_COLLIDER_SPHERE;
    cd.radius = -1.0;
    ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(strstr(sm_last_error(), "radius") != NULL);
    ENSURE(sm_world_get_collider_count(world) == 0);
    // a spring's particle beyond its object is caught when the world is made
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"springs\": [{\"object\": 0, \"particle\": 64, \"target\": [0, 0, 0]}],"
                                   " \"objects\": [{\"shape\": \"box\"}]}",
                                   "test", &scene));
    sm_world *bad = NULL;
    ENSURE(sm_scene_create_world(scene, &wd, &bad) == SM_ERROR_SCENE && bad == NULL);
    ENSURE(strstr(sm_last_error(), "spring 0") != NULL);
    sm_scene_destroy(scene);
    sm_world_destroy(world);
}

/// A scene spring pulls its particle toward the target while active, and the particle's force
/// returns to its object's share after it stops.
static void scene_springs_pull(void)
{
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(
        "{\"gravity\": [0, 0, 0], \"springs\": [{\"object\": 0, \"particle\": 0, \"target\": [5, 0, 0], \"stiffness\": 20,"
        " \"damping\": 1, \"stop\": 0.5}], \"objects\": [{\"shape\": \"box\", \"force\": [0, 0, 64]}]}",
        "test", &scene));
    if (!scene) return;
    sm_world_def wd = sm_scene_world_def(scene);
    wd.backend = sm_test_backend;
    sm_world *world = NULL;
    ENSURE_OK(sm_scene_create_world(scene, &wd, &world));
    double x0[3], f[3];
    sm_world_get_positions(world, 0, 1, x0);
    ENSURE_OK(sm_scene_apply(scene, world));
    sm_world_get_forces(world, 0, 1, f);
    // 20 N/m times the distance to the target, plus the particle's share of the object's force (1/64 of it)
    ENSURE_SMALL(f[0] - 20.0 * (5.0 - x0[0]), 1e-12);
    ENSURE_SMALL(f[2] - (20.0 * (0.0 - x0[2]) + 1.0), 1e-12);
    for (int s = 0; s < 60; s++) ENSURE_OK(sm_scene_step(scene, world));
    sm_world_get_forces(world, 0, 1, f);
    ENSURE(f[0] == 0.0 && f[1] == 0.0 && f[2] == 1.0);
    ENSURE(linear_momentum(world, 0).x > 1.0); // the pull moved the box toward +x
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(no_particle_inside_a_collider),
        TEST(impact_applies_restitution_and_friction),
        TEST(moving_plate_carries_particles),
        TEST(restitution_sets_the_bounce),
        TEST(scripted_motion),
        TEST(bad_colliders_are_refused),
        TEST(scene_springs_pull),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
