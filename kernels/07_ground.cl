/* Pass 7, ground, colliders and pusher (docs/algorithm.md steps 7, 7a and 7b): particles below y =
 * height are put back on the plane, their downward speed reflected with restitution and their
 * tangential velocity reduced by friction, by Coulomb's law and within the friction limit; then
 * particles inside a collider (a plane, box, sphere or mesh where the host says it is at the end
 * of this step) are moved out the shortest way and their velocity relative to it is treated like
 * the ground's. Depth a particle was in at the step's start leaves at no more than push_speed
 * (sm_overlap_target). Then particles inside the pusher sphere are put on its surface and lose
 * the inward part of their velocity relative to it. */
#include "sm_math.h"

SM_DEFINE_SDF_PUSH(sm_sdf_push, __global) // sm_formulas.h, shared with the reference

/// Whether d (from the collider's centre) is inside collider c; if so the shortest way out and
/// the outward normal (as sm_collider_push_out of the reference). fields: the mesh colliders'.
inline bool sm_push_out(__global const sm_k_collider *c, __global const float *fields, float3 d, float3 *push,
                        float3 *normal)
{
    const float3 a0 = (float3)(c->axes[0][0], c->axes[0][1], c->axes[0][2]);
    if (c->shape == SM_K_COLLIDER_PLANE) {
        const float s = dot(d, a0);
        if (!(s < 0.0f)) return false;
        *normal = a0;
        *push = -s * a0;
        return true;
    }
    if (c->shape == SM_K_COLLIDER_SPHERE) {
        const float distance = length(d);
        if (!(distance < c->size[3])) return false;
        *normal = distance > 0.0f ? d / distance : (float3)(0.0f, 1.0f, 0.0f);
        *push = (c->size[3] - distance) * *normal;
        return true;
    }
    const float3 a1 = (float3)(c->axes[1][0], c->axes[1][1], c->axes[1][2]);
    const float3 a2 = (float3)(c->axes[2][0], c->axes[2][1], c->axes[2][2]);
    const float along[3] = {dot(d, a0), dot(d, a1), dot(d, a2)};
    if (c->shape == SM_K_COLLIDER_MESH) { // in the mesh's unturned frame, out along the field's gradient
        const int nodes[3] = {c->nodes[0], c->nodes[1], c->nodes[2]};
        const float origin[3] = {c->origin[0], c->origin[1], c->origin[2]};
        float move[3], n[3];
        if (!sm_sdf_push_out(fields + c->field_first, nodes, origin, c->origin[3], along, move, n)) return false;
        *normal = n[0] * a0 + n[1] * a1 + n[2] * a2;
        *push = move[0] * a0 + move[1] * a1 + move[2] * a2;
        return true;
    }
    int best = -1;
    float best_depth = 0.0f;
    for (int k = 0; k < 3; k++) {
        const float depth = c->size[k] - fabs(along[k]);
        if (!(depth > 0.0f)) return false;
        if (best < 0 || depth < best_depth) best = k, best_depth = depth;
    }
    const float3 axis = best == 0 ? a0 : (best == 1 ? a1 : a2);
    *normal = along[best] < 0.0f ? -axis : axis;
    *push = best_depth * *normal;
    return true;
}

/// The means over particle i's clusters of their sizes (the motion limit's, summed as pass 4 sums
/// them) and velocities v_cm (its body's velocity at the step's start): size 0 and its own start
/// velocity `own` for a particle in none.
inline void sm_cluster_means(const int i, const float3 own, __global const int *particle_member_offsets,
                             __global const float4 *particle_member_q, __global const sm_k_cluster_rest *rest,
                             __global const float4 *cluster_velocity, float *size, float3 *flow)
{
    const int begin = particle_member_offsets[i], end = particle_member_offsets[i + 1];
    *size = 0.0f;
    *flow = end > begin ? (float3)(0.0f) : own;
    for (int j = begin; j < end; j++) {
        const int c = as_int(particle_member_q[j].w);
        *size += rest[c].size;
        *flow += cluster_velocity[c].xyz;
    }
    if (end > begin) {
        const float share = 1.0f / (float)(end - begin);
        *size *= share;
        *flow *= share;
    }
}

/// The share of a sliding speed `slide` that `friction` takes from particle i in a step of h,
/// pressed in at `pressed` (sm_friction_share), within the friction limit of its object's
/// stiffness and its clusters' mean size `size`.
inline float sm_particle_friction(const int i, const float friction, const float slide, const float pressed,
                                  const float size, const float h, __global const int *particle_object,
                                  __global const sm_k_object *objects)
{
    __global const sm_k_object *object = &objects[particle_object[i]];
    return sm_friction_share(friction, slide, pressed, sm_step_alpha(object->alpha, object->tau, h), size, h);
}

/// With SM_K_CONTACTS_MADE in `flags` (pass 6 ran), first the contact corrections: x += c (in
/// double-float), v += c / h + dv, c = moved[i].xyz the sum of its
/// corrections of all the sweeps and dv the first sweep's velocity change. Then ground contact,
/// the colliders, then the pusher, of every free particle. ground = (height,
/// restitution, friction, height's remainder), the height being a double-float pair like the
/// positions; pusher = (centre, radius) and pusher_lo = (the centre's remainder, 0), a
/// double-float pair like the positions; pusher_velocity = (velocity, 0); `flags` holds
/// SM_K_GROUND and SM_K_PUSHER for the parts that are on; collider_state[state_first + c] is
/// where collider c is at the start of this step, collider_state[state_first + collider_count +
/// c] where it is at its end. step_start: the velocity the particle began the step with and its
/// slack (pass 4). limit = push_speed h: the most of the depth a particle began the step in that
/// leaves in it (sm_overlap_target). Restitution returns no more than the approach the particle
/// or its body began the step with (sm_rebound; its body's: the mean of its clusters'
/// cluster_velocity), and friction to Coulomb's bound (sm_friction_share) and the friction
/// limit of the particle's object and clusters (particle_object, objects,
/// particle_member_offsets, particle_member_q and rest as in pass 4).
__kernel void sm_ground(const int particle_count, const int flags, const float4 ground, const float4 pusher,
                        const float4 pusher_lo, const float4 pusher_velocity, const int collider_count,
                        __global const sm_k_collider *colliders, __global const float *fields, const int state_first,
                        __global const sm_k_collider_state *collider_state,
                        __global const float4 *force, __global const float4 *step_start, const float h,
                        const float limit,
                        __global const float4 *moved_by_contact,
                        __global const float4 *dv, __global const int *particle_object,
                        __global const sm_k_object *objects, __global const int *particle_member_offsets,
                        __global const float4 *particle_member_q, __global const sm_k_cluster_rest *rest,
                        __global const float4 *cluster_velocity,
                        __global float4 *position, __global float4 *position_lo, __global float4 *velocity)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return; // padding
    if (force[i].w == 0.0f) return; // fixed (no correction of contact either)
    float4 x = position[i];
    float4 x_lo = position_lo[i];
    float4 v = velocity[i];
    bool moved = false;
    if (flags & SM_K_CONTACTS_MADE) {
        const float3 step = moved_by_contact[i].xyz, change = dv[i].xyz;
        if (any(step != (float3)(0.0f)) || any(change != (float3)(0.0f))) {
            sm_add_pair(&x, &x_lo, step);
            v.xyz += step * (1.0f / h) + change;
            moved = true;
        }
    }
    // the step moved the particle by h v (contact's corrections moved both alike): where it began
    // is x - h v, taken relative to each solid below, within its slack (pass 4's, and contact's
    // velocity change): the depth it began in, at least
    const float3 motion = v.xyz * h;
    const float3 entry = x.xyz, entry_lo = x_lo.xyz; // (x - motion: where it began)
    const float4 began = step_start[i]; // (velocity, slack)
    float slack = began.w;
    if (flags & SM_K_CONTACTS_MADE) slack += h * length(dv[i].xyz);
    // its clusters' mean size and velocity, once it touches a solid
    float size = 0.0f;
    float3 flow = (float3)(0.0f);
    bool means = false;
    if (flags & SM_K_GROUND) {
        const float depth = -((x.y - ground.x) + (x_lo.y - ground.w));
        if (depth > 0.0f) {
            const float before = (motion.y - ((entry.y - ground.x) + (entry_lo.y - ground.w))) - slack;
            const float target = sm_overlap_target(depth, before, limit);
            if (target >= depth) {
                x.y = ground.x;
                x_lo.y = ground.w;
            } else if (target > 0.0f) {
                sm_add_pair(&x, &x_lo, (float3)(0.0f, target, 0.0f));
            }
            sm_cluster_means(i, began.xyz, particle_member_offsets, particle_member_q, rest, cluster_velocity, &size, &flow);
            means = true;
            float pressed = 0.0f;
            if (v.y < 0.0f) {
                const float rebound = sm_rebound(ground.y, -v.y, -began.y, -flow.y);
                pressed = rebound - v.y;
                v.y = rebound;
            }
            const float share = sm_particle_friction(i, ground.z, hypot(v.x, v.z), pressed, size, h, particle_object, objects);
            v.x *= 1.0f - share;
            v.z *= 1.0f - share;
            moved = true;
        }
    }
    for (int c = 0; c < collider_count; c++) {
        __global const sm_k_collider_state *start = &collider_state[state_first + c];
        __global const sm_k_collider_state *state = &collider_state[state_first + collider_count + c];
        const float3 center = (float3)(state->center[0], state->center[1], state->center[2]);
        const float3 center_lo = (float3)(state->center_lo[0], state->center_lo[1], state->center_lo[2]);
        const float3 d = (x.xyz - center) + (x_lo.xyz - center_lo);
        float3 push, n;
        if (!sm_push_out(&colliders[c], fields, d, &push, &n)) continue;
        // where the particle began the step, from where the collider was then
        const float3 offset = ((entry - (float3)(start->center[0], start->center[1], start->center[2])) +
                              (entry_lo - (float3)(start->center_lo[0], start->center_lo[1], start->center_lo[2]))) -
                             motion;
        float3 push_before, n_before;
        const float before = sm_push_out(&colliders[c], fields, offset, &push_before, &n_before)
                                 ? length(push_before) - slack
                                 : 0.0f;
        if (!means) {
            sm_cluster_means(i, began.xyz, particle_member_offsets, particle_member_q, rest, cluster_velocity, &size, &flow);
            means = true;
        }
        const float depth = length(push), target = sm_overlap_target(depth, before, limit);
        if (target >= depth) sm_add_pair(&x, &x_lo, push);
        else if (target > 0.0f) sm_add_pair(&x, &x_lo, push * (target / depth));
        const float3 solid = (float3)(state->velocity[0], state->velocity[1], state->velocity[2]);
        float3 relative = v.xyz - solid;
        float normal = dot(relative, n), pressed = 0.0f;
        if (normal < 0.0f) {
            const float rebound =
                sm_rebound(colliders[c].restitution, -normal, -dot(began.xyz - solid, n), -dot(flow - solid, n));
            relative += (rebound - normal) * n;
            pressed = rebound - normal;
            normal = rebound;
        }
        const float3 tangential = relative - normal * n;
        relative -= sm_particle_friction(i, colliders[c].friction, length(tangential), pressed, size, h, particle_object,
                                         objects) *
                    tangential;
        v.xyz = solid + relative;
        moved = true;
    }
    if (flags & SM_K_PUSHER) {
        const float3 d = (x.xyz - pusher.xyz) + (x_lo.xyz - pusher_lo.xyz);
        const float distance = length(d);
        if (distance < pusher.w) {
            const float3 n = distance > 0.0f ? d / distance : (float3)(0.0f, 1.0f, 0.0f);
            // x = c + r n in double-float
            x.xyz = pusher.xyz;
            x_lo.xyz = pusher_lo.xyz;
            sm_add_pair(&x, &x_lo, pusher.w * n);
            const float approach = dot(v.xyz - pusher_velocity.xyz, n);
            if (approach < 0.0f) v.xyz -= approach * n;
            moved = true;
        }
    }
    if (!moved) return;
    position[i] = x;
    position_lo[i] = x_lo;
    velocity[i] = v;
}
