/* Small linear algebra for the kernels, in the formulas of the CPU reference
 * (host/src/math3.c): 3x3 products, the symmetric Jacobi eigen-solver, the symmetric
 * pseudo-inverse and Horn's closest rotation. Matrices are row-major private arrays. */
#ifndef SM_MATH_H
#define SM_MATH_H

#include "sm_formulas.h"

/* Precision of the rare rest-data refresh after a plastic update: double where the device
 * has it, else float; the pseudo-inverse threshold is the reference's either way. */
#ifdef SM_K_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double sm_real;
#define SM_REAL_EPSILON DBL_EPSILON
#else
typedef float sm_real;
#define SM_REAL_EPSILON FLT_EPSILON
#endif
#define SM_PINV_THRESHOLD ((sm_real)SM_MOMENT_THRESHOLD)

/// s + e = a + b exactly (Knuth's TwoSum): s the rounded sum, e its rounding error. (No fast-math
/// option is given to the compiler, which would break it.)
inline float3 sm_two_sum(float3 a, float3 b, float3 *e)
{
#pragma OPENCL FP_CONTRACT OFF
    const float3 s = a + b, bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

inline float sm_two_sum_1(float a, float b, float *e)
{
#pragma OPENCL FP_CONTRACT OFF
    const float s = a + b, bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

/// The clusters per chunk of an object's spin-limit sums (passes 2 and 3): the least k with
/// k * k >= count, so that a work-item sums at most about sqrt(count) clusters or chunks.
inline int sm_motion_chunk(int count)
{
    int k = (int)sqrt((float)count);
    while (k * k < count) k++;
    while (k > 1 && (k - 1) * (k - 1) >= count) k--;
    return max(k, 1);
}

inline void sm_load_mat3(__global const sm_k_mat3 *s, float *a)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a[i * 3 + j] = s->m[i][j];
}

inline void sm_store_mat3(__global sm_k_mat3 *s, const float *a)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) s->m[i][j] = a[i * 3 + j];
        s->m[i][3] = 0.0f;
    }
}

/// The cofactor matrix of a (det a = the dot of a row of a with the same row of it; a^-T =
/// cofactors / det a).
inline void sm_cofactors3(const float *a, float *c)
{
    c[0] = a[4] * a[8] - a[5] * a[7], c[1] = a[5] * a[6] - a[3] * a[8], c[2] = a[3] * a[7] - a[4] * a[6];
    c[3] = a[2] * a[7] - a[1] * a[8], c[4] = a[0] * a[8] - a[2] * a[6], c[5] = a[1] * a[6] - a[0] * a[7];
    c[6] = a[1] * a[5] - a[2] * a[4], c[7] = a[2] * a[3] - a[0] * a[5], c[8] = a[0] * a[4] - a[1] * a[3];
}

/// Squared Frobenius norm.
inline float sm_norm2_3(const float *a)
{
    float s = 0.0f;
    for (int i = 0; i < 9; i++) s += a[i] * a[i];
    return s;
}

/* The symmetric eigen-solver of sm_formulas.h in float, and in sm_real for the rest-data refresh. */
#define sm_sym_eigen_f sm_sym_eigen_s
#ifdef SM_K_FP64
SM_DEFINE_SYM_EIGEN(sm_sym_eigen_r, double, DBL_EPSILON)
#else
#define sm_sym_eigen_r sm_sym_eigen_f
#endif

/// Symmetric pseudo-inverse of the n x n matrix a (overwritten), as sm_sym_pinv of the
/// reference: eigenvalues not positive or below SM_PINV_THRESHOLD times the largest count as zero
/// (SM_DEFINE_SYM_PINV, kernels/sm_formulas.h).
SM_DEFINE_SYM_PINV(sm_sym_pinv_r, sm_real, sm_sym_eigen_r, SM_PINV_THRESHOLD)

/// x += d for a double-float pair (x, x_lo) and a small float d: TwoSum keeps the rounding of the
/// float sum in x_lo (w of both untouched). Integration, contact with solids and the pusher move
/// positions by it.
inline void sm_add_pair(float4 *x, float4 *x_lo, float3 d)
{
    const float3 s = x->xyz + d;
    const float3 b = s - x->xyz;
    const float3 e = (x->xyz - (s - b)) + (d - b) + x_lo->xyz;
    x->xyz = s + e;
    x_lo->xyz = e - (x->xyz - s);
}

/// g + T q~ for a rest offset q: T's first three columns on q, and in quadratic mode its other six
/// on the centred quadratic terms of q (mean: the cluster's a1..a6). The goals (pass 4) and the
/// skinned surfaces (pass 9) both place points by it.
/// The centred quadratic terms of a rest offset q in float, each a rounded product less its mean,
/// never contracted into a fused multiply-add, so that the host reproduces them bit for bit when
/// it sums them (sm_k_bias; host/src/opencl/cl_transfer.c).
inline void sm_quadratic_terms_f(float3 q, const float *mean, float *qt)
{
#pragma OPENCL FP_CONTRACT OFF
    qt[0] = q.x * q.x - mean[0], qt[1] = q.y * q.y - mean[1], qt[2] = q.z * q.z - mean[2];
    qt[3] = q.x * q.y - mean[3], qt[4] = q.y * q.z - mean[4], qt[5] = q.z * q.x - mean[5];
}

/// g + T's quadratic columns times the centred quadratic terms of q (mean: their means), each
/// product rounded before it is added (never fused), as the blend pass's goal offsets need.
inline float3 sm_add_quadratic_columns(float3 g, __global const sm_k_mat39 *t, float3 q, __global const sm_float *mean)
{
#pragma OPENCL FP_CONTRACT OFF
    const float means[6] = {mean[0], mean[1], mean[2], mean[3], mean[4], mean[5]};
    float qt[6];
    sm_quadratic_terms_f(q, means, qt);
#pragma unroll
    for (int j = 0; j < 6; j++) g += vload4(0, t->c[3 + j]).xyz * qt[j];
    return g;
}

inline float3 sm_add_transformed(float3 g, __global const sm_k_mat39 *t, float3 q, bool quadratic,
                                 __global const sm_float *mean)
{
    // column by column, as vectors (each component's sum in the order of a row's)
    g += vload4(0, t->c[0]).xyz * q.x + vload4(0, t->c[1]).xyz * q.y + vload4(0, t->c[2]).xyz * q.z;
    return quadratic ? sm_add_quadratic_columns(g, t, q, mean) : g;
}

/// The rotation matrix of the unit quaternion q = (x, y, z, w), w the scalar part.
inline void sm_quat_to_mat3(float4 q, float *r)
{
    float w = q.w, x = q.x, y = q.y, z = q.z;
    r[0] = 1 - 2 * (y * y + z * z), r[1] = 2 * (x * y - w * z), r[2] = 2 * (x * z + w * y);
    r[3] = 2 * (x * y + w * z), r[4] = 1 - 2 * (x * x + z * z), r[5] = 2 * (y * z - w * x);
    r[6] = 2 * (x * z - w * y), r[7] = 2 * (y * z + w * x), r[8] = 1 - 2 * (x * x + y * y);
}

/// Hamilton product a b: the rotation of b followed by that of a.
inline float4 sm_quat_mul(float4 a, float4 b)
{
    return (float4)(a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                     a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}

/// Horn's closest proper rotation to a as a float4 quaternion (x, y, z, w): sm_horn_quaternion()
/// of kernels/sm_formulas.h, shared with the reference; the identity where it has none.
inline float4 sm_closest_rotation_quat(const float *a)
{
    float q[4];
    if (!sm_horn_quaternion(a, q)) return (float4)(0.0f, 0.0f, 0.0f, 1.0f);
    return (float4)(q[1], q[2], q[3], q[0]);
}

#endif
