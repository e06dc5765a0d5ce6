/* Triangle meshes inside the library: sampling a particle lattice inside a closed mesh. The
 * public part (loading, open edges, winding numbers) is in shapematch.h, section "Meshes". */
#ifndef SM_MESH_H
#define SM_MESH_H

#include "files.h"
#include "shapematch/shapematch.h"

/// The most point-triangle tests (bounding-box lattice points x triangles) that sampling a
/// lattice inside a mesh may take: each is a solid angle, about 30 ns, so about half a minute.
#define SM_MESH_LATTICE_MAX_WORK 1073741824.0 // 2^30

/// Fails (SM_ERROR_INVALID_ARGUMENT, a clear message) where sm_mesh_sample_lattice() would fail
/// before sampling, in O(vertices): a mesh without triangles, spacing <= 0 or not finite, more
/// than max_candidates lattice points in the bounding box, none, or more than
/// SM_MESH_LATTICE_MAX_WORK point-triangle tests. (A mesh with open edges is sampled as any: the
/// winding number tolerates seams and small holes, and the work is bounded all the same.)
sm_result sm_mesh_check_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates);

/// Samples a cubic lattice inside a (closed) mesh: the points (i, j, k) * spacing (integers i, j, k;
/// so the lattice is centred on the origin of the mesh's frame) within the mesh's bounding box whose
/// generalised winding number is above 0.5. *out_points is malloc'd, as large as the points found.
/// Fails (SM_ERROR_INVALID_ARGUMENT, a clear message) as sm_mesh_check_lattice() does, before
/// testing any point; when more than max_points points are inside; or when none is.
sm_result sm_mesh_sample_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates, int32_t max_points,
                                 sm_vec3 **out_points, int32_t *out_count);

/// The mesh formats read, by the file's extension (in any case), for messages. Any other
/// extension, or none, is refused before assimp reads the file: assimp 5.2's other readers crash
/// on malformed files (found by fuzzing), and the readers of these are the only ones assimp may
/// use (mesh.c, "The formats read").
#define SM_MESH_FORMATS "OBJ (.obj), PLY (.ply), OFF (.off), STL (.stl), Collada (.dae) and glTF 2 (.gltf, .glb)"

/// sm_mesh_load_file(), adding every file assimp opened for it (the mesh file, and the files it
/// names: an OBJ's materials, a glTF's buffers) to `read` (may be NULL). Each is opened only if it
/// is a regular file (sm_open_regular()).
sm_result sm_mesh_load_file_listed(const char *path, sm_mesh *out_mesh, sm_file_list *read);

#endif
