/* Pass 5, contact candidates (docs/algorithm.md step 8a; docs/contact.md): which particles each colliding
 * particle may touch in the sweeps. The device keeps a reference position per particle and a
 * list of candidates per particle: the particles of other objects (or of its own, when it
 * self-collides and they are not rest neighbours) whose references lie within the sum of the
 * two radii plus a skin. While no particle is farther than SM_K_SKIN_TRIGGER skins from its
 * reference, every pair closer than the sum of its radii is in both lists, so the lists give
 * exactly the contacts a search of the whole grid would; the step only pays for the search
 * where particles moved.
 *
 * Before each sweep: sm_contact_refresh takes a new reference for every particle that moved
 * past the trigger. A particle whose new reference lies in the cell of its old one keeps its
 * place (its slot in the grid, or its entry in the dirty table below), whose copy of the
 * reference is updated (sm_contact_link); any other joins the dirty particles, whose place in
 * the grid is out of date (walks find them in a small hash table of their own instead, the
 * dirty table: a chain of entries per bucket, one entry per move out of a cell). When a move
 * finds no room among the SM_K_DIRTY entries, the grid of the references is rebuilt: a counting
 * sort in five kernels (each particle counts itself into the bucket of its cell with an integer
 * atomic, the counts are scanned into bucket beginnings in blocks, each particle takes a slot in
 * its bucket, and each bucket is sorted by particle index, which makes the order the same on
 * every run), which leaves no particle dirty and empties the dirty table. The objects whose particles moved take new boxes of
 * their references and lists of the objects near them (sm_object_bounds, sm_object_near). Then
 * each moved particle whose reach comes near another object's box searches the cells around its
 * own that its reach overlaps (in the grid and in the dirty table) for its new list (the others
 * have none) and adds itself to the lists of its candidates, and the lists added to are sorted,
 * rid of repeats and of particles that are no longer candidates. Every kernel after the refresh
 * returns at once when it has nothing to do. */
#include "sm_shared.h"

/// A walk's rows of cells in the grid are 0 to 8, and the same rows in the dirty table 9 to 17.
#define SM_K_ROWS 9

/// The kernels that often have nothing to do run on few work-items, each taking every
/// get_global_size(0)-th item: they cost little when they return at once.
#define SM_K_EACH(i, count) for (int i = get_global_id(0); i < (count); i += (int)get_global_size(0))
/// The same, each work-item taking a run of consecutive items: where items in index order
/// read neighbouring memory, and where the order in which items take slots matters (a
/// bucket's particles then arrive nearly in index order, which its insertion sort likes).
#define SM_K_CHUNK(i, count)                                                                         \
    for (int chunk_ = ((count) + (int)get_global_size(0) - 1) / (int)get_global_size(0),            \
             i = min((int)get_global_id(0) * chunk_, (count)), end_ = min(i + chunk_, (count));     \
         i < end_; i++)

/// SM_K_PREFETCH(p): on a CPU device, a hint to bring the cache line of p in ahead of its use (a
/// loop over particles scattered in memory otherwise waits on each line in turn); nothing on
/// other devices, or where the compiler has no such hint.
#if defined(SM_K_CPU) && defined(__clang__)
#define SM_K_PREFETCH(p) __builtin_prefetch(p)
#else
#define SM_K_PREFETCH(p) ((void)0)
#endif

/// The cell of the grid (and of the dirty table) holding point x: every kernel places a point by
/// this one rule, so that a particle found in a cell is the one put there. (NaN gives cell 0.)
inline int3 sm_cell(const float3 x, const float inv_cell) { return convert_int3_sat_rtn(x * inv_cell); }

/// Whether colliding particle i (contact.w > 0) is farther than `trigger` from its reference or
/// has none (reference.w = 0; NaN moves every time).
inline bool sm_moved_past(int i, float trigger, __global const float4 *contact, __global const float4 *position,
                          __global const float4 *position_lo, __global const float4 *reference)
{
    if (!(contact[i].w > 0.0f)) return false;
    const float4 r = reference[i];
    const float3 d = (position[i].xyz - r.xyz) + position_lo[i].xyz;
    return !(r.w > 0.0f && dot(d, d) < trigger * trigger);
}

/// Whether particle i, which moved past the trigger to x, keeps its place in the grid or its
/// entry in the dirty table: when it has a reference (w > 0) in the cell of x and that place
/// (dirty[i] <= SM_K_DIRTY: at 0 a slot of the grid's bucket of the cell, else an entry of the
/// table's chain of the cell). Only the place's copy of its reference changes then
/// (sm_contact_link): particles that jitter in their cells take no entries, and the grid is
/// rebuilt less often.
inline bool sm_stays_in_cell(const float3 x, const float4 r, const int dirty, const float inv_cell)
{
    return r.w > 0.0f && dirty <= SM_K_DIRTY && all(sm_cell(r.xyz, inv_cell) == sm_cell(x, inv_cell));
}

/// reference[i] = x_i and moved[i] = generation for every particle that moved past the trigger
/// (sm_moved_past), and object_moved[its object] = generation; the particle also is listed in
/// moved_list (in no particular order). Unless it stays in its cell (sm_stays_in_cell), it takes
/// a new entry of the dirty table: dirty[i] = 1 + the entry, which holds the particle
/// (dirty_list) while there is room (SM_K_DIRTY + 1 when there is none: the grid is rebuilt); an
/// older entry of the particle is stale from then on. state[SM_K_ANY_MOVED] = 1 when a particle
/// moved (the state's flags and this refresh's counts zeroed beforehand). Each work-item takes a
/// run of particles: it counts those that moved, takes room for them in moved_list, lists them
/// and counts those that take an entry, then takes room for those in the table and hands out
/// their entries, with one atomic addition per list, not one per particle (on a CPU, thousands
/// of additions to one counter from both cores cost more than the test itself).
__kernel void sm_contact_refresh(const int particle_count, const float trigger, const float inv_cell,
                                 const int generation, __global const int *particle_object,
                                 __global const float4 *contact, __global const float4 *position,
                                 __global const float4 *position_lo, __global float4 *reference, __global int *moved,
                                 __global int *object_moved, __global int *dirty, __global int *dirty_list,
                                 __global int *moved_list, __global int *state)
{
    int moving = 0;
    SM_K_CHUNK(i, particle_count) moving += sm_moved_past(i, trigger, contact, position, position_lo, reference);
    if (moving == 0) return;
    state[SM_K_ANY_MOVED] = 1;
    const int first = atomic_add(&state[SM_K_MOVED_COUNT], moving);
    int listed = first, entering = 0;
    SM_K_CHUNK(i, particle_count) {
        if (!sm_moved_past(i, trigger, contact, position, position_lo, reference)) continue;
        const float3 x = position[i].xyz;
        if (!sm_stays_in_cell(x, reference[i], dirty[i], inv_cell)) {
            dirty[i] = -1; // (an entry below)
            entering++;
        }
        reference[i] = (float4)(x, 1.0f);
        moved[i] = generation;
        object_moved[particle_object[i]] = generation; // (every writer writes the same)
        moved_list[listed++] = i;
    }
    if (entering == 0) return;
    int entry = atomic_add(&state[SM_K_DIRTY_COUNT], entering);
    for (int k = first; k < listed; k++) {
        const int i = moved_list[k];
        if (dirty[i] >= 0) continue;
        if (entry < SM_K_DIRTY) dirty_list[entry] = i;
        dirty[i] = 1 + min(entry, SM_K_DIRTY);
        entry++;
    }
}

/// One work-item: when a particle moved, no particle with candidates listed yet; whether the
/// grid is rebuilt in this refresh (a move found no room in the dirty table), and then no
/// particle is dirty any more and the table is empty; else the first entry this refresh took.
__kernel void sm_contact_decide(__global int *state)
{
    if (get_global_id(0) != 0) return;
    if (state[SM_K_ANY_MOVED]) state[SM_K_ACTIVE_COUNT] = 0; // sm_contact_active lists them again
    const int rebuild = state[SM_K_DIRTY_COUNT] > SM_K_DIRTY;
    state[SM_K_REBUILD] = rebuild;
    if (rebuild) state[SM_K_DIRTY_COUNT] = 0;
    state[SM_K_LINK_FIRST] = rebuild ? 0 : state[SM_K_LINK_END];
    state[SM_K_LINK_END] = state[SM_K_DIRTY_COUNT];
}

/// Unless the grid is rebuilt (which copies every reference), each particle that moved in this
/// refresh has its new reference and radius copied to its place: its new entry of the dirty
/// table (from state[SM_K_LINK_FIRST] on), which joins the chain of the bucket of its cell
/// (dirty_head: the latest entry of each bucket's chain, -1 for none; dirty_next: the entry after
/// it) with its particle's object in dirty_object; else its older entry, or its slot of the grid
/// (slots[slot[i]]), in the cell it stayed in. A chain's order does not matter: lists are sorted.
__kernel void sm_contact_link(const float inv_cell, const int dirty_mask, __global const int *state,
                              __global const int *moved_list, __global const int *particle_object,
                              __global const float4 *contact, __global const float4 *reference,
                              __global const int *dirty, __global const int *slot, __global sm_k_slot *slots,
                              __global float4 *dirty_reference, __global int *dirty_object,
                              __global int *dirty_next, __global int *dirty_head)
{
    if (state[SM_K_REBUILD]) return;
    const int first = state[SM_K_LINK_FIRST];
    SM_K_EACH(k, state[SM_K_MOVED_COUNT]) {
        const int i = moved_list[k], entry = dirty[i] - 1;
        const float4 copy = (float4)(reference[i].xyz, contact[i].w);
        if (entry >= first) {
            const int3 c = sm_cell(copy.xyz, inv_cell);
            dirty_reference[entry] = copy;
            dirty_object[entry] = particle_object[i];
            dirty_next[entry] = atomic_xchg(&dirty_head[SM_K_CELL_HASH(c.x, c.y, c.z, dirty_mask)], entry);
        } else if (entry >= 0) {
            dirty_reference[entry] = copy;
        } else {
            vstore4(copy, 0, slots[slot[i]].reference);
        }
    }
}

/// Whether the boxes [lo_a, hi_a] and [lo_b, hi_b] come within `reach` of each other on every
/// axis (a point is the box with lo = hi).
inline bool sm_boxes_within(const float3 lo_a, const float3 hi_a, const float3 lo_b, const float3 hi_b,
                            const float reach)
{
    const float3 apart = fmax(lo_b - hi_a, lo_a - hi_b);
    return apart.x < reach && apart.y < reach && apart.z < reach;
}

/// The box of the references of the colliding particles of each object that had a particle move
/// in this refresh (object_moved): object_box[2 o] = (lowest, the object's largest radius),
/// object_box[2 o + 1] = (highest, 0); empty (lowest +inf, highest -inf) without colliding
/// particles. The other objects' boxes stand: their references did not change.
__kernel void sm_object_bounds(const int object_count, const int generation, __global const int *state,
                               __global const sm_k_object *objects, __global const int *object_particles,
                               __global const int *object_moved,
                               __global const float4 *contact, __global const float4 *reference,
                               __global float4 *object_box)
{
    if (!state[SM_K_ANY_MOVED]) return;
    SM_K_EACH(o, object_count) {
        if (object_moved[o] != generation) continue;
        float3 lo = (float3)(INFINITY), hi = (float3)(-INFINITY);
        float largest = 0.0f;
        const int first = objects[o].first_particle, end = first + objects[o].particle_count;
        for (int k = first; k < end; k++) {
            const int i = object_particles[k];
            const float radius = contact[i].w;
            if (!(radius > 0.0f)) continue;
            const float3 r = reference[i].xyz;
            lo = fmin(lo, r), hi = fmax(hi, r); // (a NaN reference is never a candidate, and fmin passes over it)
            largest = fmax(largest, radius);
        }
        object_box[2 * o] = (float4)(lo, largest);
        object_box[2 * o + 1] = (float4)(hi, 0.0f);
    }
}

/// For each object that had a particle move in this refresh, the other objects whose boxes come
/// within the two objects' largest radii plus the skin of its own on every axis: the only
/// objects its particles can have candidates in. object_near[o (SM_K_NEAR + 1)] is their
/// number (-1 when there are more than SM_K_NEAR), and they follow it.
__kernel void sm_object_near(const int object_count, const int generation, const float skin,
                             __global const int *state, __global const int *object_moved,
                             __global const float4 *object_box, __global int *object_near)
{
    if (!state[SM_K_ANY_MOVED]) return;
    SM_K_EACH(a, object_count) {
        if (object_moved[a] != generation) continue;
        const float4 lo_a = object_box[2 * a];
        const float3 hi_a = object_box[2 * a + 1].xyz;
        __global int *near = object_near + (size_t)a * (SM_K_NEAR + 1);
        int found = 0;
        for (int b = 0; b < object_count; b++) {
            const float4 lo_b = object_box[2 * b];
            const float gap = (lo_a.w + lo_b.w + skin) * SM_K_NEAR_MARGIN;
            if (b == a || !sm_boxes_within(lo_a.xyz, hi_a, lo_b.xyz, object_box[2 * b + 1].xyz, gap)) continue;
            if (found < SM_K_NEAR) near[1 + found] = b;
            found++;
        }
        near[0] = found <= SM_K_NEAR ? found : -1;
    }
}

/// Whether particle i (of `object`, contact c_i, reference r_i) may have a candidate: when its
/// object collides with itself or has more near objects than a list of them holds, or when the
/// reach of its reference (its radius, a near object's largest radius and the skin) overlaps the
/// box of one of its object's near objects on every axis. A particle that may not has none.
inline bool sm_may_have_candidates(const int object, const float4 c_i, const float3 r_i, const float skin,
                                   __global const sm_k_object *objects, __global const float4 *object_box,
                                   __global const int *object_near)
{
    __global const int *near = object_near + (size_t)object * (SM_K_NEAR + 1);
    const int count = near[0];
    if (count < 0 || (objects[object].flags & SM_K_SELF_COLLIDE)) return true;
    for (int k = 0; k < count; k++) {
        const int b = near[1 + k];
        const float4 lo = object_box[2 * b];
        if (sm_boxes_within(r_i, r_i, lo.xyz, object_box[2 * b + 1].xyz, (c_i.w + lo.w + skin) * SM_K_NEAR_MARGIN))
            return true;
    }
    return false;
}

/// The grid, rebuilt only when state[SM_K_REBUILD] is set: the bucket of the cell of every
/// particle's reference, -1 for particles without a radius; bucket_count[b] += 1 for each
/// particle in bucket b; no particle dirty, and the dirty table empty. (bucket_count is zero
/// outside a rebuild: zeroed at upload, and again by the rebuild's last kernel, so no refresh
/// has to clear it.)
__kernel void sm_grid_hash(const int particle_count, const float inv_cell, const int mask, const int dirty_mask,
                           __global const int *state, __global const float4 *contact,
                           __global const float4 *reference, __global int *particle_bucket, __global int *bucket_count,
                           __global int *dirty, __global int *dirty_head)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(b, dirty_mask + 1) dirty_head[b] = -1;
    SM_K_CHUNK(i, particle_count) {
        dirty[i] = 0;
        if (!(contact[i].w > 0.0f)) {
            particle_bucket[i] = -1;
            continue;
        }
        const int3 c = sm_cell(reference[i].xyz, inv_cell);
        const int bucket = SM_K_CELL_HASH(c.x, c.y, c.z, mask);
        particle_bucket[i] = bucket;
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

/// bucket_start[b] = the number of particles in buckets before b, block by block; the counts,
/// spent, are zeroed to serve as the buckets' cursors in sm_grid_scatter.
__kernel void sm_grid_scan_apply(const int entries, __global const int *state, __global int *bucket_count,
                                 __global const int *block_sum, __global int *bucket_start)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_EACH(k, (entries + SM_K_SCAN_BLOCK - 1) / SM_K_SCAN_BLOCK) {
        const int begin = k * SM_K_SCAN_BLOCK, end = min(begin + SM_K_SCAN_BLOCK, entries);
        int total = block_sum[k];
        for (int b = begin; b < end; b++) {
            bucket_start[b] = total;
            total += bucket_count[b];
            bucket_count[b] = 0;
        }
    }
}

/// Each colliding particle takes the next slot of its bucket (cursor: zero for every bucket
/// beforehand, the bucket's count afterwards).
__kernel void sm_grid_scatter(const int particle_count, __global const int *state, __global const int *particle_bucket,
                              __global const int *bucket_start, __global int *cursor, __global int *sorted)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_CHUNK(i, particle_count) {
        const int bucket = particle_bucket[i];
        if (bucket >= 0) sorted[bucket_start[bucket] + atomic_inc(&cursor[bucket])] = i;
    }
}

/// Each bucket's particles in index order (insertion sort: buckets hold a few particles), then
/// its slots (sm_k_slot: each particle's reference, radius and object, and the end of the run of
/// its object's slots; objects own consecutive particle indices, so a bucket holds each object's
/// particles in one run), and slot = the slot of each particle. A walk reads what it needs of a
/// slot in one place, next to the bucket's other slots, instead of at the particle's index.
__kernel void sm_grid_sort_buckets(const int table_size, __global const int *state, __global const int *bucket_start,
                                   __global int *cursor, __global const int *particle_object,
                                   __global const float4 *contact, __global const float4 *reference,
                                   __global int *sorted, __global int *slot, __global sm_k_slot *slots)
{
    if (!state[SM_K_REBUILD]) return;
    SM_K_CHUNK(b, table_size) {
        cursor[b] = 0; // (spent: zero again for the next rebuild's counts)
        const int begin = bucket_start[b], end = bucket_start[b + 1];
        for (int s = begin + 1; s < end; s++) {
            const int i = sorted[s];
            int t = s;
            for (; t > begin && sorted[t - 1] > i; t--) sorted[t] = sorted[t - 1];
            sorted[t] = i;
        }
        int run_end = end;
        for (int s = end - 1; s >= begin; s--) {
            const int i = sorted[s], object = particle_object[i];
            if (s + 1 < end && particle_object[sorted[s + 1]] != object) run_end = s + 1;
            slot[i] = s;
            vstore4((float4)(reference[i].xyz, contact[i].w), 0, slots[s].reference);
            slots[s].particle = i;
            slots[s].object = object;
            slots[s].run_end = run_end;
            slots[s].unused = 0;
        }
    }
}

/// Whether references r_i and r_j of particles of radii radius_i and radius_j lie closer than
/// the two radii plus the skin.
inline bool sm_within_skin(const float3 r_i, const float radius_i, const float3 r_j, const float radius_j,
                           const float skin)
{
    const float3 d = r_i - r_j;
    const float limit = radius_i + radius_j + skin;
    return dot(d, d) < limit * limit;
}

/// Whether particle j (of `object_j`, contact c_j) is a candidate of particle i: another
/// particle whose reference lies within the radii plus the skin, and not a rest neighbour when
/// both belong to one (self-colliding) object.
inline bool sm_candidate(const int i, const int j, const int object_i, const int object_j, const float4 c_i,
                         const float4 c_j, const float3 r_i, const float3 r_j, const float skin)
{
    if (j == i) return false;
    if (object_j == object_i) {
        const float3 rest = c_i.xyz - c_j.xyz;
        const float neighbours = SM_K_REST_NEIGHBOURS * (c_i.w + c_j.w);
        if (dot(rest, rest) < neighbours * neighbours) return false;
    }
    return sm_within_skin(r_i, c_i.w, r_j, c_j.w, skin);
}

/// What a walk reads: the particles' contact and references, the grid and the dirty table.
typedef struct sm_k_grid {
    __global const float4 *contact, *reference;
    __global const int *particle_object, *bucket_start, *dirty, *dirty_list, *dirty_object, *dirty_next, *dirty_head;
    __global const sm_k_slot *slots;
    __global const float4 *dirty_reference;
    int mask, dirty_mask, dirty_count;
    float cell, inv_cell, skin, reach; // reach: the largest radius plus the skin, and a margin for rounding
} sm_k_grid;

/// The grid as the kernels' arguments give it. (A cell's edge is twice the largest radius
/// plus the skin, so the largest radius plus the skin is half of the edge plus the skin.)
inline sm_k_grid sm_grid(const int mask, const int dirty_mask, const float inv_cell, const float skin,
                         __global const int *state, __global const float4 *contact, __global const float4 *reference,
                         __global const int *particle_object, __global const int *bucket_start,
                         __global const sm_k_slot *slots, __global const int *dirty, __global const int *dirty_list,
                         __global const float4 *dirty_reference, __global const int *dirty_object,
                         __global const int *dirty_next, __global const int *dirty_head)
{
    sm_k_grid g;
    g.contact = contact, g.reference = reference, g.particle_object = particle_object;
    g.bucket_start = bucket_start, g.slots = slots;
    g.dirty = dirty, g.dirty_list = dirty_list, g.dirty_reference = dirty_reference;
    g.dirty_object = dirty_object, g.dirty_next = dirty_next, g.dirty_head = dirty_head;
    g.mask = mask, g.dirty_mask = dirty_mask, g.inv_cell = inv_cell, g.skin = skin;
    g.cell = 1.0f / inv_cell;
    g.reach = 0.5f * (g.cell + skin) * 1.0001f;
    g.dirty_count = min(state[SM_K_DIRTY_COUNT], SM_K_DIRTY);
    return g;
}

/// A walk over the candidates of one particle: the cells of the grid around its reference's
/// that its reach overlaps (of the 27 around its own: a particle of a small radius reaches
/// into fewer), a row along x at a time (the row's cells lie in consecutive buckets, whose
/// slots are consecutive: one range, or two where the buckets wrap past the end of the table),
/// then the same cells in the dirty table, a chain of entries at a time. Slots of other cells
/// sharing the buckets, runs of its own object's particles (unless the object self-collides)
/// and dirty particles are skipped in the grid, and entries of other cells, of its own object
/// and stale ones in the dirty table. The order does not matter: lists are sorted. The ranges of
/// all the rows are read when the walk begins: the reads of the bucket table are far apart, and
/// made together their waits overlap.
typedef struct sm_k_walk {
    int3 own;          // the particle's cell
    int3 lo, hi;       // the cells its reach overlaps, as offsets from its own (-1 to 1)
    float reach;       // its reach: its radius, the largest radius and the skin (and a margin)
    // the rows in its reach; for each, its place around the particle's own cell (dy = row % 3 - 1,
    // dz = row / 3 - 1), the range of its slots and the end of its wrapped part (the slots from 0
    // on; 0 when the row does not wrap)
    int rows, row[SM_K_ROWS];
    int2 range[SM_K_ROWS];
    int wrapped[SM_K_ROWS];
    int r;             // the row being walked: 0 to rows - 1 in the grid, rows to 2 rows - 1 in
                       // the dirty table
    int x, y, z;       // the row's y and z, and in the dirty table the cell (x: its offset)
    int s, end;        // the next slot and the end of the range (in the dirty table, the next
                       // entry of the chain, -1 after its last)
    int next, next_end; // the range after this one (the row's wrapped part), if any
    int object;        // the particle's object
    bool self;         // whether it collides with its own object
    float4 c_i;        // its contact (rest position, radius)
    float3 r_i;        // its reference
} sm_k_walk;

/// The walk of particle i, before its first row.
inline sm_k_walk sm_walk_begin(const sm_k_grid *g, __global const sm_k_object *objects, const int i)
{
    sm_k_walk walk;
    walk.r_i = g->reference[i].xyz;
    walk.own = sm_cell(walk.r_i, g->inv_cell);
    walk.c_i = g->contact[i];
    walk.reach = walk.c_i.w + g->reach; // beyond every candidate's distance
    walk.lo = clamp(sm_cell(walk.r_i - walk.reach, g->inv_cell) - walk.own, -1, 0);
    walk.hi = clamp(sm_cell(walk.r_i + walk.reach, g->inv_cell) - walk.own, 0, 1);
    walk.rows = 0;
    for (int row = 0; row < SM_K_ROWS; row++) {
        const int dy = row % 3 - 1, dz = row / 3 - 1;
        if (dy < walk.lo.y || dy > walk.hi.y || dz < walk.lo.z || dz > walk.hi.z) continue; // out of reach
        const int y = (int)((uint)walk.own.y + (uint)dy), z = (int)((uint)walk.own.z + (uint)dz);
        // the row's distance across y and z (0 in its own row and column)
        const float gap_y = dy < 0 ? walk.r_i.y - (float)(y + 1) * g->cell : dy > 0 ? (float)y * g->cell - walk.r_i.y : 0.0f;
        const float gap_z = dz < 0 ? walk.r_i.z - (float)(z + 1) * g->cell : dz > 0 ? (float)z * g->cell - walk.r_i.z : 0.0f;
        if (gap_y * gap_y + gap_z * gap_z >= walk.reach * walk.reach) continue; // out of reach
        const int first = SM_K_CELL_HASH((int)((uint)walk.own.x + (uint)walk.lo.x), y, z, g->mask);
        const int last = first + walk.hi.x - walk.lo.x + 1; // (exclusive; past the table when the row wraps)
        walk.row[walk.rows] = row;
        walk.range[walk.rows] = (int2)(g->bucket_start[first], g->bucket_start[min(last, g->mask + 1)]);
        walk.wrapped[walk.rows] = last > g->mask + 1 ? g->bucket_start[last - (g->mask + 1)] : 0;
        walk.rows++;
    }
    for (int r = 0; r < walk.rows; r++) SM_K_PREFETCH(&g->slots[walk.range[r].x]); // (far apart: asked for together)
    walk.r = -1;
    walk.x = walk.y = walk.z = 0;
    walk.s = walk.end = walk.next = walk.next_end = 0;
    walk.object = g->particle_object[i];
    walk.self = (objects[walk.object].flags & SM_K_SELF_COLLIDE) != 0;
    return walk;
}

/// Moves the walk to its next row (the grid's, then the dirty table's, which it passes over when
/// the table is empty); false after the last.
inline bool sm_walk_next_row(sm_k_walk *walk, const sm_k_grid *g)
{
    const int r = ++walk->r;
    if (r >= (g->dirty_count > 0 ? 2 * walk->rows : walk->rows)) return false;
    const int in_grid = r < walk->rows, row = walk->row[in_grid ? r : r - walk->rows];
    walk->y = (int)((uint)walk->own.y + (uint)(row % 3 - 1));
    walk->z = (int)((uint)walk->own.z + (uint)(row / 3 - 1));
    if (in_grid) {
        walk->s = walk->range[r].x, walk->end = walk->range[r].y;
        walk->next = 0, walk->next_end = walk->wrapped[r];
    } else { // the row's cells in the dirty table, from its first on
        walk->x = walk->lo.x;
        walk->s = -1;
    }
    return true;
}

/// The next candidate of particle i, or -1 after the last. The slots of a range and the entries
/// of a chain are scanned in a loop of their own, with what they are tested against in
/// registers: most are passed over, and few walks find more than a candidate or two.
inline int sm_walk_next(sm_k_walk *walk, const sm_k_grid *g, const int i)
{
    const int object = walk->object;
    const bool skip_own = !walk->self;
    const float3 r_i = walk->r_i;
    const float radius = walk->c_i.w, skin = g->skin, inv_cell = g->inv_cell;
    for (;;) {
        int j = -1, object_j = 0;
        if (walk->r < walk->rows) { // a row of the grid
            const int own_x = walk->own.x, lo_x = walk->lo.x, hi_x = walk->hi.x, y = walk->y, z = walk->z;
            int s = walk->s;
            for (const int end = walk->end; s < end;) {
                __global const sm_k_slot *slot = &g->slots[s++];
                object_j = slot->object;
                if (object_j == object && skip_own) { // the run of its own particles in this bucket
                    s = slot->run_end;
                    continue;
                }
                // the slot's copy of the reference and radius first: most are too far
                const float4 other = vload4(0, slot->reference);
                if (!sm_within_skin(r_i, radius, other.xyz, other.w, skin)) continue;
                const int3 c = sm_cell(other.xyz, inv_cell);
                const int dx = (int)((uint)c.x - (uint)own_x);
                if (c.y != y || c.z != z || dx < lo_x || dx > hi_x) continue; // another row's
                if (g->dirty[slot->particle]) continue; // found in the dirty table
                j = slot->particle;
                break;
            }
            walk->s = s;
            if (j < 0) { // the range is done
                if (walk->next < walk->next_end) { // the row's wrapped part
                    walk->s = walk->next, walk->end = walk->next_end;
                    walk->next = walk->next_end = 0;
                } else if (!sm_walk_next_row(walk, g)) {
                    return -1;
                }
                continue;
            }
        } else { // a row of the dirty table
            if (walk->s < 0) { // the chain of the row's next cell
                if (walk->x > walk->hi.x) {
                    if (!sm_walk_next_row(walk, g)) return -1;
                } else {
                    const int x = (int)((uint)walk->own.x + (uint)walk->x++);
                    walk->s = g->dirty_head[SM_K_CELL_HASH(x, walk->y, walk->z, g->dirty_mask)];
                }
                continue;
            }
            const int3 cell = (int3)((int)((uint)walk->own.x + (uint)(walk->x - 1)), walk->y, walk->z);
            int entry = walk->s;
            while (entry >= 0) {
                const int e = entry;
                entry = g->dirty_next[e];
                object_j = g->dirty_object[e];
                if (object_j == object && skip_own) continue;
                const float4 other = g->dirty_reference[e];
                if (!sm_within_skin(r_i, radius, other.xyz, other.w, skin)) continue;
                const int3 c = sm_cell(other.xyz, inv_cell);
                if (any(c != cell)) continue; // another cell's
                if (g->dirty[g->dirty_list[e]] != e + 1) continue; // stale: the particle moved again since
                j = g->dirty_list[e];
                break;
            }
            walk->s = entry;
            if (j < 0) continue; // the chain is done
        }
        if (object_j != object) return j; // (near enough: the copy is its reference)
        if (sm_candidate(i, j, object, object_j, walk->c_i, g->contact[j], r_i, g->reference[j].xyz, skin))
            return j; // (its own object's, which it collides with)
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
    const int mask, const int dirty_mask, const float inv_cell, const float skin, __global const int *state,     \
        __global const sm_k_object *objects, __global const float4 *contact, __global const float4 *reference, \
        __global const int *particle_object, __global const int *bucket_start, __global const sm_k_slot *slots, \
        __global const int *dirty, __global const int *dirty_list, __global const float4 *dirty_reference,     \
        __global const int *dirty_object, __global const int *dirty_next, __global const int *dirty_head
#define SM_K_GRID()                                                                                              \
    sm_grid(mask, dirty_mask, inv_cell, skin, state, contact, reference, particle_object, bucket_start, slots,    \
            dirty, dirty_list, dirty_reference, dirty_object, dirty_next, dirty_head)

/// A new list for every particle that moved (in moved_list): count[i] candidates in
/// list[i * SM_K_CANDIDATES ...] in index order, or -1 when there are more than
/// SM_K_CANDIDATES. The order makes the sums of the sweeps the same whenever the contacts are,
/// however old the lists. With `near` set, a particle whose reach comes near no other object's
/// box (sm_may_have_candidates) has none without a walk.
__kernel void sm_contact_lists(__global const int *moved_list, const int near, __global const float4 *object_box,
                               __global const int *object_near, SM_K_GRID_ARGS, __global int *list,
                               __global int *count)
{
    if (!state[SM_K_ANY_MOVED]) return;
    const sm_k_grid g = SM_K_GRID();
    SM_K_EACH(k, state[SM_K_MOVED_COUNT]) {
        const int i = moved_list[k];
        count[i] = !near || sm_may_have_candidates(particle_object[i], contact[i], reference[i].xyz, skin, objects,
                                                   object_box, object_near)
                       ? sm_walk_list(&g, objects, i, list + (size_t)i * SM_K_CANDIDATES)
                       : 0;
    }
}

/// Particle j, which moved, added to the list of its candidate i unless i moved too (see
/// sm_contact_insert).
inline void sm_add_to_list(const int i, const int j, const int generation, __global const int *moved,
                           __global int *list, __global const int *count, __global int *extra, __global int *touched,
                           __global int *counts)
{
    if (moved[i] == generation || count[i] < 0) return;
    const int before = atomic_inc(&extra[i]);
    if (before == 0) touched[atomic_inc(&counts[SM_K_TOUCHED_COUNT])] = i;
    if (count[i] + before < SM_K_CANDIDATES) list[(size_t)i * SM_K_CANDIDATES + count[i] + before] = j;
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
        if (listed >= 0) { // its list
            __global const int *own = list + (size_t)j * SM_K_CANDIDATES;
            for (int k = 0; k < listed; k++) sm_add_to_list(own[k], j, generation, moved, list, count, extra, touched, counts);
        } else { // more than a list holds: a walk
            sm_k_walk walk = sm_walk_begin(&g, objects, j);
            for (int i; (i = sm_walk_next(&walk, &g, j)) >= 0;)
                sm_add_to_list(i, j, generation, moved, list, count, extra, touched, counts);
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

/// The particles the sweeps visit: those with a candidate (count[i] != 0; -1: more than a list
/// holds), in `active` in no particular order (each work-item counts its run of particles, takes
/// room for them with one atomic addition, and lists them). The others have no contact: their
/// corrections are nothing, and the sweeps leave them alone. When no particle moved, no list
/// changed, and the list of the refresh before stands.
__kernel void sm_contact_active(const int particle_count, __global const int *count, __global int *active,
                                __global int *state)
{
    if (!state[SM_K_ANY_MOVED]) return;
    int found = 0;
    SM_K_CHUNK(i, particle_count) found += count[i] != 0;
    if (found == 0) return;
    int slot = atomic_add(&state[SM_K_ACTIVE_COUNT], found);
    SM_K_CHUNK(i, particle_count) if (count[i] != 0) active[slot++] = i;
}
