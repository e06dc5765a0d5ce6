/* The particles' GL buffers and how the simulation's state reaches them each frame:
 *   interop:  the world's OpenCL context is shared with GL (cl_khr_gl_sharing); positions and
 *             goals are copied device to device into the GL buffers, no host copy;
 *   fallback: the GL buffer is mapped and the device's buffer is read straight into it (one
 *             copy through host memory), which is what PoCL and llvmpipe allow.
 * Besides them, per-particle styles (object colour and radius, cluster colour) built once. */
#ifndef SM_VIEW_PARTICLES_GL_H
#define SM_VIEW_PARTICLES_GL_H

#include <glad/gl.h>
#include <stddef.h>
#include <shapematch/shapematch.h>

typedef struct view_particles {
    GLuint position, goal, style, cluster; ///< float4 per particle each
    int32_t count;                         ///< particles the buffers hold
    bool interop;                          ///< the device-to-device path
    float *radius;                         ///< display radius of each particle, m (host copy, for picking)
    int32_t *object;                       ///< object of each particle
    double max_radius;                     ///< the largest radius, m
} view_particles;

/// (Re)builds the buffers for the world's particles and shares them with it when `interop`.
bool particles_build(view_particles *p, sm_world *world, bool interop, char *error, size_t error_size);

/// Brings positions (and goals when `goals`) of the last step into the GL buffers.
bool particles_update(view_particles *p, sm_world *world, bool goals, char *error, size_t error_size);

void particles_free(view_particles *p);

/// Reads `field` of items [0, n) (particles, or surface vertices for the surface fields) straight
/// into GL buffer `buffer`, mapped: the fallback path, one copy through host memory.
bool particles_copy_through_host(GLuint buffer, sm_world *world, sm_particle_field field, int32_t n, char *error,
                                 size_t error_size);

/// Hue-spread colour number k (golden-ratio hues), as rgb in [0, 1].
void particles_palette(int32_t k, float rgb[3]);

#endif
