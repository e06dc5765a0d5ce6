/* The stress suite (CTest label "stress"): the paper's promise of a simulation "stable under
 * all circumstances", on the CPU reference and on OpenCL.
 *
 * The sweep: h in {1/240, 1/60, 1/30, 1/10} x alpha in {0.1, 0.5, 1} x beta in {0, 0.5, 0.9}
 * x each mode x volume preservation on and off x one cluster (a 4x4x4 lattice) and an
 * overlapping 2x2x2 grid (a 3x3x3 lattice: 8-particle clusters, the hardest layout measured) x
 * from rest and from a lattice scrambled by 30% of its size x no damping and 0.5/s, 10,000
 * steps each. Pass: no NaN anywhere and every object within 2 times its rest radius (its
 * largest particle distance from its centre of mass, checked after every step). beta and
 * volume preservation do not enter rigid mode, which runs them once. Each (backend, h) is one
 * world of 312 objects set apart, without gravity and without contact, and one CTest test.
 *
 * `test_stress sweep BACKEND RATE [scale]` runs one of them by hand; "scale" gives the paper's
 * volume preservation (A / cbrt(det A)) instead of the default, for the table of
 * bench/RESULTS.md. */
#include "math3.h"
#include "support.h"

#include <stdlib.h>

static const char *const modes[] = {"rigid", "linear", "quadratic"};
static const double alphas[] = {0.1, 0.5, 1.0};
static const double betas[] = {0.0, 0.5, 0.9};
static const char *const layouts[][2] = {{"[4, 4, 4]", "[1, 1, 1]"}, {"[3, 3, 3]", "[2, 2, 2]"}};
static const char *const layout_names[] = {"4x4x4, one cluster", "3x3x3 on a 2x2x2 grid"};
static const double dampings[] = {0.0, 0.5};

enum { MAX_CASES = 320 };

/// One object of the sweep and what it did.
typedef struct stress_case {
    int mode, volume, alpha, beta, layout, scrambled, damping;
    double rest_radius, max_radius;
    bool nan;
} stress_case;

static int sweep_cases(stress_case *cases)
{
    int n = 0;
    for (int m = 0; m < 3; m++)
        for (int vp = 0; vp < 2; vp++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    for (int layout = 0; layout < 2; layout++)
                        for (int s = 0; s < 2; s++)
                            for (int d = 0; d < 2; d++) {
                                if (m == 0 && (vp || b)) continue; // rigid: no beta, no volume treatment
                                cases[n++] = (stress_case){m, vp, a, b, layout, s, d, 0.0, 0.0, false};
                            }
    return n;
}

/// The largest distance of each object's particles from its centre of mass, from one read of
/// the positions.
static void radii(const sm_world *world, const double *x, int count, double *out)
{
    for (int o = 0; o < count; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        const int32_t first = info.first_particle, n = info.particle_count;
        double c[3] = {0, 0, 0};
        for (int32_t i = first; i < first + n; i++)
            for (int k = 0; k < 3; k++) c[k] += x[3 * i + k] / n; // equal masses
        double r2 = 0.0;
        for (int32_t i = first; i < first + n; i++) {
            double d2 = 0.0;
            for (int k = 0; k < 3; k++) d2 += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
            r2 = fmax(r2, d2);
            if (!isfinite(d2)) r2 = NAN;
        }
        out[o] = sqrt(r2);
    }
}

/// Worst radius ratio of the last sweep's undamped linear and quadratic objects with volume
/// preservation on the 2x2x2 grid of 8-particle clusters (fewer than the 9 quadratic modes).
static double worst_degenerate;

/// Runs the sweep for one backend and h; returns the worst radius ratio over every other case
/// (NaN if any NaN).
static double sweep(sm_backend backend, double rate, bool paper_volume, int steps)
{
    static stress_case cases[MAX_CASES];
    const int count = sweep_cases(cases);
    size_t size = 256 + (size_t)count * 400;
    char *json = malloc(size);
    int o = snprintf(json, size, "{\"gravity\": [0, 0, 0], \"collisions\": {\"enabled\": false}, \"objects\": [");
    for (int k = 0; k < count; k++) {
        const stress_case *c = &cases[k];
        o += snprintf(json + o, size - (size_t)o,
                      "%s{\"shape\": \"box\", \"resolution\": %s, \"clusters\": {\"grid\": %s}, \"position\": [%d, 0, %d],"
                      " \"mode\": \"%s\", \"alpha\": %g, \"beta\": %g, \"volume_preservation\": %s, \"damping\": %g}",
                      k ? ", " : "", layouts[c->layout][0], layouts[c->layout][1], 4 * (k % 18), 4 * (k / 18),
                      modes[c->mode], alphas[c->alpha], betas[c->beta],
                      c->volume ? (paper_volume ? "\"scale\"" : "true") : "false", dampings[c->damping]);
    }
    snprintf(json + o, size - (size_t)o, "]}");
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    if (sm_scene_load_string(json, "stress sweep", &scene) != SM_OK || create_world(scene, backend, &world) != SM_OK) {
        fprintf(stderr, "sweep: %s\n", sm_last_error());
        sm_test_failures++;
        sm_scene_destroy(scene);
        free(json);
        return NAN;
    }
    sm_scene_destroy(scene);
    free(json);

    double *x = get_rest_positions(world), r[MAX_CASES];
    radii(world, x, count, r);
    free(x);
    rng random = {1};
    for (int k = 0; k < count; k++) {
        cases[k].rest_radius = r[k], cases[k].max_radius = 1.0;
        if (cases[k].scrambled) scramble(world, k, 0.3, &random);
    }
    const int32_t n = sm_world_get_counts(world).particles;
    x = malloc(sizeof(double) * 3 * (size_t)n);
    for (int step = 0; step < steps; step++) {
        if (sm_world_step(world, 1.0 / rate, 1) != SM_OK) {
            fprintf(stderr, "sweep: step %d: %s\n", step, sm_last_error());
            sm_test_failures++;
            break;
        }
        sm_world_get_positions(world, 0, n, x);
        radii(world, x, count, r);
        for (int k = 0; k < count; k++) {
            cases[k].nan = cases[k].nan || !isfinite(r[k]);
            cases[k].max_radius = fmax(cases[k].max_radius, r[k] / cases[k].rest_radius);
        }
    }
    free(x);
    const bool nan_anywhere = world_has_nan(world);
    sm_world_destroy(world);

    // the table: worst over alpha and beta for each mode, volume, layout, start and damping
    double worst = nan_anywhere ? NAN : 0.0;
    worst_degenerate = 0.0;
    printf("  %s, h = 1/%g, %d steps%s:\n", backend == SM_BACKEND_CPU ? "CPU reference" : "OpenCL", rate, steps,
           paper_volume ? ", the paper's volume scaling" : "");
    for (int m = 0; m < 3; m++)
        for (int vp = 0; vp < 2; vp++)
            for (int layout = 0; layout < 2; layout++)
                for (int s = 0; s < 2; s++)
                    for (int d = 0; d < 2; d++) {
                        double group = 0.0;
                        bool nan = false, any = false;
                        for (int k = 0; k < count; k++) {
                            const stress_case *c = &cases[k];
                            if (c->mode != m || c->volume != vp || c->layout != layout || c->scrambled != s || c->damping != d)
                                continue;
                            any = true, nan = nan || c->nan, group = fmax(group, c->max_radius);
                        }
                        if (!any) continue;
                        printf("    %-9s volume %-3s %-22s %-9s damping %-3g: max radius %8.3f%s\n", modes[m],
                               vp ? "on" : "off", layout_names[layout], s ? "scrambled" : "rest", dampings[d], group,
                               nan ? ", NaN" : "");
                        if (m > 0 && vp && layout == 1 && d == 0) worst_degenerate = nan ? NAN : fmax(worst_degenerate, group);
                        else worst = nan ? NAN : fmax(worst, group);
                    }
    return worst;
}

/// No NaN, and every object within 2 rest radii over 10,000 steps ($SM_STRESS_STEPS steps when
/// set: the sanitizer stage of CI runs fewer, as memory errors do not need the long runs); except
/// undamped linear and quadratic objects with volume preservation on 8-particle clusters (the
/// 3x3x3 lattice on a 2x2x2 grid; fewer particles than quadratic modes), whose largest radius in
/// these chaotic runs moves with round-off: 1.75-1.85 rest radii on PoCL (1.83-2.27 before the
/// deformation limit was a projection; a change of the rounding of x_cm alone once moved it from
/// 2.04 to 2.13), 1.68-1.69 on the CPU reference (bench/RESULTS.md): within 2.5, well inside the
/// "Stable" bound of 6 s = 12.
static void check_sweep(sm_backend backend, double rate)
{
    const char *steps = getenv("SM_STRESS_STEPS");
    const double worst = sweep(backend, rate, false, steps && atoi(steps) > 0 ? atoi(steps) : 10000);
    printf("  worst: %.3f rest radii; undamped, volume preservation, 8-particle clusters %.3f\n", worst, worst_degenerate);
    ENSURE(worst <= 2.0);
    ENSURE(worst_degenerate <= 2.5);
}

static void sweep_cpu_240(void) { check_sweep(SM_BACKEND_CPU, 240); }
static void sweep_cpu_60(void) { check_sweep(SM_BACKEND_CPU, 60); }
static void sweep_cpu_30(void) { check_sweep(SM_BACKEND_CPU, 30); }
static void sweep_cpu_10(void) { check_sweep(SM_BACKEND_CPU, 10); }
static void sweep_opencl_240(void) { check_sweep(SM_BACKEND_OPENCL, 240); }
static void sweep_opencl_60(void) { check_sweep(SM_BACKEND_OPENCL, 60); }
static void sweep_opencl_30(void) { check_sweep(SM_BACKEND_OPENCL, 30); }
static void sweep_opencl_10(void) { check_sweep(SM_BACKEND_OPENCL, 10); }

/// det(sum m p q^T) of a whole object (one cluster's linear match up to the positive A_qq).
static double match_determinant(const double *x, const double *x0, int32_t first, int32_t n)
{
    double c[3] = {0, 0, 0}, c0[3] = {0, 0, 0};
    for (int32_t i = first; i < first + n; i++)
        for (int k = 0; k < 3; k++) c[k] += x[3 * i + k] / n, c0[k] += x0[3 * i + k] / n;
    sm_mat3 apq = m3_zero();
    for (int32_t i = first; i < first + n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) apq.m[a][b] += (x[3 * i + a] - c[a]) * (x0[3 * i + b] - c0[b]);
    return m3_det(apq);
}

/// Mirror inversion: every particle reflected through its object's centre of mass (det of the
/// linear match negative), then released: within 60 steps every object is the right way out
/// again (det positive), in every mode, volume preservation on and off, with one cluster and
/// with overlapping 2x2x2 grids (a 5x5x5 lattice sharing its middle layers, a 4x4x4 one with
/// overlap 0.5, and a 3x3x3 one of 8-particle clusters), on both backends. Measured: by step 3.
/// Before inverted clusters kept their rotation (step 2), the nearest rotation to a point
/// reflection was any half turn and the 5x5x5 grids stayed inverted in rigid and linear mode.
/// (A grid whose clusters do not overlap, such as 2x2x2 on a 4x4x4 lattice with the default
/// overlap, is eight separate bodies: each turns back, at its mirrored place.)
static void mirrored_objects_turn_back_within_60_steps(void)
{
    static const char *layouts[] = {
        "\"resolution\": [4, 4, 4], \"clusters\": {\"grid\": [1, 1, 1]}",
        "\"resolution\": [5, 5, 5], \"clusters\": {\"grid\": [2, 2, 2]}",
        "\"resolution\": [4, 4, 4], \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.5}",
        "\"resolution\": [3, 3, 3], \"clusters\": {\"grid\": [2, 2, 2]}",
    };
    static const char *layout_names[] = {"one cluster", "5x5x5 on a 2x2x2 grid", "4x4x4 on a 2x2x2 grid, overlap 0.5",
                                         "3x3x3 on a 2x2x2 grid"};
    char json[8192];
    int o = snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"collisions\": {\"enabled\": false}, \"objects\": [");
    int count = 0;
    for (int m = 0; m < 3; m++)
        for (int layout = 0; layout < 4; layout++)
            for (int vp = 0; vp < 2; vp++, count++)
                o += snprintf(json + o, sizeof json - (size_t)o,
                              "%s{\"shape\": \"box\", %s, \"position\": [%d, 0, 0], \"mode\": \"%s\", \"volume_preservation\": %s}",
                              count ? ", " : "", layouts[layout], 3 * count, modes[m], vp ? "true" : "false");
    snprintf(json + o, sizeof json - (size_t)o, "]}");
    for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
        sm_world *world = world_from_json_on(json, (sm_backend)backend);
        if (!world) return;
        const int32_t n = sm_world_get_counts(world).particles;
        double *x = get_positions(world), *x0 = get_rest_positions(world);
        for (int k = 0; k < count; k++) {
            sm_object_info info;
            sm_world_get_object(world, k, &info);
            double c[3] = {0, 0, 0};
            for (int32_t i = info.first_particle; i < info.first_particle + info.particle_count; i++)
                for (int a = 0; a < 3; a++) c[a] += x[3 * i + a] / info.particle_count;
            for (int32_t i = info.first_particle; i < info.first_particle + info.particle_count; i++)
                for (int a = 0; a < 3; a++) x[3 * i + a] = 2.0 * c[a] - x[3 * i + a];
            ENSURE(match_determinant(x, x0, info.first_particle, info.particle_count) < 0.0);
        }
        ENSURE_OK(sm_world_set_positions(world, 0, n, x));
        int turned[64] = {0};
        for (int step = 1; step <= 60; step++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE_OK(sm_world_get_positions(world, 0, n, x));
            for (int k = 0; k < count; k++) {
                sm_object_info info;
                sm_world_get_object(world, k, &info);
                if (!turned[k] && match_determinant(x, x0, info.first_particle, info.particle_count) > 0.0) turned[k] = step;
            }
        }
        int latest = 0;
        for (int k = 0; k < count; k++) {
            if (!turned[k])
                printf("  %s, %s, volume preservation %s: still inverted after 60 steps\n", modes[k / 8],
                       layout_names[(k / 2) % 4], k % 2 ? "on" : "off");
            ENSURE(turned[k] > 0);
            latest = turned[k] > latest ? turned[k] : latest;
        }
        printf("  %s: every object the right way out by step %d\n", backend == SM_BACKEND_CPU ? "CPU" : "OpenCL", latest);
        ENSURE(!world_has_nan(world));
        free(x), free(x0);
        sm_world_destroy(world);
    }
}

/// Fast impact: objects of every mode hit the ground at 100 m/s (a 1 m box moves 1.7 m per
/// step at h = 1/60): no particle ever ends a step below the plane, and nothing is NaN.
static void impact_at_100_m_per_s_stays_above_the_ground(void)
{
    const char *json = "{\"ground\": {\"height\": 0}, \"collisions\": {\"enabled\": false}, \"objects\": ["
                       "{\"shape\": \"box\", \"position\": [0, 3, 0], \"velocity\": [0, -100, 0], \"mode\": \"rigid\"},"
                       "{\"shape\": \"box\", \"position\": [3, 3, 0], \"velocity\": [20, -100, 0], \"mode\": \"linear\"},"
                       "{\"shape\": \"sphere\", \"position\": [6, 3, 0], \"velocity\": [0, -100, 0], \"mode\": \"quadratic\","
                       " \"clusters\": {\"grid\": [2, 2, 2]}}]}";
    for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
        sm_world *world = world_from_json_on(json, (sm_backend)backend);
        if (!world) return;
        const int32_t n = sm_world_get_counts(world).particles;
        double lowest = INFINITY;
        for (int step = 0; step < 120; step++) {
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            double *x = get_positions(world);
            for (int32_t i = 0; i < n; i++) lowest = fmin(lowest, x[3 * i + 1]);
            free(x);
        }
        printf("  %s: lowest particle over 120 steps %.3g m\n", backend == SM_BACKEND_CPU ? "CPU" : "OpenCL", lowest);
        ENSURE(lowest >= 0.0);
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
    }
}

static int notices;
static void count_notice(sm_log_level level, const char *message, void *user)
{
    (void)user;
    if (level == SM_LOG_NOTICE && strstr(message, "modes; the rest follow R")) notices++;
}

/// Degenerate clusters: a coplanar layer, a colinear row, a single particle and an 8-particle
/// cube (fewer particles than the 9 quadratic modes), as explicit clusters of a dropped box, in
/// every mode, with and without volume preservation: 1,000 steps on both backends without a
/// NaN, and the loader names every degraded cluster in a notice (2 per linear or volume object
/// with a flat or colinear cluster and the single particle, 4 in quadratic mode).
static void degenerate_clusters_run_without_nan(void)
{
    // a 4x4x4 box: index x + 4 y + 16 z
    const char *lists = "[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19], [63],"
                        " [0, 1, 4, 5, 16, 17, 20, 21], [21, 22, 25, 26, 37, 38, 41, 42],"
                        " [0, 5, 10, 15, 16, 21, 26, 31, 32, 37, 42, 47, 48, 53, 58, 63],"
                        " [2, 3, 6, 7, 18, 19, 22, 23, 34, 35, 38, 39, 50, 51, 54, 55, 60, 61, 62],"
                        " [8, 9, 12, 13, 24, 25, 28, 29, 40, 41, 44, 45, 56, 57, 59, 63, 43, 27, 11, 46, 30, 14]]";
    char json[8192];
    int o = snprintf(json, sizeof json, "{\"ground\": {}, \"collisions\": {\"enabled\": false}, \"objects\": [");
    int count = 0;
    for (int m = 0; m < 3; m++)
        for (int vp = 0; vp < 2; vp++, count++)
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "%s{\"shape\": \"box\", \"position\": [%d, 1, 0], \"rotation\": [20, 30, 40],"
                          " \"mode\": \"%s\", \"volume_preservation\": %s, \"alpha\": 1, \"beta\": 0.9,"
                          " \"clusters\": {\"lists\": %s}}",
                          count ? ", " : "", 3 * count, modes[m], vp ? "true" : "false", lists);
    snprintf(json + o, sizeof json - (size_t)o, "]}");
    for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
        sm_scene *scene = NULL;
        sm_world *world = NULL;
        notices = 0;
        ENSURE_OK(sm_scene_load_string(json, "degenerate clusters", &scene));
        sm_world_def def = sm_scene_world_def(scene);
        def.backend = (sm_backend)backend, def.log = count_notice;
        ENSURE_OK(sm_scene_create_world(scene, &def, &world));
        sm_scene_destroy(scene);
        if (!world) return;
        for (int step = 0; step < 1000; step++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        printf("  %s: %d notices of degraded clusters, NaN: %s\n", backend == SM_BACKEND_CPU ? "CPU" : "OpenCL", notices,
               world_has_nan(world) ? "yes" : "no");
        // per linear object 4 (the layer, the row, the particle, the diagonal plane x = y); per
        // quadratic object 7 (also the two 2x2x2 cubes and the block of two layers along x)
        ENSURE(notices == 2 * 4 + 2 * 7);
        ENSURE(!world_has_nan(world));
        sm_world_destroy(world);
    }
}

/// Far from the origin: the same scene (a thrown, spinning linear box on a 2x2x2 grid and a
/// spinning quadratic sphere, falling freely: smooth motion, which contact would make chaotic) moved by 1e3 and 1e4 m along x and z follows the same motion relative
/// to its offset over 300 steps: within 1e-6 m on the CPU reference (double; measured 7.5e-9 m
/// at 1e3 m, 7.6e-7 m at 1e5 m), and on OpenCL (float, positions as double-float pairs)
/// within 5e-4 m at 1e3 m and 3e-3 m at 1e4 m (measured 1.5e-4 and 9.3e-4 m; 1.6e-2 m at
/// 1e5 m, where float stops matching to a centimetre).
static void motion_far_from_the_origin_matches(void)
{
    const double offsets[] = {0.0, 1e3, 1e4, 1e5};
    for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
        double *reference = NULL;
        int32_t n = 0;
        for (int k = 0; k < 4; k++) {
            char json[1024];
            const double d = offsets[k];
            snprintf(json, sizeof json,
                     "{\"collisions\": {\"enabled\": false}, \"objects\": ["
                     "{\"shape\": \"box\", \"position\": [%.17g, 1.5, %.17g], \"rotation\": [10, 20, 30],"
                     " \"clusters\": {\"grid\": [2, 2, 2]}, \"velocity\": [1, 0, -1], \"angular_velocity\": [0, 3, 1]},"
                     "{\"shape\": \"sphere\", \"position\": [%.17g, 1.5, %.17g], \"mode\": \"quadratic\","
                     " \"clusters\": {\"grid\": [2, 2, 2]}, \"angular_velocity\": [2, 0, 0]}]}",
                     d, d, d + 3.0, d);
            sm_world *world = world_from_json_on(json, (sm_backend)backend);
            if (!world) return;
            n = sm_world_get_counts(world).particles;
            for (int step = 0; step < 300; step++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            double *x = get_positions(world);
            for (int32_t i = 0; i < n; i++) x[3 * i] -= d, x[3 * i + 2] -= d;
            if (k == 0) {
                reference = x;
            } else {
                double worst = 0.0;
                for (int32_t i = 0; i < 3 * n; i++) worst = fmax(worst, fabs(x[i] - reference[i]));
                printf("  %s, offset %g m: largest difference from the motion at the origin %.3g m\n",
                       backend == SM_BACKEND_CPU ? "CPU" : "OpenCL", d, worst);
                if (backend == SM_BACKEND_CPU && k < 3) ENSURE(worst <= 1e-6);
                if (backend == SM_BACKEND_OPENCL && k == 1) ENSURE(worst <= 5e-4);
                if (backend == SM_BACKEND_OPENCL && k == 2) ENSURE(worst <= 3e-3);
                free(x);
            }
            sm_world_destroy(world);
        }
        free(reference);
    }
}

/// Crushing: a soft box (1 m, 5x5x5, linear, damping 2/s) on the ground is crushed by a
/// kinematic plate to 5% of its height, held, and released. No NaN, no particle beyond 10 times
/// the scene's bounds (30 m from the origin), the box at most 5% of its height while held, and
/// after release (plasticity off) it recovers: RMS distance from the best rigid fit of its rest
/// shape below 1% of its size at the end, on both backends. The plate is 2 m thick: the crushed
/// box's goals push its particles up by tenths of a metre per substep.
static void crushed_object_recovers(void)
{
    const char *json =
        "{\"substeps\": 2, \"ground\": {\"height\": 0}, \"colliders\": ["
        " {\"shape\": \"box\", \"position\": [0, 2.1, 0], \"size\": [3, 2, 3], \"motion\": {\"type\": \"linear\","
        "  \"times\": [0.5, 1.5, 2.5, 3.0], \"offsets\": [[0, 0, 0], [0, -1.05, 0], [0, -1.05, 0], [0, 0, 0]]}}],"
        " \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 0.5, 0], \"mode\": \"linear\","
        " \"damping\": 2}]}";
    for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
        sm_world *world = world_from_json_on(json, (sm_backend)backend);
        if (!world) return;
        const int32_t n = sm_world_get_counts(world).particles;
        double farthest = 0.0, held_top = 0.0;
        for (int frame = 0; frame < 600; frame++) { // 10 s
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
            double *x = get_positions(world), top = -INFINITY;
            for (int32_t i = 0; i < n; i++) {
                farthest = fmax(farthest, sqrt(x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2]));
                top = fmax(top, x[3 * i + 1]);
            }
            if (frame >= 100 && frame < 140) held_top = fmax(held_top, top); // 1.67 s to 2.33 s
            free(x);
        }
        const double rms = rigid_fit_rms(world, 0) / object_size(world, 0);
        printf("  %s: height while held %.4f m, farthest particle %.3g m, RMS from the rigid fit after release %.3g of the"
               " size\n", backend == SM_BACKEND_CPU ? "CPU" : "OpenCL", held_top, farthest, rms);
        ENSURE(!world_has_nan(world));
        ENSURE(held_top <= 0.05 + 1e-6);
        ENSURE(farthest <= 30.0);
        ENSURE(rms < 0.01);
        sm_world_destroy(world);
    }
}

/// Nearly flat clusters: objects squashed to 1e-4 and 2e-4 of their height and stretched 10 and 7
/// times across (det A 7e-3 and 1.4e-2, singular values 1e-4 to 10) in linear and quadratic
/// mode, one cluster and a 2x2x2 grid, released: no NaN on either backend in 60 steps, and the
/// backends agree after the first step to 1e-4 m. (The volume projection takes the smallest
/// singular value from det A; taken from B^T B, whose smallest eigenvalue float can round to
/// zero, it once gave a NaN in paper384's pile, which the `cli` test runs.) Not stretched
/// equally across: the deformation limit must then part two equal stretches, of which either
/// may take the larger share (docs/algorithm.md step 3), and the backends take different ones.
static void nearly_flat_clusters_stay_finite(void)
{
    char json[2048];
    int o = snprintf(json, sizeof json, "{\"gravity\": [0, 0, 0], \"collisions\": {\"enabled\": false}, \"objects\": [");
    int count = 0;
    for (int m = 1; m < 3; m++)
        for (int grid = 0; grid < 2; grid++, count++)
            o += snprintf(json + o, sizeof json - (size_t)o,
                          "%s{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"clusters\": {\"grid\": %s},"
                          " \"position\": [%d, 0, 0], \"rotation\": [20, 30, 40], \"mode\": \"%s\", \"alpha\": 1, \"beta\": 0.9}",
                          count ? ", " : "", grid ? "[2, 2, 2]" : "[1, 1, 1]", 3 * count, modes[m]);
    snprintf(json + o, sizeof json - (size_t)o, "]}");
    for (int f = 1; f <= 2; f++) {
        double *first[2] = {NULL, NULL};
        int32_t n = 0;
        for (int backend = SM_BACKEND_CPU; backend <= SM_BACKEND_OPENCL; backend++) {
            sm_world *world = world_from_json_on(json, (sm_backend)backend);
            if (!world) return;
            n = sm_world_get_counts(world).particles;
            double *x = get_positions(world);
            for (int32_t i = 0; i < n; i++) x[3 * i] *= 10.0, x[3 * i + 1] *= 1e-4 * f, x[3 * i + 2] *= 7.0;
            ENSURE_OK(sm_world_set_positions(world, 0, n, x));
            free(x);
            for (int step = 0; step < 60; step++) {
                ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
                if (step == 0) first[backend - SM_BACKEND_CPU] = get_positions(world);
            }
            ENSURE(!world_has_nan(world));
            sm_world_destroy(world);
        }
        double worst = 0.0;
        for (int32_t i = 0; i < 3 * n; i++) worst = fmax(worst, fabs(first[0][i] - first[1][i]));
        printf("  squashed to %g of the height, stretched 10 and 7 times: first step, OpenCL - CPU %.3g m\n", 1e-4 * f, worst);
        ENSURE(worst <= 1e-4);
        free(first[0]), free(first[1]);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "sweep") == 0) {
        sm_backend backend = strcmp(argv[2], "cpu") == 0 ? SM_BACKEND_CPU : SM_BACKEND_OPENCL;
        double worst = sweep(backend, atof(argv[3]), argc >= 5 && strcmp(argv[4], "scale") == 0,
                             argc >= 6 ? atoi(argv[5]) : 10000);
        printf("  worst: %.3f rest radii; undamped, volume preservation, 8-particle clusters %.3f\n", worst, worst_degenerate);
        return sm_test_failures != 0;
    }
    static const sm_test_case tests[] = {
        TEST(sweep_cpu_240),    TEST(sweep_cpu_60),    TEST(sweep_cpu_30),    TEST(sweep_cpu_10),
        TEST(sweep_opencl_240), TEST(sweep_opencl_60), TEST(sweep_opencl_30), TEST(sweep_opencl_10),
        TEST(mirrored_objects_turn_back_within_60_steps), TEST(impact_at_100_m_per_s_stays_above_the_ground),
        TEST(degenerate_clusters_run_without_nan), TEST(motion_far_from_the_origin_matches),
        TEST(crushed_object_recovers), TEST(nearly_flat_clusters_stay_finite),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
