/* Pass 6, collide (step 8b of the README's time step): contact between particles. Each sweep
 * computes every particle's correction from the positions and velocities at the start of the
 * sweep (sm_collide, one work-item per particle, its neighbours visited in a fixed order: the
 * 27 cells x fastest, each cell's bucket by particle index, the particles of other cells in
 * that bucket skipped) and then applies them (sm_apply_contacts),
 * so no work-item writes what another reads. Every contact's correction is weighted by its
 * depth: a contact that just begins weighs nothing, so the response is continuous in the
 * positions. A correction moves the particle and gives it the velocity of the move, which
 * stops the approach; the first sweep also returns part of the approach speed (restitution)
 * and removes part of the tangential relative velocity (friction). */
#include "sm_shared.h"

/// dx = (the weighted position correction, the sum of the weights), dv = (the weighted velocity
/// change, 0) of every colliding particle, taken in sorted order (work-items of one bucket share
/// their neighbours); contact = (rest position, radius); force.w: inverse mass.
__kernel void sm_collide(const int colliding, const float h, const int mask, const int respond, const float restitution,
                         const float friction, __global const int *particle_object,
                         __global const sm_k_object *objects, __global const float4 *contact,
                         __global const int4 *cell, __global const int *bucket_start, __global const int *sorted,
                         __global const int4 *sorted_cell, __global const int *bucket_object, __global const float4 *force,
                         __global const float4 *position, __global const float4 *position_lo,
                         __global const float4 *velocity, __global float4 *dx, __global float4 *dv)
{
    const int k = get_global_id(0);
    if (k >= colliding) return;
    const int i = sorted[k];
    const float w_i = force[i].w;
    if (w_i == 0.0f) { // fixed
        dx[i] = (float4)(0.0f);
        return;
    }
    const int4 own = cell[i];
    const float4 c_i = contact[i];
    const int object = particle_object[i];
    const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
    const float3 x_i = position[i].xyz, x_lo_i = position_lo[i].xyz, v_i = velocity[i].xyz;
    float3 sum_dx = (float3)(0.0f), sum_dv = (float3)(0.0f);
    float weight = 0.0f;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dxc = -1; dxc <= 1; dxc++) {
                const int3 c = (int3)((int)((uint)own.x + (uint)dxc), (int)((uint)own.y + (uint)dy),
                                      (int)((uint)own.z + (uint)dz));
                const int bucket = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
                if (!self && bucket_object[bucket] == object) continue; // only its own particles
                const int end = bucket_start[bucket + 1];
                for (int s = bucket_start[bucket]; s < end; s++) {
                    // (cell, object) of the particle in slot s; other cells sharing the bucket are skipped
                    const int4 other = sorted_cell[s];
                    if (other.x != c.x || other.y != c.y || other.z != c.z) continue;
                    const int j = sorted[s];
                    if (j == i || (other.w == object && !self)) continue;
                    const float4 c_j = contact[j];
                    const float reach = c_i.w + c_j.w;
                    if (other.w == object) {
                        const float3 rest = c_i.xyz - c_j.xyz;
                        const float neighbours = SM_K_REST_NEIGHBOURS * reach;
                        if (dot(rest, rest) < neighbours * neighbours) continue;
                    }
                    // x_i - x_j from the double-float pairs: the difference of the high parts is exact
                    // for nearby particles, so only the small result is rounded
                    const float3 d = (x_i - position[j].xyz) + (x_lo_i - position_lo[j].xyz);
                    const float dist2 = dot(d, d);
                    if (!(dist2 < reach * reach)) continue;
                    // the normal: the pair's direction at the start of the step, x - h v
                    const float3 v_rel = v_i - velocity[j].xyz;
                    const float3 before = d - v_rel * h;
                    const float before_length = length(before), dist = sqrt(dist2);
                    const float3 n = before_length > 0.0f ? before / before_length
                                     : dist > 0.0f        ? d / dist
                                                          : (float3)(0.0f, i > j ? 1.0f : -1.0f, 0.0f);
                    const float share = w_i / (w_i + force[j].w);
                    const float depth = reach - dot(d, n);
                    if (!(depth > 0.0f)) continue;
                    sum_dx += n * (depth * share * depth);
                    if (respond) {
                        const float vn = dot(v_rel, n);
                        float3 impulse = (v_rel - n * vn) * (-friction * share);
                        if (vn < 0.0f) impulse += n * (-restitution * vn * share);
                        sum_dv += impulse * depth;
                    }
                    weight += depth;
                }
            }
    dx[i] = (float4)(sum_dx, weight);
    dv[i] = (float4)(sum_dv, 0.0f);
}

/// x += c and v += c / h with c = SM_K_CONTACT_RELAXATION dx / weight (x in double-float), and in
/// the responding sweep v += dv / weight.
__kernel void sm_apply_contacts(const int colliding, const float h, const int respond, __global const int *sorted,
                                __global const float4 *dx, __global const float4 *dv, __global float4 *position,
                                __global float4 *position_lo, __global float4 *velocity)
{
    const int k = get_global_id(0);
    if (k >= colliding) return;
    const int i = sorted[k];
    const float4 correction = dx[i];
    if (!(correction.w > 0.0f)) return;
    const float inv = 1.0f / correction.w;
    const float4 x = position[i];
    const float3 step = correction.xyz * (SM_K_CONTACT_RELAXATION * inv);
    // TwoSum keeps the rounding of x + step in the low part, as in the position update
    const float3 s = x.xyz + step;
    const float3 b = s - x.xyz;
    const float3 e = (x.xyz - (s - b)) + (step - b) + position_lo[i].xyz;
    const float3 hi = s + e;
    position[i] = (float4)(hi, x.w);
    position_lo[i] = (float4)(e - (hi - s), 0.0f);
    float3 v = velocity[i].xyz + step * (1.0f / h); // the move's velocity
    if (respond) v += dv[i].xyz * inv;
    velocity[i] = (float4)(v, 0.0f);
}
