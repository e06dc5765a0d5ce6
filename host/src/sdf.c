/* Signed distance fields of triangle meshes (sdf.h): the exact distance near the surface, a
 * chamfer estimate beyond it, and the sign of a closed mesh by the parity of rays along x. */
#include "sdf.h"
#include "errors.h"
#include "math3.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/// Nodes within this many cells of a triangle's bounding box get its exact distance.
#define BAND 3

/// sign_inside()'s rows sit off the grid's lines by these fractions of a cell.
#define SIGN_OFFSET_Y 3.183098861837907e-5
#define SIGN_OFFSET_Z 1.591549430918953e-5

/// The point of triangle abc nearest p (Ericson, Real-Time Collision Detection, 5.1.5).
static sm_vec3 closest_on_triangle(sm_vec3 p, sm_vec3 a, sm_vec3 b, sm_vec3 c)
{
    const sm_vec3 ab = v3_sub(b, a), ac = v3_sub(c, a), ap = v3_sub(p, a);
    const double d1 = v3_dot(ab, ap), d2 = v3_dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) return a;
    const sm_vec3 bp = v3_sub(p, b);
    const double d3 = v3_dot(ab, bp), d4 = v3_dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) return b;
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return v3_add(a, v3_scale(ab, d1 / (d1 - d3)));
    const sm_vec3 cp = v3_sub(p, c);
    const double d5 = v3_dot(ab, cp), d6 = v3_dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) return c;
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return v3_add(a, v3_scale(ac, d2 / (d2 - d6)));
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
        return v3_add(b, v3_scale(v3_sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6))));
    const double denom = 1.0 / (va + vb + vc);
    return v3_add(a, v3_add(v3_scale(ab, vb * denom), v3_scale(ac, vc * denom)));
}

static int32_t clamp_index(double u, int32_t n)
{
    if (!(u > 0.0)) return 0;
    return u >= (double)(n - 1) ? n - 1 : (int32_t)u;
}

/// Where the line {(x, y, z): x} crosses triangle abc, into *x; false when it misses. The
/// edges' half-open rule counts a line through an edge or a vertex for exactly one of the
/// triangles sharing it (the line's y, z are also offset off the grid's lines).
static bool row_crossing(double y, double z, sm_vec3 a, sm_vec3 b, sm_vec3 c, double *x)
{
    // signed areas of the projections onto the yz-plane
    const double w0 = (b.y - y) * (c.z - z) - (b.z - z) * (c.y - y);
    const double w1 = (c.y - y) * (a.z - z) - (c.z - z) * (a.y - y);
    const double w2 = (a.y - y) * (b.z - z) - (a.z - z) * (b.y - y);
    const bool positive = w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0, negative = w0 <= 0.0 && w1 <= 0.0 && w2 <= 0.0;
    const double sum = w0 + w1 + w2;
    if ((!positive && !negative) || sum == 0.0) return false;
    *x = (w0 * a.x + w1 * b.x + w2 * c.x) / sum;
    return true;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/// The nodes of field f that get triangle abc's exact distance: its bounding box and BAND cells
/// around it, from[axis] to to[axis].
static void band_range(const sm_sdf *f, sm_vec3 a, sm_vec3 b, sm_vec3 c, int32_t from[3], int32_t to[3])
{
    const sm_vec3 tlo = v3(fmin(a.x, fmin(b.x, c.x)), fmin(a.y, fmin(b.y, c.y)), fmin(a.z, fmin(b.z, c.z)));
    const sm_vec3 thi = v3(fmax(a.x, fmax(b.x, c.x)), fmax(a.y, fmax(b.y, c.y)), fmax(a.z, fmax(b.z, c.z)));
    for (int ax = 0; ax < 3; ax++) {
        const double o = v3_get(f->origin, ax);
        from[ax] = clamp_index((v3_get(tlo, ax) - o) / f->cell - BAND, f->nodes[ax]);
        to[ax] = clamp_index((v3_get(thi, ax) - o) / f->cell + BAND + 1.0, f->nodes[ax]);
    }
}

/// The rows of nodes along x that sign_inside() intersects with triangle abc, j0 to j1, k0 to k1.
static void sign_rows(const sm_sdf *f, double ey, double ez, sm_vec3 a, sm_vec3 b, sm_vec3 c, int32_t *j0, int32_t *j1,
                      int32_t *k0, int32_t *k1)
{
    const double lo_y = fmin(a.y, fmin(b.y, c.y)), hi_y = fmax(a.y, fmax(b.y, c.y));
    const double lo_z = fmin(a.z, fmin(b.z, c.z)), hi_z = fmax(a.z, fmax(b.z, c.z));
    *j0 = clamp_index((lo_y - ey - f->origin.y) / f->cell, f->nodes[1]);
    *j1 = clamp_index((hi_y - ey - f->origin.y) / f->cell + 1.0, f->nodes[1]);
    *k0 = clamp_index((lo_z - ez - f->origin.z) / f->cell, f->nodes[2]);
    *k1 = clamp_index((hi_z - ez - f->origin.z) / f->cell + 1.0, f->nodes[2]);
}

/// Marks the nodes inside a closed mesh negative: along each row of nodes in x, the nodes
/// between the 1st and 2nd crossing of the mesh, the 3rd and 4th, ...
static bool sign_inside(const sm_vec3 *v, const int32_t *tri, int32_t triangle_count, sm_sdf *f)
{
    const int32_t nx = f->nodes[0], ny = f->nodes[1], nz = f->nodes[2];
    const int64_t rows = (int64_t)ny * nz;
    // the rows' lines sit off the grid's by irrational-looking fractions of a cell, so that they
    // pass through no vertex or edge of a mesh built on a lattice of the same cell
    const double ey = SIGN_OFFSET_Y * f->cell, ez = SIGN_OFFSET_Z * f->cell;
    int64_t *start = calloc((size_t)rows + 1, sizeof *start);
    if (!start) return false;
    for (int pass = 0; pass < 2; pass++) {
        double *xs = NULL;
        int64_t *fill = NULL;
        if (pass == 1) {
            for (int64_t r = 0; r < rows; r++) start[r + 1] += start[r];
            xs = malloc(sizeof *xs * (size_t)(start[rows] > 0 ? start[rows] : 1));
            fill = malloc(sizeof *fill * (size_t)rows);
            if (!xs || !fill) {
                free(xs), free(fill), free(start);
                return false;
            }
            memcpy(fill, start, sizeof *fill * (size_t)rows);
        }
        for (int32_t t = 0; t < triangle_count; t++) {
            const sm_vec3 a = v[tri[3 * t]], b = v[tri[3 * t + 1]], c = v[tri[3 * t + 2]];
            int32_t j0, j1, k0, k1;
            sign_rows(f, ey, ez, a, b, c, &j0, &j1, &k0, &k1);
            for (int32_t k = k0; k <= k1; k++)
                for (int32_t j = j0; j <= j1; j++) {
                    double x;
                    const double y = f->origin.y + j * f->cell + ey, z = f->origin.z + k * f->cell + ez;
                    if (!row_crossing(y, z, a, b, c, &x)) continue;
                    const int64_t r = (int64_t)k * ny + j;
                    if (pass == 0) start[r + 1]++;
                    else xs[fill[r]++] = x;
                }
        }
        if (pass == 1) {
            for (int64_t r = 0; r < rows; r++) {
                const int64_t n = start[r + 1] - start[r];
                double *row = xs + start[r];
                qsort(row, (size_t)n, sizeof *row, compare_double);
                float *line = f->value + r * nx;
                // a node is inside when it lies strictly between crossings 2q and 2q + 1: when the
                // crossings before it (m of them) are odd and the next one is beyond it
                int64_t m = 0;
                for (int32_t i = 0; i < nx && n > 1; i++) {
                    const double x = f->origin.x + i * f->cell;
                    while (m < n && row[m] < x) m++;
                    if ((m & 1) && m < n && row[m] > x) line[i] = -line[i];
                }
            }
            free(xs), free(fill);
        }
    }
    free(start);
    return true;
}

/// One chamfer sweep: each node takes the least of its own value and a neighbour's plus the
/// step to it, over the 13 neighbours before it in the order of the sweep (dir 1: forward, -1:
/// backward).
static void chamfer_sweep(sm_sdf *f, int dir)
{
    const int32_t nx = f->nodes[0], ny = f->nodes[1], nz = f->nodes[2];
    const float step[4] = {0.0f, (float)f->cell, (float)(f->cell * 1.4142135623730951), (float)(f->cell * 1.7320508075688772)};
    for (int32_t kk = 0; kk < nz; kk++)
        for (int32_t jj = 0; jj < ny; jj++)
            for (int32_t ii = 0; ii < nx; ii++) {
                const int32_t i = dir > 0 ? ii : nx - 1 - ii, j = dir > 0 ? jj : ny - 1 - jj, k = dir > 0 ? kk : nz - 1 - kk;
                float *here = &f->value[((int64_t)k * ny + j) * nx + i];
                for (int dk = -1; dk <= 0; dk++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int di = -1; di <= 1; di++) {
                            // the neighbours already swept: a lower k, or the same k and a lower j, or
                            // the same j and a lower i (mirrored for a backward sweep)
                            if (dk == 0 && (dj > 0 || (dj == 0 && di >= 0))) continue;
                            const int32_t ni = i + dir * di, nj = j + dir * dj, nk = k + dir * dk;
                            if (ni < 0 || nj < 0 || nk < 0 || ni >= nx || nj >= ny || nk >= nz) continue;
                            const float d = f->value[((int64_t)nk * ny + nj) * nx + ni] + step[abs(di) + abs(dj) + abs(dk)];
                            if (d < *here) *here = d;
                        }
            }
}

/// The field's margin beyond the mesh on each side, and its nodes along an axis of extent e.
static double margin_of(double cell, double thickness) { return BAND * cell + 0.5 * thickness; }
static double axis_nodes(double e, double cell, double thickness)
{
    return fmax(ceil((e + 2.0 * margin_of(cell, thickness)) / cell) + 1.0, 2.0);
}

double sm_sdf_nodes(sm_vec3 extent, double cell, double thickness)
{
    return axis_nodes(extent.x, cell, thickness) * axis_nodes(extent.y, cell, thickness) * axis_nodes(extent.z, cell, thickness);
}

/// The field's grid over a mesh with corners lo and hi (nodes, origin, cell), without values.
static sm_sdf grid_of(sm_vec3 lo, sm_vec3 hi, double cell, double thickness)
{
    sm_sdf f = {.cell = cell};
    const double margin = margin_of(cell, thickness);
    for (int a = 0; a < 3; a++) f.nodes[a] = (int32_t)axis_nodes(v3_get(hi, a) - v3_get(lo, a), cell, thickness);
    f.origin = v3_sub(lo, v3(margin, margin, margin));
    return f;
}

double sm_sdf_work(const sm_vec3 *v, int32_t vertex_count, const int32_t *tri, int32_t triangle_count, double cell,
                   double thickness)
{
    if (vertex_count < 1 || !(cell > 0.0) || !isfinite(cell)) return 0.0;
    sm_vec3 lo = v[0], hi = v[0];
    for (int32_t i = 0; i < vertex_count; i++) {
        lo = v3(fmin(lo.x, v[i].x), fmin(lo.y, v[i].y), fmin(lo.z, v[i].z));
        hi = v3(fmax(hi.x, v[i].x), fmax(hi.y, v[i].y), fmax(hi.z, v[i].z));
    }
    if (!(sm_sdf_nodes(v3_sub(hi, lo), cell, thickness) <= (double)INT32_MAX)) return INFINITY;
    const sm_sdf f = grid_of(lo, hi, cell, thickness);
    const double ey = SIGN_OFFSET_Y * cell, ez = SIGN_OFFSET_Z * cell;
    double work = thickness > 0.0 ? 0.0 : (double)f.nodes[1] * f.nodes[2]; // each row signed once
    for (int32_t t = 0; t < triangle_count; t++) {
        const sm_vec3 a = v[tri[3 * t]], b = v[tri[3 * t + 1]], c = v[tri[3 * t + 2]];
        int32_t from[3], to[3];
        band_range(&f, a, b, c, from, to);
        work += (double)(to[0] - from[0] + 1) * (to[1] - from[1] + 1) * (to[2] - from[2] + 1);
        if (thickness > 0.0) continue;
        int32_t j0, j1, k0, k1;
        sign_rows(&f, ey, ez, a, b, c, &j0, &j1, &k0, &k1);
        work += (double)(j1 - j0 + 1) * (k1 - k0 + 1);
    }
    return work;
}

sm_result sm_sdf_build(const sm_vec3 *v, int32_t vertex_count, const int32_t *tri, int32_t triangle_count, double cell,
                       double thickness, int64_t max_nodes, const char *what, sm_sdf *out)
{
    memset(out, 0, sizeof *out);
    if (vertex_count < 3 || triangle_count < 1)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: the mesh has no triangles (%d vertices, %d triangles)", what,
                       vertex_count, triangle_count);
    if (!(cell > 0.0) || !isfinite(cell))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: the field's cell must be finite and > 0 (got %g)", what, cell);
    sm_vec3 lo = v[0], hi = v[0];
    for (int32_t i = 0; i < vertex_count; i++) {
        if (!v3_is_finite(v[i])) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: vertex %d is not finite", what, i);
        lo = v3(fmin(lo.x, v[i].x), fmin(lo.y, v[i].y), fmin(lo.z, v[i].z));
        hi = v3(fmax(hi.x, v[i].x), fmax(hi.y, v[i].y), fmax(hi.z, v[i].z));
    }
    for (int32_t t = 0; t < 3 * triangle_count; t++)
        if (tri[t] < 0 || tri[t] >= vertex_count)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: triangle %d names vertex %d of %d", what, t / 3, tri[t], vertex_count);
    const double nodes = sm_sdf_nodes(v3_sub(hi, lo), cell, thickness);
    if (!(nodes <= (double)max_nodes))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "%s: a field of cell %g m over the mesh's %g x %g x %g m would have %.3g nodes, more than %lld: a larger cell",
                       what, cell, hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, nodes, (long long)max_nodes);
    // the work: every triangle's nodes, before any is visited
    const double work = sm_sdf_work(v, vertex_count, tri, triangle_count, cell, thickness);
    if (!(work <= SM_SDF_MAX_WORK)) {
        double coarser = cell;
        for (int i = 0; i < 400 && !(sm_sdf_work(v, vertex_count, tri, triangle_count, coarser, thickness) <= SM_SDF_MAX_WORK); i++)
            coarser *= 1.1;
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "%s: a field of cell %g m over the mesh's %d triangles would take %.3g node visits (each "
                       "triangle's bounding box and %d cells around it), more than %.3g (about half a minute): use a "
                       "larger cell (%g m fits) or a mesh of smaller triangles", what, cell, triangle_count, work, BAND,
                       SM_SDF_MAX_WORK, coarser);
    }
    *out = grid_of(lo, hi, cell, thickness);
    const int64_t total = sm_sdf_node_count(out);
    const int32_t nx = out->nodes[0], ny = out->nodes[1];
    out->value = malloc(sizeof *out->value * (size_t)total);
    if (!out->value) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory for a field of %lld nodes", what, (long long)total);
    for (int64_t n = 0; n < total; n++) out->value[n] = FLT_MAX;

    // the exact distance near each triangle
    for (int32_t t = 0; t < triangle_count; t++) {
        const sm_vec3 a = v[tri[3 * t]], b = v[tri[3 * t + 1]], c = v[tri[3 * t + 2]];
        int32_t from[3], to[3];
        band_range(out, a, b, c, from, to);
        for (int32_t k = from[2]; k <= to[2]; k++)
            for (int32_t j = from[1]; j <= to[1]; j++)
                for (int32_t i = from[0]; i <= to[0]; i++) {
                    const sm_vec3 p = v3_add(out->origin, v3(i * cell, j * cell, k * cell));
                    const float d = (float)v3_length(v3_sub(p, closest_on_triangle(p, a, b, c)));
                    float *here = &out->value[((int64_t)k * ny + j) * nx + i];
                    if (d < *here) *here = d;
                }
    }
    // beyond, the chamfer estimate: forward and backward, twice
    for (int round = 0; round < 2; round++) chamfer_sweep(out, 1), chamfer_sweep(out, -1);
    if (thickness > 0.0) {
        for (int64_t n = 0; n < total; n++) out->value[n] -= (float)(0.5 * thickness);
    } else if (!sign_inside(v, tri, triangle_count, out)) {
        sm_sdf_free(out);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory signing the field", what);
    }
    return SM_OK;
}

void sm_sdf_free(sm_sdf *sdf)
{
    free(sdf->value);
    sdf->value = NULL;
}
