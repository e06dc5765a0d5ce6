/* Bad input never crashes and never passes silently: NaN and infinite values, zero and negative
 * masses, empty and out-of-range clusters, malformed and overflowing scene files, unreadable
 * meshes, a world too large for the device, no OpenCL platform and kernels that do not build.
 * Each is refused with its documented error code and a message naming the field, object or
 * file, on the CPU reference and on OpenCL, and a refused call leaves the world as it was (a
 * refused creation leaves no world). Run under valgrind or a sanitizer to check memory too.
 *
 * Related cases asserted elsewhere, not repeated here: every kind of malformed scene field
 * (test_scene), unreadable mesh files through sm_mesh_load_file (test_mesh), the kernel build
 * failure on the caller's context (test_embedding), the state check of a diverging world
 * (test_embedding), and the command's message and exit status without a platform (cli). */
#include "support.h"
#include "shapes.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const sm_backend backends[2] = {SM_BACKEND_CPU, SM_BACKEND_OPENCL};
static const char *const backend_names[2] = {"cpu", "opencl"};

static bool contains(const char *text, const char *part) { return part == NULL || strstr(text, part) != NULL; }

/// Checks that `r` is `expected` and, for an error, that the last error holds both parts (NULL:
/// anything); otherwise prints the case and what came back, and counts a failure.
static void expect(sm_result r, sm_result expected, const char *label, const char *part1, const char *part2)
{
    if (r == expected && (r == SM_OK || (contains(sm_last_error(), part1) && contains(sm_last_error(), part2)))) return;
    fprintf(stderr, "%s: expected %s with \"%s\" and \"%s\", got %s: %s\n", label, sm_result_name(expected),
            part1 ? part1 : "", part2 ? part2 : "", sm_result_name(r), r == SM_OK ? "" : sm_last_error());
    sm_test_failures++;
}

/// An empty world on `backend` (NULL and a counted failure if it cannot be made).
static sm_world *empty_world(sm_backend backend)
{
    sm_world_def wd = sm_world_def_default();
    wd.backend = backend;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    return world;
}

static bool same_counts(sm_counts a, sm_counts b)
{
    return a.objects == b.objects && a.clusters == b.clusters && a.particles == b.particles && a.memberships == b.memberships;
}

/// Writes `size` bytes to `path`; false when it cannot.
static bool write_bytes(const char *path, const void *bytes, size_t size)
{
    FILE *file = fopen(path, "wb");
    if (!file) return false;
    bool ok = fwrite(bytes, 1, size, file) == size;
    return fclose(file) == 0 && ok;
}

/* ---- Object defs --------------------------------------------------------------------------- */

/// One field of an object def set to a value, and what the refusal must name.
typedef struct field_case {
    const char *label;
    void (*set)(sm_object_def *def, double value);
    const char *expect;
} field_case;

static sm_vec3 case_points[4], case_surface[4];
static double case_point_masses[4];
static const int32_t tetrahedron[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};

static void use_points(sm_object_def *d)
{
    const sm_vec3 p[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    memcpy(case_points, p, sizeof p);
    for (int i = 0; i < 4; i++) case_point_masses[i] = 0.25;
    d->shape.type = SM_SHAPE_POINTS;
    d->shape.points = case_points;
    d->shape.point_count = 4;
}

#define SETTER(fn, body)                                                                          \
    static void fn(sm_object_def *d, double v) { body; }
SETTER(set_position, d->position.y = v)
SETTER(set_rotation, d->rotation.z = v)
SETTER(set_linear_velocity, d->linear_velocity.x = v)
SETTER(set_angular_velocity, d->angular_velocity.y = v)
SETTER(set_force, d->force.z = v)
SETTER(set_mass, d->mass = v)
SETTER(set_alpha, d->alpha = v)
SETTER(set_beta, d->beta = v)
SETTER(set_tau, d->tau = v)
SETTER(set_damping, d->damping = v)
SETTER(set_yield, d->plasticity.enabled = true; d->plasticity.yield = v)
SETTER(set_creep, d->plasticity.enabled = true; d->plasticity.creep = v)
SETTER(set_plastic_max, d->plasticity.enabled = true; d->plasticity.max = v)
SETTER(set_cap_soft, d->cap.enabled = true; d->cap.soft = v)
SETTER(set_cap_hard, d->cap.enabled = true; d->cap.hard = v)
SETTER(set_collision_radius, d->collisions.radius = v)
SETTER(set_collision_scale, d->collisions.radius_scale = v)
SETTER(set_box_size, d->shape.size.x = v)
SETTER(set_sphere_radius, d->shape.type = SM_SHAPE_SPHERE; d->shape.radius = v)
SETTER(set_sphere_spacing, d->shape.type = SM_SHAPE_SPHERE; d->shape.spacing = v)
SETTER(set_capsule_length, d->shape.type = SM_SHAPE_CAPSULE; d->shape.length = v)
SETTER(set_torus_minor, d->shape.type = SM_SHAPE_TORUS; d->shape.minor_radius = v)
SETTER(set_point, use_points(d); case_points[2].x = v)
SETTER(set_point_mass, use_points(d); d->shape.point_masses = case_point_masses; case_point_masses[1] = v)
SETTER(set_mesh_vertex, use_points(d); d->shape.type = SM_SHAPE_MESH; d->shape.mesh_vertices = case_points;
       d->shape.mesh_vertex_count = 4; d->shape.mesh_triangles = tetrahedron; d->shape.mesh_triangle_count = 4;
       case_points[3].z = v)
SETTER(set_lattice_spacing, use_points(d); d->shape.type = SM_SHAPE_MESH; d->shape.mesh_vertices = case_points;
       d->shape.mesh_vertex_count = 4; d->shape.mesh_triangles = tetrahedron; d->shape.mesh_triangle_count = 4;
       d->shape.mesh_particles = SM_MESH_PARTICLES_LATTICE; d->shape.spacing = v)
SETTER(set_surface_vertex, use_points(d); memcpy(case_surface, case_points, sizeof case_surface);
       d->surface.vertices = case_surface; d->surface.vertex_count = 4; d->surface.triangles = tetrahedron;
       d->surface.triangle_count = 4; case_surface[0].y = v)
SETTER(set_overlap, d->clusters.grid[0] = 2; d->clusters.overlap = v)
#undef SETTER

static const field_case object_fields[] = {
    {"position", set_position, "position must be finite"},
    {"rotation", set_rotation, "rotation must be finite"},
    {"linear_velocity", set_linear_velocity, "linear_velocity must be finite"},
    {"angular_velocity", set_angular_velocity, "angular_velocity must be finite"},
    {"force", set_force, "force must be finite"},
    {"mass", set_mass, "mass must be in [1e-12, 1e+12] kg"},
    {"alpha", set_alpha, "alpha must be in [0, 1]"},
    {"beta", set_beta, "beta must be in [0, 1]"},
    {"tau", set_tau, "tau must be"},
    {"damping", set_damping, "damping must be"},
    {"plasticity.yield", set_yield, "plasticity yield"},
    {"plasticity.creep", set_creep, "plasticity creep"},
    {"plasticity.max", set_plastic_max, "plasticity max"},
    {"cap.soft", set_cap_soft, "cap needs"},
    {"cap.hard", set_cap_hard, "cap needs"},
    {"collisions.radius", set_collision_radius, "collision radius must"},
    {"collisions.radius_scale", set_collision_scale, "collision radius_scale"},
    {"shape.size", set_box_size, "box size"},
    {"shape.radius", set_sphere_radius, "radius must be > 0"},
    {"shape.spacing", set_sphere_spacing, "spacing must be > 0"},
    {"shape.length", set_capsule_length, "capsule length"},
    {"shape.minor_radius", set_torus_minor, "torus radii"},
    {"shape.points", set_point, "point 2 is not finite"},
    {"shape.point_masses", set_point_mass, "the mass of point 1"},
    {"shape.mesh_vertices", set_mesh_vertex, "mesh vertex 3 is not finite"},
    {"shape.spacing (mesh lattice)", set_lattice_spacing, "spacing must be > 0"},
    {"surface.vertices", set_surface_vertex, "surface vertex 0 is not finite"},
    {"clusters.overlap", set_overlap, "cluster overlap"},
};

/// Adds `def` to `world`, expecting SM_ERROR_INVALID_ARGUMENT naming `part`, and checks that the
/// world did not change.
static void refused_object(sm_world *world, const sm_object_def *def, const char *label, const char *part,
                           const char *part2)
{
    const sm_counts before = sm_world_get_counts(world);
    int32_t index = -7;
    expect(sm_world_add_object(world, def, &index), SM_ERROR_INVALID_ARGUMENT, label, part, part2);
    ENSURE(same_counts(sm_world_get_counts(world), before));
    ENSURE(index == -7);
}

/// After refusals, a valid object still joins at the next index, and the world steps without NaN.
static void world_still_works(sm_world *world, const char *label)
{
    const int32_t objects = sm_world_get_counts(world).objects;
    sm_object_def def = sm_object_def_default();
    def.position = (sm_vec3){0.0, 0.0, 5.0};
    int32_t index = -1;
    ENSURE_OK(sm_world_add_object(world, &def, &index));
    ENSURE(index == objects);
    for (int s = 0; s < 3; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
    if (world_has_nan(world)) {
        fprintf(stderr, "%s: the world holds NaN after the refusals\n", label);
        sm_test_failures++;
    }
}

/// Every floating-point field of an object def set to NaN, +inf or -inf is refused, naming the
/// field, and the world keeps its objects; on both backends.
static void nonfinite_object_fields_are_refused(void)
{
    const double values[] = {NAN, INFINITY, -INFINITY};
    const char *const value_names[] = {"nan", "inf", "-inf"};
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        sm_object_def anchor = sm_object_def_default();
        ENSURE_OK(sm_world_add_object(world, &anchor, NULL));
        if (b == 1) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1)); // the device holds the world now
        for (size_t f = 0; f < sizeof object_fields / sizeof object_fields[0]; f++) {
            for (int v = 0; v < 3; v++) {
                sm_object_def def = sm_object_def_default();
                def.mode = SM_MODE_LINEAR;
                object_fields[f].set(&def, values[v]);
                char label[160];
                snprintf(label, sizeof label, "%s: %s = %s", backend_names[b], object_fields[f].label, value_names[v]);
                refused_object(world, &def, label, object_fields[f].expect, NULL);
            }
        }
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
}

/// Zero, negative, subnormal, huge and non-finite masses of an object or of its points are
/// refused: an object's mass must lie in [SM_MASS_MIN, SM_MASS_MAX], a point's in
/// [SM_POINT_MASS_MIN, SM_MASS_MAX]; seeded draws just outside either limit (from 1e-15 to 10%
/// beyond), far outside and negative are refused too, and the limits themselves taken.
static void zero_and_negative_masses_are_refused(void)
{
    const double masses[] = {0.0, -0.0, -1.0, -1e-300, -INFINITY, 1e13, 1e308};
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        char label[160];
        for (size_t k = 0; k < sizeof masses / sizeof masses[0]; k++) {
            sm_object_def def = sm_object_def_default();
            def.mass = masses[k];
            snprintf(label, sizeof label, "%s: mass %g", backend_names[b], masses[k]);
            refused_object(world, &def, label, "mass must be in [1e-12, 1e+12] kg", NULL);
            def = sm_object_def_default();
            set_point_mass(&def, masses[k]);
            snprintf(label, sizeof label, "%s: point mass %g", backend_names[b], masses[k]);
            refused_object(world, &def, label, "the mass of point 1 must be in [1e-30, 1e+12] kg", NULL);
        }
        // positive, but below the range (each particle's share would be too small to divide by)
        sm_object_def def = sm_object_def_default();
        def.mass = 1e-320;
        snprintf(label, sizeof label, "%s: mass 1e-320", backend_names[b]);
        refused_object(world, &def, label, "mass must be in [1e-12, 1e+12] kg", NULL);
        // seeded draws outside the limits: just outside (a relative gap log-uniform from 1e-15 to
        // 0.1), far outside (log-uniform down to 1e-320 and up to 1e308) and negative; the limits
        // themselves are taken
        rng r = {214 + (uint64_t)b};
        for (int draw = 0; draw < 24; draw++) {
            const double gap = pow(10.0, rng_uniform(&r, -15.0, -1.0));
            for (int point = 0; point < 2; point++) {
                const double lo = point ? 1e-30 : 1e-12, hi = 1e12;
                double m;
                switch (draw % 4) {
                case 0: m = lo * (1.0 - gap), m = m < lo ? m : nextafter(lo, 0.0); break;
                case 1: m = hi * (1.0 + gap), m = m > hi ? m : nextafter(hi, INFINITY); break;
                case 2: m = rng_uniform(&r, 0, 1) < 0.5 ? pow(10.0, rng_uniform(&r, -320.0, log10(lo))) * (1.0 - 1e-15)
                                                        : pow(10.0, rng_uniform(&r, 12.0, 308.0)) * (1.0 + 1e-15);
                        m = m < lo || m > hi ? m : 0.0;
                        break;
                default: m = -pow(10.0, rng_uniform(&r, -300.0, 300.0)); break;
                }
                def = sm_object_def_default();
                if (point) set_point_mass(&def, m);
                else def.mass = m;
                snprintf(label, sizeof label, "%s: %s %.17g (draw %d)", backend_names[b], point ? "point mass" : "mass", m, draw);
                refused_object(world, &def, label,
                               point ? "the mass of point 1 must be in [1e-30, 1e+12] kg" : "mass must be in [1e-12, 1e+12] kg",
                               NULL);
            }
        }
        const double limits[3][2] = {{1e-12, 0.0}, {1e12, 0.0}, {1.0, 1e-30}};
        for (int k = 0; k < 3; k++) {
            def = sm_object_def_default();
            def.position = (sm_vec3){3.0 * k, 0.0, -5.0};
            def.mass = limits[k][0];
            if (limits[k][1] > 0.0) set_point_mass(&def, limits[k][1]);
            ENSURE_OK(sm_world_add_object(world, &def, NULL));
        }
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
}

/// Explicit clusters that are empty, hold an index outside the object or one index twice, or
/// whose offsets are malformed, and bad fixed lists, are refused naming the list; a particle in
/// no list is allowed and, as scenes/README.md says, only gravity acts on it.
static void bad_explicit_clusters_are_refused(void)
{
    static const struct {
        int32_t offsets[4];
        int32_t indices[6];
        int32_t list_count;
        bool no_indices;
        const char *expect, *expect2;
    } cases[] = {
        {{0, 3, 3}, {0, 1, 2}, 2, false, "clusters.lists[1]", "is empty"},
        {{0, 0}, {0}, 1, false, "clusters.lists[0]", "is empty"},
        {{0, 3, 2}, {0, 1, 2}, 2, false, "clusters.lists[1]", "is empty"},
        {{0, 3}, {0, 1, 64}, 1, false, "clusters.lists[0]", "particle index 64 is outside [0, 64)"},
        {{0, 2, 4}, {0, 1, 2, -1}, 2, false, "clusters.lists[1]", "particle index -1 is outside [0, 64)"},
        {{0, 2}, {INT32_MAX, 1}, 1, false, "clusters.lists[0]", "is outside [0, 64)"},
        {{0, 2, 5}, {0, 1, 2, 7, 2}, 2, false, "clusters.lists[1]", "lists particle 2 twice"},
        {{1, 3}, {0, 1, 2}, 1, false, "clusters.lists", "offsets must start at 0"},
        {{0, 3}, {0, 1, 2}, 0, false, "explicit clusters need at least one list", NULL},
        {{0, 3}, {0, 1, 2}, -2, false, "explicit clusters need at least one list", NULL},
        {{0, 3}, {0, 1, 2}, 1, true, "explicit clusters need at least one list", NULL},
    };
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        char label[160];
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            sm_object_def def = sm_object_def_default();
            def.clusters.list_offsets = cases[k].offsets;
            def.clusters.list_indices = cases[k].no_indices ? NULL : cases[k].indices;
            def.clusters.list_count = cases[k].list_count;
            snprintf(label, sizeof label, "%s: cluster case %zu", backend_names[b], k);
            refused_object(world, &def, label, cases[k].expect, cases[k].expect2);
        }
        // fixed particles: outside the object, a negative count, a count without an array
        static const int32_t fixed_out[] = {3, 64}, fixed_negative[] = {-5};
        sm_object_def def = sm_object_def_default();
        def.fixed = fixed_out, def.fixed_count = 2;
        snprintf(label, sizeof label, "%s: fixed 64", backend_names[b]);
        refused_object(world, &def, label, "fixed: entry 1: particle index 64 is outside [0, 64)", NULL);
        def.fixed = fixed_negative, def.fixed_count = 1;
        snprintf(label, sizeof label, "%s: fixed -5", backend_names[b]);
        refused_object(world, &def, label, "fixed: entry 0: particle index -5", NULL);
        def.fixed = fixed_out, def.fixed_count = -1;
        snprintf(label, sizeof label, "%s: fixed_count -1", backend_names[b]);
        refused_object(world, &def, label, "fixed must hold fixed_count", "-1");
        def.fixed = NULL, def.fixed_count = 2;
        snprintf(label, sizeof label, "%s: fixed NULL", backend_names[b]);
        refused_object(world, &def, label, "fixed must hold fixed_count", "no array");

        // particle 63 in no list: free fall, v_y = -g t after n steps of h
        static int32_t offsets[] = {0, 63}, indices[63];
        for (int32_t i = 0; i < 63; i++) indices[i] = i;
        def = sm_object_def_default();
        def.clusters.list_offsets = offsets, def.clusters.list_indices = indices, def.clusters.list_count = 1;
        int32_t object = -1;
        ENSURE_OK(sm_world_add_object(world, &def, &object));
        sm_object_info info;
        ENSURE_OK(sm_world_get_object(world, object, &info));
        ENSURE(info.cluster_count == 1 && info.membership_count == 63);
        const int steps = 30;
        const double h = 1.0 / 60.0;
        for (int s = 0; s < steps; s++) ENSURE_OK(sm_world_step(world, h, 1));
        double v[3] = {0, 0, 0};
        ENSURE_OK(sm_world_get_velocities(world, info.first_particle + 63, 1, v));
        const double expected = -9.81 * h * steps;
        ENSURE_SMALL(v[0], 1e-6);
        ENSURE_SMALL(v[2], 1e-6);
        ENSURE_SMALL((v[1] - expected) / expected, b == 0 ? 1e-12 : 1e-5);
        ENSURE_SMALL(sm_world_get_time(world) - steps * h, 1e-12);
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
}

/// World defs with NaN or infinite gravity, ground or contact settings, or an unknown backend,
/// are refused naming the field, and no world is made.
static void bad_world_defs_are_refused(void)
{
    for (int b = 0; b < 2; b++) {
        const struct {
            const char *label, *expect;
        } names[] = {
            {"gravity.x nan", "gravity must be finite"},
            {"gravity.y inf", "gravity must be finite"},
            {"ground.height nan", "ground height must be finite"},
            {"ground.height -inf", "ground height must be finite"},
            {"ground.restitution nan", "ground restitution"},
            {"ground.friction inf", "ground friction"},
            {"collisions.radius_scale nan", "collision radius_scale"},
            {"collisions.radius_scale inf", "collision radius_scale"},
            {"collisions.restitution nan", "collision restitution"},
            {"collisions.friction -inf", "collision friction"},
            {"collisions.iterations 0", "collision iterations"},
            {"check_interval -1", "check_interval"},
            {"backend 7", "unknown backend 7"},
        };
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            sm_world_def wd = sm_world_def_default();
            wd.backend = backends[b];
            switch (k) {
            case 0: wd.gravity.x = NAN; break;
            case 1: wd.gravity.y = INFINITY; break;
            case 2: wd.ground.enabled = true, wd.ground.height = NAN; break;
            case 3: wd.ground.enabled = true, wd.ground.height = -INFINITY; break;
            case 4: wd.ground.enabled = true, wd.ground.restitution = NAN; break;
            case 5: wd.ground.enabled = true, wd.ground.friction = INFINITY; break;
            case 6: wd.collisions.enabled = true, wd.collisions.radius_scale = NAN; break;
            case 7: wd.collisions.enabled = true, wd.collisions.radius_scale = INFINITY; break;
            case 8: wd.collisions.enabled = true, wd.collisions.restitution = NAN; break;
            case 9: wd.collisions.enabled = true, wd.collisions.friction = -INFINITY; break;
            case 10: wd.collisions.enabled = true, wd.collisions.iterations = 0; break;
            case 11: wd.check_interval = -1; break;
            case 12: wd.backend = (sm_backend)7; break;
            }
            sm_world *world = (sm_world *)&wd; // poisoned: a refused creation must set it to NULL
            char label[160];
            snprintf(label, sizeof label, "%s: %s", backend_names[b], names[k].label);
            expect(sm_world_create(&wd, &world), SM_ERROR_INVALID_ARGUMENT, label, "sm_world_create", names[k].expect);
            ENSURE(world == NULL);
        }
    }
}

/// sm_world_step with a NaN, infinite, zero, negative, too short or too long step, or fewer than
/// one substep, is refused and changes nothing: not the time, not a position.
static void bad_steps_are_refused(void)
{
    const struct {
        double dt;
        int32_t substeps;
        const char *expect;
    } cases[] = {
        {NAN, 1, "dt / substeps must be in [1e-09, 10] s"},  {INFINITY, 1, "dt / substeps"},
        {-INFINITY, 1, "dt / substeps"},                     {0.0, 1, "dt / substeps"},
        {-0.01, 1, "dt / substeps"},                         {1e-12, 1, "dt / substeps"},
        {1.0, INT32_MAX, "dt / substeps"},                   {1e300, 1, "got dt 1e+300"},
        {20.0, 1, "got dt 20, 1 substeps"},                  {0.01, 0, "substeps must be >= 1 (got 0)"},
        {0.01, -3, "substeps must be >= 1 (got -3)"},
    };
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        sm_object_def def = sm_object_def_default();
        def.angular_velocity = (sm_vec3){0.0, 2.0, 0.0};
        ENSURE_OK(sm_world_add_object(world, &def, NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        const double time = sm_world_get_time(world);
        const int64_t steps = sm_world_get_profile(world).steps;
        double *before = get_positions(world);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            char label[160];
            snprintf(label, sizeof label, "%s: step dt %g, %d substeps", backend_names[b], cases[k].dt, cases[k].substeps);
            expect(sm_world_step(world, cases[k].dt, cases[k].substeps), SM_ERROR_INVALID_ARGUMENT, label, "sm_world_step",
                   cases[k].expect);
        }
        ENSURE(sm_world_get_time(world) == time && sm_world_get_profile(world).steps == steps);
        double *after = get_positions(world);
        ENSURE(memcmp(before, after, sizeof(double) * 3 * 64) == 0);
        // the longest step allowed runs, and stays finite
        ENSURE_OK(sm_world_step(world, 10.0, 1));
        ENSURE(!world_has_nan(world));
        free(before), free(after);
        sm_world_destroy(world);
    }
}

/// Edits with NaN or infinite values (positions, velocities, forces, targets, the pusher, object
/// parameters, colliders, cut planes) are refused naming the call and what is wrong, and leave
/// the state as it was.
static void bad_edits_are_refused(void)
{
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        sm_object_def def = sm_object_def_default();
        def.mode = SM_MODE_LINEAR;
        ENSURE_OK(sm_world_add_object(world, &def, NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        double *positions = get_positions(world), *velocities = get_velocities(world);
        double forces[3 * 64], targets[4 * 64];
        const size_t vectors = sizeof forces; // 64 particles, 3 doubles each
        ENSURE_OK(sm_world_get_forces(world, 0, 64, forces));
        ENSURE_OK(sm_world_get_targets(world, 0, 64, targets));
        sm_object_params params;
        ENSURE_OK(sm_world_get_object_params(world, 0, &params));
        char label[160];
#define REFUSED(call, part1, part2)                                                                \
    snprintf(label, sizeof label, "%s: %s", backend_names[b], #call);                              \
    expect(call, SM_ERROR_INVALID_ARGUMENT, label, part1, part2)

        double xyz[9] = {0, 1, 0, 0, 1, 0, 0, 1, 0};
        xyz[4] = NAN;
        REFUSED(sm_world_set_positions(world, 10, 3, xyz), "sm_world_set_positions", "value 4 is not finite");
        xyz[4] = 1.0, xyz[8] = -INFINITY;
        REFUSED(sm_world_set_velocities(world, 0, 3, xyz), "sm_world_set_velocities", "value 8 is not finite");
        REFUSED(sm_world_set_force(world, 3, (sm_vec3){0, NAN, 0}), "sm_world_set_force", "force must be finite");
        xyz[8] = NAN;
        REFUSED(sm_world_set_forces(world, 0, 3, xyz), "sm_world_set_forces", "value 8 is not finite");
        xyz[8] = 1.0;
        REFUSED(sm_world_set_forces(world, 60, 5, xyz), "sm_world_set_forces", NULL); // past the particles
        REFUSED(sm_world_set_target(world, 3, (sm_vec3){INFINITY, 0, 0}, 10.0), "sm_world_set_target", "target must be finite");
        REFUSED(sm_world_set_target(world, 3, (sm_vec3){0, 0, 0}, NAN), "sm_world_set_target", "stiffness");
        REFUSED(sm_world_set_target(world, 3, (sm_vec3){0, 0, 0}, INFINITY), "sm_world_set_target", "stiffness");
        REFUSED(sm_world_set_target(world, 3, (sm_vec3){0, 0, 0}, -2.0), "sm_world_set_target", "stiffness");

        sm_pusher pusher = {.enabled = true, .center = {NAN, 0, 0}, .radius = 0.5};
        REFUSED(sm_world_set_pusher(world, &pusher), "sm_world_set_pusher", NULL);
        pusher.center.x = 0.0, pusher.radius = INFINITY;
        REFUSED(sm_world_set_pusher(world, &pusher), "sm_world_set_pusher", NULL);
        pusher.radius = 0.5, pusher.velocity.z = -INFINITY;
        REFUSED(sm_world_set_pusher(world, &pusher), "sm_world_set_pusher", NULL);

        sm_object_params bad = params;
        bad.alpha = NAN;
        REFUSED(sm_world_set_object_params(world, 0, &bad), "sm_world_set_object_params", "alpha and beta");
        bad = params, bad.beta = INFINITY;
        REFUSED(sm_world_set_object_params(world, 0, &bad), "sm_world_set_object_params", "alpha and beta");
        bad = params, bad.tau = NAN;
        REFUSED(sm_world_set_object_params(world, 0, &bad), "sm_world_set_object_params", "tau and damping");
        bad = params, bad.damping = INFINITY;
        REFUSED(sm_world_set_object_params(world, 0, &bad), "sm_world_set_object_params", "tau and damping");
        bad = params, bad.plasticity.enabled = true, bad.plasticity.creep = NAN;
        REFUSED(sm_world_set_object_params(world, 0, &bad), "sm_world_set_object_params", "plasticity creep");

        sm_collider_def cd = sm_collider_def_default();
        cd.position.y = NAN;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "position and rotation must be finite");
        cd = sm_collider_def_default(), cd.rotation.x = INFINITY;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "position and rotation must be finite");
        cd = sm_collider_def_default(), cd.size.z = NAN;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "size");
        cd = sm_collider_def_default(), cd.shape = SM_COLLIDER_SPHERE, cd.radius = INFINITY;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "radius");
        cd = sm_collider_def_default(), cd.shape = SM_COLLIDER_PLANE, cd.normal = (sm_vec3){0, NAN, 0};
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "normal");
        cd = sm_collider_def_default(), cd.restitution = NAN;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "restitution");
        const double times[2] = {0.0, NAN};
        const sm_vec3 offsets[2] = {{0, 0, 0}, {1, 0, 0}};
        cd = sm_collider_def_default(), cd.motion.type = SM_MOTION_LINEAR;
        cd.motion.times = times, cd.motion.offsets = offsets, cd.motion.keyframe_count = 2;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "keyframe 1 is not finite");
        cd = sm_collider_def_default(), cd.motion.type = SM_MOTION_SINUSOIDAL, cd.motion.frequency = INFINITY;
        REFUSED(sm_world_add_collider(world, &cd, NULL), "sm_world_add_collider", "sinusoidal");

        sm_cut_info info;
        REFUSED(sm_world_cut(world, 0, (sm_plane){{NAN, 0, 0}, {1, 0, 0}}, &info), "sm_world_cut", "finite point");
        REFUSED(sm_world_cut(world, 0, (sm_plane){{0, 0, 0}, {0, INFINITY, 0}}, &info), "sm_world_cut", "finite point");
        ENSURE(!info.cut);
#undef REFUSED

        // nothing changed
        double *positions_after = get_positions(world), *velocities_after = get_velocities(world);
        double forces_after[3 * 64], targets_after[4 * 64];
        ENSURE_OK(sm_world_get_forces(world, 0, 64, forces_after));
        ENSURE_OK(sm_world_get_targets(world, 0, 64, targets_after));
        sm_object_params params_after;
        ENSURE_OK(sm_world_get_object_params(world, 0, &params_after));
        ENSURE(memcmp(positions, positions_after, vectors) == 0);
        ENSURE(memcmp(velocities, velocities_after, vectors) == 0);
        ENSURE(memcmp(forces, forces_after, vectors) == 0);
        ENSURE(memcmp(targets, targets_after, sizeof targets) == 0);
        ENSURE(params.mode == params_after.mode && params.alpha == params_after.alpha && params.beta == params_after.beta);
        ENSURE(params.tau == params_after.tau && params.damping == params_after.damping);
        ENSURE(params.plasticity.enabled == params_after.plasticity.enabled &&
               params.plasticity.creep == params_after.plasticity.creep);
        ENSURE(sm_world_get_collider_count(world) == 0 && sm_world_get_counts(world).objects == 1);
        free(positions), free(velocities), free(positions_after), free(velocities_after);
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
}

/* ---- NULL handles ------------------------------------------------------------------------------ */

/// Every call of the API given NULL for its world, scene or mesh and NULL or zero for the rest
/// refuses with SM_ERROR_INVALID_ARGUMENT and a message, or returns its neutral value (zero, a
/// zeroed struct, false, NULL, a constant string), and never crashes; so does every call given a
/// real world or scene but NULL for a required output. The first part calls every SM_API
/// function of shapematch.h, all 70 of them, in the header's order: a function added to the
/// header belongs here too.
static void every_call_refuses_null_handles(void)
{
    char label[160];
#define REFUSED(call)                                                                              \
    snprintf(label, sizeof label, "%s", #call);                                                    \
    expect(call, SM_ERROR_INVALID_ARGUMENT, label, NULL, NULL);                                    \
    ENSURE(sm_last_error()[0] != '\0')

    const sm_vec3 zero = {0, 0, 0};
    // basic types
    ENSURE(strcmp(sm_result_name((sm_result)-1), "SM_ERROR_UNKNOWN") == 0);
    ENSURE(sm_last_error() != NULL);
    char text[8] = "x";
    ENSURE(sm_printable(NULL, NULL, 0) == NULL);
    ENSURE(sm_printable(NULL, text, sizeof text) == text && text[0] == '\0');
    // world
    ENSURE(sm_world_def_default().gravity.y < 0.0);
    REFUSED(sm_world_create(NULL, NULL));
    sm_world *no_world = (sm_world *)&zero; // poisoned: a refused creation leaves no world
    REFUSED(sm_world_create(NULL, &no_world));
    ENSURE(no_world == NULL);
    sm_world_destroy(NULL);
    // objects
    ENSURE(sm_object_def_default().mass > 0.0);
    REFUSED(sm_world_add_object(NULL, NULL, NULL));
    // stepping
    REFUSED(sm_world_step(NULL, 0.0, 0));
    sm_world_cancel(NULL);
    ENSURE(strcmp(sm_pass_name(SM_PASS_COUNT), "?") == 0);
    const sm_profile profile = sm_world_get_profile(NULL);
    ENSURE(profile.step_ms == 0.0 && profile.steps == 0 && profile.transfers == 0 && profile.launches == 0);
    // queries and edits
    ENSURE(same_counts(sm_world_get_counts(NULL), (sm_counts){0, 0, 0, 0}));
    ENSURE(sm_world_get_memory(NULL).device_bytes == 0);
    REFUSED(sm_world_estimate_memory(NULL, NULL, 0, NULL));
    ENSURE(strcmp(sm_world_backend_name(NULL), "none") == 0);
    ENSURE(strcmp(sm_world_device_name(NULL), "") == 0);
    REFUSED(sm_world_copy_state(NULL, NULL));
    REFUSED(sm_world_get_object(NULL, 0, NULL));
    REFUSED(sm_world_get_object_particles(NULL, 0, NULL, NULL));
    REFUSED(sm_world_get_particle_objects(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_cluster(NULL, 0, NULL));
    REFUSED(sm_world_get_cluster_members(NULL, 0, NULL, NULL));
    REFUSED(sm_world_get_contact_stats(NULL, NULL));
    REFUSED(sm_world_get_positions(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_velocities(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_rest_positions(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_goals(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_masses(NULL, 0, 0, NULL));
    REFUSED(sm_world_set_positions(NULL, 0, 0, NULL));
    REFUSED(sm_world_set_velocities(NULL, 0, 0, NULL));
    REFUSED(sm_world_set_force(NULL, 0, zero));
    REFUSED(sm_world_set_forces(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_forces(NULL, 0, 0, NULL));
    REFUSED(sm_world_reset_object(NULL, 0));
    REFUSED(sm_world_set_target(NULL, 0, zero, 0.0));
    REFUSED(sm_world_get_targets(NULL, 0, 0, NULL));
    REFUSED(sm_world_get_object_params(NULL, 0, NULL));
    REFUSED(sm_world_set_object_params(NULL, 0, NULL));
    REFUSED(sm_world_set_pusher(NULL, NULL));
    // cutting
    REFUSED(sm_world_cut(NULL, 0, (sm_plane){zero, zero}, NULL));
    REFUSED(sm_world_get_cuts(NULL, NULL, NULL));
    // colliders
    ENSURE(sm_collider_def_default().radius > 0.0);
    REFUSED(sm_world_add_collider(NULL, NULL, NULL));
    ENSURE(sm_world_get_collider_count(NULL) == 0);
    REFUSED(sm_world_get_collider(NULL, 0, NULL));
    REFUSED(sm_world_get_collider_mesh(NULL, 0, NULL, NULL, NULL, NULL));
    ENSURE(sm_world_get_time(NULL) == 0.0);
    REFUSED(sm_world_get_surface_triangles(NULL, 0, NULL, NULL));
    ENSURE(sm_world_get_surface_vertex_count(NULL) == 0);
    REFUSED(sm_world_get_float4(NULL, SM_FIELD_POSITION, 0, 0, NULL));
    // sharing with OpenGL
    ENSURE(!sm_world_gl_sharing(NULL, NULL));
    REFUSED(sm_world_share_gl_buffer(NULL, SM_FIELD_POSITION, 0));
    REFUSED(sm_world_copy_to_gl(NULL));
    // scene files
    REFUSED(sm_scene_load_file(NULL, NULL));
    REFUSED(sm_scene_load_string(NULL, NULL, NULL));
    sm_scene *no_scene = (sm_scene *)&zero;
    REFUSED(sm_scene_load_file(NULL, &no_scene));
    ENSURE(no_scene == NULL);
    no_scene = (sm_scene *)&zero;
    REFUSED(sm_scene_load_string(NULL, NULL, &no_scene));
    ENSURE(no_scene == NULL);
    sm_scene_destroy(NULL);
    const sm_scene_info info = sm_scene_get_info(NULL);
    ENSURE(info.dt == 0.0 && info.substeps == 0 && info.steps == 0 && info.object_count == 0 && info.cut_count == 0);
    const sm_world_def scene_def = sm_scene_world_def(NULL), default_def = sm_world_def_default();
    ENSURE(memcmp(&scene_def.gravity, &default_def.gravity, sizeof scene_def.gravity) == 0 &&
           scene_def.internal_value == default_def.internal_value);
    ENSURE(sm_scene_object_def(NULL, 0) == NULL);
    REFUSED(sm_scene_create_world(NULL, NULL, NULL));
    no_world = (sm_world *)&zero;
    REFUSED(sm_scene_create_world(NULL, NULL, &no_world));
    ENSURE(no_world == NULL);
    REFUSED(sm_scene_apply(NULL, NULL));
    REFUSED(sm_scene_step(NULL, NULL));
    // meshes
    REFUSED(sm_mesh_load_file(NULL, NULL));
    sm_mesh_free(NULL);
    ENSURE(sm_mesh_open_edges(NULL) == 0);
    ENSURE(sm_mesh_winding_number(NULL, zero) == 0.0);
    // OpenCL devices
    REFUSED(sm_opencl_devices(NULL, 0, NULL));
    REFUSED(sm_opencl_device_for(NULL, NULL));
    ENSURE(strcmp(sm_mode_name((sm_mode)-1), "?") == 0);
    ENSURE(strcmp(sm_shape_name((sm_shape_type)-1), "?") == 0);

    // a real world and scene, NULL for each required output
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\"}]}", "null outputs", &scene));
    if (!scene) return;
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        ENSURE_OK(sm_world_add_object(world, sm_scene_object_def(scene, 0), NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        ENSURE(strcmp(sm_world_backend_name(world), backend_names[b]) == 0);
        const sm_world_def wd = sm_world_def_default();
        REFUSED(sm_world_create(&wd, NULL));
        REFUSED(sm_world_estimate_memory(world, NULL, 0, NULL));
        REFUSED(sm_world_estimate_memory(world, NULL, 1, &(sm_memory_estimate){0}));
        REFUSED(sm_world_copy_state(world, NULL));
        REFUSED(sm_world_copy_state(NULL, world));
        REFUSED(sm_world_add_object(world, NULL, NULL));
        REFUSED(sm_world_get_object(world, 0, NULL));
        REFUSED(sm_world_get_object_particles(world, 0, NULL, NULL));
        REFUSED(sm_world_get_particle_objects(world, 0, 1, NULL));
        REFUSED(sm_world_get_cluster(world, 0, NULL));
        REFUSED(sm_world_get_cluster_members(world, 0, NULL, NULL));
        REFUSED(sm_world_get_contact_stats(world, NULL));
        REFUSED(sm_world_get_positions(world, 0, 1, NULL));
        REFUSED(sm_world_get_velocities(world, 0, 1, NULL));
        REFUSED(sm_world_get_rest_positions(world, 0, 1, NULL));
        REFUSED(sm_world_get_goals(world, 0, 1, NULL));
        REFUSED(sm_world_get_masses(world, 0, 1, NULL));
        REFUSED(sm_world_set_positions(world, 0, 1, NULL));
        REFUSED(sm_world_set_velocities(world, 0, 1, NULL));
        REFUSED(sm_world_get_forces(world, 0, 1, NULL));
        REFUSED(sm_world_get_targets(world, 0, 1, NULL));
        REFUSED(sm_world_get_object_params(world, 0, NULL));
        REFUSED(sm_world_set_object_params(world, 0, NULL));
        REFUSED(sm_world_set_pusher(world, NULL));
        REFUSED(sm_world_get_cuts(world, NULL, NULL));
        REFUSED(sm_world_add_collider(world, NULL, NULL));
        REFUSED(sm_world_get_collider(world, 0, NULL));
        REFUSED(sm_world_get_collider_mesh(world, 0, NULL, NULL, NULL, NULL));
        REFUSED(sm_world_get_surface_triangles(world, 0, NULL, NULL));
        REFUSED(sm_world_get_float4(world, SM_FIELD_POSITION, 0, 1, NULL));
        ENSURE(!sm_world_gl_sharing(world, NULL));
        REFUSED(sm_scene_apply(scene, NULL));
        REFUSED(sm_scene_apply(NULL, world));
        REFUSED(sm_scene_step(scene, NULL));
        REFUSED(sm_scene_step(NULL, world));
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
    REFUSED(sm_scene_load_string("{}", NULL, NULL));
    REFUSED(sm_scene_load_file("scene.json", NULL));
    REFUSED(sm_scene_create_world(scene, NULL, NULL));
    REFUSED(sm_mesh_load_file("mesh.obj", NULL));
    REFUSED(sm_opencl_devices(NULL, 1, &(int32_t){0}));
#undef REFUSED
    sm_scene_destroy(scene);
}

/* ---- Scene files ---------------------------------------------------------------------------- */

/// Numbers that overflow (1e999, which cJSON reads as infinity) or underflow to zero (1e-999) are
/// refused, naming the field, wherever a scene takes a number or an index.
static void overflowing_scene_numbers_are_refused(void)
{
    static const struct {
        const char *json, *expect, *expect2;
    } cases[] = {
        {"{\"gravity\": [0, -1e999, 0], \"objects\": [{\"shape\": \"box\"}]}", "field \"gravity\"", NULL},
        {"{\"substeps\": 1e999, \"objects\": [{\"shape\": \"box\"}]}", "field \"substeps\"", NULL},
        {"{\"ground\": {\"height\": -1e999}, \"objects\": [{\"shape\": \"box\"}]}", "field \"ground.height\"", NULL},
        {"{\"collisions\": {\"skin\": 1e999}, \"objects\": [{\"shape\": \"box\"}]}", "field \"collisions.skin\"", NULL},
        {"{\"objects\": [{\"shape\": \"box\", \"position\": [1e999, 0, 0]}]}", "object 0", "field \"position\""},
        {"{\"objects\": [{\"shape\": \"box\", \"rotation\": [0, 0, -1e999]}]}", "object 0", "field \"rotation\""},
        {"{\"objects\": [{\"shape\": \"box\", \"velocity\": [0, -1e999, 0]}]}", "object 0", "field \"velocity\""},
        {"{\"objects\": [{\"shape\": \"box\", \"angular_velocity\": [1e999, 0, 0]}]}", "object 0", "field \"angular_velocity\""},
        {"{\"objects\": [{\"shape\": \"box\", \"force\": [0, 1e999, 0]}]}", "object 0", "field \"force\""},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": 1e999}]}", "object 0", "field \"mass\""},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": 1e-999}]}", "object 0", "field \"mass\""},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": -1e999}]}", "object 0", "field \"mass\""},
        {"{\"objects\": [{\"shape\": \"box\", \"alpha\": 1e999}]}", "object 0", "field \"alpha\""},
        {"{\"objects\": [{\"shape\": \"box\", \"damping\": 1e999}]}", "object 0", "field \"damping\""},
        {"{\"objects\": [{\"shape\": \"box\", \"size\": [1, 1e999, 1]}]}", "object 0", "field \"size\""},
        {"{\"objects\": [{\"shape\": \"box\", \"resolution\": [4, 1e999, 4]}]}", "object 0", "field \"resolution\""},
        {"{\"objects\": [{\"shape\": \"sphere\", \"radius\": 1e999}]}", "object 0", "field \"radius\""},
        {"{\"objects\": [{\"shape\": \"sphere\", \"spacing\": 1e-999}]}", "object 0", "field \"spacing\""},
        {"{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0], [1e999, 0, 0]]}]}", "object 1",
         "field \"points[1]\""},
        {"{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0]], \"masses\": [1, 1e-999]}]}", "object 0",
         "field \"masses[1]\""},
        {"{\"objects\": [{\"shape\": \"box\", \"fixed\": [0, 1e999]}]}", "object 0", "field \"fixed\""},
        {"{\"objects\": [{\"shape\": \"box\", \"clusters\": {\"lists\": [[0, 1e999]]}}]}", "object 0", "field \"clusters.lists[0]\""},
        {"{\"objects\": [{\"shape\": \"box\", \"clusters\": {\"grid\": [1e999, 1, 1]}}]}", "object 0", "field \"clusters.grid\""},
        {"{\"objects\": [{\"shape\": \"box\", \"clusters\": {\"overlap\": 1e999}}]}", "object 0", "field \"clusters.overlap\""},
        {"{\"objects\": [{\"shape\": \"box\", \"plasticity\": {\"creep\": 1e999}}]}", "object 0", "field \"plasticity.creep\""},
        {"{\"objects\": [{\"shape\": \"box\", \"cap\": {\"hard\": 1e999}}]}", "object 0", "field \"cap.hard\""},
        {"{\"colliders\": [{\"shape\": \"sphere\", \"position\": [0, 1e999, 0]}], \"objects\": [{\"shape\": \"box\"}]}",
         "collider 0", "field \"position\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sm_scene *scene = (sm_scene *)&k; // poisoned: a failed load must set it to NULL
        char label[64];
        snprintf(label, sizeof label, "overflow case %zu", k);
        expect(sm_scene_load_string(cases[k].json, "overflow", &scene), SM_ERROR_SCENE, label, cases[k].expect,
               cases[k].expect2);
        ENSURE(scene == NULL && contains(sm_last_error(), "overflow"));
    }
}

/// Scene files of random bytes, empty or cut short, and objects whose mesh is a directory or
/// random bytes, fail with SM_ERROR_SCENE naming the file (and the object and field).
static void unreadable_scene_and_mesh_files_are_refused(void)
{
    const char *dir = SM_TEST_TMP "/bad_input_files";
    mkdir(dir, 0755);
    char path[1024];
    rng r = {7};
    unsigned char garbage[2048];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)rng_uniform(&r, 0, 256);
    garbage[100] = 0; // certainly a NUL byte

    snprintf(path, sizeof path, "%s/garbage.json", dir);
    ENSURE(write_bytes(path, garbage, sizeof garbage));
    sm_scene *scene = NULL;
    expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, "garbage with NUL", path, "not a text file");
    ENSURE(scene == NULL);
    // the same bytes without NUL: not JSON, at line 1
    unsigned char text[sizeof garbage];
    for (size_t i = 0; i < sizeof garbage; i++) text[i] = garbage[i] ? garbage[i] : 'x';
    text[0] = '{';
    ENSURE(write_bytes(path, text, sizeof text));
    expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, "garbage text", path, "not valid JSON");
    ENSURE(scene == NULL);
    snprintf(path, sizeof path, "%s/empty.json", dir);
    ENSURE(write_bytes(path, "", 0));
    expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, "empty file", path, "not valid JSON");
    ENSURE(scene == NULL);
    static const char truncated[] = "{\"objects\": [\n  {\"shape\": \"box\", \"position\": [0, 1";
    snprintf(path, sizeof path, "%s/truncated.json", dir);
    ENSURE(write_bytes(path, truncated, sizeof truncated - 1));
    char where[1100];
    snprintf(where, sizeof where, "%s:2:", path); // the error is on the second line
    expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, "truncated file", where, "not valid JSON");
    ENSURE(scene == NULL);

    // meshes given by a scene file, relative to its folder
    static const char *const meshes[] = {"garbage.stl", "garbage.ply", "garbage.glb"};
    for (size_t m = 0; m < sizeof meshes / sizeof meshes[0]; m++) {
        snprintf(path, sizeof path, "%s/%s", dir, meshes[m]);
        ENSURE(write_bytes(path, garbage, sizeof garbage));
        char json[256];
        snprintf(json, sizeof json, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"%s\"}]}", meshes[m]);
        snprintf(path, sizeof path, "%s/mesh_scene.json", dir);
        ENSURE(write_bytes(path, json, strlen(json)));
        snprintf(where, sizeof where, "%s: object 1: field \"mesh\"", path);
        expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, meshes[m], where, meshes[m]);
        ENSURE(contains(sm_last_error(), m == 1 ? "a PLY file must start with" : "assimp"));
        ENSURE(scene == NULL);
        // as the skinned surface of a box
        snprintf(json, sizeof json, "{\"objects\": [{\"shape\": \"box\", \"surface\": {\"mesh\": \"%s\"}}]}", meshes[m]);
        ENSURE(write_bytes(path, json, strlen(json)));
        expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, meshes[m], "object 0", meshes[m]);
        ENSURE(scene == NULL);
    }
    // a directory where a mesh should be
    static const char folder_mesh[] = "{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \".\"}]}";
    snprintf(path, sizeof path, "%s/folder_scene.json", dir);
    ENSURE(write_bytes(path, folder_mesh, sizeof folder_mesh - 1));
    expect(sm_scene_load_file(path, &scene), SM_ERROR_SCENE, "a directory as mesh", "object 0: field \"mesh\"", dir);
    ENSURE(scene == NULL);
}

/* ---- The float range of the OpenCL backend ---------------------------------------------------- */

/// Finite values beyond the float range (3.4e38) that the OpenCL kernels would turn into
/// infinities are refused on OpenCL, naming the field and the object: particles' placements,
/// velocities and accelerations, gravity, the ground's height, a collider's position (with its
/// motion) and its motion's speed, a skinned surface's vertices, and collider sizes beyond 1e18 m (squared in the
/// kernels); the CPU reference, in double, takes them and stays finite. (Masses have their own range on both backends,
/// zero_and_negative_masses_are_refused.) Forces set by sm_world_set_force() or
/// sm_world_set_forces() beyond it, or whose acceleration is, are refused too: 1e300 N turned
/// every position NaN with no error.
static void values_beyond_the_device_float_range_are_refused_on_opencl(void)
{
    static const struct {
        const char *json, *expect, *expect2;
    } cases[] = {
        {"{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"box\", \"position\": [1e39, 0, 0]}]}", "object 1: particle 0",
         "position"},
        {"{\"objects\": [{\"shape\": \"box\", \"velocity\": [0, 0, -2e38], \"angular_velocity\": [0, 1e39, 0]}]}",
         "object 0: particle 0", "velocity"},
        {"{\"objects\": [{\"shape\": \"box\", \"force\": [0, 1e39, 0]}]}", "object 0: particle 0", "acceleration"},
        {"{\"objects\": [{\"shape\": \"box\", \"size\": [1e20, 1, 1]}]}", "object 0", "second moment"},
        {"{\"gravity\": [0, -1e39, 0], \"objects\": [{\"shape\": \"box\"}]}", "sm_world_create", "gravity"},
        {"{\"ground\": {\"height\": -1e300}, \"objects\": [{\"shape\": \"box\"}]}", "sm_world_create", "ground's height"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"plane\", \"position\": [0, 1e300, 0]}]}",
         "sm_world_add_collider", "its position"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"box\", \"position\": [0, -3, 0],"
         " \"motion\": {\"type\": \"linear\", \"times\": [0, 1], \"offsets\": [[0, 0, 0], [4e38, 0, 0]]}}]}",
         "sm_world_add_collider", "with its motion"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"sphere\", \"position\": [0, -3e19, 0],"
         " \"radius\": 2.9e19}]}", "sm_world_add_collider", "sphere's radius"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"box\", \"size\": [1, 5e18, 1]}]}",
         "sm_world_add_collider", "box's edge"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"mesh\", \"mesh\": \"" SM_SCENES_DIR
         "/meshes/bowl.obj\", \"position\": [0, -1e19, 0], \"scale\": 1e19}]}", "sm_world_add_collider", "the mesh reaches"},
        // a motion whose speed is beyond float (a swing's amplitude 2 pi frequency, a key's
        // offset over its span): its velocity turned a box on the plane NaN in 7 steps
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"plane\", \"position\": [0, -1, 0], \"motion\":"
         " {\"type\": \"sinusoidal\", \"amplitude\": [1e20, 0, 0], \"frequency\": 1e20}}]}", "sm_world_add_collider",
         "motion's speed"},
        {"{\"objects\": [{\"shape\": \"box\"}], \"colliders\": [{\"shape\": \"box\", \"position\": [0, -3, 0], \"motion\":"
         " {\"type\": \"linear\", \"times\": [0, 1e-30], \"offsets\": [[0, 0, 0], [1e10, 0, 0]]}}]}", "sm_world_add_collider",
         "motion's speed"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sm_scene *scene = NULL;
        ENSURE_OK(sm_scene_load_string(cases[k].json, "range", &scene));
        if (!scene) continue;
        sm_world *world = NULL;
        ENSURE_OK(create_world(scene, SM_BACKEND_CPU, &world));
        if (world) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE(!world_has_nan(world));
        }
        sm_world_destroy(world);
        world = (sm_world *)scene; // poisoned
        char label[64];
        snprintf(label, sizeof label, "opencl range case %zu", k);
        expect(create_world(scene, SM_BACKEND_OPENCL, &world), SM_ERROR_INVALID_ARGUMENT, label, cases[k].expect,
               cases[k].expect2);
        ENSURE(world == NULL && contains(sm_last_error(), "float range"));
        sm_scene_destroy(scene);
    }
    // edits of a running world
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        sm_object_def def = sm_object_def_default();
        ENSURE_OK(sm_world_add_object(world, &def, NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        const double far[3] = {0.0, 4e38, 0.0};
        const sm_result expected = b == 0 ? SM_OK : SM_ERROR_INVALID_ARGUMENT;
        expect(sm_world_set_positions(world, 5, 1, far), expected, "set_positions 4e38", "sm_world_set_positions", "float range");
        expect(sm_world_set_target(world, 5, (sm_vec3){0, 0, 5e38}, 1.0), expected, "set_target 5e38", "sm_world_set_target",
               "float range");
        expect(sm_world_set_force(world, 5, (sm_vec3){1e300, 0, 0}), expected, "set_force 1e300", "sm_world_set_force",
               "float range");
        // 1e37 N on a particle of 1/64 kg: the force fits a float, its acceleration does not
        const double strong[6] = {0.0, 0.0, 0.0, 0.0, -1e37, 0.0};
        expect(sm_world_set_forces(world, 4, 2, strong), expected, "set_forces 1e37 N", "value 4", "acceleration");
        if (b == 1) { // refused whole: no force changed
            double forces[6];
            ENSURE_OK(sm_world_get_forces(world, 4, 2, forces));
            ENSURE(forces[4] != -1e37 && forces[0] != 1e300);
        }
        // a skinned surface placed beyond float: the world keeps its objects
        static const sm_vec3 corners[3] = {{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 4e38, 0.0}};
        static const int32_t triangle[3] = {0, 1, 2};
        sm_object_def surfaced = sm_object_def_default();
        surfaced.surface.vertices = corners, surfaced.surface.vertex_count = 3;
        surfaced.surface.triangles = triangle, surfaced.surface.triangle_count = 1;
        const sm_counts before = sm_world_get_counts(world);
        expect(sm_world_add_object(world, &surfaced, NULL), expected, "a surface at 4e38", "surface vertex 2", "float range");
        if (b == 1) ENSURE(same_counts(sm_world_get_counts(world), before));
        if (b == 1) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE(!world_has_nan(world));
        }
        sm_world_destroy(world);
    }
}

/// Objects too small for the device's floats are refused on OpenCL, and those it takes match the
/// reference. The device sums products m y q^T of a cluster's offsets y, q (about its size s) and
/// member masses m: where s^2 or m s^2 is below the smallest normal float (1.2e-38) the sums are
/// subnormal or 0, and a spinning linear box of 1e-20 m ended 15% of its size from the
/// reference's (a quadratic one went non-finite). Seeded draws of a spinning box of 3 x 3 x 3
/// particles, linear or quadratic, its edge log-uniform in [1e-22, 1e-12] m and its mass in
/// its whole range, [1e-12, 1e12] kg: OpenCL refuses it, naming the cluster, where the bound is missed by more than
/// a factor of 2, and takes it where it is met by that; a box it takes ends within 1e-4 of its
/// size of the reference's after 30 steps. The CPU reference takes every one.
static void objects_below_the_device_float_range_are_refused_or_match_the_reference(void)
{
    rng r = {61};
    int refused = 0, taken = 0;
    for (int k = 0; k < 24; k++) {
        const double edge = pow(10.0, rng_uniform(&r, -22.0, -12.0)), mass = pow(10.0, rng_uniform(&r, -12.0, 12.0));
        sm_object_def def = sm_object_def_default();
        def.shape.size = (sm_vec3){edge, edge, edge};
        def.shape.resolution[0] = def.shape.resolution[1] = def.shape.resolution[2] = 3;
        def.mass = mass;
        def.mode = k % 2 == 0 ? SM_MODE_LINEAR : SM_MODE_QUADRATIC;
        def.alpha = 0.5, def.beta = 0.5;
        def.angular_velocity = (sm_vec3){0.0, 3.0, 1.0};
        // the one cluster's size: the corners, sqrt(3) / 2 edges from the centre
        const double size2 = 0.75 * edge * edge, bound = fmin(size2, mass / 27.0 * size2) / FLT_MIN;
        char label[160];
        snprintf(label, sizeof label, "an edge of %g m and a mass of %g kg (%g times the bound)", edge, mass, bound);
        double end[2][27 * 3];
        bool ran[2] = {false, false};
        for (int b = 0; b < 2; b++) {
            sm_world_def wd = sm_world_def_default();
            wd.backend = backends[b];
            wd.gravity = (sm_vec3){0.0, 0.0, 0.0};
            sm_world *world = NULL;
            ENSURE_OK(sm_world_create(&wd, &world));
            if (!world) continue;
            if (b == 1 && bound < 0.5) {
                refused_object(world, &def, label, "cluster 0", "smallest normal float");
                world_still_works(world, label);
                refused++;
            } else {
                const sm_result added = sm_world_add_object(world, &def, NULL);
                if (b == 0 || bound > 2.0) expect(added, SM_OK, label, NULL, NULL);
                for (int s = 0; added == SM_OK && s < 30; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
                ran[b] = added == SM_OK && sm_world_get_positions(world, 0, 27, end[b]) == SM_OK;
                taken += b == 1 && ran[b];
            }
            sm_world_destroy(world);
        }
        if (!ran[0] || !ran[1]) continue;
        double off = 0.0;
        for (int j = 0; j < 27 * 3; j++) off = fmax(off, fabs(end[1][j] - end[0][j]));
        if (!(off <= 1e-4 * edge)) {
            fprintf(stderr, "%s: OpenCL ended %g of its size from the reference\n", label, off / edge);
            sm_test_failures++;
        }
    }
    ENSURE(refused >= 4 && taken >= 4); // both sides of the bound were drawn
}

/// On OpenCL an object so large that float rounding alone moves its particles past check_speed
/// (the default 1e5 m/s: rounding of 1e-7 of a 1e12 m box at 60 Hz is 6e6 m/s) is stopped by
/// the state check with a message that says so, and with check_speed raised it stays whole; the
/// CPU reference runs it within the default. Seeded draws of a box at rest, linear or quadratic,
/// turned, its edge log-uniform in [1e11, 1e13] m.
static void large_objects_stopped_by_rounding_say_so(void)
{
    rng r = {67};
    for (int k = 0; k < 4; k++) {
        const double edge = pow(10.0, rng_uniform(&r, 11.0, 13.0));
        sm_object_def def = sm_object_def_default();
        def.shape.size = (sm_vec3){edge, edge, edge};
        def.mode = k % 2 == 0 ? SM_MODE_LINEAR : SM_MODE_QUADRATIC;
        def.rotation = (sm_vec3){rng_uniform(&r, 10.0, 80.0), rng_uniform(&r, 10.0, 80.0), 0.0}; // (not the pose it is made in)
        char label[96];
        snprintf(label, sizeof label, "a box of %g m", edge);
        for (int b = 0; b < 3; b++) { // the reference, OpenCL, OpenCL with check_speed raised
            sm_world_def wd = sm_world_def_default();
            wd.backend = backends[b > 0];
            wd.gravity = (sm_vec3){0.0, 0.0, 0.0};
            wd.check_interval = 60;
            if (b == 2) wd.check_speed = 1e12;
            sm_world *world = NULL;
            ENSURE_OK(sm_world_create(&wd, &world));
            if (!world) continue;
            ENSURE_OK(sm_world_add_object(world, &def, NULL));
            sm_result result = SM_OK;
            for (int s = 0; s < 120 && result == SM_OK; s++) result = sm_world_step(world, 1.0 / 60.0, 1);
            if (b == 1) expect(result, SM_ERROR_DIVERGED, label, "faster than check_speed", "float rounding");
            else expect(result, SM_OK, label, NULL, NULL);
            if (b == 2) { // whole: every particle within the box's half diagonal of the centre, and a bit
                double xyz[64 * 3], center[3] = {0.0, 0.0, 0.0}, far = 0.0;
                ENSURE_OK(sm_world_get_positions(world, 0, 64, xyz));
                for (int i = 0; i < 64 * 3; i++) center[i % 3] += xyz[i] / 64.0;
                for (int i = 0; i < 64; i++)
                    far = fmax(far, hypot(hypot(xyz[3 * i] - center[0], xyz[3 * i + 1] - center[1]), xyz[3 * i + 2] - center[2]));
                ENSURE_RANGE(far / edge, 0.86, 0.87);
            }
            sm_world_destroy(world);
        }
    }
}

/// A world with collisions on `backend`, and a box 3 m off the origin.
static sm_world *colliding_world(sm_backend backend)
{
    sm_world_def wd = sm_world_def_default();
    wd.backend = backend;
    wd.collisions.enabled = true;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return NULL;
    sm_object_def def = sm_object_def_default();
    def.position = (sm_vec3){3.0, 0.0, 0.0};
    ENSURE_OK(sm_world_add_object(world, &def, NULL));
    return world;
}

/// A collision radius beyond 1e18 m, given or from radius_scale (the object's or the world's),
/// is refused on OpenCL naming the field, and the world keeps its objects (its float contact
/// search squares the sum of two radii: 1e308 made every position NaN); the CPU reference takes
/// it. A radius up to 1e18 m, against a box 3 m away, runs finite on OpenCL. Radii are seeded random draws, log-uniform.
static void collision_radii_beyond_the_float_limit_are_refused_on_opencl(void)
{
    rng r = {43};
    for (int b = 0; b < 2; b++) {
        sm_world *world = colliding_world(backends[b]);
        if (!world) continue;
        for (int k = 0; k < 12; k++) {
            sm_object_def def = sm_object_def_default();
            const double radius = pow(10.0, rng_uniform(&r, 18.05, 308.0));
            const char *field = k % 2 == 0 ? "collisions.radius" : "collisions.radius_scale";
            if (k % 2 == 0) def.collisions.radius = radius;
            else def.collisions.radius_scale = radius / (0.5 * 1.0 / 3.0); // half the 1/3 m spacing of a 4^3 box
            char label[96];
            snprintf(label, sizeof label, "%s: %s giving a radius of %g m", backend_names[b], field, radius);
            if (b == 1) refused_object(world, &def, label, field, "1e+18");
            else expect(sm_world_add_object(world, &def, NULL), SM_OK, label, NULL, NULL);
        }
        if (b == 1) world_still_works(world, "opencl after radii beyond the limit");
        sm_world_destroy(world);
    }
    // the world's radius_scale
    sm_world_def wd = sm_world_def_default();
    wd.backend = SM_BACKEND_OPENCL;
    wd.collisions.enabled = true;
    wd.collisions.radius_scale = 1e300;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (world) {
        sm_object_def def = sm_object_def_default();
        refused_object(world, &def, "opencl: the world's radius_scale 1e300", "the world's collisions.radius_scale", "1e+18");
        sm_world_destroy(world);
    }
    // just inside: the limit itself and a random radius below it, given and from radius_scale
    for (int k = 0; k < 2; k++) {
        world = colliding_world(SM_BACKEND_OPENCL);
        if (!world) continue;
        sm_object_def def = sm_object_def_default();
        if (k == 0) def.collisions.radius = 1e18;
        else def.collisions.radius_scale = pow(10.0, rng_uniform(&r, 3.0, 18.0)) / (0.5 * 1.0 / 3.0);
        ENSURE_OK(sm_world_add_object(world, &def, NULL));
        for (int s = 0; s < 3; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
    }
}

/// A box whose resolution holds more than SM_MAX_OBJECT_PARTICLES particles is refused by
/// sm_world_add_object() and sm_world_estimate_memory(), naming its resolution, however its axes
/// multiply: products that wrap a 64-bit integer to 0 (2^21 x 2^21 x 2^22) or to a small number,
/// INT32_MAX on every axis, and seeded random axes from 1 to INT32_MAX (log-uniform, at least
/// one past the limit's cube root) on both backends. (A wrapped product once sampled a box into
/// a buffer of 0 bytes.)
static void boxes_of_too_many_particles_are_refused(void)
{
    int32_t cases[40][3] = {{1 << 21, 1 << 21, 1 << 22}, {1 << 22, 1 << 21, 1 << 21}, {INT32_MAX, INT32_MAX, INT32_MAX},
                            {65537, 65537, 65537}, {1 << 30, 1 << 30, 17}, {SM_MAX_OBJECT_PARTICLES, 2, 1}};
    int count = 6;
    rng r = {91};
    while (count < 40) {
        for (int a = 0; a < 3; a++) cases[count][a] = (int32_t)fmin(pow(2.0, rng_uniform(&r, 0.0, 31.0)), INT32_MAX);
        cases[count][count % 3] = (int32_t)fmin(pow(2.0, rng_uniform(&r, 8.0, 31.0)), INT32_MAX);
        const double product = (double)cases[count][0] * cases[count][1] * cases[count][2];
        count += product > SM_MAX_OBJECT_PARTICLES;
    }
    for (int b = 0; b < 2; b++) {
        sm_world *world = empty_world(backends[b]);
        if (!world) continue;
        for (int k = 0; k < count; k++) {
            sm_object_def def = sm_object_def_default();
            for (int a = 0; a < 3; a++) def.shape.resolution[a] = cases[k][a];
            char label[160], part[64];
            snprintf(label, sizeof label, "%s: box of %d x %d x %d", backend_names[b], cases[k][0], cases[k][1],
                     cases[k][2]);
            snprintf(part, sizeof part, "resolution %d x %d x %d", cases[k][0], cases[k][1], cases[k][2]);
            sm_memory_estimate estimate;
            expect(sm_world_estimate_memory(world, &def, 1, &estimate), SM_ERROR_INVALID_ARGUMENT, label, part, "over");
            refused_object(world, &def, label, part, "over");
        }
        world_still_works(world, backend_names[b]);
        sm_world_destroy(world);
    }
}

/* ---- Device memory ---------------------------------------------------------------------------- */

/// The byte count after `after` in the last error message, or -1.
static long long bytes_after(const char *after)
{
    const char *at = strstr(sm_last_error(), after);
    return at ? strtoll(at + strlen(after), NULL, 10) : -1;
}

/// A world whose buffers exceed the device's memory ($SM_DEVICE_MEMORY_LIMIT stands in for a
/// smaller device) fails at its first step with SM_ERROR_OUT_OF_MEMORY giving the bytes needed
/// and available, holds no device memory, and runs once the memory suffices, exactly as a world
/// that never failed; the bound is exact, for all buffers and for one buffer.
static void a_world_too_large_for_the_device_fails_cleanly(void)
{
    unsetenv("SM_DEVICE_MEMORY_LIMIT");
    sm_world *fits = empty_world(SM_BACKEND_OPENCL), *big = empty_world(SM_BACKEND_OPENCL);
    if (!fits || !big) {
        sm_world_destroy(fits), sm_world_destroy(big);
        return;
    }
    sm_object_def def = sm_object_def_default();
    def.shape.resolution[0] = 10, def.clusters.grid[0] = 3, def.angular_velocity = (sm_vec3){1.0, 0.0, 0.0};
    ENSURE_OK(sm_world_add_object(fits, &def, NULL));
    ENSURE_OK(sm_world_add_object(big, &def, NULL));
    ENSURE_OK(sm_world_step(fits, 1.0 / 60.0, 1));
    const int64_t needed = sm_world_get_memory(fits).device_bytes;
    const int32_t n = sm_world_get_counts(fits).particles;
    ENSURE(needed > 16 * (int64_t)n);
    double *rest = get_rest_positions(big);

    // one byte short in all: refused before anything is allocated, again at the next step
    char limit[64], needs[64];
    snprintf(limit, sizeof limit, "%lld", (long long)needed - 1);
    snprintf(needs, sizeof needs, "needs %lld bytes of device memory", (long long)needed);
    setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
    for (int attempt = 0; attempt < 2; attempt++) {
        expect(sm_world_step(big, 1.0 / 60.0, 1), SM_ERROR_OUT_OF_MEMORY, "one byte short", needs, "($SM_DEVICE_MEMORY_LIMIT)");
        ENSURE(bytes_after(" has ") == needed - 1);
        ENSURE(sm_world_get_memory(big).device_bytes == 0);
        ENSURE(sm_world_get_time(big) == 0.0);
    }
    double *positions = get_positions(big);
    ENSURE(memcmp(rest, positions, sizeof(double) * 3 * (size_t)n) == 0);
    free(positions);

    // one buffer too large: the size of the largest, exact at the bound
    snprintf(limit, sizeof limit, "%lld,1", (long long)needed);
    setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
    expect(sm_world_step(big, 1.0 / 60.0, 1), SM_ERROR_OUT_OF_MEMORY, "one buffer", "needs a buffer of",
           "allocates at most 1 bytes in one buffer ($SM_DEVICE_MEMORY_LIMIT)");
    const long long largest = bytes_after("needs a buffer of ");
    ENSURE(largest >= 16 * (long long)n && largest < needed);
    snprintf(limit, sizeof limit, "%lld,%lld", (long long)needed, largest - 1);
    setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
    expect(sm_world_step(big, 1.0 / 60.0, 1), SM_ERROR_OUT_OF_MEMORY, "one buffer, one byte short", "needs a buffer of", NULL);
    ENSURE(bytes_after("needs a buffer of ") == largest && bytes_after("allocates at most ") == largest - 1);
    ENSURE(sm_world_get_memory(big).device_bytes == 0);

    // exactly enough: it runs, as the world that never failed did
    snprintf(limit, sizeof limit, "%lld,%lld", (long long)needed, largest);
    setenv("SM_DEVICE_MEMORY_LIMIT", limit, 1);
    ENSURE_OK(sm_world_step(big, 1.0 / 60.0, 1));
    ENSURE(sm_world_get_memory(big).device_bytes == needed);
    double *a = get_positions(fits), *b = get_positions(big);
    ENSURE(memcmp(a, b, sizeof(double) * 3 * (size_t)n) == 0);
    free(a), free(b);

    // a target needs one more buffer, of 16 bytes per particle: refused, and the world keeps no target
    snprintf(needs, sizeof needs, "needs %lld bytes of device memory", (long long)needed + 16 * n);
    expect(sm_world_set_target(big, 7, (sm_vec3){0, 2, 0}, 50.0), SM_ERROR_OUT_OF_MEMORY, "target", needs,
           "($SM_DEVICE_MEMORY_LIMIT)");
    double target[4] = {1, 1, 1, 1};
    ENSURE_OK(sm_world_get_targets(big, 7, 1, target));
    ENSURE(target[3] == 0.0);
    ENSURE_OK(sm_world_step(big, 1.0 / 60.0, 1));

    // a value that is no byte count is ignored; the CPU reference never reads it
    setenv("SM_DEVICE_MEMORY_LIMIT", "lots", 1);
    ENSURE_OK(sm_world_set_target(big, 7, (sm_vec3){0, 2, 0}, 50.0));
    ENSURE_OK(sm_world_step(big, 1.0 / 60.0, 1));
    ENSURE(sm_world_get_memory(big).other_bytes == 16 * (int64_t)n);
    setenv("SM_DEVICE_MEMORY_LIMIT", "1", 1);
    sm_world *cpu = empty_world(SM_BACKEND_CPU);
    if (cpu) {
        ENSURE_OK(sm_world_add_object(cpu, &def, NULL));
        ENSURE_OK(sm_world_step(cpu, 1.0 / 60.0, 1));
    }
    unsetenv("SM_DEVICE_MEMORY_LIMIT");
    free(rest);
    sm_world_destroy(cpu);
    sm_world_destroy(fits);
    sm_world_destroy(big);
}

/* ---- Child processes: an environment set before the first OpenCL call ---------------------- */

/// Runs test `name` of this executable in a new process whose environment adds `assignments`
/// ("NAME=value", or "NAME" to remove it; NULL-terminated); returns its exit status, or -1 when
/// it did not exit.
static int run_in_child(const char *name, const char *const *assignments)
{
    fflush(stdout), fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        for (const char *const *a = assignments; *a; a++) {
            const char *equals = strchr(*a, '=');
            char name[256];
            snprintf(name, sizeof name, "%.*s", equals ? (int)(equals - *a) : (int)strlen(*a), *a);
            if (equals)
                setenv(name, equals + 1, 1);
            else
                unsetenv(name);
        }
        execl("/proc/self/exe", "test_bad_input", name, (char *)NULL);
        fprintf(stderr, "cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Every error message the log callback received, joined, and the warnings apart.
typedef struct captured_log {
    char errors[65536], warnings[4096];
} captured_log;

static void capture_log(sm_log_level level, const char *message, void *user)
{
    captured_log *log = user;
    char *into = level == SM_LOG_ERROR ? log->errors : level == SM_LOG_WARNING ? log->warnings : NULL;
    const size_t size = level == SM_LOG_ERROR ? sizeof log->errors : sizeof log->warnings;
    if (into) snprintf(into + strlen(into), size - strlen(into), "%s\n", message);
}

/// (In a process whose ICD loader finds no platform.) Asking for OpenCL fails with
/// SM_ERROR_UNAVAILABLE saying what to install, leaving no world; the default backend runs the
/// CPU reference and says so in the log.
static void child_no_platform(void)
{
    int32_t count = -1;
    sm_device_info devices[4];
    expect(sm_opencl_devices(devices, 4, &count), SM_ERROR_UNAVAILABLE, "sm_opencl_devices", "no OpenCL platform is installed",
           "pocl-opencl-icd");
    static captured_log log;
    sm_world_def wd = sm_world_def_default();
    wd.log = capture_log, wd.log_user = &log;
    wd.backend = SM_BACKEND_OPENCL;
    const char *selectors[] = {NULL, "0", "pocl"};
    for (int s = 0; s < 3; s++) {
        wd.device = selectors[s];
        sm_world *world = (sm_world *)&wd;
        expect(sm_world_create(&wd, &world), SM_ERROR_UNAVAILABLE, "OpenCL backend", "no OpenCL platform is installed", NULL);
        ENSURE(world == NULL);
    }
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\"}]}", "scene", &scene));
    sm_world *world = (sm_world *)&wd;
    wd.device = NULL;
    expect(sm_scene_create_world(scene, &wd, &world), SM_ERROR_UNAVAILABLE, "scene on OpenCL", "no OpenCL platform", NULL);
    ENSURE(world == NULL);
    // the default falls back to the CPU reference, with a warning
    wd.backend = SM_BACKEND_DEFAULT;
    ENSURE_OK(sm_scene_create_world(scene, &wd, &world));
    ENSURE(world && strcmp(sm_world_backend_name(world), "cpu") == 0);
    ENSURE(contains(log.warnings, "OpenCL is not available (no OpenCL platform is installed"));
    ENSURE(contains(log.warnings, "running the CPU reference instead"));
    if (world) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// No OpenCL platform: the ICD loader pointed at an empty vendor folder (checked in a new process,
/// as the loader reads its environment once).
static void no_opencl_platform_is_reported(void)
{
    const char *dir = SM_TEST_TMP "/no_icd_vendors";
    mkdir(dir, 0755);
    static char vendors[600];
    snprintf(vendors, sizeof vendors, "OCL_ICD_VENDORS=%s", dir);
    const char *const env[] = {vendors, "OCL_ICD_FILENAMES", NULL};
    ENSURE(run_in_child("child_no_platform", env) == 0);
}

/// (In a process that has opened no OpenCL device yet, with $SM_KERNEL_DIR set to kernels with an
/// error at line $SM_TEST_BROKEN_LINE of 03_goal_transform.cl.) sm_world_create fails with
/// SM_ERROR_UNAVAILABLE; the log callback receives the compiler's whole log, naming the file and
/// the line, and the error message holds it too.
static void child_broken_kernel(void)
{
    const char *line = getenv("SM_TEST_BROKEN_LINE");
    ENSURE(line != NULL);
    if (!line) return;
    char where[64];
    snprintf(where, sizeof where, "03_goal_transform.cl:%s:", line);
    static captured_log log;
    sm_world_def wd = sm_world_def_default();
    wd.backend = SM_BACKEND_OPENCL;
    wd.log = capture_log, wd.log_user = &log;
    sm_world *world = (sm_world *)&wd;
    expect(sm_world_create(&wd, &world), SM_ERROR_UNAVAILABLE, "broken kernel", "building the kernels", where);
    ENSURE(world == NULL);
    ENSURE(contains(sm_last_error(), "build log") && contains(sm_last_error(), "sent to the log callback"));
    ENSURE(contains(log.errors, "OpenCL: the build log of the kernels") && contains(log.errors, where));
    ENSURE(contains(log.errors, "error"));
    printf("  the log callback got: %.200s\n", log.errors);
    // the CPU reference is unaffected
    world = empty_world(SM_BACKEND_CPU);
    sm_world_destroy(world);
}

/// A kernel that fails to build, on the library's own context: the full build log, naming the
/// kernel file and line of the error (see child_broken_kernel).
static void a_kernel_that_fails_to_build_names_its_file_and_line(void)
{
    const char *dir = SM_TEST_TMP "/bad_input_kernels";
    char command[4096];
    snprintf(command, sizeof command, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/*.cl '%s'/*.h '%s'/", dir, dir, SM_KERNELS_DIR,
             SM_KERNELS_DIR, dir);
    ENSURE(system(command) == 0);
    // an error appended after the last line of 03_goal_transform.cl: it is on line (newlines + 1)
    char path[1024];
    snprintf(path, sizeof path, "%s/03_goal_transform.cl", dir);
    FILE *file = fopen(path, "r+");
    ENSURE(file != NULL);
    if (!file) return;
    int newlines = 0, c, last = '\n';
    while ((c = fgetc(file)) != EOF) newlines += c == '\n', last = c;
    if (last != '\n') fputc('\n', file), newlines++;
    fputs("this is not OpenCL C;\n", file);
    fclose(file);
    static char kernel_dir[1100], broken_line[64];
    snprintf(kernel_dir, sizeof kernel_dir, "SM_KERNEL_DIR=%s", dir);
    snprintf(broken_line, sizeof broken_line, "SM_TEST_BROKEN_LINE=%d", newlines + 1);
    const char *const env[] = {kernel_dir, broken_line, NULL};
    ENSURE(run_in_child("child_broken_kernel", env) == 0);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(nonfinite_object_fields_are_refused),
        TEST(zero_and_negative_masses_are_refused),
        TEST(bad_explicit_clusters_are_refused),
        TEST(bad_world_defs_are_refused),
        TEST(bad_steps_are_refused),
        TEST(bad_edits_are_refused),
        TEST(every_call_refuses_null_handles),
        TEST(overflowing_scene_numbers_are_refused),
        TEST(unreadable_scene_and_mesh_files_are_refused),
        TEST(values_beyond_the_device_float_range_are_refused_on_opencl),
        TEST(collision_radii_beyond_the_float_limit_are_refused_on_opencl),
        TEST(objects_below_the_device_float_range_are_refused_or_match_the_reference),
        TEST(large_objects_stopped_by_rounding_say_so),
        TEST(boxes_of_too_many_particles_are_refused),
        TEST(a_world_too_large_for_the_device_fails_cleanly),
        TEST(no_opencl_platform_is_reported),
        TEST(a_kernel_that_fails_to_build_names_its_file_and_line),
    };
    // the parts that need an environment of their own run in a child process, by name only
    static const sm_test_case children[] = {
        TEST(child_no_platform),
        TEST(child_broken_kernel),
    };
    if (argc == 2 && strncmp(argv[1], "child_", 6) == 0)
        return sm_test_main(argc, argv, children, (int)(sizeof children / sizeof children[0]));
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
