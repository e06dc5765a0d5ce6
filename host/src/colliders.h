/* Static and kinematic solids (colliders.c): where a collider is, and pushing a point out of it. */
#ifndef SM_COLLIDERS_H
#define SM_COLLIDERS_H

#include "shapematch/shapematch.h"

/// A collider as the world keeps it: its def (the keyframes copied), its normal and axes.
typedef struct sm_collider {
    sm_collider_def def; ///< motion.times and motion.offsets point at the copies below
    double *times;
    sm_vec3 *offsets;
    sm_vec3 normal;      ///< plane: the unit normal
    sm_mat3 axes;        ///< box: rotation (columns: local axes); plane: column 1 is the normal
} sm_collider;

/// Where collider `c` is at time t: its centre and velocity.
void sm_collider_state(const sm_collider *c, double t, sm_vec3 *center, sm_vec3 *velocity);
/// Whether point d (relative to the collider's centre) is inside collider `c`; if so, *push
/// receives the shortest displacement that puts it on the surface and *normal the outward unit
/// normal there.
bool sm_collider_push_out(const sm_collider *c, sm_vec3 d, sm_vec3 *push, sm_vec3 *normal);
void sm_colliders_free(sm_world *world);

#endif
