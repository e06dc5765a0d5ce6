/* Formulas of the time step written once for both backends: compiled as C17 by the CPU
 * reference, where sm_scalar is double, and as OpenCL C 1.2 by the kernels, where it is float.
 * Matrices are row-major arrays (3x3: 9 entries). Only what the two sides compute the same way
 * lives here; each side keeps its own loads and stores. */
#ifndef SM_FORMULAS_H
#define SM_FORMULAS_H

#include "sm_shared.h"

#ifdef __OPENCL_VERSION__
typedef float sm_scalar;
#define SM_FORMULA inline
#define SM_SCALAR_EPSILON FLT_EPSILON
#else
#include <float.h>
#include <math.h>
#include <stdbool.h>
typedef double sm_scalar;
#define SM_FORMULA static inline
#define SM_SCALAR_EPSILON DBL_EPSILON
#endif

/* Cyclic Jacobi eigen-decomposition of the symmetric n x n matrix a (n <= 9, overwritten):
 * values get the eigenvalues, the columns of vectors the eigenvectors. It works on a / max|a|,
 * so that the squared entries of the stop test neither underflow nor overflow; each rotation
 * zeroes one off-diagonal pair, and convergence is quadratic, so a handful of sweeps reach
 * round-off (the sweep bound only guards against NaN input). A macro, so that the kernels can
 * also have it in double for the rest-data refresh (kernels/sm_math.h). */
#define SM_DEFINE_SYM_EIGEN(NAME, T, EPSILON)                                                            \
    SM_FORMULA void NAME(int n, T *a, T *values, T *vectors)                                             \
    {                                                                                                    \
        T scale = 0;                                                                                     \
        for (int i = 0; i < n * n; i++) scale = fmax(scale, fabs(a[i]));                                 \
        if (!(scale > 0) || !isfinite(scale)) scale = 1;                                                 \
        for (int i = 0; i < n * n; i++) a[i] /= scale;                                                   \
        for (int i = 0; i < n; i++)                                                                      \
            for (int j = 0; j < n; j++) vectors[i * n + j] = (i == j) ? 1 : 0;                           \
        for (int sweep = 0; sweep < 32; sweep++) {                                                       \
            T off = 0, total = 0;                                                                        \
            for (int i = 0; i < n; i++)                                                                  \
                for (int j = 0; j < n; j++) {                                                            \
                    T e = a[i * n + j] * a[i * n + j];                                                   \
                    total += e;                                                                          \
                    if (i != j) off += e;                                                                \
                }                                                                                        \
            if (!(off > EPSILON * EPSILON * total)) break;                                               \
            for (int p = 0; p < n - 1; p++)                                                              \
                for (int q = p + 1; q < n; q++) {                                                        \
                    T apq = a[p * n + q];                                                                \
                    if (apq == 0) continue;                                                              \
                    T theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);                                 \
                    T t = (theta >= 0 ? (T)1 : (T)-1) / (fabs(theta) + sqrt(theta * theta + 1));          \
                    T c = 1 / sqrt(t * t + 1), s = t * c;                                                \
                    for (int k = 0; k < n; k++) {                                                        \
                        T akp = a[k * n + p], akq = a[k * n + q];                                        \
                        a[k * n + p] = c * akp - s * akq;                                                \
                        a[k * n + q] = s * akp + c * akq;                                                \
                    }                                                                                    \
                    for (int k = 0; k < n; k++) {                                                        \
                        T apk = a[p * n + k], aqk = a[q * n + k];                                        \
                        a[p * n + k] = c * apk - s * aqk;                                                \
                        a[q * n + k] = s * apk + c * aqk;                                                \
                    }                                                                                    \
                    a[p * n + q] = a[q * n + p] = 0;                                                     \
                    for (int k = 0; k < n; k++) {                                                        \
                        T vkp = vectors[k * n + p], vkq = vectors[k * n + q];                            \
                        vectors[k * n + p] = c * vkp - s * vkq;                                          \
                        vectors[k * n + q] = s * vkp + c * vkq;                                          \
                    }                                                                                    \
                }                                                                                        \
        }                                                                                                \
        for (int i = 0; i < n; i++) values[i] = a[i * n + i] * scale;                                    \
    }

SM_DEFINE_SYM_EIGEN(sm_sym_eigen_s, sm_scalar, SM_SCALAR_EPSILON)

/* ---- 3x3 products (row-major) ----------------------------------------------------------------- */

/// out = a b
SM_FORMULA void sm_mul3(const sm_scalar *a, const sm_scalar *b, sm_scalar *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i * 3 + j] = a[i * 3 + 0] * b[0 * 3 + j] + a[i * 3 + 1] * b[1 * 3 + j] + a[i * 3 + 2] * b[2 * 3 + j];
}

/// out = a^T b
SM_FORMULA void sm_mul3_tn(const sm_scalar *a, const sm_scalar *b, sm_scalar *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i * 3 + j] = a[0 * 3 + i] * b[0 * 3 + j] + a[1 * 3 + i] * b[1 * 3 + j] + a[2 * 3 + i] * b[2 * 3 + j];
}

/// det a
SM_FORMULA sm_scalar sm_det3(const sm_scalar *a)
{
    return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
}

/* ---- Inverted clusters (the time step, step 2) ---------------------------------------------- */

/// Whether a cluster's match is inverted, so that it keeps its previous rotation r0: when
/// det(A_pq A_qq + r0 (I - span)) is below -SM_INVERTED_VOLUME. A cluster whose rest shape spans
/// all three directions (`span` I) has det(A_pq A_qq); a flat or colinear cluster's match has
/// determinant 0, and it is completed in the missing rest directions by r0 first: the cluster is
/// inverted when it was turned over within its plane (or along its line) relative to r0. The
/// determinant is of the product, whose entries are about 1: det A_pq det A_qq, equal in exact
/// arithmetic, takes the determinant of A_qq's entries of about 1 / (M s^2) for the thinnest
/// extent s, which float rounds to nothing (for a cluster 0.3% as thick as wide it was wrong in
/// sign on the device, which kept the last rotation).
SM_FORMULA bool sm_match_inverted(const sm_scalar *apq, const sm_scalar *aqq, const sm_scalar *span, const sm_scalar *r0)
{
    sm_scalar m[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            sm_scalar e = 0;
            for (int k = 0; k < 3; k++) e += apq[i * 3 + k] * aqq[k * 3 + j] + r0[i * 3 + k] * ((k == j ? 1 : 0) - span[k * 3 + j]);
            m[i * 3 + j] = e;
        }
    const sm_scalar det = sm_det3(m);
    return det < -SM_INVERTED_VOLUME;
}

/// Whether a cluster's rest shape spans all three directions (`span`, A_qq W, is I: the rest data
/// stores it exactly so then), so that its linear fit A_pq A_qq can have a volume. A flat or
/// colinear cluster's fit has rank below 3 and determinant 0 in exact arithmetic: its volume
/// treatment (step 3) takes R. Its computed determinant is rounding only (1e-14 in double, up to
/// 1e-5 in float, past SM_K_DET_MIN), so both backends take 0 for it instead: the device
/// projected such fits onto determinant 1, a cluster 1e-4 as thick as wide stepping 3% of the
/// scene's diagonal from the reference (test_opencl's single_steps_agree_for_clusters_of_any_shape).
SM_FORMULA bool sm_spans_volume(const sm_scalar *span)
{
    for (int i = 0; i < 9; i++)
        if (span[i] != (i % 4 == 0 ? 1 : 0)) return false;
    return true;
}

/* ---- The deformation limit (the time step, step 3) ------------------------------------------ */

/// Whether every eigenvalue of the symmetric 3x3 c lies strictly between lo2 and hi2: both
/// hi2 I - c and c - lo2 I are positive definite (all leading principal minors positive).
SM_FORMULA bool sm_eigenvalues_within(const sm_scalar *c, sm_scalar lo2, sm_scalar hi2)
{
    for (int side = 0; side < 2; side++) {
        const sm_scalar sign = side == 0 ? -1 : 1, shift = side == 0 ? hi2 : -lo2;
        sm_scalar m[9];
        for (int i = 0; i < 9; i++) m[i] = sign * c[i];
        for (int i = 0; i < 3; i++) m[i * 4] += shift;
        const sm_scalar minor2 = m[0] * m[4] - m[1] * m[3];
        const sm_scalar det = sm_det3(m);
        if (!(m[0] > 0) || !(minor2 > 0) || !(det > 0)) return false;
    }
    return true;
}

/// A unit vector perpendicular to the unit vector u.
SM_FORMULA void sm_perpendicular(const sm_scalar *u, sm_scalar *out)
{
    // cross u with the axis it is least aligned with
    const int axis = fabs(u[0]) <= fabs(u[1]) && fabs(u[0]) <= fabs(u[2]) ? 0 : fabs(u[1]) <= fabs(u[2]) ? 1 : 2;
    sm_scalar e[3] = {0, 0, 0};
    e[axis] = 1;
    out[0] = u[1] * e[2] - u[2] * e[1], out[1] = u[2] * e[0] - u[0] * e[2], out[2] = u[0] * e[1] - u[1] * e[0];
    const sm_scalar n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    for (int i = 0; i < 3; i++) out[i] /= n;
}

/// The singular frame of the 3x3 matrix l = U diag(sigma) V^T, largest first: V and sigma^2
/// from the eigenproblem of l^T l, the smallest sigma from |det l| / (sigma_1 sigma_2) (rounding
/// wipes out the smallest eigenvalue), U by Gram-Schmidt from l V with its third column the cross
/// product of the first two, signed so that det U det V takes the sign of det l (+ when 0): a flat
/// or colinear l, whose sigma are 0, gets a direction for each, and an inverted one stays
/// inverted. u and vk get the singular vectors as rows. False when l is 0 or not finite, which
/// has no direction to keep. `c` is l^T l, which it overwrites.
SM_FORMULA bool sm_singular_frame(const sm_scalar *l, sm_scalar *c, sm_scalar *sigma, sm_scalar *u, sm_scalar *vk)
{
    const sm_scalar det = sm_det3(l);
    sm_scalar values[3], v[9];
    sm_sym_eigen_s(3, c, values, v);
    // k[0] the largest singular value's column of v, k[2] the smallest's
    int k[3] = {0, 1, 2};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2 - a; b++)
            if (values[k[b]] < values[k[b + 1]]) {
                const int t = k[b];
                k[b] = k[b + 1], k[b + 1] = t;
            }
    for (int i = 0; i < 9; i++) u[i] = 0;
    for (int n = 0; n < 3; n++)
        for (int i = 0; i < 3; i++) vk[n * 3 + i] = v[i * 3 + k[n]];
    sigma[0] = sqrt(fmax(values[k[0]], (sm_scalar)0)), sigma[1] = sqrt(fmax(values[k[1]], (sm_scalar)0));
    sigma[2] = sigma[0] * sigma[1] > 0 ? fabs(det) / (sigma[0] * sigma[1]) : 0;
    sigma[2] = fmin(sigma[2], sigma[1]);
    if (!(sigma[0] > 0) || !isfinite(sigma[0])) return false;
    const sm_scalar tiny = sigma[0] * 16 * SM_SCALAR_EPSILON;
    sm_scalar w[3];
    for (int n = 0; n < 2; n++) {
        for (int i = 0; i < 3; i++) w[i] = l[i * 3 + 0] * vk[n * 3 + 0] + l[i * 3 + 1] * vk[n * 3 + 1] + l[i * 3 + 2] * vk[n * 3 + 2];
        if (n == 1) {
            const sm_scalar d = w[0] * u[0] + w[1] * u[1] + w[2] * u[2];
            for (int i = 0; i < 3; i++) w[i] -= d * u[i];
        }
        const sm_scalar norm = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        if (norm > tiny) {
            for (int i = 0; i < 3; i++) u[n * 3 + i] = w[i] / norm;
        } else {
            sm_perpendicular(u, &u[3]); // only reached for n = 1: the first column has sigma_0 > tiny
        }
    }
    // the third column keeps the orientation: det U det V takes the sign of det l (+ when 0)
    const sm_scalar det_v = sm_det3(vk);
    const sm_scalar orient = (det < 0 ? -1 : 1) * (det_v < 0 ? -1 : 1);
    u[6] = orient * (u[1] * u[5] - u[2] * u[4]);
    u[7] = orient * (u[2] * u[3] - u[0] * u[5]);
    u[8] = orient * (u[0] * u[4] - u[1] * u[3]);
    return true;
}

/// l = sum_k u_k t_k v_k^T: a matrix from its singular frame (sm_singular_frame) and the singular
/// values t.
SM_FORMULA void sm_from_frame(const sm_scalar *u, const sm_scalar *t, const sm_scalar *vk, sm_scalar *l)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            sm_scalar e = 0;
            for (int n = 0; n < 3; n++) e += u[n * 3 + i] * t[n] * vk[n * 3 + j];
            l[i * 3 + j] = e;
        }
}

/// Limits the stretch of the 3x3 matrix l (in place): its singular values are clamped to
/// [1 / s, s] (s >= 1), its singular vectors kept (sm_singular_frame), and an l with det l < 0
/// stays inverted. Returns false, leaving l bit for bit as it was, when every singular value
/// already lies strictly inside. An l of 0 (or not finite), with no direction to keep, becomes
/// the smallest uniform scale.
SM_FORMULA bool sm_limit_stretch(sm_scalar *l, sm_scalar s)
{
    sm_scalar c[9];
    sm_mul3_tn(l, l, c);
    const sm_scalar lo = 1 / s, hi = s;
    if (sm_eigenvalues_within(c, lo * lo, hi * hi)) return false;
    sm_scalar sigma[3], u[9], vk[9];
    if (!sm_singular_frame(l, c, sigma, u, vk)) {
        for (int i = 0; i < 9; i++) l[i] = (i % 4 == 0) ? lo : 0;
        return true;
    }
    for (int n = 0; n < 3; n++) sigma[n] = fmin(fmax(sigma[n], lo), hi);
    sm_from_frame(u, sigma, vk, l);
    return true;
}

/// The state check's stretch test (check_extent, docs/algorithm.md step 10): whether a cluster
/// whose farthest particle lies `farthest` from its centre of mass is stretched beyond `extent`
/// times its object's strain limit times its size, `size` its largest rest offset, with an
/// allowance of SM_K_CHECK_ROUNDING times the magnitude of the cluster's positions (`anchor`, one
/// of them) for their rounding: a cluster without size (one particle, or particles at one point)
/// is stretched only when its particles part. NaN is stretched.
SM_FORMULA bool sm_cluster_stretched(sm_scalar farthest, sm_scalar extent, sm_scalar strain_limit, sm_scalar size,
                                     const sm_scalar *anchor)
{
    const sm_scalar magnitude = fabs(anchor[0]) + fabs(anchor[1]) + fabs(anchor[2]);
    return !(farthest <= extent * strain_limit * size + SM_K_CHECK_ROUNDING * magnitude);
}

/// The motion limit (step 4f) of a particle whose goal lies at d (g - x) from it and moves at u in
/// the step (its clusters' mean velocity, with its own acceleration and damping), `size` the mean
/// size of its clusters (their largest rest offsets). Two bounds (SM_MOTION_STEP and
/// SM_MOTION_DEVIATION sizes, both 1), which normal motion stays far below; each takes energy
/// out of the motion it stops and never puts any in:
///   - its velocity relative to u moves it at most SM_MOTION_STEP sizes in the step (v - u is
///     shortened): faster, a cluster turns by more than a radian a step, which no fit can
///     follow, and the goals of a cluster torn through itself by such motion jump in ways that
///     feed it;
///   - its move m = h v ends at most SM_MOTION_DEVIATION sizes from where its goal goes,
///     x + d + h u: when m - (d + h u) is longer, m is shortened onto that sphere. v is left as
///     the first bound made it: taking away only the part of v - u that points out of the
///     sphere, as a one-sided contact would, took momentum in one direction more than the
///     other, and a cluster held at the sphere step after step drove itself on (a scrambled
///     sphere of 27 particles at alpha 1 reached 640 m/s in 10 s of free flight).
/// m gets the move; true when either bound acted.
SM_FORMULA bool sm_limit_motion(sm_scalar *v, const sm_scalar *d, const sm_scalar *u, sm_scalar h, sm_scalar size,
                                sm_scalar *m)
{
    bool limited = false;
    const sm_scalar step_bound = SM_MOTION_STEP * size, bound = SM_MOTION_DEVIATION * size;
    sm_scalar w[3] = {v[0] - u[0], v[1] - u[1], v[2] - u[2]};
    const sm_scalar reach = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * h;
    if (reach > step_bound) {
        const sm_scalar scale = reach < INFINITY ? step_bound / reach : 0;
        for (int i = 0; i < 3; i++) v[i] = u[i] + w[i] * scale;
        limited = true;
    }
    sm_scalar e[3];
    for (int i = 0; i < 3; i++) m[i] = h * v[i], e[i] = m[i] - (d[i] + h * u[i]);
    const sm_scalar e2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
    if (!(e2 > bound * bound)) return limited;
    const sm_scalar length = sqrt(e2);
    if (!(length < INFINITY)) {
        // nothing finite to keep: onto the goal's path, moving with it
        for (int i = 0; i < 3; i++) m[i] = d[i] + h * u[i], v[i] = u[i];
        return true;
    }
    for (int i = 0; i < 3; i++) m[i] = d[i] + h * u[i] + bound * (e[i] / length);
    return true;
}

/// An object's stiffness in a step of h (step 4c): its alpha, or with a time constant tau > 0,
/// min(1, h / tau).
SM_FORMULA sm_scalar sm_step_alpha(sm_scalar alpha, sm_scalar tau, sm_scalar h)
{
    return tau > 0 ? (h / tau < 1 ? h / tau : (sm_scalar)1) : alpha;
}

/// A spring's share of the way (step 4d's targets; a scene's springs): a spring of stiffness k
/// and damping c pulling a particle of inverse mass w toward t changes its velocity v over a step
/// h by share x (k (t - x) / (c + h k) - v), with share = s / (1 + s), s = h w (c + h k). That
/// is backward Euler's pull, [k (t - x) - (c + h k) v] h w / (1 + s): on a free particle it
/// never adds energy, at any stiffness and step, where the explicit force k (t - x) flings the
/// particle further every step once h^2 k w passes about 4. It tends to the explicit pull as s
/// goes to 0, and to a pin's (onto t in the step) as k grows. Written to stay finite in float
/// for s up to infinity (k up to FLT_MAX, w up to 1e30).
SM_FORMULA sm_scalar sm_spring_share(sm_scalar k, sm_scalar c, sm_scalar h, sm_scalar w)
{
    const sm_scalar s = h * w * (c + h * k);
    return s < 1 ? s / (1 + s) : 1 / (1 + 1 / s);
}

/// The spin limit (step 3a): the flow of a cluster relative to its object's, `relative` (v_cm - v_o),
/// moves it at most SM_SPIN_STEP of its reach, `distance` (|x_cm - x_o|) plus its size, in a
/// step h: a quarter radian of a turn about the object's centre. A body spinning faster than
/// about a radian a step cannot be followed by shape matching, which moves particles along
/// straight lines: its clusters fly apart along their tangents (a torus of 12 clusters at 37
/// radians a step reached 87 times its radius before it came back). Shortens `relative` onto
/// the bound and returns true when it was beyond it.
SM_FORMULA bool sm_limit_spin(sm_scalar *relative, sm_scalar distance, sm_scalar size, sm_scalar h)
{
    const sm_scalar most = SM_SPIN_STEP * (distance + size);
    const sm_scalar length = h * sqrt(relative[0] * relative[0] + relative[1] * relative[1] + relative[2] * relative[2]);
    if (!(length > most)) return false;
    const sm_scalar scale = most / length;
    for (int a = 0; a < 3; a++) relative[a] *= scale;
    return true;
}

/// Friction on the ground and the colliders (steps 7 and 7a): the share of a particle's sliding
/// speed `slide` (its velocity across the solid's normal, relative to the solid) that the solid
/// takes in a step. `friction`, but, as Coulomb's law has it, no more speed than `friction` times
/// the normal speed the contact took away in the step (`pressed`, 0 where the particle was not
/// moving in): a particle that only grazes the solid feels as little friction as it is pressed,
/// so that friction does not switch on whole where rounding alone puts a particle just inside.
/// And the friction limit: no more speed than its shape matching gives back in a step to a
/// particle one size from its goal, alpha size / h (alpha its object's stiffness this step,
/// `size` the mean size of its clusters, as in the motion limit; a particle without size is not
/// limited). Friction holds the particles that touch back from the others by up to
/// friction x slide x h a step: unlimited, that is many sizes at long steps and high speeds, and
/// more than the shape matching brings back at any speed where alpha is small, so that it pulls
/// the clusters of a body apart; limited, it holds a particle at most about one size from its
/// goal.
SM_FORMULA sm_scalar sm_friction_share(sm_scalar friction, sm_scalar slide, sm_scalar pressed, sm_scalar alpha,
                                       sm_scalar size, sm_scalar h)
{
    if (!(slide > 0)) return 0;
    sm_scalar share = friction;
    if (slide > pressed) share = friction * (pressed > 0 ? pressed : 0) / slide;
    const sm_scalar most = SM_MOTION_STEP * alpha * size / h;
    return size > 0 && share * slide > most ? most / slide : share;
}

/// The deformation limit of a quadratic goal's own part (docs/algorithm.md, step 3). A quadratic
/// goal moves a member by L q + X r, r = p - G q the part of its centred quadratic terms p that
/// is not linear in q (QUADRATIC_SPLIT's G and K, kept with the rest data), so that the metric
/// of the goals splits into L's and X's, sum m |X r|^2 = tr(X K X^T) sum m |q|^2. The limit holds
/// that motion to (s - 1) times the rest shape's: tr(X K X^T) <= (s - 1)^2, `block` X (3x6,
/// row-major, in place) and `metric` K over sum m |q|^2 (the upper triangle by rows). The nearest
/// X within a ball of the metric is X scaled onto it. False, leaving the block as it was, when
/// it is within.
SM_FORMULA bool sm_limit_quadratic(sm_scalar *block, const sm_scalar *metric, sm_scalar s)
{
    sm_scalar norm2 = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0, n = 0; j < 6; j++)
            for (int l = j; l < 6; l++, n++)
                norm2 += (l == j ? 1 : 2) * block[i * 6 + j] * metric[n] * block[i * 6 + l];
    const sm_scalar bound = s - 1;
    if (!(norm2 > bound * bound) && !isnan(norm2)) return false;
    const sm_scalar scale = isfinite(norm2) ? bound / sqrt(norm2) : 0;
    for (int i = 0; i < 18; i++) block[i] = scale > 0 ? block[i] * scale : 0;
    return true;
}

/// The goals' linear fit L = A + X G of a quadratic fit [A X] (3x9, row-major; X its quadratic
/// block), G (6x3) the quadratic terms' regression on q (QUADRATIC_SPLIT): a quadratic goal moves
/// a member by L q + X r (docs/algorithm.md, step 3). l gets L (3x3).
SM_FORMULA void sm_goals_linear_fit(const sm_scalar *fit, const sm_scalar *g, sm_scalar *l)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            sm_scalar e = fit[i * 9 + j];
            for (int k = 0; k < 6; k++) e += fit[i * 9 + 3 + k] * g[k * 3 + j];
            l[i * 3 + j] = e;
        }
}

/// A quadratic goal transform (step 3) from its fit [A X], its goals' linear fit L
/// (sm_goals_linear_fit) and what the volume treatment, the cap and the deformation limit made
/// of L, `treated`: X held within the limit s (sm_limit_quadratic, in the metric K), A' = A +
/// (L' - L) - (X' - X) G (exactly A where neither changed), and t = beta [A' X'] + (1 - beta)
/// [R 0] (3x9, row-major).
SM_FORMULA void sm_quadratic_transform(const sm_scalar *fit, const sm_scalar *l, const sm_scalar *treated,
                                       const sm_scalar *g, const sm_scalar *metric, sm_scalar s, sm_scalar beta,
                                       const sm_scalar *r, sm_scalar *t)
{
    sm_scalar x[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) x[i * 6 + j] = fit[i * 9 + 3 + j];
    const bool limited = sm_limit_quadratic(x, metric, s);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            sm_scalar a = fit[i * 9 + j] + (treated[i * 3 + j] - l[i * 3 + j]);
            if (limited)
                for (int k = 0; k < 6; k++) a -= (x[i * 6 + k] - fit[i * 9 + 3 + k]) * g[k * 3 + j];
            t[i * 9 + j] = beta * a + (1 - beta) * r[i * 3 + j];
        }
        for (int j = 0; j < 6; j++) t[i * 9 + 3 + j] = beta * x[i * 6 + j];
    }
}

/* The symmetric pseudo-inverse of the n x n matrix a (n <= 9, overwritten) into out, by EIGEN:
 * eigenvalues not positive or below THRESHOLD times the largest count as zero, so flat, colinear
 * or tiny clusters keep the modes they support instead of a singular inverse; returns the rank.
 * NAME##_and_null also gives the projector onto the modes left out (the null space: the sum of
 * v v^T over their eigenvectors) in nullspace, when that is not 0. A macro like
 * SM_DEFINE_SYM_EIGEN: the CPU reference has it in double (threshold 1e-9), the kernels in their
 * sm_real (kernels/sm_math.h). */
#define SM_DEFINE_SYM_PINV(NAME, T, EIGEN, THRESHOLD)                                                    \
    SM_FORMULA int NAME##_and_null(int n, T *a, T *out, T *nullspace)                                    \
    {                                                                                                    \
        T values[9], vectors[81];                                                                        \
        EIGEN(n, a, values, vectors);                                                                    \
        T largest = 0;                                                                                   \
        for (int k = 0; k < n; k++)                                                                      \
            if (values[k] > largest) largest = values[k];                                                \
        for (int i = 0; i < n * n; i++) out[i] = 0;                                                      \
        if (nullspace)                                                                                   \
            for (int i = 0; i < n * n; i++) nullspace[i] = 0;                                            \
        int rank = 0;                                                                                    \
        for (int k = 0; k < n; k++) {                                                                    \
            if (!(values[k] > 0) || values[k] < THRESHOLD * largest) {                                   \
                if (nullspace)                                                                           \
                    for (int i = 0; i < n; i++)                                                          \
                        for (int j = 0; j < n; j++) nullspace[i * n + j] += vectors[i * n + k] * vectors[j * n + k]; \
                continue;                                                                                \
            }                                                                                            \
            rank++;                                                                                      \
            T inv = 1 / values[k];                                                                       \
            for (int i = 0; i < n; i++)                                                                  \
                for (int j = 0; j < n; j++) out[i * n + j] += vectors[i * n + k] * vectors[j * n + k] * inv; \
        }                                                                                                \
        return rank;                                                                                     \
    }                                                                                                    \
    SM_FORMULA int NAME(int n, T *a, T *out) { return NAME##_and_null(n, a, out, 0); }

/* The plastic update of one cluster (docs/algorithm.md step 8; Mueller et al. 2005, section 4.5):
 * where the strain S = R^T A_lin - I exceeds the yield, S_p' = (I + min(1, h creep) S) S_p,
 * its excess over I bounded by max, scaled to determinant 1 and its stretches held within the
 * deformation limit (sm_limit_stretch). Returns false, sp untouched, where the strain is within
 * the yield or the update would invert (det at most SM_K_PLASTIC_DET_MIN, or not finite: the
 * rest shape would flip). r (the rotation), fit (A_lin) and sp (S_p): row-major 3x3. */
SM_FORMULA bool sm_plastic_update(const sm_scalar *r, const sm_scalar *fit, sm_scalar h, sm_scalar yield,
                                  sm_scalar creep, sm_scalar max, sm_scalar strain_limit, sm_scalar *sp)
{
    sm_scalar strain[9], step[9], next[9], excess[9];
    sm_scalar norm2 = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            strain[i * 3 + j] = r[0 * 3 + i] * fit[0 * 3 + j] + r[1 * 3 + i] * fit[1 * 3 + j] + r[2 * 3 + i] * fit[2 * 3 + j];
            if (i == j) strain[i * 3 + j] -= 1;
        }
    for (int i = 0; i < 9; i++) norm2 += strain[i] * strain[i];
    if (!(sqrt(norm2) > yield)) return false;
    // creep h is at most 1: a step follows the deformation at most all the way
    const sm_scalar rate = fmin(h * creep, (sm_scalar)1);
    for (int i = 0; i < 9; i++) step[i] = strain[i] * rate;
    for (int i = 0; i < 3; i++) step[i * 4] = 1 + step[i * 4];
    sm_scalar excess2 = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            next[i * 3 + j] = step[i * 3 + 0] * sp[0 * 3 + j] + step[i * 3 + 1] * sp[1 * 3 + j] + step[i * 3 + 2] * sp[2 * 3 + j];
            excess[i * 3 + j] = i == j ? next[i * 3 + j] - 1 : next[i * 3 + j];
        }
    for (int i = 0; i < 9; i++) excess2 += excess[i] * excess[i];
    const sm_scalar excess_norm = sqrt(excess2);
    if (excess_norm > max)
        for (int i = 0; i < 9; i++) next[i] = (i % 4 == 0 ? 1 : 0) + excess[i] * (max / excess_norm);
    const sm_scalar d = sm_det3(next);
    if (!(d > SM_K_PLASTIC_DET_MIN) || !isfinite(d)) return false;
    const sm_scalar s = 1 / cbrt(d);
    for (int i = 0; i < 9; i++) next[i] *= s;
    // the plastic rest shape's stretches within the deformation limit, like the goals'
    sm_limit_stretch(next, strain_limit);
    for (int i = 0; i < 9; i++) sp[i] = next[i];
    return true;
}

/* The rest data of a cluster (sm_cluster_update_rest on the host, the plastic update's refresh in
 * kernels/08_plasticity.cl) from its moments, computed once in the refresh's precision T: macros
 * like SM_DEFINE_SYM_PINV, instantiated for the CPU reference's double (below) and the kernels'
 * sm_real (kernels/sm_math.h). The moments are of the offsets over the cluster's RMS radius
 * 1 / inv, so that the pseudo-inverse threshold does not depend on the unit of length.
 *   SCALED_TERMS  u = D^-1 q~ for D = diag(s x 3, s^2 x 6), s = 1 / inv: the centred quadratic
 *                 terms of q (mean: the mass-weighted means of qx^2, qy^2, qz^2, qx qy, qy qz,
 *                 qz qx) over the radius;
 *   METRIC_ROOTS  W^1/2 and W^-1/2 of the moments W scaled to determinant 1, root and root_inv
 *                 (row-major), for the nearest fit of determinant 1, and `axes` the root's
 *                 singular values, largest first, for the deformation limit; I and 1 when W
 *                 is flat (an eigenvalue below SM_FLAT_THRESHOLD times the largest);
 *   LINEAR_REST   A_qq = pinv(W) inv^2 and the span A_qq W (I when W has full rank) from the
 *                 scaled 3x3 moments mqq, by PINV_FLAT (flat below SM_FLAT_THRESHOLD); returns
 *                 the rank;
 *   QUADRATIC_SPLIT  from the scaled 9x9 moments m99, the split of the centred quadratic terms
 *                 p = G q + r into their regression on q and what is left (sum m r q^T = 0):
 *                 `regression` G (6x3, row-major; M_ll^+ by PINV_FLAT) and `metric` the moments
 *                 K = sum m r r^T over sum m |q|^2 (6x6, symmetric: its upper triangle by rows, 21
 *                 entries), in which the deformation limit measures the quadratic block
 *                 (sm_limit_quadratic);
 *   NULL_FIT      Z (3x9, row-major) from the projector N onto the null space of the scaled 9x9
 *                 moments: Z = [I 0] D N D^-1, so that ~A_pq ~A_qq + R Z is, of all the fits that
 *                 match the members equally well, the one nearest [R 0] (docs/algorithm.md
 *                 step 3); 0 where the null space has no linear part (its trace over the linear
 *                 block at most THRESHOLD: modes that are quadratic only, as in a cluster two
 *                 particles wide). */
#define SM_DEFINE_REST_FORMULAS(PREFIX, T, EIGEN, PINV, THRESHOLD, PINV_FLAT)                           \
    SM_FORMULA void PREFIX##_scaled_terms(const T *q, const T *mean, T inv, T *u)                        \
    {                                                                                                    \
        const T inv2 = inv * inv;                                                                        \
        u[0] = q[0] * inv, u[1] = q[1] * inv, u[2] = q[2] * inv;                                         \
        u[3] = (q[0] * q[0] - mean[0]) * inv2, u[4] = (q[1] * q[1] - mean[1]) * inv2;                   \
        u[5] = (q[2] * q[2] - mean[2]) * inv2, u[6] = (q[0] * q[1] - mean[3]) * inv2;                   \
        u[7] = (q[1] * q[2] - mean[4]) * inv2, u[8] = (q[2] * q[0] - mean[5]) * inv2;                   \
    }                                                                                                    \
    SM_FORMULA void PREFIX##_metric_roots(const T *mqq, T *root, T *root_inv, T *axes)                   \
    {                                                                                                    \
        T a[9], values[3], vectors[9];                                                                   \
        for (int i = 0; i < 9; i++) a[i] = mqq[i], root[i] = root_inv[i] = i % 4 == 0 ? 1 : 0;          \
        for (int k = 0; k < 3; k++) axes[k] = 1;                                                         \
        EIGEN(3, a, values, vectors);                                                                    \
        const T largest = fmax(values[0], fmax(values[1], values[2]));                                   \
        for (int k = 0; k < 3; k++)                                                                      \
            if (!(values[k] > SM_FLAT_THRESHOLD * largest)) return;                                      \
        /* W^1/2 = E diag(sqrt(l)) E^T over the cube root of its determinant */                        \
        const T g = cbrt(sqrt(values[0] * values[1] * values[2]));                                       \
        for (int i = 0; i < 9; i++) root[i] = root_inv[i] = 0;                                           \
        /* its singular values, largest first (sm_limit_in_metric) */                                   \
        const T top = fmax(values[0], fmax(values[1], values[2]));                                       \
        const T bottom = fmin(values[0], fmin(values[1], values[2]));                                    \
        axes[0] = sqrt(top) / g, axes[2] = sqrt(bottom) / g;                                             \
        axes[1] = 1 / (axes[0] * axes[2]);                                                               \
        for (int k = 0; k < 3; k++) {                                                                    \
            const T s = sqrt(values[k]) / g;                                                             \
            for (int i = 0; i < 3; i++)                                                                  \
                for (int j = 0; j < 3; j++) {                                                            \
                    root[i * 3 + j] += vectors[i * 3 + k] * vectors[j * 3 + k] * s;                      \
                    root_inv[i * 3 + j] += vectors[i * 3 + k] * vectors[j * 3 + k] / s;                  \
                }                                                                                        \
        }                                                                                                \
    }                                                                                                    \
    SM_FORMULA int PREFIX##_linear_rest(const T *mqq, T inv, T *aqq, T *span)                            \
    {                                                                                                    \
        T a[9], pinv[9];                                                                                 \
        for (int i = 0; i < 9; i++) a[i] = mqq[i];                                                       \
        const int rank = PINV_FLAT(3, a, pinv);                                                          \
        for (int i = 0; i < 3; i++)                                                                      \
            for (int j = 0; j < 3; j++) {                                                                \
                aqq[i * 3 + j] = pinv[i * 3 + j] * inv * inv;                                            \
                T p = 0;                                                                                 \
                for (int k = 0; k < 3; k++) p += pinv[i * 3 + k] * mqq[k * 3 + j];                       \
                span[i * 3 + j] = rank == 3 ? (i == j ? 1 : 0) : p;                                      \
            }                                                                                            \
        return rank;                                                                                     \
    }                                                                                                    \
    SM_FORMULA void PREFIX##_quadratic_split(const T *m99, T inv, T *regression, T *metric)             \
    {                                                                                                    \
        T ll[9], pinv[9], g[18];                                                                         \
        for (int i = 0; i < 3; i++)                                                                      \
            for (int j = 0; j < 3; j++) ll[i * 3 + j] = m99[i * 9 + j];                                  \
        const T trace = ll[0] + ll[4] + ll[8];                                                           \
        PINV_FLAT(3, ll, pinv);                                                                          \
        /* G = M_ql M_ll^+ over the scaled moments, the quadratic terms' regression on q */            \
        for (int j = 0; j < 6; j++)                                                                      \
            for (int k = 0; k < 3; k++) {                                                                \
                T sum = 0;                                                                               \
                for (int i = 0; i < 3; i++) sum += m99[(3 + j) * 9 + i] * pinv[i * 3 + k];              \
                g[j * 3 + k] = sum;                                                                      \
                regression[j * 3 + k] = sum / inv;                                                       \
            }                                                                                            \
        /* K = M_qq - G M_lq, the moments of what the regression leaves, over sum m |q|^2 */           \
        const T scale = trace > 0 ? 1 / (trace * inv * inv) : 0;                                         \
        for (int j = 0, n = 0; j < 6; j++)                                                               \
            for (int l = j; l < 6; l++, n++) {                                                           \
                T sum = m99[(3 + j) * 9 + 3 + l];                                                        \
                for (int k = 0; k < 3; k++) sum -= g[j * 3 + k] * m99[k * 9 + 3 + l];                    \
                metric[n] = sum * scale;                                                                 \
            }                                                                                            \
    }                                                                                                    \
    SM_FORMULA bool PREFIX##_null_fit(const T *nullspace, T inv, T *z)                                   \
    {                                                                                                    \
        const bool linear = nullspace[0] + nullspace[10] + nullspace[20] > THRESHOLD;                    \
        for (int i = 0; i < 3; i++)                                                                      \
            for (int j = 0; j < 9; j++) z[i * 9 + j] = linear ? nullspace[i * 9 + j] * (j < 3 ? 1 : inv) : 0; \
        return linear;                                                                                   \
    }

/* A mesh collider's signed distance field (docs/algorithm.md step 7a): `field` holds nodes[0] x
 * nodes[1] x nodes[2] values (x fastest), the distance to the surface (negative inside), at
 * origin + cell (i, j, k) of the collider's frame. For a point p of that frame: false when p
 * lies outside the grid or the field there is not negative; else *depth gets the field's
 * value (< 0), trilinear between the cell's 8 nodes, and normal the unit gradient of that
 * interpolant (outward; +y where it vanishes). SPACE is the field's address space: __global
 * in the kernels, nothing on the host. */
#define SM_DEFINE_SDF_PUSH(NAME, SPACE)                                                                 \
    SM_FORMULA bool NAME(SPACE const float *field, const int *nodes, const sm_scalar *origin, sm_scalar cell, \
                         const sm_scalar *p, sm_scalar *depth, sm_scalar *normal)                       \
    {                                                                                                    \
        int i[3];                                                                                        \
        sm_scalar u[3];                                                                                  \
        for (int a = 0; a < 3; a++) {                                                                    \
            const sm_scalar g = (p[a] - origin[a]) / cell;                                              \
            if (!(g >= 0 && g <= (sm_scalar)(nodes[a] - 1))) return false;                              \
            i[a] = (int)g < nodes[a] - 2 ? (int)g : nodes[a] - 2;                                        \
            u[a] = g - (sm_scalar)i[a];                                                                  \
        }                                                                                                \
        sm_scalar c[8];                                                                                  \
        for (int k = 0; k < 8; k++) {                                                                    \
            const long n = (long)(i[0] + (k & 1)) +                                                      \
                           (long)nodes[0] * ((long)(i[1] + ((k >> 1) & 1)) + (long)nodes[1] * (i[2] + (k >> 2))); \
            c[k] = field[n];                                                                             \
        }                                                                                                \
        /* along x, then y, then z */                                                               \
        const sm_scalar x00 = c[0] + (c[1] - c[0]) * u[0], x10 = c[2] + (c[3] - c[2]) * u[0];            \
        const sm_scalar x01 = c[4] + (c[5] - c[4]) * u[0], x11 = c[6] + (c[7] - c[6]) * u[0];            \
        const sm_scalar y0 = x00 + (x10 - x00) * u[1], y1 = x01 + (x11 - x01) * u[1];                   \
        const sm_scalar value = y0 + (y1 - y0) * u[2];                                                   \
        if (!(value < 0)) return false;                                                                  \
        const sm_scalar dx0 = (c[1] - c[0]) + ((c[3] - c[2]) - (c[1] - c[0])) * u[1];                    \
        const sm_scalar dx1 = (c[5] - c[4]) + ((c[7] - c[6]) - (c[5] - c[4])) * u[1];                    \
        const sm_scalar g[3] = {dx0 + (dx1 - dx0) * u[2], (x10 - x00) + ((x11 - x01) - (x10 - x00)) * u[2], \
                                y1 - y0};                                                                \
        const sm_scalar length = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);                          \
        for (int a = 0; a < 3; a++) normal[a] = length > 0 ? g[a] / length : (a == 1 ? 1 : 0);           \
        *depth = value;                                                                                  \
        return true;                                                                                     \
    }                                                                                                    \
    /* Where p lies inside: the move out, push, and the normal where it entered (false outside). A  \
     * move of the depth along the gradient ends on the surface where the field is a plane's, but   \
     * near an edge or a corner the gradient blends the faces' and the move falls short (a particle \
     * two cells inside an edge went on through the solid): moves again from where it ends, at most\
     * SM_SDF_PUSH_MOVES in all. */                                                                  \
    SM_FORMULA bool NAME##_out(SPACE const float *field, const int *nodes, const sm_scalar *origin, sm_scalar cell, \
                               const sm_scalar *p, sm_scalar *push, sm_scalar *normal)                    \
    {                                                                                                    \
        sm_scalar depth, n[3], q[3] = {p[0], p[1], p[2]};                                                \
        if (!NAME(field, nodes, origin, cell, q, &depth, normal)) return false;                          \
        for (int a = 0; a < 3; a++) q[a] -= depth * normal[a];                                           \
        for (int move = 1; move < SM_SDF_PUSH_MOVES && NAME(field, nodes, origin, cell, q, &depth, n); move++) \
            for (int a = 0; a < 3; a++) q[a] -= depth * n[a];                                            \
        for (int a = 0; a < 3; a++) push[a] = q[a] - p[a];                                               \
        return true;                                                                                     \
    }

/* Horn (1987): the unit quaternion q = (w, x, y, z) of the proper rotation maximising
 * trace(R^T a) (a row-major 3x3) is the eigenvector of the largest eigenvalue of the 4x4
 * matrix n below. The maximum is taken over proper rotations only, so an inverted (det < 0)
 * input yields the sign-corrected answer of the SVD route, never a reflection. Returns false
 * (q untouched) where the eigenvector is not finite: the caller takes the identity. */
SM_FORMULA bool sm_horn_quaternion(const sm_scalar *a, sm_scalar q[4])
{
    const sm_scalar sxx = a[0], syx = a[1], szx = a[2];
    const sm_scalar sxy = a[3], syy = a[4], szy = a[5];
    const sm_scalar sxz = a[6], syz = a[7], szz = a[8];
    sm_scalar n[16] = {
        sxx + syy + szz, syz - szy,        szx - sxz,        sxy - syx,
        syz - szy,       sxx - syy - szz,  sxy + syx,        szx + sxz,
        szx - sxz,       sxy + syx,        -sxx + syy - szz, syz + szy,
        sxy - syx,       szx + sxz,        syz + szy,        -sxx - syy + szz,
    };
    sm_scalar values[4], vectors[16];
    sm_sym_eigen_s(4, n, values, vectors);
    int best = 0;
    for (int k = 1; k < 4; k++)
        if (values[k] > values[best]) best = k;
    const sm_scalar w = vectors[0 * 4 + best], x = vectors[1 * 4 + best];
    const sm_scalar y = vectors[2 * 4 + best], z = vectors[3 * 4 + best];
    const sm_scalar norm = sqrt(w * w + x * x + y * y + z * z);
    if (!(norm > 0) || !isfinite(norm)) return false;
    q[0] = w / norm, q[1] = x / norm, q[2] = y / norm, q[3] = z / norm;
    return true;
}

/* Volume preservation by the nearest fit of determinant 1 (docs/algorithm.md, step 3). In
 * whitened coordinates (B = A W^1/2, det W^1/2 = 1) the metric is the Frobenius norm, and the
 * nearest B' with det B' = 1 shares B's singular vectors: with B = U diag(s) V^T,
 * B' = U diag(s') V^T where s'_k (s'_k - s_k) = kappa for one kappa. Given the eigenvalues
 * `values` of B^T B and det B = det A, this gives scale[k] = s'_k / s_k along its eigenvectors
 * (B' = B V diag(scale) V^T), or returns false where the smallest singular value is not positive
 * and finite (the caller then scales A by 1 / cbrt(det A)). The smallest singular value comes
 * from det B, which rounding does not wipe out. Parametrised by y = s'_lo (either root of its
 * quadratic), kappa = y^2 - s_lo y and the two others take the larger root; f(y) = y s'_k1 s'_k2
 * - 1 increases with y and changes sign between s_lo and s_lo / det B = 1 / (s_k1 s_k2).
 * Newton's method from the paper's scaling y = s_lo / cbrt(det B), kept inside the bracket (a
 * geometric bisection where a step would leave it), until a step changes y by at most
 * 4 epsilon y, at most SM_VOLUME_ITERATIONS steps. */
SM_FORMULA bool sm_volume_scales(const sm_scalar values[3], const sm_scalar det, sm_scalar scale[3])
{
    sm_scalar s[3];
    int lo = 0;
    for (int k = 1; k < 3; k++)
        if (values[k] < values[lo]) lo = k;
    const int k1 = (lo + 1) % 3, k2 = (lo + 2) % 3;
    s[k1] = sqrt(values[k1]), s[k2] = sqrt(values[k2]);
    s[lo] = det / (s[k1] * s[k2]);
    if (!(s[lo] > 0) || !isfinite(s[lo])) return false;
    sm_scalar y0 = s[lo], y1 = 1 / (s[k1] * s[k2]);
    if (y0 > y1) {
        const sm_scalar t = y0;
        y0 = y1, y1 = t;
    }
    sm_scalar y = s[lo] / cbrt(det);
    for (int it = 0; it < SM_VOLUME_ITERATIONS; it++) {
        const sm_scalar kappa = y * (y - s[lo]);
        const sm_scalar r1 = sqrt(fmax(s[k1] * s[k1] + 4 * kappa, (sm_scalar)0));
        const sm_scalar r2 = sqrt(fmax(s[k2] * s[k2] + 4 * kappa, (sm_scalar)0));
        const sm_scalar s1 = (sm_scalar)0.5 * (s[k1] + r1), s2 = (sm_scalar)0.5 * (s[k2] + r2);
        const sm_scalar f = y * s1 * s2 - 1;
        if (f < 0) y0 = y;
        else y1 = y;
        // d s'_k / dy = (2 y - s_lo) / r_k
        const sm_scalar dk = 2 * y - s[lo];
        const sm_scalar next = y - f / (s1 * s2 + y * dk * (s2 / r1 + s1 / r2));
        const sm_scalar last = y;
        y = (next >= y0 && next <= y1) ? next : sqrt(y0 * y1);
        if (fabs(y - last) <= 4 * SM_SCALAR_EPSILON * y) break;
    }
    const sm_scalar kappa = y * (y - s[lo]);
    const sm_scalar s1 = (sm_scalar)0.5 * (s[k1] + sqrt(fmax(s[k1] * s[k1] + 4 * kappa, (sm_scalar)0)));
    const sm_scalar s2 = (sm_scalar)0.5 * (s[k2] + sqrt(fmax(s[k2] * s[k2] + 4 * kappa, (sm_scalar)0)));
    scale[lo] = y / s[lo], scale[k1] = s1 / s[k1], scale[k2] = s2 / s[k2];
    return true;
}

/* The nearest B' of determinant 1 to a whitened fit B that is squashed, flat or inverted (det B
 * below SM_K_VOLUME_SQUASHED; sm_volume_scales takes the others), so that the volume treatment is
 * one projection onto a fixed set whatever the fit: its goals then pull as a potential's gradient,
 * which switching an inverted fit to R was not (a scrambled sphere at alpha 1 reached 8 times the
 * energy its start held). In B's singular frame (sm_singular_frame: U from B V made orthonormal,
 * its third column a cross product, so that B v_lo, about 0, is not used; det U det V of det B's
 * sign), signed, B = U diag(s1, s2, s_lo) V^T with s_lo of det B's sign; the nearest of
 * determinant 1 keeps the frame and takes positive values (t1, t2, y) with t (t - s) = kappa for
 * one kappa, as in sm_volume_scales: turned the right way out along its thinnest axis,
 * continuously as det B passes 0. y by Newton's method (below). False, leaving out as it was,
 * where the two larger singular values are not positive and finite. */
SM_FORMULA bool sm_volume_nearest_squashed(const sm_scalar *b, sm_scalar *out)
{
    sm_scalar c[9], sigma[3], u[9], vk[9];
    sm_mul3_tn(b, b, c);
    if (!sm_singular_frame(b, c, sigma, u, vk)) return false;
    const sm_scalar s1 = sigma[0], s2 = sigma[1], sign = sm_det3(b) < 0 ? -1 : 1, s_lo = sign * sigma[2];
    if (!(s2 > 0) || !isfinite(s1 * s2)) return false;
    // f(y) = y t1 t2 - 1 increases, and t_k >= s_k and t_k >= y - max(0, s_lo) bound its root
    // by 1 / (s1 s2) and 1 + max(0, s_lo): Newton's method from that end, where f >= 0 (f is
    // convex, so the steps come down to the root without passing it; a bisection keeps them
    // inside the bracket where rounding would not)
    const sm_scalar floor = s_lo > 0 ? s_lo : 0;
    sm_scalar y0 = floor, y1 = fmin(1 / (s1 * s2), 1 + floor);
    sm_scalar y = y1, t1 = s1, t2 = s2;
    for (int it = 0; it <= SM_VOLUME_ITERATIONS; it++) {
        const sm_scalar kappa = y * (y - s_lo);
        const sm_scalar r1 = sqrt(fmax(s1 * s1 + 4 * kappa, (sm_scalar)0)), r2 = sqrt(fmax(s2 * s2 + 4 * kappa, (sm_scalar)0));
        t1 = (sm_scalar)0.5 * (s1 + r1), t2 = (sm_scalar)0.5 * (s2 + r2);
        if (it == SM_VOLUME_ITERATIONS) break;
        const sm_scalar f = y * t1 * t2 - 1;
        if (f == 0) break;
        if (f < 0) y0 = y;
        else y1 = y;
        // d t_k / dy = (2 y - s_lo) / r_k
        const sm_scalar next = y - f / (t1 * t2 + y * (2 * y - s_lo) * (t2 / r1 + t1 / r2));
        const sm_scalar last = y;
        y = (next >= y0 && next <= y1) ? next : (sm_scalar)0.5 * (y0 + y1);
        if (fabs(y - last) <= 4 * SM_SCALAR_EPSILON * y) it = SM_VOLUME_ITERATIONS - 1; // one more for t
    }
    const sm_scalar t[3] = {t1, t2, sign * y}; // (det U det V has det B's sign)
    sm_from_frame(u, t, vk, out);
    return true;
}

/* The nearest values t to sigma (the sum of (t_k - sigma_k)^2 least) whose coordinates in `free`
 * (bit k for coordinate k) multiply to `product` > 0, the others kept as they are in t: the
 * volume projection's problem (sm_volume_scales) on a subset. With one kappa for all,
 * t_k (t_k - sigma_k) = kappa: the smallest free sigma takes y, either root of its quadratic,
 * the others the larger one, and f(y) = y prod t_others - product increases with y between
 * sigma_lo and sigma_lo product / prod sigma_free. Newton's method from the uniform scaling,
 * kept inside that bracket as in sm_volume_scales. False where the smallest free sigma is not
 * positive and finite. */
SM_FORMULA bool sm_product_nearest(const sm_scalar *sigma, unsigned free, sm_scalar product, sm_scalar *t)
{
    int lo = -1, other[2], others = 0;
    for (int k = 0; k < 3; k++)
        if (free >> k & 1u) lo = lo < 0 || sigma[k] < sigma[lo] ? k : lo;
    if (lo < 0 || !(sigma[lo] > 0) || !isfinite(sigma[lo])) return false;
    sm_scalar rest = 1;
    for (int k = 0; k < 3; k++)
        if ((free >> k & 1u) && k != lo) other[others++] = k, rest *= sigma[k];
    if (others == 0) {
        t[lo] = product;
        return true;
    }
    sm_scalar y0 = sigma[lo], y1 = product / rest;
    if (y0 > y1) {
        const sm_scalar swap = y0;
        y0 = y1, y1 = swap;
    }
    const sm_scalar ratio = product / (sigma[lo] * rest);
    sm_scalar y = sigma[lo] * (others == 1 ? sqrt(ratio) : cbrt(ratio));
    sm_scalar larger[2] = {0, 0}, root[2] = {1, 1};
    for (int it = 0; it <= SM_VOLUME_ITERATIONS; it++) {
        const sm_scalar kappa = y * (y - sigma[lo]);
        sm_scalar prod = 1;
        for (int n = 0; n < others; n++) {
            const sm_scalar s = sigma[other[n]];
            root[n] = sqrt(fmax(s * s + 4 * kappa, (sm_scalar)0));
            larger[n] = (sm_scalar)0.5 * (s + root[n]);
            prod *= larger[n];
        }
        if (it == SM_VOLUME_ITERATIONS) break;
        const sm_scalar f = y * prod - product;
        if (f < 0) y0 = y;
        else y1 = y;
        // d t_k / dy = (2 y - sigma_lo) / root_k
        sm_scalar slope = 0;
        for (int n = 0; n < others; n++) slope += prod / larger[n] / root[n];
        const sm_scalar next = y - f / (prod + y * (2 * y - sigma[lo]) * slope);
        const sm_scalar last = y;
        y = (next >= y0 && next <= y1) ? next : sqrt(y0 * y1);
        if (fabs(y - last) <= 4 * SM_SCALAR_EPSILON * y) {
            const sm_scalar settled = y * (y - sigma[lo]);
            for (int n = 0; n < others; n++) {
                const sm_scalar s = sigma[other[n]];
                larger[n] = (sm_scalar)0.5 * (s + sqrt(fmax(s * s + 4 * settled, (sm_scalar)0)));
            }
            break;
        }
    }
    t[lo] = y;
    for (int n = 0; n < others; n++) t[other[n]] = larger[n];
    return true;
}

/* The deformation limit in a cluster's metric (docs/algorithm.md, step 3). A linear fit l is
 * within the limit when the singular values of its whitened form B = l root, largest first,
 * lie within [axes_k / s, axes_k s], `axes` the singular values of root (the rest shape's, largest
 * first): the principal radii of gyration of the goals stretch at most s times, or shrink at most
 * s times, from the rest shape's. That set is defined by B's singular values alone, so that the
 * nearest fit in the metric |(l' - l) root|, the mass-weighted motion of the members, shares B's
 * singular vectors (sm_singular_frame) and takes the nearest values in the box; with volume
 * preservation, the nearest whose product is 1 (det l' = 1): of the ways to hold each value free,
 * at its lower or at its upper bound (sm_product_nearest on the free ones), the nearest within the
 * box, and the rest shape's values where none is. Goals that are such projections are the
 * gradient of a potential and keep the energy of the motion they act on (step 4b). Where two
 * equal values must be parted (volume kept, beyond both bounds), either may take the larger
 * share: the nearest fit is not unique there.
 *
 * `l` is the fit to check (with volume preservation the nearest one of determinant 1 to `fit`,
 * which the caller has already found): false, l untouched, where it is strictly within. Else l
 * gets the limit's projection of `fit` (with `volume`, where det fit > 0; else its stretches'). */
SM_FORMULA bool sm_limit_in_metric(sm_scalar *l, const sm_scalar *fit, const sm_scalar *root, const sm_scalar *root_inv,
                                   const sm_scalar *axes, sm_scalar s, bool volume)
{
    sm_scalar b[9], c[9], sigma[3], u[9], vk[9], lo[3], hi[3];
    for (int k = 0; k < 3; k++) lo[k] = axes[k] / s, hi[k] = axes[k] * s;
    sm_mul3(l, root, b);
    sm_mul3_tn(b, b, c);
    // every singular value inside the narrowest bounds, [axes_0 / s, axes_2 s]: within, whatever
    // the order
    if (lo[0] < hi[2] && sm_eigenvalues_within(c, lo[0] * lo[0], hi[2] * hi[2])) return false;
    bool framed = sm_singular_frame(b, c, sigma, u, vk);
    if (framed) {
        bool within = true;
        for (int k = 0; k < 3; k++) within = within && sigma[k] > lo[k] && sigma[k] < hi[k];
        if (within) return false;
    }
    if (l != fit) {
        sm_mul3(fit, root, b);
        sm_mul3_tn(b, b, c);
        framed = sm_singular_frame(b, c, sigma, u, vk);
    }
    if (!framed) {
        // a fit of 0 (or not finite) has no direction to keep: the rest shape, unturned
        for (int i = 0; i < 9; i++) l[i] = i % 4 == 0 ? 1 : 0;
        return true;
    }
    sm_scalar t[3];
    for (int k = 0; k < 3; k++) t[k] = fmin(fmax(sigma[k], lo[k]), hi[k]);
    const sm_scalar det = sm_det3(fit);
    if (volume && det > 0) {
        sm_scalar best = INFINITY;
        for (int k = 0; k < 3; k++) t[k] = axes[k];
        for (int ways = 0; ways < 27; ways++) {
            // way_k: 0 free, 1 at lo_k, 2 at hi_k
            const int way[3] = {ways % 3, ways / 3 % 3, ways / 9};
            sm_scalar x[3], fixed = 1;
            unsigned free = 0;
            for (int k = 0; k < 3; k++) {
                x[k] = way[k] == 1 ? lo[k] : hi[k];
                if (way[k] == 0) free |= 1u << k;
                else fixed *= x[k];
            }
            if (free == 0 || !sm_product_nearest(sigma, free, 1 / fixed, x)) continue;
            sm_scalar distance = 0;
            bool inside = true;
            for (int k = 0; k < 3; k++) {
                const sm_scalar slack = 64 * SM_SCALAR_EPSILON * hi[k];
                inside = inside && x[k] >= lo[k] - slack && x[k] <= hi[k] + slack && (k == 0 || x[k] <= x[k - 1] + slack);
                distance += (x[k] - sigma[k]) * (x[k] - sigma[k]);
            }
            if (inside && distance < best) {
                best = distance;
                for (int k = 0; k < 3; k++) t[k] = x[k];
            }
        }
    }
    sm_from_frame(u, t, vk, b);
    sm_mul3(b, root_inv, l);
    return true;
}

/* Contact (docs/contact.md). A candidate's key is its gap, the distance minus the two radii
 * (below 0: they overlap); a particle keeps the SM_K_CONTACTS candidates of the lowest keys, at
 * equal keys the lower index. */
SM_FORMULA bool sm_contact_nearer(sm_scalar key_a, int a, sm_scalar key_b, int b)
{
    return key_a < key_b || (key_a == key_b && a < b);
}

/* The cells of the 27 around a particle's own (k = dx + 1 + 3 (dy + 1) + 9 (dz + 1), each offset
 * from -1 to +1) that its reach meets, as bits 1 << k: place[a] is where it lies in its cell along
 * axis a (0 to 1, in cells), `reach` how far a partner's centre may lie, in cells (its radius plus
 * the largest, and a margin for rounding). With cells of at least twice the largest radius, at
 * most three cells along each axis, and two where cells are four times the largest radius. */
SM_FORMULA unsigned sm_cells_in_reach(const sm_scalar *place, sm_scalar reach)
{
    unsigned axis[3];
    for (int a = 0; a < 3; a++) axis[a] = 2u | (place[a] < reach ? 1u : 0u) | (place[a] + reach >= 1 ? 4u : 0u);
    unsigned cells = 0;
    for (int dz = 0; dz < 3; dz++)
        for (int dy = 0; dy < 3; dy++)
            if ((axis[2] >> dz & 1u) && (axis[1] >> dy & 1u)) cells |= axis[0] << (3 * dy + 9 * dz);
    return cells;
}

/* Offers candidate j at gap `key` to the `found` kept so far (own[], key[], nearest first, at
 * most SM_K_CONTACTS): it takes its place by insertion, the farthest dropping out when they are
 * full and it is nearer. Returns how many are kept. */
SM_FORMULA int sm_contact_keep(int *own, sm_scalar *keys, int found, int j, sm_scalar key)
{
    if (found == SM_K_CONTACTS && !sm_contact_nearer(key, j, keys[found - 1], own[found - 1])) return found;
    int t = found < SM_K_CONTACTS ? found++ : found - 1;
    for (; t > 0 && sm_contact_nearer(key, j, keys[t - 1], own[t - 1]); t--) keys[t] = keys[t - 1], own[t] = own[t - 1];
    keys[t] = key, own[t] = j;
    return found;
}

/* The kept candidates in index order (insertion), the order the sweeps sum them in. */
SM_FORMULA void sm_contact_order(int *own, int found)
{
    for (int m = 1; m < found; m++) {
        const int j = own[m];
        int t = m;
        for (; t > 0 && own[t - 1] > j; t--) own[t] = own[t - 1];
        own[t] = j;
    }
}

/* Particle i's part of a pair's contact in every sweep of a step, by mass splitting (Tonge et
 * al. 2012): each particle's mass is split over its contacts in proportion to their depths at
 * the step's positions (`depth` this pair's, weight_i and weight_j the sums of the two particles'
 * depths there), and the pair's correction shared by the two parts in inverse proportion to their
 * masses, then averaged back over the particle: w_i depth / (w_i W_i + w_j W_j), with w the
 * inverse masses (0 for a fixed particle). m_i times it is the same for both particles, so their
 * corrections change no momentum; and a particle's parts add up to at most 1 (exactly 1 against
 * fixed particles). 0 for a pair that does not overlap there. */
SM_FORMULA sm_scalar sm_contact_split(sm_scalar depth, sm_scalar inverse_mass_i, sm_scalar weight_i,
                                      sm_scalar inverse_mass_j, sm_scalar weight_j)
{
    const sm_scalar whole = inverse_mass_i * weight_i + inverse_mass_j * weight_j;
    return depth > 0 && whole > 0 ? inverse_mass_i * depth / whole : 0;
}

/* How much of an overlap `depth` a push out removes in a step (a pair's in a sweep, a particle's
 * out of the ground or a collider): the overlap there was at the step's start (`before`; 0 or
 * less where it began apart or outside) goes at no more than `push` a step, the overlap the
 * step's own motion made goes whole, so that bodies that start inside each other or inside a
 * solid leave it at a bounded speed (`push_speed`). A result below `depth` leaves the rest for
 * the next steps; one of 0 or less moves nothing. Pairs pass push_speed h / relaxation (the
 * sweeps' relaxation makes that push_speed h) and before = reach - |d_0|; the ground and the
 * colliders push_speed h. */
SM_FORMULA sm_scalar sm_overlap_target(sm_scalar depth, sm_scalar before, sm_scalar push)
{
    const sm_scalar excess = before - push;
    return excess > 0 ? depth - excess : depth;
}

/* The speed a particle leaves a solid at after the step carried it in at `approach` (its inward
 * speed relative to the solid, > 0): `restitution` times the smallest of that, the approach the
 * particle began the step with (`approach_start`) and the approach its body began it with
 * (`approach_body`: of the mean velocity v_cm of its clusters, or its own where it is in none);
 * either of those is 0 where it is not positive. The step's own pull (shape matching, gravity)
 * presses a particle resting on a solid in without a fall behind it, and a particle that
 * rebounded rings against its goal and comes back down faster than its body falls: returned with
 * restitution, either pumped energy into bodies resting, rocking or tumbling there, without bound
 * (a rigid box dropped 0.24 m at restitution 0.98 rose 204 m within 200 s on the particle's
 * start approach alone). */
SM_FORMULA sm_scalar sm_rebound(sm_scalar restitution, sm_scalar approach, sm_scalar approach_start, sm_scalar approach_body)
{
    sm_scalar most = approach_start < approach_body ? approach_start : approach_body;
    most = most > 0 ? most : 0;
    return restitution * (approach < most ? approach : most);
}

/* Friction (Macklin et al. 2014's, on positions): of the pair's sliding over the step, |slide|
 * (its relative motion across the normal), the part a contact removes: all of it while it is
 * within `friction` times the target (static), else `friction` times the target of it
 * (kinetic). Returns the fraction of the slide removed. */
SM_FORMULA sm_scalar sm_contact_friction(sm_scalar slide, sm_scalar friction, sm_scalar target)
{
    const sm_scalar most = friction * target;
    return slide > most ? most / slide : (sm_scalar)1;
}

#endif
