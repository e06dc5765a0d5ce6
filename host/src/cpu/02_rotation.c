#include "cpu_passes.h"
#include "../math3.h"
#include "../../../kernels/sm_shared.h"

/// R: the proper rotation closest to A_pq, except for an inverted cluster (sm_match_inverted:
/// det(A_pq A_qq) below -SM_INVERTED_VOLUME, a flat or colinear cluster's completed by its last
/// rotation), which keeps the rotation it had. The closest rotation to an inverted match flips
/// its weakest axis, and when the match is nearly a point reflection (a cluster turned inside
/// out) every axis ties: overlapping clusters then pick unrelated half turns and settle on a
/// mirrored object. Keeping the last rotation pulls each one back to its rest shape the right way
/// out; for a cluster squashed through along one axis it is the same answer. A flat cluster
/// turned over within its plane has a proper closest rotation, a half turn away, and would take
/// it: a cluster collapsing through a line and back took one every few steps, each a jump of
/// its goals that fed the motion.
void sm_cpu_rotation(sm_world *world)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        if (sm_match_inverted(&cluster->apq.m[0][0], &cluster->aqq.m[0][0], &cluster->span.m[0][0],
                              &cluster->rotation.m[0][0]))
            continue;
        cluster->rotation = sm_closest_rotation(cluster->apq);
    }
    // for the spin limit (step 3a): each object's clusters' mass-weighted mean centre and flow
    for (int32_t o = 0; o < world->object_count; o++) {
        sm_object *object = &world->objects[o];
        double mass = 0.0;
        sm_vec3 center = {0, 0, 0}, velocity = {0, 0, 0};
        for (int32_t c = object->first_cluster; c < object->first_cluster + object->cluster_count; c++) {
            const sm_cluster *cluster = &world->clusters[c];
            mass += cluster->mass;
            center = v3_add(center, v3_scale(cluster->center, cluster->mass));
            velocity = v3_add(velocity, v3_scale(cluster->velocity, cluster->mass));
        }
        object->motion_center = mass > 0.0 ? v3_scale(center, 1.0 / mass) : center;
        object->motion_velocity = mass > 0.0 ? v3_scale(velocity, 1.0 / mass) : velocity;
    }
}
