/* Rotation extraction, the symmetric pseudo-inverse and the volume projection (docs/algorithm.md,
 * steps 2 and State; docs/algorithm.md, step 3). */
#include "math3.h"
#include "support.h"

static double orthonormality_error(sm_mat3 r)
{
    return sqrt(m3_norm2(m3_sub(m3_mul(m3_transpose(r), r), m3_identity())));
}

/// R S with S symmetric positive definite has polar rotation R: it must come back.
static void rotation_recovers_polar_factor(void)
{
    rng g = {1};
    double worst = 0.0;
    for (int t = 0; t < 20000; t++) {
        sm_mat3 r = rng_rotation(&g);
        sm_mat3 a = m3_mul(r, rng_stretch(&g, 0.05, 20.0));
        worst = fmax(worst, sqrt(m3_norm2(m3_sub(sm_closest_rotation(a), r))));
    }
    printf("  worst |R - polar factor| over 20,000 trials: %.3g\n", worst);
    ENSURE_SMALL(worst, 1e-12);
}

/// The result maximises trace(R^T A) over proper rotations: no small rotation improves it.
static double trace_product(sm_mat3 r, sm_mat3 a) { return r.m[0][0] * a.m[0][0] + r.m[0][1] * a.m[0][1] + r.m[0][2] * a.m[0][2] +
                                                            r.m[1][0] * a.m[1][0] + r.m[1][1] * a.m[1][1] + r.m[1][2] * a.m[1][2] +
                                                            r.m[2][0] * a.m[2][0] + r.m[2][1] * a.m[2][1] + r.m[2][2] * a.m[2][2]; }

static void inverted_input_gives_proper_rotation(void)
{
    rng g = {2};
    const sm_mat3 mirror = {{{1, 0, 0}, {0, 1, 0}, {0, 0, -1}}};
    double worst_det = 0.0, worst_orth = 0.0, worst_gain = -INFINITY;
    for (int t = 0; t < 20000; t++) {
        // det < 0: a rotation times a reflection times a stretch, or a plain random matrix with det < 0
        sm_mat3 a = (t % 2) ? m3_mul(rng_rotation(&g), m3_mul(mirror, rng_stretch(&g, 0.1, 5.0))) : rng_matrix(&g, 1.0);
        if (m3_det(a) >= 0) a = m3_mul(a, mirror);
        sm_mat3 r = sm_closest_rotation(a);
        worst_det = fmax(worst_det, fabs(m3_det(r) - 1.0));
        worst_orth = fmax(worst_orth, orthonormality_error(r));
        // no rotation nearby does better: perturb by small rotations about random axes
        double best = trace_product(r, a);
        for (int k = 0; k < 8; k++) {
            sm_vec3 axis = rng_in_ball(&g, 1e-3);
            sm_mat3 small = sm_closest_rotation(m3_add(m3_identity(), (sm_mat3){{{0, -axis.z, axis.y}, {axis.z, 0, -axis.x}, {-axis.y, axis.x, 0}}}));
            worst_gain = fmax(worst_gain, trace_product(m3_mul(small, r), a) - best);
        }
    }
    printf("  inverted inputs: worst |det R - 1| %.3g, |R^T R - I| %.3g, best trace gain of a nearby rotation %.3g\n",
           worst_det, worst_orth, worst_gain);
    ENSURE_SMALL(worst_det, 1e-12);
    ENSURE_SMALL(worst_orth, 1e-12);
    ENSURE(worst_gain <= 1e-12);
}

/// Known answer for an inverted input: A = diag(2, 1, -0.5) is closest to R = I among proper
/// rotations (the SVD route gives U diag(1, 1, det(U V^T)) V^T = I), not to the reflection.
static void inverted_diagonal_known_answer(void)
{
    sm_mat3 a = {{{2, 0, 0}, {0, 1, 0}, {0, 0, -0.5}}};
    ENSURE_SMALL(sqrt(m3_norm2(m3_sub(sm_closest_rotation(a), m3_identity()))), 1e-14);
    // diag(-1, -2, 3): the best proper rotation turns by pi about z
    sm_mat3 b = {{{-1, 0, 0}, {0, -2, 0}, {0, 0, 3}}};
    sm_mat3 expected = {{{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}}};
    ENSURE_SMALL(sqrt(m3_norm2(m3_sub(sm_closest_rotation(b), expected))), 1e-14);
}

static bool finite_rotation(sm_mat3 r)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!isfinite(r.m[i][j])) return false;
    return orthonormality_error(r) < 1e-12 && fabs(m3_det(r) - 1.0) < 1e-12;
}

static void degenerate_inputs_give_no_nan(void)
{
    rng g = {3};
    ENSURE(finite_rotation(sm_closest_rotation(m3_zero())));
    for (int t = 0; t < 2000; t++) {
        sm_vec3 u = rng_in_ball(&g, 1.0), v = rng_in_ball(&g, 1.0), w = rng_in_ball(&g, 1.0);
        sm_mat3 rank1 = m3_outer(u, v);
        sm_mat3 rank2 = m3_add(rank1, m3_outer(w, u));
        ENSURE(finite_rotation(sm_closest_rotation(rank1)));
        ENSURE(finite_rotation(sm_closest_rotation(rank2)));
        ENSURE(finite_rotation(sm_closest_rotation(m3_scale(rng_matrix(&g, 1.0), 1e-300))));
        ENSURE(finite_rotation(sm_closest_rotation(m3_scale(rng_matrix(&g, 1.0), 1e-160))));
        ENSURE(finite_rotation(sm_closest_rotation(m3_scale(rng_matrix(&g, 1.0), 1e150))));
    }
    // a rank-one input still gets a rotation that aligns its column direction
    sm_mat3 r = sm_closest_rotation(m3_outer(v3(0, 1, 0), v3(1, 0, 0)));
    ENSURE_SMALL(v3_length(v3_sub(m3_apply(r, v3(1, 0, 0)), v3(0, 1, 0))), 1e-12);
    sm_mat3 nan_input = m3_identity();
    nan_input.m[1][2] = NAN;
    ENSURE(finite_rotation(sm_closest_rotation(nan_input)));
}

/// The four Moore-Penrose conditions, and the rank the threshold keeps.
static void pseudo_inverse_properties(void)
{
    rng g = {4};
    for (int n = 3; n <= 9; n += 6)
        for (int rank = 1; rank <= n; rank++) {
            // B = sum of `rank` random outer products: symmetric positive semi-definite of that rank
            double b[81] = {0}, p[81], bp[81], bpb[81], pbp[81];
            for (int k = 0; k < rank; k++) {
                double u[9];
                for (int i = 0; i < n; i++) u[i] = rng_uniform(&g, -1, 1);
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) b[i * n + j] += u[i] * u[j];
            }
            int kept = sm_sym_pinv(n, b, p);
            ENSURE(kept == rank);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    bp[i * n + j] = 0;
                    for (int k = 0; k < n; k++) bp[i * n + j] += b[i * n + k] * p[k * n + j];
                }
            double e1 = 0, e2 = 0, e3 = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    bpb[i * n + j] = pbp[i * n + j] = 0;
                    for (int k = 0; k < n; k++) {
                        bpb[i * n + j] += bp[i * n + k] * b[k * n + j];
                        pbp[i * n + j] += p[i * n + k] * bp[k * n + j];
                    }
                }
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    e1 = fmax(e1, fabs(bpb[i * n + j] - b[i * n + j]));
                    e2 = fmax(e2, fabs(pbp[i * n + j] - p[i * n + j]) / fmax(1.0, fabs(p[i * n + j])));
                    e3 = fmax(e3, fabs(bp[i * n + j] - bp[j * n + i]));
                }
            ENSURE_SMALL(e1, 1e-9);
            ENSURE_SMALL(e2, 1e-6);
            ENSURE_SMALL(e3, 1e-9);
        }
    // eigenvalues below SM_MOMENT_THRESHOLD (1e-6) of the largest count as zero
    double d[9] = {1, 0, 0, 0, 1e-7, 0, 0, 0, 2e-6}, p[9];
    ENSURE(sm_sym_pinv(3, d, p) == 2);
    ENSURE_SMALL(p[0] - 1.0, 1e-15);
    ENSURE_SMALL(p[4], 0.0);
    ENSURE_SMALL(p[8] - 5e5, 1e-9);
    double z[9] = {0}, pz[9];
    ENSURE(sm_sym_pinv(3, z, pz) == 0);
    double negative[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1}, pn[9];
    ENSURE(sm_sym_pinv(3, negative, pn) == 2);
}

/// Volume preservation (docs/algorithm.md, step 3): A' has determinant 1 and is the nearest
/// such matrix to A in the cluster's mass-weighted metric: no nearby matrix of determinant 1 is
/// closer. Fits from squashed to 1e-4 of the volume up to stretched 125 times, anisotropic
/// clusters (moments spread 100 times), and the Newton steps' bisection fallback among them.
static void volume_projection_is_the_nearest_unit_determinant_fit(void)
{
    rng g = {7};
    double worst_det = 0.0, worst_gain = 0.0;
    for (int t = 0; t < 5000; t++) {
        const sm_mat3 w = rng_stretch(&g, 0.1, 10.0);
        sm_mat3 root, root_inv;
        double axes[3];
        sm_metric_roots(&w.m[0][0], &root, &root_inv, axes);
        const double lo = t % 2 ? 0.02 : 0.5, hi = t % 2 ? 5.0 : 2.0;
        sm_mat3 a = m3_mul(rng_rotation(&g), rng_stretch(&g, lo, hi));
        // a third turned inside out along an axis, and a sixth squashed flat or nearly so (either
        // way through): the nearest fit of determinant 1 turns them the right way out
        if (t % 3 == 1) a = m3_mul(a, (sm_mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, -rng_uniform(&g, 0.0, 1.5)}}});
        if (t % 3 == 2 && t % 2) a = m3_mul(a, (sm_mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, rng_uniform(&g, -1e-6, 1e-6)}}});
        sm_mat3 fit = a;
        ENSURE(sm_volume_projection(&fit, m3_det(a), root, root_inv));
        worst_det = fmax(worst_det, fabs(m3_det(fit) - 1.0));
        const double best = metric_distance(fit, a, w);
        for (int k = 0; k < 20; k++) {
            sm_mat3 x = m3_add(fit, rng_matrix(&g, 1e-3 * sqrt(m3_norm2(fit))));
            const double d = m3_det(x);
            if (!(d > 0.0)) continue;
            x = m3_scale(x, 1.0 / cbrt(d));
            worst_gain = fmax(worst_gain, (best - metric_distance(x, a, w)) / fmax(best, 1e-300));
        }
    }
    printf("  worst |det A' - 1| %.3g; largest relative gain of a nearby unit-determinant matrix %.3g\n", worst_det,
           worst_gain);
    ENSURE_SMALL(worst_det, 1e-12);
    ENSURE(worst_gain <= 1e-9);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(rotation_recovers_polar_factor),
        TEST(inverted_input_gives_proper_rotation),
        TEST(inverted_diagonal_known_answer),
        TEST(degenerate_inputs_give_no_nan),
        TEST(pseudo_inverse_properties),
        TEST(volume_projection_is_the_nearest_unit_determinant_fit),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
