/* Cutting a triangle surface by a plane (the geometry of Henriques & Wuensche's cutting tool).
 *
 * 1. Each input vertex is classified by its signed distance d = dot(x - point, n): front when
 *    d > 0, back otherwise. An input edge whose ends lie on different sides gets one cut point,
 *    at t = d_a / (d_a - d_b) from its lower-numbered end a, so that the two triangles sharing
 *    the edge make the same point.
 * 2. A triangle wholly on one side goes to that piece. A straddling one has a lone vertex L on
 *    one side and P, Q (in CCW order after L) on the other: L's side gets the corner triangle
 *    (L, c_LP, c_QL), the other side the quad (c_LP, P, Q, c_QL) as two triangles. Both keep the
 *    input's orientation, and each has one edge on the plane: c_LP -> c_QL on L's side,
 *    c_QL -> c_LP on the other.
 * 3. On each piece, the plane edges that a single triangle uses border the opening the cut left.
 *    Reversed, they are the boundary of the cap in the cap's own orientation: seen from the side
 *    the cap faces, outer boundaries run CCW and holes CW. Each hole is given to the smallest
 *    outer loop that contains it (point in polygon), joined to it by a bridge (Eberly,
 *    "Triangulation by Ear Clipping"), and the polygon is clipped ear by ear. Cap triangles use
 *    the loops' vertices only, so the piece is closed.
 */
#include "cut_surface.h"

#include "math3.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

enum { BACK = 0, FRONT = 1 };

/// A point in a 2D frame of the plane.
typedef struct p2 {
    double x, y;
} p2;

/// The cut point of input edge (a, b), a < b: at x_a + t (x_b - x_a), rest positions alike.
typedef struct cut_point {
    int32_t a, b;
    double t;
} cut_point;

/// Open addressing from an input edge (key a * vertex_count + b, a < b) to its cut point.
typedef struct edge_table {
    int64_t *keys; // -1: an empty slot
    int32_t *values;
    size_t mask;
} edge_table;

/// A piece as it is built: its arrays, the maps from input vertices and cut points to its own
/// vertices, the edges its triangles put on the plane (directed as the triangle runs them), and
/// where the cap triangulation places its cut vertices (see layout_cut_points()).
typedef struct piece_builder {
    sm_cut_piece *piece;
    int32_t triangle_capacity;
    int32_t *from_input, *from_cut; // -1: not in this piece yet
    int32_t *plane_edges;           // 2 per edge: from, to
    int32_t plane_edge_count;
    sm_vec3 *layout;                // per vertex (cut vertices only)
} piece_builder;

/// The cut's working state.
typedef struct cutter {
    const sm_cut_input *in;
    double *distance; // per input vertex: dot(x - point, normal)
    cut_point *cuts;
    int32_t cut_count;
    edge_table table;
    piece_builder side[2]; // BACK, FRONT
} cutter;

/// A 2D frame of the plane: x - origin -> (dot(x - origin, e1), dot(x - origin, e2)). With
/// e1 x e2 = m, a polygon CCW in the frame is CCW seen from the side m points to.
typedef struct cap_frame {
    sm_vec3 origin, e1, e2;
} cap_frame;

/// Closed loops of piece vertices: loop i is vertices[offsets[i] .. offsets[i + 1]).
typedef struct loop_set {
    int32_t count;
    int32_t *offsets, *vertices;
} loop_set;

/// A polygon to triangulate: its corners' piece vertices (a bridge repeats two of them) and points.
typedef struct polygon {
    int32_t count;
    int32_t *label;
    p2 *point;
} polygon;

/* ---- Input and classification ----------------------------------------------------------- */

static sm_vec3 rest_of(const sm_cut_input *in, int32_t v) { return in->rest ? in->rest[v] : in->position[v]; }

/// (1 - t) a + t b: exactly a at t = 0 and exactly b at t = 1 (a vertex on the plane).
static sm_vec3 lerp(sm_vec3 a, sm_vec3 b, double t) { return v3_add(v3_scale(a, 1.0 - t), v3_scale(b, t)); }

static sm_result check_input(const sm_cut_input *in, const sm_cut_piece *back, const sm_cut_piece *front)
{
    if (!in || !back || !front) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: the input and both pieces must be given");
    if (in->vertex_count <= 0 || in->triangle_count < 0 || !in->position || (in->triangle_count > 0 && !in->triangles))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: the surface is empty (%d vertices, %d triangles)",
                       in->vertex_count, in->triangle_count);
    // the pieces' worst cases (every triangle straddling: 2 triangles each, 2 cut points each,
    // caps of at most 3 triangles each) must fit in int32
    if (in->triangle_count > INT32_MAX / 8 || (int64_t)in->vertex_count + 2 * (int64_t)in->triangle_count > INT32_MAX)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: the surface is too large (%d vertices, %d triangles)",
                       in->vertex_count, in->triangle_count);
    sm_vec3 unit;
    if (!v3_is_finite(in->point) || !v3_direction(in->normal, &unit))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: the plane needs a finite point and a finite, non-zero normal");
    for (int32_t v = 0; v < in->vertex_count; v++)
        if (!v3_is_finite(in->position[v]) || !v3_is_finite(rest_of(in, v)))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: vertex %d has a non-finite position or rest position", v);
    for (int64_t k = 0; k < 3 * (int64_t)in->triangle_count; k++)
        if (in->triangles[k] < 0 || in->triangles[k] >= in->vertex_count)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: triangle %lld names vertex %d of %d",
                           (long long)(k / 3), in->triangles[k], in->vertex_count);
    return SM_OK;
}

static int side_of(const cutter *c, int32_t v) { return c->distance[v] > 0.0 ? FRONT : BACK; }

/// Whether a triangle has vertices on both sides.
static bool straddles(const cutter *c, const int32_t *t)
{
    return side_of(c, t[0]) != side_of(c, t[1]) || side_of(c, t[0]) != side_of(c, t[2]);
}

/* ---- Cut points, one per input edge -------------------------------------------------------- */

static bool edge_table_init(edge_table *table, int32_t count)
{
    size_t size = 16;
    while (size < 2 * (size_t)count) size *= 2;
    table->keys = malloc(size * sizeof *table->keys);
    table->values = malloc(size * sizeof *table->values);
    if (!table->keys || !table->values) return false;
    for (size_t s = 0; s < size; s++) table->keys[s] = -1;
    table->mask = size - 1;
    return true;
}

/// The slot that holds `key`, or the empty slot where it belongs.
static size_t edge_slot(const edge_table *table, int64_t key)
{
    size_t s = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 20) & table->mask;
    while (table->keys[s] != -1 && table->keys[s] != key) s = (s + 1) & table->mask;
    return s;
}

/// The cut point of the straddling edge (a, b), made the first time the edge is asked for.
static int32_t cut_of_edge(cutter *c, int32_t a, int32_t b)
{
    if (a > b) {
        const int32_t swap = a;
        a = b, b = swap;
    }
    const int64_t key = (int64_t)a * c->in->vertex_count + b;
    const size_t s = edge_slot(&c->table, key);
    if (c->table.keys[s] == key) return c->table.values[s];
    // one distance is > 0 and the other <= 0, so d_a - d_b is not zero
    const double da = c->distance[a], db = c->distance[b];
    double t = da / (da - db);
    t = t > 0.0 ? (t < 1.0 ? t : 1.0) : 0.0;
    c->cuts[c->cut_count] = (cut_point){a, b, t};
    c->table.keys[s] = key;
    c->table.values[s] = c->cut_count;
    return c->cut_count++;
}

/* ---- Building the pieces ------------------------------------------------------------------- */

static sm_result piece_init(piece_builder *b, sm_cut_piece *piece, int32_t vertex_capacity, int32_t triangle_capacity,
                            int32_t input_count, int32_t cut_capacity, int32_t plane_capacity)
{
    b->piece = piece;
    b->triangle_capacity = triangle_capacity;
    piece->position = malloc(sizeof *piece->position * (size_t)vertex_capacity);
    piece->rest = malloc(sizeof *piece->rest * (size_t)vertex_capacity);
    piece->source_vertex = malloc(sizeof *piece->source_vertex * (size_t)vertex_capacity);
    piece->triangles = malloc(3 * sizeof *piece->triangles * (size_t)triangle_capacity);
    b->from_input = malloc(sizeof *b->from_input * (size_t)input_count);
    b->from_cut = malloc(sizeof *b->from_cut * (size_t)(cut_capacity > 0 ? cut_capacity : 1));
    b->plane_edges = malloc(2 * sizeof *b->plane_edges * (size_t)(plane_capacity > 0 ? plane_capacity : 1));
    b->layout = malloc(sizeof *b->layout * (size_t)vertex_capacity);
    if (!piece->position || !piece->rest || !piece->source_vertex || !piece->triangles || !b->from_input || !b->from_cut ||
        !b->plane_edges || !b->layout)
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory for the pieces");
    for (int32_t v = 0; v < input_count; v++) b->from_input[v] = -1;
    for (int32_t k = 0; k < cut_capacity; k++) b->from_cut[k] = -1;
    return SM_OK;
}

static void piece_builder_free(piece_builder *b)
{
    free(b->from_input), free(b->from_cut), free(b->plane_edges), free(b->layout);
    b->from_input = b->from_cut = b->plane_edges = NULL;
    b->layout = NULL;
}

static int32_t add_vertex(sm_cut_piece *p, sm_vec3 x, sm_vec3 rest, int32_t source)
{
    const int32_t v = p->vertex_count++;
    p->position[v] = x;
    p->rest[v] = rest;
    p->source_vertex[v] = source;
    return v;
}

/// The piece's copy of input vertex v.
static int32_t input_vertex(const cutter *c, piece_builder *b, int32_t v)
{
    if (b->from_input[v] < 0) b->from_input[v] = add_vertex(b->piece, c->in->position[v], rest_of(c->in, v), v);
    return b->from_input[v];
}

/// The piece's copy of cut point k.
static int32_t cut_vertex(const cutter *c, piece_builder *b, int32_t k)
{
    if (b->from_cut[k] < 0) {
        const cut_point *cp = &c->cuts[k];
        const sm_vec3 x = lerp(c->in->position[cp->a], c->in->position[cp->b], cp->t);
        const sm_vec3 rest = lerp(rest_of(c->in, cp->a), rest_of(c->in, cp->b), cp->t);
        b->from_cut[k] = add_vertex(b->piece, x, rest, -1);
    }
    return b->from_cut[k];
}

static bool add_triangle(piece_builder *b, int32_t i, int32_t j, int32_t k)
{
    sm_cut_piece *p = b->piece;
    if (p->triangle_count == b->triangle_capacity) {
        const int32_t capacity = b->triangle_capacity < (INT32_MAX - 16) / 2 ? 2 * b->triangle_capacity + 16 : INT32_MAX;
        if (capacity == p->triangle_count || !sm_grow((void **)&p->triangles, 3 * sizeof *p->triangles, (size_t)capacity))
            return false;
        b->triangle_capacity = capacity;
    }
    int32_t *t = &p->triangles[3 * p->triangle_count++];
    t[0] = i, t[1] = j, t[2] = k;
    return true;
}

static void add_plane_edge(piece_builder *b, int32_t from, int32_t to)
{
    b->plane_edges[2 * b->plane_edge_count] = from;
    b->plane_edges[2 * b->plane_edge_count + 1] = to;
    b->plane_edge_count++;
}

static double distance2(const sm_cut_piece *p, int32_t i, int32_t j)
{
    const sm_vec3 d = v3_sub(p->position[i], p->position[j]);
    return v3_dot(d, d);
}

/// Puts input triangle t into the pieces, clipped at the plane when it straddles it.
static bool clip_triangle(cutter *c, const int32_t *t)
{
    const int s[3] = {side_of(c, t[0]), side_of(c, t[1]), side_of(c, t[2])};
    if (s[0] == s[1] && s[1] == s[2]) {
        piece_builder *b = &c->side[s[0]];
        return add_triangle(b, input_vertex(c, b, t[0]), input_vertex(c, b, t[1]), input_vertex(c, b, t[2]));
    }
    // the lone vertex L is the one on its side alone; P and Q follow it in CCW order
    const int k = s[1] == s[2] ? 0 : (s[0] == s[2] ? 1 : 2);
    const int32_t L = t[k], P = t[(k + 1) % 3], Q = t[(k + 2) % 3];
    const int32_t cut_lp = cut_of_edge(c, L, P), cut_ql = cut_of_edge(c, Q, L);
    piece_builder *lone = &c->side[s[k]], *pair = &c->side[1 - s[k]];

    // L's side: the corner triangle (L, c_LP, c_QL), with c_LP -> c_QL on the plane
    const int32_t l = input_vertex(c, lone, L), lp = cut_vertex(c, lone, cut_lp), ql = cut_vertex(c, lone, cut_ql);
    bool ok = add_triangle(lone, l, lp, ql);
    add_plane_edge(lone, lp, ql);

    // the other side: the quad (c_LP, P, Q, c_QL) split along its shorter diagonal, with
    // c_QL -> c_LP on the plane
    const int32_t lp2 = cut_vertex(c, pair, cut_lp), p = input_vertex(c, pair, P), q = input_vertex(c, pair, Q);
    const int32_t ql2 = cut_vertex(c, pair, cut_ql);
    if (distance2(pair->piece, lp2, q) <= distance2(pair->piece, p, ql2))
        ok = ok && add_triangle(pair, lp2, p, q) && add_triangle(pair, lp2, q, ql2);
    else
        ok = ok && add_triangle(pair, lp2, p, ql2) && add_triangle(pair, p, q, ql2);
    add_plane_edge(pair, ql2, lp2);
    return ok;
}

/// Where the caps are laid out for triangulation. A vertex on the plane counts as back, as if the
/// plane lay an infinitesimal distance further towards the front; there the section has the
/// same loops, but its points are apart where here they coincide (the cut points of the edges
/// from such a vertex all lie on it, and a plane along an edge pinches the section there). So
/// when a cut edge starts on the plane, the cut vertices are laid out where a plane moved by a
/// small shift (well below the nearest front vertex's distance) cuts their edges; the triangles
/// found there hold here too, some of them with zero area. Otherwise they stay where they are.
static void layout_cut_points(cutter *c)
{
    bool on_plane = false;
    double nearest_front = INFINITY, largest = 0.0;
    for (int32_t k = 0; k < c->cut_count; k++) {
        const double da = c->distance[c->cuts[k].a], db = c->distance[c->cuts[k].b];
        on_plane = on_plane || da == 0.0 || db == 0.0;
        nearest_front = fmin(nearest_front, fmax(da, db));
        largest = fmax(largest, fabs(da - db));
    }
    const double shift = on_plane ? fmin(0.5 * nearest_front, 1e-5 * largest) : 0.0;
    for (int s = 0; s < 2; s++) {
        const piece_builder *b = &c->side[s];
        for (int32_t k = 0; k < c->cut_count; k++) {
            if (b->from_cut[k] < 0) continue;
            const cut_point *cp = &c->cuts[k];
            const double da = c->distance[cp->a], db = c->distance[cp->b];
            double t = shift > 0.0 ? (da - shift) / (da - db) : cp->t;
            t = t > 0.0 ? (t < 1.0 ? t : 1.0) : 0.0;
            b->layout[b->from_cut[k]] = lerp(c->in->position[cp->a], c->in->position[cp->b], t);
        }
    }
}

/* ---- 2D geometry -------------------------------------------------------------------------- */

/// Twice the signed area of triangle (o, a, b): > 0 when it turns CCW.
static double turn(p2 o, p2 a, p2 b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

static double cross2(p2 a, p2 b) { return a.x * b.y - a.y * b.x; }

static p2 minus(p2 a, p2 b) { return (p2){a.x - b.x, a.y - b.y}; }

static bool same_point(p2 a, p2 b) { return a.x == b.x && a.y == b.y; }

/// Whether p lies in the CCW triangle (a, b, c), on its boundary or within `margin` of it (in
/// twice the area p makes with an edge: a point that round-off puts just outside counts; a
/// negative margin asks for a point well inside).
static bool in_ccw_triangle(p2 a, p2 b, p2 c, p2 p, double margin)
{
    return turn(a, b, p) >= -margin && turn(b, c, p) >= -margin && turn(c, a, p) >= -margin;
}

/// Whether p lies in triangle (a, b, c) of either orientation, or on its boundary.
static bool in_any_triangle(p2 a, p2 b, p2 c, p2 p)
{
    const double d1 = turn(a, b, p), d2 = turn(b, c, p), d3 = turn(c, a, p);
    const bool negative = d1 < 0.0 || d2 < 0.0 || d3 < 0.0, positive = d1 > 0.0 || d2 > 0.0 || d3 > 0.0;
    return !(negative && positive);
}

/// Even-odd rule: whether p is inside the closed polygon (either orientation).
static bool point_in_polygon(p2 p, const p2 *poly, int32_t n)
{
    bool inside = false;
    for (int32_t i = 0, j = n - 1; i < n; j = i++) {
        if ((poly[i].y > p.y) != (poly[j].y > p.y)) {
            const double x = poly[j].x + (p.y - poly[j].y) * (poly[i].x - poly[j].x) / (poly[i].y - poly[j].y);
            if (p.x < x) inside = !inside;
        }
    }
    return inside;
}

static p2 project(const cap_frame *f, sm_vec3 x)
{
    const sm_vec3 d = v3_sub(x, f->origin);
    return (p2){v3_dot(d, f->e1), v3_dot(d, f->e2)};
}

/* ---- Loops along the plane ------------------------------------------------------------------ */

typedef struct keyed_edge {
    int32_t lo, hi, from, to;
} keyed_edge;

static int compare_keyed_edges(const void *pa, const void *pb)
{
    const keyed_edge *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return 0;
}

/// Keeps the plane edges that a single triangle of the piece uses, reversed into the cap's
/// direction (in place); returns how many. -1: out of memory.
static int32_t cap_boundary(piece_builder *b)
{
    const int32_t n = b->plane_edge_count;
    if (n == 0) return 0;
    keyed_edge *edges = malloc(sizeof *edges * (size_t)n);
    if (!edges) return -1;
    for (int32_t e = 0; e < n; e++) {
        const int32_t from = b->plane_edges[2 * e], to = b->plane_edges[2 * e + 1];
        edges[e] = (keyed_edge){from < to ? from : to, from < to ? to : from, from, to};
    }
    qsort(edges, (size_t)n, sizeof *edges, compare_keyed_edges);
    int32_t kept = 0;
    for (int32_t e = 0; e < n;) {
        int32_t run = 1;
        while (e + run < n && compare_keyed_edges(&edges[e], &edges[e + run]) == 0) run++;
        if (run == 1) {
            b->plane_edges[2 * kept] = edges[e].to;
            b->plane_edges[2 * kept + 1] = edges[e].from;
            kept++;
        }
        e += run;
    }
    free(edges);
    return kept;
}

/// The cap edges leaving each vertex (CSR), consumed in order as loops are walked.
typedef struct edge_graph {
    int32_t *start, *to, *cursor, *in_degree;
} edge_graph;

/// Follows unused edges from `start` until the walk comes back to it (a closed loop: its
/// vertices are appended to `loops`, true) or gets stuck (an open chain: nothing kept, false).
static bool walk_loop(edge_graph *g, int32_t start, loop_set *loops)
{
    const int32_t first = loops->offsets[loops->count];
    int32_t v = start, length = 0;
    while (g->cursor[v] < g->start[v + 1]) {
        loops->vertices[first + length++] = v;
        v = g->to[g->cursor[v]++];
        if (v == start) {
            loops->offsets[++loops->count] = first + length;
            return true;
        }
    }
    return false;
}

/// Chains the cap edges (from, to pairs of piece vertices) into closed loops; counts in
/// *open_chains the chains that do not close. False: out of memory.
static bool chain_loops(const int32_t *edges, int32_t edge_count, int32_t vertex_count, loop_set *loops, int32_t *open_chains)
{
    edge_graph g = {
        .start = calloc((size_t)vertex_count + 1, sizeof(int32_t)),
        .to = malloc(sizeof(int32_t) * (size_t)edge_count),
        .cursor = malloc(sizeof(int32_t) * (size_t)vertex_count),
        .in_degree = calloc((size_t)vertex_count, sizeof(int32_t)),
    };
    loops->offsets = malloc(sizeof(int32_t) * ((size_t)edge_count + 1));
    loops->vertices = malloc(sizeof(int32_t) * (size_t)edge_count);
    const bool ok = g.start && g.to && g.cursor && g.in_degree && loops->offsets && loops->vertices;
    if (ok) {
        for (int32_t e = 0; e < edge_count; e++) g.start[edges[2 * e] + 1]++, g.in_degree[edges[2 * e + 1]]++;
        for (int32_t v = 0; v < vertex_count; v++) g.start[v + 1] += g.start[v];
        memcpy(g.cursor, g.start, sizeof(int32_t) * (size_t)vertex_count);
        for (int32_t e = 0; e < edge_count; e++) g.to[g.cursor[edges[2 * e]]++] = edges[2 * e + 1];
        memcpy(g.cursor, g.start, sizeof(int32_t) * (size_t)vertex_count);
        loops->count = 0;
        loops->offsets[0] = 0;
        // chains that start somewhere (more edges leave the vertex than reach it) first, so
        // that the closed walks after them meet only loops
        for (int32_t v = 0; v < vertex_count; v++)
            while (g.start[v + 1] - g.start[v] > g.in_degree[v] && g.cursor[v] < g.start[v + 1])
                if (!walk_loop(&g, v, loops)) (*open_chains)++;
        for (int32_t v = 0; v < vertex_count; v++)
            while (g.cursor[v] < g.start[v + 1])
                if (!walk_loop(&g, v, loops)) (*open_chains)++;
    }
    free(g.start), free(g.to), free(g.cursor), free(g.in_degree);
    return ok;
}

static int32_t loop_size(const loop_set *loops, int32_t i) { return loops->offsets[i + 1] - loops->offsets[i]; }

/// Twice the signed area of a closed polygon (shoelace): > 0 when it runs CCW.
static double polygon_area2(const p2 *poly, int32_t n)
{
    double area2 = 0.0;
    for (int32_t i = 0, j = n - 1; i < n; j = i++) area2 += cross2(poly[j], poly[i]);
    return area2;
}

/// Squared distance from p to segment (a, b).
static double segment_distance2(p2 p, p2 a, p2 b)
{
    const p2 ab = minus(b, a), ap = minus(p, a);
    const double length2 = ab.x * ab.x + ab.y * ab.y;
    double s = length2 > 0.0 ? (ap.x * ab.x + ap.y * ab.y) / length2 : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    const p2 d = {ap.x - s * ab.x, ap.y - s * ab.y};
    return d.x * d.x + d.y * d.y;
}

/// Whether loop `inner` lies inside loop `outer` (point in polygon, even-odd rule), judged at
/// its first vertex that is not on `outer` (within `tolerance`): loops may touch where the
/// plane runs through an edge of the surface. True when all of it lies on `outer`.
static bool loop_inside(const p2 *inner, int32_t inner_count, const p2 *outer, int32_t outer_count, double tolerance)
{
    for (int32_t k = 0; k < inner_count; k++) {
        bool on_boundary = false;
        for (int32_t i = 0, j = outer_count - 1; i < outer_count && !on_boundary; j = i++)
            on_boundary = segment_distance2(inner[k], outer[j], outer[i]) <= tolerance * tolerance;
        if (!on_boundary) return point_in_polygon(inner[k], outer, outer_count);
    }
    return true;
}

/// Tells outer boundaries from holes and finds each hole's outer boundary. In the cap's frame
/// the loops run as the cap's boundary does: an outer boundary CCW (area2 > 0), a hole CW; the
/// direction comes from the surface's half-edges, so it holds where point in polygon would be
/// ambiguous (loops that touch). A hole's outer boundary is the smallest outer loop that
/// contains it (so an island in a hole in an outer loop is an outer loop of its own, and a hole
/// in that island is the island's). parent[i]: that outer loop; -1 for outer loops, and for
/// holes in no outer loop (only an inconsistent input has them: they are filled on their own).
static void nest_loops(const loop_set *loops, const p2 *points, const double *area2, double tolerance, int32_t *parent)
{
    for (int32_t i = 0; i < loops->count; i++) {
        parent[i] = -1;
        if (area2[i] >= 0.0) continue;
        for (int32_t j = 0; j < loops->count; j++)
            if (area2[j] > 0.0 && (parent[i] < 0 || area2[j] < area2[parent[i]]) &&
                loop_inside(&points[loops->offsets[i]], loop_size(loops, i), &points[loops->offsets[j]], loop_size(loops, j), tolerance))
                parent[i] = j;
    }
}

/* ---- Holes: bridges to the outer boundary (Eberly, section 3) -------------------------------- */

static int32_t next_corner(const polygon *poly, int32_t i) { return i + 1 < poly->count ? i + 1 : 0; }
static int32_t prev_corner(const polygon *poly, int32_t i) { return i > 0 ? i - 1 : poly->count - 1; }

static bool is_reflex(const polygon *poly, int32_t i)
{
    return turn(poly->point[prev_corner(poly, i)], poly->point[i], poly->point[next_corner(poly, i)]) < 0.0;
}

/// Whether the direction from corner i towards `target` points into the polygon (CCW: its
/// inside is the wedge swept CCW from the edge to the next corner to the edge to the previous one).
static bool wedge_contains(const polygon *poly, int32_t i, p2 target)
{
    const p2 v = poly->point[i];
    const p2 out = minus(poly->point[next_corner(poly, i)], v), in = minus(poly->point[prev_corner(poly, i)], v);
    const p2 d = minus(target, v);
    if (cross2(out, in) >= 0.0) return cross2(out, d) >= 0.0 && cross2(d, in) >= 0.0;
    return !(cross2(in, d) > 0.0 && cross2(d, out) > 0.0); // a reflex corner: not in the outside wedge
}

/// Of the corners at corner i's point (a bridge's copies share it), the one whose inside faces
/// `target`, so that a new bridge does not cross an earlier one.
static int32_t facing_copy(const polygon *poly, int32_t i, p2 target)
{
    for (int32_t k = 0; k < poly->count; k++)
        if (same_point(poly->point[k], poly->point[i]) && wedge_contains(poly, k, target)) return k;
    return i;
}

/// The corner nearest to m among corner v and those lying on the segment from m to v (to
/// round-off): a bridge must stop at the first corner it meets, or it would run along an edge.
static int32_t first_on_segment(const polygon *poly, p2 m, int32_t v)
{
    const p2 d = minus(poly->point[v], m);
    const double length2 = d.x * d.x + d.y * d.y;
    if (!(length2 > 0.0)) return v;
    int32_t first = v;
    double first_s = 1.0;
    for (int32_t i = 0; i < poly->count; i++) {
        const p2 w = minus(poly->point[i], m);
        const double s = (w.x * d.x + w.y * d.y) / length2; // where it projects along the segment
        if (s > 0.0 && s < first_s && fabs(cross2(d, w)) <= 1e-9 * length2) first = i, first_s = s;
    }
    return first;
}

/// A corner of the polygon that m sees: cast a ray from m towards +x. A corner on the ray
/// nearer than any edge it crosses is seen (the ray may also run along an edge, or graze a
/// corner). Otherwise take the nearest edge it crosses from inside (upwards, on a CCW polygon)
/// and that edge's end with the larger x; if a reflex corner lies in the triangle between m,
/// the crossing and that end, it may hide it: take the reflex corner there at the smallest
/// angle from the ray instead.
static int32_t visible_corner(const polygon *poly, p2 m)
{
    int32_t edge = -1, on_ray = -1;
    double hit_x = INFINITY, corner_x = INFINITY;
    for (int32_t i = 0; i < poly->count; i++) {
        const p2 a = poly->point[i], b = poly->point[next_corner(poly, i)];
        if (a.y == m.y && a.x >= m.x && a.x < corner_x) corner_x = a.x, on_ray = i;
        if (!(a.y <= m.y && b.y > m.y)) continue;
        const double x = a.x + (m.y - a.y) * (b.x - a.x) / (b.y - a.y);
        if (x >= m.x && x < hit_x) hit_x = x, edge = i;
    }
    if (on_ray >= 0 && corner_x <= hit_x) return facing_copy(poly, first_on_segment(poly, m, on_ray), m);
    if (edge < 0) { // m is not inside (an inconsistent input): the nearest corner keeps the topology
        int32_t nearest = 0;
        double best = INFINITY;
        for (int32_t i = 0; i < poly->count; i++) {
            const p2 d = minus(poly->point[i], m);
            if (d.x * d.x + d.y * d.y < best) best = d.x * d.x + d.y * d.y, nearest = i;
        }
        return facing_copy(poly, nearest, m);
    }
    const p2 hit = {hit_x, m.y};
    const int32_t end = poly->point[edge].x > poly->point[next_corner(poly, edge)].x ? edge : next_corner(poly, edge);
    int32_t chosen = end;
    double best_cos = -2.0, best_d2 = INFINITY;
    for (int32_t i = 0; i < poly->count; i++) {
        if (i == end || !is_reflex(poly, i) || !in_any_triangle(m, hit, poly->point[end], poly->point[i])) continue;
        const p2 d = minus(poly->point[i], m);
        const double d2 = d.x * d.x + d.y * d.y, cosine = d2 > 0.0 ? d.x / sqrt(d2) : -1.0;
        if (cosine > best_cos || (cosine == best_cos && d2 < best_d2)) best_cos = cosine, best_d2 = d2, chosen = i;
    }
    return facing_copy(poly, first_on_segment(poly, m, chosen), m);
}

/// Joins a hole (CW, n corners) to the polygon (CCW) by a bridge from the hole's rightmost
/// corner M to a corner V that M sees: the polygon becomes ..., V, M, (the hole from M round to
/// M), M, V, ... (capacity for n + 2 more corners is there).
static void bridge_hole(polygon *poly, const int32_t *hole_label, const p2 *hole_point, int32_t n)
{
    int32_t m = 0;
    for (int32_t i = 1; i < n; i++)
        if (hole_point[i].x > hole_point[m].x) m = i;
    const int32_t v = visible_corner(poly, hole_point[m]);
    const size_t tail = (size_t)(poly->count - v - 1);
    memmove(&poly->label[v + n + 3], &poly->label[v + 1], tail * sizeof *poly->label);
    memmove(&poly->point[v + n + 3], &poly->point[v + 1], tail * sizeof *poly->point);
    for (int32_t k = 0; k <= n; k++) {
        poly->label[v + 1 + k] = hole_label[(m + k) % n];
        poly->point[v + 1 + k] = hole_point[(m + k) % n];
    }
    poly->label[v + n + 2] = poly->label[v];
    poly->point[v + n + 2] = poly->point[v];
    poly->count += n + 2;
}

/* ---- Ear clipping ------------------------------------------------------------------------- */

/// The ear clipper's working state: the polygon's corners left, as a doubly linked list, with
/// each corner's turn (twice the signed area of its triangle with its neighbours: > 0 convex).
typedef struct clipper {
    const polygon *poly;
    int32_t *prev, *next;
    double *turn;
    bool *twin;  // another corner lies at the same point (a bridge's copies, coinciding cut points)
    double flat; // |turn| at or below which a corner counts as flat
} clipper;

static double corner_turn(const clipper *e, int32_t i)
{
    return turn(e->poly->point[e->prev[i]], e->poly->point[i], e->poly->point[e->next[i]]);
}

/// Whether corner j coincides with corner k: a copy of the same vertex, or the same point.
static bool same_corner(const polygon *poly, int32_t j, int32_t k)
{
    return poly->label[j] == poly->label[k] || same_point(poly->point[j], poly->point[k]);
}

/// How many reflex (or flat) corners left lie in corner i's triangle (with its boundary, to
/// round-off, when `boundary`; else strictly inside), leaving out those that coincide with its
/// corners. A triangle that holds some corner of a simple polygon holds a reflex one.
static int32_t corners_inside(const clipper *e, int32_t i, bool boundary)
{
    const polygon *poly = e->poly;
    const int32_t a = e->prev[i], c = e->next[i];
    const p2 pa = poly->point[a], pi = poly->point[i], pc = poly->point[c];
    int32_t count = 0;
    for (int32_t j = e->next[c]; j != a; j = e->next[j]) {
        if (e->turn[j] > e->flat || !in_ccw_triangle(pa, pi, pc, poly->point[j], boundary ? e->flat : -e->flat)) continue;
        if (!same_corner(poly, j, a) && !same_corner(poly, j, i) && !same_corner(poly, j, c)) count++;
    }
    return count;
}

/// Whether segments (p, q) and (r, s) cross at a point inside both (by more than `margin` in
/// twice the areas: touching at an end or running along each other is no crossing).
static bool segments_cross(p2 p, p2 q, p2 r, p2 s, double margin)
{
    const double d1 = turn(p, q, r), d2 = turn(p, q, s), d3 = turn(r, s, p), d4 = turn(r, s, q);
    return ((d1 > margin && d2 < -margin) || (d1 < -margin && d2 > margin)) &&
           ((d3 > margin && d4 < -margin) || (d3 < -margin && d4 > margin));
}

/// Whether the diagonal that clipping corner i adds (from its previous corner to its next)
/// crosses none of the edges left. With no corner inside the triangle this holds, unless an
/// edge enters the triangle at one of its corners, from another corner at the same point: only
/// then is it checked.
static bool diagonal_clear(const clipper *e, int32_t i)
{
    const polygon *poly = e->poly;
    const int32_t a = e->prev[i], c = e->next[i];
    if (!e->twin[a] && !e->twin[i] && !e->twin[c]) return true;
    for (int32_t j = c; j != a; j = e->next[j])
        if (segments_cross(poly->point[a], poly->point[c], poly->point[j], poly->point[e->next[j]], e->flat)) return false;
    return true;
}

/// An ear among the `left` corners from `from` on: a convex corner whose triangle holds no
/// reflex corner, not even on its boundary, and whose diagonal crosses no edge. -1: none.
static int32_t find_ear(const clipper *e, int32_t from, int32_t left)
{
    for (int32_t k = 0, i = from; k < left; k++, i = e->next[i])
        if (e->turn[i] > e->flat && corners_inside(e, i, true) == 0 && diagonal_clear(e, i)) return i;
    return -1;
}

/// When no corner is an ear (flat or duplicate points, round-off, an inconsistent input), the
/// least bad corner: a flat one (clipping it leaves the same region), else the convex one
/// whose triangle holds the fewest corners, else the least reflex one. Clipping it keeps the
/// topology closed; only the geometry may suffer.
static int32_t find_fallback(const clipper *e, int32_t from, int32_t left)
{
    int32_t convex = -1, convex_inside = INT32_MAX, least_reflex = from;
    for (int32_t k = 0, i = from; k < left; k++, i = e->next[i]) {
        if (fabs(e->turn[i]) <= e->flat) return i;
        if (e->turn[i] > 0.0) {
            const int32_t inside = corners_inside(e, i, false);
            if (inside < convex_inside) convex = i, convex_inside = inside;
        }
        if (e->turn[i] > e->turn[least_reflex]) least_reflex = i;
    }
    return convex >= 0 ? convex : least_reflex;
}

/// Adds corner i's triangle to the piece, in the polygon's orientation. A triangle that repeats
/// a vertex (across a bridge) is left out: its two edges are the same edge both ways, which the
/// triangles on either side already pair up.
static bool emit_corner(const clipper *e, int32_t i, piece_builder *b)
{
    const int32_t a = e->poly->label[e->prev[i]], v = e->poly->label[i], c = e->poly->label[e->next[i]];
    if (a == v || v == c || c == a) return true;
    return add_triangle(b, a, v, c);
}

typedef struct sorted_point {
    p2 point;
    int32_t corner;
} sorted_point;

static int compare_points(const void *pa, const void *pb)
{
    const p2 a = ((const sorted_point *)pa)->point, b = ((const sorted_point *)pb)->point;
    if (a.x != b.x) return a.x < b.x ? -1 : 1;
    if (a.y != b.y) return a.y < b.y ? -1 : 1;
    return 0;
}

/// Marks the corners that share their point with another (sorted by point, runs of equals).
static bool find_twins(const polygon *poly, bool *twin)
{
    sorted_point *sorted = malloc(sizeof *sorted * (size_t)poly->count);
    if (!sorted) return false;
    for (int32_t i = 0; i < poly->count; i++) sorted[i] = (sorted_point){poly->point[i], i}, twin[i] = false;
    qsort(sorted, (size_t)poly->count, sizeof *sorted, compare_points);
    for (int32_t i = 1; i < poly->count; i++)
        if (same_point(sorted[i].point, sorted[i - 1].point)) twin[sorted[i].corner] = twin[sorted[i - 1].corner] = true;
    free(sorted);
    return true;
}

/// Triangulates the CCW polygon by ear clipping into the piece. False: out of memory.
static bool ear_clip(const polygon *poly, piece_builder *b)
{
    const int32_t n = poly->count;
    if (n < 3) return true;
    clipper e = {poly, malloc(sizeof(int32_t) * (size_t)n), malloc(sizeof(int32_t) * (size_t)n), malloc(sizeof(double) * (size_t)n),
                 malloc(sizeof(bool) * (size_t)n), 0.0};
    bool ok = e.prev && e.next && e.turn && e.twin && find_twins(poly, e.twin);
    if (ok) {
        p2 lo = poly->point[0], hi = poly->point[0];
        for (int32_t i = 0; i < n; i++) {
            e.prev[i] = i > 0 ? i - 1 : n - 1;
            e.next[i] = i + 1 < n ? i + 1 : 0;
            lo = (p2){fmin(lo.x, poly->point[i].x), fmin(lo.y, poly->point[i].y)};
            hi = (p2){fmax(hi.x, poly->point[i].x), fmax(hi.y, poly->point[i].y)};
        }
        for (int32_t i = 0; i < n; i++) e.turn[i] = corner_turn(&e, i);
        const p2 size = minus(hi, lo);
        e.flat = 1e-13 * (size.x * size.x + size.y * size.y);
        int32_t corner = 0;
        for (int32_t left = n; ok && left > 3; left--) {
            int32_t ear = find_ear(&e, corner, left);
            if (ear < 0) ear = find_fallback(&e, corner, left);
            ok = emit_corner(&e, ear, b);
            const int32_t a = e.prev[ear], c = e.next[ear];
            e.next[a] = c, e.prev[c] = a;
            e.turn[a] = corner_turn(&e, a), e.turn[c] = corner_turn(&e, c);
            corner = c;
        }
        ok = ok && emit_corner(&e, corner, b);
    }
    free(e.prev), free(e.next), free(e.turn), free(e.twin);
    return ok;
}

/* ---- Sealing a piece ---------------------------------------------------------------------- */

typedef struct hole_order {
    int32_t loop;
    double max_x;
} hole_order;

static int compare_holes(const void *pa, const void *pb)
{
    const hole_order *a = pa, *b = pb;
    return a->max_x > b->max_x ? -1 : (a->max_x < b->max_x ? 1 : 0);
}

/// Triangulates loop `outer` with its holes (the loops whose parent it is): holes joined by
/// bridges from the rightmost first, then ear clipping.
static bool fill_region(piece_builder *b, const loop_set *loops, const p2 *points, const int32_t *parent, int32_t outer)
{
    int32_t capacity = loop_size(loops, outer), hole_count = 0;
    for (int32_t j = 0; j < loops->count; j++)
        if (parent[j] == outer) capacity += loop_size(loops, j) + 2, hole_count++;
    polygon poly = {loop_size(loops, outer), malloc(sizeof(int32_t) * (size_t)capacity), malloc(sizeof(p2) * (size_t)capacity)};
    hole_order *holes = malloc(sizeof *holes * (size_t)(hole_count > 0 ? hole_count : 1));
    bool ok = poly.label && poly.point && holes;
    if (ok) {
        memcpy(poly.label, &loops->vertices[loops->offsets[outer]], sizeof(int32_t) * (size_t)poly.count);
        memcpy(poly.point, &points[loops->offsets[outer]], sizeof(p2) * (size_t)poly.count);
        hole_count = 0;
        for (int32_t j = 0; j < loops->count; j++) {
            if (parent[j] != outer) continue;
            holes[hole_count] = (hole_order){j, -INFINITY};
            for (int32_t k = loops->offsets[j]; k < loops->offsets[j + 1]; k++)
                holes[hole_count].max_x = fmax(holes[hole_count].max_x, points[k].x);
            hole_count++;
        }
        qsort(holes, (size_t)hole_count, sizeof *holes, compare_holes);
        for (int32_t h = 0; h < hole_count; h++) {
            const int32_t j = holes[h].loop;
            bridge_hole(&poly, &loops->vertices[loops->offsets[j]], &points[loops->offsets[j]], loop_size(loops, j));
        }
        ok = ear_clip(&poly, b);
    }
    free(poly.label), free(poly.point), free(holes);
    return ok;
}

/// Seals one piece: the plane edges a single triangle uses, reversed, are chained into loops,
/// projected (as laid out) into `frame`, in which the cap runs CCW, and triangulated into cap
/// triangles.
static sm_result seal_piece(piece_builder *b, const cap_frame *frame, int32_t *open_chains)
{
    sm_cut_piece *p = b->piece;
    const int32_t first_cap = p->triangle_count;
    const int32_t edge_count = cap_boundary(b);
    if (edge_count <= 0) return edge_count < 0 ? sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory sealing a piece") : SM_OK;

    loop_set loops = {0};
    p2 *points = NULL;
    double *area2 = NULL;
    int32_t *parent = NULL;
    bool ok = chain_loops(b->plane_edges, edge_count, p->vertex_count, &loops, open_chains);
    if (ok) {
        const int32_t total = loops.offsets[loops.count];
        points = malloc(sizeof *points * (size_t)(total > 0 ? total : 1));
        area2 = malloc(sizeof *area2 * (size_t)(loops.count > 0 ? loops.count : 1));
        parent = malloc(sizeof *parent * (size_t)(loops.count > 0 ? loops.count : 1));
        ok = points && area2 && parent;
    }
    if (ok && loops.count > 0) {
        p2 lo = {INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY};
        for (int32_t k = 0; k < loops.offsets[loops.count]; k++) {
            points[k] = project(frame, b->layout[loops.vertices[k]]);
            lo = (p2){fmin(lo.x, points[k].x), fmin(lo.y, points[k].y)};
            hi = (p2){fmax(hi.x, points[k].x), fmax(hi.y, points[k].y)};
        }
        for (int32_t i = 0; i < loops.count; i++) area2[i] = polygon_area2(&points[loops.offsets[i]], loop_size(&loops, i));
        // a vertex this close to another loop counts as on it
        const double tolerance = 1e-9 * hypot(hi.x - lo.x, hi.y - lo.y);
        nest_loops(&loops, points, area2, tolerance, parent);
        for (int32_t i = 0; ok && i < loops.count; i++)
            if (area2[i] >= 0.0 || parent[i] < 0) ok = fill_region(b, &loops, points, parent, i);
    }
    p->cap_triangle_count = p->triangle_count - first_cap;
    free(loops.offsets), free(loops.vertices), free(points), free(area2), free(parent);
    return ok ? SM_OK : sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory sealing a piece");
}

/* ---- The cut ------------------------------------------------------------------------------ */

/// Frames of the plane for the two caps: the back piece's cap faces +n (e1 x e2 = n), the
/// front piece's faces -n (the same axes swapped).
static void cap_frames(const sm_cut_input *in, cap_frame *back, cap_frame *front)
{
    const sm_vec3 n = v3_scale(in->normal, 1.0 / v3_length(in->normal)); // (of about unit length: sm_cut_surface)
    // the axis least aligned with n gives a well-conditioned first axis of the plane
    const double ax = fabs(n.x), ay = fabs(n.y), az = fabs(n.z);
    const sm_vec3 axis = ax <= ay && ax <= az ? v3(1, 0, 0) : (ay <= az ? v3(0, 1, 0) : v3(0, 0, 1));
    const sm_vec3 w = v3_cross(axis, n);
    const sm_vec3 u = v3_scale(w, 1.0 / v3_length(w)), v = v3_cross(n, u); // u x v = n
    *back = (cap_frame){in->point, u, v};
    *front = (cap_frame){in->point, v, u};
}

static sm_result run_cut(cutter *c, sm_cut_piece *back, sm_cut_piece *front, int32_t *out_open_loops)
{
    const sm_cut_input *in = c->in;
    c->distance = malloc(sizeof *c->distance * (size_t)in->vertex_count);
    if (!c->distance) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory");
    for (int32_t v = 0; v < in->vertex_count; v++) {
        c->distance[v] = v3_dot(v3_sub(in->position[v], in->point), in->normal);
        if (!isfinite(c->distance[v]))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_cut_surface: vertex %d is too far from the plane to classify", v);
    }
    // sizes: each straddling triangle has two straddling edges and adds at most two triangles
    // to a piece; the others one
    int32_t straddling = 0;
    for (int32_t t = 0; t < in->triangle_count; t++) straddling += straddles(c, &in->triangles[3 * t]);
    c->cuts = malloc(sizeof *c->cuts * (size_t)(2 * straddling > 0 ? 2 * straddling : 1));
    if (!c->cuts || !edge_table_init(&c->table, 2 * straddling))
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory");
    sm_cut_piece *pieces[2] = {back, front};
    for (int s = 0; s < 2; s++) {
        const sm_result r = piece_init(&c->side[s], pieces[s], in->vertex_count + 2 * straddling,
                                       in->triangle_count + straddling, in->vertex_count, 2 * straddling, straddling);
        if (r != SM_OK) return r;
    }
    for (int32_t t = 0; t < in->triangle_count; t++)
        if (!clip_triangle(c, &in->triangles[3 * t])) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_cut_surface: out of memory");
    // vertices of no triangle (a surface of points, or strays) go to their side's piece too
    for (int32_t v = 0; v < in->vertex_count; v++) input_vertex(c, &c->side[side_of(c, v)], v);

    layout_cut_points(c);
    cap_frame frames[2];
    cap_frames(in, &frames[BACK], &frames[FRONT]);
    int32_t open[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        const sm_result r = seal_piece(&c->side[s], &frames[s], &open[s]);
        if (r != SM_OK) return r;
    }
    if (out_open_loops) *out_open_loops = open[BACK] > open[FRONT] ? open[BACK] : open[FRONT];
    // an empty side is an empty piece
    for (int s = 0; s < 2; s++)
        if (pieces[s]->vertex_count == 0) sm_cut_piece_free(pieces[s]);
    return SM_OK;
}

sm_result sm_cut_surface(const sm_cut_input *in, sm_cut_piece *back, sm_cut_piece *front, int32_t *out_open_loops)
{
    if (back) *back = (sm_cut_piece){0};
    if (front) *front = (sm_cut_piece){0};
    if (out_open_loops) *out_open_loops = 0;
    sm_result result = check_input(in, back, front);
    if (result != SM_OK) return result;

    // the normal scaled by a power of two to about unit length: any length of it is a valid plane,
    // and the scaling is exact, so that vertices on the plane stay exactly on it
    sm_cut_input scaled = *in;
    scaled.normal = v3_scaled_to_one(in->normal);
    cutter c = {.in = &scaled};
    result = run_cut(&c, back, front, out_open_loops);
    free(c.distance), free(c.cuts), free(c.table.keys), free(c.table.values);
    piece_builder_free(&c.side[BACK]), piece_builder_free(&c.side[FRONT]);
    if (result != SM_OK) {
        sm_cut_piece_free(back), sm_cut_piece_free(front);
        if (out_open_loops) *out_open_loops = 0;
    }
    return result;
}

void sm_cut_piece_free(sm_cut_piece *piece)
{
    if (!piece) return;
    free(piece->position), free(piece->rest), free(piece->triangles), free(piece->source_vertex);
    *piece = (sm_cut_piece){0};
}
