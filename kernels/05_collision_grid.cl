/* Pass 5, contact candidates (step 8a of the README's time step): which particles each colliding
 * particle may touch in this step's sweeps. The device keeps a reference position per particle
 * and a list of candidates per particle: the particles of other objects (or of its own, when it
 * self-collides and they are not rest neighbours) whose references lie within the sum of the
 * two radii plus a skin. While no particle is farther than SM_K_SKIN_TRIGGER skins from its
 * reference, every pair closer than the sum of its radii is in both lists, so the lists give
 * exactly the contacts a search of the whole grid would; the step only pays for the search
 * where particles moved.
 *
 * Before each sweep: sm_contact_refresh takes a new reference for every particle that moved
 * past the trigger and raises a flag; only when the flag is up, the reference grid is rebuilt
 * (a counting sort in five kernels: each particle counts itself into the bucket of its cell
 * with an integer atomic, the counts are scanned into bucket beginnings in blocks, each
 * particle takes a slot in its bucket, and each bucket is sorted by particle index, which
 * makes the order the same on every run), each moved particle searches the 27 cells around
 * its own for its new list and adds itself to the lists of its candidates, and the lists added
 * to are sorted, rid of repeats and of particles that are no longer candidates. Every kernel
 * but the first returns at once while the flag is down. */
#include "sm_shared.h"

/// reference[i] = x_i and moved[i] = generation for every colliding particle (contact.w > 0)
/// farther than `trigger` from its reference or without one (reference.w = 0), and *any = 1
/// when there is one (zeroed beforehand).
__kernel void sm_contact_refresh(const int particle_count, const float trigger, const int generation,
                                 __global const float4 *contact, __global const float4 *position,
                                 __global const float4 *position_lo, __global float4 *reference, __global int *moved,
                                 __global int *any)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !(contact[i].w > 0.0f)) return;
    const float4 r = reference[i], x = position[i];
    const float3 d = (x.xyz - r.xyz) + position_lo[i].xyz;
    if (r.w > 0.0f && dot(d, d) < trigger * trigger) return; // NaN moves every step
    reference[i] = (float4)(x.xyz, 1.0f);
    moved[i] = generation;
    atomic_xchg(any, 1);
}

/// cell = (x, y, z, bucket) of every particle's reference, bucket -1 for particles without a
/// radius; bucket_count[b] += 1 for each particle in bucket b (zeroed beforehand).
__kernel void sm_grid_hash(const int particle_count, const float inv_cell, const int mask,
                           __global const int *any, __global const float4 *contact,
                           __global const float4 *reference, __global int4 *cell, __global int *bucket_count)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !*any) return;
    if (!(contact[i].w > 0.0f)) {
        cell[i] = (int4)(0, 0, 0, -1);
        return;
    }
    const int3 c = convert_int3_sat_rtn(reference[i].xyz * inv_cell); // NaN gives 0
    const int bucket = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
    cell[i] = (int4)(c, bucket);
    atomic_inc(&bucket_count[bucket]);
}

/// block_sum[k] = the sum of bucket_count over block k of SM_K_SCAN_BLOCK entries.
__kernel void sm_grid_scan_blocks(const int entries, __global const int *any, __global const int *bucket_count,
                                  __global int *block_sum)
{
    const int k = get_global_id(0);
    const int begin = k * SM_K_SCAN_BLOCK;
    if (begin >= entries || !*any) return;
    const int end = min(begin + SM_K_SCAN_BLOCK, entries);
    int sum = 0;
    for (int b = begin; b < end; b++) sum += bucket_count[b];
    block_sum[k] = sum;
}

/// The exclusive prefix sum of the block sums, in place (one work-item: there are few blocks).
__kernel void sm_grid_scan_totals(const int blocks, __global const int *any, __global int *block_sum)
{
    if (get_global_id(0) != 0 || !*any) return;
    int total = 0;
    for (int k = 0; k < blocks; k++) {
        const int sum = block_sum[k];
        block_sum[k] = total;
        total += sum;
    }
}

/// bucket_start[b] = the number of particles in buckets before b, block by block.
__kernel void sm_grid_scan_apply(const int entries, __global const int *any, __global const int *bucket_count,
                                 __global const int *block_sum, __global int *bucket_start)
{
    const int k = get_global_id(0);
    const int begin = k * SM_K_SCAN_BLOCK;
    if (begin >= entries || !*any) return;
    const int end = min(begin + SM_K_SCAN_BLOCK, entries);
    int total = block_sum[k];
    for (int b = begin; b < end; b++) {
        bucket_start[b] = total;
        total += bucket_count[b];
    }
}

/// Each colliding particle takes the next slot of its bucket (cursor zeroed beforehand).
__kernel void sm_grid_scatter(const int particle_count, __global const int *any, __global const int4 *cell,
                              __global const int *bucket_start, __global int *cursor, __global int *sorted)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !*any) return;
    const int bucket = cell[i].w;
    if (bucket < 0) return;
    sorted[bucket_start[bucket] + atomic_inc(&cursor[bucket])] = i;
}

/// Each bucket's particles in index order (insertion sort: buckets hold a few particles), with
/// sorted_cell = (cell, object) of each slot, run_end = the slot after the run of slots of one
/// object that the slot begins (objects own consecutive particle indices, so a bucket holds each
/// object's particles in one run), and the object all of the bucket's particles belong to (-1
/// when they belong to several).
__kernel void sm_grid_sort_buckets(const int table_size, __global const int *any, __global const int *bucket_start,
                                   __global const int *particle_object, __global const int4 *cell,
                                   __global int *sorted, __global int4 *sorted_cell, __global int *run_end,
                                   __global int *bucket_object)
{
    const int b = get_global_id(0);
    if (b >= table_size || !*any) return;
    const int begin = bucket_start[b], end = bucket_start[b + 1];
    for (int s = begin + 1; s < end; s++) {
        const int i = sorted[s];
        int t = s;
        for (; t > begin && sorted[t - 1] > i; t--) sorted[t] = sorted[t - 1];
        sorted[t] = i;
    }
    int object = end > begin ? particle_object[sorted[begin]] : -1;
    for (int s = begin; s < end; s++) {
        const int i = sorted[s];
        sorted_cell[s] = (int4)(cell[i].xyz, particle_object[i]);
        if (particle_object[i] != object) object = -1;
    }
    for (int s = end - 1; s >= begin; s--)
        run_end[s] = s + 1 < end && sorted_cell[s + 1].w == sorted_cell[s].w ? run_end[s + 1] : s + 1;
    bucket_object[b] = object;
}

/// Whether particle j (of `object_j`, contact c_j) is a candidate of particle i: another
/// particle whose reference lies within the radii plus the skin, and not a rest neighbour when
/// both belong to one (self-colliding) object.
inline bool sm_candidate(const int i, const int j, const int object_i, const int object_j, const float4 c_i,
                         const float4 c_j, const float3 r_i, const float3 r_j, const float skin)
{
    if (j == i) return false;
    const float reach = c_i.w + c_j.w;
    if (object_j == object_i) {
        const float3 rest = c_i.xyz - c_j.xyz;
        const float neighbours = SM_K_REST_NEIGHBOURS * reach;
        if (dot(rest, rest) < neighbours * neighbours) return false;
    }
    const float3 d = r_i - r_j;
    const float limit = reach + skin;
    return dot(d, d) < limit * limit;
}

/// A walk over the candidates of one particle in the reference grid: the 27 cells around its
/// reference's, x fastest, each bucket's particles by index, other cells sharing a bucket and
/// runs of its own object's particles skipped (unless the object self-collides).
typedef struct sm_k_walk {
    int4 own;      // the particle's cell and bucket
    int3 c;        // the cell being walked
    int k, s, end; // the cell's number (0 to 26), the next slot, the bucket's end
} sm_k_walk;

/// The walk of particle i, before its first cell.
inline sm_k_walk sm_walk_begin(__global const int4 *cell, const int i)
{
    sm_k_walk walk;
    walk.own = cell[i];
    walk.c = walk.own.xyz;
    walk.k = -1;
    walk.s = walk.end = 0;
    return walk;
}

/// The next candidate of particle i (of `object`, contact c_i, reference r_i), or -1 after the last.
inline int sm_walk_next(sm_k_walk *walk, const int i, const int object, const bool self, const float4 c_i,
                        const float3 r_i, const int mask, const float skin,
                        __global const float4 *contact, __global const float4 *reference,
                        __global const int *bucket_start, __global const int *sorted,
                        __global const int4 *sorted_cell, __global const int *run_end,
                        __global const int *bucket_object)
{
    for (;;) {
        while (walk->s >= walk->end) { // the next cell
            if (++walk->k == 27) return -1;
            const int dxc = walk->k % 3 - 1, dy = walk->k / 3 % 3 - 1, dz = walk->k / 9 - 1;
            walk->c = (int3)((int)((uint)walk->own.x + (uint)dxc), (int)((uint)walk->own.y + (uint)dy),
                             (int)((uint)walk->own.z + (uint)dz));
            const int bucket = SM_K_CELL_HASH(walk->c.x, walk->c.y, walk->c.z, mask);
            if (!self && bucket_object[bucket] == object) continue; // only its own particles
            walk->s = bucket_start[bucket];
            walk->end = bucket_start[bucket + 1];
        }
        const int s = walk->s++;
        const int4 other = sorted_cell[s];
        if (other.w == object && !self) { // the run of its own particles in this bucket
            walk->s = run_end[s];
            continue;
        }
        if (other.x != walk->c.x || other.y != walk->c.y || other.z != walk->c.z) continue;
        const int j = sorted[s];
        if (sm_candidate(i, j, object, other.w, c_i, contact[j], r_i, reference[j].xyz, skin)) return j;
    }
}

/// Particle i's candidates from a walk of the grid, in index order, into its list; returns
/// how many, or -1 when there are more than SM_K_CANDIDATES (the sweeps then walk themselves).
inline int sm_walk_list(const int i, const int mask, const float skin, __global const int *particle_object,
                        __global const sm_k_object *objects, __global const float4 *contact,
                        __global const float4 *reference, __global const int4 *cell,
                        __global const int *bucket_start, __global const int *sorted,
                        __global const int4 *sorted_cell, __global const int *run_end,
                        __global const int *bucket_object, __global int *own)
{
    const int object = particle_object[i];
    const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
    const float4 c_i = contact[i];
    const float3 r_i = reference[i].xyz;
    sm_k_walk walk = sm_walk_begin(cell, i);
    int found = 0;
    for (int j; (j = sm_walk_next(&walk, i, object, self, c_i, r_i, mask, skin, contact, reference, bucket_start,
                                  sorted, sorted_cell, run_end, bucket_object)) >= 0;) {
        if (found == SM_K_CANDIDATES) return -1;
        int t = found++; // kept in index order (insertion)
        for (; t > 0 && own[t - 1] > j; t--) own[t] = own[t - 1];
        own[t] = j;
    }
    return found;
}

/// A new list for every particle that moved (moved[i] == generation): count[i] candidates in
/// list[i * SM_K_CANDIDATES ...] in index order, or -1 when there are more than
/// SM_K_CANDIDATES. The order makes the sums of the sweeps the same whenever the contacts are,
/// however old the lists.
__kernel void sm_contact_lists(const int particle_count, const int generation, const int mask, const float skin,
                               __global const int *any, __global const int *moved, __global const int *particle_object,
                               __global const sm_k_object *objects, __global const float4 *contact,
                               __global const float4 *reference, __global const int4 *cell,
                               __global const int *bucket_start, __global const int *sorted,
                               __global const int4 *sorted_cell, __global const int *run_end,
                               __global const int *bucket_object, __global int *list, __global int *count)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !*any || moved[i] != generation) return;
    count[i] = sm_walk_list(i, mask, skin, particle_object, objects, contact, reference, cell, bucket_start, sorted,
                            sorted_cell, run_end, bucket_object, list + (size_t)i * SM_K_CANDIDATES);
}

/// Every particle j that moved adds itself to the list of each of its candidates i that did not
/// (whose own walk found j): at list[i][count[i] + extra[i]++] while there is room (extra
/// zeroed beforehand). Candidates whose lists overflowed walk in the sweeps and need nothing.
__kernel void sm_contact_insert(const int particle_count, const int generation, const int mask, const float skin,
                                __global const int *any, __global const int *moved,
                                __global const int *particle_object, __global const sm_k_object *objects,
                                __global const float4 *contact, __global const float4 *reference,
                                __global const int4 *cell, __global const int *bucket_start,
                                __global const int *sorted, __global const int4 *sorted_cell,
                                __global const int *run_end, __global const int *bucket_object,
                                __global int *list, __global const int *count, __global int *extra)
{
    const int j = get_global_id(0);
    if (j >= particle_count || !*any || moved[j] != generation) return;
    const int object = particle_object[j];
    const bool self = (objects[object].flags & SM_K_SELF_COLLIDE) != 0;
    const float4 c_j = contact[j];
    const float3 r_j = reference[j].xyz;
    const int listed = count[j];
    __global const int *own = list + (size_t)j * SM_K_CANDIDATES;
    sm_k_walk walk = sm_walk_begin(cell, j);
    for (int k = 0;; k++) {
        const int i = listed >= 0 ? (k < listed ? own[k] : -1)
                                  : sm_walk_next(&walk, j, object, self, c_j, r_j, mask, skin, contact, reference,
                                                 bucket_start, sorted, sorted_cell, run_end, bucket_object);
        if (i < 0) break;
        if (moved[i] == generation || count[i] < 0) continue;
        const int slot = count[i] + atomic_inc(&extra[i]);
        if (slot < SM_K_CANDIDATES) list[(size_t)i * SM_K_CANDIDATES + slot] = j;
    }
}

/// Every list that was added to: sorted into index order, without repeats and without the
/// particles that are no longer candidates; walked again when the additions did not fit.
/// extra is zeroed again.
__kernel void sm_contact_tidy(const int particle_count, const int mask, const float skin, __global const int *any,
                              __global const int *particle_object, __global const sm_k_object *objects,
                              __global const float4 *contact, __global const float4 *reference,
                              __global const int4 *cell, __global const int *bucket_start,
                              __global const int *sorted, __global const int4 *sorted_cell,
                              __global const int *run_end, __global const int *bucket_object, __global int *list,
                              __global int *count, __global int *extra)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !*any) return;
    const int added = extra[i];
    if (added == 0) return;
    extra[i] = 0;
    __global int *own = list + (size_t)i * SM_K_CANDIDATES;
    const int total = count[i] + added;
    if (total > SM_K_CANDIDATES) {
        count[i] = sm_walk_list(i, mask, skin, particle_object, objects, contact, reference, cell, bucket_start,
                                sorted, sorted_cell, run_end, bucket_object, own);
        return;
    }
    for (int s = 1; s < total; s++) { // insertion sort
        const int j = own[s];
        int t = s;
        for (; t > 0 && own[t - 1] > j; t--) own[t] = own[t - 1];
        own[t] = j;
    }
    const int object = particle_object[i];
    const float4 c_i = contact[i];
    const float3 r_i = reference[i].xyz;
    int kept = 0;
    for (int s = 0; s < total; s++) {
        const int j = own[s];
        if (kept > 0 && own[kept - 1] == j) continue;
        if (!sm_candidate(i, j, object, particle_object[j], c_i, contact[j], r_i, reference[j].xyz, skin)) continue;
        own[kept++] = j;
    }
    count[i] = kept;
}
