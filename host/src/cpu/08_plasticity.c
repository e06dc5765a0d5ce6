#include "../../../kernels/sm_formulas.h"
#include "../clusters.h"
#include "../math3.h"
#include "cpu_passes.h"

void sm_cpu_plasticity(sm_world *world, double h)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        const sm_object *object = &world->objects[cluster->object];
        if (!object->plasticity.enabled || object->mode == SM_MODE_RIGID) continue;

        // S = R^T A_lin - I is the deformation in the unrotated rest frame (paper section 4.5):
        // kernels/sm_formulas.h, shared with the kernel
        const sm_plasticity *p = &object->plasticity;
        if (!sm_plastic_update(&cluster->rotation.m[0][0], &cluster->linear_fit.m[0][0], h, p->yield, p->creep, p->max,
                               object->strain_limit, &cluster->plastic.m[0][0]))
            continue;
        sm_cluster_update_rest(world, cluster);
    }
}
