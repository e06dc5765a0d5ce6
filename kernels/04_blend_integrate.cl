/* Pass 4, goal blending and integration (docs/algorithm.md steps 4a-4f): per particle, the mean of the
 * goals of the clusters holding it, gathered over its memberships in cluster order (no atomics,
 * so the sum has one order), then velocity, damping and position. The memberships are read from
 * a copy in particle order (particle_member_q: q~ and the cluster), so that a particle's and its
 * neighbours' sit side by side in memory rather than scattered over the clusters' rows. */
#include "sm_math.h"

/// g_i^c - x_i = T (q~ - b~) + x_cm - x_i for a membership of particle i in cluster c with rest
/// offset q~, T b~ the goal offset of the float rest offsets' mean (sm_k_bias), in the fourth row
/// of T's first columns. Formed from small terms, so that its rounding is small where it is:
/// ((anchor - x_hi) + q) + the rounding error of anchor - x_hi (TwoSum) + (offset - x_lo - T b~)
/// + (T - [I 0]) q~. (anchor - x_hi, exact as a pair, is about -q near rest, so adding q to it is
/// exact.) Summed as T q~ + (anchor - x_hi) + offset, terms about the cluster's size that cancel,
/// it was rounded by about 1e-7 of that size, the same every step at rest, which alpha / h turned
/// into a steady push (with x_cm exact, a cloud of 30 points at rest still reached 0.04 m/s in a
/// second of steps of 1e-4 s). (The particle's object gives the mode of every cluster holding it.)
inline float3 sm_cluster_goal_offset(int c, float3 q, float3 x_hi, float3 x_lo, bool quadratic,
                                     __global const sm_k_cluster_rest *rest, __global const float4 *center,
                                     __global const float4 *center_offset, __global const sm_k_mat39 *transform)
{
#pragma OPENCL FP_CONTRACT OFF
    __global const sm_k_mat39 *t = &transform[c];
    const float3 bias = (float3)(t->c[0][3], t->c[1][3], t->c[2][3]);
    float3 rounding;
    const float3 to_anchor = sm_two_sum(center[c].xyz, -x_hi, &rounding);
    float3 d = (to_anchor + q) + (rounding + ((center_offset[c].xyz - x_lo) - bias));
    // (T - [I 0]) q~, column by column
    d += (vload4(0, t->c[0]).xyz - (float3)(1.0f, 0.0f, 0.0f)) * q.x +
         (vload4(0, t->c[1]).xyz - (float3)(0.0f, 1.0f, 0.0f)) * q.y +
         (vload4(0, t->c[2]).xyz - (float3)(0.0f, 0.0f, 1.0f)) * q.z;
    return quadratic ? sm_add_quadratic_columns(d, t, q, rest[c].quad_mean) : d;
}

/// Blended goal (w: 0), then v += alpha (g - x) / h + h (gravity + f / m), damping, x += h v
/// with the rounding of the sum kept in position_lo. Fixed particles (force.w = 0, the inverse
/// mass) keep their state. `inputs` (SM_K_INPUT_*) adds the caller's forces and the targets: a
/// target of stiffness k > 0 takes the particle's move and velocity backward Euler's share of the
/// way to a pin's (sm_spring_share); a pinned particle ends on its target with velocity
/// (target - x) / h. start: the velocity each free particle began the step with, and in w its
/// slack (pass 7).
__kernel void sm_blend_integrate(const int particle_count, const float h, const float4 gravity,
                                 __global const int *particle_object, __global const sm_k_object *objects,
                                 __global const int *particle_member_offsets, __global const float4 *particle_member_q,
                                 __global const sm_k_cluster_rest *rest,
                                 __global const float4 *center, __global const float4 *center_offset,
                                 __global const float4 *cluster_velocity,
                                 __global const sm_k_mat39 *transform, __global const float4 *force,
                                 const int inputs, __global const float4 *input_force, __global const float4 *target,
                                 __global float4 *position, __global float4 *position_lo,
                                 __global float4 *velocity, __global float4 *goal, __global float4 *start)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    const float4 x = position[i]; // w: mass
    const float3 x_lo = position_lo[i].xyz;
    const sm_k_object object = objects[particle_object[i]];
    const bool quadratic = object.mode == SM_K_MODE_QUADRATIC;
    const int begin = particle_member_offsets[i], end = particle_member_offsets[i + 1];
    float3 d = (float3)(0.0f); // g - x
    // for the motion limit, the means of its clusters' sizes and velocities
    float size = 0.0f;
    float3 flow = (float3)(0.0f);
    if (end > begin) {
        float3 sum = (float3)(0.0f);
        for (int j = begin; j < end; j++) {
            const float4 q = particle_member_q[j]; // w: the cluster, as_int
            const int c = as_int(q.w);
            sum += sm_cluster_goal_offset(c, q.xyz, x.xyz, x_lo, quadratic, rest, center, center_offset, transform);
            size += rest[c].size;
            flow += cluster_velocity[c].xyz;
        }
        const float share = 1.0f / (float)(end - begin);
        d = sum * share;
        size *= share;
        flow *= share;
    }
    goal[i] = (float4)(x.xyz + (x_lo + d), 0.0f);
    float4 f = force[i]; // w: inverse mass, 0 for a fixed particle
    if (f.w == 0.0f) return;
    if (inputs & SM_K_INPUT_FORCES) f.xyz += input_force[i].xyz;

    const float alpha = sm_step_alpha(object.alpha, object.tau, h);
    const float damping = fmax(0.0f, 1.0f - object.damping * h);
    const float3 v_start = velocity[i].xyz;
    float3 v = v_start;
    v += d * (alpha / h);
    v += (gravity.xyz + f.xyz * f.w) * h;
    v *= damping;
    // the move, within one size of its clusters of their motion and of the goal carried along by
    // it (with the particle's own acceleration and damping: the limits act on what shape
    // matching does, not on gravity and the forces)
    const float3 u = (flow + (gravity.xyz + f.xyz * f.w) * h) * damping;
    float va[3] = {v.x, v.y, v.z}, m[3] = {h * v.x, h * v.y, h * v.z};
    const float da[3] = {d.x, d.y, d.z}, ua[3] = {u.x, u.y, u.z};
    if (end > begin && sm_limit_motion(va, da, ua, h, size, m)) v = (float3)(va[0], va[1], va[2]);
    float3 move = (float3)(m[0], m[1], m[2]);
    // the target: a spring pulls the move and the velocity toward the pin's by backward Euler's
    // share of the way (sm_spring_share); a pin puts it on the target, moving as it moved
    const float4 t = (inputs & SM_K_INPUT_TARGETS) ? target[i] : (float4)(0.0f);
    const float3 to_target = (t.xyz - x.xyz) - x_lo;
    if (t.w > 0.0f) {
        const float share = sm_spring_share(t.w, 0.0f, h, f.w);
        move += (to_target - move) * share;
        v += (to_target / h - v) * share;
    }
    velocity[i] = (float4)(v, 0.0f);
    // for pass 7: the velocity the step began with, and how far x - h v may lie from where it
    // began (the motion limit shortens the move more than the velocity)
    start[i] = (float4)(v_start, length(v * h - move));
    // x += the move in double-float
    float4 hi = x, lo = (float4)(x_lo, 0.0f);
    sm_add_pair(&hi, &lo, move);
    if (t.w == SM_K_TARGET_PIN) {
        velocity[i] = (float4)(to_target / h, 0.0f);
        start[i] = (float4)(v_start, 0.0f);
        hi = (float4)(t.xyz, x.w);
        lo = (float4)(0.0f);
    }
    position[i] = hi;
    position_lo[i] = lo;
}
