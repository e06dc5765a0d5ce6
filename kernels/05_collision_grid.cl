/* Pass 5, collision grid (step 8a of the README's time step): the colliding particles sorted by
 * the bucket of their grid cell, a counting sort in five kernels. Each particle finds its cell
 * and counts itself into its bucket (integer atomics: the counts do not depend on the order);
 * the counts are scanned into bucket beginnings in blocks; each particle takes a slot in its
 * bucket (again an integer atomic, so the order within a bucket varies from run to run); and
 * each bucket is then sorted by particle index, which makes the result the same every run, and
 * the same as the CPU reference's stable sort. Positions are read after the position update. */
#include "sm_shared.h"

/// cell = (x, y, z, bucket) of every particle, bucket -1 for particles without a radius
/// (contact.w); bucket_count[b] += 1 for each particle in bucket b (zeroed beforehand).
__kernel void sm_grid_hash(const int particle_count, const float inv_cell, const int mask,
                           __global const float4 *contact, __global const float4 *position,
                           __global int4 *cell, __global int *bucket_count)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    if (!(contact[i].w > 0.0f)) {
        cell[i] = (int4)(0, 0, 0, -1);
        return;
    }
    const int3 c = convert_int3_sat_rtn(position[i].xyz * inv_cell); // NaN gives 0
    const int bucket = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
    cell[i] = (int4)(c, bucket);
    atomic_inc(&bucket_count[bucket]);
}

/// block_sum[k] = the sum of bucket_count over block k of SM_K_SCAN_BLOCK entries.
__kernel void sm_grid_scan_blocks(const int entries, __global const int *bucket_count, __global int *block_sum)
{
    const int k = get_global_id(0);
    const int begin = k * SM_K_SCAN_BLOCK;
    if (begin >= entries) return;
    const int end = min(begin + SM_K_SCAN_BLOCK, entries);
    int sum = 0;
    for (int b = begin; b < end; b++) sum += bucket_count[b];
    block_sum[k] = sum;
}

/// The exclusive prefix sum of the block sums, in place (one work-item: there are few blocks).
__kernel void sm_grid_scan_totals(const int blocks, __global int *block_sum)
{
    if (get_global_id(0) != 0) return;
    int total = 0;
    for (int k = 0; k < blocks; k++) {
        const int sum = block_sum[k];
        block_sum[k] = total;
        total += sum;
    }
}

/// bucket_start[b] = the number of particles in buckets before b, block by block.
__kernel void sm_grid_scan_apply(const int entries, __global const int *bucket_count,
                                 __global const int *block_sum, __global int *bucket_start)
{
    const int k = get_global_id(0);
    const int begin = k * SM_K_SCAN_BLOCK;
    if (begin >= entries) return;
    const int end = min(begin + SM_K_SCAN_BLOCK, entries);
    int total = block_sum[k];
    for (int b = begin; b < end; b++) {
        bucket_start[b] = total;
        total += bucket_count[b];
    }
}

/// Each colliding particle takes the next slot of its bucket (cursor zeroed beforehand).
__kernel void sm_grid_scatter(const int particle_count, __global const int4 *cell, __global const int *bucket_start,
                              __global int *cursor, __global int *sorted)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    const int bucket = cell[i].w;
    if (bucket < 0) return;
    sorted[bucket_start[bucket] + atomic_inc(&cursor[bucket])] = i;
}

/// Each bucket's particles in index order (insertion sort: buckets hold a few particles), with
/// sorted_cell = (cell, object) of each slot, and the object all of them belong to (-1 when they
/// belong to several): the collide pass skips a bucket of a particle's own object at once.
__kernel void sm_grid_sort_buckets(const int table_size, __global const int *bucket_start,
                                   __global const int *particle_object, __global const int4 *cell,
                                   __global int *sorted, __global int4 *sorted_cell, __global int *bucket_object)
{
    const int b = get_global_id(0);
    if (b >= table_size) return;
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
    bucket_object[b] = object;
}
