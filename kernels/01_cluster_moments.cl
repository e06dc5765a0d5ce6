/* Pass 1, cluster moments (algorithm.md step 1): per cluster, from the positions at the start of
 * the step, the centre of mass x_cm (as an anchor, the member nearest the rest centre, plus an offset,
 * so that p = x - x_cm is formed from small differences), A_pq = sum m p q^T and in quadratic
 * mode the fit
 * ~A = ~A_pq ~A_qq, summed as sum m p w^T with the membership weights w = ~A_qq q~ (see
 * sm_k_weights). The rest offsets are centred (sum m q = 0, and sum m w = 0 since the quadratic
 * terms are centred by their mass-weighted means), so sum m p q^T = sum m y q^T with y = x - anchor,
 * and sum m p w^T = sum m y w^T: the one-work-item path sums y, m y q^T and m y w^T in one pass
 * over the members (their differences from the two-pass sums are rounding, sum m q being zero
 * to float rounding). One work-item per cluster sums its members in CSR order; on a GPU a cluster of
 * SM_K_LARGE_CLUSTER members or more (large_threshold) is summed by a work-group instead (each work-item a strided
 * share, then a tree in local memory), so that a cluster of a million particles is not one
 * work-item's loop. Both orders are fixed, so the result is the same every run. */
#include "sm_math.h"

/// Adds membership k's m p q^T to terms[0..9) (A_pq, row-major) and, in quadratic mode, its
/// m p w^T to terms[9..36) (the fit), with p = x - x_cm formed from the anchor and the offset.
inline void sm_add_member_moments(int k, float3 anchor, float3 offset, bool quadratic, __global const int *member_particle,
                                  __global const float4 *member_q, __global const sm_k_weights *member_w,
                                  __global const float4 *position, __global const float4 *position_lo, float *terms)
{
    const int i = member_particle[k];
    const float4 x = position[i]; // w: mass
    const float3 p = ((x.xyz - anchor) + position_lo[i].xyz) - offset;
    const float mp[3] = {x.w * p.x, x.w * p.y, x.w * p.z};
    const float4 q = member_q[k];
    for (int r = 0; r < 3; r++) {
        terms[r * 3 + 0] += mp[r] * q.x;
        terms[r * 3 + 1] += mp[r] * q.y;
        terms[r * 3 + 2] += mp[r] * q.z;
    }
    if (quadratic)
        for (int r = 0; r < 3; r++)
            for (int j = 0; j < 9; j++) terms[9 + r * 9 + j] += mp[r] * member_w[k].w[j];
}

/// x_cm = center + center_offset (center.w: M_c), A_pq and the quadratic fit ~A of every cluster.
__kernel void sm_cluster_moments(const int cluster_count, const int large_threshold, __global const sm_k_cluster *clusters,
                                 __global const sm_k_object *objects, __global const int *member_particle,
                                 __global const float4 *member_q, __global const sm_k_weights *member_w,
                                 __global const float4 *position, __global const float4 *position_lo,
                                 __global float4 *center, __global float4 *center_offset,
                                 __global sm_k_mat3 *apq, __global sm_k_mat39 *fit9)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    if (cluster.member_count >= large_threshold) return; // sm_cluster_moments_group's
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;

    const float3 anchor = cluster.member_count > 0 ? position[cluster.anchor].xyz : (float3)(0.0f);
    // one pass: sum m y, and the columns of A_pq (j < 3) and of the fit (j >= 3) as vectors,
    // for a CPU's SIMD registers
    float4 sum = (float4)(0.0f), columns[12];
    for (int j = 0; j < 12; j++) columns[j] = (float4)(0.0f);
    for (int k = begin; k < end; k++) {
        const int i = member_particle[k];
        const float4 x = position[i]; // w: mass
        const float4 my = (float4)(((x.xyz - anchor) + position_lo[i].xyz) * x.w, 0.0f);
        const float4 q = member_q[k];
        sum += my;
        columns[0] += my * q.x;
        columns[1] += my * q.y;
        columns[2] += my * q.z;
        if (quadratic)
            for (int j = 0; j < 9; j++) columns[3 + j] += my * member_w[k].w[j];
    }
    const float3 offset = sum.xyz * (1.0f / cluster.mass);
    center[c] = (float4)(anchor, cluster.mass);
    center_offset[c] = (float4)(offset, 0.0f);
    for (int j = 0; j < 3; j++) {
        apq[c].m[0][j] = columns[j].x, apq[c].m[1][j] = columns[j].y, apq[c].m[2][j] = columns[j].z;
        apq[c].m[j][3] = 0.0f;
    }
    if (quadratic)
        for (int j = 0; j < 9; j++) vstore4(columns[3 + j], 0, fit9[c].c[j]);
}

/// Sums `count` floats per work-item, scratch[lid * SM_K_MOMENT_TERMS + j], over the work-group
/// by halving (size a power of two); the sums end in the first row, seen by every work-item.
inline void sm_group_sum(__local float *scratch, int count, int lid, int size)
{
    for (int span = size / 2; span > 0; span >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < span)
            for (int j = 0; j < count; j++) scratch[lid * SM_K_MOMENT_TERMS + j] += scratch[(lid + span) * SM_K_MOMENT_TERMS + j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/// sm_cluster_moments for the large clusters, one work-group each: cluster large[g] for group g.
/// `scratch` holds SM_K_MOMENT_TERMS floats per work-item.
__kernel void sm_cluster_moments_group(const int large_count, __global const int *large,
                                       __global const sm_k_cluster *clusters, __global const sm_k_object *objects,
                                       __global const int *member_particle, __global const float4 *member_q,
                                       __global const sm_k_weights *member_w, __global const float4 *position,
                                       __global const float4 *position_lo, __global float4 *center,
                                       __global float4 *center_offset, __global sm_k_mat3 *apq,
                                       __global sm_k_mat39 *fit9, __local float *scratch)
{
    const int g = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
    if (g >= large_count) return; // (whole groups only)
    const int c = large[g];
    const sm_k_cluster cluster = clusters[c];
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;
    const float3 anchor = position[cluster.anchor].xyz;

    // the centre's offset from the anchor
    float3 sum = (float3)(0.0f);
    for (int k = begin + lid; k < end; k += size) {
        const int i = member_particle[k];
        const float4 x = position[i];
        sum += ((x.xyz - anchor) + position_lo[i].xyz) * x.w;
    }
    scratch[lid * SM_K_MOMENT_TERMS + 0] = sum.x;
    scratch[lid * SM_K_MOMENT_TERMS + 1] = sum.y;
    scratch[lid * SM_K_MOMENT_TERMS + 2] = sum.z;
    sm_group_sum(scratch, 3, lid, size);
    const float3 offset = (float3)(scratch[0], scratch[1], scratch[2]) * (1.0f / cluster.mass);
    barrier(CLK_LOCAL_MEM_FENCE); // every work-item has read the offset before the rows are reused

    // A_pq and the quadratic fit
    float terms[SM_K_MOMENT_TERMS];
    for (int j = 0; j < SM_K_MOMENT_TERMS; j++) terms[j] = 0.0f;
    for (int k = begin + lid; k < end; k += size)
        sm_add_member_moments(k, anchor, offset, quadratic, member_particle, member_q, member_w, position, position_lo, terms);
    const int count = quadratic ? SM_K_MOMENT_TERMS : 9;
    for (int j = 0; j < count; j++) scratch[lid * SM_K_MOMENT_TERMS + j] = terms[j];
    sm_group_sum(scratch, count, lid, size);
    if (lid != 0) return;
    center[c] = (float4)(anchor, cluster.mass);
    center_offset[c] = (float4)(offset, 0.0f);
    float a[9];
    for (int j = 0; j < 9; j++) a[j] = scratch[j];
    sm_store_mat3(&apq[c], a);
    if (quadratic)
        for (int j = 0; j < 9; j++)
            vstore4((float4)(scratch[9 + j], scratch[9 + 9 + j], scratch[9 + 18 + j], 0.0f), 0, fit9[c].c[j]);
}
