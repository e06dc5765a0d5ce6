/* Pass 5, collision grid (docs/algorithm.md step 5; docs/contact.md): the colliding particles
 * sorted into the buckets of a uniform grid, once per solver step, in four kernels of one
 * work-item each per particle or bucket but the scan's single work-group:
 *   sm_grid_count    each particle's bucket, and its rank among the bucket's particles (an
 *                    integer atomic: the order of arrival);
 *   sm_grid_scan     the bucket counts into bucket beginnings (an exclusive prefix sum), the
 *                    counts zeroed for the next step;
 *   sm_grid_scatter  each particle's slot (sm_k_slot: its position, radius, index and object,
 *                    which a search reads in one place) at its bucket's beginning plus its rank;
 *   sm_grid_order    each bucket's slots in index order (in a crowded bucket, of more than
 *                    SM_K_CELL_VISITS particles, the SM_K_CELL_VISITS lowest indices first), the
 *                    bucket's object (sm_k_bucket), the runs of each object's slots in it, and
 *                    their chunks' boxes (sm_k_box), by which a search passes over slots without
 *                    reading them.
 * The atomic counts hand out slots in an order that varies between runs; sm_grid_order makes
 * the grid the same on every run. */
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

/// One work-group: buckets[b].start = the particles in buckets before b, for b = 0 to `table`
/// (the last: all of them), and bucket_count zeroed. Each work-item sums a run of
/// consecutive counts, the work-group scans the sums in local memory (`partial`: one int per
/// work-item), and each work-item writes the beginnings of its run.
__kernel void sm_grid_scan(const int table, __global int *bucket_count, __global sm_k_bucket *buckets,
                           __local int *partial)
{
    const int lid = (int)get_local_id(0), size = (int)get_local_size(0);
    const int run = (table + size - 1) / size, begin = min(lid * run, table), end = min(begin + run, table);
    int sum = 0;
    for (int b = begin; b < end; b++) sum += bucket_count[b];
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    // inclusive scan of the sums (Hillis and Steele): log2(size) rounds
    for (int offset = 1; offset < size; offset *= 2) {
        const int add = lid >= offset ? partial[lid - offset] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        partial[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int total = partial[lid] - sum;
    for (int b = begin; b < end; b++) {
        const int count = bucket_count[b];
        buckets[b].start = total;
        bucket_count[b] = 0;
        total += count;
    }
    if (lid == size - 1) buckets[table].start = partial[lid];
}

/// Each colliding particle's slot: slots[buckets[b].start + rank] for its (bucket, rank).
__kernel void sm_grid_scatter(const int particle_count, __global const int2 *bucket, __global const sm_k_bucket *buckets,
                              __global const float4 *contact, __global const float4 *position,
                              __global const int *particle_object, __global sm_k_slot *slots)
{
    SM_K_CHUNK(i, particle_count) {
        const int2 b = bucket[i];
        if (b.x < 0) continue;
        __global sm_k_slot *slot = &slots[buckets[b.x].start + b.y];
        vstore4((float4)(position[i].xyz, contact[i].w), 0, slot->position);
        slot->particle = i;
        slot->object = particle_object[i];
    }
}

/// Swaps two slots.
inline void sm_slot_swap(__global sm_k_slot *a, __global sm_k_slot *b)
{
    const sm_k_slot t = *a;
    *a = *b;
    *b = t;
}

/// Whether slot a's particle has a lower index than slot b's.
inline bool sm_slot_before(__global const sm_k_slot *a, __global const sm_k_slot *b)
{
    return a->particle < b->particle;
}

/// Moves slot s down by insertion while the slot before it has a higher index.
inline void sm_slot_insert(__global sm_k_slot *slots, const int begin, int s)
{
    for (; s > begin && sm_slot_before(&slots[s], &slots[s - 1]); s--) sm_slot_swap(&slots[s], &slots[s - 1]);
}

/// The box of the spheres of slots[begin] to slots[end - 1].
inline void sm_box_of(__global const sm_k_slot *slots, const int begin, const int end, __global sm_k_box *box)
{
    float3 lo = (float3)(INFINITY), hi = (float3)(-INFINITY);
    for (int t = begin; t < end; t++) {
        const float4 x = vload4(0, slots[t].position);
        lo = fmin(lo, x.xyz - x.w);
        hi = fmax(hi, x.xyz + x.w);
    }
    vstore4((float4)(lo, 0.0f), 0, box->lo);
    vstore4((float4)(hi, 0.0f), 0, box->hi);
}

/// Each bucket's slots in index order (insertion: buckets hold a few particles), or in a bucket of
/// more than SM_K_CELL_VISITS particles the SM_K_CELL_VISITS of the lowest indices first, in
/// index order, the rest after them: the part of it a search reads. (The first slots are sorted by
/// insertion, then every later slot of a lower index than the last of them takes its place by
/// insertion and the last moves out to where it was.) Then the object of every bucket that holds a
/// particle (that of an empty bucket is not read), each sorted slot's run_end, the chunks of each
/// run (SM_K_CHUNK_SLOTS slots at a time; chunk_end in the first slot of each), and the boxes of
/// the runs' and chunks' spheres: at boxes[2 s + 1] for a run and boxes[2 s] for a chunk that
/// begins at slot s.
__kernel void sm_grid_order(const int table, __global sm_k_bucket *buckets, __global sm_k_box *boxes,
                            __global sm_k_slot *slots)
{
    SM_K_CHUNK(b, table) {
        const int begin = buckets[b].start, end = buckets[b + 1].start;
        if (end == begin) continue;
        int object = slots[begin].object;
        for (int s = begin + 1; s < end && object >= 0; s++)
            if (slots[s].object != object) object = -2;
        buckets[b].object = object;
        const int sorted_end = min(end, begin + SM_K_CELL_VISITS), last = sorted_end - 1;
        for (int s = begin + 1; s < sorted_end; s++) sm_slot_insert(slots, begin, s);
        for (int s = sorted_end; s < end; s++) {
            if (!sm_slot_before(&slots[s], &slots[last])) continue;
            sm_slot_swap(&slots[s], &slots[last]);
            sm_slot_insert(slots, begin, last);
        }
        for (int s = sorted_end - 1, run_end = sorted_end; s >= begin; s--) {
            if (s + 1 < sorted_end && slots[s + 1].object != slots[s].object) run_end = s + 1;
            slots[s].run_end = run_end;
        }
        for (int s = begin; s < sorted_end;) {
            const int chunk_end = min(s + SM_K_CHUNK_SLOTS, slots[s].run_end);
            sm_box_of(slots, s, chunk_end, &boxes[2 * s]);
            slots[s].chunk_end = chunk_end;
            s = chunk_end;
        }
        for (int s = begin; s < sorted_end; s = slots[s].run_end) sm_box_of(slots, s, slots[s].run_end, &boxes[2 * s + 1]);
    }
}
