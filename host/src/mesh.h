/* Triangle meshes inside the library: sampling a particle lattice inside a closed mesh. The
 * public part (loading, open edges, winding numbers) is in shapematch.h, section "Meshes". */
#ifndef SM_MESH_H
#define SM_MESH_H

#include "shapematch/shapematch.h"

/// Samples a cubic lattice inside a closed mesh: the points (i, j, k) * spacing (integers i, j, k;
/// so the lattice is centred on the origin of the mesh's frame) within the mesh's bounding box whose
/// generalised winding number is above 0.5. *out_points is malloc'd. Fails (SM_ERROR_INVALID_ARGUMENT,
/// a clear message) when spacing <= 0 or not finite, when the lattice would have more than
/// max_candidates points in the bounding box, or when no point is inside.
sm_result sm_mesh_sample_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates,
                                 sm_vec3 **out_points, int32_t *out_count);

#endif
