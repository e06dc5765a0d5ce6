/* Helpers shared by the test suites: worlds from JSON text, seeded random numbers, and the
 * measurements the paper's claims are stated in (momenta, rigid-fit error, radius). */
#ifndef SM_TEST_SUPPORT_H
#define SM_TEST_SUPPORT_H

#include "test_macros.h"

#include <shapematch/shapematch.h>
#include <stdint.h>

/// Deterministic random numbers (splitmix64).
typedef struct rng {
    uint64_t state;
} rng;
double rng_uniform(rng *r, double lo, double hi);
/// A uniformly distributed point in the ball of radius `radius`.
sm_vec3 rng_in_ball(rng *r, double radius);
/// A uniformly distributed rotation.
sm_mat3 rng_rotation(rng *r);
/// A matrix of entries uniform in [-scale, scale].
sm_mat3 rng_matrix(rng *r, double scale);
/// A random symmetric positive-definite stretch with eigenvalues uniform in [lo, hi].
sm_mat3 rng_stretch(rng *r, double lo, double hi);
/// sum m |(x - a) q|^2 over a cluster whose moments are w = sum m q q^T:
/// trace((x - a) w (x - a)^T).
double metric_distance(sm_mat3 x, sm_mat3 a, sm_mat3 w);

/// Creates the world of a scene on `backend`.
sm_result create_world(const sm_scene *scene, sm_backend backend, sm_world **out);
/// The backend of world_from_json(): the CPU reference unless the suite runs with
/// `--backend opencl` (the physics suites run once on each, `ctest -L cpu` / `-L opencl`).
extern sm_backend sm_test_backend;
/// The tolerances that differ between the backends, in one place (the CPU reference computes in
/// double, the OpenCL kernels in float):
/// - a claim exact up to a step's round-off (rigid goals, affine and quadratic fits, det = 1):
///   1e-12 in double, 2e-5 in float;
double tolerance_exact(void);
/// - the drift of a conserved quantity over a run of up to 1,000 steps, relative: 1e-10 in
///   double, 2e-3 in float.
double tolerance_drift(void);
/// - where a fixed particle stays, m: exactly (0) in double; on OpenCL a position is a pair of
///   floats, read back within 1e-12 of the double it was set from;
double tolerance_hold(void);
/// - any other claim whose tolerance depends on the precision: `cpu` in double, `opencl` in float.
double tolerance(double cpu, double opencl);
/// Builds a world from scene JSON on sm_test_backend; returns NULL (and counts a failure) if it
/// does not load.
sm_world *world_from_json(const char *json);

/// Positions, velocities, rest positions or masses of the whole world (malloc'd).
double *get_positions(const sm_world *world);
double *get_velocities(const sm_world *world);
double *get_rest_positions(const sm_world *world);
double *get_masses(const sm_world *world);

/// sum m v over an object's particles.
sm_vec3 linear_momentum(const sm_world *world, int32_t object);
/// sum m x x v over an object's particles, about the origin.
sm_vec3 angular_momentum(const sm_world *world, int32_t object);
/// sum m |v| over an object's particles: the scale momentum errors are measured against.
double momentum_scale(const sm_world *world, int32_t object);
/// Largest distance of an object's particles from its current centre of mass.
double object_radius(const sm_world *world, int32_t object, bool rest);
/// RMS distance of an object's particles from the best rigid motion of its rest shape.
double rigid_fit_rms(const sm_world *world, int32_t object);
/// Largest |v| of an object's particles.
double max_speed(const sm_world *world, int32_t object);
/// Moves each particle of an object by a random vector in a ball of radius `fraction` times
/// the largest extent of its rest bounding box.
void scramble(sm_world *world, int32_t object, double fraction, rng *r);
/// Largest extent of an object's rest bounding box.
double object_size(const sm_world *world, int32_t object);
/// FNV-1a 64 over the bytes of the positions, then of the velocities (as doubles).
uint64_t state_hash(const sm_world *world);
/// Builds a world from scene JSON on `backend`; returns NULL (and counts a failure) if it does
/// not load.
sm_world *world_from_json_on(const char *json, sm_backend backend);
/// Whether any position or velocity of the world is not finite.
bool world_has_nan(const sm_world *world);
/// Writes `text` to the file `path` (a mesh or a scene for a test to load); false when it cannot.
bool write_text_file(const char *path, const char *text);
/// Two or three bodies of random shapes (box, sphere, capsule, torus), sizes (0.3 to 1 m),
/// lattices, masses (0.1 to 10 kg) and modes placed inside each other (offsets up to half their
/// size, turned at random, moving at up to 2 m/s), as the items of a scene's "objects" array
/// into `out`; with `radius_scales`, each with a contact radius_scale from 0.5 to 1.5.
void random_bodies_inside_each_other(rng *r, bool radius_scales, char *out, size_t size);
/// The solids that tests draw objects against: 0 the ground, 1 a plane of any normal, 2 a box, 3
/// a sphere, 4 a closed mesh (`mesh`, a box's OBJ file of 10 m half extents).
extern const char *const sm_test_solid_names[5];
/// Appends to the scene JSON at json + *o the solid `kind` (sm_test_solid_names) whose surface
/// passes through `surface` with outward unit normal `normal`: boxes and meshes 20 m wide,
/// spheres of 10 m radius, deeper than any object a test draws; *o moves on past it.
void write_solid_json(char *json, size_t size, int *o, int kind, sm_vec3 surface, sm_vec3 normal, const char *mesh,
                      double restitution, double friction);
/// Appends to the object JSON at json + *o the shape of a body `size` across that tests drop on
/// or place in a solid: a sphere of a spacing from size / 5 to size / 2.5, or a box of 2 to 5
/// particles a side, each drawn from r; *o moves on past it.
void write_drawn_body_json(char *json, size_t size, int *o, rng *r, bool sphere, double body_size);

#endif
