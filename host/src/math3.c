#include "math3.h"

#include "../../kernels/sm_formulas.h"

#include <float.h>
#include <string.h>

sm_mat3 sm_rotation_from_euler_degrees(sm_vec3 degrees)
{
    const double k = 3.14159265358979323846 / 180.0;
    double cx = cos(degrees.x * k), sx = sin(degrees.x * k);
    double cy = cos(degrees.y * k), sy = sin(degrees.y * k);
    double cz = cos(degrees.z * k), sz = sin(degrees.z * k);
    sm_mat3 rx = {{{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}}};
    sm_mat3 ry = {{{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}}};
    sm_mat3 rz = {{{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}}};
    return m3_mul(rz, m3_mul(ry, rx));
}

void sm_sym_eigen(int n, const double *a_in, double *values, double *vectors)
{
    double a[81];
    memcpy(a, a_in, sizeof(double) * (size_t)(n * n));
    sm_sym_eigen_s(n, a, values, vectors); // kernels/sm_formulas.h, shared with the kernels
}

SM_DEFINE_SYM_PINV(sym_pinv_in_place, double, sm_sym_eigen_s, SM_MOMENT_THRESHOLD) // kernels/sm_formulas.h, shared with the kernels
SM_DEFINE_SYM_PINV(sym_pinv_flat, double, sm_sym_eigen_s, SM_FLAT_THRESHOLD) // a cluster's 3x3 moments

int sm_sym_pinv(int n, const double *a, double *out)
{
    double copy[81];
    memcpy(copy, a, sizeof(double) * (size_t)(n * n));
    return sym_pinv_in_place(n, copy, out);
}

int sm_sym_pinv_and_null(int n, const double *a, double *out, double *nullspace)
{
    double copy[81];
    memcpy(copy, a, sizeof(double) * (size_t)(n * n));
    return sym_pinv_in_place_and_null(n, copy, out, nullspace);
}

sm_mat3 sm_closest_rotation(sm_mat3 a)
{
    // Horn's quaternion (sm_horn_quaternion(), kernels/sm_formulas.h, shared with the kernels)
    double q[4];
    if (!sm_horn_quaternion(&a.m[0][0], q)) return m3_identity();
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    return (sm_mat3){{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

// the rest-data formulas (kernels/sm_formulas.h), in double, shared with the kernels' refresh
SM_DEFINE_REST_FORMULAS(rest, double, sm_sym_eigen_s, sym_pinv_in_place, SM_MOMENT_THRESHOLD, sym_pinv_flat)

void sm_metric_roots(const double *mqq, sm_mat3 *root, sm_mat3 *root_inv, double axes[3])
{
    rest_metric_roots(mqq, &root->m[0][0], &root_inv->m[0][0], axes);
}

int sm_linear_rest(const double *mqq, double inv, sm_mat3 *aqq, sm_mat3 *span)
{
    return rest_linear_rest(mqq, inv, &aqq->m[0][0], &span->m[0][0]);
}

void sm_scaled_quadratic_terms(sm_vec3 q, const double mean[6], double inv, double u[9])
{
    const double qa[3] = {q.x, q.y, q.z};
    rest_scaled_terms(qa, mean, inv, u);
}

void sm_quadratic_split(const double *m99, double inv, double regression[6][3], double metric[21])
{
    rest_quadratic_split(m99, inv, &regression[0][0], metric);
}

bool sm_volume_projection(sm_mat3 *a, double det, sm_mat3 root, sm_mat3 root_inv)
{
    // in whitened coordinates B = A W^1/2: the nearest B' of determinant 1 (sm_volume_scales()
    // and sm_volume_nearest_squashed(), kernels/sm_formulas.h, shared with the kernels)
    const sm_mat3 b = m3_mul(*a, root);
    if (!(det >= SM_K_VOLUME_SQUASHED)) {
        sm_mat3 nearest;
        if (!sm_volume_nearest_squashed(&b.m[0][0], &nearest.m[0][0])) return false;
        *a = m3_mul(nearest, root_inv);
        return true;
    }
    const sm_mat3 btb = m3_mul(m3_transpose(b), b);
    double values[3], v[9], scale[3];
    sm_sym_eigen(3, &btb.m[0][0], values, v);
    if (!sm_volume_scales(values, det, scale)) {
        *a = m3_scale(*a, 1.0 / cbrt(det));
        return true;
    }
    sm_mat3 m = m3_zero(); // V diag(s' / s) V^T
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) m.m[i][j] += v[i * 3 + k] * scale[k] * v[j * 3 + k];
    *a = m3_mul(m3_mul(b, m), root_inv);
    return true;
}

bool sm_quadratic_null_fit(const double *nullspace, double inv, double z[3][9])
{
    return rest_null_fit(nullspace, inv, &z[0][0]);
}
