/* Free flight without gravity or ground: momentum (paper section 3.5; docs/algorithm.md, "What is
 * and is not guaranteed").
 *
 * Why one cluster conserves both momenta to round-off: the impulses are
 * m_i alpha (T q~_i - p_i) / h. Their sum is zero because sum m q = 0 and the quadratic terms
 * are centred. Their torque about x_cm is the antisymmetric part of sum m p (T q~)^T, which
 * vanishes wherever T is the nearest fit, in the cluster's metric, of a set that turning maps
 * onto itself (turning T would not bring it nearer): the rotation R, the linear and quadratic
 * fits, the nearest fit of determinant 1, the deformation limit's projections (step 3), and the
 * blends of these. The paper's scaling keeps it too, as it scales the goals' linear fit L, whose
 * sum m p (L q)^T = L W L^T is symmetric (a quadratic goal moves the members by L q + X r with
 * sum m r q^T = 0, and sum m p (X r)^T = X K X^T). The position update x += h v then keeps
 * sum m x × v. Disjoint clusters add exactly, and overlapping ones weigh each membership by its
 * particle's mass shared by the clusters holding it (step 4b). The motion limit (step 4f), where
 * it acts, and clusters that support fewer modes than their mode has do not conserve it. */
#include "math3.h"
#include "support.h"

#include <stdlib.h>

/// Scene text for an asymmetric random cloud of 40 points with random masses.
/// `volume` is the scene's volume_preservation value: true, false or "scale"; `strain_limit` the
/// deformation limit. The flights of disjoint clusters run at 10: at lower limits their clusters,
/// scrambled by 30%, move fast (kinetic energy 10 to 40 times the throw's, the energy the
/// scramble stored), and the motion limit, which does not conserve momentum, then acts.
static char *cloud_scene(int seed, const char *mode, const char *volume, const char *clusters, double strain_limit)
{
    static char json[16384];
    rng r = {(uint64_t)seed};
    int o = snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"points\", \"points\": [");
    for (int i = 0; i < 40; i++)
        o += snprintf(json + o, sizeof json - (size_t)o, "%s[%.17g, %.17g, %.17g]", i ? ", " : "", rng_uniform(&r, -0.5, 0.5),
                      rng_uniform(&r, -0.4, 0.4), rng_uniform(&r, -0.3, 0.3));
    o += snprintf(json + o, sizeof json - (size_t)o, "], \"masses\": [");
    for (int i = 0; i < 40; i++) o += snprintf(json + o, sizeof json - (size_t)o, "%s%.17g", i ? ", " : "", rng_uniform(&r, 0.5, 2.0));
    snprintf(json + o, sizeof json - (size_t)o,
             "], \"mode\": \"%s\", \"alpha\": 0.5, \"beta\": 0.5, \"volume_preservation\": %s, \"clusters\": %s,"
             " \"strain_limit\": %.17g}]}",
             mode, volume, clusters, strain_limit);
    return json;
}

typedef struct drift {
    double linear;  ///< max |P(t) - P(0)| / sum m |v(0)|
    double angular; ///< max |L(t) - L(0)| / sum m |x(0) × v(0)|
} drift;

/// Scrambles the object by `shuffle` of its size, gives it random velocities up to `speed` m/s,
/// flies 1,000 steps.
static drift fly_at(sm_world *world, int seed, double shuffle, double speed)
{
    drift d = {0, 0};
    if (!world) return (drift){NAN, NAN};
    rng r = {(uint64_t)seed + 1000};
    const int32_t n = sm_world_get_counts(world).particles;
    scramble(world, 0, shuffle, &r);
    double *v = malloc(sizeof(double) * 3 * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        sm_vec3 u = rng_in_ball(&r, speed);
        v[3 * i] = u.x, v[3 * i + 1] = u.y, v[3 * i + 2] = u.z;
    }
    sm_world_set_velocities(world, 0, n, v);
    double *x = get_positions(world), *m = get_masses(world);
    double angular_scale = 0.0;
    for (int32_t i = 0; i < n; i++)
        angular_scale += m[i] * v3_length(v3_cross(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), v3(v[3 * i], v[3 * i + 1], v[3 * i + 2])));
    const double linear_scale = momentum_scale(world, 0);
    const sm_vec3 p0 = linear_momentum(world, 0), l0 = angular_momentum(world, 0);
    for (int s = 0; s < 1000; s++) {
        sm_world_step(world, 1.0 / 60.0, 1);
        d.linear = fmax(d.linear, v3_length(v3_sub(linear_momentum(world, 0), p0)) / linear_scale);
        d.angular = fmax(d.angular, v3_length(v3_sub(angular_momentum(world, 0), l0)) / angular_scale);
    }
    free(v), free(x), free(m);
    sm_world_destroy(world);
    return d;
}

/// fly_at: scrambled by 30% of the object's size, at up to 1 m/s.
static drift fly(sm_world *world, int seed) { return fly_at(world, seed, 0.3, 1.0); }

static const char *const modes[] = {"rigid", "linear", "quadratic"};
static const char *const volumes[] = {"false", "true", "\"scale\""};
/// Deformation limits by seed: at 10 the limit never acts in fly()'s flights of one cluster; at
/// 1.5 and 1.05 it acts in 4,894 of the 18,000 cluster steps of the linear and quadratic ones (the
/// quadratic block's limit in 2,601), and they conserve momentum as well.
static const double limits[] = {10.0, 1.5, 1.05};

/// Round-off over 1,000 steps of O(1) quantities: measured at most 2e-11 on the CPU reference,
/// on OpenCL (float) 3.1e-6 linear and 6.1e-4 angular (9.2e-4 before x_cm and the goal offsets
/// were summed exactly).
#define ROUND_OFF tolerance_drift()

static void one_cluster_conserves_momentum(void)
{
    drift worst = {0, 0};
    for (int m = 0; m < 3; m++)
        for (int vp = 0; vp < 3; vp++)
            for (int seed = 1; seed <= 3; seed++) {
                drift d = fly(world_from_json(cloud_scene(seed, modes[m], volumes[vp], "{\"grid\": [1, 1, 1]}", limits[seed - 1])), seed);
                worst.linear = fmax(worst.linear, d.linear);
                worst.angular = fmax(worst.angular, d.angular);
                ENSURE_SMALL(d.linear, ROUND_OFF);
                ENSURE_SMALL(d.angular, ROUND_OFF);
            }
    printf("  one cluster, 1,000 steps: worst linear drift %.3g, angular drift %.3g of their scales\n", worst.linear, worst.angular);
}

/// Two disjoint explicit clusters (the halves of the cloud's index range) each conserve.
static void disjoint_clusters_conserve_momentum(void)
{
    char lists[512];
    int o = snprintf(lists, sizeof lists, "{\"lists\": [[");
    for (int i = 0; i < 40; i++)
        o += snprintf(lists + o, sizeof lists - (size_t)o, "%s%d", i == 0 ? "" : (i == 20 ? "], [" : ", "), i);
    snprintf(lists + o, sizeof lists - (size_t)o, "]]}");
    for (int m = 0; m < 3; m++)
        for (int vp = 0; vp < 3; vp++) {
            drift d = fly(world_from_json(cloud_scene(4, modes[m], volumes[vp], lists, 10.0)), 4);
            ENSURE_SMALL(d.linear, ROUND_OFF);
            ENSURE_SMALL(d.angular, ROUND_OFF);
        }
}

/// Overlapping clusters conserve momentum too: a membership weighs its particle's mass shared by
/// the clusters holding it (sm_member_mass), so each cluster's goals change no momentum in those
/// weights and the mean over a particle's clusters (step 4b) none in the particles' masses.
/// Drawn: boxes of 3 to 6 particles a side (quadratic: 5 or 6, in 2 cells), 0.2 to 2 m, in grids
/// of 2 or 3 cells a side with overlaps of 0.25 to 1 cell (particles in 1 to 27 clusters), every
/// mode, volume preservation on or off, alpha and beta 0 to 1, scrambled by up to 10% of their
/// size, each particle thrown at up to a speed drawn from 0.25 to 1 m/s. (With each membership
/// weighing its particle's whole mass, a 3x3x3 box on a 2x2x2 grid drifted 1.3 to 1.7 of the
/// linear and 3.6 to 7.0 of the angular scale in fly()'s flights.) Clusters that
/// support fewer modes than their mode has (one to three particles, flat ones, quadratic ones of
/// 2 particles an axis) change angular momentum as before; the motion limit, where it acts, both
/// (docs/algorithm.md, step 4f).
static void overlapping_clusters_conserve_momentum(void)
{
    rng r = {2611};
    drift worst = {0, 0};
    for (int draw = 0; draw < 12; draw++) {
        // (quadratic: clusters of at least 3 particles an axis, which support its 9 modes)
        const int mode = draw % 3;
        const int side = mode == 2 ? 5 + (int)rng_uniform(&r, 0.0, 1.999) : 3 + (int)rng_uniform(&r, 0.0, 3.999);
        const int cells = side == 3 || mode == 2 ? 2 : 2 + (int)rng_uniform(&r, 0.0, 1.999);
        const double overlap = rng_uniform(&r, 0.25, 1.0), size = rng_uniform(&r, 0.2, 2.0);
        const double alpha = rng_uniform(&r, 0.0, 1.0), beta = rng_uniform(&r, 0.0, 1.0);
        const double shuffle = rng_uniform(&r, 0.0, 0.1), speed = rng_uniform(&r, 0.25, 1.0);
        const bool volume = rng_uniform(&r, 0, 1) < 0.5;
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], "
                 "\"resolution\": [%d, %d, %d], \"mode\": \"%s\", \"alpha\": %.17g, \"beta\": %.17g, "
                 "\"volume_preservation\": %s, \"strain_limit\": 10, "
                 "\"clusters\": {\"grid\": [%d, %d, %d], \"overlap\": %.17g}}]}",
                 size, size, size, side, side, side, modes[mode], alpha, beta, volume ? "true" : "false", cells, cells,
                 cells, overlap);
        drift d = fly_at(world_from_json(json), draw + 1, shuffle, speed);
        worst.linear = fmax(worst.linear, d.linear);
        worst.angular = fmax(worst.angular, d.angular);
        ENSURE_SMALL(d.linear, ROUND_OFF);
        ENSURE_SMALL(d.angular, ROUND_OFF);
        if (!(d.linear <= ROUND_OFF && d.angular <= ROUND_OFF))
            printf("  draw %d (%s, %d^3 in %d^3 cells, overlap %.2f, volume %s): linear drift %.3g, angular %.3g\n", draw,
                   modes[mode], side, cells, overlap, volume ? "on" : "off", d.linear, d.angular);
    }
    printf("  overlapping clusters, 1,000 steps: worst linear drift %.3g, angular drift %.3g of their scales\n", worst.linear,
           worst.angular);
}

/// An object of one cluster at rest stays at rest, whatever its shape and step: seeded objects
/// of every mode times every shape (clouds of 8 to 40 points of random masses, boxes of 2 to 6
/// particles a side, spheres, capsules and tori), 0.1 to 10 m across, up to 100 m from the
/// origin, turned at random, alpha and beta from 0 to 1, every volume treatment, the cap or not
/// and the deformation limit from 1 to 10, without gravity, for 0.2 s of solver steps of 1e-4 to
/// 1e-2 s. Their centre of mass moves at most 2e-4 of their size a second on OpenCL, 1e-6 on
/// the CPU reference. (Measured over 21 seeds of this draw: up to 8.1e-5 and 1.8e-7, a linear
/// torus 80 m from the origin the largest on the CPU; the bounds of 1e-5 and 1e-10 this test
/// once asserted held for its seed alone, and the CPU's 1e-10 failed on 9 of 10 other seeds of
/// its clouds: reported.) Objects of several clusters are not held to it: the mean of step 4b
/// does not conserve momentum, and its rounding moved these draws on 2 or 3 clusters a side by
/// up to 1.6e-9 of their size a second on the CPU reference and 1.2e-3 on OpenCL
/// (docs/measured.md). On OpenCL the rounding of the cluster centres and of the float rest
/// offsets' mean, the same every step at rest, once pushed the whole object steadily: alpha / h
/// times it each step (a cloud of 30 points reached 0.58 m/s within a second of steps of 1e-4
/// s); both are now summed exactly (opencl.md, "Precision").
static void objects_at_rest_stay_at_rest_at_any_step(void)
{
    static const char *const volumes[4] = {"true", "\"projection\"", "\"scale\"", "false"};
    rng r = {29};
    double worst = 0.0;
    const int draws = 15;
    for (int draw = 0; draw < draws; draw++) {
        static char json[16384];
        const double size = pow(10.0, rng_uniform(&r, -1.0, 1.0)), h = pow(10.0, rng_uniform(&r, -4.0, -2.0));
        const sm_vec3 at = rng_in_ball(&r, 100.0);
        int o = snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"objects\": [{");
        switch (draw / 3) {
        case 0: {
            const int count = 8 + (int)rng_uniform(&r, 0.0, 33.0);
            o += snprintf(json + o, sizeof json - (size_t)o, "\"shape\": \"points\", \"points\": [");
            for (int i = 0; i < count; i++) {
                const sm_vec3 p = rng_in_ball(&r, 0.5 * size);
                o += snprintf(json + o, sizeof json - (size_t)o, "%s[%.17g, %.17g, %.17g]", i ? ", " : "", p.x, p.y, p.z);
            }
            o += snprintf(json + o, sizeof json - (size_t)o, "], \"masses\": [");
            for (int i = 0; i < count; i++)
                o += snprintf(json + o, sizeof json - (size_t)o, "%s%.17g", i ? ", " : "", rng_uniform(&r, 0.5, 2.0));
            o += snprintf(json + o, sizeof json - (size_t)o, "]");
            break;
        }
        case 1:
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [%d, %d, %d]", size,
                          size * rng_uniform(&r, 0.3, 1.0), size * rng_uniform(&r, 0.3, 1.0), 2 + (int)rng_uniform(&r, 0, 5),
                          2 + (int)rng_uniform(&r, 0, 5), 2 + (int)rng_uniform(&r, 0, 5));
            break;
        case 2:
            o += snprintf(json + o, sizeof json - (size_t)o, "\"shape\": \"sphere\", \"radius\": %.17g, \"spacing\": %.17g",
                          0.5 * size, size * rng_uniform(&r, 0.15, 0.35));
            break;
        case 3:
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "\"shape\": \"capsule\", \"radius\": %.17g, \"length\": %.17g, \"spacing\": %.17g", 0.2 * size,
                          0.6 * size, size * rng_uniform(&r, 0.08, 0.15));
            break;
        default:
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "\"shape\": \"torus\", \"major_radius\": %.17g, \"minor_radius\": %.17g, \"spacing\": %.17g",
                          0.35 * size, 0.15 * size, size * rng_uniform(&r, 0.07, 0.12));
            break;
        }
        snprintf(json + o, sizeof json - (size_t)o,
                 ", \"mode\": \"%s\", \"position\": [%.17g, %.17g, %.17g], \"rotation\": [%.6g, %.6g, %.6g],"
                 " \"alpha\": %.6g, \"beta\": %.6g,"
                 " \"volume_preservation\": %s, \"strain_limit\": %.6g%s}]}",
                 modes[draw % 3], at.x, at.y, at.z, rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360), rng_uniform(&r, 0, 360),
                 rng_uniform(&r, 0, 1), rng_uniform(&r, 0, 1),
                 volumes[(int)rng_uniform(&r, 0, 4)], rng_uniform(&r, 1, 10), rng_uniform(&r, 0, 1) < 0.5 ? ", \"cap\": {}" : "");
        sm_world *world = world_from_json(json);
        if (!world) return;
        const int32_t count = sm_world_get_counts(world).particles;
        const int steps = (int)ceil(0.2 / h);
        for (int s = 0; s < steps; s++) ENSURE_OK(sm_world_step(world, h, 1));
        double mass = 0.0, *m = get_masses(world);
        for (int32_t i = 0; i < count; i++) mass += m[i];
        const double speed = v3_length(linear_momentum(world, 0)) / mass, time = steps * h;
        if (!(speed / (size * time) <= tolerance(1e-6, 2e-4)))
            fprintf(stderr, "  draw %d: %.3g of the size a second\n  %s\n", draw, speed / (size * time), json);
        worst = fmax(worst, speed / (size * time));
        free(m);
        sm_world_destroy(world);
    }
    printf("  %d objects of one cluster, every mode and shape, at rest, solver steps of 1e-4 to 1e-2 s: the centre of mass at most %.3g"
           " of the size a second\n",
           draws, worst);
    ENSURE(worst <= tolerance(1e-6, 2e-4));
}

/// sum m |v|^2 / 2 over the world's particles.
static double kinetic_energy(const sm_world *world)
{
    const int32_t n = sm_world_get_counts(world).particles;
    double *v = get_velocities(world), *m = get_masses(world), sum = 0.0;
    for (int32_t i = 0; i < n; i++) sum += 0.5 * m[i] * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
    free(v), free(m);
    return sum;
}

/// One drawn free flight (the thrown and scrambled tests' space): its world, alpha, step and
/// substeps; its scene text in `json`. Each particle is thrown at a normal velocity of 0.05 to 2
/// sizes a second an axis, the mean taken off. NULL when the scene does not build.
typedef struct flight {
    sm_world *world;
    double alpha, h;
    int substeps;
} flight;

static flight draw_flight(rng *r, char *json, size_t size)
{
    static const char *const volumes[2] = {"true", "false"};
    const double body = rng_uniform(r, 0.2, 1.0);
    int o = snprintf(json, size, "{\"gravity\": [0, 0, 0], \"objects\": [{");
    write_drawn_body_json(json, size, &o, r, rng_uniform(r, 0, 1) < 0.5, body);
    flight f = {NULL, rng_uniform(r, 0, 1) < 0.5 ? 1.0 : rng_uniform(r, 0.05, 1.0), 0.0, 1};
    const double limit = rng_uniform(r, 0, 1) < 0.1 ? 1.0 : rng_uniform(r, 1.0, 10.0);
    const int mode = (int)rng_uniform(r, 0.0, 2.999), volume = (int)rng_uniform(r, 0.0, 1.999);
    const double beta = rng_uniform(r, 0.0, 1.0);
    char clusters[128] = "";
    if (rng_uniform(r, 0, 1) < 0.5)
        snprintf(clusters, sizeof clusters, ", \"clusters\": {\"grid\": [%d, %d, %d], \"overlap\": %.6g}",
                 1 + (int)rng_uniform(r, 0, 4.999), 1 + (int)rng_uniform(r, 0, 4.999), 1 + (int)rng_uniform(r, 0, 4.999),
                 rng_uniform(r, 0, 1));
    snprintf(json + o, size - (size_t)o,
             "\"mode\": \"%s\", \"alpha\": %.17g, \"beta\": %.17g, \"volume_preservation\": %s,"
             " \"strain_limit\": %.17g%s}]}",
             modes[mode], f.alpha, beta, volumes[volume], limit, clusters);
    const double spread = rng_uniform(r, 0.05, 2.0) * body;
    f.h = 1.0 / rng_uniform(r, 30.0, 240.0);
    f.substeps = 1 + (int)rng_uniform(r, 0.0, 3.999);
    f.world = world_from_json(json);
    if (!f.world) return f;
    const int32_t n = sm_world_get_counts(f.world).particles;
    double *v = malloc(sizeof(double) * 3 * (size_t)n), *m = get_masses(f.world), mass = 0.0, mean[3] = {0, 0, 0};
    for (int32_t i = 0; i < n; i++) {
        mass += m[i];
        for (int a = 0; a < 3; a++) {
            // normal by Box-Muller
            const double u1 = rng_uniform(r, 1e-12, 1.0), u2 = rng_uniform(r, 0.0, 2.0 * SM_PI);
            v[3 * i + a] = spread * sqrt(-2.0 * log(u1)) * cos(u2);
            mean[a] += m[i] * v[3 * i + a];
        }
    }
    for (int32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) v[3 * i + a] -= mean[a] / mass;
    ENSURE_OK(sm_world_set_velocities(f.world, 0, n, v));
    free(v), free(m);
    return f;
}

/// The largest kinetic energy over the flight's 2 s.
static double most_kinetic_energy(flight f)
{
    double most = kinetic_energy(f.world);
    for (int s = 0; s < (int)(2.0 / f.h); s++) {
        ENSURE_OK(sm_world_step(f.world, f.h, f.substeps));
        most = fmax(most, kinetic_energy(f.world));
    }
    return most;
}

/// "Shape matching adds no energy": objects flying free, each particle thrown at random, never
/// carry more kinetic energy than they were thrown with, up to what the step shows of the
/// energy it keeps. Each cluster's goals are the nearest, in its metric, of a fixed set of fits
/// (the rotation, the fit, its nearest of determinant 1, the deformation limit's projections;
/// docs/algorithm.md steps 3 and 4b), so they pull as the gradient of a potential, and the step
/// (v += alpha (g - x) / h, x += h v) exchanges motion with it as symplectic Euler does: for a
/// pull of that stiffness it keeps u^2 - alpha x u + alpha x^2 (x the distance from the goal, u
/// the move h v), so that motion thrown from the goal reads at most 1 / (1 - alpha / 4) times
/// its start (4/3 at alpha 1). Asserted: max KE (1 - alpha / 4) <= (1 + 1e-3) KE at the throw.
/// Drawn: boxes of 2 to 5 particles a side and spheres, 0.2 to 1 m, every mode, alpha 0.05 to 1
/// (1 in half the draws), beta 0 to 1, volume by the nearest fit or none, the deformation limit
/// 1 to 10 (1 in a tenth), one cluster or grids of 1 to 5 cells an axis overlapping by 0 to 1
/// cell, each particle thrown at a normal velocity of 0.05 to 2 sizes a second an axis (the mean
/// taken off), steps of 1/240 to 1/30 s in 1 to 4 substeps, undamped, 2 s. Not drawn: the
/// paper's scaling, which gains with overlapping clusters (docs/measured.md), and the cap, which
/// is not a projection. While the deformation limit clamped the goals' stretches and scaled their
/// quadratic block, draws of this kind gained up to 311 times; while a flat quadratic cluster's
/// linear fit, completed by R, was projected onto determinant 1 (grids of up to 5 cells make
/// clusters one layer thick), 2 of these draws gained, up to 10.4 times.
static void thrown_objects_gain_no_energy(void)
{
    const char *many = getenv("SM_THROW_DRAWS"); // (the valgrind stage of CI runs a few)
    const int draws = many ? atoi(many) : sm_test_backend == SM_BACKEND_CPU ? 1500 : 300;
    rng r = {31};
    double worst = 0.0;
    int built = 0;
    for (int draw = 0; draw < draws; draw++) {
        char json[4096];
        const flight f = draw_flight(&r, json, sizeof json);
        if (!f.world) continue;
        built++;
        const double start = kinetic_energy(f.world);
        const double gained = most_kinetic_energy(f) * (1.0 - 0.25 * f.alpha) / start;
        worst = fmax(worst, gained);
        if (!(gained <= 1.001)) printf("  draw %d gained %.4g: %s\n", draw, gained, json);
        ENSURE(gained <= 1.001);
        sm_world_destroy(f.world);
    }
    printf("  %d objects thrown (%d built): at most %.6g of the energy thrown, times 1 / (1 - alpha / 4)\n", draws, built, worst);
    ENSURE(draws > 0 && built >= draws * 9 / 10);
}

/// An upper bound on the energy the step keeps (u^2 - alpha d u + alpha P over the particles,
/// u = h v their moves, d their distances from the goals, P the potential of which the goals are
/// the pull: thrown_objects_gain_no_energy), in kg m^2, at h the solver step. Each cluster's
/// potential, sum of w |x - g|^2 over its members (w the membership's mass), is at most that of
/// the rigid placement the step takes (every fit's set holds the rotations): the rotation
/// nearest A_pq, or for an inverted cluster the one it keeps (step 2); the larger of the two is
/// taken. The cross term is at most sqrt(P) |u| (Cauchy-Schwarz; each particle's goal is its
/// clusters' mean, so sum m |d|^2 <= P).
static double kept_energy_bound(const sm_world *world, double alpha, double h)
{
    const sm_counts counts = sm_world_get_counts(world);
    double *x = get_positions(world), *x0 = malloc(sizeof(double) * 3 * (size_t)counts.particles);
    double *v = get_velocities(world), *m = get_masses(world);
    int32_t *shares = calloc((size_t)counts.particles, sizeof(int32_t));
    ENSURE_OK(sm_world_get_rest_positions(world, 0, counts.particles, x0));
    for (int32_t c = 0; c < counts.clusters; c++) {
        const int32_t *members;
        int32_t count;
        ENSURE_OK(sm_world_get_cluster_members(world, c, &members, &count));
        for (int32_t k = 0; k < count; k++) shares[members[k]]++;
    }
    double potential = 0.0, moves = 0.0;
    for (int32_t c = 0; c < counts.clusters; c++) {
        const int32_t *members;
        int32_t count;
        sm_cluster_info info;
        ENSURE_OK(sm_world_get_cluster_members(world, c, &members, &count));
        ENSURE_OK(sm_world_get_cluster(world, c, &info));
        double mass = 0.0;
        sm_vec3 center = v3(0, 0, 0), rest = v3(0, 0, 0);
        for (int32_t k = 0; k < count; k++) {
            const int32_t i = members[k];
            const double w = m[i] / shares[i];
            mass += w;
            center = v3_add(center, v3_scale(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), w));
            rest = v3_add(rest, v3_scale(v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), w));
        }
        center = v3_scale(center, 1.0 / mass), rest = v3_scale(rest, 1.0 / mass);
        sm_mat3 apq = m3_zero();
        for (int32_t k = 0; k < count; k++) {
            const int32_t i = members[k];
            const sm_vec3 p = v3_sub(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), center);
            const sm_vec3 q = v3_sub(v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), rest);
            apq = m3_add(apq, m3_scale(m3_outer(p, q), m[i] / shares[i]));
        }
        const sm_mat3 turns[2] = {sm_closest_rotation(apq), info.rotation};
        double most = 0.0;
        for (int t = 0; t < 2; t++) {
            double sum = 0.0;
            for (int32_t k = 0; k < count; k++) {
                const int32_t i = members[k];
                const sm_vec3 p = v3_sub(v3(x[3 * i], x[3 * i + 1], x[3 * i + 2]), center);
                const sm_vec3 q = v3_sub(v3(x0[3 * i], x0[3 * i + 1], x0[3 * i + 2]), rest);
                sum += m[i] / shares[i] * v3_dot(v3_sub(p, m3_apply(turns[t], q)), v3_sub(p, m3_apply(turns[t], q)));
            }
            most = fmax(most, sum);
        }
        potential += most;
    }
    for (int32_t i = 0; i < counts.particles; i++)
        moves += m[i] * h * h * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
    free(x), free(x0), free(v), free(m), free(shares);
    return moves + alpha * sqrt(potential * moves) + alpha * potential;
}


/// Scrambled starts: objects scrambled by up to their size, so that clusters are torn through
/// themselves and their fits invert, flying free, neither gain much energy nor drive themselves.
/// Their largest kinetic energy, KE (1 - alpha / 4) 2 h^2, is at most 4 times the energy the step
/// keeps at the start (kept_energy_bound: the throw and what the scramble stored; the nearest fit
/// within the deformation limit where two whitened stretches tie, step 3, still adds some:
/// docs/measured.md), and their centre of mass changes its velocity by at most half the speed v_e that
/// energy would give the whole object (momentum is kept by shape matching; the motion limit,
/// step 4f, acts on particles one by one). Drawn as thrown_objects_gain_no_energy draws, each
/// particle then moved by up to 0 to 1 times the object's size (uniform in a ball). When the
/// motion limit took away only the outward part of a particle's velocity, an inverted fit with
/// volume preservation switched to R, and a flat quadratic cluster's fit, completed by R, was
/// projected onto determinant 1, 28 of these draws failed,
/// up to 17.7 times that energy and 4.6 v_e in 2 s (a sphere of 27 particles then flew off at
/// 640 m/s after 10 s).
static void scrambled_objects_do_not_drive_themselves(void)
{
    const char *many = getenv("SM_THROW_DRAWS");
    const int draws = many ? atoi(many) : sm_test_backend == SM_BACKEND_CPU ? 1500 : 300;
    rng r = {37};
    double worst_gain = 0.0, worst_drift = 0.0;
    int built = 0;
    for (int draw = 0; draw < draws; draw++) {
        char json[4096];
        const flight f = draw_flight(&r, json, sizeof json);
        if (!f.world) continue;
        const double fraction = rng_uniform(&r, 0.0, 1.0);
        scramble(f.world, 0, fraction, &r);
        built++;
        const double h = f.h / f.substeps, kept = kept_energy_bound(f.world, f.alpha, h);
        double *m = get_masses(f.world), mass = 0.0;
        for (int32_t i = 0; i < sm_world_get_counts(f.world).particles; i++) mass += m[i];
        free(m);
        const sm_vec3 p0 = linear_momentum(f.world, 0);
        const double gained = most_kinetic_energy(f) * (1.0 - 0.25 * f.alpha) * 2.0 * h * h / kept;
        // v_e = sqrt(2 E / M), E = kept / (2 h^2)
        const double drift = v3_length(v3_sub(linear_momentum(f.world, 0), p0)) / mass / sqrt(kept / (h * h * mass));
        worst_gain = fmax(worst_gain, gained), worst_drift = fmax(worst_drift, drift);
        if (!(gained <= 4.0) || !(drift <= 0.5))
            printf("  draw %d (scrambled by %.3g) gained %.4g, drifted %.4g: %s\n", draw, fraction, gained, drift, json);
        ENSURE(gained <= 4.0);
        ENSURE(drift <= 0.5);
        sm_world_destroy(f.world);
    }
    printf("  %d objects scrambled and thrown (%d built): at most %.4g of the energy kept at the start, times\n"
           "  1 / (1 - alpha / 4); the centre's velocity changed by at most %.4g v_e\n",
           draws, built, worst_gain, worst_drift);
    ENSURE(draws > 0 && built >= draws * 9 / 10);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(one_cluster_conserves_momentum),
        TEST(disjoint_clusters_conserve_momentum),
        TEST(overlapping_clusters_conserve_momentum),
        TEST(thrown_objects_gain_no_energy),
        TEST(scrambled_objects_do_not_drive_themselves),
        TEST(objects_at_rest_stay_at_rest_at_any_step),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
