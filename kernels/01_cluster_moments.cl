/* Pass 1, cluster moments (docs/algorithm.md step 1): per cluster, from the positions at the start of
 * the step, the members' mean velocity v_cm, the centre of mass x_cm (as an anchor, the member nearest the rest centre, plus an offset,
 * so that p = x - x_cm is formed from small differences), A_pq = sum m p q^T and in quadratic
 * mode the fit
 * ~A = ~A_pq ~A_qq, summed as sum m p w^T with the membership weights w = ~A_qq q~ (see
 * sm_k_weights). The rest offsets are centred (sum m q = 0, and sum m w = 0 since the quadratic
 * terms are centred by their mass-weighted means), so sum m p q^T = sum m y q^T with y = x - anchor,
 * and sum m p w^T = sum m y w^T: m y, m y q^T and m y w^T are summed in one pass over the
 * members (their differences from sums taken from the centre are rounding, sum m q being zero
 * to float rounding). One work-item per cluster sums its members in CSR order; a cluster of
 * large_threshold members or more (SM_K_LARGE_CLUSTER on a GPU, SM_K_LARGE_CLUSTER_CPU on a CPU
 * device) is summed by a work-group instead (each work-item a strided share, then a tree in local
 * memory), so that a cluster of a million particles is not one work-item's loop, nor one float
 * sum over all its members. Both orders are fixed, so the result is the same every run. */
#include "sm_math.h"

/// Adds membership k to its cluster's sums, taken from the anchor: sum += m y (w: 0), momentum
/// += m v, and columns[j] += m y q_j for j < 3 (A_pq's columns) and, in quadratic mode,
/// m y w_(j-3) for j >= 3 (the fit's), with y = x - anchor formed from small differences. The
/// sum of m y is compensated (Kahan; sum_c carries its rounding): x_cm's rounding repeats every
/// step at rest, and a float sum over hundreds of members rounds by enough that this constant
/// error, integrated twice, moved a torus at rest 0.1 of its size in 1,000 steps (4e-4 with it).
inline void sm_add_member_moments(int k, float3 anchor, bool quadratic, __global const int *member_particle,
                                  __global const float4 *member_q, __global const sm_k_weights *member_w,
                                  __global const float4 *position, __global const float4 *position_lo,
                                  __global const float4 *velocity, float4 *sum, float4 *sum_c, float4 *momentum, float4 *columns)
{
    const int i = member_particle[k];
    const float4 x = position[i]; // w: mass
    const float4 my = (float4)(((x.xyz - anchor) + position_lo[i].xyz) * x.w, 0.0f);
    const float4 q = member_q[k];
    const float4 yk = my - *sum_c, t = *sum + yk;
    *sum_c = (t - *sum) - yk;
    *sum = t;
    *momentum += (float4)(velocity[i].xyz * x.w, 0.0f);
    columns[0] += my * q.x;
    columns[1] += my * q.y;
    columns[2] += my * q.z;
    if (quadratic) {
#pragma unroll
        for (int j = 0; j < 9; j++) columns[3 + j] += my * member_w[k].w[j];
    }
}

/// Stores cluster c's centre (anchor + sum / M_c), mean velocity, A_pq and, in quadratic mode,
/// its fit from the sums of sm_add_member_moments.
inline void sm_store_moments(int c, float3 anchor, float mass, bool quadratic, float4 sum, float4 momentum,
                             const float4 *columns, __global float4 *center, __global float4 *center_offset,
                             __global float4 *cluster_velocity, __global sm_k_mat3 *apq, __global sm_k_mat39 *fit9)
{
    center[c] = (float4)(anchor, mass);
    center_offset[c] = (float4)(sum.xyz * (1.0f / mass), 0.0f);
    cluster_velocity[c] = (float4)(momentum.xyz * (1.0f / mass), 0.0f);
    float a[9];
    for (int j = 0; j < 3; j++) a[j] = columns[j].x, a[3 + j] = columns[j].y, a[6 + j] = columns[j].z;
    sm_store_mat3(&apq[c], a);
    if (quadratic)
        for (int j = 0; j < 9; j++) vstore4(columns[3 + j], 0, fit9[c].c[j]);
}

/// x_cm = center + center_offset (center.w: M_c), v_cm, A_pq and the quadratic fit ~A of every
/// cluster.
__kernel void sm_cluster_moments(const int cluster_count, const int large_threshold, __global const sm_k_cluster *clusters,
                                 __global const sm_k_object *objects, __global const int *member_particle,
                                 __global const float4 *member_q, __global const sm_k_weights *member_w,
                                 __global const float4 *position, __global const float4 *position_lo,
                                 __global const float4 *velocity, __global float4 *center,
                                 __global float4 *center_offset, __global float4 *cluster_velocity,
                                 __global sm_k_mat3 *apq, __global sm_k_mat39 *fit9)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    if (cluster.member_count >= large_threshold) return; // sm_cluster_moments_group's
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;

    const float3 anchor = cluster.member_count > 0 ? position[cluster.anchor].xyz : (float3)(0.0f);
    // one pass: sum m y, and the columns of A_pq and of the fit as vectors, for a CPU's SIMD registers
    float4 sum = (float4)(0.0f), sum_c = (float4)(0.0f), momentum = (float4)(0.0f), columns[12];
#pragma unroll
    for (int j = 0; j < 12; j++) columns[j] = (float4)(0.0f);
    for (int k = begin; k < end; k++)
        sm_add_member_moments(k, anchor, quadratic, member_particle, member_q, member_w, position, position_lo, velocity,
                              &sum, &sum_c, &momentum, columns);
    if (cluster.anchored) momentum = (float4)(0.0f); // held by a fixed member
    sm_store_moments(c, anchor, cluster.mass, quadratic, sum, momentum, columns, center, center_offset, cluster_velocity,
                     apq, fit9);
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
                                       __global const float4 *position_lo, __global const float4 *velocity,
                                       __global float4 *center, __global float4 *center_offset,
                                       __global float4 *cluster_velocity, __global sm_k_mat3 *apq,
                                       __global sm_k_mat39 *fit9, __local float *scratch)
{
    const int g = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
    if (g >= large_count) return; // (whole groups only)
    const int c = large[g];
    const sm_k_cluster cluster = clusters[c];
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;
    const float3 anchor = position[cluster.anchor].xyz;

    // each work-item's share of the sums, then their sum over the group: sum m y in scratch
    // [0, 3), sum m v in [3, 6), column j's rows in [6 + 3 j, 9 + 3 j)
    float4 sum = (float4)(0.0f), sum_c = (float4)(0.0f), momentum = (float4)(0.0f), columns[12];
    for (int j = 0; j < 12; j++) columns[j] = (float4)(0.0f);
    for (int k = begin + lid; k < end; k += size)
        sm_add_member_moments(k, anchor, quadratic, member_particle, member_q, member_w, position, position_lo, velocity,
                              &sum, &sum_c, &momentum, columns);
    __local float *row = scratch + lid * SM_K_MOMENT_TERMS;
    vstore3(sum.xyz, 0, row);
    vstore3(momentum.xyz, 0, row + 3);
    for (int j = 0; j < 12; j++) vstore3(columns[j].xyz, 0, row + 6 + 3 * j);
    sm_group_sum(scratch, quadratic ? SM_K_MOMENT_TERMS : 15, lid, size);
    if (lid != 0) return;
    sum = (float4)(vload3(0, scratch), 0.0f);
    momentum = (float4)(vload3(0, scratch + 3), 0.0f);
    for (int j = 0; j < 12; j++) columns[j] = (float4)(vload3(0, scratch + 6 + 3 * j), 0.0f);
    if (cluster.anchored) momentum = (float4)(0.0f); // held by a fixed member
    sm_store_moments(c, anchor, cluster.mass, quadratic, sum, momentum, columns, center, center_offset, cluster_velocity,
                     apq, fit9);
}
