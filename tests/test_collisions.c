/* Contact between objects (the collide passes, docs/algorithm.md steps 5 and 6, docs/contact.md), on the
 * CPU reference: bodies that meet stay apart, stack and come to rest; fast ones do not tunnel at
 * the substeps docs/contact.md prescribes; radii follow the lattice spacing. */
#include "support.h"
#include "math3.h"

#include <stdlib.h>
#include <string.h>

/// Centre of mass height of an object.
static double center_y(const sm_world *world, int32_t object)
{
    sm_object_info info;
    sm_world_get_object(world, object, &info);
    double *x = get_positions(world), y = 0.0;
    for (int32_t i = 0; i < info.particle_count; i++) y += x[3 * (info.first_particle + i) + 1];
    free(x);
    return y / info.particle_count;
}

static double center_x(const sm_world *world, int32_t object)
{
    sm_object_info info;
    sm_world_get_object(world, object, &info);
    double *x = get_positions(world), sum = 0.0;
    for (int32_t i = 0; i < info.particle_count; i++) sum += x[3 * (info.first_particle + i)];
    free(x);
    return sum / info.particle_count;
}

/// Centre of mass of an object, xyz.
static void center_of(const sm_world *world, int32_t object, double out[3])
{
    sm_object_info info;
    sm_world_get_object(world, object, &info);
    double *x = get_positions(world);
    out[0] = out[1] = out[2] = 0.0;
    for (int32_t i = 0; i < info.particle_count; i++)
        for (int a = 0; a < 3; a++) out[a] += x[3 * (info.first_particle + i) + a] / info.particle_count;
    free(x);
}

static double depth_ratio(const sm_world *world)
{
    sm_contact_stats stats;
    ENSURE_OK(sm_world_get_contact_stats(world, &stats));
    return stats.max_depth_ratio;
}

/// A soft box dropped onto another comes to rest on top of it, its lattice across from the one
/// below by up to a fifth of the particle spacing (0.05 m of 0.25, in a random direction: three
/// seeded draws): over the last 5 s of 10, no two particles of the two boxes overlap by more than
/// 5% of their radius, the top box's centre stays more than 0.9 of the box size above the bottom
/// one's and within 5 cm across from it, and over the last second its height varies by under
/// 10 cm (the soft pair keeps bouncing a little: docs/contact.md). (Further across, towards half
/// a spacing, the lattice faces push the top box off at the default friction: docs/contact.md.)
static void two_boxes_come_to_rest_stacked(void)
{
    rng r = {5};
    for (int draw = 0; draw < 3; draw++) {
        const double angle = rng_uniform(&r, 0.0, 6.283185307179586), across = rng_uniform(&r, 0.0, 0.05);
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"ground\": {\"restitution\": 0.2, \"friction\": 0.4}, \"collisions\": {\"iterations\": 2}, \"objects\": ["
                 " {\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 0.5, 0], \"alpha\": 0.5, \"beta\": 0.3, \"damping\": 0.5},"
                 " {\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [%.17g, 1.8, %.17g], \"alpha\": 0.5, \"beta\": 0.3,"
                 " \"damping\": 0.5}]}",
                 across * cos(angle), across * sin(angle));
        sm_world *world = world_from_json(json);
        if (!world) return;
        double worst = 0.0, lowest_gap = INFINITY, farthest = 0.0, low = INFINITY, high = -INFINITY;
        for (int s = 1; s <= 600; s++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            if (s > 540) { // the last second: how the top box's height varies
                low = fmin(low, center_y(world, 1)), high = fmax(high, center_y(world, 1));
            }
            if (s <= 300 || s % 10 != 0) continue;
            worst = fmax(worst, depth_ratio(world));
            lowest_gap = fmin(lowest_gap, center_y(world, 1) - center_y(world, 0));
            double c0[3], c1[3];
            center_of(world, 0, c0), center_of(world, 1, c1);
            farthest = fmax(farthest, hypot(c1[0] - c0[0], c1[2] - c0[2]));
        }
        printf("  placed %.3f m across: worst overlap %.4f of a radius, centres at least %.3f m apart and at most %.3f m"
               " across, the top's height over the last second %.3f to %.3f m\n",
               across, worst, lowest_gap, farthest, low, high);
        ENSURE_RANGE(worst, 0.0, 0.05);
        ENSURE_RANGE(lowest_gap, 0.9, 1.5);
        ENSURE_RANGE(farthest, 0.0, 0.05);
        ENSURE_RANGE(high - low, 0.0, 0.1);
        sm_world_destroy(world);
    }
}

/// Ten soft cubes stacked with 1 cm gaps settle into a column without passing through each
/// other: at the eight substeps per 60 Hz step that a column of ten needs (docs/contact.md), each stays
/// above the one below for 2 s, and overlaps stay below 5% of the radius once the column has
/// settled (after 1 s).
static void stack_of_ten_soft_cubes_settles(void)
{
    char json[8192];
    int used = snprintf(json, sizeof json,
                        "{\"substeps\": 8, \"ground\": {\"restitution\": 0.2, \"friction\": 0.4},"
                        " \"collisions\": {\"iterations\": 2, \"restitution\": 0, \"friction\": 0.5}, \"objects\": [");
    for (int k = 0; k < 10; k++)
        // a 0.5 m cube of 4^3 particles has radius 1/12 m: 2/3 m from its lowest to its highest surface
        used += snprintf(json + used, sizeof json - (size_t)used,
                         "%s{\"shape\": \"box\", \"size\": [0.5, 0.5, 0.5], \"position\": [0, %.4f, 0],"
                         " \"alpha\": 0.7, \"beta\": 0.2, \"damping\": 1}",
                         k ? ", " : "", 1.0 / 3.0 + 0.68 * k);
    snprintf(json + used, sizeof json - (size_t)used, "]}");
    sm_world *world = world_from_json(json);
    if (!world) return;
    double worst = 0.0, closest = INFINITY;
    for (int s = 1; s <= 120; s++) {
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 8));
        for (int k = 0; k + 1 < 10; k++) closest = fmin(closest, center_y(world, k + 1) - center_y(world, k));
        if (s >= 60) worst = fmax(worst, depth_ratio(world));
    }
    ENSURE_RANGE(closest, 0.4, 1.0); // never closer than 0.4 m: nobody passed through
    ENSURE_RANGE(worst, 0.0, 0.05);
    ENSURE(!world_has_nan(world));
    sm_world_destroy(world);
}

/// A box thrown at 20 m/s at another does not pass through it at the substeps docs/contact.md's rule
/// gives (a particle may travel at most its radius per solver step: 20 m/s x 1/60 s over a
/// radius of 1/12 m is 4 substeps): its centre never reaches the target's.
static void fast_object_does_not_tunnel(void)
{
    const double speed = 20.0, radius = 1.0 / 12.0, dt = 1.0 / 60.0;
    const int substeps = (int)ceil(speed * dt / radius - 1e-9);
    ENSURE(substeps == 4);
    sm_world *world = world_from_json(
        "{\"gravity\": [0, 0, 0], \"collisions\": {}, \"objects\": ["
        " {\"shape\": \"box\", \"size\": [0.5, 0.5, 0.5], \"position\": [-2, 0, 0], \"velocity\": [20, 0, 0],"
        "  \"alpha\": 0.5, \"beta\": 0.3},"
        " {\"shape\": \"box\", \"resolution\": [5, 5, 5], \"mass\": 4, \"alpha\": 0.5, \"beta\": 0.3}]}");
    if (!world) return;
    sm_object_info info;
    sm_world_get_object(world, 0, &info);
    ENSURE_SMALL(info.particle_radius - radius, 1e-15);
    double closest = INFINITY;
    for (int s = 0; s < 60; s++) {
        ENSURE_OK(sm_world_step(world, dt, substeps));
        closest = fmin(closest, center_x(world, 1) - center_x(world, 0));
    }
    // the surfaces meet at 0.25 + 1/12 + 0.5 + 1/8 = 0.96 m between the centres
    ENSURE_RANGE(closest, 0.5, 1.0);
    ENSURE(center_x(world, 0) < center_x(world, 1));
    sm_world_destroy(world);
}

/// Self-collision is off by default and per object: two blobs of one object (a fixed slab of
/// 4 x 2 x 4 particles and a cube of 2 x 2 x 2 falling onto its middle) pass through each other
/// without it and rest on each other with it; the neighbours within a blob never push each other
/// apart. (The slab is wider than the cube so that the cube rests on a flat bed: on a bed of as
/// many particles as its own face it balances on four spheres, and the round-off of the float
/// kernels tips it off the side where the double reference stays balanced.)
static void self_collision_is_per_object(void)
{
    for (int self = 0; self <= 1; self++) {
        char json[8192];
        int used = snprintf(json, sizeof json, "{\"collisions\": {}, \"objects\": [{\"shape\": \"points\", \"points\": [");
        for (int i = 0; i < 32; i++) // the slab: x, z in 0 .. 0.3, y 0 and 0.1
            used += snprintf(json + used, sizeof json - (size_t)used, "%s[%g, %g, %g]", i ? ", " : "", 0.1 * (i % 4) - 0.1,
                             0.1 * ((i / 4) % 2), 0.1 * (i / 8) - 0.1);
        for (int i = 0; i < 8; i++) // the cube, 1 m up, over the slab's middle
            used += snprintf(json + used, sizeof json - (size_t)used, ", [%g, %g, %g]", 0.1 * (i & 1),
                             0.1 * ((i >> 1) & 1) + 1.0, 0.1 * (i >> 2));
        snprintf(json + used, sizeof json - (size_t)used,
                 "], \"clusters\": {\"lists\": [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,"
                 " 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31], [32, 33, 34, 35, 36, 37, 38, 39]]},"
                 " \"fixed\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,"
                 " 25, 26, 27, 28, 29, 30, 31], \"mode\": \"rigid\", \"alpha\": 1,"
                 " \"collisions\": {\"radius\": 0.05, \"self\": %s}}]}",
                 self ? "true" : "false");
        sm_world *world = world_from_json(json);
        if (!world) return;
        for (int s = 0; s < 180; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        double x[120];
        sm_world_get_positions(world, 0, 40, x);
        double lowest = INFINITY;
        for (int i = 32; i < 40; i++) lowest = fmin(lowest, x[3 * i + 1]);
        printf("  self-collision %s: the cube's lowest particle at %.4f m\n", self ? "on" : "off", lowest);
        if (self) {
            // resting on the slab's top (y = 0.1) at about one particle spacing, over a particle
            // (0.2) or in the hollow between four (0.1 + 0.1 / sqrt 2 = 0.171)
            ENSURE_RANGE(lowest, 0.16, 0.25);
            ENSURE_RANGE(depth_ratio(world), 0.0, 0.05);
        } else {
            ENSURE(lowest < -1.0); // fell straight through
        }
        sm_world_destroy(world);
    }
}

/// Particle radii: half the lattice spacing times radius_scale, the scene's or the object's,
/// or the radius given; objects that opt out, and worlds without collisions, have none. Every
/// object reports its lattice spacing, with or without a radius.
static void radius_follows_the_lattice_spacing(void)
{
    sm_world *world = world_from_json(
        "{\"collisions\": {\"radius_scale\": 1.2}, \"objects\": ["
        " {\"shape\": \"box\", \"size\": [1, 2, 1], \"resolution\": [5, 5, 3]},"
        " {\"shape\": \"sphere\", \"spacing\": 0.2, \"position\": [3, 0, 0]},"
        " {\"shape\": \"sphere\", \"spacing\": 0.2, \"position\": [6, 0, 0], \"collisions\": {\"radius_scale\": 2}},"
        " {\"shape\": \"points\", \"points\": [[0, 0, 0], [0.3, 0, 0], [0, 0.4, 0]], \"position\": [9, 0, 0]},"
        " {\"shape\": \"capsule\", \"position\": [12, 0, 0], \"collisions\": {\"radius\": 0.07, \"self\": true}},"
        " {\"shape\": \"box\", \"position\": [15, 0, 0], \"collisions\": {\"enabled\": false}}]}");
    if (!world) return;
    const double expected[] = {0.6 * 0.25, 0.6 * 0.2, 0.2, 0.6 * 0.3, 0.07, 0.0};
    const double spacing[] = {0.25, 0.2, 0.2, 0.3, 0.25, 1.0 / 3.0}; // the capsule and the last box: default spacings
    for (int32_t o = 0; o < 6; o++) {
        sm_object_info info;
        ENSURE_OK(sm_world_get_object(world, o, &info));
        ENSURE_SMALL(info.particle_radius - expected[o], 1e-12);
        ENSURE_SMALL(info.spacing - spacing[o], 1e-12);
        ENSURE(info.collides == (o != 5));
        ENSURE(info.self_collides == (o == 4));
    }
    sm_world_destroy(world);
    world = world_from_json("{\"objects\": [{\"shape\": \"box\"}]}");
    if (!world) return;
    sm_object_info info;
    ENSURE_OK(sm_world_get_object(world, 0, &info));
    ENSURE(!info.collides && info.particle_radius == 0.0);
    sm_contact_stats stats;
    ENSURE_OK(sm_world_get_contact_stats(world, &stats));
    ENSURE(stats.pairs == 0);
    sm_world_destroy(world);
}

/// Contact statistics count each overlapping pair once, with its depth relative to the smaller
/// radius.
static void contact_stats_measure_overlaps(void)
{
    sm_world *world = world_from_json(
        "{\"gravity\": [0, 0, 0], \"collisions\": {}, \"objects\": ["
        " {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"collisions\": {\"radius\": 0.1}},"
        " {\"shape\": \"points\", \"points\": [[0.25, 0, 0]], \"collisions\": {\"radius\": 0.2}},"
        " {\"shape\": \"points\", \"points\": [[5, 0, 0]], \"collisions\": {\"radius\": 0.2}}]}");
    if (!world) return;
    sm_contact_stats stats;
    ENSURE_OK(sm_world_get_contact_stats(world, &stats));
    ENSURE(stats.pairs == 1);
    ENSURE_SMALL(stats.max_depth - 0.05, 1e-15);
    ENSURE_SMALL(stats.max_depth_ratio - 0.5, 1e-14);
    ENSURE_SMALL(stats.mean_depth_ratio - 0.5, 1e-14);
    sm_world_destroy(world);
}

/// "Bodies placed inside each other separate at a bounded speed": two particles of random radii
/// (log-uniform from 1 mm to 1 m) placed overlapping by 5% to 95% of their reach, with push
/// speeds log-uniform from 0.01 to 100 m/s, relaxations from 1 to 2, masses log-uniform across
/// the documented [1e-12, 1e12] kg each, and steps log-uniform from 1e-4 to 1 s in 1 to 4
/// substeps (seeded), move apart at min(push_speed, relaxation x overlap / h) (an overlap smaller
/// than a solver step's push goes in that step) and no faster over the first 60 steps: within
/// 1e-9 of it on the CPU reference, and on OpenCL within 2e-3 of it plus 1e-6 of the pair's
/// reach a solver step (the float rounding of the positions' moves); and where the push speed
/// removes the overlap within 60 steps, they stop overlapping in that time (plus a step).
static void overlapping_bodies_separate_at_the_push_speed(void)
{
    rng r = {61};
    double worst = 0.0, worst_allowed = 0.0;
    int separated = 0;
    for (int draw = 0; draw < 32; draw++) {
        const double r0 = exp(rng_uniform(&r, log(1e-3), log(1.0))), r1 = exp(rng_uniform(&r, log(1e-3), log(1.0)));
        const double overlap = rng_uniform(&r, 0.05, 0.95) * (r0 + r1), push = exp(rng_uniform(&r, log(0.01), log(100.0)));
        double relaxation = rng_uniform(&r, 1.0, 2.0), m0 = pow(10.0, rng_uniform(&r, -12.0, 12.0)),
               m1 = pow(10.0, rng_uniform(&r, -12.0, 12.0));
        const int substeps = 1 + (int)rng_uniform(&r, 0, 3.999);
        const double dt = substeps * exp(rng_uniform(&r, log(1e-4), log(1.0))), h = dt / substeps;
        const sm_vec3 axis = rng_in_ball(&r, 1.0);
        const double length = sqrt(axis.x * axis.x + axis.y * axis.y + axis.z * axis.z), apart = r0 + r1 - overlap;
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"gravity\": [0, 0, 0], \"collisions\": {\"push_speed\": %.17g, \"relaxation\": %.17g},"
                 " \"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0]], \"mass\": %.17g, \"collisions\": {\"radius\": %.17g}},"
                 " {\"shape\": \"points\", \"points\": [[%.17g, %.17g, %.17g]], \"mass\": %.17g, \"collisions\": {\"radius\": %.17g}}]}",
                 push, relaxation, m0, r0, apart * axis.x / length, apart * axis.y / length, apart * axis.z / length, m1, r1);
        sm_world *world = world_from_json(json);
        if (!world) return;
        const int needed = (int)ceil(overlap / push / dt) + 1, steps = needed < 60 ? needed : 60;
        double fastest = 0.0, x[6];
        sm_contact_stats stats;
        for (int s = 0; s < steps; s++) {
            ENSURE_OK(sm_world_step(world, dt, substeps));
            double v[6];
            ENSURE_OK(sm_world_get_velocities(world, 0, 2, v));
            fastest = fmax(fastest, sqrt((v[0] - v[3]) * (v[0] - v[3]) + (v[1] - v[4]) * (v[1] - v[4]) + (v[2] - v[5]) * (v[2] - v[5])));
        }
        ENSURE_OK(sm_world_get_positions(world, 0, 2, x));
        ENSURE_OK(sm_world_get_contact_stats(world, &stats));
        if (needed <= 60) {
            ENSURE(stats.pairs == 0);
            separated++;
        }
        // (an overlap below push_speed h goes in the first solver step, more slowly); in float a
        // step's move is rounded to the positions' ulp, 6e-8 of the reach: within 1e-6 reach / h
        const double expected = fmin(push, relaxation * overlap / h);
        const double allowed = tolerance(1e-9, 2e-3) * expected + tolerance(0.0, 1e-6 * (r0 + r1) / h);
        const double error = fabs(fastest - expected);
        worst = fmax(worst, error / expected);
        worst_allowed = fmax(worst_allowed, error / allowed);
        if (!(error <= allowed))
            fprintf(stderr, "  draw %d: %.9g m/s for %.9g (dt %.3g in %d, reach %.3g m)\n  %s\n", draw, fastest, expected, dt,
                    substeps, r0 + r1, json);
        ENSURE(error <= allowed);
        sm_world_destroy(world);
    }
    printf("  relative speed of separation against min(push_speed, relaxation overlap / h): within %.3g over 32 draws"
           " (%.2f of the tolerance; %d separated within 60 steps)\n",
           worst, worst_allowed, separated);
    ENSURE(separated >= 8);
}

/// "A tower of 30 boxes stands": scenes/tower30.json (30 rigid 0.5 m boxes of 4^3 particles,
/// each resting on the one below, at 32 solver steps a frame with relaxation 1) for 10 s, as the
/// scene places them and with each box moved across the column by a random offset of up to 5 mm
/// (seeded): no box passes into the one below (their centres stay more than 0.6 m apart: the
/// boxes and one particle spacing of gap make 2/3 m, a box inside another less than 0.5 m),
/// none moves 5 cm across from where it started, and the top settles within 5 cm of its start.
/// (With fewer solver steps a lean grows until the tower falls; at relaxation 1.5 it bounces
/// apart: docs/contact.md.) The sanitized build
/// (tests/sanitize/run.sh) shortens the run to $SM_STRESS_STEPS steps, as it does the stress
/// sweeps: the code paths are the same.
static void tower_of_thirty_boxes_stands(void)
{
    const char *shorter = getenv("SM_STRESS_STEPS");
    const int steps = shorter && atoi(shorter) > 0 && atoi(shorter) < 600 ? atoi(shorter) : 600;
    rng r = {31};
    for (int run = 0; run < 2; run++) {
        sm_scene *scene = NULL;
        ENSURE_OK(sm_scene_load_file(SM_SCENES_DIR "/tower30.json", &scene));
        if (!scene) return;
        sm_world *world = NULL;
        ENSURE_OK(create_world(scene, sm_test_backend, &world));
        if (!world) {
            sm_scene_destroy(scene);
            return;
        }
        const int32_t boxes = sm_world_get_counts(world).objects, n = sm_world_get_counts(world).particles;
        ENSURE(boxes == 30 && n == 30 * 64);
        if (run == 1) { // each box moved across the column by up to 5 mm
            double *x = get_positions(world);
            for (int32_t k = 0; k < boxes; k++) {
                const double ox = rng_uniform(&r, -0.005, 0.005), oz = rng_uniform(&r, -0.005, 0.005);
                for (int32_t i = 64 * k; i < 64 * (k + 1); i++) x[3 * i] += ox, x[3 * i + 2] += oz;
            }
            ENSURE_OK(sm_world_set_positions(world, 0, n, x));
            free(x);
        }
        double start[30][3] = {{0}}, closest = INFINITY, farthest = 0.0, top = 0.0;
        for (int32_t k = 0; k < boxes; k++) center_of(world, k, start[k]);
        for (int s = 1; s <= steps; s++) {
            ENSURE_OK(sm_scene_step(scene, world));
            if (s % 10 != 0) continue;
            double below[3];
            center_of(world, 0, below);
            for (int32_t k = 0; k < boxes; k++) {
                double c[3];
                center_of(world, k, c);
                farthest = fmax(farthest, hypot(c[0] - start[k][0], c[2] - start[k][2]));
                if (k > 0) closest = fmin(closest, c[1] - below[1]);
                memcpy(below, c, sizeof below);
                if (k == boxes - 1) top = c[1];
            }
        }
        printf("  %s, %d steps: closest centres %.4f m apart, farthest across from its start %.4f m, top %.4f m (started "
               "%.4f)\n",
               run ? "boxes moved by up to 5 mm" : "as placed", steps, closest, farthest, top, start[boxes - 1][1]);
        ENSURE_RANGE(closest, 0.6, 0.7);
        ENSURE_RANGE(farthest, 0.0, 0.05);
        ENSURE_RANGE(top - start[boxes - 1][1], -0.05, 0.05);
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
        sm_scene_destroy(scene);
    }
}

/// "Bodies pressed together neither drift nor accelerate": two or three bodies of random shapes,
/// sizes, lattices, masses and modes placed inside each other (random offsets up to half their
/// size, random starting velocities up to 2 m/s), at the default contact settings (radii of half
/// the lattice spacing) and 1 to 4 substeps, no gravity, no ground: over 120 steps their
/// total momentum changes by no more than round-off (1e-9 of the momentum that moves, sum m |v|,
/// on the CPU reference; float's drift tolerance on OpenCL), in every draw where no particle
/// overlaps more than SM_CONTACTS_PER_PARTICLE others at any step (past that a pair on one list
/// only pushes that particle: such draws are counted, not checked). (The contact pass alone conserves
/// momentum at any settings: test_opencl's contact_conserves_momentum; a whole step can lose
/// some where step 4f's motion limit catches a particle that contact threw.)
static void pressed_bodies_neither_drift_nor_accelerate(void)
{
    rng r = {2026112629};
    double worst = 0.0, fastest = 0.0;
    int64_t dropped = 0;
    int crowded = 0;
    const int draws = 16;
    for (int draw = 0; draw < draws; draw++) {
        char json[4096], objects[3072];
        random_bodies_inside_each_other(&r, false, objects, sizeof objects);
        snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"substeps\": %d, \"collisions\": {}, \"objects\": [%s]}",
                 1 + (int)rng_uniform(&r, 0, 3.999), objects);
        sm_scene *scene = NULL;
        ENSURE_OK(sm_scene_load_string(json, "momentum", &scene));
        sm_world *world = NULL;
        if (scene) ENSURE_OK(create_world(scene, sm_test_backend, &world));
        if (!world) {
            sm_scene_destroy(scene);
            continue;
        }
        const sm_counts counts = sm_world_get_counts(world);
        sm_vec3 start = {0, 0, 0};
        double moving = 0.0;
        bool full = false;
        for (int32_t o = 0; o < counts.objects; o++) start = v3_add(start, linear_momentum(world, o));
        for (int s = 0; s < 120; s++) {
            sm_contact_stats before;
            ENSURE_OK(sm_world_get_contact_stats(world, &before));
            full = full || before.dropped > 0;
            ENSURE_OK(sm_scene_step(scene, world));
            double scale = 0.0;
            for (int32_t o = 0; o < counts.objects; o++) scale += momentum_scale(world, o);
            moving = fmax(moving, scale);
        }
        sm_vec3 end = {0, 0, 0};
        for (int32_t o = 0; o < counts.objects; o++) end = v3_add(end, linear_momentum(world, o));
        sm_contact_stats stats;
        ENSURE_OK(sm_world_get_contact_stats(world, &stats));
        dropped += stats.dropped;
        const double drift = v3_length(v3_sub(end, start)) / moving;
        fastest = fmax(fastest, moving);
        if (full) {
            crowded++;
        } else {
            worst = fmax(worst, drift);
            if (!(drift <= tolerance(1e-9, tolerance_drift()))) printf("    draw %d: %.3g of the momentum: %s\n", draw, drift, json);
            ENSURE_RANGE(drift, 0.0, tolerance(1e-9, tolerance_drift()));
        }
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
        sm_scene_destroy(scene);
    }
    printf("  %d draws of bodies inside each other: total momentum changed by at most %.3g of sum m |v| (up to %.3g kg m/s)"
           " in the %d without contacts left out (%lld left out at the end of the others)\n",
           draws, worst, fastest, draws - crowded, (long long)dropped);
    ENSURE(crowded <= draws / 2);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(two_boxes_come_to_rest_stacked),   TEST(stack_of_ten_soft_cubes_settles),
        TEST(fast_object_does_not_tunnel),      TEST(self_collision_is_per_object),
        TEST(radius_follows_the_lattice_spacing), TEST(contact_stats_measure_overlaps),
        TEST(overlapping_bodies_separate_at_the_push_speed), TEST(tower_of_thirty_boxes_stands),
        TEST(pressed_bodies_neither_drift_nor_accelerate),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
