/* Signed distance fields of triangle meshes on a grid (sdf.c), for mesh colliders. */
#ifndef SM_SDF_H
#define SM_SDF_H

#include "shapematch/shapematch.h"

/// A distance field: nodes[0] x nodes[1] x nodes[2] values (x fastest) at origin + cell (i, j, k).
typedef struct sm_sdf {
    float *value;     ///< m: the distance to the surface, negative inside
    int32_t nodes[3]; ///< along x, y, z, each >= 2
    sm_vec3 origin;   ///< m: where node (0, 0, 0) is
    double cell;      ///< m: the nodes' spacing
} sm_sdf;

/// The field of the mesh of `vertex_count` vertices and `triangle_count` triangles (3 indices
/// each, checked) on a grid of `cell` over its bounds and 3 cells beyond: within 3 cells of a
/// triangle the exact distance to the nearest one, beyond a chamfer estimate (a shortest path
/// over the grid's 26 directions, never shorter than the distance). `thickness` 0: the mesh is
/// closed and the inside (by the parity of a ray along x through each row of nodes) negative;
/// > 0: a shell, the distance minus half the thickness. Fails with SM_ERROR_INVALID_ARGUMENT,
/// naming `what`, for an empty mesh, a bad index, a non-finite vertex, more than `max_nodes`
/// nodes, or more than SM_SDF_MAX_WORK node visits (sm_sdf_work(), counted before any is made;
/// the message names a cell that fits).
sm_result sm_sdf_build(const sm_vec3 *vertices, int32_t vertex_count, const int32_t *triangles, int32_t triangle_count,
                       double cell, double thickness, int64_t max_nodes, const char *what, sm_sdf *out);
void sm_sdf_free(sm_sdf *sdf);
/// The most node visits sm_sdf_build() makes: about 20 ns each, so about half a minute.
#define SM_SDF_MAX_WORK 1073741824.0 // 2^30
/// The node visits sm_sdf_build() would make over a mesh (checked) with `cell` and `thickness`:
/// the nodes of each triangle's bounding box and 3 cells around it (its exact distance), plus, for
/// a closed mesh (thickness 0), each row of nodes along x and each row a triangle's bounding box
/// spans (the sign). O(triangles); infinity for a field beyond INT32_MAX nodes.
double sm_sdf_work(const sm_vec3 *vertices, int32_t vertex_count, const int32_t *triangles, int32_t triangle_count,
                   double cell, double thickness);
/// The nodes sm_sdf_build() would lay over a mesh whose bounding box has edges `extent`, with
/// `cell` and `thickness` (a double: a count beyond any integer still compares).
double sm_sdf_nodes(sm_vec3 extent, double cell, double thickness);
/// The nodes a field holds.
static inline int64_t sm_sdf_node_count(const sm_sdf *f) { return (int64_t)f->nodes[0] * f->nodes[1] * f->nodes[2]; }

#endif
