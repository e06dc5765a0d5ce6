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

SM_DEFINE_SYM_PINV(sym_pinv_in_place, double, sm_sym_eigen_s, 1e-9) // kernels/sm_formulas.h, shared with the kernels

int sm_sym_pinv(int n, const double *a, double *out)
{
    double copy[81];
    memcpy(copy, a, sizeof(double) * (size_t)(n * n));
    return sym_pinv_in_place(n, copy, out);
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

void sm_metric_roots(const double *mqq, sm_mat3 *root, sm_mat3 *root_inv)
{
    double values[3], vectors[9];
    sm_sym_eigen(3, mqq, values, vectors);
    double largest = fmax(values[0], fmax(values[1], values[2]));
    *root = *root_inv = m3_identity();
    for (int k = 0; k < 3; k++)
        if (!(values[k] > 1e-9 * largest)) return;
    // W^1/2 = E diag(sqrt(l)) E^T over the cube root of its determinant
    const double g = cbrt(sqrt(values[0] * values[1] * values[2]));
    *root = *root_inv = m3_zero();
    for (int k = 0; k < 3; k++) {
        const double s = sqrt(values[k]) / g;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                root->m[i][j] += vectors[i * 3 + k] * vectors[j * 3 + k] * s;
                root_inv->m[i][j] += vectors[i * 3 + k] * vectors[j * 3 + k] / s;
            }
    }
}

sm_mat3 sm_volume_projection(sm_mat3 a, double det, sm_mat3 root, sm_mat3 root_inv)
{
    // in whitened coordinates B = A W^1/2: the nearest B' of determinant 1 (sm_volume_scales(),
    // kernels/sm_formulas.h, shared with the kernels)
    const sm_mat3 b = m3_mul(a, root);
    const sm_mat3 btb = m3_mul(m3_transpose(b), b);
    double values[3], v[9], scale[3];
    sm_sym_eigen(3, &btb.m[0][0], values, v);
    if (!sm_volume_scales(values, det, scale)) return m3_scale(a, 1.0 / cbrt(det));
    sm_mat3 m = m3_zero(); // V diag(s' / s) V^T
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) m.m[i][j] += v[i * 3 + k] * scale[k] * v[j * 3 + k];
    return m3_mul(m3_mul(b, m), root_inv);
}

void sm_quadratic_volume_metric(const double *g, sm_mat3 *root, sm_mat3 *root_inv, double coupling[3][6])
{
    double gll[9], s[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) gll[i * 3 + j] = g[i * 9 + j];
    sm_sym_pinv(3, gll, s);
    sm_metric_roots(s, root, root_inv);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
            double sum = 0.0;
            for (int k = 0; k < 3; k++) sum += s[i * 3 + k] * g[k * 9 + 3 + j];
            coupling[i][j] = sum;
        }
}
