/* Stability (paper sections 3.4 and 5; docs/measured.md). */
#include "math3.h"
#include "support.h"

#include <stdlib.h>

static const char *const modes[] = {"rigid", "linear", "quadratic"};
static const double alphas[] = {0.1, 0.5, 1.0};
static const double betas[] = {0.0, 0.5, 0.9};
/// lattice resolution and cluster grid: one cluster, and two overlapping 2x2x2 grids
static const char *const layouts[][2] = {{"[4, 4, 4]", "[1, 1, 1]"}, {"[3, 3, 3]", "[2, 2, 2]"}, {"[5, 5, 5]", "[2, 2, 2]"}};

static sm_world *lattice(int layout, int mode, double alpha, double beta, bool volume_preservation, double damping)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": %s, \"mode\": \"%s\", \"alpha\": %g,"
             " \"beta\": %g, \"volume_preservation\": %s, \"damping\": %g, \"clusters\": {\"grid\": %s}}]}",
             layouts[layout][0], modes[mode], alpha, beta, volume_preservation ? "true" : "false", damping, layouts[layout][1]);
    return world_from_json(json);
}

static const char *const rest_shapes[] = {
    "\"shape\": \"box\", \"resolution\": [5, 4, 3], \"size\": [1.2, 0.9, 0.6], \"clusters\": {\"grid\": [2, 2, 2]}",
    "\"shape\": \"sphere\", \"radius\": 0.5, \"spacing\": 0.2, \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.4}",
    "\"shape\": \"torus\", \"major_radius\": 0.6, \"minor_radius\": 0.25, \"spacing\": 0.12, \"clusters\": {\"grid\": [3, 1, 3]}",
    "\"shape\": \"box\", \"resolution\": [3, 3, 3], \"clusters\": {\"grid\": [2, 2, 2]}, \"rotation\": [30, 40, 50]",
    "\"shape\": \"sphere\", \"radius\": 0.5, \"spacing\": 0.2",
    "\"shape\": \"torus\", \"major_radius\": 0.6, \"minor_radius\": 0.25, \"spacing\": 0.12",
};

/// Worst |x - x0| over the size after 1,000 steps from rest, and worst ||S_p - I||_F.
static void rest_run(const char *shape, int mode, bool volume_preservation, double *worst_motion, double *worst_plastic)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"gravity\": [0, 0, 0], \"objects\": [{%s, \"mode\": \"%s\", \"alpha\": 1, \"beta\": 0.9,"
             " \"volume_preservation\": %s, \"cap\": {\"soft\": 3, \"hard\": 4}%s}]}",
             shape, modes[mode], volume_preservation ? "true" : "false",
             mode ? ", \"plasticity\": {\"yield\": 0, \"creep\": 10, \"max\": 1}" : "");
    sm_world *world = world_from_json(json);
    if (!world) return;
    const int32_t n = sm_world_get_counts(world).particles;
    const double size = object_size(world, 0);
    double *rest = get_rest_positions(world);
    for (int step = 0; step < 1000; step++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    double *x = get_positions(world);
    for (int32_t i = 0; i < 3 * n; i++) *worst_motion = fmax(*worst_motion, fabs(x[i] - rest[i]) / size);
    for (int32_t c = 0; c < sm_world_get_counts(world).clusters; c++) {
        sm_cluster_info info;
        sm_world_get_cluster(world, c, &info);
        *worst_plastic = fmax(*worst_plastic, sqrt(m3_norm2(m3_sub(info.plastic, m3_identity()))));
    }
    free(rest), free(x);
    sm_world_destroy(world);
}

/// The rest state is an equilibrium: without gravity nothing moves in any mode, with the cap and
/// plasticity of zero yield on, and the plastic state stays I: for every shape without volume
/// preservation, for one cluster with it, and for the overlapping box lattices with it. (Volume
/// preservation with overlapping clusters on the sphere and torus is an unstable equilibrium:
/// see the next test.) Undamped at alpha 1, a goal's rounding error that repeats every step is a
/// constant acceleration, so the motion grows with the square of the steps: over 1,000 steps
/// the CPU reference moves less than 1e-9 of the size, OpenCL's float less than 1e-2 (measured
/// 3.4e-3, the box's rotation; the per-cluster sums of m (x - anchor) are compensated, without
/// which a 424-member torus drifted 0.1 of its size) and S_p stays within 1e-11 of I on the CPU
/// reference (1.3e-12) and 1e-3 on OpenCL (8.2e-5).
static void rest_state_is_an_equilibrium(void)
{
    double worst_motion = 0.0, worst_plastic = 0.0;
    for (int s = 0; s < 6; s++)
        for (int m = 0; m < 3; m++) {
            rest_run(rest_shapes[s], m, false, &worst_motion, &worst_plastic);
            bool one_cluster = s >= 4, lattice = s == 0 || s == 3;
            if (one_cluster || lattice) rest_run(rest_shapes[s], m, true, &worst_motion, &worst_plastic);
        }
    printf("  worst motion from rest %.3g of the size, worst ||S_p - I|| %.3g\n", worst_motion, worst_plastic);
    ENSURE_SMALL(worst_motion, tolerance(1e-9, 1e-2));
    ENSURE_SMALL(worst_plastic, tolerance(1e-11, 1e-3));
}

/// Mean growth per 100 steps of a perturbation of the rest state, undamped, from step 50 to step
/// 400 (the growth beats because the unstable eigenvalues come in complex pairs): 1e-12 of the
/// size in double, 1e-5 in float (well above its round-off, well below where the motion stops
/// being small).
/// `volume` is the scene's volume_preservation value: true, false or "scale".
static double rest_growth_per_100_steps(const char *shape, int mode, const char *volume)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"gravity\": [0, 0, 0], \"objects\": [{%s, \"mode\": \"%s\", \"alpha\": 1, \"beta\": 0.9,"
             " \"volume_preservation\": %s}]}",
             shape, modes[mode], volume);
    sm_world *world = world_from_json(json);
    if (!world) return NAN;
    rng r = {5};
    scramble(world, 0, tolerance(1e-12, 1e-5), &r);
    double at50 = 0.0;
    for (int step = 1; step <= 400; step++) {
        sm_world_step(world, 1.0 / 60.0, 1);
        if (step == 50) at50 = rigid_fit_rms(world, 0);
    }
    double at400 = rigid_fit_rms(world, 0);
    sm_world_destroy(world);
    return pow(at400 / at50, 100.0 / 350.0);
}

/// Volume preservation with overlapping clusters keeps the rest state stable. The paper's
/// A / cbrt(det A) does not: dividing by cbrt(det) is an oblique, not an orthogonal, projection
/// in the mass-weighted metric of an anisotropic cluster, and the mean of oblique projections
/// over overlapping clusters has complex eigenvalues (up to 0.034i measured on the sphere), while
/// the undamped step matrix has determinant 1, so any complex eigenvalue grows: measured mean
/// growth per 100 steps sphere linear 18.7, torus quadratic 2.5 (16.3 and 2.48 on OpenCL; 8.4
/// and 107 while each membership weighed its particle's whole mass; 2.74 while the quadratic
/// mode scaled the fit's linear block rather than the goals' linear fit). The default, the
/// nearest fit of determinant 1 in that metric (for a quadratic fit, of the goals' linear fit),
/// is an orthogonal projection to first order: measured 0.56 to 0.91 in every mode, and at most 1
/// without volume preservation. (Measuring the fit's linear block A in W alone, rather than the
/// goals' linear fit, left the sphere's asymmetric clusters unstable: 6.28.)
static void volume_preservation_keeps_the_rest_state_stable(void)
{
    for (int m = 0; m < 3; m++)
        for (int shape = 1; shape <= 2; shape++) {
            double g = rest_growth_per_100_steps(rest_shapes[shape], m, "true");
            printf("  %s %s: %.3g\n", modes[m], shape == 1 ? "sphere" : "torus", g);
            ENSURE(g <= 1.05);
            ENSURE(rest_growth_per_100_steps(rest_shapes[shape], m, "false") <= 1.05);
        }
    double sphere_linear = rest_growth_per_100_steps(rest_shapes[1], 1, "\"scale\"");
    double torus_quadratic = rest_growth_per_100_steps(rest_shapes[2], 2, "\"scale\"");
    printf("  the paper's scaling: sphere linear %.3g, torus quadratic %.3g\n", sphere_linear, torus_quadratic);
    ENSURE_RANGE(sphere_linear, 0.5 * 18.7, 2.0 * 18.7);
    ENSURE_RANGE(torus_quadratic, 0.5 * 2.5, 2.0 * 2.5);
}

/// Small motions about rest are stable for alpha <= 1 in every mode: a displacement of 1e-3 of
/// the size, undamped, never grows (measured at most 1.115 times its start over 3,000 steps;
/// an unstable mode would grow exponentially).
static void small_motions_about_rest_are_stable(void)
{
    double worst = 0.0;
    for (int layout = 0; layout < 3; layout++)
        for (int m = 0; m < 3; m++)
            for (int vp = 0; vp < 2; vp++)
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        if (m == 0 && b > 0) continue; // beta does not enter rigid mode
                        sm_world *world = lattice(layout, m, alphas[a], betas[b], vp, 0.0);
                        if (!world) continue;
                        rng r = {7};
                        scramble(world, 0, 1e-3, &r);
                        const double start = rigid_fit_rms(world, 0);
                        for (int step = 0; step < 3000; step++) {
                            sm_world_step(world, 1.0 / 60.0, 1);
                            worst = fmax(worst, rigid_fit_rms(world, 0) / start);
                        }
                        sm_world_destroy(world);
                    }
    printf("  worst growth of a 1e-3 perturbation over 3,000 steps: %.4f\n", worst);
    ENSURE(worst <= 1.5);
}

/* ---- The Fig. 8 set-up: lattices scrambled by 30% of their size, 10,000 steps ------------ */

typedef struct outcome {
    bool nan;
    double max_radius; ///< largest radius over the run, in rest radii
    double final_speed;///< largest particle speed at the end, in sizes per second
} outcome;

enum { CONFIG_SETTLE, CONFIG_UNDAMPED, CONFIG_VOLUME, CONFIG_VOLUME_DAMPED, CONFIG_COUNT };
static const struct { bool volume_preservation; double damping; const char *label; } configs[CONFIG_COUNT] = {
    {false, 0.5, "volume preservation off, damping 0.5/s"},
    {false, 0.0, "volume preservation off, no damping"},
    {true, 0.0, "volume preservation on, no damping"},
    {true, 0.5, "volume preservation on, damping 0.5/s"},
};

/// Worst outcome per config, mode and layout over alphas and betas; computed once.
static outcome sweep[CONFIG_COUNT][3][3];
static bool swept = false;

static outcome scrambled_run(int layout, int mode, double alpha, double beta, int config)
{
    outcome o = {false, 0.0, 0.0};
    sm_world *world = lattice(layout, mode, alpha, beta, configs[config].volume_preservation, configs[config].damping);
    if (!world) return (outcome){true, INFINITY, INFINITY};
    rng r = {1};
    scramble(world, 0, 0.3, &r);
    const double rest_radius = object_radius(world, 0, true), size = object_size(world, 0);
    for (int step = 0; step < 10000 && !o.nan; step++) {
        sm_world_step(world, 1.0 / 60.0, 1);
        double radius = object_radius(world, 0, false) / rest_radius;
        o.nan = !isfinite(radius);
        o.max_radius = fmax(o.max_radius, radius);
    }
    o.nan = o.nan || world_has_nan(world);
    o.final_speed = max_speed(world, 0) / size;
    sm_world_destroy(world);
    return o;
}

static void run_sweep(void)
{
    if (swept) return;
    swept = true;
    for (int config = 0; config < CONFIG_COUNT; config++)
        for (int m = 0; m < 3; m++)
            for (int layout = 0; layout < 3; layout++) {
                outcome worst = {false, 0.0, 0.0};
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        if (m == 0 && b > 0) continue;
                        outcome o = scrambled_run(layout, m, alphas[a], betas[b], config);
                        worst.nan = worst.nan || o.nan;
                        worst.max_radius = fmax(worst.max_radius, o.max_radius);
                        worst.final_speed = fmax(worst.final_speed, o.final_speed);
                    }
                sweep[config][m][layout] = worst;
                printf("  %-40s %-9s %s on %s: max radius %8.3f rest radii, final speed %9.3g sizes/s%s\n",
                       configs[config].label, modes[m], layouts[layout][0], layouts[layout][1], worst.max_radius,
                       worst.final_speed, worst.nan ? ", NaN" : "");
            }
}

/// Never a NaN, in any mode, with or without volume preservation and damping.
static void scrambled_lattices_never_give_nan(void)
{
    run_sweep();
    for (int config = 0; config < CONFIG_COUNT; config++)
        for (int m = 0; m < 3; m++)
            for (int layout = 0; layout < 3; layout++) ENSURE(!sweep[config][m][layout].nan);
}

/// Volume preservation off, damping 0.5/s: every object comes to rest (final speeds measured
/// about 3e-13 sizes/s) and stays within 1.5 rest radii, except in the transient of the layout
/// with the smallest clusters (3x3x3 particles on a 2x2x2 grid, 8 particles per cluster), which
/// peaks at 1.544 rest radii in its first 42 steps (linear, alpha 1, beta 0.5) before settling.
/// The scramble is a random offset in a ball of radius 30% of the object's largest extent.
static void scrambled_lattices_settle_with_damping(void)
{
    run_sweep();
    for (int m = 0; m < 3; m++)
        for (int layout = 0; layout < 3; layout++) {
            const outcome *o = &sweep[CONFIG_SETTLE][m][layout];
            ENSURE(o->final_speed <= 1e-9);
            ENSURE(o->max_radius <= (layout == 1 ? 1.6 : 1.5));
        }
}

/// Every scrambled lattice stays within 2 rest radii with damping, with volume preservation or
/// without it, and comes to rest; undamped within 2.5 (measured at most 1.84: quadratic, the
/// 5x5x5 lattice on the 2x2x2 grid, whose clusters invert and boil at the motion limit's speed
/// for all 10,000 steps, so that its largest radius is a chaotic run's; 2.33 before the
/// deformation limit was a projection, 1.95 while each membership weighed its particle's whole
/// mass). With the paper's A / cbrt(det A) the
/// deformable modes on overlapping grids swelled to 134-256 rest radii undamped and 46-71 with
/// damping 0.5/s.
static void scrambled_lattices_stay_within_two_rest_radii(void)
{
    run_sweep();
    for (int config = 0; config < CONFIG_COUNT; config++)
        for (int m = 0; m < 3; m++)
            for (int layout = 0; layout < 3; layout++) {
                ENSURE(sweep[config][m][layout].max_radius <= (configs[config].damping > 0 ? 2.0 : 2.5));
                if (configs[config].damping > 0) ENSURE(sweep[config][m][layout].final_speed <= 1e-9);
            }
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(rest_state_is_an_equilibrium),
        TEST(volume_preservation_keeps_the_rest_state_stable),
        TEST(small_motions_about_rest_are_stable),
        TEST(scrambled_lattices_never_give_nan),
        TEST(scrambled_lattices_settle_with_damping),
        TEST(scrambled_lattices_stay_within_two_rest_radii),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
