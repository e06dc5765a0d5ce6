/* Pass 6, collide (docs/algorithm.md step 6; docs/contact.md): contact between particles, in
 * `iterations` sweeps of sm_collide and one sm_apply_contacts. The first sweep finds each
 * particle's candidates in pass 5's grid and keeps them for the others. Every sweep computes
 * each particle's correction from the positions at the start of the sweep: the step's
 * positions plus the corrections of the sweeps before it, which it reads from one buffer and
 * writes, with its own added, to another, so that no work-item writes what another reads and
 * the positions themselves change once, in sm_apply_contacts. Every contact's correction is
 * weighted by its depth: a contact that just begins weighs nothing, so the response is
 * continuous in the positions. */
#include "sm_formulas.h"

/// Particle i's candidates (docs/contact.md): the particles j of the 27 cells around its own
/// (those its reach overlaps; in each bucket at most its first SM_K_CELL_VISITS slots, pass 5)
/// that may collide with it (another object's, or its own object's when that collides with
/// itself and they are not rest neighbours) and lie within the two radii plus the skin; of
/// those, the SM_K_CONTACTS of the smallest gaps (sm_contact_nearer), into own[] in index order.
/// Returns how many. Buckets that hold only its own object's particles (bucket_object, pass 5),
/// and in the others the runs of its own object's slots, are passed over unless it collides
/// with itself.
inline int sm_find_candidates(const int i, const float3 x_i, const float4 c_i, const int object, const bool self,
                              const int mask, const float inv_cell, const float skin,
                              __global const float4 *contact, __global const int *bucket_start,
                              __global const int *bucket_object, __global const sm_k_slot *slots, int *own)
{
    float key[SM_K_CONTACTS];
    int found = 0;
    const int3 cell = sm_cell(x_i, inv_cell);
    // the cells its reach overlaps (its radius, the largest and the skin: half a cell's edge plus
    // its radius and half the skin), widened against rounding, of the 27 around its own
    const float3 reach = (float3)((c_i.w + 0.5f * (1.0f / inv_cell + skin)) * 1.0001f) + fabs(x_i) * 1e-6f;
    const int3 lo = clamp(sm_cell(x_i - reach, inv_cell) - cell, -1, 0);
    const int3 hi = clamp(sm_cell(x_i + reach, inv_cell) - cell, 0, 1);
    for (int dz = lo.z; dz <= hi.z; dz++)
        for (int dy = lo.y; dy <= hi.y; dy++) {
            const int y = (int)((uint)cell.y + (uint)dy), z = (int)((uint)cell.z + (uint)dz);
            for (int dx = lo.x; dx <= hi.x; dx++) {
                const int x = (int)((uint)cell.x + (uint)dx);
                const int b = SM_K_CELL_HASH(x, y, z, mask), holds = bucket_object[b];
                if (holds == -1 || (holds == object && !self)) continue; // empty, or its own object's alone
                const int begin = bucket_start[b], end = min(bucket_start[b + 1], begin + SM_K_CELL_VISITS);
                for (int s = begin; s < end;) {
                    __global const sm_k_slot *slot = &slots[s++];
                    const int object_j = slot->object;
                    if (object_j == object && !self) { // the run of its own object's slots
                        s = slot->run_end;
                        continue;
                    }
                    const float4 other = vload4(0, slot->position);
                    const float3 d = x_i - other.xyz;
                    const float reach = c_i.w + other.w, limit = reach + skin, d2 = dot(d, d);
                    if (!(d2 < limit * limit)) continue;
                    const int3 c = sm_cell(other.xyz, inv_cell);
                    if (c.x != x || c.y != y || c.z != z) continue; // another cell's, sharing the bucket
                    const int j = slot->particle;
                    if (object_j == object) { // its own object's: never itself or a rest neighbour
                        const float3 rest = c_i.xyz - contact[j].xyz;
                        const float neighbours = SM_K_REST_NEIGHBOURS * reach;
                        if (j == i || dot(rest, rest) < neighbours * neighbours) continue;
                    }
                    found = sm_contact_keep(own, key, found, j, sqrt(d2) - reach);
                }
            }
        }
    sm_contact_order(own, found);
    return found;
}

/// Adds the contact of particle i with particle j, if they overlap, to the sums: `base` is
/// x_i - x_j at the step's positions, `moved` the corrections of i and j so far (c_i - c_j),
/// v_rel = v_i - v_j at the start of the contact pass.
inline void sm_contact(const int i, const int j, const float h, const int respond, const float restitution,
                       const float friction, const float push, const float w_i, const float w_j, const float reach,
                       const float3 base, const float3 moved, const float3 v_rel, float3 *sum_dx, float3 *sum_dv,
                       float *weight)
{
    const float3 d = base + moved;
    const float dist2 = dot(d, d);
    if (!(dist2 < reach * reach)) return;
    // the normal: the pair's direction at the start of the step, x - h v
    const float3 before = base - v_rel * h;
    const float before_length = length(before), dist = sqrt(dist2);
    const float3 n = before_length > 0.0f ? before / before_length
                     : dist > 0.0f        ? d / dist
                                          : (float3)(0.0f, i > j ? 1.0f : -1.0f, 0.0f);
    const float share = w_i / (w_i + w_j);
    const float depth = reach - dot(d, n);
    if (!(depth > 0.0f)) return;
    const float target = sm_contact_target(depth, reach, before_length, push);
    if (target > 0.0f) {
        // pushed apart along n, and the pair's sliding over the step (its relative motion h v_rel
        // across n) taken back as far as friction allows
        const float3 motion = v_rel * h;
        const float3 slide = motion - n * dot(motion, n);
        const float keep = sm_contact_friction(length(slide), friction, target);
        *sum_dx += (n * target - slide * keep) * (share * depth);
    }
    if (respond) { // the correction's velocity stops the approach; restitution returns part of it
        const float vn = dot(v_rel, n);
        if (vn < 0.0f) *sum_dv += n * (-restitution * vn * share * depth);
    }
    *weight += depth;
}

/// One sweep (`sweep` from 0): every particle's correction so far, moved_out[i] = moved_in[i] +
/// relaxation dx / weight (moved_in: zero in the first sweep, and not read), with dx and weight
/// the depth-weighted sums of its contacts with its candidates; in the first sweep its
/// candidates are found and kept (list, count), and dv[i] = the depth-weighted mean velocity
/// change of restitution. contact = (rest position, radius); force.w: inverse mass; push =
/// push_speed h / relaxation (sm_contact_target). Particles that do not collide or are fixed
/// have no correction.
__kernel void sm_collide(const int particle_count, const int sweep, const float h, const float restitution,
                         const float friction, const float relaxation, const float push, const int mask,
                         const float inv_cell, const float skin, __global const sm_k_object *objects,
                         __global const int *particle_object, __global const float4 *contact,
                         __global const int2 *bucket, __global const int *bucket_start,
                         __global const int *bucket_object, __global const int *bucket_near,
                         __global const sm_k_slot *slots, __global int *list,
                         __global int *count, __global const float4 *force, __global const float4 *position,
                         __global const float4 *position_lo, __global const float4 *velocity,
                         __global const float4 *moved_in, __global float4 *moved_out, __global float4 *dv)
{
    SM_K_CHUNK(i, particle_count) {
        const float4 c_i = contact[i];
        const float w_i = force[i].w;
        const float3 moved_i = sweep > 0 ? moved_in[i].xyz : (float3)(0.0f);
        float3 sum_dx = (float3)(0.0f), sum_dv = (float3)(0.0f);
        float weight = 0.0f;
        if (c_i.w > 0.0f) { // colliding
            const float3 x_i = position[i].xyz, x_lo_i = position_lo[i].xyz, v_i = velocity[i].xyz;
            int own[SM_K_CONTACTS];
            __global int *kept = list + (size_t)i * SM_K_CONTACTS;
            int candidates = 0;
            if (sweep == 0) {
                const int object = particle_object[i];
                const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
                // (no other object's particle in the cells around its own: no candidate, pass 5)
                if (self || bucket_near[bucket[i].x])
                    candidates = sm_find_candidates(i, x_i, c_i, object, self, mask, inv_cell, skin, contact,
                                                    bucket_start, bucket_object, slots, own);
                for (int k = 0; k < candidates; k++) kept[k] = own[k];
                count[i] = candidates;
            } else {
                candidates = count[i];
                for (int k = 0; k < candidates; k++) own[k] = kept[k];
            }
            if (w_i != 0.0f) // (a fixed particle does not move)
                for (int k = 0; k < candidates; k++) {
                    const int j = own[k];
                    // x_i - x_j from the double-float pairs: the difference of the high parts is exact
                    // for nearby particles, so only the small result is rounded
                    const float3 base = (x_i - position[j].xyz) + (x_lo_i - position_lo[j].xyz);
                    const float3 moved = sweep > 0 ? moved_i - moved_in[j].xyz : (float3)(0.0f);
                    sm_contact(i, j, h, sweep == 0, restitution, friction, push, w_i, force[j].w, c_i.w + contact[j].w,
                               base, moved, v_i - velocity[j].xyz, &sum_dx, &sum_dv, &weight);
                }
        }
        const float inv = weight > 0.0f ? 1.0f / weight : 0.0f;
        moved_out[i] = (float4)(moved_i + sum_dx * (relaxation * inv), 0.0f);
        if (sweep == 0) dv[i] = (float4)(sum_dv * inv, 0.0f);
    }
}

/// x += c (in double-float) and v += c / h + dv: each particle takes its correction c of all
/// the sweeps (`moved`), and the velocity of that move, and the first sweep's velocity change.
/// The objects and cells of the buckets (pass 5) are -1 again for the next step.
__kernel void sm_apply_contacts(const int particle_count, const float h, __global const float4 *moved,
                                __global const float4 *dv, __global const int2 *bucket, __global int *bucket_object,
                                __global int *bucket_cell, __global float4 *position, __global float4 *position_lo,
                                __global float4 *velocity)
{
    SM_K_CHUNK(i, particle_count) {
        const int own_bucket = bucket[i].x;
        if (own_bucket >= 0) bucket_object[own_bucket] = bucket_cell[own_bucket] = -1; // (every writer writes the same)
        const float3 step = moved[i].xyz, change = dv[i].xyz;
        if (all(step == (float3)(0.0f)) && all(change == (float3)(0.0f))) continue;
        const float4 x = position[i];
        // TwoSum keeps the rounding of x + step in the low part, as in the position update
        const float3 s = x.xyz + step;
        const float3 b = s - x.xyz;
        const float3 e = (x.xyz - (s - b)) + (step - b) + position_lo[i].xyz;
        const float3 hi = s + e;
        position[i] = (float4)(hi, x.w);
        position_lo[i] = (float4)(e - (hi - s), 0.0f);
        velocity[i] = (float4)(velocity[i].xyz + step * (1.0f / h) + change, 0.0f);
    }
}
