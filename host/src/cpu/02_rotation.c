#include "cpu_passes.h"
#include "../math3.h"
#include "../../../kernels/sm_shared.h"

/// R: the proper rotation closest to A_pq, except for an inverted cluster (det(A_pq A_qq) below
/// -SM_INVERTED_VOLUME), which keeps the rotation it had. The closest rotation to an inverted
/// match flips its weakest axis, and when the match is nearly a point reflection (a cluster
/// turned inside out) every axis ties: overlapping clusters then pick unrelated half turns and
/// settle on a mirrored object. Keeping the last rotation pulls each one back to its rest shape
/// the right way out; for a cluster squashed through along one axis it is the same answer.
void sm_cpu_rotation(sm_world *world)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        cluster->warm_start_set = false; // (a device warm start read back earlier is stale now)
        if (m3_det(cluster->apq) * m3_det(cluster->aqq) < -SM_INVERTED_VOLUME) continue;
        cluster->rotation = sm_closest_rotation(cluster->apq);
    }
}
