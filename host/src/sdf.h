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
/// naming `what`, for an empty mesh, a bad index, a non-finite vertex or more than `max_nodes`
/// nodes.
sm_result sm_sdf_build(const sm_vec3 *vertices, int32_t vertex_count, const int32_t *triangles, int32_t triangle_count,
                       double cell, double thickness, int64_t max_nodes, const char *what, sm_sdf *out);
void sm_sdf_free(sm_sdf *sdf);
/// The nodes sm_sdf_build() would lay over a mesh whose bounding box has edges `extent`, with
/// `cell` and `thickness` (a double: a count beyond any integer still compares).
double sm_sdf_nodes(sm_vec3 extent, double cell, double thickness);
/// The nodes a field holds.
static inline int64_t sm_sdf_node_count(const sm_sdf *f) { return (int64_t)f->nodes[0] * f->nodes[1] * f->nodes[2]; }

#endif
