/* The deformation and motion limits and the state check (docs/algorithm.md, steps 2, 3, 4f
 * and 12; "Guarantees": Stable and Guarded), on both backends where they run a world:
 *   - the limits' formulas (kernels/sm_formulas.h) on random input: the stretch limit clamps
 *     singular values and changes nothing inside, the quadratic limit scales the block onto its
 *     bound, the deformation limit of a linear fit is the nearest fit within it in the
 *     cluster's metric, the motion limit never adds speed relative to the goal's motion and
 *     ends within its bound,
 *     the spin limit shortens a flow onto its bound and leaves the rest alone;
 *   - bodies spinning at up to 1,000 radians a step stay whole on both backends;
 *   - the cases that grew without bound before the limits (bench/RESULTS.md, "Stable under
 *     everything") stay within 4 s rest radii and come back to rest shape on both backends;
 *   - the state check stops a run that goes faster than check_speed or stretches beyond
 *     check_extent with SM_ERROR_DIVERGED, and never stops a scene of scenes/. */
#include "math3.h"
#include "support.h"

#include <dirent.h>
#include <stdlib.h>

#ifndef SM_SCENES_DIR
#define SM_SCENES_DIR "scenes"
#endif

/// The singular values of a, largest first.
static void singular_values(sm_mat3 a, double out[3])
{
    const sm_mat3 ata = m3_mul(m3_transpose(a), a);
    double values[3], vectors[9];
    sm_sym_eigen(3, &ata.m[0][0], values, vectors);
    for (int k = 0; k < 3; k++) out[k] = sqrt(fmax(values[k], 0.0));
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (out[j] > out[i]) {
                const double t = out[i];
                out[i] = out[j], out[j] = t;
            }
}

/// A random matrix with singular values exp(U[-range, range]) (some exactly 0 now and then),
/// and a reflection half of the time.
static sm_mat3 random_matrix(rng *r, double range)
{
    sm_mat3 d = m3_zero();
    for (int k = 0; k < 3; k++) d.m[k][k] = rng_uniform(r, 0, 1) < 0.1 ? 0.0 : exp(rng_uniform(r, -range, range));
    if (rng_uniform(r, 0, 1) < 0.5) d.m[2][2] = -d.m[2][2];
    return m3_mul(m3_mul(rng_rotation(r), d), rng_rotation(r));
}

/// sm_limit_stretch on 10,000 random matrices (singular values 1e-3 to 1e3, flat, colinear,
/// reflected) and limits s in [1, 10]: the result's singular values are the input's clamped
/// to [1/s, s] (1e-8 relative), its determinant keeps the input's sign, and a matrix already
/// inside comes back bit for bit.
static void stretch_limit_clamps_singular_values(void)
{
    rng r = {11};
    double worst = 0.0;
    int inside = 0, kept = 0, sign_errors = 0;
    for (int t = 0; t < 10000; t++) {
        const double s = rng_uniform(&r, 0, 1) < 0.1 ? 1.0 : rng_uniform(&r, 1, 10);
        const sm_mat3 a = random_matrix(&r, 7.0);
        sm_mat3 b = a;
        const bool changed = sm_limit_stretch(&b.m[0][0], s);
        double before[3], after[3];
        singular_values(a, before), singular_values(b, after);
        bool within = true;
        for (int k = 0; k < 3; k++) {
            within = within && before[k] > 1 / s && before[k] < s;
            const double expected = fmin(fmax(before[k], 1 / s), s);
            worst = fmax(worst, fabs(after[k] - expected) / expected);
        }
        if (within) {
            inside++;
            kept += !changed && memcmp(&a, &b, sizeof a) == 0;
        }
        // (a singular input has no orientation to keep: either sign)
        const double d = m3_det(a);
        if (fabs(d) > 1e-9 * before[0] * before[0] * before[0] && !(d < 0 ? m3_det(b) < 0 : m3_det(b) > 0)) sign_errors++;
    }
    printf("  worst singular value error %.3g; %d matrices inside the limit, %d of them unchanged; %d orientation errors\n",
           worst, inside, kept, sign_errors);
    ENSURE(worst < 1e-8);
    ENSURE(inside > 50 && kept == inside);
    ENSURE(sign_errors == 0);
}

/// tr(X K X^T) for a 3x6 block X and a symmetric K kept as its upper triangle by rows.
static double quadratic_norm2(const double *x, const double *k)
{
    double full[36], sum = 0.0;
    for (int j = 0, n = 0; j < 6; j++)
        for (int l = j; l < 6; l++, n++) full[j * 6 + l] = full[l * 6 + j] = k[n];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++)
            for (int l = 0; l < 6; l++) sum += x[i * 6 + j] * full[j * 6 + l] * x[i * 6 + l];
    return sum;
}

/// sm_limit_quadratic on 10,000 random blocks, metrics (K = B^T B of rank 1 to 6, entries
/// spread over 1e-6 to 1e6) and limits s in [1, 10]: a block within tr(X K X^T) <= (s - 1)^2 is
/// unchanged bit for bit; a larger one is scaled (the nearest point of a ball of the metric)
/// onto that bound (1e-12).
static void quadratic_limit_bounds_the_block(void)
{
    rng r = {12};
    double worst = 0.0;
    int unchanged = 0, scaled = 0, not_scaled = 0;
    for (int t = 0; t < 10000; t++) {
        double x[18], copy[18], b[36] = {0}, k[21];
        const int rank = 1 + (int)rng_uniform(&r, 0.0, 5.999);
        const double spread = exp(rng_uniform(&r, -7, 7));
        for (int i = 0; i < rank; i++)
            for (int j = 0; j < 6; j++) b[i * 6 + j] = spread * rng_uniform(&r, -1, 1);
        for (int j = 0, n = 0; j < 6; j++)
            for (int l = j; l < 6; l++, n++) {
                k[n] = 0.0;
                for (int i = 0; i < 6; i++) k[n] += b[i * 6 + j] * b[i * 6 + l];
            }
        const double scale = exp(rng_uniform(&r, -5, 5)) / spread;
        const double s = rng_uniform(&r, 0, 1) < 0.1 ? 1.0 : rng_uniform(&r, 1, 10);
        for (int i = 0; i < 18; i++) x[i] = copy[i] = scale * rng_uniform(&r, -1, 1);
        const double before = quadratic_norm2(x, k);
        const bool changed = sm_limit_quadratic(x, k, s);
        if (before <= (s - 1) * (s - 1)) {
            unchanged += !changed && memcmp(x, copy, sizeof x) == 0;
            continue;
        }
        scaled++;
        const double c = x[0] / copy[0];
        for (int i = 0; i < 18; i++) not_scaled += !(fabs(x[i] - c * copy[i]) <= 1e-15 * fabs(copy[i]) && c >= 0.0 && c < 1.0);
        worst = fmax(worst, s > 1 ? fabs(sqrt(quadratic_norm2(x, k)) - (s - 1)) / (s - 1) : sqrt(fabs(quadratic_norm2(x, k))));
    }
    printf("  %d blocks within the bound unchanged, %d scaled onto it (%d entries not a scaling); worst error on the "
           "bound %.3g\n",
           unchanged, scaled, not_scaled, worst);
    ENSURE(unchanged > 100 && scaled > 1000);
    ENSURE(not_scaled == 0);
    ENSURE(worst < 1e-12);
}

/// Whether the fit l is within the deformation limit s of a cluster whose metric has the roots
/// `root` and singular values `axes`: the singular values of l root, largest first, within
/// [axes / s, axes s], up to `slack` of them.
static bool within_limit(sm_mat3 l, sm_mat3 root, const double *axes, double s, double slack)
{
    double sigma[3];
    singular_values(m3_mul(l, root), sigma);
    bool within = true;
    for (int k = 0; k < 3; k++) within = within && sigma[k] >= axes[k] / s * (1 - slack) && sigma[k] <= axes[k] * s * (1 + slack);
    return within;
}

/// The deformation limit of linear fits (step 3, sm_limit_in_metric) on 6,000 random clusters
/// (moments spread up to 100 times) and fits (rotations times stretches of 0.02 to 50), limits s
/// in [1, 10], with volume preservation (the nearest fit of determinant 1 within the limit) and
/// without (the nearest within it): the result is within the limit (1e-9), of determinant 1
/// with volume preservation (1e-9), and no feasible fit near it, nor far from it, is nearer to
/// the fit in the cluster's metric; a fit within the limit comes back bit for bit.
static void deformation_limit_is_the_nearest_fit_in_the_metric(void)
{
    rng g = {17};
    double worst_det = 0.0, worst_gain = 0.0;
    int limited = 0, outside = 0, kept = 0, inside = 0, compared = 0;
    for (int t = 0; t < 6000; t++) {
        const sm_mat3 w = rng_stretch(&g, 0.1, 10.0);
        sm_mat3 root, root_inv;
        double axes[3];
        sm_metric_roots(&w.m[0][0], &root, &root_inv, axes);
        const double s = rng_uniform(&g, 0, 1) < 0.1 ? 1.0 : rng_uniform(&g, 1, 10);
        const bool volume = t % 2;
        const double lo = t % 4 < 2 ? 0.02 : 0.5, hi = t % 4 < 2 ? 50.0 : 2.0;
        const sm_mat3 a = m3_mul(rng_rotation(&g), rng_stretch(&g, lo, hi));
        sm_mat3 l = a;
        if (volume) ENSURE(sm_volume_projection(&l, m3_det(a), root, root_inv));
        const sm_mat3 before = l;
        const bool changed = sm_limit_in_metric(&l.m[0][0], &a.m[0][0], &root.m[0][0], &root_inv.m[0][0], axes, s, volume);
        limited += changed;
        if (!changed) inside++, kept += memcmp(&l, &before, sizeof l) == 0;
        outside += !within_limit(l, root, axes, s, 1e-9);
        if (volume) worst_det = fmax(worst_det, fabs(m3_det(l) - 1.0));
        const double best = metric_distance(l, a, w);
        for (int k = 0; k < 40; k++) {
            const double step = k < 20 ? 1e-3 : k < 30 ? 1e-1 : 1.0;
            sm_mat3 x = m3_add(l, rng_matrix(&g, step * sqrt(m3_norm2(l))));
            if (volume) {
                const double d = m3_det(x);
                if (!(d > 0.0)) continue;
                x = m3_scale(x, 1.0 / cbrt(d));
            }
            if (!within_limit(x, root, axes, s, 0.0)) continue;
            compared++;
            worst_gain = fmax(worst_gain, (best - metric_distance(x, a, w)) / fmax(best, 1e-300));
        }
    }
    printf("  %d of 6000 fits limited, %d beyond the limit after; worst |det - 1| %.3g; %d feasible fits compared, "
           "largest relative gain %.3g; %d of %d within the limit unchanged\n",
           limited, outside, worst_det, compared, worst_gain, kept, inside);
    ENSURE(limited > 1500 && inside > 1000);
    ENSURE(outside == 0);
    ENSURE_SMALL(worst_det, 1e-9);
    ENSURE(compared > 10000);
    ENSURE(worst_gain <= 1e-9);
    ENSURE(kept == inside);
}

/// sm_limit_motion on 100,000 random particles (speeds to 1e4 m/s, goals up to 10 sizes away,
/// steps 1e-4 to 1 s): the move ends within SM_MOTION_DEVIATION sizes of the goal's new place
/// and the velocity relative to the goal's motion moves it at most SM_MOTION_STEP sizes
/// (1e-9 relative), that velocity never grows, and inside both bounds nothing changes.
static void motion_limit_takes_energy_out(void)
{
    rng r = {13};
    int grew = 0, outside = 0, untouched = 0, inside = 0;
    for (int t = 0; t < 100000; t++) {
        const double h = exp(rng_uniform(&r, log(1e-4), 0.0)), size = exp(rng_uniform(&r, -3, 1));
        double v[3], d[3], u[3], m[3], v0[3];
        // half of them near their goals and moving with them, half anywhere
        const bool near = rng_uniform(&r, 0, 1) < 0.5;
        const sm_vec3 uu = rng_in_ball(&r, exp(rng_uniform(&r, -3, log(1e4)))),
                      vv = v3_add(uu, rng_in_ball(&r, near ? 0.5 * size / h : exp(rng_uniform(&r, -3, log(1e4))))),
                      dd = rng_in_ball(&r, near ? 0.5 * size : 10 * size);
        v[0] = v0[0] = vv.x, v[1] = v0[1] = vv.y, v[2] = v0[2] = vv.z;
        d[0] = dd.x, d[1] = dd.y, d[2] = dd.z, u[0] = uu.x, u[1] = uu.y, u[2] = uu.z;
        const bool limited = sm_limit_motion(v, d, u, h, size, m);
        double before = 0.0, after = 0.0, end = 0.0;
        for (int i = 0; i < 3; i++) {
            before += (v0[i] - u[i]) * (v0[i] - u[i]), after += (v[i] - u[i]) * (v[i] - u[i]);
            end += (m[i] - d[i] - h * u[i]) * (m[i] - d[i] - h * u[i]);
        }
        grew += after > before * (1 + 1e-12);
        outside += sqrt(end) > SM_MOTION_DEVIATION * size * (1 + 1e-9) || sqrt(after) * h > SM_MOTION_STEP * size * (1 + 1e-9);
        if (!limited) {
            inside++;
            untouched += v[0] == v0[0] && v[1] == v0[1] && v[2] == v0[2] && m[0] == h * v0[0] && m[1] == h * v0[1] &&
                         m[2] == h * v0[2];
        }
    }
    printf("  %d of 100000 sped up relative to the goal's motion, %d ended beyond the bound; %d untouched of %d inside\n",
           grew, outside, untouched, inside);
    ENSURE(grew == 0 && outside == 0);
    ENSURE(inside > 1000 && untouched == inside);
}

/// The spin limit's formula (step 3a) on random input: a flow relative to its object's ends within
/// SM_SPIN_STEP of the cluster's reach (its distance from the object's centre plus its size) a
/// step, keeps its direction, never grows, and is untouched inside the bound.
static void spin_limit_bounds_flows(void)
{
    rng r = {29};
    int outside = 0, grew = 0, turned = 0, untouched = 0, inside = 0;
    for (int t = 0; t < 100000; t++) {
        const double h = exp(rng_uniform(&r, log(1e-4), 0.0)), size = exp(rng_uniform(&r, -5, 1)),
                     distance = rng_uniform(&r, 0, 1) < 0.1 ? 0.0 : exp(rng_uniform(&r, -5, 3));
        const sm_vec3 v = rng_in_ball(&r, exp(rng_uniform(&r, -3, log(1e4))));
        double rel[3] = {v.x, v.y, v.z};
        const bool limited = sm_limit_spin(rel, distance, size, h);
        const sm_vec3 after = v3(rel[0], rel[1], rel[2]);
        outside += v3_length(after) * h > SM_SPIN_STEP * (distance + size) * (1 + 1e-12);
        grew += v3_length(after) > v3_length(v) * (1 + 1e-12);
        turned += v3_length(v3_cross(after, v)) > 1e-12 * v3_length(after) * v3_length(v) || v3_dot(after, v) < 0.0;
        if (!limited) inside++, untouched += rel[0] == v.x && rel[1] == v.y && rel[2] == v.z;
    }
    printf("  of 100000 flows: %d beyond the bound, %d faster, %d turned; %d untouched of %d inside\n", outside, grew,
           turned, untouched, inside);
    ENSURE(outside == 0 && grew == 0 && turned == 0);
    ENSURE(inside > 1000 && inside < 99000 && untouched == inside);
}

/// "A spinning body stays whole" (the spin limit, step 3a): objects of several overlapping
/// clusters, one body each (dense boxes, tori and capsules in 2 to 3 clusters an axis overlapping
/// by half to a whole cluster, in every mode, alpha 0.05 to 1), set spinning at 0.5 to
/// 1,000 rad/s, for 300 solver steps of 1e-3 to 1 s without gravity, on both backends: drawn so
/// that the turn in a step, omega h, runs from 5e-4 to 1,000 radians. No object's largest
/// distance from its centre of mass ever exceeds 6 times its rest value (the README's Stable
/// bound for the deformation limit 1). Without the limit a torus of 12 clusters at 37 radians a
/// step reached 87 times.
static void fast_spins_keep_bodies_whole(void)
{
    rng r = {2026112701};
    double worst[2] = {0, 0};
    int fast = 0;
    for (int draw = 0; draw < 24; draw++) {
        // dense lattices in 2 to 3 clusters an axis, overlapping by half to a whole cluster, so
        // that neighbouring clusters share whole faces: one body (clusters that share fewer
        // particles hinge or come apart, as separate bodies do)
        const int kind = (int)rng_uniform(&r, 0, 3);
        char shape[256];
        if (kind == 0)
            snprintf(shape, sizeof shape, "\"shape\": \"box\", \"resolution\": [%d, %d, %d]", 6 + (int)rng_uniform(&r, 0, 4),
                     6 + (int)rng_uniform(&r, 0, 4), 6 + (int)rng_uniform(&r, 0, 4));
        else if (kind == 1)
            snprintf(shape, sizeof shape, "\"shape\": \"torus\", \"major_radius\": 0.5, \"minor_radius\": %.6g, \"spacing\": 0.06",
                     rng_uniform(&r, 0.2, 0.3));
        else
            snprintf(shape, sizeof shape, "\"shape\": \"capsule\", \"radius\": 0.25, \"length\": %.6g, \"spacing\": 0.08",
                     rng_uniform(&r, 0.5, 1.5));
        const char *mode = (const char *[]){"rigid", "linear", "quadratic"}[(int)rng_uniform(&r, 0, 3)];
        const double h = exp(rng_uniform(&r, log(1e-3), 0.0)), omega = exp(rng_uniform(&r, log(0.5), log(1000.0)));
        const sm_vec3 axis = v3_scaled_to_one(rng_in_ball(&r, 1.0));
        const double turn = omega / v3_length(axis); // omega about the axis
        fast += omega * h > 1.0;
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"dt\": %.17g, \"gravity\": [0, 0, 0], \"objects\": [{%s, \"mode\": \"%s\", \"alpha\": %.6g, \"beta\": %.6g,"
                 " \"clusters\": {\"grid\": [%d, %d, %d], \"overlap\": %.6g},"
                 " \"angular_velocity\": [%.17g, %.17g, %.17g]}]}",
                 h, shape, mode, rng_uniform(&r, 0.05, 1.0), rng_uniform(&r, 0, 1), 2 + (int)rng_uniform(&r, 0, 2),
                 2 + (int)rng_uniform(&r, 0, 2), 2 + (int)rng_uniform(&r, 0, 2), rng_uniform(&r, 0.5, 1.0),
                 turn * axis.x, turn * axis.y, turn * axis.z);
        for (int b = 0; b < 2; b++) {
            sm_world *world = world_from_json_on(json, b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU);
            if (!world) return;
            const double rest = object_radius(world, 0, true);
            double largest = 0.0;
            for (int step = 1; step <= 300; step++) {
                ENSURE_OK(sm_world_step(world, h, 1));
                largest = fmax(largest, object_radius(world, 0, false) / rest);
            }
            worst[b] = fmax(worst[b], largest);
            if (!(largest <= 6.0))
                printf("  draw %d on %s: %.3g rest radii (%s, omega %.3g rad/s, h %.3g s)\n", draw, b ? "OpenCL" : "the CPU",
                       largest, mode, omega, h);
            ENSURE(largest <= 6.0);
            ENSURE(!world_has_nan(world));
            sm_world_destroy(world);
        }
    }
    printf("  24 draws, %d turning over a radian a step: largest radius %.3g (CPU) and %.3g (OpenCL) rest radii\n", fast,
           worst[0], worst[1]);
    ENSURE(fast >= 8);
}

/// One of the cases that grew without bound before the limits: a scene, and its start (0 at
/// rest, 1 scrambled by 30% of its size, 2 reflected through its centre of mass).
typedef struct unbounded_case {
    const char *name, *json;
    int start;
} unbounded_case;

#define DROP "\"ground\": {\"height\": 0, \"restitution\": 0.3, \"friction\": 0.3}"
static const unbounded_case unbounded_cases[] = {
    {"quadratic, alpha 1, beta 1, volume, 5x5x5 on 2x2x2, dropped 2 m",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 2, 0], \"mode\": \"quadratic\","
     " \"alpha\": 1, \"beta\": 1, \"clusters\": {\"grid\": [2, 2, 2]}}]}", 0},
    {"the same, alpha 0.5",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 2, 0], \"mode\": \"quadratic\","
     " \"alpha\": 0.5, \"beta\": 1, \"clusters\": {\"grid\": [2, 2, 2]}}]}", 0},
    {"linear, beta 1, volume, one cluster, the same drop",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 2, 0], \"mode\": \"linear\","
     " \"alpha\": 1, \"beta\": 1}]}", 0},
    {"linear, beta 1, no volume preservation, alpha 1, one cluster",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 2, 0], \"mode\": \"linear\","
     " \"alpha\": 1, \"beta\": 1, \"volume_preservation\": false}]}", 0},
    {"4x4x4, linear, alpha 1, beta 0.7, (20, -100, 0) m/s into the ground",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"position\": [0, 2, 0], \"mode\": \"linear\", \"alpha\": 1, \"beta\": 0.7,"
     " \"velocity\": [20, -100, 0]}]}", 0},
    {"the same, beta 0.5",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"position\": [0, 2, 0], \"mode\": \"linear\", \"alpha\": 1, \"beta\": 0.5,"
     " \"velocity\": [20, -100, 0]}]}", 0},
    {"torus on 3x1x3, linear, alpha 1, beta 0.9, scrambled by 30%",
     "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"torus\", \"clusters\": {\"grid\": [3, 1, 3]}, \"mode\": \"linear\","
     " \"alpha\": 1, \"beta\": 0.9}]}", 1},
    {"one-cluster box reflected, alpha 1, beta 0.9, volume",
     "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"mode\": \"linear\", \"alpha\": 1, \"beta\": 0.9}]}", 2},
    {"plasticity, creep 1e6",
     "{" DROP ", \"objects\": [{\"shape\": \"box\", \"resolution\": [5, 5, 5], \"position\": [0, 2, 0], \"mode\": \"linear\","
     " \"plasticity\": {\"creep\": 1e6}}]}", 0},
};

/// Each case above for 3,000 steps at 1/60 s on both backends: within 4 s = 8 rest radii at
/// every tenth step (times the plastic stretch, 2 at most), then left alone with the default
/// stiffness and a tenth of the velocity damped each step for 600 steps: back within 1.1 rest
/// radii (times the plastic stretch) on both.
static void unbounded_cases_are_bounded_and_settle(void)
{
    for (size_t c = 0; c < sizeof unbounded_cases / sizeof unbounded_cases[0]; c++) {
        const unbounded_case *u = &unbounded_cases[c];
        double worst[2] = {0, 0}, settled[2] = {0, 0};
        for (int b = 0; b < 2; b++) {
            sm_world *world = world_from_json_on(u->json, b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU);
            if (!world) return;
            const int32_t n = sm_world_get_counts(world).particles;
            rng r = {7};
            if (u->start == 1) scramble(world, 0, 0.3, &r);
            if (u->start == 2) {
                double *x = get_positions(world), centre[3] = {0, 0, 0};
                for (int32_t i = 0; i < n; i++)
                    for (int k = 0; k < 3; k++) centre[k] += x[3 * i + k] / n;
                for (int32_t i = 0; i < n; i++)
                    for (int k = 0; k < 3; k++) x[3 * i + k] = 2 * centre[k] - x[3 * i + k];
                ENSURE_OK(sm_world_set_positions(world, 0, n, x));
                free(x);
            }
            const double rest = object_radius(world, 0, true);
            for (int step = 1; step <= 3000; step++) {
                ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
                if (step % 10 == 0) worst[b] = fmax(worst[b], object_radius(world, 0, false) / rest);
            }
            sm_object_params p;
            ENSURE_OK(sm_world_get_object_params(world, 0, &p));
            p.alpha = 0.5, p.beta = fmin(p.beta, 0.5), p.damping = 0.1 * 60.0, p.plasticity.enabled = false;
            ENSURE_OK(sm_world_set_object_params(world, 0, &p));
            for (int step = 0; step < 600; step++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            double stretch = 1.0;
            for (int32_t k = 0; k < sm_world_get_counts(world).clusters; k++) {
                sm_cluster_info info;
                ENSURE_OK(sm_world_get_cluster(world, k, &info));
                double values[3];
                singular_values(info.plastic, values);
                stretch = fmax(stretch, values[0]);
            }
            settled[b] = object_radius(world, 0, false) / (rest * stretch);
            ENSURE(!world_has_nan(world));
            ENSURE(worst[b] <= 8.0 * stretch);
            ENSURE(settled[b] <= 1.1);
            sm_world_destroy(world);
        }
        printf("  %-68s largest radius %.3g / %.3g, settled %.3g / %.3g (CPU / OpenCL)\n", u->name, worst[0], worst[1],
               settled[0], settled[1]);
    }
}

/// The state check stops a diverging run with SM_ERROR_DIVERGED on both backends: a box pushed
/// by 1e9 N goes faster than check_speed (1e5 m/s) and is stopped at the first check after
/// that (check_interval 5), the message naming the particle, its object and its speed; a box
/// pinned by a fixed particle and pulled by 1e6 N is stretched beyond check_extent (10) times
/// its strain limit times its size, and the message names the cluster; check_extent and
/// check_speed 0 turn the checks off, and bad values are refused.
static void state_check_stops_divergence(void)
{
    for (int b = 0; b < 2; b++) {
        const sm_backend backend = b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU;
        for (int kind = 0; kind < 2; kind++) {
            for (int off = 0; off < 2; off++) {
                sm_scene *scene = NULL;
                const char *json = kind == 0
                                       ? "{\"gravity\": [0, 0, 0], \"objects\": [{\"name\": \"rocket\", \"shape\": \"box\","
                                         " \"force\": [1e9, 0, 0]}]}"
                                       : "{\"gravity\": [0, 0, 0], \"objects\": [{\"name\": \"pinned\", \"shape\": \"box\","
                                         " \"fixed\": [0], \"force\": [1e6, 0, 0]}]}";
                ENSURE_OK(sm_scene_load_string(json, "divergence", &scene));
                sm_world_def def = sm_scene_world_def(scene);
                def.backend = backend;
                def.check_interval = 5;
                if (off) def.check_speed = 0.0, def.check_extent = 0.0;
                sm_world *world = NULL;
                ENSURE_OK(sm_scene_create_world(scene, &def, &world));
                sm_result r = SM_OK;
                int step = 0;
                while (step < 400 && r == SM_OK) r = sm_world_step(world, 1.0 / 60.0, 1), step++;
                if (off) {
                    ENSURE(r == SM_OK);
                } else {
                    printf("  %s, %s: stopped at step %d: %s\n", b ? "OpenCL" : "CPU", kind ? "pinned" : "rocket", step,
                           sm_last_error());
                    ENSURE(r == SM_ERROR_DIVERGED);
                    ENSURE(step % 5 == 0 && step <= 300);
                    ENSURE(strstr(sm_last_error(), kind ? "pinned" : "rocket") != NULL);
                    ENSURE(strstr(sm_last_error(), kind ? "check_extent" : "check_speed") != NULL);
                }
                sm_world_destroy(world);
                sm_scene_destroy(scene);
            }
        }
    }
    sm_world_def bad = sm_world_def_default();
    bad.backend = SM_BACKEND_CPU;
    bad.check_extent = -1.0;
    sm_world *world = NULL;
    ENSURE(sm_world_create(&bad, &world) == SM_ERROR_INVALID_ARGUMENT && !world);
    bad.check_extent = 10.0, bad.check_speed = NAN;
    ENSURE(sm_world_create(&bad, &world) == SM_ERROR_INVALID_ARGUMENT && !world);
}

/// The world of `scene` on `backend`, its state checked every `interval` steps (NULL, counted as
/// a failure, where it cannot be made).
static sm_world *checked_world(const sm_scene *scene, sm_backend backend, int32_t interval)
{
    sm_world_def def = sm_scene_world_def(scene);
    def.backend = backend;
    def.check_interval = interval;
    sm_world *world = NULL;
    ENSURE_OK(sm_scene_create_world(scene, &def, &world));
    return world;
}

/// The state check never stops a world that does not diverge, whatever its clusters: objects of
/// points drawn at random (seeded) of every degenerate kind, one particle, particles at one
/// point, colinear and flat sets, and a general cloud, in every mode, at rest or thrown onto a
/// ground, anywhere within 1,000 m of the origin, checked every step for 120 steps on both
/// backends. (A cluster of one particle or of particles at one point has no size: the check
/// measures its particles' distances from its centre from one of them, so they are 0 there.)
static void state_check_passes_degenerate_clusters(void)
{
    static const char *const kinds[] = {"one particle", "particles at one point", "colinear", "flat", "a cloud"};
    static const char *const modes[] = {"rigid", "linear", "quadratic"};
    for (int b = 0; b < 2; b++) {
        const sm_backend backend = b ? SM_BACKEND_OPENCL : SM_BACKEND_CPU;
        rng r = {2026};
        for (int draw = 0; draw < 15; draw++) {
            const int kind = draw % 5;
            const int count = kind == 0 ? 1 : kind == 1 ? 2 + (int)rng_uniform(&r, 0, 7) : 4 + (int)rng_uniform(&r, 0, 9);
            const sm_vec3 u = rng_in_ball(&r, 1.0), w = rng_in_ball(&r, 1.0);
            char points[2048] = "", *at = points;
            for (int k = 0; k < count; k++) {
                const double s = kind <= 1 ? 0.0 : rng_uniform(&r, -0.5, 0.5), t = kind <= 2 ? 0.0 : rng_uniform(&r, -0.5, 0.5);
                const sm_vec3 q = kind == 4 ? rng_in_ball(&r, 0.5) : (sm_vec3){s * u.x + t * w.x, s * u.y + t * w.y, s * u.z + t * w.z};
                at += snprintf(at, sizeof points - (size_t)(at - points), "%s[%.17g, %.17g, %.17g]", k ? ", " : "", q.x, q.y, q.z);
            }
            const sm_vec3 p = {rng_uniform(&r, -1000, 1000), rng_uniform(&r, -1000, 1000), rng_uniform(&r, -1000, 1000)};
            const sm_vec3 v = rng_in_ball(&r, 5.0);
            char json[4096];
            snprintf(json, sizeof json,
                     "{\"ground\": {\"height\": %.17g}, \"objects\": [{\"shape\": \"points\", \"points\": [%s],"
                     " \"position\": [%.17g, %.17g, %.17g], \"velocity\": [%.17g, %.17g, %.17g], \"mode\": \"%s\"}]}",
                     p.y - 1.0, points, p.x, p.y, p.z, v.x, v.y, v.z, modes[draw % 3]);
            sm_scene *scene = NULL;
            ENSURE_OK(sm_scene_load_string(json, "degenerate", &scene));
            if (!scene) return;
            sm_world *world = checked_world(scene, backend, 1);
            sm_result result = world ? SM_OK : SM_ERROR_INVALID_ARGUMENT;
            int step = 0;
            while (step < 120 && result == SM_OK) result = sm_world_step(world, 1.0 / 60.0, 1), step++;
            if (result != SM_OK)
                fprintf(stderr, "  %s, %s of %d (%s) at (%.0f, %.0f, %.0f): step %d: %s\n", b ? "OpenCL" : "CPU", kinds[kind],
                        count, modes[draw % 3], p.x, p.y, p.z, step, sm_last_error());
            ENSURE(result == SM_OK);
            sm_world_destroy(world);
            sm_scene_destroy(scene);
        }
        printf("  %s: 15 objects of points (%s, ...), 120 checked steps each\n", b ? "OpenCL" : "CPU", kinds[0]);
    }
}

/// Runs one scene of `folder` for its whole length on `backend` with the state check every 10
/// steps; on the CPU reference only scenes of up to 1,500 particles (the others take minutes).
static void run_scene_checked(const char *folder, const char *file, sm_backend backend, int *ran)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_file(path, &scene));
    if (!scene) return;
    sm_world *world = checked_world(scene, backend, 10);
    if (world && backend == SM_BACKEND_CPU && sm_world_get_counts(world).particles > 1500) {
        sm_world_destroy(world);
        sm_scene_destroy(scene);
        return;
    }
    const sm_scene_info info = sm_scene_get_info(scene);
    sm_result r = SM_OK;
    for (int64_t step = 0; step < info.steps && r == SM_OK && world; step++) {
        r = sm_scene_step(scene, world);
        if (r != SM_OK) fprintf(stderr, "%s: %s\n", path, sm_last_error());
    }
    ENSURE(r == SM_OK);
    (*ran)++;
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// The state check, with its default bounds, never stops a scene of scenes/ or scenes/paper/,
/// each run for its length on OpenCL, and on the CPU reference where it has up to 1,500
/// particles; but for scenes/paper/fig9_massive.json, paper384's objects
/// with skinned surfaces (the state check reads particles and clusters alone): the same run as
/// scenes/paper384.json, which is run.
static void state_check_never_fires_on_the_scenes(void)
{
    const char *folders[] = {SM_SCENES_DIR, SM_SCENES_DIR "/paper"};
    int ran = 0, ran_cpu = 0;
    for (int f = 0; f < 2; f++) {
        DIR *dir = opendir(folders[f]);
        ENSURE(dir != NULL);
        if (!dir) continue;
        for (struct dirent *e; (e = readdir(dir)) != NULL;) {
            const size_t length = strlen(e->d_name);
            if (length > 5 && strcmp(e->d_name + length - 5, ".json") == 0 && strcmp(e->d_name, "fig9_massive.json") != 0) {
                run_scene_checked(folders[f], e->d_name, SM_BACKEND_OPENCL, &ran);
                run_scene_checked(folders[f], e->d_name, SM_BACKEND_CPU, &ran_cpu);
            }
        }
        closedir(dir);
    }
    printf("  %d scenes ran to their end without a stop on OpenCL, %d on the CPU reference\n", ran, ran_cpu);
    ENSURE(ran >= 15 && ran_cpu >= 12);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(stretch_limit_clamps_singular_values), TEST(quadratic_limit_bounds_the_block),
        TEST(deformation_limit_is_the_nearest_fit_in_the_metric),
        TEST(motion_limit_takes_energy_out),        TEST(spin_limit_bounds_flows),
        TEST(fast_spins_keep_bodies_whole),         TEST(unbounded_cases_are_bounded_and_settle),
        TEST(state_check_stops_divergence),         TEST(state_check_passes_degenerate_clusters),
        TEST(state_check_never_fires_on_the_scenes),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
