/* Procedural shapes sampled as a lattice of particles inside the shape, in the object's frame;
 * meshes give their vertices or a lattice inside them (mesh.c). */
#include "shapes.h"
#include "math3.h"
#include "memory.h"
#include "mesh.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

bool sm_shape_lattice_inside(const sm_shape *shape, sm_vec3 p, double eps)
{
    switch (shape->type) {
    case SM_SHAPE_SPHERE:
        return v3_length(p) <= shape->radius + eps;
    case SM_SHAPE_CAPSULE: {
        double half = 0.5 * shape->length;
        double x = fmax(-half, fmin(half, p.x));
        return v3_length(v3(p.x - x, p.y, p.z)) <= shape->radius + eps;
    }
    case SM_SHAPE_TORUS: {
        double ring = sqrt(p.x * p.x + p.z * p.z) - shape->major_radius;
        return sqrt(ring * ring + p.y * p.y) <= shape->minor_radius + eps;
    }
    default:
        return false;
    }
}

/// Half extents of the shape's bounding box.
static sm_vec3 half_extents(const sm_shape *shape)
{
    switch (shape->type) {
    case SM_SHAPE_SPHERE: return v3(shape->radius, shape->radius, shape->radius);
    case SM_SHAPE_CAPSULE: return v3(0.5 * shape->length + shape->radius, shape->radius, shape->radius);
    case SM_SHAPE_TORUS: {
        double outer = shape->major_radius + shape->minor_radius;
        return v3(outer, shape->minor_radius, outer);
    }
    default: return v3(0, 0, 0);
    }
}

/// The lattice of a non-box shape: point (i, j, k) for |i| <= n[0], |j| <= n[1], |k| <= n[2]
/// sits at (i, j, k) * spacing, centred on the shape's origin. Fails when it has too many points.
static sm_result lattice_extent(const sm_shape *shape, int64_t n[3])
{
    const double h = shape->spacing;
    sm_vec3 half = half_extents(shape);
    // sized in floating point first: huge ratios must not overflow the integer lattice bounds
    double nd[3] = {floor(half.x / h + 1e-9), floor(half.y / h + 1e-9), floor(half.z / h + 1e-9)};
    double candidates = (2 * nd[0] + 1) * (2 * nd[1] + 1) * (2 * nd[2] + 1);
    if (!(candidates <= 8.0 * SM_MAX_OBJECT_PARTICLES))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "spacing %g is too fine for a %s of this size (over %d particles)",
                       h, sm_shape_name(shape->type), SM_MAX_OBJECT_PARTICLES);
    for (int a = 0; a < 3; a++) n[a] = (int64_t)nd[a];
    return SM_OK;
}

/// The number of lattice points inside a non-box shape, counted without storing them.
static sm_result count_lattice(const sm_shape *shape, int64_t *out_count)
{
    int64_t n[3];
    sm_result result = lattice_extent(shape, n);
    if (result != SM_OK) return result;
    const double h = shape->spacing, eps = 1e-9 * h;
    int64_t count = 0;
    for (int64_t k = -n[2]; k <= n[2]; k++)
        for (int64_t j = -n[1]; j <= n[1]; j++)
            for (int64_t i = -n[0]; i <= n[0]; i++)
                count += sm_shape_lattice_inside(shape, v3((double)i * h, (double)j * h, (double)k * h), eps);
    if (count > SM_MAX_OBJECT_PARTICLES)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a %s with spacing %g has over %d particles", sm_shape_name(shape->type),
                       h, SM_MAX_OBJECT_PARTICLES);
    *out_count = count;
    return SM_OK;
}

static sm_result sample_lattice(const sm_shape *shape, sm_vec3 **out_points, int32_t *out_count)
{
    const double h = shape->spacing;
    int64_t n[3];
    sm_result extent = lattice_extent(shape, n);
    if (extent != SM_OK) return extent;
    size_t capacity = 1024;
    int32_t count = 0;
    sm_vec3 *points = malloc(sizeof(sm_vec3) * capacity);
    if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory sampling a %s", sm_shape_name(shape->type));
    const double eps = 1e-9 * h;
    for (int64_t k = -n[2]; k <= n[2]; k++)
        for (int64_t j = -n[1]; j <= n[1]; j++)
            for (int64_t i = -n[0]; i <= n[0]; i++) {
                sm_vec3 p = v3((double)i * h, (double)j * h, (double)k * h);
                if (!sm_shape_lattice_inside(shape, p, eps)) continue;
                if (count == SM_MAX_OBJECT_PARTICLES) {
                    free(points);
                    return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a %s with spacing %g has over %d particles",
                                   sm_shape_name(shape->type), h, SM_MAX_OBJECT_PARTICLES);
                }
                if ((size_t)count == capacity) {
                    capacity *= 2;
                    sm_vec3 *grown = realloc(points, sizeof(sm_vec3) * capacity);
                    if (!grown) {
                        free(points);
                        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory sampling a %s", sm_shape_name(shape->type));
                    }
                    points = grown;
                }
                points[count++] = p;
            }
    if (count == 0) {
        free(points);
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a %s with spacing %g holds no lattice point; use a smaller spacing",
                       sm_shape_name(shape->type), h);
    }
    *out_points = points;
    *out_count = count;
    return SM_OK;
}

/// The particles of a box of resolution n, refused beyond SM_MAX_OBJECT_PARTICLES (the product
/// taken in double, which no resolution of int32 axes can overflow or wrap).
static sm_result box_count(const int32_t *n, int64_t *out_count)
{
    if (n[0] < 1 || n[1] < 1 || n[2] < 1)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "box resolution must be >= 1 particle per axis (got %d x %d x %d)", n[0],
                       n[1], n[2]);
    const double total = (double)n[0] * (double)n[1] * (double)n[2];
    if (total > SM_MAX_OBJECT_PARTICLES)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a box of resolution %d x %d x %d has over %d particles", n[0], n[1],
                       n[2], SM_MAX_OBJECT_PARTICLES);
    *out_count = (int64_t)total;
    return SM_OK;
}

static sm_result sample_box(const sm_shape *shape, sm_vec3 **out_points, int32_t *out_count)
{
    const int32_t *n = shape->resolution;
    int64_t total = 0;
    const sm_result refused = box_count(n, &total);
    if (refused != SM_OK) return refused;
    sm_vec3 *points = malloc(sizeof(sm_vec3) * (size_t)total);
    if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory sampling a box");
    double size[3] = {shape->size.x, shape->size.y, shape->size.z};
    int32_t count = 0;
    // corners included: n particles span the edge; one particle sits at the centre
    for (int32_t k = 0; k < n[2]; k++)
        for (int32_t j = 0; j < n[1]; j++)
            for (int32_t i = 0; i < n[0]; i++) {
                int32_t idx[3] = {i, j, k};
                double c[3];
                for (int a = 0; a < 3; a++) c[a] = n[a] > 1 ? size[a] * ((double)idx[a] / (n[a] - 1) - 0.5) : 0.0;
                points[count++] = v3(c[0], c[1], c[2]);
            }
    *out_points = points;
    *out_count = count;
    return SM_OK;
}

/// The volume a closed triangle mesh encloses (the divergence theorem), m^3.
static double mesh_volume(const sm_shape *shape)
{
    double six_volume = 0.0;
    for (int32_t t = 0; t < shape->mesh_triangle_count; t++) {
        const int32_t *v = shape->mesh_triangles + 3 * t;
        six_volume += v3_dot(shape->mesh_vertices[v[0]], v3_cross(shape->mesh_vertices[v[1]], shape->mesh_vertices[v[2]]));
    }
    return fabs(six_volume) / 6.0;
}

sm_result sm_shape_count(const sm_shape *shape, int64_t *out_count)
{
    switch (shape->type) {
    case SM_SHAPE_POINTS: *out_count = shape->point_count; return SM_OK;
    case SM_SHAPE_BOX: return box_count(shape->resolution, out_count);
    case SM_SHAPE_MESH:
        if (shape->mesh_particles == SM_MESH_PARTICLES_VERTICES) {
            *out_count = shape->mesh_vertex_count;
        } else { // the lattice inside: about volume / spacing^3, plus the points on the boundary
            const sm_mesh mesh = {(sm_vec3 *)shape->mesh_vertices, shape->mesh_vertex_count,
                                  (int32_t *)shape->mesh_triangles, shape->mesh_triangle_count};
            const sm_result refused = sm_mesh_check_lattice(&mesh, shape->spacing, 8 * SM_MAX_OBJECT_PARTICLES);
            if (refused != SM_OK) return refused;
            const double estimate = ceil(mesh_volume(shape) / (shape->spacing * shape->spacing * shape->spacing));
            *out_count = estimate < 8.0 * SM_MAX_OBJECT_PARTICLES ? (int64_t)estimate + 1 : 8LL * SM_MAX_OBJECT_PARTICLES;
        }
        return SM_OK;
    default: return count_lattice(shape, out_count);
    }
}

sm_result sm_shape_sample(const sm_shape *shape, double total_mass, sm_vec3 **out_points, double **out_masses,
                          int32_t *out_count)
{
    sm_vec3 *points = NULL;
    int32_t count = 0;
    sm_result result = SM_OK;
    switch (shape->type) {
    case SM_SHAPE_POINTS:
        points = malloc(sizeof(sm_vec3) * (size_t)shape->point_count);
        if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory copying %d points", shape->point_count);
        memcpy(points, shape->points, sizeof(sm_vec3) * (size_t)shape->point_count);
        count = shape->point_count;
        break;
    case SM_SHAPE_BOX: result = sample_box(shape, &points, &count); break;
    case SM_SHAPE_MESH:
        if (shape->mesh_particles == SM_MESH_PARTICLES_VERTICES) {
            points = malloc(sizeof(sm_vec3) * (size_t)shape->mesh_vertex_count);
            if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory copying %d mesh vertices", shape->mesh_vertex_count);
            memcpy(points, shape->mesh_vertices, sizeof(sm_vec3) * (size_t)shape->mesh_vertex_count);
            count = shape->mesh_vertex_count;
        } else {
            const sm_mesh mesh = {(sm_vec3 *)shape->mesh_vertices, shape->mesh_vertex_count, (int32_t *)shape->mesh_triangles,
                                  shape->mesh_triangle_count};
            result = sm_mesh_sample_lattice(&mesh, shape->spacing, 8 * SM_MAX_OBJECT_PARTICLES, SM_MAX_OBJECT_PARTICLES,
                                            &points, &count);
        }
        break;
    default: result = sample_lattice(shape, &points, &count); break;
    }
    if (result != SM_OK) return result;

    double *masses = malloc(sizeof(double) * (size_t)count);
    if (!masses) {
        free(points);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for %d particle masses", count);
    }
    for (int32_t i = 0; i < count; i++)
        masses[i] = (shape->type == SM_SHAPE_POINTS && shape->point_masses) ? shape->point_masses[i] : total_mass / count;
    *out_points = points;
    *out_masses = masses;
    *out_count = count;
    return SM_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/// A point's x and index, sorted by x for the sweep.
typedef struct sm_keyed_point {
    double x;
    int32_t index;
} sm_keyed_point;

static int compare_keyed(const void *a, const void *b)
{
    return compare_doubles(&((const sm_keyed_point *)a)->x, &((const sm_keyed_point *)b)->x);
}

/// The median distance from a point to its nearest distinct neighbour, found by a sweep along x;
/// over every point up to 4,096 of them, over every (count / 4096)-th point (in x order) beyond,
/// so that a million scattered points take a fraction of a second rather than minutes.
static double points_spacing(const sm_vec3 *points, int32_t count)
{
    if (count < 2) return 0.0;
    sm_keyed_point *order = malloc(sizeof *order * (size_t)count);
    double *nearest = malloc(sizeof *nearest * (size_t)count);
    if (!order || !nearest) {
        free(order), free(nearest);
        return 0.0;
    }
    for (int32_t i = 0; i < count; i++) order[i] = (sm_keyed_point){points[i].x, i};
    qsort(order, (size_t)count, sizeof *order, compare_keyed);
    int32_t found = 0;
    const int32_t stride = count > 4096 ? count / 4096 : 1;
    for (int32_t a = 0; a < count; a += stride) {
        const sm_vec3 p = points[order[a].index];
        double best = INFINITY;
        for (int dir = -1; dir <= 1; dir += 2)
            for (int32_t b = a + dir; b >= 0 && b < count; b += dir) {
                const sm_vec3 d = v3_sub(points[order[b].index], p);
                if (d.x * d.x >= best * best) break;
                const double dist = v3_length(d);
                if (dist > 0.0 && dist < best) best = dist;
            }
        if (isfinite(best)) nearest[found++] = best;
    }
    qsort(nearest, (size_t)found, sizeof *nearest, compare_doubles);
    const double median = found > 0 ? nearest[found / 2] : 0.0;
    free(order), free(nearest);
    return median;
}

double sm_shape_spacing(const sm_shape *shape, const sm_vec3 *points, int32_t count)
{
    switch (shape->type) {
    case SM_SHAPE_POINTS: return points_spacing(points, count);
    case SM_SHAPE_MESH:
        if (shape->mesh_particles == SM_MESH_PARTICLES_VERTICES) return points_spacing(points, count);
        return count > 1 ? shape->spacing : 0.0;
    case SM_SHAPE_BOX: {
        const double size[3] = {shape->size.x, shape->size.y, shape->size.z};
        double spacing = INFINITY;
        for (int a = 0; a < 3; a++)
            if (shape->resolution[a] > 1 && size[a] > 0.0) spacing = fmin(spacing, size[a] / (shape->resolution[a] - 1));
        return isfinite(spacing) ? spacing : 0.0;
    }
    default: return count > 1 ? shape->spacing : 0.0;
    }
}
