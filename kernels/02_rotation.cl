/* Pass 2, rotation (docs/algorithm.md step 2): R, the proper rotation closest to A_pq. Where det A_pq
 * is clearly positive, R is the orthogonal factor of A_pq's polar decomposition (which is then
 * that rotation), by Higham's scaled Newton iteration: a few steps of cofactors, with none of
 * the square roots and divisions of an eigen-solver's rotations. Elsewhere (flattened, nearly
 * inverted, or no convergence) it is Horn's quaternion eigenproblem warm-started from the
 * previous step: with R0 the last rotation, the rotation closest to R0^T A_pq is R0^T R, near
 * the identity, so the Jacobi sweeps on the nearly diagonal 4x4 matrix converge at once and
 * R = R0 R'. An inverted cluster (sm_match_inverted, tested first) keeps R0, as the reference
 * does. */
#include "sm_math.h"

/// The orthogonal factor u of a = u h (h symmetric positive definite) by the iteration
/// x <- (g x + x^-T / g) / 2 from x = a, g the Frobenius-norm scaling until x is near u; true when
/// det a > SM_K_POLAR_DET_MIN (|a| / sqrt 3)^3 and a step changed x by less than 1e-4 within
/// SM_K_POLAR_ITERATIONS steps (Newton's convergence is quadratic, so x is then u to rounding).
inline bool sm_polar_rotation(const float *a, float *u)
{
    const float norm2 = sm_norm2_3(a);
    const float rms = sqrt(norm2 * (1.0f / 3.0f)); // the RMS singular value
    if (!(sm_det3(a) > SM_K_POLAR_DET_MIN * rms * rms * rms) || !isfinite(norm2)) return false;
    // (the loops over x unrolled, so that x stays in registers)
    float x[9];
#pragma unroll
    for (int i = 0; i < 9; i++) x[i] = a[i];
    bool scaled = true;
    for (int it = 0; it < SM_K_POLAR_ITERATIONS; it++) {
        // x^-T = cofactors / det
        float cof[9];
        sm_cofactors3(x, cof);
        const float det = x[0] * cof[0] + x[1] * cof[1] + x[2] * cof[2];
        if (!(det > 0.0f)) return false;
        // g = sqrt(|x^-1| / |x|), Frobenius norms
        const float g = scaled ? sqrt(sqrt(sm_norm2_3(cof) / sm_norm2_3(x)) / det) : 1.0f;
        const float gx = 0.5f * g, gc = 0.5f / (g * det);
        float change = 0.0f;
#pragma unroll
        for (int i = 0; i < 9; i++) {
            const float next = gx * x[i] + gc * cof[i];
            change += (next - x[i]) * (next - x[i]);
            x[i] = next;
        }
        if (change < 1e-4f) scaled = false; // near u: the plain iteration converges quadratically
        if (change < 1e-8f) {
#pragma unroll
            for (int i = 0; i < 9; i++) u[i] = x[i];
            return true;
        }
    }
    return false;
}

/// The unit quaternion (x, y, z, w) of the rotation matrix r (Shepperd: from the largest of the
/// trace and the diagonal, so that no component is found by dividing by a small one).
inline float4 sm_mat3_to_quat(const float *r)
{
    const float trace = r[0] + r[4] + r[8];
    float4 q;
    if (trace >= r[0] && trace >= r[4] && trace >= r[8]) {
        const float w = 0.5f * sqrt(1.0f + trace), s = 0.25f / w;
        q = (float4)((r[7] - r[5]) * s, (r[2] - r[6]) * s, (r[3] - r[1]) * s, w);
    } else if (r[0] >= r[4] && r[0] >= r[8]) {
        const float x = 0.5f * sqrt(1.0f + r[0] - r[4] - r[8]), s = 0.25f / x;
        q = (float4)(x, (r[1] + r[3]) * s, (r[2] + r[6]) * s, (r[7] - r[5]) * s);
    } else if (r[4] >= r[8]) {
        const float y = 0.5f * sqrt(1.0f - r[0] + r[4] - r[8]), s = 0.25f / y;
        q = (float4)((r[1] + r[3]) * s, y, (r[5] + r[7]) * s, (r[2] - r[6]) * s);
    } else {
        const float z = 0.5f * sqrt(1.0f - r[0] - r[4] + r[8]), s = 0.25f / z;
        q = (float4)((r[2] + r[6]) * s, (r[5] + r[7]) * s, z, (r[3] - r[1]) * s);
    }
    return normalize(q);
}

/// R per cluster; quat holds it as a unit quaternion (x, y, z, w) for the next step's warm start.
/// For the spin limit (step 3a), the work-item at the head of each chunk of its object's clusters
/// (sm_motion_chunk) also sums that chunk into cluster_motion: the mass-weighted centres (relative
/// to the object's first cluster's centre, for precision far from the origin) with their mass,
/// and the mass-weighted flows. Pass 3 adds up the chunks, so no work-item loops over more than
/// about the square root of its object's cluster count.
__kernel void sm_rotation(const int cluster_count, __global const sm_k_cluster_rest *rest,
                          __global const sm_k_mat3 *apq, __global float4 *quat, __global sm_k_mat3 *rotation,
                          __global const sm_k_cluster *clusters, __global const sm_k_object *objects,
                          __global const float4 *center, __global const float4 *center_offset,
                          __global const float4 *cluster_velocity, __global float4 *cluster_motion)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    float4 q0 = quat[c];
    const float n0 = length(q0);
    // a missing or damaged warm start costs sweeps (or, for an inverted cluster, is the identity)
    q0 = (n0 > 0.5f && isfinite(n0)) ? q0 / n0 : (float4)(0.0f, 0.0f, 0.0f, 1.0f);

    float a[9], aqq[9], span[9], u[9], r0[9];
    sm_load_mat3(&apq[c], a);
    sm_load_mat3(&rest[c].aqq, aqq);
    sm_load_mat3(&rest[c].span, span);
    float4 q = q0;
    sm_quat_to_mat3(q0, r0);
    // inverted first, as on the reference: det A_pq > 0 (the polar route's test) does not rule it
    // out for a flat or colinear cluster, whose match is completed by r0 (sm_match_inverted): one
    // 0.6% as thick as wide, turned over, took the polar factor where the reference kept r0
    if (sm_match_inverted(a, aqq, span, r0)) {
        // keeps q0
    } else if (sm_polar_rotation(a, u)) {
        q = sm_mat3_to_quat(u);
    } else {
        float a0[9];
        sm_mul3_tn(r0, a, a0);
        q = normalize(sm_quat_mul(q0, sm_closest_rotation_quat(a0)));
    }
    if (q.w < 0.0f) q = -q; // q and -q are the same rotation: keep one
    float r[9];
    sm_quat_to_mat3(q, r);
    quat[c] = q;
    sm_store_mat3(&rotation[c], r);

    const sm_k_object object = objects[clusters[c].object];
    const int chunk = sm_motion_chunk(object.cluster_count);
    if ((c - object.first_cluster) % chunk != 0) return;
    const float3 origin = center[object.first_cluster].xyz;
    const int end = min(c + chunk, object.first_cluster + object.cluster_count);
    float mass = 0.0f;
    float3 x = (float3)(0.0f), v = (float3)(0.0f);
    for (int k = c; k < end; k++) {
        const float m = clusters[k].mass;
        mass += m;
        x += m * ((center[k].xyz - origin) + center_offset[k].xyz);
        v += m * cluster_velocity[k].xyz;
    }
    cluster_motion[2 * c] = (float4)(x, mass);
    cluster_motion[2 * c + 1] = (float4)(v, 0.0f);
}
