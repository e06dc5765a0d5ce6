/* Pass 2, rotation (algorithm.md step 2): R, the proper rotation closest to A_pq, by Horn's
 * quaternion eigenproblem warm-started from the previous step: with R0 the last rotation, the
 * rotation closest to R0^T A_pq is R0^T R, near the identity, so the Jacobi sweeps on the nearly
 * diagonal 4x4 matrix converge at once and R = R0 R' is the reference's answer. An inverted
 * cluster (det(A_pq A_qq) < -SM_INVERTED_VOLUME) keeps R0, as the reference does. */
#include "sm_math.h"

/// R per cluster; quat holds it as a unit quaternion (x, y, z, w) for the next step's warm start.
__kernel void sm_rotation(const int cluster_count, __global const sm_k_cluster_rest *rest,
                          __global const sm_k_mat3 *apq, __global float4 *quat, __global sm_k_mat3 *rotation)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    float4 q0 = quat[c];
    const float n0 = length(q0);
    // a missing or damaged warm start costs sweeps (or, for an inverted cluster, is the identity)
    q0 = (n0 > 0.5f && isfinite(n0)) ? q0 / n0 : (float4)(0.0f, 0.0f, 0.0f, 1.0f);

    float a[9], aqq[9], r0[9], a0[9];
    sm_load_mat3(&apq[c], a);
    sm_load_mat3(&rest[c].aqq, aqq);
    sm_quat_to_mat3(q0, r0);
    float4 q = q0;
    if (sm_det3(a) * sm_det3(aqq) >= -SM_INVERTED_VOLUME) {
        sm_mul3_tn(r0, a, a0);
        q = normalize(sm_quat_mul(q0, sm_closest_rotation_quat(a0)));
    }
    if (q.w < 0.0f) q = -q; // q and -q are the same rotation: keep one
    float r[9];
    sm_quat_to_mat3(q, r);
    quat[c] = q;
    sm_store_mat3(&rotation[c], r);
}
