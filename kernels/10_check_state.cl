/* Pass 10, the state check (sm_world_def.check_interval): the lowest index of a particle whose
 * position or velocity is not finite, of one faster than check_speed, and of a cluster whose
 * particles lie farther from its centre of mass than check_extent times its object's strain
 * limit times its size, each INT_MAX when there is none. An atomic minimum on an int gives the
 * same answer in any order. */
#include "sm_formulas.h"

#define SM_K_CHECK_NOT_FINITE 0
#define SM_K_CHECK_FAST 1
#define SM_K_CHECK_STRETCHED 2

/// first[SM_K_CHECK_NOT_FINITE] and first[SM_K_CHECK_FAST] (INT_MAX before the pass) become the
/// lowest indices of a non-finite particle and of one faster than `speed` (0: not checked).
__kernel void sm_check_particles(const int particle_count, const float speed, __global const float4 *position,
                                 __global const float4 *position_lo, __global const float4 *velocity,
                                 __global int *first)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    const float3 x = position[i].xyz, lo = position_lo[i].xyz, v = velocity[i].xyz;
    const bool finite = isfinite(x.x) && isfinite(x.y) && isfinite(x.z) && isfinite(lo.x) && isfinite(lo.y) &&
                        isfinite(lo.z) && isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
    if (!finite) atomic_min(&first[SM_K_CHECK_NOT_FINITE], i);
    else if (speed > 0.0f && dot(v, v) > speed * speed) atomic_min(&first[SM_K_CHECK_FAST], i);
}

/// first[SM_K_CHECK_STRETCHED] becomes the lowest index of a cluster stretched beyond `extent`
/// times its object's strain limit times its size (sm_cluster_stretched; extent 0: not checked).
__kernel void sm_check_clusters(const int cluster_count, const float extent, __global const sm_k_cluster *clusters,
                                __global const sm_k_object *objects, __global const sm_k_cluster_rest *rest,
                                __global const int *member_particle, __global const float4 *member_q,
                                __global const float4 *position, __global const float4 *position_lo,
                                __global int *first)
{
    const int c = get_global_id(0);
    if (c >= cluster_count || !(extent > 0.0f)) return;
    const sm_k_cluster cluster = clusters[c];
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    if (end <= begin) return;
    // the centre of mass, from the anchor, then the farthest member (as in pass 1)
    const float3 anchor = position[cluster.anchor].xyz;
    float3 sum = (float3)(0.0f);
    for (int k = begin; k < end; k++) {
        const int i = member_particle[k];
        sum += ((position[i].xyz - anchor) + position_lo[i].xyz) * member_q[k].w; // (w: the membership's mass)
    }
    const float3 center = sum / cluster.mass;
    float farthest = 0.0f;
    for (int k = begin; k < end; k++) {
        const int i = member_particle[k];
        farthest = fmax(farthest, length(((position[i].xyz - anchor) + position_lo[i].xyz) - center));
    }
    const float at[3] = {anchor.x, anchor.y, anchor.z};
    if (sm_cluster_stretched(farthest, extent, objects[cluster.object].strain_limit, rest[c].size, at))
        atomic_min(&first[SM_K_CHECK_STRETCHED], c);
}
