/* Pass 5, collision grid (docs/algorithm.md step 5; docs/contact.md): the colliding particles
 * sorted into the buckets of a uniform grid, once per solver step, in four kernels of one
 * work-item each per particle but the scan's work-group per tile of the table; no work-item
 * waits for another, and none sorts:
 *   sm_grid_count    each particle's bucket, and its rank among the bucket's particles (an
 *                    integer atomic: the order of arrival);
 *   sm_grid_scan     the bucket counts into bucket beginnings (an exclusive prefix sum, in two
 *                    parts: sm_bucket_start), the counts zeroed for the next step;
 *   sm_grid_scatter  each particle's membership (particle, object) at its bucket's beginning plus
 *                    its rank;
 *   sm_grid_order    each particle's slot (sm_k_slot: its position, radius, index and object,
 *                    which a search reads in one place) by its rank in index order among its
 *                    bucket's memberships (in a crowded bucket, of more than SM_K_CELL_VISITS
 *                    particles, the SM_K_CELL_VISITS lowest indices alone: the part a search
 *                    reads), the runs of each object's slots, their chunks' boxes (sm_k_box), by
 *                    which a search passes over slots without reading them, and the bucket's
 *                    object (sm_k_bucket).
 * The atomic counts hand out memberships in an order that varies between runs; the slots do
 * not, so that the grid a search reads is the same on every run. */
#include "sm_shared.h"

/// The kernels run one work-item per item on a GPU and a run of items per work-item on a CPU
/// device (the host launches fewer work-items there): each work-item takes a run of
/// consecutive items.
#define SM_K_CHUNK(i, count)                                                                         \
    for (int chunk_ = ((count) + (int)get_global_size(0) - 1) / (int)get_global_size(0),            \
             i = min((int)get_global_id(0) * chunk_, (count)), end_ = min(i + chunk_, (count));     \
         i < end_; i++)

/// The cell of the grid holding point x: every kernel places a point by this one rule, so that a
/// particle found in a cell is the one put there. (NaN gives cell 0.)
inline int3 sm_cell(const float3 x, const float inv_cell) { return convert_int3_sat_rtn(x * inv_cell); }

/// bucket[i] = (the bucket of particle i's cell, its rank among the bucket's particles), or
/// (-1, 0) for a particle that does not collide (radius 0); bucket_count[b] counts them (zero
/// beforehand: sm_grid_scan leaves it so).
__kernel void sm_grid_count(const int particle_count, const float inv_cell, const int mask,
                            __global const float4 *contact, __global const float4 *position, __global int2 *bucket,
                            __global int *bucket_count)
{
    SM_K_CHUNK(i, particle_count) {
        if (!(contact[i].w > 0.0f)) {
            bucket[i] = (int2)(-1, 0);
            continue;
        }
        const int3 c = sm_cell(position[i].xyz, inv_cell);
        const int b = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
        bucket[i] = (int2)(b, atomic_inc(&bucket_count[b]));
    }
}

/// Scans `count` values of local memory in place, from `values` (a run of count / size
/// consecutive values per work-item; count a multiple of the work-group's size): each becomes the
/// sum of those before it. Returns the sum of all. `partial`: an int per work-item.
inline int sm_group_scan(__local int *values, const int count, __local int *partial)
{
    const int lid = (int)get_local_id(0), size = (int)get_local_size(0), run = count / size;
    __local int *mine = values + lid * run;
    int sum = 0;
    for (int k = 0; k < run; k++) sum += mine[k];
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    // inclusive scan of the runs' sums (Hillis and Steele): log2(size) rounds
    for (int offset = 1; offset < size; offset *= 2) {
        const int add = lid >= offset ? partial[lid - offset] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        partial[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int total = partial[lid] - sum;
    for (int k = 0; k < run; k++) {
        const int value = mine[k];
        mine[k] = total;
        total += value;
    }
    const int all = partial[size - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return all;
}

/// The bucket beginnings, in two parts that sm_bucket_start() adds: work-group g scans tile g of
/// the counts (SM_K_SCAN_TILE buckets, b from g SM_K_SCAN_TILE; the last tile ends at b = table,
/// which holds no particle) into buckets[b].start, the particles in the buckets of its tile before
/// b, zeroes the counts for the next step, and puts its tile's sum in tiles[1 + groups + g]; the
/// last work-group to finish (the ticket tiles[0]) scans the tiles' sums into tiles[1 + g], the
/// particles in the tiles before g, and sets the ticket back to 0. `tile` holds a tile,
/// `partial` an int per work-item. The counts pass through local memory in coalesced order.
__kernel void sm_grid_scan(const int table, __global int *bucket_count, __global sm_k_bucket *buckets,
                           __global int *tiles, __local int *tile, __local int *partial)
{
    const int lid = (int)get_local_id(0), size = (int)get_local_size(0);
    const int g = (int)get_group_id(0), groups = (int)get_num_groups(0), first = g * SM_K_SCAN_TILE;
    const int end = min(first + SM_K_SCAN_TILE, table + 1);
    for (int k = lid; k < SM_K_SCAN_TILE; k += size) tile[k] = first + k < end ? bucket_count[first + k] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int sum = sm_group_scan(tile, SM_K_SCAN_TILE, partial);
    for (int k = lid; first + k < end; k += size) {
        buckets[first + k].start = tile[k];
        bucket_count[first + k] = 0;
    }
    __local int last;
    if (lid == 0) {
        atomic_xchg(&tiles[1 + groups + g], sum);
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        last = atomic_inc(&tiles[0]) == groups - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!last) return;
    // the last: every other tile's sum is in (written by an atomic before its ticket)
    for (int done = 0; done < groups; done += SM_K_SCAN_TILE) {
        const int count = min(groups - done, SM_K_SCAN_TILE);
        for (int k = lid; k < SM_K_SCAN_TILE; k += size) tile[k] = k < count ? atomic_add(&tiles[1 + groups + done + k], 0) : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int carry = done > 0 ? tiles[1 + done - 1] + atomic_add(&tiles[1 + groups + done - 1], 0) : 0;
        sm_group_scan(tile, SM_K_SCAN_TILE, partial);
        for (int k = lid; k < count; k += size) tiles[1 + done + k] = carry + tile[k];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (lid == 0) tiles[0] = 0;
}

/// The first membership and slot of bucket b, b from 0 to the table's size (the last: the number
/// of colliding particles), from the two parts of sm_grid_scan.
inline int sm_bucket_start(__global const sm_k_bucket *buckets, __global const int *tiles, const int b)
{
    return buckets[b].start + tiles[1 + (b >> SM_K_SCAN_TILE_LOG)];
}

/// Each colliding particle's membership of its bucket, members[sm_bucket_start(b) + rank] =
/// (particle, object) for its (bucket, rank): the bucket's particles in the order of arrival.
__kernel void sm_grid_scatter(const int particle_count, __global const int2 *bucket, __global const sm_k_bucket *buckets,
                              __global const int *tiles, __global const int *particle_object, __global int2 *members)
{
    SM_K_CHUNK(i, particle_count) {
        const int2 b = bucket[i];
        if (b.x >= 0) members[sm_bucket_start(buckets, tiles, b.x) + b.y] = (int2)(i, particle_object[i]);
    }
}

/// Grows the box lo, hi by the sphere of particle j.
inline void sm_box_grow(float3 *lo, float3 *hi, const int j, __global const float4 *contact,
                        __global const float4 *position)
{
    *lo = fmin(*lo, position[j].xyz - contact[j].w);
    *hi = fmax(*hi, position[j].xyz + contact[j].w);
}

/// The box lo, hi as a sm_k_box.
inline sm_k_box sm_box(const float3 lo, const float3 hi)
{
    sm_k_box box;
    vstore4((float4)(lo, 0.0f), 0, box.lo);
    vstore4((float4)(hi, 0.0f), 0, box.hi);
    return box;
}

/// Each colliding particle's slot, by its rank among its bucket's particles in index order
/// (slots[start + rank]), where that rank is below SM_K_CELL_VISITS: the part of a bucket a
/// search reads, the same on every run whatever the order of arrival. Each particle reads its
/// bucket's memberships (a crowded bucket's others until SM_K_CELL_VISITS of lower index): its
/// rank, and the nearest particles of other objects below and above it by index, between which
/// lie its run (the bucket's particles of its object, consecutive by index: its run_end, capped
/// at the part read); its chunk (SM_K_CHUNK_SLOTS of the run at a time: chunk_end); the first
/// particle of each chunk the box of the chunk's spheres (boxes[2 s], of itself and the next of
/// its run by index), the first of each run the box of the whole run's (boxes[2 s + 1]), and the
/// bucket's first its object (sm_k_bucket; -2 when it holds several). No work-item waits for
/// another, and none writes what another reads.
__kernel void sm_grid_order(const int particle_count, __global const int2 *bucket, __global const float4 *contact,
                            __global const float4 *position, __global const int2 *members,
                            __global sm_k_bucket *buckets, __global const int *tiles, __global sm_k_box *boxes,
                            __global sm_k_slot *slots)
{
    // what the particle before took, when this work-item took it: the next particle by index, in
    // the same bucket and of the same object, is the next in its run (no particle lies between)
    int last = -1, last_bucket = -1, last_object = -1;
    int rank = 0, below = -1, above = INT_MAX, run_begin = 0, run_end = 0; // (below, above: of other objects)
    SM_K_CHUNK(i, particle_count) {
        const int b = bucket[i].x;
        if (b < 0) continue;
        const int begin = sm_bucket_start(buckets, tiles, b), end = sm_bucket_start(buckets, tiles, b + 1);
        const int object = members[begin + bucket[i].y].y;
        if (i == last + 1 && b == last_bucket && object == last_object) {
            rank++;
        } else {
            rank = 0, below = -1, above = INT_MAX;
            for (int t = begin; t < end && rank < SM_K_CELL_VISITS; t++) {
                const int2 m = members[t];
                rank += m.x < i;
                if (m.y != object) below = m.x < i ? max(below, m.x) : below, above = m.x > i ? min(above, m.x) : above;
            }
            run_begin = 0, run_end = end - begin; // (a bucket of its object alone: one run)
            if (rank < SM_K_CELL_VISITS && (below >= 0 || above < INT_MAX)) {
                run_end = 0;
                for (int t = begin; t < end; t++) {
                    const int j = members[t].x;
                    run_begin += j <= below;
                    run_end += j < above;
                }
            }
            run_end = min(run_end, SM_K_CELL_VISITS);
        }
        last = i, last_bucket = b, last_object = object;
        if (rank >= SM_K_CELL_VISITS) continue; // (a crowded bucket's, past the part read)
        const int chunk = rank - (rank - run_begin) % SM_K_CHUNK_SLOTS, chunk_end = min(chunk + SM_K_CHUNK_SLOTS, run_end);
        const int s = begin + rank;
        __global sm_k_slot *slot = &slots[s];
        vstore4((float4)(position[i].xyz, contact[i].w), 0, slot->position);
        slot->particle = i;
        slot->object = object;
        slot->run_end = begin + run_end;
        slot->chunk_end = begin + chunk_end;
        if (rank == chunk) { // the chunk's box: its first particle's and the next of its run by index
            int next[SM_K_CHUNK_SLOTS - 1];
            const int more = chunk_end - chunk - 1;
            int found = 0;
            for (int t = begin; t < end && more > 0; t++) { // (insertion of the `more` lowest between i and above)
                int j = members[t].x;
                if (j <= i || j >= above || (found == more && j >= next[more - 1])) continue;
                int k = found < more ? found++ : more - 1;
                for (; k > 0 && next[k - 1] > j; k--) next[k] = next[k - 1];
                next[k] = j;
            }
            float3 lo = (float3)(INFINITY), hi = (float3)(-INFINITY);
            sm_box_grow(&lo, &hi, i, contact, position);
            for (int k = 0; k < more; k++) sm_box_grow(&lo, &hi, next[k], contact, position);
            boxes[2 * s] = sm_box(lo, hi);
        }
        if (rank == run_begin) { // the run's box: of all the bucket's particles between below and above
            float3 lo = (float3)(INFINITY), hi = (float3)(-INFINITY);
            for (int t = begin; t < end; t++) {
                const int j = members[t].x;
                if (j > below && j < above) sm_box_grow(&lo, &hi, j, contact, position);
            }
            boxes[2 * s + 1] = sm_box(lo, hi);
        }
        if (rank == 0) buckets[b].object = below < 0 && above == INT_MAX ? object : -2;
    }
}
