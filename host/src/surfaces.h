/* Skinned surfaces (surfaces.c): binding an object's surface to its clusters, and vertex normals. */
#ifndef SM_SURFACES_H
#define SM_SURFACES_H

#include "shapematch/shapematch.h"

/// Binds the surface of object `object` (just added, with its clusters; `rot` and `position` place
/// it like the particles) and appends it to the world's surfaces.
sm_result sm_surface_add(sm_world *world, int32_t object, const sm_surface *surface, sm_mat3 rot, sm_vec3 position);
/// The vertex normals of the surfaces from `position` into `normal` (vertices [first, first + count)).
void sm_surface_normals(const sm_world *world, const sm_vec3 *position, sm_vec3 *normal, int32_t first, int32_t count);
void sm_surfaces_free(sm_world *world);

#endif
