/* Pass 1, cluster moments (docs/algorithm.md step 1): per cluster, from the positions at the start of
 * the step, each member weighed by its membership's mass (member_q.w), the members' mean velocity
 * v_cm, the centre of mass x_cm (as the float nearest to it, `center`, and the rest,
 * `center_offset`), A_pq = sum m p q^T and in quadratic mode the fit
 * ~A = ~A_pq ~A_qq, summed as sum m p w^T with the membership weights w = ~A_qq q~ (see
 * sm_k_weights). The sums are taken from the last step's x_cm, c (y = x - c): the rest offsets are
 * centred (sum m q = M b~ to float rounding, b~ the mean of the float rest offsets, sm_k_bias,
 * and sum m w = 0 since the quadratic terms are centred by their mass-weighted means), so sum m p
 * q^T = sum m y q^T and sum m p w^T = sum m y w^T to rounding, and x_cm = c + sum m (y - q) / M
 * + b~ exactly enough: y - q is the member's small move since the last step and from its rest
 * offset, so that sum rounds by little. One work-item per cluster sums its members in CSR order;
 * a cluster of large_threshold members or more (SM_K_LARGE_CLUSTER on a GPU,
 * SM_K_LARGE_CLUSTER_CPU on a CPU device) is summed by a work-group instead (each work-item a
 * strided share, then a tree in local memory), so that a cluster of a million particles is not
 * one work-item's loop, nor one float sum over all its members. Both orders are fixed, so the
 * result is the same every run. */
#include "sm_math.h"

/// Adds membership k to its cluster's sums, taken from c = c_hi + c_lo, the last step's x_cm, m
/// the membership's mass (member_q[k].w: its particle's mass shared by the clusters holding it):
/// sum += m (y - q) (w: 0) with y = x - c, momentum += m v, and columns[j] += m y q_j for j < 3
/// (A_pq's columns) and, in quadratic mode, m y w_(j-3) for j >= 3 (the fit's). y is formed
/// exactly (TwoSum: x and c are about the cluster's size apart near the origin, where a float
/// difference rounds by 1e-7 of that), and y - q is small. x_cm's error repeats every step at
/// rest, where alpha / h times it pushes the whole object: with the sum of m y from a member (a
/// compensated sum of rounded products), a cloud of 30 points at rest reached 0.58 m/s within a
/// second of steps of 1e-4 s.
inline void sm_add_member_moments(int k, float3 c_hi, float3 c_lo, bool quadratic, __global const int *member_particle,
                                  __global const float4 *member_q, __global const sm_k_weights *member_w,
                                  __global const float4 *position, __global const float4 *position_lo,
                                  __global const float4 *velocity, float4 *sum, float4 *momentum, float4 *columns)
{
#pragma OPENCL FP_CONTRACT OFF
    const int i = member_particle[k];
    const float3 x = position[i].xyz;
    const float4 q = member_q[k]; // w: the membership's mass
    float3 rounding;
    const float3 y_hi = sm_two_sum(x, -c_hi, &rounding), y_lo = rounding + (position_lo[i].xyz - c_lo);
    sum->xyz += ((y_hi - q.xyz) + y_lo) * q.w;
    const float4 my = (float4)((y_hi + y_lo) * q.w, 0.0f);
    *momentum += (float4)(velocity[i].xyz * q.w, 0.0f);
    columns[0] += my * q.x;
    columns[1] += my * q.y;
    columns[2] += my * q.z;
    if (quadratic) {
#pragma unroll
        for (int j = 0; j < 9; j++) columns[3 + j] += my * member_w[k].w[j];
    }
}

/// The last step's x_cm of cluster c, where the sums are taken from; where it is not finite (a
/// world that diverged and was mended), its anchor member's position instead: any point gives
/// the same x_cm, a nearby one the smallest rounding.
inline void sm_last_center(int c, sm_k_cluster cluster, __global const float4 *position, __global const float4 *center,
                           __global const float4 *center_offset, float3 *c_hi, float3 *c_lo)
{
    *c_hi = center[c].xyz, *c_lo = center_offset[c].xyz;
    if (!all(isfinite(*c_hi)) || !all(isfinite(*c_lo))) {
        *c_hi = cluster.member_count > 0 ? position[cluster.anchor].xyz : (float3)(0.0f);
        *c_lo = (float3)(0.0f);
    }
}

/// Stores cluster c's centre, x_cm = c + sum / M_c + b~ (as the float nearest to it and the rest),
/// mean velocity, A_pq and, in quadratic mode, its fit from the sums of sm_add_member_moments.
inline void sm_store_moments(int c, float3 c_hi, float3 c_lo, float3 bias, float mass, bool quadratic, float4 sum,
                             float4 momentum, const float4 *columns, __global float4 *center,
                             __global float4 *center_offset, __global float4 *cluster_velocity, __global sm_k_mat3 *apq,
                             __global sm_k_mat39 *fit9)
{
#pragma OPENCL FP_CONTRACT OFF
    const float3 move = mass > 0.0f ? sum.xyz * (1.0f / mass) + bias : (float3)(0.0f);
    float3 rounding;
    const float3 x_hi = sm_two_sum(c_hi, move + c_lo, &rounding);
    center[c] = (float4)(x_hi, mass);
    center_offset[c] = (float4)(rounding, 0.0f);
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
                                 __global sm_k_mat3 *apq, __global sm_k_mat39 *fit9, __global const sm_k_bias *goal_bias)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    if (cluster.member_count >= large_threshold) return; // sm_cluster_moments_group's
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;

    // the last step's x_cm (read before it is replaced), and the mean of the float rest offsets
    float3 c_hi, c_lo;
    sm_last_center(c, cluster, position, center, center_offset, &c_hi, &c_lo);
    const float3 bias = vload3(0, goal_bias[c].b);
    // one pass: sum m (y - q), and the columns of A_pq and of the fit as vectors, for a CPU's SIMD registers
    float4 sum = (float4)(0.0f), momentum = (float4)(0.0f), columns[12];
#pragma unroll
    for (int j = 0; j < 12; j++) columns[j] = (float4)(0.0f);
    for (int k = begin; k < end; k++)
        sm_add_member_moments(k, c_hi, c_lo, quadratic, member_particle, member_q, member_w, position, position_lo, velocity,
                              &sum, &momentum, columns);
    if (cluster.anchored) momentum = (float4)(0.0f); // held by a fixed member
    sm_store_moments(c, c_hi, c_lo, bias, cluster.mass, quadratic, sum, momentum, columns, center, center_offset,
                     cluster_velocity, apq, fit9);
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
                                       __global sm_k_mat39 *fit9, __global const sm_k_bias *goal_bias,
                                       __local float *scratch)
{
    const int g = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
    if (g >= large_count) return; // (whole groups only)
    const int c = large[g];
    const sm_k_cluster cluster = clusters[c];
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    const bool quadratic = objects[cluster.object].mode == SM_K_MODE_QUADRATIC;
    // the last step's x_cm (every work-item reads it before the first replaces it, after the sums'
    // barriers), and the mean of the float rest offsets
    float3 c_hi, c_lo;
    sm_last_center(c, cluster, position, center, center_offset, &c_hi, &c_lo);
    const float3 bias = vload3(0, goal_bias[c].b);

    // each work-item's share of the sums, then their sum over the group: sum m (y - q) in scratch
    // [0, 3), sum m v in [3, 6), column j's rows in [6 + 3 j, 9 + 3 j)
    float4 sum = (float4)(0.0f), momentum = (float4)(0.0f), columns[12];
    for (int j = 0; j < 12; j++) columns[j] = (float4)(0.0f);
    for (int k = begin + lid; k < end; k += size)
        sm_add_member_moments(k, c_hi, c_lo, quadratic, member_particle, member_q, member_w, position, position_lo, velocity,
                              &sum, &momentum, columns);
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
    sm_store_moments(c, c_hi, c_lo, bias, cluster.mass, quadratic, sum, momentum, columns, center, center_offset,
                     cluster_velocity, apq, fit9);
}
