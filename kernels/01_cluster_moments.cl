/* Pass 1, cluster moments (algorithm.md step 1): per cluster, from the positions at the start of
 * the step, the centre of mass x_cm (as an anchor, the member nearest the rest centre, plus an offset,
 * so that p = x - x_cm is formed from small differences), A_pq = sum m p q^T and in quadratic
 * mode the fit
 * ~A = ~A_pq ~A_qq, summed as sum m p w^T with the membership weights w = ~A_qq q~ (see
 * sm_k_weights). One work-item per cluster sums its members in CSR order, so the result is the
 * same every run. */
#include "sm_math.h"

/// x_cm = center + center_offset (center.w: M_c), A_pq and the quadratic fit ~A of every cluster.
__kernel void sm_cluster_moments(const int cluster_count, __global const sm_k_cluster *clusters,
                                 __global const sm_k_object *objects, __global const int *member_particle,
                                 __global const float4 *member_q, __global const sm_k_weights *member_w,
                                 __global const float4 *position, __global const float4 *position_lo,
                                 __global float4 *center, __global float4 *center_offset,
                                 __global sm_k_mat3 *apq, __global sm_k_mat39 *fit9)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;

    const float3 anchor = cluster.member_count > 0 ? position[cluster.anchor].xyz : (float3)(0.0f);
    float3 sum = (float3)(0.0f);
    for (int k = begin; k < end; k++) {
        const int i = member_particle[k];
        const float4 x = position[i]; // w: mass
        sum += ((x.xyz - anchor) + position_lo[i].xyz) * x.w;
    }
    const float3 offset = sum * (1.0f / cluster.mass);

    float a[9] = {0};
    float a9[27] = {0};
    for (int k = begin; k < end; k++) {
        const int i = member_particle[k];
        const float4 x = position[i];
        const float m = x.w;
        const float3 p = ((x.xyz - anchor) + position_lo[i].xyz) - offset;
        const float4 q = member_q[k];
        const float mp[3] = {m * p.x, m * p.y, m * p.z};
        for (int i = 0; i < 3; i++) {
            a[i * 3 + 0] += mp[i] * q.x;
            a[i * 3 + 1] += mp[i] * q.y;
            a[i * 3 + 2] += mp[i] * q.z;
        }
        if (quadratic)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 9; j++) a9[i * 9 + j] += mp[i] * member_w[k].w[j];
    }
    center[c] = (float4)(anchor, cluster.mass);
    center_offset[c] = (float4)(offset, 0.0f);
    sm_store_mat3(&apq[c], a);
    if (quadratic)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) fit9[c].m[i][j] = a9[i * 9 + j];
}
