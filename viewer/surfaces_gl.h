/* The skinned surfaces' GL buffers (docs/viewer.md, "Skinned surfaces and colliders"): positions and normals of every
 * surface vertex of the world (float4 each, the layout of sm_world_get_float4()), a static colour
 * per vertex (its object's palette colour) and one element buffer of all objects' triangles in
 * world vertex indices. They reach GL each frame by the particles' path: shared with OpenCL and
 * copied on the device by the same sm_world_copy_to_gl(), or read into the mapped buffers. */
#ifndef SM_VIEW_SURFACES_GL_H
#define SM_VIEW_SURFACES_GL_H

#include <glad/gl.h>
#include <stddef.h>
#include <shapematch/shapematch.h>

typedef struct view_surfaces {
    GLuint position, normal, colour; ///< float4 per surface vertex each
    GLuint triangles;                ///< GL_UNSIGNED_INT, 3 world vertex indices per triangle
    int32_t vertex_count, triangle_count;
    bool interop;                    ///< positions and normals are shared with OpenCL
    /// Particle ranges [first, first + count) (pairs) of the objects without a surface (or with
    /// one of no triangles), adjacent ones merged: the particles drawn when only surfaces are.
    int32_t *bare_runs;
    int32_t bare_run_count;
    char note[256]; ///< why sharing was asked for but the surfaces copy through the host ("" when not)
} view_surfaces;

/// (Re)builds the buffers for the world's surfaces (after the world changes: a new world, an
/// object added) and shares them with it when `interop`; when the world refuses to share the
/// surface fields, they copy through the host instead and `note` says why.
bool surfaces_build(view_surfaces *s, sm_world *world, bool interop, char *error, size_t error_size);

/// Brings the surfaces of the last step into the GL buffers. Shared, there is nothing to do:
/// call it after particles_update(), whose sm_world_copy_to_gl() copies every shared field.
bool surfaces_update(view_surfaces *s, sm_world *world, char *error, size_t error_size);

void surfaces_free(view_surfaces *s);

#endif
