/* The CPU reference: the step of docs/algorithm.md as plain loops in double precision, one
 * function per pass in pipeline order (each in the file of the same number). */
#ifndef SM_CPU_PASSES_H
#define SM_CPU_PASSES_H

#include "../world.h"

/// 1. Per cluster: x_cm, v_cm, A_pq and, in quadratic mode, ~A_pq from the current positions.
void sm_cpu_cluster_moments(sm_world *world);
/// 2. Per cluster: R, the proper rotation closest to A_pq; per object: the means of its clusters'
/// centres and flows.
void sm_cpu_rotation(sm_world *world);
/// 3. Per cluster: (3a) the spin limit on its flow, then the goal transform T (mode, beta,
/// volume preservation, cap).
void sm_cpu_goal_transform(sm_world *world, double h);
/// 4 (4a-4f). Per particle: blended goal, velocity update, damping and position update.
void sm_cpu_blend_integrate(sm_world *world, double h);
/// 5. The uniform grid: the colliding particles sorted by the bucket of their cell, and which
/// cells around each one hold particles it may collide with.
void sm_cpu_collision_grid(sm_world *world);
/// 6. Contact between particles: `iterations` sweeps of position corrections, the first with
/// the velocity response.
void sm_cpu_collide(sm_world *world, double h);
/// 7. Per particle: the ground plane, (7a) the colliders where they are at the end of the step
/// (world time + h), then (7b) the pusher.
void sm_cpu_ground(sm_world *world, double h);
/// 8. Per cluster: plastic state update and rest data refresh.
void sm_cpu_plasticity(sm_world *world, double h);
/// 9. Once per sm_world_step(), when there are surfaces: the clusters' centres of mass after the
/// step, the surface vertices moved by their clusters, and the vertex normals.
void sm_cpu_skin(sm_world *world);

#endif
