/* Shapes sampled into particles (shapes.c). */
#ifndef SM_SHAPES_H
#define SM_SHAPES_H

#include "shapematch/shapematch.h"

/// Objects beyond this many particles are refused rather than exhausting memory.
#define SM_MAX_OBJECT_PARTICLES (1 << 26)

/// Samples a shape into points in the object's frame (malloc'd) and their masses (malloc'd).
sm_result sm_shape_sample(const sm_shape *shape, double total_mass, sm_vec3 **out_points,
                          double **out_masses, int32_t *out_count);
/// How many particles sm_shape_sample() makes of the shape, without sampling it: exact, except a
/// mesh's inner lattice, which is estimated from the volume the mesh encloses (sm_world_add_object()
/// checks the memory budget again with the count sampled); a mesh that sm_shape_sample() would
/// refuse before sampling its lattice (sm_mesh_check_lattice()) is refused here.
sm_result sm_shape_count(const sm_shape *shape, int64_t *out_count);
/// Whether lattice point p (in the object's frame) is inside a sphere, capsule or torus, up to
/// eps: the test sm_shape_sample() samples them by (false for other shapes).
bool sm_shape_lattice_inside(const sm_shape *shape, sm_vec3 p, double eps);
/// The lattice spacing of a sampled shape, m: the smallest particle distance along a box's axes,
/// `spacing` for the lattice shapes, the median nearest-neighbour distance for points; 0 for a
/// single particle.
double sm_shape_spacing(const sm_shape *shape, const sm_vec3 *points, int32_t count);

#endif
