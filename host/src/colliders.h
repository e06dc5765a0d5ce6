/* Static and kinematic solids (colliders.c): where a collider is, and pushing a point out of it. */
#ifndef SM_COLLIDERS_H
#define SM_COLLIDERS_H

#include "sdf.h"
#include "shapematch/shapematch.h"

/// A collider as the world keeps it: its def (the keyframes copied), its normal and axes, and a
/// mesh collider's triangles and field.
typedef struct sm_collider {
    sm_collider_def def; ///< motion.times and motion.offsets point at the copies below; mesh: NULL
    double *times;
    sm_vec3 *offsets;
    sm_vec3 normal;      ///< plane: the unit normal
    sm_mat3 axes;        ///< box, mesh: rotation (columns: local axes); plane: column 1 is the normal
    // mesh: its vertices as placed (scaled, centred, turned; relative to the centre) and triangles,
    // and its field in the collider's unturned frame (a point d from the centre: axes^T d)
    sm_vec3 *vertices;
    int32_t vertex_count, triangle_count;
    int32_t *triangles;
    bool closed;
    sm_sdf sdf;
} sm_collider;

/// Where collider `c` is at time t: its centre and velocity.
void sm_collider_state(const sm_collider *c, double t, sm_vec3 *center, sm_vec3 *velocity);
/// Whether point d (relative to the collider's centre) is inside collider `c`; if so, *push
/// receives the shortest displacement that puts it on the surface and *normal the outward unit
/// normal there.
bool sm_collider_push_out(const sm_collider *c, sm_vec3 d, sm_vec3 *push, sm_vec3 *normal);
void sm_colliders_free(sm_world *world);

#endif
