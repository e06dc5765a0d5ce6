/* Pass 9, skinned surfaces (docs/algorithm.md step 9), once per sm_world_step() after its steps: per
 * cluster the centre of mass of the positions after the step (as pass 1, an anchor plus an
 * offset); per surface vertex the mean over the clusters it is bound to of T q~ + c, with q = S_p r
 * its plastic rest offset from the cluster's rest centre; then per vertex the normalised sum of
 * the area-weighted normals of the triangles around it, in triangle order. No atomics: every sum
 * has one order. */
#include "sm_math.h"

/// The centre of mass of every cluster: skin_center (the anchor) + skin_center_offset.
__kernel void sm_skin_centers(const int cluster_count, __global const sm_k_cluster *clusters,
                              __global const int *member_particle, __global const float4 *member_q,
                              __global const float4 *position, __global const float4 *position_lo,
                              __global float4 *skin_center, __global float4 *skin_center_offset)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    const float3 anchor = cluster.member_count > 0 ? position[cluster.anchor].xyz : (float3)(0.0f);
    float3 sum = (float3)(0.0f);
    for (int k = cluster.first_member; k < cluster.first_member + cluster.member_count; k++) {
        const int i = member_particle[k];
        sum += ((position[i].xyz - anchor) + position_lo[i].xyz) * member_q[k].w; // (w: the membership's mass)
    }
    skin_center[c] = (float4)(anchor, 0.0f);
    skin_center_offset[c] = (float4)(sum * (1.0f / cluster.mass), 0.0f);
}

/// Every bound surface vertex: the mean of T q~ + c over its clusters, formed relative to the
/// first cluster's anchor so that only small differences are rounded. Unbound vertices keep
/// their rest position.
__kernel void sm_skin_vertices(const int vertex_count, __global const int *binding_offsets,
                               __global const int *binding_cluster, __global const float4 *binding_rest,
                               __global const sm_k_cluster *clusters, __global const sm_k_object *objects,
                               __global const sm_k_cluster_rest *rest, __global const sm_k_mat3 *plastic,
                               __global const sm_k_mat39 *transform, __global const float4 *skin_center,
                               __global const float4 *skin_center_offset, __global float4 *surface_position)
{
    const int v = get_global_id(0);
    if (v >= vertex_count) return;
    const int begin = binding_offsets[v], end = binding_offsets[v + 1];
    if (end == begin) return;
    const float3 base = skin_center[binding_cluster[begin]].xyz;
    float3 sum = (float3)(0.0f);
    for (int b = begin; b < end; b++) {
        const int c = binding_cluster[b];
        float s[9];
        sm_load_mat3(&plastic[c], s);
        const float3 r = binding_rest[b].xyz;
        const float3 q = (float3)(s[0] * r.x + s[1] * r.y + s[2] * r.z, s[3] * r.x + s[4] * r.y + s[5] * r.z,
                                  s[6] * r.x + s[7] * r.y + s[8] * r.z);
        const float3 g = sm_add_transformed(skin_center_offset[c].xyz, &transform[c], q,
                                            objects[clusters[c].object].mode == SM_K_MODE_QUADRATIC, rest[c].quad_mean);
        sum += (skin_center[c].xyz - base) + g;
    }
    surface_position[v] = (float4)(base + sum * (1.0f / (float)(end - begin)), 1.0f);
}

/// Every surface vertex's unit normal: the sum of cross(b - a, c - a) over the triangles
/// around it, normalised (0 when they have no area).
__kernel void sm_skin_normals(const int vertex_count, __global const int *incident_offsets,
                              __global const int *incident, __global const int *triangles,
                              __global const float4 *surface_position, __global float4 *surface_normal)
{
    const int v = get_global_id(0);
    if (v >= vertex_count) return;
    float3 sum = (float3)(0.0f);
    for (int j = incident_offsets[v]; j < incident_offsets[v + 1]; j++) {
        const int t = incident[j];
        const float3 a = surface_position[triangles[3 * t]].xyz;
        const float3 b = surface_position[triangles[3 * t + 1]].xyz;
        const float3 c = surface_position[triangles[3 * t + 2]].xyz;
        sum += cross(b - a, c - a);
    }
    const float l = length(sum);
    surface_normal[v] = (float4)(l > 0.0f ? sum / l : (float3)(0.0f), 0.0f);
}
