/* Pass 5, collision grid (docs/algorithm.md step 5; docs/contact.md): the colliding particles
 * sorted into the buckets of a uniform grid, once per solver step, in four kernels of one
 * work-item each per particle or bucket but the scan's single work-group:
 *   sm_grid_count    each particle's bucket, and its rank among the bucket's particles (an
 *                    integer atomic: the order of arrival); and each bucket's object and cell (a
 *                    key of it), or -2 when it holds several (a search passes over the buckets of
 *                    its own object alone);
 *   sm_grid_scan     the bucket counts into bucket beginnings (an exclusive prefix sum), the
 *                    counts zeroed for the next step;
 *   sm_grid_scatter  each particle's slot (sm_k_slot: its position, radius, index and object,
 *                    which a search reads in one place) at its bucket's beginning plus its rank;
 *   sm_grid_order    each bucket's slots in index order (in a crowded bucket, of more than
 *                    SM_K_CELL_VISITS particles, the SM_K_CELL_VISITS lowest indices first) and
 *                    the runs of each object's slots in it; and whether another object's particle
 *                    may lie in the 27 cells around each bucket's (when not, its particles have
 *                    no candidates without a search).
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

/// A key of cell c, never negative (so never -1, none, or -2, several): cells of one bucket
/// almost always have different keys. (Two cells of one key only cost a search.)
inline int sm_cell_key(const int3 c)
{
    return (int)((((uint)c.x * 73856093u) ^ ((uint)c.y * 19349663u) ^ ((uint)c.z * 83492791u)) & 0x7fffffffu);
}

/// The cell of the grid holding point x: every kernel places a point by this one rule, so that a
/// particle found in a cell is the one put there. (NaN gives cell 0.)
inline int3 sm_cell(const float3 x, const float inv_cell) { return convert_int3_sat_rtn(x * inv_cell); }

/// bucket[i] = (the bucket of particle i's cell, its rank among the bucket's particles), or
/// (-1, 0) for a particle that does not collide (radius 0); bucket_count[b] counts them (zero
/// beforehand: sm_grid_scan leaves it so); bucket_object[b] = the object of the particles of
/// bucket b, or -2 when they are of several objects (-1 beforehand, and again after the step, when
/// sm_ground applies the contacts); likewise bucket_cell[b] = the key of its particles' cell
/// (sm_cell_key), or -2 when they are of several cells.
__kernel void sm_grid_count(const int particle_count, const float inv_cell, const int mask,
                            __global const float4 *contact, __global const float4 *position,
                            __global const int *particle_object, __global int2 *bucket, __global int *bucket_count,
                            __global int *bucket_object, __global int *bucket_cell)
{
    SM_K_CHUNK(i, particle_count) {
        if (!(contact[i].w > 0.0f)) {
            bucket[i] = (int2)(-1, 0);
            continue;
        }
        const int3 c = sm_cell(position[i].xyz, inv_cell);
        const int b = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
        bucket[i] = (int2)(b, atomic_inc(&bucket_count[b]));
        const int object = particle_object[i], was = atomic_cmpxchg(&bucket_object[b], -1, object);
        if (was != -1 && was != object) atomic_xchg(&bucket_object[b], -2);
        const int key = sm_cell_key(c), had = atomic_cmpxchg(&bucket_cell[b], -1, key);
        if (had != -1 && had != key) atomic_xchg(&bucket_cell[b], -2);
    }
}

/// One work-group: bucket_start[b] = the particles in buckets before b, for b = 0 to
/// `table` (the last: all of them), and bucket_count zeroed. Each work-item sums a run of
/// consecutive counts, the work-group scans the sums in local memory (`partial`: one int per
/// work-item), and each work-item writes the beginnings of its run.
__kernel void sm_grid_scan(const int table, __global int *bucket_count, __global int *bucket_start,
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
        bucket_start[b] = total;
        bucket_count[b] = 0;
        total += count;
    }
    if (lid == size - 1) bucket_start[table] = partial[lid];
}

/// Each colliding particle's slot: slots[bucket_start[b] + rank] for its (bucket, rank).
__kernel void sm_grid_scatter(const int particle_count, __global const int2 *bucket, __global const int *bucket_start,
                              __global const float4 *contact, __global const float4 *position,
                              __global const int *particle_object, __global sm_k_slot *slots)
{
    SM_K_CHUNK(i, particle_count) {
        const int2 b = bucket[i];
        if (b.x < 0) continue;
        __global sm_k_slot *slot = &slots[bucket_start[b.x] + b.y];
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

/// Whether the 27 cells around the cell of bucket b's particles may hold a particle of another
/// object than `object` (the bucket's, -2: several): when the bucket holds several objects or
/// several cells, or the bucket of one of the 27 cells holds another object's particles and that
/// cell (or several cells). A bucket of another cell alone (buckets are shared) does not count.
inline int sm_bucket_near_others(const int begin, const int object, const int own_key, const float inv_cell,
                                 const int mask, __global const int *bucket_object, __global const int *bucket_cell,
                                 __global const sm_k_slot *slots)
{
    if (object == -2 || own_key == -2) return 1;
    const int3 cell = sm_cell(vload4(0, slots[begin].position).xyz, inv_cell);
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int3 c = (int3)((int)((uint)cell.x + (uint)dx), (int)((uint)cell.y + (uint)dy),
                                      (int)((uint)cell.z + (uint)dz));
                const int b = SM_K_CELL_HASH(c.x, c.y, c.z, mask), holds = bucket_object[b], key = bucket_cell[b];
                if (holds != -1 && holds != object && (key == -2 || key == sm_cell_key(c))) return 1;
            }
    return 0;
}

/// Each bucket's slots in index order (insertion: buckets hold a few particles), or in a bucket of
/// more than SM_K_CELL_VISITS particles the SM_K_CELL_VISITS of the lowest indices first, in
/// index order, the rest after them: the part of it a search reads. (The first slots are sorted by
/// insertion, then every later slot of a lower index than the last of them takes its place by
/// insertion and the last moves out to where it was.) Then each sorted slot's run_end, and
/// bucket_near[b] = sm_bucket_near_others() for every bucket that holds a particle.
__kernel void sm_grid_order(const int table, const float inv_cell, const int mask, __global const int *bucket_start,
                            __global const int *bucket_object, __global const int *bucket_cell,
                            __global int *bucket_near, __global sm_k_slot *slots)
{
    SM_K_CHUNK(b, table) {
        const int begin = bucket_start[b], end = bucket_start[b + 1];
        if (end == begin) continue;
        bucket_near[b] =
            sm_bucket_near_others(begin, bucket_object[b], bucket_cell[b], inv_cell, mask, bucket_object, bucket_cell,
                                  slots);
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
    }
}
