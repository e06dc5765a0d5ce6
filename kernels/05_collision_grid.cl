/* Pass 5, collision grid (docs/algorithm.md step 5; docs/contact.md): the colliding particles
 * sorted into the buckets of a uniform grid, once per solver step, in four kernels of one
 * work-item each per particle but the scan's work-group per tile of the table; no work-item
 * waits for another, and none sorts but in a crowded bucket:
 *   sm_grid_count    each particle's bucket, and its rank among the bucket's particles (an
 *                    integer atomic: the order of arrival);
 *   sm_grid_scan     the bucket counts into bucket beginnings (an exclusive prefix sum, in two
 *                    parts: sm_bucket_start), the counts zeroed for the next step;
 *   sm_grid_scatter  each particle's membership (particle, object: the order in which pass 6
 *                    takes the particles) at its bucket's beginning plus its rank, and its slot
 *                    (sm_k_slot: its position, radius, index and object, which a search reads in
 *                    one place) at the same place, but in a crowded bucket (of more than
 *                    SM_K_CELL_VISITS particles);
 *   sm_grid_runs     the runs of the slots (each bucket's consecutive slots of one object, which a
 *                    search passes over together where they are its own object's), their chunks
 *                    (SM_K_CHUNK_SLOTS at a time) and the boxes of both, by which a search passes
 *                    over slots without reading them, and the buckets' objects; in a crowded
 *                    bucket, the slots of its SM_K_CELL_VISITS lowest indices in index order (the
 *                    part a search reads).
 * The atomic counts hand out ranks in an order that varies between runs, and so do a bucket's
 * slots, runs and chunks; what a search finds does not (docs/contact.md), and a crowded bucket's
 * part read is the same on every run. */
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
/// beforehand: sm_grid_scan leaves it so). `order`: 0, or a prime that does not divide
/// particle_count, to take particle k `order` mod particle_count in turn k instead of particle k,
/// so that the ranks come in another order, as on another device ($SM_SCRAMBLE_ARRIVAL=1: the
/// tests check that no result changes).
__kernel void sm_grid_count(const int particle_count, const int order, const float inv_cell, const int mask,
                            __global const float4 *contact, __global const float4 *position, __global int2 *bucket,
                            __global int *bucket_count)
{
    SM_K_CHUNK(k, particle_count) {
        const int i = order > 0 ? (int)((long)k * order % particle_count) : k;
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
/// b (and buckets[b].object = -1, for sm_grid_runs), zeroes the counts for the next step, and
/// puts its tile's sum in tiles[1 + groups + g]; the last work-group to finish (the ticket
/// tiles[0]) scans the tiles' sums into tiles[1 + g], the particles in the tiles before g, and
/// sets the ticket back to 0. `tile` holds a tile, `partial` an int per work-item. The counts
/// pass through local memory in coalesced order.
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
        buckets[first + k] = (sm_k_bucket){tile[k], -1};
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

/// Each colliding particle's membership, members[sm_bucket_start(b) + rank] = (particle, object)
/// for its (bucket, rank), and its slot at the same place: the bucket's particles in the order of
/// arrival; but in a crowded bucket, whose part read sm_grid_runs orders.
__kernel void sm_grid_scatter(const int particle_count, __global const int2 *bucket, __global const sm_k_bucket *buckets,
                              __global const int *tiles, __global const int *particle_object,
                              __global const float4 *contact, __global const float4 *position, __global int2 *members,
                              __global sm_k_slot *slots)
{
    SM_K_CHUNK(i, particle_count) {
        const int2 b = bucket[i];
        if (b.x < 0) continue;
        const int begin = sm_bucket_start(buckets, tiles, b.x), end = sm_bucket_start(buckets, tiles, b.x + 1);
        const int object = particle_object[i];
        members[begin + b.y] = (int2)(i, object);
        if (end - begin > SM_K_CELL_VISITS) continue;
        __global sm_k_slot *slot = &slots[begin + b.y];
        vstore4((float4)(position[i].xyz, contact[i].w), 0, slot->position);
        slot->particle = i;
        slot->object = object;
    }
}

/// Notes that a particle of `object` lies in the bucket whose object is *holds (-1 for none yet,
/// -2 for several): *holds only moves from -1 to an object and from an object to -2, so it ends
/// the same whatever the order of the calls.
inline void sm_object_hold(volatile __global int *holds, const int object)
{
    const int before = atomic_cmpxchg(holds, -1, object);
    if (before != -1 && before != object && before != -2) atomic_xchg(holds, -2);
}

/// The box lo, hi as a sm_k_box.
inline sm_k_box sm_box(const float3 lo, const float3 hi)
{
    sm_k_box box;
    vstore4((float4)(lo, 0.0f), 0, box.lo);
    vstore4((float4)(hi, 0.0f), 0, box.hi);
    return box;
}

/// The runs of the slots (each bucket's consecutive slots of one object), their chunks, and the
/// buckets' objects. The particle whose slot begins a run (its bucket's first, or after another
/// object's) reads the run's slots: it writes the run's end into its slot and the box of the
/// run's spheres into boxes[2 s + 1], and for each chunk of the run (SM_K_CHUNK_SLOTS slots from
/// the run's beginning, the last shorter) the chunk's end into the chunk's first slot and its box
/// into boxes[2 s] (s the chunk's first slot), and notes its object in its bucket's. In a crowded
/// bucket (more than SM_K_CELL_VISITS particles) each particle counts the memberships of lower
/// index (sm_grid_scatter) until SM_K_CELL_VISITS: a particle of rank below that in index order
/// takes slots[begin + rank], a run and chunk of its own with the box of its sphere, and the first
/// particle of each chunk of the memberships notes their objects in the bucket's. No work-item
/// waits for another, and none writes what another reads.
__kernel void sm_grid_runs(const int particle_count, __global const int2 *bucket, __global const float4 *contact,
                           __global const float4 *position, __global const int2 *members,
                           __global sm_k_bucket *buckets, __global const int *tiles, __global sm_k_box *boxes,
                           __global sm_k_slot *slots)
{
    // a crowded bucket's rank in index order of the particle before, when this work-item took it:
    // the next particle by index in the same bucket takes the next (no particle lies between)
    int last = -1, last_bucket = -1, rank = 0;
    SM_K_CHUNK(i, particle_count) {
        const int2 b = bucket[i];
        if (b.x < 0) continue;
        const int begin = sm_bucket_start(buckets, tiles, b.x), end = sm_bucket_start(buckets, tiles, b.x + 1);
        if (end - begin <= SM_K_CELL_VISITS) {
            const int s = begin + b.y, object = slots[s].object;
            if (s > begin && slots[s - 1].object == object) continue; // (not a run's first)
            float3 run_lo = (float3)(INFINITY), run_hi = (float3)(-INFINITY);
            float3 lo = run_lo, hi = run_hi;
            int t = s, chunk = s;
            for (; t < end && slots[t].object == object; t++) {
                const float4 x = vload4(0, slots[t].position);
                lo = fmin(lo, x.xyz - x.w);
                hi = fmax(hi, x.xyz + x.w);
                if (t + 1 - chunk == SM_K_CHUNK_SLOTS) { // a chunk full
                    slots[chunk].chunk_end = t + 1;
                    boxes[2 * chunk] = sm_box(lo, hi);
                    run_lo = fmin(run_lo, lo), run_hi = fmax(run_hi, hi);
                    lo = (float3)(INFINITY), hi = (float3)(-INFINITY), chunk = t + 1;
                }
            }
            if (chunk < t) { // the last chunk, shorter
                slots[chunk].chunk_end = t;
                boxes[2 * chunk] = sm_box(lo, hi);
                run_lo = fmin(run_lo, lo), run_hi = fmax(run_hi, hi);
            }
            slots[s].run_end = t;
            boxes[2 * s + 1] = sm_box(run_lo, run_hi);
            sm_object_hold(&buckets[b.x].object, s == begin && t == end ? object : -2);
            continue;
        }
        // a crowded bucket: the objects of a chunk of the memberships into the bucket's, and this
        // particle's slot
        if (b.y % SM_K_CHUNK_SLOTS == 0)
            for (int t = begin + b.y; t < min(begin + b.y + SM_K_CHUNK_SLOTS, end); t++)
                sm_object_hold(&buckets[b.x].object, members[t].y);
        if (i == last + 1 && b.x == last_bucket) {
            rank++;
        } else {
            rank = 0;
            for (int t = begin; t < end && rank < SM_K_CELL_VISITS; t++) rank += members[t].x < i;
        }
        last = i, last_bucket = b.x;
        if (rank >= SM_K_CELL_VISITS) continue; // (past the part read)
        const int s = begin + rank;
        const float4 x = (float4)(position[i].xyz, contact[i].w);
        __global sm_k_slot *slot = &slots[s];
        vstore4(x, 0, slot->position);
        slot->particle = i;
        slot->object = members[begin + b.y].y;
        slot->run_end = slot->chunk_end = s + 1;
        boxes[2 * s] = boxes[2 * s + 1] = sm_box(x.xyz - x.w, x.xyz + x.w);
    }
}
