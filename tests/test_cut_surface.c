/* Cutting a triangle surface by a plane (cut_surface.c): closed, consistently oriented pieces
 * whose volumes add up to the whole, caps on the plane that fill the cross-section exactly
 * (concave outlines, holes, several components), open inputs, degenerate cuts and errors. */
#include "support.h"

#include "cut_surface.h"
#include "math3.h"

#include <stdlib.h>

/* ---- Test surfaces ------------------------------------------------------------------------ */

typedef struct mesh {
    sm_vec3 *position;
    int32_t vertex_count;
    int32_t *triangles;
    int32_t triangle_count;
} mesh;

static void mesh_free(mesh *m)
{
    free(m->position), free(m->triangles);
    *m = (mesh){0};
}

static void add_tri(mesh *m, int32_t a, int32_t b, int32_t c)
{
    int32_t *t = &m->triangles[3 * m->triangle_count++];
    t[0] = a, t[1] = b, t[2] = c;
}

/// The unit cube [0, 1]^3 with n x n quads (2 triangles each) per face, CCW from outside.
static mesh make_cube(int n)
{
    const int side = n + 1;
    mesh m = {malloc(sizeof(sm_vec3) * (size_t)(side * side * side)), 0, malloc(sizeof(int32_t) * 3 * 12 * (size_t)(n * n)), 0};
    int32_t *lattice = malloc(sizeof(int32_t) * (size_t)(side * side * side));
    for (int i = 0; i < side * side * side; i++) lattice[i] = -1;
    for (int a = 0; a < 3; a++) {
        const int b = (a + 1) % 3, c = (a + 2) % 3; // e_b x e_c = e_a
        for (int level = 0; level <= n; level += n) {
            for (int p = 0; p < n; p++) {
                for (int q = 0; q < n; q++) {
                    const int corner[4][2] = {{p, q}, {p + 1, q}, {p + 1, q + 1}, {p, q + 1}};
                    int32_t v[4];
                    for (int k = 0; k < 4; k++) {
                        int g[3];
                        g[a] = level, g[b] = corner[k][0], g[c] = corner[k][1];
                        const int id = (g[0] * side + g[1]) * side + g[2];
                        if (lattice[id] < 0) {
                            lattice[id] = m.vertex_count;
                            m.position[m.vertex_count++] = v3((double)g[0] / n, (double)g[1] / n, (double)g[2] / n);
                        }
                        v[k] = lattice[id];
                    }
                    if (level == n) add_tri(&m, v[0], v[1], v[2]), add_tri(&m, v[0], v[2], v[3]);
                    else add_tri(&m, v[0], v[2], v[1]), add_tri(&m, v[0], v[3], v[2]);
                }
            }
        }
    }
    free(lattice);
    return m;
}

/// A torus around the y axis (in the xz plane): major radius R, minor r, nu x nv quads.
static mesh make_torus(double R, double r, int nu, int nv)
{
    mesh m = {malloc(sizeof(sm_vec3) * (size_t)(nu * nv)), nu * nv, malloc(sizeof(int32_t) * 6 * (size_t)(nu * nv)), 0};
    for (int i = 0; i < nu; i++) {
        const double theta = 2.0 * SM_PI * i / nu;
        for (int j = 0; j < nv; j++) {
            const double phi = 2.0 * SM_PI * j / nv;
            m.position[i * nv + j] = v3((R + r * cos(phi)) * cos(theta), r * sin(phi), (R + r * cos(phi)) * sin(theta));
        }
    }
    for (int i = 0; i < nu; i++) {
        for (int j = 0; j < nv; j++) {
            const int32_t a = i * nv + j, b = i * nv + (j + 1) % nv;
            const int32_t c = ((i + 1) % nu) * nv + (j + 1) % nv, d = ((i + 1) % nu) * nv + j;
            add_tri(&m, a, b, c), add_tri(&m, a, c, d); // +phi then +theta: outwards
        }
    }
    return m;
}

/// The surface of a block of unit voxels: `layers` layers in y of the map `rows` (x along a row,
/// z down the rows; '#' filled), with a quad (2 triangles, CCW from outside) between every filled
/// voxel and an empty neighbour, over shared lattice vertices. The map must not let two voxels
/// meet along an edge only.
static mesh make_voxels(const char *const *rows, int depth, int layers)
{
    const int width = (int)strlen(rows[0]), size[3] = {width, layers, depth};
    const int lattice_count = (width + 1) * (layers + 1) * (depth + 1), cells = width * layers * depth;
    mesh m = {malloc(sizeof(sm_vec3) * (size_t)lattice_count), 0, malloc(sizeof(int32_t) * 36 * (size_t)cells), 0};
    int32_t *lattice = malloc(sizeof(int32_t) * (size_t)lattice_count);
    for (int i = 0; i < lattice_count; i++) lattice[i] = -1;
    for (int x = 0; x < width; x++) {
        for (int y = 0; y < layers; y++) {
            for (int z = 0; z < depth; z++) {
                if (rows[z][x] != '#') continue;
                for (int a = 0; a < 3; a++) {
                    const int b = (a + 1) % 3, c = (a + 2) % 3; // e_b x e_c = e_a
                    for (int step = -1; step <= 1; step += 2) {
                        int cell[3] = {x, y, z};
                        cell[a] += step;
                        const bool inside = cell[a] >= 0 && cell[a] < size[a];
                        if (inside && rows[cell[2]][cell[0]] == '#') continue; // a filled neighbour: no face
                        const int corner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
                        int32_t v[4];
                        for (int k = 0; k < 4; k++) {
                            int g[3] = {x, y, z};
                            g[a] += step > 0 ? 1 : 0, g[b] += corner[k][0], g[c] += corner[k][1];
                            const int id = (g[0] * (layers + 1) + g[1]) * (depth + 1) + g[2];
                            if (lattice[id] < 0) lattice[id] = m.vertex_count, m.position[m.vertex_count++] = v3(g[0], g[1], g[2]);
                            v[k] = lattice[id];
                        }
                        if (step > 0) add_tri(&m, v[0], v[1], v[2]), add_tri(&m, v[0], v[2], v[3]);
                        else add_tri(&m, v[0], v[2], v[1]), add_tri(&m, v[0], v[3], v[2]);
                    }
                }
            }
        }
    }
    free(lattice);
    return m;
}

/// A prism over the polygon (x, z pairs) from y = 0 to y = height, its caps fanned from
/// `kernel`, a point that sees the whole polygon.
static mesh make_prism(const double (*xz)[2], int n, double kernel_x, double kernel_z, double height)
{
    // orient the outline CCW seen from +y: positive area in the (z, x) frame (z x x = y)
    double area = 0.0;
    for (int i = 0; i < n; i++) area += xz[i][1] * xz[(i + 1) % n][0] - xz[i][0] * xz[(i + 1) % n][1];
    mesh m = {malloc(sizeof(sm_vec3) * (size_t)(2 * n + 2)), 2 * n + 2, malloc(sizeof(int32_t) * 12 * (size_t)n), 0};
    for (int i = 0; i < n; i++) {
        const int k = area > 0.0 ? i : n - 1 - i;
        m.position[i] = v3(xz[k][0], 0.0, xz[k][1]);
        m.position[n + i] = v3(xz[k][0], height, xz[k][1]);
    }
    m.position[2 * n] = v3(kernel_x, 0.0, kernel_z);
    m.position[2 * n + 1] = v3(kernel_x, height, kernel_z);
    for (int i = 0; i < n; i++) {
        const int j = (i + 1) % n;
        add_tri(&m, i, j, n + j), add_tri(&m, i, n + j, n + i); // side: outwards is edge x up
        add_tri(&m, 2 * n + 1, n + i, n + j);                   // top, facing +y
        add_tri(&m, 2 * n, j, i);                               // bottom, facing -y
    }
    return m;
}

/* ---- Measurements ------------------------------------------------------------------------- */

static sm_vec3 tri_cross(const sm_vec3 *x, const int32_t *t)
{
    return v3_cross(v3_sub(x[t[1]], x[t[0]]), v3_sub(x[t[2]], x[t[0]]));
}

/// Signed volume by the divergence theorem: sum of a . (b x c) / 6.
static double signed_volume(const sm_vec3 *x, const int32_t *triangles, int32_t first, int32_t count)
{
    double volume = 0.0;
    for (int32_t t = first; t < first + count; t++) {
        const int32_t *v = &triangles[3 * t];
        volume += v3_dot(x[v[0]], v3_cross(x[v[1]], x[v[2]])) / 6.0;
    }
    return volume;
}

static double mesh_volume(const mesh *m) { return signed_volume(m->position, m->triangles, 0, m->triangle_count); }
static double piece_volume(const sm_cut_piece *p) { return signed_volume(p->position, p->triangles, 0, p->triangle_count); }

static int compare_int64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/// Directed edges (a * vertex_count + b) of triangles [first, first + count), sorted.
static int64_t *directed_edges(const sm_cut_piece *p, int32_t first, int32_t count)
{
    int64_t *edges = malloc(sizeof *edges * (size_t)(3 * count + 1));
    for (int32_t t = 0; t < count; t++)
        for (int k = 0; k < 3; k++)
            edges[3 * t + k] = (int64_t)p->triangles[3 * (first + t) + k] * p->vertex_count + p->triangles[3 * (first + t) + (k + 1) % 3];
    qsort(edges, (size_t)(3 * count), sizeof *edges, compare_int64);
    return edges;
}

static bool has_edge(const int64_t *edges, int32_t count, int64_t key)
{
    return bsearch(&key, edges, (size_t)count, sizeof *edges, compare_int64) != NULL;
}

/// Defects of a closed, consistently oriented surface: directed edges used twice or whose reverse
/// is missing (so 0 means every directed edge once and every undirected edge in exactly two
/// triangles), and triangles that repeat a vertex.
static int32_t surface_defects(const sm_cut_piece *p)
{
    const int32_t n = 3 * p->triangle_count;
    int64_t *edges = directed_edges(p, 0, p->triangle_count);
    int32_t defects = 0;
    for (int32_t e = 0; e < n; e++) {
        const int64_t a = edges[e] / p->vertex_count, b = edges[e] % p->vertex_count;
        if ((e + 1 < n && edges[e + 1] == edges[e]) || !has_edge(edges, n, b * p->vertex_count + a)) defects++;
    }
    for (int32_t t = 0; t < p->triangle_count; t++) {
        const int32_t *v = &p->triangles[3 * t];
        if (v[0] == v[1] || v[1] == v[2] || v[2] == v[0]) defects++;
    }
    free(edges);
    return defects;
}

/// A 2D frame of the plane with normal n (any orientation: used for point in polygon only).
typedef struct frame2 {
    sm_vec3 u, v;
} frame2;

static frame2 plane_frame(sm_vec3 n)
{
    const sm_vec3 axis = fabs(n.x) < 0.5 ? v3(1, 0, 0) : v3(0, 1, 0);
    const sm_vec3 u = v3_cross(axis, n);
    const sm_vec3 un = v3_scale(u, 1.0 / v3_length(u)), vn = v3_cross(v3_scale(n, 1.0 / v3_length(n)), un);
    return (frame2){un, vn};
}

static bool inside_polygon(const frame2 *f, sm_vec3 p, const sm_vec3 *x, const int32_t *loop, int32_t n)
{
    const double px = v3_dot(p, f->u), py = v3_dot(p, f->v);
    bool inside = false;
    for (int32_t i = 0, j = n - 1; i < n; j = i++) {
        const double xi = v3_dot(x[loop[i]], f->u), yi = v3_dot(x[loop[i]], f->v);
        const double xj = v3_dot(x[loop[j]], f->u), yj = v3_dot(x[loop[j]], f->v);
        if ((yi > py) != (yj > py) && px < xj + (py - yj) * (xi - xj) / (yi - yj)) inside = !inside;
    }
    return inside;
}

/// The cap's boundary loops: its directed edges whose reverse is not in the cap, chained.
typedef struct cap_loops {
    int32_t count;
    int32_t offsets[64];
    int32_t *vertices;
    double area[64]; ///< signed, about the cap's facing normal: > 0 outer boundary, < 0 hole
} cap_loops;

static cap_loops find_cap_loops(const sm_cut_piece *p, sm_vec3 facing)
{
    const int32_t first = p->triangle_count - p->cap_triangle_count, n = 3 * p->cap_triangle_count;
    int64_t *edges = directed_edges(p, first, p->cap_triangle_count);
    int32_t *next = malloc(sizeof *next * (size_t)(p->vertex_count + 1));
    for (int32_t v = 0; v < p->vertex_count; v++) next[v] = -1;
    for (int32_t e = 0; e < n; e++) {
        const int64_t a = edges[e] / p->vertex_count, b = edges[e] % p->vertex_count;
        if (!has_edge(edges, n, b * p->vertex_count + a)) next[a] = (int32_t)b;
    }
    cap_loops loops = {0, {0}, malloc(sizeof(int32_t) * (size_t)(n + 1)), {0}};
    const sm_vec3 m = v3_scale(facing, 1.0 / v3_length(facing));
    for (int32_t start = 0; start < p->vertex_count && loops.count < 63; start++) {
        if (next[start] < 0) continue;
        int32_t k = loops.offsets[loops.count];
        double area = 0.0;
        for (int32_t v = start; next[v] >= 0;) {
            const int32_t w = next[v];
            loops.vertices[k++] = v;
            area += 0.5 * v3_dot(v3_cross(p->position[v], p->position[w]), m);
            next[v] = -1;
            v = w;
        }
        loops.area[loops.count] = area;
        loops.offsets[++loops.count] = k;
    }
    free(edges), free(next);
    return loops;
}

/// What the checks of a cap measure.
typedef struct cap_report {
    double area;         ///< sum of the cap triangles' areas (unsigned)
    double loop_area;    ///< sum of the boundary loops' signed areas: outer boundaries minus holes
    double off_plane;    ///< largest distance of a cap vertex from the plane
    int32_t wrong_facing;///< cap triangles facing the wrong way (beyond round-off)
    int32_t outer, holes;///< boundary loops of positive and negative area
    int32_t misplaced;   ///< cap triangles whose centroid is outside every outer loop or inside a hole
} cap_report;

/// Measures the cap of a piece that should face `facing` on the plane (point, n).
static cap_report measure_cap(const sm_cut_piece *p, sm_vec3 point, sm_vec3 n, sm_vec3 facing)
{
    cap_report r = {0};
    const sm_vec3 nu = v3_scale(n, 1.0 / v3_length(n)), m = v3_scale(facing, 1.0 / v3_length(facing));
    const int32_t first = p->triangle_count - p->cap_triangle_count;
    cap_loops loops = find_cap_loops(p, facing);
    const frame2 f = plane_frame(n);
    for (int32_t i = 0; i < loops.count; i++) {
        r.loop_area += loops.area[i];
        if (loops.area[i] > 0.0) r.outer++;
        else r.holes++;
    }
    for (int32_t t = first; t < p->triangle_count; t++) {
        const int32_t *v = &p->triangles[3 * t];
        const sm_vec3 c = tri_cross(p->position, v);
        r.area += 0.5 * v3_length(c);
        if (v3_dot(c, m) < -1e-12) r.wrong_facing++;
        for (int k = 0; k < 3; k++) r.off_plane = fmax(r.off_plane, fabs(v3_dot(v3_sub(p->position[v[k]], point), nu)));
        // the centroid must lie inside as many outer loops as holes plus one
        const sm_vec3 centroid = v3_scale(v3_add(v3_add(p->position[v[0]], p->position[v[1]]), p->position[v[2]]), 1.0 / 3.0);
        int32_t in_outer = 0, in_holes = 0;
        for (int32_t i = 0; i < loops.count; i++) {
            const bool in = inside_polygon(&f, centroid, p->position, &loops.vertices[loops.offsets[i]], loops.offsets[i + 1] - loops.offsets[i]);
            if (in && loops.area[i] > 0.0) in_outer++;
            if (in && loops.area[i] < 0.0) in_holes++;
        }
        // (slivers along the boundary, whose centroid round-off may put either side, aside)
        if (in_outer != in_holes + 1 && 0.5 * v3_length(c) > 1e-9 * fmax(1.0, fabs(r.loop_area))) r.misplaced++;
    }
    free(loops.vertices);
    return r;
}

/// Connected components of the cap triangles (sharing a vertex).
static int32_t cap_components(const sm_cut_piece *p)
{
    int32_t *root = malloc(sizeof *root * (size_t)(p->vertex_count + 1));
    for (int32_t v = 0; v < p->vertex_count; v++) root[v] = -1;
    const int32_t first = p->triangle_count - p->cap_triangle_count;
    for (int32_t t = first; t < p->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (root[p->triangles[3 * t + k]] < 0) root[p->triangles[3 * t + k]] = p->triangles[3 * t + k];
    for (int32_t t = first; t < p->triangle_count; t++) {
        for (int k = 1; k < 3; k++) {
            int32_t a = p->triangles[3 * t], b = p->triangles[3 * t + k];
            while (root[a] != a) a = root[a];
            while (root[b] != b) b = root[b];
            if (a != b) root[a] = b;
        }
    }
    int32_t count = 0;
    for (int32_t v = 0; v < p->vertex_count; v++) count += root[v] == v;
    free(root);
    return count;
}

/// Cuts m by the plane; checks what holds for every cut of a closed surface (both pieces closed
/// and consistently oriented, volumes adding up, caps on the plane facing out, filling their
/// loops exactly) and prints the figures (unless name is NULL). Returns |sum of the volumes -
/// the whole|; the pieces are left for more checks.
static double cut_closed(const char *name, const mesh *m, sm_vec3 point, sm_vec3 n, sm_cut_piece *back, sm_cut_piece *front)
{
    const sm_cut_input in = {m->position, NULL, m->vertex_count, m->triangles, m->triangle_count, point, n};
    int32_t open = -1;
    ENSURE_OK(sm_cut_surface(&in, back, front, &open));
    ENSURE(open == 0);
    const double whole = mesh_volume(m), vb = piece_volume(back), vf = piece_volume(front);
    ENSURE(surface_defects(back) == 0);
    ENSURE(surface_defects(front) == 0);
    ENSURE_SMALL(vb + vf - whole, 1e-9);
    ENSURE(vb > -1e-12 && vf > -1e-12);
    const cap_report cb = measure_cap(back, point, n, n), cf = measure_cap(front, point, n, v3_scale(n, -1.0));
    const cap_report *caps[2] = {&cb, &cf};
    for (int s = 0; s < 2; s++) {
        ENSURE_SMALL(caps[s]->off_plane, 1e-12);
        ENSURE(caps[s]->wrong_facing == 0);
        ENSURE(caps[s]->misplaced == 0);
        ENSURE_SMALL(caps[s]->area - caps[s]->loop_area, 1e-9 * fmax(1.0, caps[s]->loop_area));
    }
    if (name)
        printf("  %-28s back %4d vertices %4d triangles (cap %3d) volume %.12f | front %4d vertices %4d triangles (cap %3d) volume %.12f | "
           "sum - whole %.2e | cap area %.12f / %.12f (loops %.12f; %d outer, %d holes)\n",
           name, back->vertex_count, back->triangle_count, back->cap_triangle_count, vb, front->vertex_count, front->triangle_count,
           front->cap_triangle_count, vf, vb + vf - whole, cb.area, cf.area, cb.loop_area, cb.outer, cb.holes);
    return fabs(vb + vf - whole);
}

/* ---- Tests -------------------------------------------------------------------------------- */

/// The unit cube by planes in general position and through vertices: closed halves whose volumes
/// add up to 1.
static void cube_cut_into_closed_pieces(void)
{
    mesh cube = make_cube(1), fine = make_cube(2);
    ENSURE(cube.triangle_count == 12 && cube.vertex_count == 8);
    ENSURE_SMALL(mesh_volume(&cube) - 1.0, 1e-12);
    ENSURE_SMALL(mesh_volume(&fine) - 1.0, 1e-12);
    sm_cut_piece back, front;

    cut_closed("tilted (0.3, 1, 0.2)", &cube, v3(0.5, 0.5, 0.5), v3(0.3, 1.0, 0.2), &back, &front);
    ENSURE(piece_volume(&back) > 0.1 && piece_volume(&front) > 0.1);
    ENSURE_SMALL(piece_volume(&back) - 0.5, 1e-12); // the plane through the centre halves the cube
    // the cross-section is a hexagon or less: at least a quad of area >= 1
    ENSURE(back.cap_triangle_count >= 2 && front.cap_triangle_count >= 2);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    cut_closed("tilted, off centre", &cube, v3(0.2, 0.3, 0.1), v3(-0.7, 0.4, 1.1), &back, &front);
    ENSURE(piece_volume(&back) > 0.0 && piece_volume(&front) > 0.0);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // the 2x2 cube by y = 0.5: through its middle layer of vertices (on the plane: back)
    cut_closed("y = 0.5 through a layer", &fine, v3(0.3, 0.5, 0.8), v3(0.0, 1.0, 0.0), &back, &front);
    ENSURE_SMALL(piece_volume(&back) - 0.5, 1e-12);
    ENSURE_SMALL(piece_volume(&front) - 0.5, 1e-12);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // through 4 of the cube's vertices (x = z): the diagonal section, a 1 x sqrt 2 rectangle
    cut_closed("x = z through 4 vertices", &cube, v3(0.5, 0.5, 0.5), v3(1.0, 0.0, -1.0), &back, &front);
    ENSURE_SMALL(piece_volume(&back) - 0.5, 1e-12);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // through the bottom face: the back piece is the face itself and its cap, flat (volume 0)
    cut_closed("y = 0 through the bottom", &cube, v3(0.0, 0.0, 0.0), v3(0.0, 1.0, 0.0), &back, &front);
    ENSURE_SMALL(piece_volume(&back), 1e-12);
    ENSURE_SMALL(piece_volume(&front) - 1.0, 1e-12);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&cube), mesh_free(&fine);
}

/// The torus through its hole (y = 0.01): each cap is an annulus that fills exactly the area
/// between its outer loop and its hole.
static void torus_cap_is_an_annulus(void)
{
    mesh torus = make_torus(1.0, 0.4, 48, 24);
    const double whole = mesh_volume(&torus);
    ENSURE_RANGE(whole, 0.95 * 2 * SM_PI * SM_PI * 0.16, 2 * SM_PI * SM_PI * 0.16); // 2 pi^2 R r^2, inscribed
    sm_cut_piece back, front;
    const sm_vec3 point = v3(0.0, 0.01, 0.0), n = v3(0.0, 1.0, 0.0);
    cut_closed("torus y = 0.01", &torus, point, n, &back, &front);
    const cap_report cb = measure_cap(&back, point, n, n), cf = measure_cap(&front, point, n, v3_scale(n, -1.0));
    ENSURE(cb.outer == 1 && cb.holes == 1 && cf.outer == 1 && cf.holes == 1);
    ENSURE(cap_components(&back) == 1 && cap_components(&front) == 1);
    ENSURE_SMALL(cb.area / cb.loop_area - 1.0, 1e-9);
    ENSURE_SMALL(cf.area / cf.loop_area - 1.0, 1e-9);
    ENSURE(cb.misplaced == 0 && cf.misplaced == 0);
    // the section of the smooth torus: an annulus between R -+ sqrt(r^2 - y^2), as 48-gons
    const double half = sqrt(0.16 - 0.01 * 0.01), exact = SM_PI * (pow(1.0 + half, 2) - pow(1.0 - half, 2));
    ENSURE_RANGE(cb.area / exact, 0.98, 1.0);
    printf("  torus y = 0.01: cap areas %.12f (back) %.12f (front), outer minus hole %.12f, smooth annulus %.6f; "
           "back %d + front %d cap triangles\n",
           cb.area, cf.area, cb.loop_area, exact, back.cap_triangle_count, front.cap_triangle_count);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // y = 0 runs through a ring of its vertices (on the plane: back), so each loop has the
    // ring's points, the front one also the copies of the cut points there
    const sm_vec3 through = v3(0.0, 0.0, 0.0);
    cut_closed("torus y = 0 (vertex ring)", &torus, through, n, &back, &front);
    const cap_report rb = measure_cap(&back, through, n, n), rf = measure_cap(&front, through, n, v3_scale(n, -1.0));
    ENSURE(rb.outer == 1 && rb.holes == 1 && rf.outer == 1 && rf.holes == 1);
    ENSURE(rb.misplaced == 0 && rf.misplaced == 0);
    ENSURE_SMALL(rb.area / rb.loop_area - 1.0, 1e-9);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&torus);
}

/// The torus by x = 0: two separate discs on each piece.
static void torus_cut_across_gives_two_caps(void)
{
    mesh torus = make_torus(1.0, 0.4, 48, 24);
    sm_cut_piece back, front;
    const sm_vec3 point = v3(0.0, 0.0, 0.0), n = v3(1.0, 0.0, 0.0);
    cut_closed("torus x = 0", &torus, point, n, &back, &front);
    const cap_report cb = measure_cap(&back, point, n, n), cf = measure_cap(&front, point, n, v3_scale(n, -1.0));
    ENSURE(cap_components(&back) == 2 && cap_components(&front) == 2);
    ENSURE(cb.outer == 2 && cb.holes == 0 && cf.outer == 2 && cf.holes == 0);
    // two discs of radius 0.4 as 24-gons
    const double discs = 2.0 * 0.5 * 24 * 0.16 * sin(2.0 * SM_PI / 24);
    ENSURE_SMALL(cb.area / discs - 1.0, 1e-6);
    printf("  torus x = 0: %d + %d caps, areas %.12f / %.12f, two 24-gons %.12f\n", cap_components(&back),
           cap_components(&front), cb.area, cf.area, discs);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&torus);
}

/// Concave sections (a five-pointed star, an L) across the prism's axis: the caps fill exactly
/// the outline, nothing outside it.
static void concave_sections_are_filled_exactly(void)
{
    double star[10][2];
    for (int k = 0; k < 10; k++) {
        const double angle = SM_PI * k / 5, radius = k % 2 ? 0.35 : 1.0;
        star[k][0] = radius * cos(angle), star[k][1] = radius * sin(angle);
    }
    const double ell[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
    const struct {
        const char *name;
        const double (*xz)[2];
        int n;
        double kx, kz;
    } outlines[] = {{"star prism y = 0.37", (const double (*)[2])star, 10, 0.0, 0.0}, {"L prism y = 0.37", ell, 6, 0.5, 0.5}};
    for (int o = 0; o < 2; o++) {
        mesh prism = make_prism(outlines[o].xz, outlines[o].n, outlines[o].kx, outlines[o].kz, 1.0);
        double area = 0.0;
        for (int i = 0; i < outlines[o].n; i++) {
            const double *a = outlines[o].xz[i], *b = outlines[o].xz[(i + 1) % outlines[o].n];
            area += 0.5 * (a[0] * b[1] - a[1] * b[0]);
        }
        area = fabs(area);
        ENSURE_SMALL(mesh_volume(&prism) - area, 1e-12);
        sm_cut_piece back, front;
        const sm_vec3 point = v3(0.1, 0.37, -0.2), n = v3(0.0, 1.0, 0.0);
        cut_closed(outlines[o].name, &prism, point, n, &back, &front);
        const cap_report cb = measure_cap(&back, point, n, n), cf = measure_cap(&front, point, n, v3_scale(n, -1.0));
        ENSURE_SMALL(cb.area / area - 1.0, 1e-9);
        ENSURE_SMALL(cf.area / area - 1.0, 1e-9);
        // every cap triangle's centroid inside the outline itself
        const frame2 f = plane_frame(n);
        int32_t outside = 0;
        const sm_cut_piece *pieces[2] = {&back, &front};
        int32_t outline[10];
        for (int i = 0; i < outlines[o].n; i++) outline[i] = i;
        for (int s = 0; s < 2; s++) {
            const sm_cut_piece *p = pieces[s];
            for (int32_t t = p->triangle_count - p->cap_triangle_count; t < p->triangle_count; t++) {
                const int32_t *v = &p->triangles[3 * t];
                const sm_vec3 c = v3_scale(v3_add(v3_add(p->position[v[0]], p->position[v[1]]), p->position[v[2]]), 1.0 / 3.0);
                outside += !inside_polygon(&f, c, prism.position, outline, outlines[o].n);
            }
        }
        ENSURE(outside == 0);
        printf("  %s: outline area %.12f, cap areas %.12f / %.12f, %d + %d cap triangles, %d centroids outside\n",
               outlines[o].name, area, cb.area, cf.area, back.cap_triangle_count, front.cap_triangle_count, outside);
        sm_cut_piece_free(&back), sm_cut_piece_free(&front);
        mesh_free(&prism);
    }
}

/// Voxel plates cut across: a section with two holes, and a ring round an island (loops nested
/// three deep); along the plate, through a layer of vertices, and tilted.
static void holes_and_islands_in_one_section(void)
{
    const char *const two_holes[] = {"#####", "#.#.#", "#####"};
    const char *const island[] = {"#######", "#.....#", "#.....#", "#..#..#", "#.....#", "#.....#", "#######"};
    const struct {
        const char *name;
        const char *const *rows;
        int depth;
        double area;         // of the section across y
        int32_t outer, holes; // its loops
    } plates[] = {{"plate, two holes", two_holes, 3, 13.0, 1, 2}, {"ring round an island", island, 7, 25.0, 2, 1}};
    for (int k = 0; k < 2; k++) {
        mesh plate = make_voxels(plates[k].rows, plates[k].depth, 2);
        ENSURE_SMALL(mesh_volume(&plate) - 2.0 * plates[k].area, 1e-12);
        const struct {
            const char *name;
            sm_vec3 point, n;
        } planes[] = {{"y = 0.37", v3(0.5, 0.37, 0.5), v3(0, 1, 0)},
                      {"y = 1 (vertex layer)", v3(2.0, 1.0, 1.0), v3(0, 1, 0)},
                      {"tilted", v3(2.5, 1.0, 1.5), v3(0.05, 1.0, -0.03)}};
        for (int p = 0; p < 3; p++) {
            char name[64];
            snprintf(name, sizeof name, "%s, %s", plates[k].name, planes[p].name);
            sm_cut_piece back, front;
            cut_closed(name, &plate, planes[p].point, planes[p].n, &back, &front);
            const cap_report cb = measure_cap(&back, planes[p].point, planes[p].n, planes[p].n);
            const cap_report cf = measure_cap(&front, planes[p].point, planes[p].n, v3_scale(planes[p].n, -1.0));
            ENSURE(cb.outer == plates[k].outer && cb.holes == plates[k].holes);
            ENSURE(cf.outer == plates[k].outer && cf.holes == plates[k].holes);
            ENSURE(cb.misplaced == 0 && cf.misplaced == 0);
            // across y the section is the map's area; tilted, that over cos(tilt)
            const double cos_tilt = planes[p].n.y / v3_length(planes[p].n);
            ENSURE_SMALL(cb.area * cos_tilt / plates[k].area - 1.0, 1e-9);
            ENSURE_SMALL(cf.area * cos_tilt / plates[k].area - 1.0, 1e-9);
            sm_cut_piece_free(&back), sm_cut_piece_free(&front);
        }
        mesh_free(&plate);
    }
}

/// A sieve (a 9 x 9 plate with 16 square holes, many corners level with each other) cut along
/// its plate through a layer of vertices, and by planes at random: near that, and any.
static void sieve_cut_at_random(void)
{
    const char *const rows[] = {"#########", "#.#.#.#.#", "#########", "#.#.#.#.#", "#########",
                                "#.#.#.#.#", "#########", "#.#.#.#.#", "#########"};
    mesh sieve = make_voxels(rows, 9, 2);
    ENSURE_SMALL(mesh_volume(&sieve) - 2.0 * 65.0, 1e-12);
    sm_cut_piece back, front;
    const sm_vec3 up = v3(0, 1, 0);
    cut_closed("sieve y = 1 (vertex layer)", &sieve, v3(4.5, 1.0, 4.5), up, &back, &front);
    const cap_report layer = measure_cap(&back, v3(4.5, 1.0, 4.5), up, up);
    ENSURE(layer.outer == 1 && layer.holes == 16);
    ENSURE_SMALL(layer.area - 65.0, 1e-9);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    rng r = {11};
    int32_t sixteen = 0;
    double worst_area = 0.0;
    for (int k = 0; k < 100; k++) {
        // the first half along the plate (tilted a little), the others any way through it
        const bool along = k < 50;
        const sm_vec3 point = v3(rng_uniform(&r, 0.5, 8.5), rng_uniform(&r, 0.5, 1.5), rng_uniform(&r, 0.5, 8.5));
        const sm_vec3 n = along ? v3(rng_uniform(&r, -0.02, 0.02), 1.0, rng_uniform(&r, -0.02, 0.02)) : rng_in_ball(&r, 1.0);
        const int before = sm_test_failures;
        cut_closed(NULL, &sieve, point, n, &back, &front);
        const cap_report cb = measure_cap(&back, point, n, n), cf = measure_cap(&front, point, n, v3_scale(n, -1.0));
        if (along) {
            ENSURE(cb.outer == 1 && cb.holes == 16 && cf.outer == 1 && cf.holes == 16);
            sixteen += cb.holes == 16;
            // the section of the plate: 65 over the cosine of the tilt
            ENSURE_SMALL(cb.area * n.y / v3_length(n) / 65.0 - 1.0, 1e-9);
        }
        worst_area = fmax(worst_area, fabs(cb.area - cb.loop_area) / fmax(cb.loop_area, 1.0));
        if (sm_test_failures != before)
            printf("    cut %d failed: point (%.17g, %.17g, %.17g) normal (%.17g, %.17g, %.17g)\n", k, point.x, point.y, point.z,
                   n.x, n.y, n.z);
        sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    }
    printf("  sieve: 100 random cuts, %d of the 50 along the plate with 16 holes; worst |cap area - loop area| / area %.2e\n",
           sixteen, worst_area);

    // diagonal planes through lattice vertices and along voxel edges: where a hole's wall meets
    // the plate's face on the plane, the section pinches to nothing, and loops touch
    mesh thick = make_voxels(rows, 9, 3);
    const sm_vec3 diagonal[][2] = {{{1, 1, 4}, {1, 1, 0}}, {{8, 0, 0}, {-1, -1, 0}}, {{4, 2, 4}, {1, -1, -1}},
                                   {{7, 3, 2}, {0, -1, 1}}, {{1, 2, 8}, {1, -1, 1}}, {{3, 0, 3}, {0, -1, 1}}};
    int32_t pinched = 0;
    for (int k = 0; k < 6; k++) {
        const int before = sm_test_failures;
        cut_closed(NULL, &thick, diagonal[k][0], diagonal[k][1], &back, &front);
        pinched += sm_test_failures == before;
        sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    }
    printf("  thick sieve along lattice diagonals: %d of 6 cuts closed with exact caps\n", pinched);
    mesh_free(&sieve), mesh_free(&thick);
}

/// The torus by planes at random: every cut gives closed pieces, caps that fill their loops.
static void random_cuts_of_a_torus(void)
{
    mesh torus = make_torus(1.0, 0.4, 48, 24);
    rng r = {7};
    const int cuts = 200;
    int32_t caps = 0, with_hole = 0, two_discs = 0, missed = 0;
    double worst_volume = 0.0;
    for (int k = 0; k < cuts; k++) {
        const sm_vec3 point = rng_in_ball(&r, 1.2), n = rng_in_ball(&r, 1.0);
        sm_cut_piece back, front;
        const int before = sm_test_failures;
        worst_volume = fmax(worst_volume, cut_closed(NULL, &torus, point, n, &back, &front));
        if (sm_test_failures != before)
            printf("    cut %d failed: point (%.17g, %.17g, %.17g) normal (%.17g, %.17g, %.17g)\n", k, point.x, point.y, point.z,
                   n.x, n.y, n.z);
        const cap_report cb = measure_cap(&back, point, n, n);
        caps += back.cap_triangle_count > 0;
        with_hole += cb.holes > 0;
        two_discs += cb.outer == 2;
        missed += back.triangle_count == 0 || front.triangle_count == 0;
        sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    }
    printf("  %d random cuts: %d with a cap (%d annuli, %d with two discs), %d missing the torus; worst |volume sum - whole| %.2e\n",
           cuts, caps, with_hole, two_discs, missed, worst_volume);
    mesh_free(&torus);
}

/// A cube without its top face, cut across the opening: the chains along the plane do not close
/// and stay open; cut below the opening, the loop closes and the lower piece is sealed.
static void open_mesh_leaves_chains_open(void)
{
    mesh box = make_cube(1);
    // drop the two triangles of the top face (all vertices at y = 1)
    int32_t kept = 0;
    for (int32_t t = 0; t < box.triangle_count; t++) {
        const int32_t *v = &box.triangles[3 * t];
        if (box.position[v[0]].y == 1.0 && box.position[v[1]].y == 1.0 && box.position[v[2]].y == 1.0) continue;
        memmove(&box.triangles[3 * kept++], v, 3 * sizeof *v);
    }
    box.triangle_count = kept;
    ENSURE(kept == 10);
    sm_cut_input in = {box.position, NULL, box.vertex_count, box.triangles, box.triangle_count, v3(0.5, 0.5, 0.5), v3(1.0, 0.0, 0.0)};
    sm_cut_piece back, front;
    int32_t open = -1;
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(open > 0);
    ENSURE(back.triangle_count > 0 && front.triangle_count > 0);
    ENSURE(back.cap_triangle_count == 0 && front.cap_triangle_count == 0);
    printf("  open box by x = 0.5: %d open chains, back %d triangles, front %d triangles\n", open, back.triangle_count,
           front.triangle_count);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    in.normal = v3(0.0, 1.0, 0.0);
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(open == 0);
    ENSURE(surface_defects(&back) == 0);
    ENSURE(back.cap_triangle_count > 0);
    ENSURE_SMALL(piece_volume(&back) - 0.5, 1e-12);
    printf("  open box by y = 0.5: %d open chains, the lower piece sealed (%d cap triangles, volume %.12f)\n", open,
           back.cap_triangle_count, piece_volume(&back));
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&box);
}

/// A plane that misses the surface leaves one piece empty, the other a copy of the input.
static void one_side_empty(void)
{
    mesh cube = make_cube(1);
    sm_cut_input in = {cube.position, NULL, cube.vertex_count, cube.triangles, cube.triangle_count, v3(0.0, 2.0, 0.0), v3(0.0, 1.0, 0.0)};
    sm_cut_piece back, front;
    int32_t open = -1;
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(open == 0);
    printf("  plane y = 2: back %d vertices %d triangles, front %d vertices %d triangles\n", back.vertex_count,
           back.triangle_count, front.vertex_count, front.triangle_count);
    ENSURE(front.vertex_count == 0 && front.triangle_count == 0 && front.position == NULL);
    ENSURE(back.vertex_count == 8 && back.triangle_count == 12 && back.cap_triangle_count == 0);
    ENSURE(surface_defects(&back) == 0);
    ENSURE_SMALL(piece_volume(&back) - 1.0, 1e-12);
    bool copies = true;
    for (int32_t v = 0; v < back.vertex_count; v++)
        copies = copies && back.source_vertex[v] >= 0 && back.position[v].x == cube.position[back.source_vertex[v]].x &&
                 back.position[v].y == cube.position[back.source_vertex[v]].y && back.position[v].z == cube.position[back.source_vertex[v]].z;
    ENSURE(copies);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // on the plane counts as back: the top face at y = 1 is on it, everything is back
    in.point = v3(0.0, 1.0, 0.0);
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(front.vertex_count == 0 && front.triangle_count == 0 && back.triangle_count == 12);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    in.point = v3(0.0, -1.0, 0.0);
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(back.vertex_count == 0 && back.triangle_count == 0 && front.triangle_count == 12);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&cube);
}

/// New vertices interpolate rest positions with the same t as positions: t = d0 / (d0 - d1)
/// from the lower-numbered end of their edge.
static void rest_positions_follow_the_same_t(void)
{
    // one triangle by x = 0.25: edge (0, 1) at t = 0.25, edge (1, 2) at t = 0.75 from vertex 1
    const sm_vec3 x[3] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0)};
    const sm_vec3 rest[3] = {v3(10, 0, 0), v3(10, 4, 0), v3(13, 0, 5)};
    const int32_t tri[3] = {0, 1, 2};
    const sm_cut_input in = {x, rest, 3, tri, 1, v3(0.25, 7.0, 3.0), v3(2.0, 0.0, 0.0)};
    sm_cut_piece back, front;
    int32_t open = -1;
    ENSURE_OK(sm_cut_surface(&in, &back, &front, &open));
    ENSURE(open == 1); // a single triangle's cut is a chain that does not close
    ENSURE(back.triangle_count == 2 && front.triangle_count == 1);
    int32_t found = 0;
    const sm_cut_piece *pieces[2] = {&back, &front};
    for (int s = 0; s < 2; s++) {
        for (int32_t v = 0; v < pieces[s]->vertex_count; v++) {
            const sm_vec3 p = pieces[s]->position[v], q = pieces[s]->rest[v];
            if (pieces[s]->source_vertex[v] >= 0) continue;
            if (fabs(p.y) < 1e-15) { // on edge (0, 1)
                ENSURE_SMALL(p.x - 0.25, 1e-15);
                ENSURE_SMALL(v3_length(v3_sub(q, v3(10.0, 1.0, 0.0))), 1e-14);
            } else { // on edge (1, 2)
                ENSURE_SMALL(v3_length(v3_sub(p, v3(0.25, 0.75, 0.0))), 1e-15);
                ENSURE_SMALL(v3_length(v3_sub(q, v3(12.25, 1.0, 3.75))), 1e-14);
            }
            found++;
        }
    }
    ENSURE(found == 4); // two cut points, a copy on each piece
    printf("  one triangle by x = 0.25: %d new vertices, e.g. position (%.3f, %.3f, %.3f) rest (%.3f, %.3f, %.3f)\n", found,
           front.position[1].x, front.position[1].y, front.position[1].z, front.rest[1].x, front.rest[1].y, front.rest[1].z);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);

    // the cube with scattered rest positions: every new vertex lies on an input edge at some t,
    // and its rest position is that edge's rest positions at the same t
    mesh cube = make_cube(1);
    sm_vec3 scattered[8];
    rng r = {3};
    for (int v = 0; v < 8; v++) scattered[v] = v3_add(v3_scale(cube.position[v], 2.0), rng_in_ball(&r, 0.5));
    const sm_cut_input box = {cube.position, scattered, 8, cube.triangles, 12, v3(0.5, 0.5, 0.5), v3(0.3, 1.0, 0.2)};
    ENSURE_OK(sm_cut_surface(&box, &back, &front, NULL));
    int32_t matched = 0, new_vertices = 0;
    for (int32_t v = 0; v < back.vertex_count; v++) {
        if (back.source_vertex[v] >= 0) continue;
        new_vertices++;
        for (int a = 0; a < 8; a++) {
            for (int b = a + 1; b < 8; b++) {
                const double da = v3_dot(v3_sub(cube.position[a], box.point), box.normal);
                const double db = v3_dot(v3_sub(cube.position[b], box.point), box.normal);
                if ((da > 0.0) == (db > 0.0)) continue;
                const double t = da / (da - db);
                const sm_vec3 p = v3_add(cube.position[a], v3_scale(v3_sub(cube.position[b], cube.position[a]), t));
                if (v3_length(v3_sub(p, back.position[v])) > 1e-14) continue;
                const sm_vec3 q = v3_add(scattered[a], v3_scale(v3_sub(scattered[b], scattered[a]), t));
                ENSURE_SMALL(v3_length(v3_sub(q, back.rest[v])), 1e-14);
                matched++;
            }
        }
    }
    ENSURE(new_vertices >= 3 && matched == new_vertices);
    printf("  cube with scattered rest positions: %d new vertices, %d matched to their edge's t\n", new_vertices, matched);
    sm_cut_piece_free(&back), sm_cut_piece_free(&front);
    mesh_free(&cube);
}

/// Bad input fails with a sentence and leaves the pieces empty.
static void degenerate_input_is_refused(void)
{
    mesh cube = make_cube(1);
    sm_cut_piece back, front;
    sm_cut_input in = {cube.position, NULL, 8, cube.triangles, 12, v3(0.5, 0.5, 0.5), v3(0.0, 1.0, 0.0)};
    sm_cut_input empty = in; // (a surface of points, vertices without triangles, is cut: test_cut)
    empty.vertex_count = empty.triangle_count = 0;
    ENSURE(sm_cut_surface(&empty, &back, &front, NULL) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(strlen(sm_last_error()) > 10);
    ENSURE(back.triangle_count == 0 && back.position == NULL && front.position == NULL);
    printf("  empty: %s\n", sm_last_error());
    sm_cut_input flat = in;
    flat.normal = v3(0.0, 0.0, 0.0);
    ENSURE(sm_cut_surface(&flat, &back, &front, NULL) == SM_ERROR_INVALID_ARGUMENT);
    printf("  zero normal: %s\n", sm_last_error());
    cube.position[5].y = NAN;
    ENSURE(sm_cut_surface(&in, &back, &front, NULL) == SM_ERROR_INVALID_ARGUMENT);
    printf("  NaN: %s\n", sm_last_error());
    ENSURE(back.triangle_count == 0 && back.position == NULL);
    cube.position[5].y = 1.0;
    cube.triangles[7] = 8;
    ENSURE(sm_cut_surface(&in, &back, &front, NULL) == SM_ERROR_INVALID_ARGUMENT);
    printf("  bad index: %s\n", sm_last_error());
    ENSURE(sm_cut_surface(NULL, &back, &front, NULL) == SM_ERROR_INVALID_ARGUMENT);
    mesh_free(&cube);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(cube_cut_into_closed_pieces),
        TEST(torus_cap_is_an_annulus),
        TEST(torus_cut_across_gives_two_caps),
        TEST(concave_sections_are_filled_exactly),
        TEST(holes_and_islands_in_one_section),
        TEST(sieve_cut_at_random),
        TEST(random_cuts_of_a_torus),
        TEST(open_mesh_leaves_chains_open),
        TEST(one_side_empty),
        TEST(rest_positions_follow_the_same_t),
        TEST(degenerate_input_is_refused),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
