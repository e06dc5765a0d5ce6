/* What a world needs in memory (memory.c): footprints, and the check against the budget. */
#ifndef SM_MEMORY_H
#define SM_MEMORY_H

#include "shapematch/shapematch.h"

/// The sizes that set a world's memory: a world's (sm_world_footprint()) or what an object adds.
typedef struct sm_footprint {
    int64_t objects, particles, clusters, memberships;
    int64_t colliding; ///< particles with a collision radius
    int64_t large_clusters; ///< OpenCL: clusters reduced by a work-group (sm_cl_large_threshold())
    int64_t surface_vertices, surface_bindings, surface_triangles;
    int64_t field_nodes; ///< the nodes of the mesh colliders' distance fields (a float each)
    /// host bytes beyond the others while one added object's grid clusters are built (its
    /// sampled points and its (region, particle) pairs, listed and sorted before the regions of
    /// fewer than 4 are dropped): the most of the objects added; 0 for a world
    int64_t build_bytes;
    bool quadratic; ///< any quadratic object (the quadratic buffers are made only then)
} sm_footprint;
sm_footprint sm_world_footprint(const sm_world *world);
void sm_footprint_add(sm_footprint *to, const sm_footprint *add);
/// What adding the object of a def (validated) to the world adds, from sm_shape_count() and its
/// cluster def, without sampling it: exact particles, clusters and memberships (grid clusters
/// counted as sm_clusters_from_grid() makes them, from the particles enumerated without storing
/// them), except a mesh's inner lattice, whose particles are estimated from its volume and whose
/// grid clusters from the grid and its overlap. Fails as sm_clusters_from_grid() would on a
/// grid of too many memberships or a list of points whose extent is not finite.
sm_result sm_object_footprint(const sm_world *world, const sm_object_def *def, sm_footprint *out);
/// The same for an object of `particles` particles (those sampled, where sm_shape_count() only
/// estimates them: a mesh's inner lattice), its grid clusters estimated.
sm_footprint sm_object_footprint_of(const sm_world *world, const sm_object_def *def, int64_t particles);
/// The host bytes of a world of footprint f, at the peak while its objects are added.
int64_t sm_host_bytes(const sm_footprint *f);
/// Fails with SM_ERROR_OUT_OF_MEMORY, naming the figures, when the world with `add` added would
/// not fit the memory budget (sm_world_def.memory_budget, else $SM_MEMORY_BUDGET, else the host's
/// available memory and the device's global memory) or one of its device buffers would exceed the
/// device's largest allocation. `what` names the addition in the message ("the scene").
sm_result sm_check_memory(const sm_world *world, const sm_footprint *add, const char *what);

#endif
