/* Pass 6, collide (docs/algorithm.md step 6; docs/contact.md): contact between particles.
 * sm_find_contacts finds each particle's candidates in pass 5's grid and its weight (the sum of
 * its contacts' depths at the step's positions); then `iterations` sweeps of sm_collide. Every
 * sweep computes each particle's correction from the positions at the start of the sweep: the
 * step's positions plus the corrections of the sweeps before it, which it reads from one buffer
 * and writes, with its own added, to another, so that no work-item writes what another reads;
 * the positions themselves change once, at the start of pass 7 (sm_ground). Each particle takes
 * its part of each contact by mass splitting over the contacts' depths at the step's positions
 * (sm_contact_split): a contact that just begins weighs nothing, so the response is continuous
 * in the positions, and the two particles of a pair take parts of equal momentum, so contact
 * conserves momentum. */
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

/// The normal of the pair (i, j): its direction at the start of the step, base - h v_rel
/// normalised (base = x_i - x_j at the step's positions), else base's direction, else +y for the
/// higher index; returns |base - h v_rel|.
inline float sm_pair_normal(const int i, const int j, const float3 base, const float3 v_rel, const float h, float3 *n)
{
    const float3 before = base - v_rel * h;
    const float before_length = length(before), base_length = length(base);
    *n = before_length > 0.0f ? before / before_length
         : base_length > 0.0f ? base / base_length
                              : (float3)(0.0f, i > j ? 1.0f : -1.0f, 0.0f);
    return before_length;
}

/// The pair's depth at the step's positions along its normal, reach - base·n, where the pair
/// overlaps there (|base| < reach), else 0: its weight in every sweep of the step.
inline float sm_pair_depth(const float3 base, const float3 n, const float reach)
{
    return dot(base, base) < reach * reach ? fmax(reach - dot(base, n), 0.0f) : 0.0f;
}

/// Adds the contact of particle i with particle j to the sums, i's part of it `w`
/// (sm_contact_split: the pair's corrections change no momentum): `base` is x_i - x_j at the
/// step's positions, `moved` the corrections of i and j so far (c_i - c_j), n the pair's normal
/// (sm_pair_normal), v_rel = v_i - v_j at the start of the contact pass.
inline void sm_contact(const float w, const float h, const int respond, const float restitution, const float friction,
                       const float push, const float reach, const float before_length, const float3 n, const float3 base,
                       const float3 moved, const float3 v_rel, float3 *sum_dx, float3 *sum_dv)
{
    const float3 d = base + moved;
    if (!(dot(d, d) < reach * reach)) return;
    const float depth = reach - dot(d, n);
    if (!(depth > 0.0f)) return;
    const float target = sm_contact_target(depth, reach, before_length, push);
    if (target > 0.0f) {
        // pushed apart along n, and the pair's sliding over the step (its relative motion h v_rel
        // across n) taken back as far as friction allows
        const float3 motion = v_rel * h;
        const float3 slide = motion - n * dot(motion, n);
        const float keep = sm_contact_friction(length(slide), friction, target);
        *sum_dx += (n * target - slide * keep) * w;
    }
    if (respond) { // the correction's velocity stops the approach; restitution returns part of it
        const float vn = dot(v_rel, n);
        if (vn < 0.0f) *sum_dv += n * (-restitution * vn * w);
    }
}

/// x_i - x_j from the double-float pairs: the difference of the high parts is exact for nearby
/// particles, so only the small result is rounded.
inline float3 sm_pair_offset(const int i, const int j, __global const float4 *position, __global const float4 *position_lo)
{
    return (position[i].xyz - position[j].xyz) + (position_lo[i].xyz - position_lo[j].xyz);
}

/// Each colliding particle's candidates (sm_find_candidates; none without another object's
/// particle in the cells around its own, pass 5) into list and count, and its weight W_i, the sum
/// of its candidates' depths at the step's positions (sm_pair_depth), into moved[i].w, with
/// moved[i].xyz = 0: the first sweep's corrections so far.
__kernel void sm_find_contacts(const int particle_count, const float h, const int mask, const float inv_cell,
                               const float skin, __global const sm_k_object *objects,
                               __global const int *particle_object, __global const float4 *contact,
                               __global const int2 *bucket, __global const int *bucket_start,
                               __global const int *bucket_object, __global const int *bucket_near,
                               __global const sm_k_slot *slots, __global int *list, __global int *count,
                               __global const float4 *position, __global const float4 *position_lo,
                               __global const float4 *velocity, __global float4 *moved)
{
    SM_K_CHUNK(i, particle_count) {
        const float4 c_i = contact[i];
        float weight = 0.0f;
        int candidates = 0;
        if (c_i.w > 0.0f) { // colliding
            const int object = particle_object[i];
            const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
            int own[SM_K_CONTACTS];
            if (self || bucket_near[bucket[i].x])
                candidates = sm_find_candidates(i, position[i].xyz, c_i, object, self, mask, inv_cell, skin, contact,
                                                bucket_start, bucket_object, slots, own);
            __global int *kept = list + (size_t)i * SM_K_CONTACTS;
            const float3 v_i = velocity[i].xyz;
            for (int k = 0; k < candidates; k++) {
                const int j = own[k];
                kept[k] = j;
                const float3 base = sm_pair_offset(i, j, position, position_lo);
                float3 n;
                sm_pair_normal(i, j, base, v_i - velocity[j].xyz, h, &n);
                weight += sm_pair_depth(base, n, c_i.w + contact[j].w);
            }
        }
        count[i] = candidates;
        moved[i] = (float4)(0.0f, 0.0f, 0.0f, weight);
    }
}

/// One sweep (`sweep` from 0): every particle's correction so far, moved_out[i].xyz =
/// moved_in[i].xyz + relaxation Σ_j s_ij (t n - k s) over its candidates j (sm_contact), with i's
/// part of the pair s_ij = sm_contact_split(the pair's depth at the step's positions, the inverse
/// masses, W_i, W_j), W = moved_in[].w (sm_find_contacts; carried on in moved_out[i].w); in the
/// first sweep also dv[i] = the velocity change of restitution. m_i s_ij = m_j s_ji, so the
/// corrections of a pair on both its particles' lists change no momentum, and Σ_j s_ij <= 1
/// bounds a particle's correction by its deepest contact's.
/// contact = (rest position, radius); force.w: inverse mass; push = push_speed h / relaxation
/// (sm_contact_target). Particles that do not collide or are fixed have no correction.
__kernel void sm_collide(const int particle_count, const int sweep, const float h, const float restitution,
                         const float friction, const float relaxation, const float push,
                         __global const float4 *contact, __global const int *list, __global const int *count,
                         __global const float4 *force, __global const float4 *position,
                         __global const float4 *position_lo, __global const float4 *velocity,
                         __global const float4 *moved_in, __global float4 *moved_out, __global float4 *dv)
{
    SM_K_CHUNK(i, particle_count) {
        const float4 c_i = contact[i], in_i = moved_in[i];
        const float w_i = force[i].w;
        const float3 moved_i = sweep > 0 ? in_i.xyz : (float3)(0.0f);
        float3 sum_dx = (float3)(0.0f), sum_dv = (float3)(0.0f);
        const int candidates = c_i.w > 0.0f && w_i != 0.0f ? count[i] : 0; // (a fixed particle does not move)
        __global const int *kept = list + (size_t)i * SM_K_CONTACTS;
        const float3 v_i = velocity[i].xyz;
        for (int k = 0; k < candidates; k++) {
            const int j = kept[k];
            const float4 in_j = moved_in[j];
            const float3 base = sm_pair_offset(i, j, position, position_lo), v_rel = v_i - velocity[j].xyz;
            const float reach = c_i.w + contact[j].w;
            float3 n;
            const float before_length = sm_pair_normal(i, j, base, v_rel, h, &n);
            const float w = sm_contact_split(sm_pair_depth(base, n, reach), w_i, in_i.w, force[j].w, in_j.w);
            if (!(w > 0.0f)) continue;
            const float3 moved = sweep > 0 ? moved_i - in_j.xyz : (float3)(0.0f);
            sm_contact(w, h, sweep == 0, restitution, friction, push, reach, before_length, n, base, moved, v_rel, &sum_dx,
                       &sum_dv);
        }
        moved_out[i] = (float4)(moved_i + sum_dx * relaxation, in_i.w);
        if (sweep == 0) dv[i] = (float4)(sum_dv, 0.0f);
    }
}
