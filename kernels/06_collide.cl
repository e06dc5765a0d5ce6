/* Pass 6, collide (docs/algorithm.md step 8b; docs/contact.md): contact between particles. Each sweep
 * computes the correction of every particle with candidates from the positions and velocities
 * at the start of the sweep (sm_collide, over pass 5's list of them, each particle's candidates
 * visited in index order) and then applies them (sm_apply_contacts), so no work-item writes
 * what another reads. Every contact's correction is weighted by its depth: a contact that
 * just begins weighs nothing, so the response is continuous in the positions. A correction
 * moves the particle and gives it the velocity of the move, which stops the approach; the
 * first sweep also returns part of the approach speed (restitution) and removes part of the
 * tangential relative velocity (friction). */
#include "sm_shared.h"

/// Adds the contact of particle i with particle j, if they overlap, to the sums.
inline void sm_contact(const int i, const int j, const float h, const int respond, const float restitution,
                       const float friction, const float w_i, const float radius_i, const float3 x_i,
                       const float3 x_lo_i, const float3 v_i, __global const float4 *contact,
                       __global const float4 *force, __global const float4 *position,
                       __global const float4 *position_lo, __global const float4 *velocity, float3 *sum_dx,
                       float3 *sum_dv, float *weight)
{
    const float reach = radius_i + contact[j].w;
    // x_i - x_j from the double-float pairs: the difference of the high parts is exact for
    // nearby particles, so only the small result is rounded
    const float3 d = (x_i - position[j].xyz) + (x_lo_i - position_lo[j].xyz);
    const float dist2 = dot(d, d);
    if (!(dist2 < reach * reach)) return;
    // the normal: the pair's direction at the start of the step, x - h v
    const float3 v_rel = v_i - velocity[j].xyz;
    const float3 before = d - v_rel * h;
    const float before_length = length(before), dist = sqrt(dist2);
    const float3 n = before_length > 0.0f ? before / before_length
                     : dist > 0.0f        ? d / dist
                                          : (float3)(0.0f, i > j ? 1.0f : -1.0f, 0.0f);
    const float share = w_i / (w_i + force[j].w);
    const float depth = reach - dot(d, n);
    if (!(depth > 0.0f)) return;
    *sum_dx += n * (depth * share * depth);
    if (respond) {
        const float vn = dot(v_rel, n);
        float3 impulse = (v_rel - n * vn) * (-friction * share);
        if (vn < 0.0f) impulse += n * (-restitution * vn * share);
        *sum_dv += impulse * depth;
    }
    *weight += depth;
}

/// dx = (the weighted position correction, the sum of the weights), dv = (the weighted velocity
/// change, 0) of every particle with candidates (pass 5's `active` list; 0 for those that do not
/// collide or are fixed), over its candidates in index order; contact = (rest position, radius);
/// force.w: inverse mass. Particles without candidates have no contact, and nothing is written
/// for them.
__kernel void sm_collide(const float h, const int respond, const float restitution, const float friction,
                         SM_K_GRID_ARGS, __global const int *active, __global const int *list,
                         __global const int *count, __global const float4 *force, __global const float4 *position,
                         __global const float4 *position_lo, __global const float4 *velocity, __global float4 *dx,
                         __global float4 *dv)
{
    const int active_count = state[SM_K_ACTIVE_COUNT];
    SM_K_CHUNK(a, active_count) {
        const int i = active[a];
        // the list and data of a particle a few ahead: they lie far apart, and the wait for each
        // would hold up the sweep
        if (a + 4 < active_count) {
            const int ahead = active[a + 4];
            SM_K_PREFETCH(list + (size_t)ahead * SM_K_CANDIDATES);
            SM_K_PREFETCH(&contact[ahead]);
            SM_K_PREFETCH(&force[ahead]);
            SM_K_PREFETCH(&position[ahead]);
            SM_K_PREFETCH(&position_lo[ahead]);
            SM_K_PREFETCH(&velocity[ahead]);
        }
        const float4 c_i = contact[i];
        const float w_i = force[i].w;
        float3 sum_dx = (float3)(0.0f), sum_dv = (float3)(0.0f);
        float weight = 0.0f;
        if (c_i.w > 0.0f && w_i != 0.0f) { // colliding and not fixed
            const float3 x_i = position[i].xyz, x_lo_i = position_lo[i].xyz, v_i = velocity[i].xyz;
            const int candidates = count[i];
            if (candidates >= 0) {
                __global const int *own = list + (size_t)i * SM_K_CANDIDATES;
                for (int k = 0; k < candidates; k++)
                    sm_contact(i, own[k], h, respond, restitution, friction, w_i, c_i.w, x_i, x_lo_i, v_i, contact,
                               force, position, position_lo, velocity, &sum_dx, &sum_dv, &weight);
            } else { // more candidates than a list holds: one walk, keeping the SM_K_CONTACTS nearest overlaps
                const sm_k_grid g = SM_K_GRID();
                int kept[SM_K_CONTACTS];
                float kept_d2[SM_K_CONTACTS];
                int found = 0;
                sm_k_walk walk = sm_walk_begin(&g, objects, i);
                for (int j; (j = sm_walk_next(&walk, &g, i)) >= 0;) {
                    const float reach = c_i.w + contact[j].w;
                    const float3 d = (x_i - position[j].xyz) + (x_lo_i - position_lo[j].xyz);
                    const float d2 = dot(d, d);
                    if (!(d2 < reach * reach)) continue;
                    // nearest first, ties by index; when full, only a nearer one gets in
                    if (found == SM_K_CONTACTS &&
                        !(d2 < kept_d2[found - 1] || (d2 == kept_d2[found - 1] && j < kept[found - 1])))
                        continue;
                    int t = found < SM_K_CONTACTS ? found++ : found - 1;
                    for (; t > 0 && (kept_d2[t - 1] > d2 || (kept_d2[t - 1] == d2 && kept[t - 1] > j)); t--)
                        kept[t] = kept[t - 1], kept_d2[t] = kept_d2[t - 1];
                    kept[t] = j, kept_d2[t] = d2;
                }
                for (int m = 1; m < found; m++) { // summed in index order
                    const int j = kept[m];
                    int t = m;
                    for (; t > 0 && kept[t - 1] > j; t--) kept[t] = kept[t - 1];
                    kept[t] = j;
                }
                for (int k = 0; k < found; k++)
                    sm_contact(i, kept[k], h, respond, restitution, friction, w_i, c_i.w, x_i, x_lo_i, v_i, contact, force,
                               position, position_lo, velocity, &sum_dx, &sum_dv, &weight);
            }
        }
        dx[i] = (float4)(sum_dx, weight);
        dv[i] = (float4)(sum_dv, 0.0f);
    }
}

/// x += c and v += c / h with c = SM_K_CONTACT_RELAXATION dx / weight (x in double-float), and in
/// the responding sweep v += dv / weight, for the particles the sweep visited (`active`).
__kernel void sm_apply_contacts(const float h, const int respond, __global const int *state,
                                __global const int *active, __global const float4 *dx, __global const float4 *dv,
                                __global float4 *position, __global float4 *position_lo, __global float4 *velocity)
{
    SM_K_CHUNK(a, state[SM_K_ACTIVE_COUNT]) {
        const int i = active[a];
        const float4 correction = dx[i];
        if (!(correction.w > 0.0f)) continue;
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
}
