/* Pass 5, contact candidates (step 8a of the README's time step): which particles each colliding
 * particle may touch in the sweeps. The device keeps a reference position per particle and a
 * list of candidates per particle: the particles of other objects (or of its own, when it
 * self-collides and they are not rest neighbours) whose references lie within the sum of the
 * two radii plus a skin. While no particle is farther than SM_K_SKIN_TRIGGER skins from its
 * reference, every pair closer than the sum of its radii is in both lists, so the lists give
 * exactly the contacts a search of the whole grid would; the step only pays for the search
 * where particles moved.
 *
 * Before each sweep: sm_contact_refresh takes a new reference for every particle that moved
 * past the trigger and adds it to the dirty particles, whose place in the grid is out of date
 * (walks find them in the dirty list instead). When more than SM_K_DIRTY particles are dirty,
 * the grid of the references is rebuilt: a counting sort in five kernels (each particle
 * counts itself into the bucket of its cell with an integer atomic, the counts are scanned
 * into bucket beginnings in blocks, each particle takes a slot in its bucket, and each bucket
 * is sorted by particle index, which makes the order the same on every run), which leaves no
 * particle dirty. Then each moved particle searches the 27 cells around its own (and the
 * dirty list) for its new list and adds itself to the lists of its candidates, and the lists
 * added to are sorted, rid of repeats and of particles that are no longer candidates. Every
 * kernel after the refresh returns at once when it has nothing to do. */
#include "sm_shared.h"

/// The state of the candidates: the number of dirty particles (SM_K_DIRTY + 1 and more: the
/// grid must be rebuilt), whether a particle moved in this refresh, whether the grid is rebuilt
/// in it, and the lengths of this refresh's lists of moved particles and of lists added to.
#define SM_K_DIRTY_COUNT 0
#define SM_K_ANY_MOVED 1
#define SM_K_REBUILD 2
#define SM_K_MOVED_COUNT 3
#define SM_K_TOUCHED_COUNT 4

/// The kernels that often have nothing to do run on few work-items, each taking every
/// get_global_size(0)-th item: they cost little when they return at once.
#define SM_K_EACH(i, count) for (int i = get_global_id(0); i < (count); i += (int)get_global_size(0))

/// reference[i] = x_i and moved[i] = generation for every colliding particle (contact.w > 0)
/// farther than `trigger` from its reference or without one (reference.w = 0), which also
/// is listed in moved_list (in no particular order) and becomes dirty (dirty[i] = 1, in the
/// dirty list while there is room); state[SM_K_ANY_MOVED] = 1 when there is one (the state's
/// flags and this refresh's counts zeroed beforehand).
__kernel void sm_contact_refresh(const int particle_count, const float trigger, const int generation,
                                 __global const float4 *contact, __global const float4 *position,
                                 __global const float4 *position_lo, __global float4 *reference, __global int *moved,
                                 __global int *dirty, __global int *dirty_list, __global int *moved_list,
                                 __global int *state)
{
    const int i = get_global_id(0);
    if (i >= particle_count || !(contact[i].w > 0.0f)) return;
    const float4 r = reference[i], x = position[i];
    const float3 d = (x.xyz - r.xyz) + position_lo[i].xyz;
    if (r.w > 0.0f && dot(d, d) < trigger * trigger) return; // NaN moves every time
    reference[i] = (float4)(x.xyz, 1.0f);
    moved[i] = generation;
    moved_list[atomic_inc(&state[SM_K_MOVED_COUNT])] = i;
    state[SM_K_ANY_MOVED] = 1;
    if (atomic_xchg(&dirty[i], 1) == 0) {
        const int slot = atomic_inc(&state[SM_K_DIRTY_COUNT]);
        if (slot < SM_K_DIRTY) dirty_list[slot] = i;
    }
}

/// One work-item: whether the grid is rebuilt in this refresh (too many dirty particles), and
/// then no particle is dirty any more.
__kernel void sm_contact_decide(__global int *state)
{
    if (get_global_id(0) != 0) return;
    const int rebuild = state[SM_K_DIRTY_COUNT] > SM_K_DIRTY;
    state[SM_K_REBUILD] = rebuild;
    if (rebuild) state[SM_K_DIRTY_COUNT] = 0;
}

/// The grid, rebuilt only when state[SM_K_REBUILD] is set: cell = (x, y, z, bucket) of every
/// particle's reference, bucket -1 for particles without a radius; bucket_count[b] += 1 for each
/// particle in bucket b (zeroed beforehand); no particle dirty.
__kernel void sm_grid_hash(const int particle_count, const float inv_cell, const int mask,
                           __global const int *state, __global const float4 *contact,
                           __global const float4 *reference, __global int4 *cell, __global int *bucket_count,
                           __global int *dirty)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(i, particle_count) {
        dirty[i] = 0;
        if (!(contact[i].w > 0.0f)) {
            cell[i] = (int4)(0, 0, 0, -1);
            continue;
        }
        const int3 c = convert_int3_sat_rtn(reference[i].xyz * inv_cell); // NaN gives 0
        const int bucket = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
        cell[i] = (int4)(c, bucket);
        atomic_inc(&bucket_count[bucket]);
    }
}

/// block_sum[k] = the sum of bucket_count over block k of SM_K_SCAN_BLOCK entries.
__kernel void sm_grid_scan_blocks(const int entries, __global const int *state, __global const int *bucket_count,
                                  __global int *block_sum)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(k, (entries + SM_K_SCAN_BLOCK - 1) / SM_K_SCAN_BLOCK) {
        const int begin = k * SM_K_SCAN_BLOCK, end = min(begin + SM_K_SCAN_BLOCK, entries);
        int sum = 0;
        for (int b = begin; b < end; b++) sum += bucket_count[b];
        block_sum[k] = sum;
    }
}

/// The exclusive prefix sum of the block sums, in place (one work-item: there are few blocks).
__kernel void sm_grid_scan_totals(const int blocks, __global const int *state, __global int *block_sum)
{
    if (get_global_id(0) != 0 || !state[SM_K_REBUILD]) return;
    int total = 0;
    for (int k = 0; k < blocks; k++) {
        const int sum = block_sum[k];
        block_sum[k] = total;
        total += sum;
    }
}

/// bucket_start[b] = the number of particles in buckets before b, block by block.
__kernel void sm_grid_scan_apply(const int entries, __global const int *state, __global const int *bucket_count,
                                 __global const int *block_sum, __global int *bucket_start)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(k, (entries + SM_K_SCAN_BLOCK - 1) / SM_K_SCAN_BLOCK) {
        const int begin = k * SM_K_SCAN_BLOCK, end = min(begin + SM_K_SCAN_BLOCK, entries);
        int total = block_sum[k];
        for (int b = begin; b < end; b++) {
            bucket_start[b] = total;
            total += bucket_count[b];
        }
    }
}

/// Each colliding particle takes the next slot of its bucket (cursor zeroed beforehand).
__kernel void sm_grid_scatter(const int particle_count, __global const int *state, __global const int4 *cell,
                              __global const int *bucket_start, __global int *cursor, __global int *sorted)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(i, particle_count) {
        const int bucket = cell[i].w;
        if (bucket >= 0) sorted[bucket_start[bucket] + atomic_inc(&cursor[bucket])] = i;
    }
}

/// Each bucket's particles in index order (insertion sort: buckets hold a few particles), with
/// sorted_cell = (cell, object) of each slot, run_end = the slot after the run of slots of one
/// object that the slot begins (objects own consecutive particle indices, so a bucket holds each
/// object's particles in one run), and the object all of the bucket's particles belong to (-1
/// when they belong to several).
__kernel void sm_grid_sort_buckets(const int table_size, __global const int *state, __global const int *bucket_start,
                                   __global const int *particle_object, __global const int4 *cell,
                                   __global int *sorted, __global int4 *sorted_cell, __global int *run_end,
                                   __global int *bucket_object)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(b, table_size) {
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

/// What a walk reads: the particles' contact and references, the grid and the dirty particles.
typedef struct sm_k_grid {
    __global const float4 *contact, *reference;
    __global const int *particle_object, *bucket_start, *sorted, *run_end, *bucket_object, *dirty, *dirty_list;
    __global const int4 *sorted_cell;
    int mask, dirty_count;
    float inv_cell, skin;
} sm_k_grid;

/// The grid as the kernels' arguments give it.
inline sm_k_grid sm_grid(const int mask, const float inv_cell, const float skin, __global const int *state,
                         __global const float4 *contact, __global const float4 *reference,
                         __global const int *particle_object, __global const int *bucket_start,
                         __global const int *sorted, __global const int4 *sorted_cell, __global const int *run_end,
                         __global const int *bucket_object, __global const int *dirty, __global const int *dirty_list)
{
    sm_k_grid g;
    g.contact = contact, g.reference = reference, g.particle_object = particle_object;
    g.bucket_start = bucket_start, g.sorted = sorted, g.sorted_cell = sorted_cell, g.run_end = run_end;
    g.bucket_object = bucket_object, g.dirty = dirty, g.dirty_list = dirty_list;
    g.mask = mask, g.inv_cell = inv_cell, g.skin = skin;
    g.dirty_count = min(state[SM_K_DIRTY_COUNT], SM_K_DIRTY);
    return g;
}

/// A walk over the candidates of one particle: the 27 cells of the grid around its reference's,
/// x fastest, each bucket's particles by index (dirty particles, other cells sharing a bucket
/// and runs of its own object's particles skipped, unless the object self-collides), then the
/// dirty list. The order does not matter: lists are sorted.
typedef struct sm_k_walk {
    int3 own, c;   // the particle's cell and the cell being walked
    int k, s, end; // the cell's number (0 to 26; 27: the dirty list), the next slot, the end
    int object;    // the particle's object
    bool self;     // whether it collides with its own object
    float4 c_i;    // its contact (rest position, radius)
    float3 r_i;    // its reference
} sm_k_walk;

/// The walk of particle i, before its first cell.
inline sm_k_walk sm_walk_begin(const sm_k_grid *g, __global const sm_k_object *objects, const int i)
{
    sm_k_walk walk;
    walk.r_i = g->reference[i].xyz;
    walk.own = convert_int3_sat_rtn(walk.r_i * g->inv_cell);
    walk.c = walk.own;
    walk.k = -1;
    walk.s = walk.end = 0;
    walk.object = g->particle_object[i];
    walk.self = (objects[walk.object].flags & SM_K_SELF_COLLIDE) != 0;
    walk.c_i = g->contact[i];
    return walk;
}

/// The next candidate of particle i, or -1 after the last.
inline int sm_walk_next(sm_k_walk *walk, const sm_k_grid *g, const int i)
{
    const int object = walk->object;
    for (;;) {
        while (walk->s >= walk->end) { // the next cell
            if (++walk->k >= 27) {
                if (walk->k > 27) return -1;
                walk->s = 0; // the dirty list
                walk->end = g->dirty_count;
                continue;
            }
            const int dxc = walk->k % 3 - 1, dy = walk->k / 3 % 3 - 1, dz = walk->k / 9 - 1;
            walk->c = (int3)((int)((uint)walk->own.x + (uint)dxc), (int)((uint)walk->own.y + (uint)dy),
                             (int)((uint)walk->own.z + (uint)dz));
            const int bucket = SM_K_CELL_HASH(walk->c.x, walk->c.y, walk->c.z, g->mask);
            if (!walk->self && g->bucket_object[bucket] == object) continue; // only its own particles
            walk->s = g->bucket_start[bucket];
            walk->end = g->bucket_start[bucket + 1];
        }
        const int s = walk->s++;
        int j, object_j;
        if (walk->k == 27) {
            j = g->dirty_list[s];
            object_j = g->particle_object[j];
            if (object_j == object && !walk->self) continue;
        } else {
            const int4 other = g->sorted_cell[s];
            if (other.w == object && !walk->self) { // the run of its own particles in this bucket
                walk->s = g->run_end[s];
                continue;
            }
            if (other.x != walk->c.x || other.y != walk->c.y || other.z != walk->c.z) continue;
            j = g->sorted[s];
            if (g->dirty[j]) continue; // found in the dirty list
            object_j = other.w;
        }
        if (sm_candidate(i, j, object, object_j, walk->c_i, g->contact[j], walk->r_i, g->reference[j].xyz, g->skin))
            return j;
    }
}

/// Particle i's candidates from a walk, in index order, into its list; returns how many, or -1
/// when there are more than SM_K_CANDIDATES (the sweeps then walk themselves).
inline int sm_walk_list(const sm_k_grid *g, __global const sm_k_object *objects, const int i, __global int *own)
{
    sm_k_walk walk = sm_walk_begin(g, objects, i);
    int found = 0;
    for (int j; (j = sm_walk_next(&walk, g, i)) >= 0;) {
        if (found == SM_K_CANDIDATES) return -1;
        int t = found++; // kept in index order (insertion)
        for (; t > 0 && own[t - 1] > j; t--) own[t] = own[t - 1];
        own[t] = j;
    }
    return found;
}

/// The arguments every kernel that walks takes, and the grid made of them.
#define SM_K_GRID_ARGS                                                                                          \
    const int mask, const float inv_cell, const float skin, __global const int *state,                          \
        __global const sm_k_object *objects, __global const float4 *contact, __global const float4 *reference, \
        __global const int *particle_object, __global const int *bucket_start, __global const int *sorted,     \
        __global const int4 *sorted_cell, __global const int *run_end, __global const int *bucket_object,      \
        __global const int *dirty, __global const int *dirty_list
#define SM_K_GRID()                                                                                     \
    sm_grid(mask, inv_cell, skin, state, contact, reference, particle_object, bucket_start, sorted, sorted_cell, \
            run_end, bucket_object, dirty, dirty_list)

/// A new list for every particle that moved (in moved_list): count[i] candidates in
/// list[i * SM_K_CANDIDATES ...] in index order, or -1 when there are more than
/// SM_K_CANDIDATES. The order makes the sums of the sweeps the same whenever the contacts are,
/// however old the lists.
__kernel void sm_contact_lists(__global const int *moved_list, SM_K_GRID_ARGS, __global int *list, __global int *count)
{
    if (!state[SM_K_ANY_MOVED]) return;
    const sm_k_grid g = SM_K_GRID();
    SM_K_EACH(k, state[SM_K_MOVED_COUNT]) {
        const int i = moved_list[k];
        count[i] = sm_walk_list(&g, objects, i, list + (size_t)i * SM_K_CANDIDATES);
    }
}

/// Every particle j that moved adds itself to the list of each of its candidates i that did not
/// (whose own walk found j): at list[i][count[i] + extra[i]++] while there is room (extra
/// zeroed beforehand), listing i in `touched` at its first addition. Candidates whose lists
/// overflowed walk in the sweeps and need nothing. (`counts` is the state again, written.)
__kernel void sm_contact_insert(const int generation, __global const int *moved, __global const int *moved_list,
                                SM_K_GRID_ARGS, __global int *list, __global const int *count, __global int *extra,
                                __global int *touched, __global int *counts)
{
    if (!state[SM_K_ANY_MOVED]) return;
    const sm_k_grid g = SM_K_GRID();
    SM_K_EACH(m, state[SM_K_MOVED_COUNT]) {
        const int j = moved_list[m];
        const int listed = count[j];
        __global const int *own = list + (size_t)j * SM_K_CANDIDATES;
        sm_k_walk walk = sm_walk_begin(&g, objects, j);
        for (int k = 0;; k++) {
            const int i = listed >= 0 ? (k < listed ? own[k] : -1) : sm_walk_next(&walk, &g, j);
            if (i < 0) break;
            if (moved[i] == generation || count[i] < 0) continue;
            const int before = atomic_inc(&extra[i]);
            if (before == 0) touched[atomic_inc(&counts[SM_K_TOUCHED_COUNT])] = i;
            if (count[i] + before < SM_K_CANDIDATES) list[(size_t)i * SM_K_CANDIDATES + count[i] + before] = j;
        }
    }
}

/// Tidies the list of particle i (see sm_contact_tidy).
inline void sm_tidy(const sm_k_grid *g, __global const sm_k_object *objects, const int i, __global int *list,
                    __global int *count, __global int *extra)
{
    const int added = extra[i];
    extra[i] = 0;
    __global int *own = list + (size_t)i * SM_K_CANDIDATES;
    const int total = count[i] + added;
    if (total > SM_K_CANDIDATES) {
        count[i] = sm_walk_list(g, objects, i, own);
        return;
    }
    for (int s = 1; s < total; s++) { // insertion sort
        const int j = own[s];
        int t = s;
        for (; t > 0 && own[t - 1] > j; t--) own[t] = own[t - 1];
        own[t] = j;
    }
    const int object = g->particle_object[i];
    const float4 c_i = g->contact[i];
    const float3 r_i = g->reference[i].xyz;
    int kept = 0;
    for (int s = 0; s < total; s++) {
        const int j = own[s];
        if (kept > 0 && own[kept - 1] == j) continue;
        if (!sm_candidate(i, j, object, g->particle_object[j], c_i, g->contact[j], r_i, g->reference[j].xyz, g->skin))
            continue;
        own[kept++] = j;
    }
    count[i] = kept;
}

/// Every list that was added to: sorted into index order, without repeats and without the
/// particles that are no longer candidates; walked again when the additions did not fit.
/// extra is zeroed again.
__kernel void sm_contact_tidy(__global const int *touched, SM_K_GRID_ARGS, __global int *list, __global int *count,
                              __global int *extra)
{
    if (!state[SM_K_ANY_MOVED]) return;
    const sm_k_grid g = SM_K_GRID();
    SM_K_EACH(k, state[SM_K_TOUCHED_COUNT]) sm_tidy(&g, objects, touched[k], list, count, extra);
}
