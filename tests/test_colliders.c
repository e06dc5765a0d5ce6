/* Colliders (docs/algorithm.md step 7a): static and kinematic planes, boxes, spheres and triangle
 * meshes that particles cannot enter, with restitution and friction, on both backends. */
#include "math3.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SM_SCENES_DIR
#define SM_SCENES_DIR "scenes"
#endif

/// The distance from p to triangle abc (an independent check of the library's fields: the
/// nearest of the triangle's plane point inside it, its edges and its corners).
static double triangle_distance(sm_vec3 p, sm_vec3 a, sm_vec3 b, sm_vec3 c)
{
    const sm_vec3 n = v3_cross(v3_sub(b, a), v3_sub(c, a));
    const double area2 = v3_dot(n, n);
    if (area2 > 0.0) {
        const double t = v3_dot(v3_sub(p, a), n) / area2;
        const sm_vec3 q = v3_sub(p, v3_scale(n, t)); // p projected onto the plane
        const double u = v3_dot(v3_cross(v3_sub(c, b), v3_sub(q, b)), n), v = v3_dot(v3_cross(v3_sub(a, c), v3_sub(q, c)), n);
        const double w = v3_dot(v3_cross(v3_sub(b, a), v3_sub(q, a)), n);
        if (u >= 0.0 && v >= 0.0 && w >= 0.0) return fabs(t) * sqrt(area2);
    }
    const sm_vec3 ends[3][2] = {{a, b}, {b, c}, {c, a}};
    double best = INFINITY;
    for (int e = 0; e < 3; e++) {
        const sm_vec3 d = v3_sub(ends[e][1], ends[e][0]);
        const double len2 = v3_dot(d, d);
        const double t = len2 > 0.0 ? fmin(1.0, fmax(0.0, v3_dot(v3_sub(p, ends[e][0]), d) / len2)) : 0.0;
        best = fmin(best, v3_length(v3_sub(p, v3_add(ends[e][0], v3_scale(d, t)))));
    }
    return best;
}

/// A path in the tests' scratch folder for `name`, one per backend: the CPU and OpenCL runs of
/// this program run side by side.
static const char *scratch_path(const char *name, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s/%s_%s", SM_TEST_TMP, sm_test_backend == SM_BACKEND_OPENCL ? "opencl" : "cpu", name);
    return buffer;
}

/// Writes a box of half extents (x, y, z) centred on the origin as an OBJ file at `path`, its
/// faces wound outward; false when it cannot.
static bool write_box_obj(const char *path, double x, double y, double z)
{
    char text[1024];
    snprintf(text, sizeof text,
             "v %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\n"
             "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 4 8 7\nf 4 7 3\nf 1 5 8\nf 1 8 4\nf 2 3 7\nf 2 7 6\n",
             -x, -y, -z, x, -y, -z, x, y, -z, -x, y, -z, -x, -y, z, x, -y, z, x, y, z, -x, y, z);
    return write_text_file(path, text);
}

/// How deep p lies inside mesh collider c of the world: its distance to the nearest triangle when
/// the mesh's winding number about it (sm_mesh_winding_number()) says inside, else 0.
static double mesh_depth(const sm_world *world, int32_t c, const sm_collider_info *info, const double *x)
{
    const sm_vec3 *vertices;
    const int32_t *triangles;
    int32_t vertex_count, triangle_count;
    if (sm_world_get_collider_mesh(world, c, &vertices, &vertex_count, &triangles, &triangle_count) != SM_OK) return INFINITY;
    const sm_vec3 p = v3(x[0] - info->center.x, x[1] - info->center.y, x[2] - info->center.z);
    const sm_mesh mesh = {(sm_vec3 *)vertices, vertex_count, (int32_t *)triangles, triangle_count};
    if (!(sm_mesh_winding_number(&mesh, p) > 0.5)) return 0.0;
    double depth = INFINITY;
    for (int32_t t = 0; t < triangle_count; t++)
        depth = fmin(depth, triangle_distance(p, vertices[triangles[3 * t]], vertices[triangles[3 * t + 1]],
                                              vertices[triangles[3 * t + 2]]));
    return depth;
}

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
    case SM_COLLIDER_MESH: return false; // (inside_mesh())
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
/// relative to the collider reflected with restitution, its tangential velocity t reduced by mu
/// times the smaller of |t| and the normal speed taken away (Coulomb's law: here the smaller).
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
    // on the plane, and v = -e (v.n) n + t - mu min(|t|, (1 + e) |v.n|) t / |t| for the incoming
    // v = (0, -1, 2), t = v - (v.n) n its tangential part (|t| 2.06, (1 + e) |v.n| 1.30)
    const double exact = tolerance(1e-15, 1e-6); // (float: one rounding of O(1) values)
    ENSURE_SMALL(v3_dot(v3(x[0], x[1], x[2]), n), exact);
    const sm_vec3 v_in = v3(0.0, -1.0, 2.0);
    const double vn = v3_dot(v_in, n);
    const sm_vec3 t = v3_sub(v_in, v3_scale(n, vn));
    const double pressed = -1.5 * vn, slide = v3_length(t);
    ENSURE(pressed < slide); // (Coulomb's bound acts)
    const sm_vec3 expected = v3_add(v3_scale(n, -0.5 * vn), v3_scale(t, 1.0 - 0.25 * pressed / slide));
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
        // a number refused for its range is shown as it was given, not rounded onto the bound
        {"{\"colliders\": [{\"shape\": \"plane\", \"restitution\": 1.0000001}], \"objects\": [{\"shape\": \"box\"}]}",
         "got 1.0000001"},
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
    // a plane's normal of any finite length but zero: 1e200 once overflowed its length, turning
    // the normal to 0 and the plane off (the box fell through); 1e-200 was refused as zero
    for (int k = 0; k < 2; k++) {
        char json[256];
        snprintf(json, sizeof json, "{\"colliders\": [{\"shape\": \"plane\", \"normal\": [0, %s, 0]}],"
                 " \"objects\": [{\"shape\": \"box\", \"position\": [0, 1, 0]}]}", k == 0 ? "1e200" : "1e-200");
        sm_world *plane = world_from_json(json);
        if (!plane) continue;
        sm_collider_info info;
        ENSURE_OK(sm_world_get_collider(plane, 0, &info));
        ENSURE_SMALL(info.axes.m[1][1] - 1.0, 1e-15);
        for (int s = 0; s < 120; s++) ENSURE_OK(sm_world_step(plane, 1.0 / 60.0, 1));
        double *x = get_positions(plane), lowest = INFINITY;
        for (int32_t i = 0; i < 64; i++) lowest = fmin(lowest, x[3 * i + 1]);
        ENSURE(lowest > -1e-3);
        free(x);
        sm_world_destroy(plane);
    }
}

/// A scene spring pulls its particle toward the target while active: it sets the particle's
/// target (step 4d) and its force, the object's share plus the spring's damping; after it stops
/// the particle has no target and its force is its object's share again.
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
    double f[3], target[4];
    ENSURE_OK(sm_scene_apply(scene, world));
    sm_world_get_forces(world, 0, 1, f);
    sm_world_get_targets(world, 0, 1, target);
    // 20 N/m toward (5, 0, 0); at rest the damping adds nothing to the particle's share of the
    // object's force (1/64 of it)
    ENSURE(target[0] == 5.0 && target[1] == 0.0 && target[2] == 0.0 && target[3] == 20.0);
    ENSURE(f[0] == 0.0 && f[1] == 0.0 && f[2] == 1.0);
    for (int s = 0; s < 3; s++) ENSURE_OK(sm_scene_step(scene, world));
    // moving, the damping: -c v / (1 + dt c / m), backward Euler's over the frame (m = 1/64 kg;
    // on OpenCL the force is read back as a float)
    double v[3];
    ENSURE_OK(sm_scene_apply(scene, world));
    sm_world_get_forces(world, 0, 1, f);
    sm_world_get_velocities(world, 0, 1, v);
    const double dt = sm_scene_get_info(scene).dt, damp = 1.0 / (1.0 + dt * 64.0);
    ENSURE(v[0] > 0.0);
    for (int a = 0; a < 3; a++) ENSURE_SMALL(f[a] - ((a == 2 ? 1.0 : 0.0) - damp * v[a]), tolerance_exact());
    for (int s = 0; s < 60; s++) ENSURE_OK(sm_scene_step(scene, world));
    sm_world_get_forces(world, 0, 1, f);
    sm_world_get_targets(world, 0, 1, target);
    ENSURE(f[0] == 0.0 && f[1] == 0.0 && f[2] == 1.0 && target[3] == 0.0);
    ENSURE(linear_momentum(world, 0).x > 1.0); // the pull moved the box toward +x
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}


/* ---- Mesh colliders ---------------------------------------------------------------------- */

/// A pile in a closed mesh: twelve soft boxes, in contact (placed apart), dropped into a solid bowl
/// (scenes/meshes/bowl.obj); over 1,000 steps no particle ends a step inside the bowl's wall by
/// more than half the field's cell (measured 0.25 of it: the field is trilinear between its
/// nodes, and one step along its gradient puts a particle on that interpolant's zero level, a
/// fraction of a cell from the faceted wall), judged by the mesh's winding number and its
/// triangles, not by the field; and every particle ends in the cup, on its floor or above. (The
/// sanitizer stage shortens the run to $SM_STRESS_STEPS steps, and valgrind to 100.)
static void no_particle_ends_inside_a_closed_mesh(void)
{
    char json[4096];
    int o = snprintf(json, sizeof json,
                     "{\"substeps\": 2, \"collisions\": {}, \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s/meshes/bowl.obj\","
                     " \"position\": [0, 1.2, 0], \"center\": false, \"friction\": 0.4}], \"objects\": [",
                     SM_SCENES_DIR);
    for (int k = 0; k < 12; k++)
        o += snprintf(json + o, sizeof json - (size_t)o,
                      "%s{\"shape\": \"box\", \"size\": [0.3, 0.3, 0.3], \"resolution\": [3, 3, 3], \"mode\": \"linear\","
                      " \"position\": [%g, %g, %g], \"damping\": 0.5}",
                      k ? ", " : "", 0.5 * (k % 3) - 0.5, 1.6 + 0.5 * (k / 6), 0.5 * (k / 3 % 2) - 0.25);
    snprintf(json + o, sizeof json - (size_t)o, "]}");
    sm_world *world = world_from_json(json);
    if (!world) return;
    sm_collider_info info;
    ENSURE_OK(sm_world_get_collider(world, 0, &info));
    ENSURE(info.shape == SM_COLLIDER_MESH && info.closed);
    const int32_t n = sm_world_get_counts(world).particles;
    const double slack = 0.5 * info.cell;
    const char *shorter = getenv("SM_STRESS_STEPS");
    const int steps = shorter && atoi(shorter) > 0 && atoi(shorter) < 1000 ? atoi(shorter) : 1000;
    double deepest = 0.0;
    for (int s = 1; s <= steps; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        if (s % 5 && s != steps) continue;
        double *x = get_positions(world);
        for (int32_t i = 0; i < n; i++) deepest = fmax(deepest, mesh_depth(world, 0, &info, &x[3 * i]));
        free(x);
    }
    double *x = get_positions(world), lowest = INFINITY, widest = 0.0;
    for (int32_t i = 0; i < n; i++) lowest = fmin(lowest, x[3 * i + 1]), widest = fmax(widest, hypot(x[3 * i], x[3 * i + 2]));
    printf("  %d particles, cell %.4f m: the deepest inside the wall %.5f m (bound %.4f); lowest %.3f m (the cup's floor:"
           " 0.2 m), farthest from the axis %.3f m (the cup: 1.0 m)\n",
           n, info.cell, deepest, slack, lowest, widest);
    ENSURE(deepest <= slack);
    if (steps >= 300) ENSURE_RANGE(lowest, 0.2 - slack, 0.35); // on the cup's floor (by then)
    ENSURE(widest < 1.0);
    ENSURE(!world_has_nan(world));
    free(x);
    sm_world_destroy(world);
}

/// A box dropped on the stairs' top step (scenes/meshes/stairs.obj) comes to rest on it, as it
/// does on a box collider of the same top face: lowest particle on the step, motionless, and
/// where the box collider leaves it to a fraction of the field's cell.
static void a_box_comes_to_rest_on_a_mesh(void)
{
    double rest[2][3];
    for (int mesh = 0; mesh < 2; mesh++) {
        char json[1024], collider[256];
        if (mesh)
            snprintf(collider, sizeof collider, "\"shape\": \"mesh\", \"mesh\": \"%s/meshes/stairs.obj\", \"center\": false",
                     SM_SCENES_DIR);
        else snprintf(collider, sizeof collider, "\"shape\": \"box\", \"position\": [1, 0.5, 0], \"size\": [2, 1, 1.5]");
        snprintf(json, sizeof json,
                 "{\"substeps\": 2, \"ground\": {}, \"colliders\": [{%s, \"friction\": 0.5, \"restitution\": 0}],"
                 " \"objects\": [{\"shape\": \"box\", \"size\": [0.3, 0.3, 0.3], \"resolution\": [4, 4, 4], \"position\": [1.75, 1.6, 0],"
                 " \"mode\": \"linear\", \"damping\": 5}]}",
                 collider);
        sm_world *world = world_from_json(json);
        if (!world) return;
        for (int s = 0; s < 240; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        double *x = get_positions(world), lowest = INFINITY, mean[3] = {0, 0, 0};
        const int32_t n = sm_world_get_counts(world).particles;
        for (int32_t i = 0; i < n; i++) {
            lowest = fmin(lowest, x[3 * i + 1]);
            for (int a = 0; a < 3; a++) mean[a] += x[3 * i + a] / n;
        }
        const double speed = max_speed(world, 0);
        printf("  on the %s after 4 s: lowest particle %.5f m (the step: 1.0 m), fastest %.2e m/s, centre (%.4f, %.4f, %.4f)\n",
               mesh ? "mesh" : "box collider", lowest, speed, mean[0], mean[1], mean[2]);
        ENSURE_RANGE(lowest, 1.0 - 0.01, 1.0 + 0.01);
        ENSURE(speed < 0.005);
        memcpy(rest[mesh], mean, sizeof mean);
        free(x);
        sm_world_destroy(world);
    }
    for (int a = 0; a < 3; a++) ENSURE_SMALL(rest[1][a] - rest[0][a], 0.005);
}

/// A kinematic mesh carries what rests on it: the stairs slide 1 m along z in 2 s under a box
/// resting on a step, and the box goes with them (friction 1), staying on the step.
static void a_kinematic_mesh_carries_what_rests_on_it(void)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"substeps\": 2, \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s/meshes/stairs.obj\", \"center\": false,"
             " \"friction\": 1, \"restitution\": 0, \"motion\": {\"type\": \"linear\", \"times\": [1, 3], \"offsets\": [[0, 0, 0], [0, 0, 1]]}}],"
             " \"objects\": [{\"shape\": \"box\", \"size\": [0.3, 0.3, 0.3], \"resolution\": [3, 3, 3], \"position\": [1.25, 0.95, 0],"
             " \"mode\": \"linear\", \"damping\": 0.5}]}",
             SM_SCENES_DIR);
    sm_world *world = world_from_json(json);
    if (!world) return;
    const int32_t n = sm_world_get_counts(world).particles;
    double before = 0.0, after = 0.0, lowest = INFINITY;
    for (int s = 1; s <= 240; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        if (s == 60 || s == 240) {
            double *x = get_positions(world), mean = 0.0;
            for (int32_t i = 0; i < n; i++) mean += x[3 * i + 2] / n, lowest = s == 240 ? fmin(lowest, x[3 * i + 1]) : lowest;
            *(s == 60 ? &before : &after) = mean;
            free(x);
        }
    }
    printf("  the stairs moved 1 m along z; the box %.4f m, its lowest particle at %.4f m (the step: 0.75 m)\n", after - before,
           lowest);
    ENSURE_RANGE(after - before, 0.95, 1.02);
    ENSURE_RANGE(lowest, 0.7, 0.8);
    sm_world_destroy(world);
}

/// The tunnelling bound: a particle that crosses less than half a solid's thickness minus a cell
/// in one solver step (v h < t / 2 - cell) is pushed back out the side it came in; one that
/// crosses most of the thickness in a step comes out the far side. Particles fired at a closed
/// slab 0.4 m thick (cell 0.02 m) from 30 random directions and offsets at random speeds under
/// the bound never pass; at 1.8 times the thickness per step, they all do.
static void the_tunnelling_bound_holds(void)
{
    char slab_path[512];
    const char *slab = scratch_path("slab.obj", slab_path, sizeof slab_path);
    const bool written = write_box_obj(slab, 2.0, 0.2, 2.0); // a 4 x 0.4 x 4 m box
    ENSURE(written);
    if (!written) return;
    const double thickness = 0.4, cell = 0.02, h = 1.0 / 60.0;
    rng r = {29};
    for (int fast = 0; fast < 2; fast++) {
        char json[16384];
        int o = snprintf(json, sizeof json,
                         "{\"gravity\": [0, 0, 0], \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s\", \"cell\": %g,"
                         " \"restitution\": 0, \"friction\": 0}], \"objects\": [",
                         slab, cell);
        for (int k = 0; k < 30; k++) {
            // from above, toward the slab, tilted up to 45 degrees off its normal
            const double step = fast ? 1.8 * thickness : rng_uniform(&r, 0.1, 1.0) * (0.5 * thickness - cell);
            const double tilt = rng_uniform(&r, 0.0, 0.785), turn = rng_uniform(&r, 0.0, 6.283);
            const sm_vec3 dir = v3(sin(tilt) * cos(turn), -cos(tilt), sin(tilt) * sin(turn));
            const double speed = step / h / fabs(dir.y); // crossing `step` of the thickness in a step
            // in front of the face by less than a step; a fast one near enough to end beyond the slab
            const double start = 0.2 + rng_uniform(&r, 0.001, fast ? 0.4 : 0.999) * step;
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "%s{\"shape\": \"points\", \"points\": [[%.9g, %.9g, %.9g]], \"velocity\": [%.9g, %.9g, %.9g], \"mode\": \"rigid\"}",
                          k ? ", " : "", rng_uniform(&r, -1.0, 1.0), start, rng_uniform(&r, -1.0, 1.0), speed * dir.x, speed * dir.y,
                          speed * dir.z);
        }
        snprintf(json + o, sizeof json - (size_t)o, "]}");
        sm_world *world = world_from_json(json);
        if (!world) return;
        ENSURE_OK(sm_world_step(world, h, 1));
        double *x = get_positions(world);
        int through = 0, above = 0;
        for (int k = 0; k < 30; k++) through += x[3 * k + 1] < -0.2, above += x[3 * k + 1] >= 0.2 - 1e-6;
        printf("  %s: %d of 30 passed through, %d pushed back out on top\n", fast ? "1.8 thicknesses a step" : "under the bound",
               through, above);
        ENSURE(fast ? through == 30 : (through == 0 && above == 30));
        free(x);
        sm_world_destroy(world);
    }
    remove(slab);
}

/// The bound near edges and corners: particles entering a solid cube (a mesh of 2 m) anywhere on
/// its faces, edges and corners included, tilted up to 57 degrees, crossing 5% to 90% of half its
/// thickness less a cell in a step, end within half a cell of its surface and never beyond its
/// far side. Moved once by their depth along the field's gradient, which near an edge blends the
/// faces', 11 of 200 ended two to five cells inside and went on through the cube; the move is
/// now repeated from where it ends (SM_SDF_PUSH_MOVES).
static void the_tunnelling_bound_holds_at_edges(void)
{
    char cube_path[512];
    const char *cube = scratch_path("cube2.obj", cube_path, sizeof cube_path);
    const bool written = write_box_obj(cube, 1.0, 1.0, 1.0);
    ENSURE(written);
    if (!written) return;
    const double h = 1.0 / 60.0, cell = 2.0 / 64.0;
    rng r = {71};
    enum { COUNT = 100 };
    char json[32768];
    int o = snprintf(json, sizeof json,
                     "{\"gravity\": [0, 0, 0], \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s\", \"cell\": %g,"
                     " \"restitution\": 0, \"friction\": 0}], \"objects\": [", cube, cell);
    int axis[COUNT];
    double side[COUNT];
    for (int k = 0; k < COUNT; k++) {
        double p[3], d[3];
        axis[k] = (int)rng_uniform(&r, 0, 3), side[k] = rng_uniform(&r, 0, 1) < 0.5 ? -1.0 : 1.0;
        for (int a = 0; a < 3; a++) p[a] = rng_uniform(&r, -0.999, 0.999), d[a] = rng_uniform(&r, -1, 1);
        p[axis[k]] = side[k] * 1.001;
        d[axis[k]] = 0.0;
        const double norm = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), tilt = rng_uniform(&r, 0, 1.0);
        for (int a = 0; a < 3; a++) d[a] = norm > 0.0 ? d[a] / norm * sin(tilt) : 0.0;
        d[axis[k]] = -side[k] * cos(tilt);
        const double step = rng_uniform(&r, 0.05, 0.9) * (1.0 - cell);
        o += snprintf(json + o, sizeof json - (size_t)o,
                      "%s{\"shape\": \"points\", \"points\": [[%.9g, %.9g, %.9g]], \"velocity\": [%.9g, %.9g, %.9g],"
                      " \"mode\": \"rigid\"}", k ? ", " : "", p[0], p[1], p[2], d[0] * step / h, d[1] * step / h, d[2] * step / h);
    }
    snprintf(json + o, sizeof json - (size_t)o, "]}");
    sm_world *world = world_from_json(json);
    remove(cube);
    if (!world) return;
    sm_collider_info info;
    ENSURE_OK(sm_world_get_collider(world, 0, &info));
    ENSURE_OK(sm_world_step(world, h, 1));
    double *x = get_positions(world), deepest = 0.0;
    int through = 0;
    for (int k = 0; k < COUNT; k++) {
        deepest = fmax(deepest, mesh_depth(world, 0, &info, &x[3 * k]));
        through += side[k] * x[3 * k + axis[k]] < -1.0 + 1e-9; // beyond the far face
    }
    printf("  %d particles into a cube's faces, edges and corners: the deepest %.4f m inside (half a cell: %.4f), %d through\n",
           COUNT, deepest, 0.5 * info.cell, through);
    ENSURE(deepest <= 0.5 * info.cell && through == 0);
    free(x);
    sm_world_destroy(world);
}

/// A closed mesh holds what falls on it, whatever else its file holds: a cube with a triangle of
/// no area on its top face (its corners on a line: it bounds nothing) is still closed, so solid
/// (its three edges once opened it into a shell a box fell through), and a closed slab of 1 cm,
/// thinner than the field's cells of 6.25 cm, has no node inside it and is taken as a shell, with
/// a warning (its field said nothing was inside, and a box fell through it).
static void degenerate_and_thin_closed_meshes_hold(void)
{
    char buffer[512];
    const char *path = scratch_path("closed.obj", buffer, sizeof buffer);
    // a 1 m cube and a sliver on its top face's line y = 0.5; a slab 4 m wide and 1 cm thick
    static const char cube_and_sliver[] =
        "v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\nv -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\n"
        "v -0.5 0.5 0.5\nv 0 0.5 0\nv 0.25 0.5 0\nv 0.3 0.5 0\nf 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n"
        "f 4 8 7\nf 4 7 3\nf 1 5 8\nf 1 8 4\nf 2 3 7\nf 2 7 6\nf 9 10 11\n";
    for (int k = 0; k < 2; k++) {
        ENSURE(k == 0 ? write_text_file(path, cube_and_sliver) : write_box_obj(path, 2.0, 0.005, 2.0));
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"ground\": {\"height\": -3}, \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s\", \"restitution\": 0%s}],"
                 " \"objects\": [{\"shape\": \"box\", \"size\": [0.2, 0.2, 0.2], \"resolution\": [3, 3, 3],"
                 " \"position\": [0.05, %s, 0.05], \"damping\": 1}]}",
                 path, k == 1 ? ", \"cell\": 0.0625" : "", k == 0 ? "0.75" : "0.2");
        sm_world *world = world_from_json(json);
        remove(path);
        if (!world) continue;
        sm_collider_info info;
        ENSURE_OK(sm_world_get_collider(world, 0, &info));
        ENSURE(info.closed == (k == 0));
        for (int s = 0; s < 120; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        double *x = get_positions(world), lowest = INFINITY;
        for (int32_t i = 0; i < 27; i++) lowest = fmin(lowest, x[3 * i + 1]);
        printf("  %s: the box's lowest particle at %.4f m\n", k == 0 ? "a cube with a sliver (solid)" : "a slab of 1 cm (a shell)",
               lowest);
        ENSURE(lowest > (k == 0 ? 0.45 : 0.0)); // on the cube's top (0.5 m), on the slab's shell
        free(x);
        sm_world_destroy(world);
    }
    // the library's count of open edges leaves the sliver out
    const sm_vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}};
    const int32_t sliver[3] = {0, 1, 2}, real[3] = {0, 1, 3};
    const sm_mesh line = {(sm_vec3 *)v, 4, (int32_t *)sliver, 1}, triangle = {(sm_vec3 *)v, 4, (int32_t *)real, 1};
    ENSURE(sm_mesh_open_edges(&line) == 0 && sm_mesh_open_edges(&triangle) == 3);
}

/// An open mesh is a shell: a box dropped on a single square (two triangles, open at its four
/// edges) of thickness 0.1 m rests on its upper face, half the thickness above the square.
static void an_open_mesh_is_a_shell(void)
{
    char square_path[512];
    const char *square = scratch_path("square.obj", square_path, sizeof square_path);
    const bool written = write_text_file(square, "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 3 2\nf 1 4 3\n");
    ENSURE(written);
    if (!written) return;
    char json[1024];
    snprintf(json, sizeof json,
             "{\"substeps\": 2, \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"%s\", \"position\": [0, 0.5, 0], \"thickness\": 0.1,"
             " \"cell\": 0.02, \"friction\": 0.5, \"restitution\": 0}],"
             " \"objects\": [{\"shape\": \"box\", \"size\": [0.3, 0.3, 0.3], \"resolution\": [4, 4, 4], \"position\": [0.2, 1.2, -0.1],"
             " \"mode\": \"linear\", \"damping\": 5}]}",
             square);
    sm_world *world = world_from_json(json);
    remove(square);
    if (!world) return;
    sm_collider_info info;
    ENSURE_OK(sm_world_get_collider(world, 0, &info));
    ENSURE(!info.closed);
    for (int s = 0; s < 180; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
    double *x = get_positions(world), lowest = INFINITY;
    const int32_t n = sm_world_get_counts(world).particles;
    for (int32_t i = 0; i < n; i++) lowest = fmin(lowest, x[3 * i + 1]);
    printf("  an open square at 0.5 m, a shell 0.1 m thick: the box's lowest particle at %.4f m (its face: 0.55 m), fastest %.1e m/s\n",
           lowest, max_speed(world, 0));
    ENSURE_RANGE(lowest, 0.55 - 0.25 * info.cell, 0.55 + 0.25 * info.cell);
    ENSURE(max_speed(world, 0) < 0.005);
    free(x);
    sm_world_destroy(world);
}

/// Bad mesh colliders are refused with a message naming the field or the figures.
static void bad_mesh_colliders_are_refused(void)
{
    static const struct {
        const char *fields, *expect;
    } cases[] = {
        {"\"mesh\": \"/nonexistent/bowl.obj\"", "field \"mesh\""},
        {"\"mesh\": 3", "field \"mesh\": is required"},
        {"\"mesh\": \"%s/meshes/bowl.obj\", \"scale\": 0", "field \"scale\""},
        {"\"mesh\": \"%s/meshes/bowl.obj\", \"scale\": [1, -1, 1]", "field \"scale\""},
        {"\"mesh\": \"%s/meshes/bowl.obj\", \"cell\": 0", "field \"cell\""},
        {"\"mesh\": \"%s/meshes/bowl.obj\", \"thickness\": -1", "field \"thickness\""},
        {"\"mesh\": \"%s/meshes/bowl.obj\", \"size\": [1, 1, 1]", "field \"size\": does not apply"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char fields[512], json[1024];
        snprintf(fields, sizeof fields, cases[k].fields, SM_SCENES_DIR);
        snprintf(json, sizeof json, "{\"colliders\": [{\"shape\": \"mesh\", %s}], \"objects\": [{\"shape\": \"box\"}]}", fields);
        sm_scene *scene = NULL;
        ENSURE(sm_scene_load_string(json, "test", &scene) == SM_ERROR_SCENE);
        if (!strstr(sm_last_error(), cases[k].expect)) {
            printf("  case %zu: \"%s\" does not contain \"%s\"\n", k, sm_last_error(), cases[k].expect);
            ENSURE(false);
        }
        sm_scene_destroy(scene);
    }
    // through the API: no path, a cell too fine for the node limit, a file without triangles
    sm_world_def wd = sm_world_def_default();
    wd.backend = sm_test_backend;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return;
    char path[512];
    snprintf(path, sizeof path, "%s/meshes/bowl.obj", SM_SCENES_DIR);
    sm_collider_def cd = sm_collider_def_default();
    cd.shape = SM_COLLIDER_MESH;
    ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(strstr(sm_last_error(), "path") != NULL);
    cd.mesh = path;
    cd.cell = 1e-4;
    ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(strstr(sm_last_error(), "a larger cell") != NULL);
    char empty_path[512];
    const char *empty = scratch_path("empty.obj", empty_path, sizeof empty_path);
    ENSURE(write_text_file(empty, "v 0 0 0\nv 1 0 0\nv 0 1 0\n"));
    cd.mesh = empty, cd.cell = 0.0;
    ENSURE(sm_world_add_collider(world, &cd, NULL) != SM_OK);
    printf("  a mesh of no triangles: %s\n", sm_last_error());
    remove(empty);
    ENSURE(sm_world_get_collider_count(world) == 0);
    // a good one: its field's figures
    cd.mesh = path;
    ENSURE_OK(sm_world_add_collider(world, &cd, NULL));
    sm_collider_info info;
    ENSURE_OK(sm_world_get_collider(world, 0, &info));
    printf("  the bowl: cell %.4f m (its extent 2.4 m / 64), %d x %d x %d nodes, %s\n", info.cell, info.nodes[0], info.nodes[1],
           info.nodes[2], info.closed ? "closed" : "open");
    ENSURE_SMALL(info.cell - 2.4 / 64.0, 1e-6); // (the file's coordinates have 6 decimals)
    ENSURE(info.closed);
    sm_world_destroy(world);
}

/// A mesh collider whose field would take more than 2^30 node visits to build (each triangle's
/// bounding box and 3 cells around it) is refused at once, naming the collider and a larger cell
/// that fits (and no finer one does); the default cell builds. The mesh:
/// 300 triangles each spanning the diagonal of a unit cube (seeded random corners), the work of
/// a 43 s build before the bound.
static void a_mesh_field_of_unbounded_work_is_refused(void)
{
    char buffer[512];
    const char *path = scratch_path("diagonal.obj", buffer, sizeof buffer);
    FILE *file = fopen(path, "w");
    ENSURE(file != NULL);
    if (!file) return;
    rng r = {97};
    for (int t = 0; t < 300; t++)
        fprintf(file, "v 0 0 0\nv 1 1 1\nv %.6f %.6f %.6f\nf %d %d %d\n", rng_uniform(&r, 0, 1), rng_uniform(&r, 0, 1),
                rng_uniform(&r, 0, 1), 3 * t + 1, 3 * t + 2, 3 * t + 3);
    fclose(file);
    sm_world_def wd = sm_world_def_default();
    wd.backend = sm_test_backend;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return;
    sm_collider_def cd = sm_collider_def_default();
    cd.shape = SM_COLLIDER_MESH;
    cd.mesh = path;
    cd.thickness = 0.01;
    double fits = 0.0;
    for (int k = 0; k < 4; k++) { // cells within the node limit, of 1.2e9 to 2.4e9 visits
        cd.cell = k == 0 ? 0.00526 : rng_uniform(&r, 0.00526, 0.0065);
        ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT);
        const char *message = sm_last_error();
        ENSURE(strstr(message, "mesh collider 0") && strstr(message, "node visits") && strstr(message, "a larger cell"));
        const char *at = strstr(message, "a larger cell (");
        if (at) fits = strtod(at + strlen("a larger cell ("), NULL);
        if (k == 0) printf("  cell %g: %s\n", cd.cell, message);
    }
    // the cell the message names is within 10% of the finest that fits (building it takes the
    // longest work allowed, so it is not built here)
    ENSURE(fits > 0.005 && fits < 0.01);
    cd.cell = fits / 1.1 * 0.999;
    ENSURE(sm_world_add_collider(world, &cd, NULL) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "node visits"));
    ENSURE(sm_world_get_collider_count(world) == 0);
    // the default cell (extent / 64) fits
    cd.cell = 0.0;
    ENSURE_OK(sm_world_add_collider(world, &cd, NULL));
    ENSURE(sm_world_get_collider_count(world) == 1);
    sm_world_destroy(world);
    remove(path);
}

/// A particle placed inside a solid at rest leaves it at exactly the push speed: the depth it
/// began a step in shrinks by push_speed h in that step (sm_overlap_target), whatever the solid,
/// until the last step takes what is left. Drawn: every solid, any normal, depths of 0.01 to 2
/// m, push speeds of 0.1 to 30 m/s, steps of 1e-3 to 0.1 s; no gravity.
/// A random direction.
static sm_vec3 random_direction(rng *r)
{
    sm_vec3 d;
    while (!v3_direction(rng_in_ball(r, 1.0), &d)) {}
    return d;
}

static void particles_placed_inside_a_solid_leave_at_the_push_speed(void)
{
    char mesh_path[512];
    const char *mesh = scratch_path("solid_box.obj", mesh_path, sizeof mesh_path);
    const bool written = write_box_obj(mesh, 10.0, 10.0, 10.0);
    ENSURE(written);
    if (!written) return;
    rng r = {2026};
    double worst = 0.0;
    for (int draw = 0; draw < 40; draw++) {
        const int kind = draw % 5;
        const sm_vec3 normal = kind == 0 ? v3(0, 1, 0) : random_direction(&r);
        const sm_vec3 surface = v3(rng_uniform(&r, -1, 1), rng_uniform(&r, -1, 1), rng_uniform(&r, -1, 1));
        const double depth = exp(rng_uniform(&r, log(0.01), log(2.0))), push_speed = exp(rng_uniform(&r, log(0.1), log(30.0)));
        const double h = exp(rng_uniform(&r, log(1e-3), log(0.1)));
        // within the field's exact part for the mesh: depths under half its width, off its edges
        const double d = kind == 4 ? fmin(depth, 2.0) : depth;
        const sm_vec3 x = v3_sub(surface, v3_scale(normal, d));
        char json[4096];
        int o = snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"collisions\": {\"enabled\": false, \"push_speed\": %.17g}, ",
                         push_speed);
        write_solid_json(json, sizeof json, &o, kind, surface, normal, mesh, rng_uniform(&r, 0, 1), rng_uniform(&r, 0, 1));
        snprintf(json + o, sizeof json - (size_t)o,
                 "\"objects\": [{\"shape\": \"points\", \"points\": [[%.17g, %.17g, %.17g]], \"mode\": \"rigid\"}]}", x.x, x.y,
                 x.z);
        sm_world *world = world_from_json(json);
        ENSURE(world != NULL);
        if (!world) continue;
        const double p = push_speed * h;
        const int steps = (int)ceil(d / p) + 2;
        for (int s = 1; s <= steps && s < 400; s++) {
            ENSURE_OK(sm_world_step(world, h, 1));
            double at[3];
            ENSURE_OK(sm_world_get_positions(world, 0, 1, at));
            const double left = -v3_dot(v3_sub(v3(at[0], at[1], at[2]), surface), normal);
            const double expected = fmax(d - s * p, 0.0);
            // float on OpenCL: of the depth, and of the solids' 10 m about the origin
            const double error = fabs(left - expected), allowed = tolerance(1e-9 * (d + p), 2e-5 * (d + p) + 1e-5);
            worst = fmax(worst, error / allowed);
            if (!(error <= allowed)) {
                ENSURE(error <= allowed);
                printf("  draw %d (%s): after %d steps %.9g m inside, expected %.9g (push %.9g a step)\n", draw,
                       sm_test_solid_names[kind], s, left, expected, p);
                break;
            }
        }
        sm_world_destroy(world);
    }
    printf("  40 particles, every solid: largest error %.3g of the tolerance\n", worst);
    remove(mesh);
}

/// Objects placed overlapping a solid are not launched: drawn at random (boxes and spheres of
/// 0.2 to 2 m, every mode, alpha from 0.05, beta, one cluster or 2x2x2, any orientation) with 5%
/// to all of their size inside the ground, a plane of any normal, a box, a sphere or a mesh,
/// gravity of 0 to 20 m/s^2 into it, push speeds of 0.3 to 30 m/s, steps of 1/240 to 1/15 s in 1
/// to 4 substeps, any restitution and friction: the centre of mass never moves faster than four
/// times the push speed (plus what gravity gives in a step), and the object ends out of the solid.
/// Pushed out whole in a step, such objects left at their depth over the step: a box half in the
/// ground at 1/180 s flew off at 80 m/s.
static void objects_placed_inside_a_solid_are_not_launched(void)
{
    char mesh_path[512];
    const char *mesh = scratch_path("solid_box2.obj", mesh_path, sizeof mesh_path);
    const bool written = write_box_obj(mesh, 10.0, 10.0, 10.0);
    ENSURE(written);
    if (!written) return;
    static const char *const modes[] = {"rigid", "linear", "quadratic"};
    const char *many = getenv("SM_OVERLAP_DRAWS");
    const int draws = many ? atoi(many) : 30;
    rng r = {77};
    double worst = 0.0;
    for (int draw = 0; draw < draws; draw++) {
        const int kind = draw % 5;
        const sm_vec3 normal = kind == 0 ? v3(0, 1, 0) : random_direction(&r);
        const sm_vec3 surface = v3(rng_uniform(&r, -0.5, 0.5), rng_uniform(&r, -0.5, 0.5), rng_uniform(&r, -0.5, 0.5));
        const bool sphere = rng_uniform(&r, 0, 1) < 0.5;
        const double size = exp(rng_uniform(&r, log(0.2), log(2.0))), fraction = rng_uniform(&r, 0.05, 1.0);
        const double push_speed = exp(rng_uniform(&r, log(0.3), log(30.0))), gravity = rng_uniform(&r, 0.0, 20.0);
        const double dt = 1.0 / rng_uniform(&r, 15.0, 240.0);
        const int substeps = 1 + (int)rng_uniform(&r, 0.0, 3.999), mode = (int)rng_uniform(&r, 0.0, 2.999);
        const double h = dt / substeps;
        // the object's centre: `fraction` of its size (its bounding sphere's diameter) inside
        const double radius = sphere ? 0.5 * size : 0.5 * sqrt(3.0) * size;
        const sm_vec3 center = v3_add(surface, v3_scale(normal, radius * (1.0 - 2.0 * fraction)));
        char json[8192];
        int o = snprintf(json, sizeof json,
                         "{\"gravity\": [%.17g, %.17g, %.17g], \"collisions\": {\"enabled\": false, \"push_speed\": %.17g}, ",
                         -gravity * normal.x, -gravity * normal.y, -gravity * normal.z, push_speed);
        write_solid_json(json, sizeof json, &o, kind, surface, normal, mesh, rng_uniform(&r, 0, 1), rng_uniform(&r, 0, 1));
        o += snprintf(json + o, sizeof json - (size_t)o, "\"objects\": [{");
        write_drawn_body_json(json, sizeof json, &o, &r, sphere, size);
        o += snprintf(json + o, sizeof json - (size_t)o,
                      "\"position\": [%.17g, %.17g, %.17g], \"rotation\": [%.17g, %.17g, %.17g], \"mode\": \"%s\", \"alpha\": %.17g, "
                      "\"beta\": %.17g%s}]}",
                      center.x, center.y, center.z, rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360),
                      modes[mode], rng_uniform(&r, 0.05, 1.0), rng_uniform(&r, 0.0, 1.0),
                      rng_uniform(&r, 0, 1) < 0.5 ? ", \"clusters\": {\"grid\": [2, 2, 2]}" : "");
        sm_world *world = world_from_json(json);
        ENSURE(world != NULL);
        if (!world) {
            printf("  draw %d: %s\n", draw, sm_last_error());
            continue;
        }
        double *m = get_masses(world);
        const int32_t n = sm_world_get_counts(world).particles;
        double mass = 0.0;
        for (int32_t i = 0; i < n; i++) mass += m[i];
        free(m);
        // until 0.2 s after it is out (no particle deeper than gravity pushes one in a step): long
        // enough to leave at the push speed, and twice that
        const double resting = gravity * h * h + 1e-6 * size, sphere_center_distance = 10.0;
        const sm_vec3 sphere_center = v3_sub(surface, v3_scale(normal, sphere_center_distance));
        const int steps = (int)ceil(2.0 * 2.0 * radius / push_speed / dt) + 1, after = (int)ceil(0.2 / dt);
        double fastest = 0.0;
        int out = -1;
        for (int s = 0; s < steps && (out < 0 || s <= out + after); s++) {
            const sm_result stepped = sm_world_step(world, dt, substeps);
            ENSURE_OK(stepped);
            if (stepped != SM_OK) break;
            fastest = fmax(fastest, v3_dot(linear_momentum(world, 0), normal) / mass);
            double *x = get_positions(world), deepest = -INFINITY;
            for (int32_t i = 0; i < n; i++) {
                const sm_vec3 at = v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
                deepest = fmax(deepest, kind == 3 ? sphere_center_distance - v3_length(v3_sub(at, sphere_center))
                                                  : -v3_dot(v3_sub(at, surface), normal));
            }
            free(x);
            if (out < 0 && deepest <= resting) out = s;
        }
        const double bound = 4.0 * push_speed + gravity * h;
        worst = fmax(worst, fastest / bound);
        ENSURE(out >= 0 && fastest <= bound);
        if (!(out >= 0 && fastest <= bound))
            printf("  draw %d (%s, %s %s, %.0f%% inside, push %.3g m/s, h %.3g s): %s, the centre at %.3g m/s\n", draw,
                   sm_test_solid_names[kind], sphere ? "sphere" : "box", modes[mode], 100.0 * fraction, push_speed, h,
                   out >= 0 ? "out" : "still inside", fastest);
        sm_world_destroy(world);
    }
    printf("  %d objects placed inside solids: the centre at most %.3f of the bound\n", draws, worst);
    remove(mesh);
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
        TEST(no_particle_ends_inside_a_closed_mesh),
        TEST(a_box_comes_to_rest_on_a_mesh),
        TEST(a_kinematic_mesh_carries_what_rests_on_it),
        TEST(the_tunnelling_bound_holds),
        TEST(the_tunnelling_bound_holds_at_edges),
        TEST(degenerate_and_thin_closed_meshes_hold),
        TEST(an_open_mesh_is_a_shell),
        TEST(bad_mesh_colliders_are_refused),
        TEST(a_mesh_field_of_unbounded_work_is_refused),
        TEST(particles_placed_inside_a_solid_leave_at_the_push_speed),
        TEST(objects_placed_inside_a_solid_are_not_launched),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
