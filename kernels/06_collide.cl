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

/// Cell k of the 27 around `cell` (k = dx + 1 + 3 (dy + 1) + 9 (dz + 1), each offset from -1 to
/// +1; wrapping at the int range is harmless: the cells still hash to buckets).
inline int3 sm_neighbour_cell(const int3 cell, const int k)
{
    return (int3)((int)((uint)cell.x + (uint)(k % 3 - 1)), (int)((uint)cell.y + (uint)(k / 3 % 3 - 1)),
                  (int)((uint)cell.z + (uint)(k / 9 - 1)));
}

/// The buckets a search from cell `cell` by a particle of `object` may read, of the cells
/// `cells` (bits 1 << k, k of sm_neighbour_cell, of the 27 around it): those whose bucket holds a
/// particle, not only its own object's (unless it collides with itself). Returns them as bits,
/// with the slots a search reads of cell k's bucket in near[k] (its first SM_K_CELL_VISITS:
/// begin, end). Particles of one cell and object share them (sm_find_contacts).
inline uint sm_near_buckets(const int3 cell, const int object, const bool self, const int mask, uint cells,
                            __global const sm_k_bucket *buckets, __global const int *tiles, int2 *near)
{
    uint found = 0;
    for (; cells != 0; cells &= cells - 1) {
        const int k = 31 - clz(cells & -cells);
        const int3 c = sm_neighbour_cell(cell, k);
        const int b = SM_K_CELL_HASH(c.x, c.y, c.z, mask), holds = buckets[b].object;
        const int begin = sm_bucket_start(buckets, tiles, b);
        const int end = min(sm_bucket_start(buckets, tiles, b + 1), begin + SM_K_CELL_VISITS);
        if (end > begin && (holds != object || self)) {
            near[k] = (int2)(begin, end);
            found |= 1u << k;
        }
    }
    return found;
}

/// The room a search leaves for the positions' low parts (the slots hold the high parts), m.
inline float sm_search_margin(const float4 x) { return 1e-5f * (x.w + fabs(x.x) + fabs(x.y) + fabs(x.z)); }

/// Of the 27 cells around particle i's own, those its reach meets (sm_cells_in_reach: its radius
/// and the largest, and the margin).
inline uint sm_particle_cells(const float4 x_i, const int3 cell, const float inv_cell, const float largest)
{
    const float3 in_cell = x_i.xyz * inv_cell - convert_float3(cell); // 0 to 1 along each axis
    const float place[3] = {in_cell.x, in_cell.y, in_cell.z};
    return sm_cells_in_reach(place, (x_i.w + largest + 2.0f * sm_search_margin(x_i)) * inv_cell);
}

/// Whether a sphere of radius `reach` about x meets box (pass 5).
inline bool sm_box_within(const sm_k_box box, const float3 x, const float reach)
{
    const float3 d = clamp(x, vload4(0, box.lo).xyz, vload4(0, box.hi).xyz) - x;
    return dot(d, d) < reach * reach;
}

/// Particle i's candidates (docs/contact.md): the particles j of the cells `cells` (bits 1 << k
/// of the 27 around its own: those its reach meets whose buckets hold another object's particles,
/// sm_near_buckets, near[k] the slots to read, at most SM_K_CELL_VISITS) that lie in that cell,
/// may collide with it (another object's, or its own object's when that collides with itself and
/// they are not rest neighbours) and overlap it; of those, the SM_K_CONTACTS of the smallest gaps
/// (sm_contact_nearer), into own[] in index order. Returns how many. In each bucket it passes over
/// the runs of its own object's slots unless it collides with itself, and the runs and chunks
/// whose box (pass 5) lies out of its reach. The slots hold the high parts of the positions: the
/// tests allow for the low parts, `margin`, and may take a pair that only touches or misses by as
/// much (its depth at the step's positions is 0: it weighs nothing).
inline int sm_find_candidates(const int i, const float4 x_i, const int3 cell, const int object, const bool self,
                              const float inv_cell, const int2 *near, uint cells,
                              __global const float4 *contact, __global const sm_k_box *boxes,
                              __global const sm_k_slot *slots, int *own)
{
    float key[SM_K_CONTACTS];
    int found = 0;
    const float margin = sm_search_margin(x_i), reach_i = x_i.w + margin;
    for (; cells != 0; cells &= cells - 1) {
        const int k = 31 - clz(cells & -cells), begin = near[k].x, end = near[k].y;
        const int3 c = sm_neighbour_cell(cell, k);
        for (int s = begin; s < end;) { // a run of one object's slots at a time
            const int object_j = slots[s].object, run_end = slots[s].run_end;
            if ((object_j == object && !self) || !sm_box_within(boxes[2 * s + 1], x_i.xyz, reach_i)) {
                s = run_end; // its own object's, or out of its reach
                continue;
            }
            for (const int run_begin = s; s < run_end;) { // a chunk at a time (a run of one chunk: tested)
                const int chunk_end = slots[s].chunk_end;
                if (!(s == run_begin && chunk_end == run_end) && !sm_box_within(boxes[2 * s], x_i.xyz, reach_i)) {
                    s = chunk_end;
                    continue;
                }
                for (; s < chunk_end; s++) {
                    __global const sm_k_slot *slot = &slots[s];
                    const float4 other = vload4(0, slot->position);
                    const float3 d = x_i.xyz - other.xyz;
                    const float reach = x_i.w + other.w, limit = reach + margin, d2 = dot(d, d);
                    if (!(d2 < limit * limit) || any(sm_cell(other.xyz, inv_cell) != c)) continue; // (or another cell's)
                    const int j = slot->particle;
                    if (object_j == object) { // its own object's: never itself or a rest neighbour
                        const float3 rest = contact[i].xyz - contact[j].xyz;
                        const float neighbours = SM_K_REST_NEIGHBOURS * reach;
                        if (j == i || dot(rest, rest) < neighbours * neighbours) continue;
                    }
                    found = sm_contact_keep(own, key, found, j, sqrt(d2) - reach);
                }
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
    const float target = sm_overlap_target(depth, reach - before_length, push);
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

/// Each colliding particle's candidates (sm_find_candidates) that overlap it at the step's
/// positions (a depth, sm_pair_depth, above 0) into list and count, and its weight W_i, the sum
/// of their depths, into moved[i].w, with moved[i].xyz = 0: the first sweep's corrections so far.
/// One particle at a time in the grid's order, members[p] = (particle, object) for p from 0 to
/// the number of colliding particles (pass 5: bucket by bucket; at most `particle_count`), so
/// that neighbouring work-items search from one cell, mostly for one object: on a GPU they read
/// the same buckets and slots, and a work-item that takes several (a CPU device) reads the table
/// once for the cell and object (sm_near_buckets: a later particle reads only the cells in its
/// reach that no earlier one did). What a particle finds does not depend on that order. A
/// particle reads its own position as the slots hold it (the high part). The sweeps read neither
/// the count nor the weight of a particle that does not collide.
__kernel void sm_find_contacts(const int particle_count, const float h, const int mask, const float inv_cell,
                               const float largest, __global const sm_k_object *objects,
                               __global const int2 *members, __global const float4 *contact,
                               __global const sm_k_bucket *buckets, __global const int *tiles,
                               __global const sm_k_box *boxes,
                               __global const sm_k_slot *slots, __global int *list, __global int *count,
                               __global const float4 *position, __global const float4 *position_lo,
                               __global const float4 *velocity, __global float4 *moved)
{
    int2 near[27];
    uint near_cells = 0, probed = 0; // of the cell and object of the particles before: sm_near_buckets
    int near_object = -1;
    int3 near_cell = (int3)(0);
    const int colliding = sm_bucket_start(buckets, tiles, mask + 1);
    SM_K_CHUNK(p, min(colliding, particle_count)) {
        const int i = members[p].x, object = members[p].y;
        const float radius = contact[i].w;
        const float4 x_i = (float4)(position[i].xyz, radius);
        const int3 cell = sm_cell(x_i.xyz, inv_cell);
        const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
        if (object != near_object || any(cell != near_cell)) near_cells = probed = 0, near_object = object, near_cell = cell;
        const uint cells = sm_particle_cells(x_i, cell, inv_cell, largest);
        if ((cells & ~probed) != 0) {
            near_cells |= sm_near_buckets(cell, object, self, mask, cells & ~probed, buckets, tiles, near);
            probed |= cells;
        }
        int own[SM_K_CONTACTS];
        const int found = (near_cells & cells) != 0 ? sm_find_candidates(i, x_i, cell, object, self, inv_cell, near,
                                                                         near_cells & cells, contact, boxes, slots, own)
                                                    : 0;
        __global int *kept = list + (size_t)i * SM_K_CONTACTS;
        float weight = 0.0f;
        int candidates = 0;
        for (int k = 0; k < found; k++) { // (those that only touch, by the positions' low parts, left out)
            const int j = own[k];
            const float3 base = sm_pair_offset(i, j, position, position_lo);
            float3 n;
            sm_pair_normal(i, j, base, velocity[i].xyz - velocity[j].xyz, h, &n);
            const float depth = sm_pair_depth(base, n, x_i.w + contact[j].w);
            if (!(depth > 0.0f)) continue;
            kept[candidates++] = j;
            weight += depth;
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
/// (sm_overlap_target). Particles that do not collide or are fixed have no correction.
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
