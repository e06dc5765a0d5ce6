/* The memory budget: what a world of given sizes needs on the host and the device, estimated
 * before anything is sampled or allocated, against what there is. */
#include "memory.h"
#include "clusters.h"
#include "math3.h"
#include "objects.h"
#include "opencl/cl_backend.h"
#include "shapes.h"
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Host bytes per element: the world's arrays (sm_world_reserve(), the collision grid) and, at
 * the peak while an object is added, its sampled points and cluster lists; measured against the
 * process's peak resident memory by tests/test_memory.c, which keeps these within its bounds. */
#define SM_HOST_BYTES_PER_PARTICLE                                                                              \
    (6 * sizeof(sm_vec3) + 3 * sizeof(double) + 1 + 2 * sizeof(int32_t) + 4 * sizeof(double) + 3 * sizeof(float) + \
     sizeof(sm_vec3) + sizeof(double) + 3 * sizeof(int32_t))
#define SM_HOST_BYTES_PER_MEMBERSHIP (2 * sizeof(int32_t) + 2 * sizeof(sm_vec3) + sizeof(double) + sizeof(int32_t) + 16)
/* While an object's grid clusters are built (sm_clusters_from_grid()): its sampled points and
 * masses, two lists a particle, and each (region, particle) pair twice (the list and the sort's
 * copy), beside the world's arrays as they were: beyond them where the regions dropped (of fewer
 * than 4 particles) leave far fewer memberships than pairs. */
#define SM_HOST_BYTES_BUILD_PER_PARTICLE (sizeof(sm_vec3) + sizeof(double) + 2 * sizeof(int32_t))
#define SM_HOST_BYTES_BUILD_PER_PAIR (2 * 16) /* clusters.c's region_member */
#define SM_HOST_BYTES_PER_CLUSTER (sizeof(sm_cluster) + 512)
#define SM_HOST_BYTES_PER_FIELD_NODE sizeof(float)
#define SM_HOST_BYTES_PER_CONTACT_PARTICLE ((4 + 1 + SM_CONTACTS_PER_PARTICLE + 1) * sizeof(int32_t) + 3 * sizeof(sm_vec3) + sizeof(double))
/* the collision grid's buckets: start, object, cell and near, and the box of 6 doubles (grid.h) */
#define SM_HOST_BYTES_PER_BUCKET ((int64_t)(4 * sizeof(int32_t) + 6 * sizeof(double)))
#define SM_HOST_BYTES_PER_SURFACE_VERTEX (4 * sizeof(sm_vec3) + 4 * sizeof(int32_t))
#define SM_HOST_BYTES_PER_SURFACE_BINDING (sizeof(int32_t) + sizeof(sm_vec3))
#define SM_HOST_BYTES_PER_SURFACE_TRIANGLE (6 * sizeof(int32_t))

sm_footprint sm_world_footprint(const sm_world *world)
{
    sm_footprint f = {
        .objects = world->object_count,
        .particles = world->particle_count,
        .clusters = world->cluster_count,
        .memberships = world->membership_count,
        .surface_vertices = world->surface_vertex_count,
        .surface_bindings = world->surface_binding_count,
        .surface_triangles = world->surface_triangle_count,
    };
    const int32_t large = sm_cl_large_threshold(world);
    for (int32_t i = 0; i < world->cluster_count; i++) f.large_clusters += world->clusters[i].member_count >= large;
    for (int32_t o = 0; o < world->object_count; o++) {
        const sm_object *object = &world->objects[o];
        f.quadratic |= object->mode == SM_MODE_QUADRATIC;
        if (object->collides) f.colliding += object->particle_count; // (their particles have a radius, the others none)
    }
    for (int32_t c = 0; c < world->collider_count; c++)
        if (world->colliders[c].def.shape == SM_COLLIDER_MESH) f.field_nodes += sm_sdf_node_count(&world->colliders[c].sdf);
    return f;
}

void sm_footprint_add(sm_footprint *to, const sm_footprint *add)
{
    to->objects += add->objects;
    to->particles += add->particles;
    to->clusters += add->clusters;
    to->memberships += add->memberships;
    to->colliding += add->colliding;
    to->large_clusters += add->large_clusters;
    to->surface_vertices += add->surface_vertices;
    to->surface_bindings += add->surface_bindings;
    to->surface_triangles += add->surface_triangles;
    to->field_nodes += add->field_nodes;
    to->build_bytes = to->build_bytes > add->build_bytes ? to->build_bytes : add->build_bytes; // (one object at a time)
    to->quadratic |= add->quadratic;
}

/* ---- Grid clusters counted without building them ----
 * sm_clusters_from_grid() lists every (region, particle) pair, sorts them, drops the regions of
 * fewer than 4 particles and gives each particle left in no region to one kept cluster. The same
 * counts follow from the particles alone, region by region: a sweep over the regions' z index
 * counts the particles of each region of one z layer in a table over x and y, then keeps those of
 * 4 or more and marks their particles. The particles are enumerated as sm_shape_sample() makes
 * them, never stored: a box's and the lattice shapes' from their parameters (a lattice row's
 * particles are {a <= |i| <= b}), a list's (points, mesh vertices) in the def's own array. The
 * work is that of the pairs (at most SM_GRID_MAX_PAIRS, else the object is refused as the
 * builder refuses it) and the memory a table of at most 1024 x 1024 counts, a bit a particle, and
 * for a lattice shape two integers a row of its lattice (for a list: an index a point). */

/// The builder's limit on an object's (region, particle) pairs (clusters.c's SM_MAX_OBJECT_MEMBERSHIPS).
#define SM_GRID_MAX_PAIRS (1 << 26)

/// An object's particles in the order sm_shape_sample() makes them, in groups of rising z: a
/// box's or a lattice's z layers, or a list's points one by one (sorted by z).
typedef struct shape_points {
    sm_shape_type type;
    const sm_shape *shape;
    int64_t groups;
    // box: resolution and size
    int32_t res[3];
    double size[3];
    // lattice: points (i, j, k) h, |i| <= n[0], ...; row (j, k) holds {a <= |i| <= b} (b < a: none)
    int64_t n[3];
    double h;
    int32_t *row_a, *row_b;
    int64_t *layer_first; ///< the index of each z layer's first particle
    // list
    const sm_vec3 *list;
    int32_t *order; ///< the list's indices by rising z
} shape_points;

static double box_coordinate(const shape_points *s, int a, int64_t i)
{
    return s->res[a] > 1 ? s->size[a] * ((double)i / (s->res[a] - 1) - 0.5) : 0.0;
}

/// The z of group g.
static double group_z(const shape_points *s, int64_t g)
{
    switch (s->type) {
    case SM_SHAPE_BOX: return box_coordinate(s, 2, g);
    case SM_SHAPE_POINTS: return s->list[s->order[g]].z;
    default: return (double)(g - s->n[2]) * s->h;
    }
}

/// Whether group g holds no particle.
static bool group_empty(const shape_points *s, int64_t g)
{
    return s->row_a && s->layer_first[g + 1] == s->layer_first[g];
}

typedef void (*point_visit)(void *context, int64_t index, double x, double y);

/// Calls visit for each particle of group g: its index and its x and y.
static void visit_group(const shape_points *s, int64_t g, point_visit visit, void *context)
{
    switch (s->type) {
    case SM_SHAPE_BOX:
        for (int64_t j = 0; j < s->res[1]; j++) {
            const double y = box_coordinate(s, 1, j);
            for (int64_t i = 0; i < s->res[0]; i++)
                visit(context, i + s->res[0] * (j + s->res[1] * g), box_coordinate(s, 0, i), y);
        }
        break;
    case SM_SHAPE_POINTS: {
        const int32_t p = s->order[g];
        visit(context, p, s->list[p].x, s->list[p].y);
        break;
    }
    default: {
        int64_t index = s->layer_first[g];
        const int64_t rows = 2 * s->n[1] + 1;
        for (int64_t r = g * rows; r < (g + 1) * rows; r++) {
            const double y = (double)(r - g * rows - s->n[1]) * s->h;
            const int64_t a = s->row_a[r], b = s->row_b[r];
            for (int64_t i = -b; i <= b; i = i == -a && a > 0 ? a : i + 1)
                visit(context, index++, (double)i * s->h, y);
        }
    }
    }
}

/// Sorts order[0, count) by the points' z, then index (a heap sort: no memory beyond the array).
static bool z_before(const sm_vec3 *points, int32_t a, int32_t b)
{
    const double za = points[a].z, zb = points[b].z;
    return za != zb ? za < zb : a < b;
}

static void sift_down(const sm_vec3 *points, int32_t *order, int64_t root, int64_t count)
{
    for (int64_t child; (child = 2 * root + 1) < count; root = child) {
        if (child + 1 < count && z_before(points, order[child], order[child + 1])) child++;
        if (!z_before(points, order[root], order[child])) return;
        const int32_t t = order[root];
        order[root] = order[child], order[child] = t;
    }
}

static void sort_by_z(const sm_vec3 *points, int32_t *order, int64_t count)
{
    for (int64_t i = count / 2 - 1; i >= 0; i--) sift_down(points, order, i, count);
    for (int64_t end = count - 1; end > 0; end--) {
        const int32_t t = order[0];
        order[0] = order[end], order[end] = t;
        sift_down(points, order, 0, end);
    }
}

static void close_points(shape_points *s)
{
    free(s->row_a), free(s->row_b), free(s->layer_first), free(s->order);
}

/// Sets s up for the particles of a (validated) shape other than a mesh's lattice, and their
/// bounding box; *irregular when a lattice row is not of the form {a <= |i| <= b}.
static sm_result open_points(const sm_shape *shape, int64_t count, shape_points *s, double lo[3], double hi[3],
                             bool *irregular)
{
    *s = (shape_points){.type = shape->type, .shape = shape};
    if (shape->type == SM_SHAPE_BOX) {
        const double size[3] = {shape->size.x, shape->size.y, shape->size.z};
        for (int a = 0; a < 3; a++) {
            s->res[a] = shape->resolution[a], s->size[a] = size[a];
            const double first = box_coordinate(s, a, 0), last = box_coordinate(s, a, s->res[a] - 1);
            lo[a] = fmin(first, last), hi[a] = fmax(first, last);
        }
        s->groups = s->res[2];
        return SM_OK;
    }
    if (shape->type == SM_SHAPE_POINTS || shape->type == SM_SHAPE_MESH) {
        s->type = SM_SHAPE_POINTS;
        s->list = shape->type == SM_SHAPE_MESH ? shape->mesh_vertices : shape->points;
        s->groups = count;
        s->order = malloc(sizeof(int32_t) * (size_t)(count > 0 ? count : 1));
        if (!s->order) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory estimating the clusters of %lld points", (long long)count);
        for (int a = 0; a < 3; a++) lo[a] = hi[a] = v3_get(s->list[0], a);
        for (int64_t i = 0; i < count; i++) {
            s->order[i] = (int32_t)i;
            for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], v3_get(s->list[i], a)), hi[a] = fmax(hi[a], v3_get(s->list[i], a));
        }
        sort_by_z(s->list, s->order, count);
        return SM_OK;
    }
    // a lattice shape: each row's particles, from a scan of its candidates (shapes.c's lattice_extent())
    const double h = shape->spacing, eps = 1e-9 * h;
    const double half[3] = {shape->type == SM_SHAPE_SPHERE ? shape->radius
                            : shape->type == SM_SHAPE_CAPSULE ? 0.5 * shape->length + shape->radius
                                                              : shape->major_radius + shape->minor_radius,
                            shape->type == SM_SHAPE_TORUS ? shape->minor_radius : shape->radius,
                            shape->type == SM_SHAPE_TORUS ? shape->major_radius + shape->minor_radius : shape->radius};
    for (int a = 0; a < 3; a++) s->n[a] = (int64_t)floor(half[a] / h + 1e-9);
    s->h = h;
    s->groups = 2 * s->n[2] + 1;
    const int64_t rows = (2 * s->n[1] + 1) * s->groups;
    s->row_a = malloc(sizeof(int32_t) * (size_t)rows);
    s->row_b = malloc(sizeof(int32_t) * (size_t)rows);
    s->layer_first = malloc(sizeof(int64_t) * (size_t)(s->groups + 1));
    if (!s->row_a || !s->row_b || !s->layer_first) {
        close_points(s);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory estimating the clusters of a %s", sm_shape_name(shape->type));
    }
    for (int a = 0; a < 3; a++) lo[a] = INFINITY, hi[a] = -INFINITY;
    s->layer_first[0] = 0;
    for (int64_t g = 0, r = 0; g < s->groups; g++) {
        int64_t layer = 0;
        const double z = (double)(g - s->n[2]) * h;
        for (int64_t j = -s->n[1]; j <= s->n[1]; j++, r++) {
            const double y = (double)j * h;
            // the shapes are symmetric in x and, along a row, inside for a <= |i| <= b (a sphere's
            // and a capsule's rows are intervals about 0, a torus's two intervals about its hole)
            int64_t a = -1, b = -1, inside = 0;
            for (int64_t i = 0; i <= s->n[0]; i++)
                if (sm_shape_lattice_inside(shape, v3((double)i * h, y, z), eps)) {
                    if (a < 0) a = i;
                    b = i, inside++;
                }
            if (a < 0) a = 0; // none: b = -1
            if (inside != b - a + 1) *irregular = true; // (never: then the caller estimates)
            s->row_a[r] = (int32_t)a, s->row_b[r] = (int32_t)b;
            if (b >= a) {
                layer += 2 * (b - a + 1) - (a == 0);
                lo[0] = fmin(lo[0], (double)(-b) * h), hi[0] = fmax(hi[0], (double)b * h);
                lo[1] = fmin(lo[1], y), hi[1] = fmax(hi[1], y);
                lo[2] = fmin(lo[2], z), hi[2] = fmax(hi[2], z);
            }
        }
        s->layer_first[g + 1] = s->layer_first[g] + layer;
    }
    return SM_OK;
}

/// The grid clusters of an object, as sm_clusters_from_grid() makes them.
typedef struct grid_count {
    int64_t pairs;       ///< (region, particle) pairs before the regions of fewer than 4 are dropped
    int64_t memberships; ///< those kept, and the particles left in none (one each)
    int64_t clusters, large_clusters;
} grid_count;

/// A kept region: its number (x fastest, then y, then z) and its particles.
typedef struct kept_region {
    int64_t number;
    int32_t members, joined;
} kept_region;

static int compare_kept_regions(const void *a, const void *b)
{
    const kept_region *x = a, *y = b;
    return (x->number > y->number) - (x->number < y->number);
}

/// The particles of a region of the z layer swept (layer - 1; 0: none yet).
typedef struct region_tally {
    int32_t members, layer;
} region_tally;

/// What the passes over the particles share.
typedef struct sweep {
    const sm_grid_frame *g;
    int64_t kz;     ///< the z layer of regions swept
    double z;       ///< the z of the group visited
    int64_t z_span; ///< the regions along z holding it
    region_tally *table; ///< the regions (ix, iy, kz) of a z layer kz, at ix + n[0] iy
    uint8_t *kept;  ///< a bit a particle: in a kept region
    int32_t large;  ///< OpenCL's work-group threshold (sm_cl_large_threshold())
    int32_t most_below; ///< the most particles of a kept region below it
    kept_region *regions; ///< where given, every kept region is listed here
    int64_t region_count;
    grid_count count;
} sweep;

static void count_pairs(void *context, int64_t index, double x, double y)
{
    sweep *w = context;
    int64_t x0, x1, y0, y1;
    (void)index;
    sm_grid_region_range(w->g, 0, x, &x0, &x1);
    sm_grid_region_range(w->g, 1, y, &y0, &y1);
    w->count.pairs += (x1 - x0 + 1) * (y1 - y0 + 1) * w->z_span;
}

static void count_members(void *context, int64_t index, double x, double y)
{
    sweep *w = context;
    int64_t x0, x1, y0, y1;
    (void)index;
    sm_grid_region_range(w->g, 0, x, &x0, &x1);
    sm_grid_region_range(w->g, 1, y, &y0, &y1);
    for (int64_t iy = y0; iy <= y1; iy++)
        for (int64_t ix = x0; ix <= x1; ix++) {
            region_tally *t = &w->table[ix + w->g->n[0] * iy];
            if (t->layer != w->kz + 1) t->layer = (int32_t)(w->kz + 1), t->members = 0; // (left from another layer)
            t->members++;
        }
}

/// Counts the memberships of kept regions and marks their particles; counts each kept region
/// at its first visit (and lists it), its count then negated.
static void count_kept(void *context, int64_t index, double x, double y)
{
    sweep *w = context;
    int64_t x0, x1, y0, y1;
    sm_grid_region_range(w->g, 0, x, &x0, &x1);
    sm_grid_region_range(w->g, 1, y, &y0, &y1);
    for (int64_t iy = y0; iy <= y1; iy++)
        for (int64_t ix = x0; ix <= x1; ix++) {
            region_tally *t = &w->table[ix + w->g->n[0] * iy];
            if (t->members > 0) { // its first visit
                if (t->members >= 4) {
                    w->count.clusters++;
                    if (t->members >= w->large) w->count.large_clusters++;
                    else if (t->members > w->most_below) w->most_below = t->members;
                    if (w->regions)
                        w->regions[w->region_count++] =
                            (kept_region){ix + w->g->n[0] * (iy + (int64_t)w->g->n[1] * w->kz), t->members, 0};
                }
                t->members = -t->members;
            }
            if (t->members <= -4) {
                w->count.memberships++;
                w->kept[index >> 3] |= (uint8_t)(1u << (index & 7));
            }
        }
}

/// A particle in no kept region joins the one whose cell centre is nearest (the first of the
/// nearest in number order), as sm_clusters_from_grid() does.
static void join_nearest(void *context, int64_t index, double x, double y)
{
    sweep *w = context;
    if ((w->kept[index >> 3] >> (index & 7)) & 1) return;
    const sm_grid_frame *g = w->g;
    const double p[3] = {x, y, w->z};
    double best = INFINITY;
    kept_region *join = NULL;
    for (int64_t c = 0; c < w->region_count; c++) {
        const int64_t r = w->regions[c].number;
        const int64_t idx[3] = {r % g->n[0], (r / g->n[0]) % g->n[1], r / ((int64_t)g->n[0] * g->n[1])};
        double d2 = 0.0;
        for (int a = 0; a < 3; a++) {
            const double d = p[a] - (g->lo[a] + ((double)idx[a] + 0.5) * g->cell[a]);
            d2 += d * d;
        }
        if (d2 < best) best = d2, join = &w->regions[c];
    }
    if (join) join->joined++;
}

/// The z index range of the regions that hold group k's z.
static void group_span(const sweep *w, const shape_points *s, int64_t k, int64_t *first, int64_t *last)
{
    sm_grid_region_range(w->g, 2, group_z(s, k), first, last);
}

/// The sweep over the z layers of regions: the particles of each layer's regions counted in
/// w->table, then the kept regions counted (and listed) and their particles marked. The groups
/// of a layer are consecutive, their z ranges rising with their z.
static void sweep_layers(const shape_points *s, sweep *w)
{
    int64_t start = 0;
    for (w->kz = 0; w->kz < w->g->n[2]; w->kz++) {
        int64_t z0, z1;
        while (start < s->groups && (group_empty(s, start) || (group_span(w, s, start, &z0, &z1), z1 < w->kz))) start++;
        int64_t end = start;
        while (end < s->groups && (group_empty(s, end) || (group_span(w, s, end, &z0, &z1), z0 <= w->kz))) end++;
        static const point_visit passes[] = {count_members, count_kept};
        for (int pass = 0; pass < 2; pass++)
            for (int64_t k = start; k < end; k++) {
                if (group_empty(s, k)) continue;
                group_span(w, s, k, &z0, &z1);
                if (z0 <= w->kz && w->kz <= z1) visit_group(s, k, passes[pass], w);
            }
    }
}

/// Counts the grid clusters of a def's (validated) shape of `particles` particles exactly;
/// *known false where its particles are not known before sampling (a mesh's inner lattice).
/// Fails as sm_clusters_from_grid() would (an extent that is not finite, too many pairs).
static sm_result count_grid_clusters(const sm_object_def *def, int64_t particles, int32_t large, grid_count *out,
                                     bool *known)
{
    const sm_shape *shape = &def->shape;
    const int32_t *grid = def->clusters.grid;
    *out = (grid_count){0};
    *known = !(shape->type == SM_SHAPE_MESH && shape->mesh_particles == SM_MESH_PARTICLES_LATTICE);
    if (!*known || particles == 0) return SM_OK;
    if (grid[0] * grid[1] * grid[2] == 1) { // one region, of every particle (a list's extent must be finite)
        const sm_vec3 *list = shape->type == SM_SHAPE_POINTS ? shape->points
                              : shape->type == SM_SHAPE_MESH ? shape->mesh_vertices
                                                             : NULL;
        for (int a = 0; a < 3 && list; a++) {
            double lo = v3_get(list[0], a), hi = lo;
            for (int64_t i = 1; i < particles; i++) lo = fmin(lo, v3_get(list[i], a)), hi = fmax(hi, v3_get(list[i], a));
            if (!isfinite(hi - lo)) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the object's extent is not finite");
        }
        *out = (grid_count){.pairs = particles, .memberships = particles, .clusters = 1, .large_clusters = particles >= large};
        return SM_OK;
    }
    shape_points s;
    double lo[3], hi[3];
    bool irregular = false;
    sm_result result = open_points(shape, particles, &s, lo, hi, &irregular);
    if (result != SM_OK) return result;
    if (irregular) {
        *known = false;
        close_points(&s);
        return SM_OK;
    }
    // the frame, as sm_clusters_from_grid() makes it
    sm_grid_frame g = {.overlap = def->clusters.overlap};
    double largest = 0.0;
    for (int a = 0; a < 3; a++) largest = fmax(largest, hi[a] - lo[a]);
    if (!isfinite(largest)) {
        close_points(&s);
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the object's extent is not finite");
    }
    for (int a = 0; a < 3; a++) {
        g.n[a] = hi[a] - lo[a] > 0.0 ? grid[a] : 1;
        g.lo[a] = lo[a];
        g.cell[a] = (hi[a] - lo[a]) / g.n[a];
    }
    g.eps = 1e-9 * largest;

    // the pairs, refused beyond the builder's limit
    sweep w = {.g = &g, .large = large};
    for (int64_t k = 0; k < s.groups && w.count.pairs <= SM_GRID_MAX_PAIRS; k++) {
        if (group_empty(&s, k)) continue;
        int64_t z0, z1;
        group_span(&w, &s, k, &z0, &z1);
        w.z_span = z1 - z0 + 1;
        visit_group(&s, k, count_pairs, &w);
    }
    if (w.count.pairs > SM_GRID_MAX_PAIRS) {
        close_points(&s);
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "a grid of %d x %d x %d cells with overlap %g gives over %d cluster memberships; use fewer "
                       "cells or less overlap",
                       grid[0], grid[1], grid[2], g.overlap, SM_GRID_MAX_PAIRS);
    }

    w.table = calloc((size_t)g.n[0] * (size_t)g.n[1], sizeof(region_tally));
    w.kept = calloc((size_t)(particles / 8 + 1), 1);
    if (!w.table || !w.kept) {
        free(w.table), free(w.kept), close_points(&s);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory counting the clusters of %lld particles", (long long)particles);
    }
    sweep_layers(&s, &w);
    int64_t left = particles; // in no kept region
    for (int64_t i = 0; i < particles; i++) left -= (w.kept[i >> 3] >> (i & 7)) & 1;
    grid_count c = w.count;
    if (c.clusters == 0) { // every region dropped: one cluster of the whole object
        c = (grid_count){.pairs = c.pairs, .memberships = particles, .clusters = 1, .large_clusters = particles >= large};
    } else if (left > 0) {
        c.memberships += left; // each joins one kept cluster
        if ((int64_t)w.most_below + left >= large) {
            // which may so reach the work-group threshold: the joins, as the builder makes them
            // (its work, and a list of the kept regions)
            w.regions = malloc(sizeof(kept_region) * (size_t)c.clusters);
            if (!w.regions) {
                free(w.table), free(w.kept), close_points(&s);
                return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory counting the clusters of %lld particles",
                               (long long)particles);
            }
            w.count = (grid_count){0};
            memset(w.kept, 0, (size_t)(particles / 8 + 1));
            memset(w.table, 0, sizeof(region_tally) * (size_t)g.n[0] * (size_t)g.n[1]);
            sweep_layers(&s, &w);
            qsort(w.regions, (size_t)w.region_count, sizeof(kept_region), compare_kept_regions);
            for (int64_t k = 0; k < s.groups; k++) {
                if (group_empty(&s, k)) continue;
                w.z = group_z(&s, k);
                visit_group(&s, k, join_nearest, &w);
            }
            c.large_clusters = 0;
            for (int64_t r = 0; r < w.region_count; r++) c.large_clusters += w.regions[r].members + w.regions[r].joined >= large;
            free(w.regions);
        }
    }
    *out = c;
    free(w.table), free(w.kept), close_points(&s);
    return SM_OK;
}

/// What an object of `particles` particles adds; its grid clusters counted where `grid` is given,
/// else estimated from the grid and its overlap.
static sm_footprint object_footprint(const sm_world *world, const sm_object_def *def, int64_t particles,
                                     const grid_count *grid)
{
    sm_footprint f = {.objects = 1, .particles = particles, .quadratic = def->mode == SM_MODE_QUADRATIC};
    const int32_t large = sm_cl_large_threshold(world);
    if (def->clusters.list_offsets) {
        f.clusters = def->clusters.list_count;
        f.memberships = def->clusters.list_offsets[def->clusters.list_count];
        for (int32_t c = 0; c < f.clusters; c++)
            f.large_clusters += def->clusters.list_offsets[c + 1] - def->clusters.list_offsets[c] >= large;
    } else if (grid) {
        f.clusters = grid->clusters;
        f.memberships = grid->memberships;
        f.large_clusters = grid->large_clusters;
    } else {
        // a mesh's inner lattice, not known before it is sampled: n cells grown by `overlap` on
        // each side cover an axis n + 2 overlap (n - 1) times over (the growth past either end
        // holds no particle): the memberships per particle and axis of particles spread evenly
        double per_particle = 1.0;
        f.clusters = 1;
        for (int a = 0; a < 3; a++) {
            const int32_t n = def->clusters.grid[a];
            per_particle *= fmin((double)n, 1.0 + 2.0 * def->clusters.overlap * (n - 1) / n);
            f.clusters *= n;
        }
        f.clusters = f.clusters < particles ? f.clusters : particles;
        f.memberships = (int64_t)ceil((double)particles * per_particle);
        f.large_clusters = f.memberships >= (int64_t)large * f.clusters ? f.clusters : 0; // clusters of the mean size
    }
    if (world->def.collisions.enabled && def->collisions.enabled) f.colliding = particles;
    const sm_surface *s = &def->surface;
    const bool own_mesh = def->shape.type == SM_SHAPE_MESH && !s->vertices && s->enabled;
    if (s->enabled && (s->vertices || own_mesh)) {
        f.surface_vertices = own_mesh ? def->shape.mesh_vertex_count : s->vertex_count;
        f.surface_triangles = own_mesh ? def->shape.mesh_triangle_count : s->triangle_count;
        f.surface_bindings = particles > 0 ? (int64_t)ceil((double)f.surface_vertices * (double)f.memberships / (double)particles) : 0;
    }
    if (!def->clusters.list_offsets) { // building its grid clusters, where that takes more than the object will
        const int64_t pairs = grid ? grid->pairs : f.memberships;
        const int64_t build = particles * (int64_t)SM_HOST_BYTES_BUILD_PER_PARTICLE + pairs * (int64_t)SM_HOST_BYTES_BUILD_PER_PAIR;
        const int64_t kept = sm_host_bytes(&f);
        f.build_bytes = build > kept ? build - kept : 0;
    }
    return f;
}

sm_result sm_object_footprint(const sm_world *world, const sm_object_def *def, sm_footprint *out)
{
    int64_t particles = 0;
    sm_result result = sm_shape_count(&def->shape, &particles);
    if (result != SM_OK) return result;
    grid_count grid;
    bool known = false;
    if (!def->clusters.list_offsets) {
        result = count_grid_clusters(def, particles, sm_cl_large_threshold(world), &grid, &known);
        if (result != SM_OK) return result;
    }
    *out = object_footprint(world, def, particles, known ? &grid : NULL);
    return SM_OK;
}

sm_footprint sm_object_footprint_of(const sm_world *world, const sm_object_def *def, int64_t particles)
{
    return object_footprint(world, def, particles, NULL);
}

int64_t sm_host_bytes(const sm_footprint *f)
{
    const int64_t table = sm_grid_table_size(f->colliding);
    return f->particles * (int64_t)SM_HOST_BYTES_PER_PARTICLE + f->memberships * (int64_t)SM_HOST_BYTES_PER_MEMBERSHIP +
           f->clusters * (int64_t)SM_HOST_BYTES_PER_CLUSTER + f->objects * (int64_t)sizeof(sm_object) +
           (f->colliding > 0 ? f->particles * (int64_t)SM_HOST_BYTES_PER_CONTACT_PARTICLE + SM_HOST_BYTES_PER_BUCKET * table : 0) +
           f->surface_vertices * (int64_t)SM_HOST_BYTES_PER_SURFACE_VERTEX +
           f->surface_bindings * (int64_t)SM_HOST_BYTES_PER_SURFACE_BINDING +
           f->surface_triangles * (int64_t)SM_HOST_BYTES_PER_SURFACE_TRIANGLE +
           f->field_nodes * (int64_t)SM_HOST_BYTES_PER_FIELD_NODE + f->build_bytes;
}

/// A byte count from $SM_MEMORY_BUDGET: digits with an optional K, M, G or T (powers of 1024),
/// or "none" (INT64_MAX); 0 when unset. Anything else is an error naming the variable.
static sm_result budget_from_environment(int64_t *out)
{
    *out = 0;
    const char *text = getenv("SM_MEMORY_BUDGET");
    if (!text || !*text) return SM_OK;
    if (strcmp(text, "none") == 0) {
        *out = INT64_MAX;
        return SM_OK;
    }
    char *end = NULL;
    const double value = strtod(text, &end);
    double scale = 1.0;
    if (end && *end) {
        const char *units = "KMGT";
        const char *unit = strchr(units, *end);
        if (unit && end[1] == '\0') scale = ldexp(1.0, 10 * (int)(unit - units + 1)), end++;
    }
    if (!(end && *end == '\0' && value > 0.0 && value * scale < 9e18)) {
        char printable[128];
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "$SM_MEMORY_BUDGET must be a byte count such as 64G (K, M, G, T: powers of 1024) or \"none\", got '%s'",
                       sm_printable(text, printable, sizeof printable));
    }
    *out = (int64_t)(value * scale);
    return SM_OK;
}

/// The host memory the world may still take: MemAvailable of /proc/meminfo (the free pages
/// where there is none); *from names the source.
static int64_t host_available(const char **from)
{
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (meminfo) {
        char line[256];
        long long kib = -1;
        while (fgets(line, sizeof line, meminfo))
            if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
        fclose(meminfo);
        if (kib >= 0) {
            *from = "MemAvailable in /proc/meminfo";
            return (int64_t)kib * 1024;
        }
    }
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *from = "the free physical pages";
    return pages > 0 && page > 0 ? (int64_t)pages * page : INT64_MAX;
}

/// "12.3 GB" for a byte count, in `buffer`.
static const char *gigabytes(int64_t bytes, char *buffer, size_t size)
{
    if (bytes >= 1000000000) snprintf(buffer, size, "%.1f GB", (double)bytes / 1e9);
    else snprintf(buffer, size, "%.1f MB", (double)bytes / 1e6);
    return buffer;
}

sm_result sm_check_memory(const sm_world *world, const sm_footprint *add, const char *what)
{
    int64_t budget = world->def.memory_budget;
    const char *budget_from = "sm_world_def.memory_budget";
    if (budget == 0) {
        sm_result result = budget_from_environment(&budget);
        if (result != SM_OK) return result;
        budget_from = "$SM_MEMORY_BUDGET";
    }
    const sm_footprint now = sm_world_footprint(world);
    sm_footprint after = now;
    sm_footprint_add(&after, add);
    // a mesh collider's field, named where it is part of what is added
    char fields[96] = "", field[96] = "";
    if (add->field_nodes > 0) {
        snprintf(fields, sizeof fields, ", with mesh-collider fields of %lld nodes", (long long)after.field_nodes);
        snprintf(field, sizeof field, ", and a mesh collider's field of %lld nodes", (long long)add->field_nodes);
    }
    const char *coarser = add->field_nodes > 0 ? "a mesh collider of larger cells" : "fewer or coarser objects";

    // the device: every buffer, and the largest one, against its memory (exact: the same plan
    // the buffers are made from)
    int64_t device_now = 0, device_after = 0;
    bool unified = false;
    if (world->cl) {
        int64_t largest = 0, global = 0, alloc = 0;
        const char *kind = "", *global_from = "", *alloc_from = "";
        sm_cl_plan_bytes(world, &now, &device_now, NULL, NULL);
        sm_cl_plan_bytes(world, &after, &device_after, &largest, &kind);
        sm_cl_device_memory(world, &global, &alloc, &unified, &global_from, &alloc_from);
        if (budget > 0 && budget < global) global = budget, global_from = budget_from;
        char need[32], have[32];
        if (device_after > global)
            return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                           "%s needs %s of OpenCL device memory (%lld bytes for a world of %lld particles, %lld "
                           "cluster memberships and %lld cluster%s%s), and %s has %s (%s); use %s%s",
                           what, gigabytes(device_after, need, sizeof need), (long long)device_after,
                           (long long)after.particles, (long long)after.memberships, (long long)after.clusters,
                           after.clusters == 1 ? "" : "s", fields,
                           sm_cl_device_name(world), gigabytes(global, have, sizeof have), global_from, coarser,
                           global_from == budget_from ? ", or raise the budget" : ", or a device with more memory");
        if (largest > alloc)
            return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                           "%s needs an OpenCL buffer of %s (%lld bytes, one of its %s buffers), and %s allocates at most "
                           "%s in one buffer (%s); use %s",
                           what, gigabytes(largest, need, sizeof need), (long long)largest, kind, sm_cl_device_name(world),
                           gigabytes(alloc, have, sizeof have), alloc_from, coarser);
    }

    // the host: what the world adds (with the device's buffers, where they live in host memory)
    const int64_t host_after = sm_host_bytes(&after) + (unified ? device_after : 0);
    const int64_t host_now = sm_host_bytes(&now) + (unified ? device_now : 0);
    int64_t available = budget > 0 ? budget - host_now : 0;
    const char *available_from = budget_from;
    if (budget == 0) available = host_available(&available_from);
    if (host_after - host_now > available) {
        char need[32], have[32];
        return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                       "%s needs about %s of host memory (%lld bytes for %lld particles, %lld cluster memberships and "
                       "%lld cluster%s%s%s), and %s %s (%s); use %s, or raise the budget with "
                       "$SM_MEMORY_BUDGET (e.g. SM_MEMORY_BUDGET=64G) or sm_world_def.memory_budget",
                       what, gigabytes(host_after - host_now, need, sizeof need), (long long)(host_after - host_now),
                       (long long)(after.particles - now.particles), (long long)(after.memberships - now.memberships),
                       (long long)(after.clusters - now.clusters), after.clusters - now.clusters == 1 ? "" : "s",
                       field, unified ? ", with the OpenCL device's buffers" : "",
                       budget > 0 ? "the budget leaves" : "the host has", gigabytes(available, have, sizeof have),
                       available_from, coarser);
    }
    return SM_OK;
}

sm_result sm_world_estimate_memory(const sm_world *world, const sm_object_def *defs, int32_t count,
                                   sm_memory_estimate *out)
{
    if (!world || !out || count < 0 || (count > 0 && !defs))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_estimate_memory: world, out and count defs must be given");
    sm_footprint f = sm_world_footprint(world);
    for (int32_t i = 0; i < count; i++) {
        sm_footprint object;
        sm_result result = sm_validate_object_def(&defs[i]);
        if (result == SM_OK) result = sm_object_footprint(world, &defs[i], &object);
        if (result != SM_OK) return result;
        sm_footprint_add(&f, &object);
    }
    int64_t device = 0;
    if (world->cl) sm_cl_plan_bytes(world, &f, &device, NULL, NULL);
    *out = (sm_memory_estimate){.host_bytes = sm_host_bytes(&f), .device_bytes = device, .particles = f.particles,
                                .memberships = f.memberships, .clusters = f.clusters};
    return SM_OK;
}
