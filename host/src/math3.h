/* Small dense linear algebra in double: 3-vectors, 3x3 matrices, symmetric eigenproblems,
 * the symmetric pseudo-inverse and the closest proper rotation. Shared by the CPU passes,
 * the cluster set-up and the tests. */
#ifndef SM_MATH3_H
#define SM_MATH3_H

#include "shapematch/shapematch.h"

#include "../../kernels/sm_formulas.h" /* the formulas shared with the kernels */

#include <math.h>

#define SM_PI 3.14159265358979323846

static inline sm_vec3 v3(double x, double y, double z) { return (sm_vec3){x, y, z}; }
static inline sm_vec3 v3_add(sm_vec3 a, sm_vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline sm_vec3 v3_sub(sm_vec3 a, sm_vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline sm_vec3 v3_scale(sm_vec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline double v3_dot(sm_vec3 a, sm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double v3_length(sm_vec3 a) { return sqrt(v3_dot(a, a)); }
static inline bool v3_equal(sm_vec3 a, sm_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
static inline sm_vec3 v3_cross(sm_vec3 a, sm_vec3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double v3_get(sm_vec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
static inline int v3_is_finite(sm_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }
/// a scaled by a power of two (exactly, but for components that become subnormal) so that its
/// largest component lies in [0.5, 1): the same direction, however long or short a is, with a
/// length that neither overflows nor underflows. Zero and non-finite a are returned unchanged.
static inline sm_vec3 v3_scaled_to_one(sm_vec3 a)
{
    const double largest = fmax(fabs(a.x), fmax(fabs(a.y), fabs(a.z)));
    if (!v3_is_finite(a) || !(largest > 0.0)) return a;
    const int shift = -ilogb(largest) - 1;
    return v3(ldexp(a.x, shift), ldexp(a.y, shift), ldexp(a.z, shift));
}
/// a / |a| into *out for any finite a but zero, however long or short (v3_scaled_to_one first);
/// false for zero or non-finite a.
static inline int v3_direction(sm_vec3 a, sm_vec3 *out)
{
    if (!v3_is_finite(a) || !(fmax(fabs(a.x), fmax(fabs(a.y), fabs(a.z))) > 0.0)) return 0;
    const sm_vec3 b = v3_scaled_to_one(a);
    *out = v3_scale(b, 1.0 / v3_length(b));
    return 1;
}

static inline sm_mat3 m3_zero(void) { return (sm_mat3){{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}; }
static inline sm_mat3 m3_identity(void) { return (sm_mat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}; }

static inline sm_mat3 m3_add(sm_mat3 a, sm_mat3 b)
{
    sm_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[i][j] + b.m[i][j];
    return r;
}

static inline sm_mat3 m3_sub(sm_mat3 a, sm_mat3 b)
{
    sm_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[i][j] - b.m[i][j];
    return r;
}

static inline sm_mat3 m3_scale(sm_mat3 a, double s)
{
    sm_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[i][j] * s;
    return r;
}

/// s a + (1 - s) b, the blend used for beta and for the cap's gamma.
static inline sm_mat3 m3_lerp(sm_mat3 b, sm_mat3 a, double s)
{
    return m3_add(m3_scale(a, s), m3_scale(b, 1.0 - s));
}

static inline sm_mat3 m3_mul(sm_mat3 a, sm_mat3 b)
{
    sm_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}

static inline sm_mat3 m3_transpose(sm_mat3 a)
{
    sm_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[j][i];
    return r;
}

static inline sm_vec3 m3_apply(sm_mat3 a, sm_vec3 v)
{
    return v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
              a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
              a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}

/// a b^T
static inline sm_mat3 m3_outer(sm_vec3 a, sm_vec3 b)
{
    return (sm_mat3){{{a.x * b.x, a.x * b.y, a.x * b.z},
                      {a.y * b.x, a.y * b.y, a.y * b.z},
                      {a.z * b.x, a.z * b.y, a.z * b.z}}};
}

static inline double m3_det(sm_mat3 a)
{
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}

/// Squared Frobenius norm.
static inline double m3_norm2(sm_mat3 a)
{
    double s = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) s += a.m[i][j] * a.m[i][j];
    return s;
}

/// Rotation of `degrees` about x, then y, then z: R = Rz Ry Rx.
sm_mat3 sm_rotation_from_euler_degrees(sm_vec3 degrees);

/// Eigen-decomposition of the symmetric n x n matrix `a` (row-major, n <= 9) by cyclic
/// Jacobi rotations. Writes eigenvalues to `values` and eigenvectors as the columns of
/// `vectors` (row-major n x n). `a` is not modified.
void sm_sym_eigen(int n, const double *a, double *values, double *vectors);

/// Symmetric pseudo-inverse of the symmetric n x n matrix `a` (n <= 9): eigenvalues that
/// are not positive or are below 1e-9 times the largest count as zero. Returns the rank kept.
int sm_sym_pinv(int n, const double *a, double *out);

/// sm_sym_pinv(), and in `nullspace` (n x n) the projector onto the modes it left out.
int sm_sym_pinv_and_null(int n, const double *a, double *out, double *nullspace);

/// The proper rotation R (det R = +1) that maximises trace(R^T a), i.e. the rotation closest
/// to `a` in the Frobenius norm; never a reflection. Degenerate input (zero, rank one) gives
/// one of the maximisers, and non-finite input gives I.
sm_mat3 sm_closest_rotation(sm_mat3 a);

/* The rest-data formulas of kernels/sm_formulas.h (SM_DEFINE_REST_FORMULAS), in double: */
/// The square roots of a cluster's rest moment matrix W = sum m q q^T, scaled to determinant 1:
/// `root` = W^1/2 / det(W)^1/6 and `root_inv` its inverse, from the scaled moments `mqq` (W up to a
/// positive factor, row-major). A flat or colinear W (an eigenvalue not above SM_FLAT_THRESHOLD,
/// 1e-4, times the largest) gives I for both. `axes` gets the root's singular values, largest first
/// (1 when flat), which the deformation limit measures against (sm_limit_in_metric).
void sm_metric_roots(const double *mqq, sm_mat3 *root, sm_mat3 *root_inv, double axes[3]);
/// A_qq = pinv(mqq) inv^2 and the span A_qq W (I at full rank) from the moments over the RMS
/// radius 1 / inv, mqq; returns the rank.
int sm_linear_rest(const double *mqq, double inv, sm_mat3 *aqq, sm_mat3 *span);
/// u = D^-1 q~, D = diag(s x 3, s^2 x 6) with s = 1 / inv: q's centred quadratic terms over the
/// RMS radius.
void sm_scaled_quadratic_terms(sm_vec3 q, const double mean[6], double inv, double u[9]);
/// From the scaled 9x9 moments `m99` (row-major; the moments over the RMS radius 1 / inv): the
/// regression G (6x3) of the centred quadratic terms on q, p = G q + r, and the moments of what
/// it leaves, K = sum m r r^T over sum m |q|^2 (upper triangle by rows), which split a quadratic
/// goal's metric into its linear and its own part (sm_limit_quadratic).
void sm_quadratic_split(const double *m99, double inv, double regression[6][3], double metric[21]);

/// The quadratic fit's share of the rotation, Z = [I 0] D N D^-1 (3x9), from the projector N onto
/// the null space of the scaled 9x9 moments (docs/algorithm.md step 3): the fit ~A_pq ~A_qq + R Z
/// is the one nearest [R 0] of those that match the members equally well. Returns false, Z 0,
/// where the null space has no linear part.
bool sm_quadratic_null_fit(const double *nullspace, double inv, double z[3][9]);

/// Volume preservation (docs/algorithm.md step 3): the matrix A' with det A' = 1 nearest to `a` in
/// the cluster's mass-weighted metric, sum m |(A' - A) q|^2, given the roots of that metric
/// (sm_metric_roots), into `a`. `det` is det(a), of any sign: an inverted fit's nearest turns it
/// the right way out along its thinnest axis (sm_volume_nearest_squashed). False, `a` untouched,
/// where nothing finite is nearest (a fit of rank below 2, or not finite).
bool sm_volume_projection(sm_mat3 *a, double det, sm_mat3 root, sm_mat3 root_inv);

#endif
