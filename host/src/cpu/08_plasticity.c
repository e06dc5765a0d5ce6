#include "cpu_passes.h"
#include "../math3.h"

void sm_cpu_plasticity(sm_world *world, double h)
{
    const sm_mat3 identity = m3_identity();
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        const sm_object *object = &world->objects[cluster->object];
        if (!object->plasticity.enabled || object->mode == SM_MODE_RIGID) continue;

        // S = R^T A_lin is the deformation in the unrotated rest frame (paper section 4.5)
        sm_mat3 strain = m3_sub(m3_mul(m3_transpose(cluster->rotation), cluster->linear_fit), identity);
        if (!(sqrt(m3_norm2(strain)) > object->plasticity.yield)) continue;

        // creep h is at most 1: a step follows the deformation at most all the way
        const double rate = fmin(h * object->plasticity.creep, 1.0);
        sm_mat3 sp = m3_mul(m3_add(identity, m3_scale(strain, rate)), cluster->plastic);
        sm_mat3 excess = m3_sub(sp, identity);
        double excess_norm = sqrt(m3_norm2(excess));
        if (excess_norm > object->plasticity.max)
            sp = m3_add(identity, m3_scale(excess, object->plasticity.max / excess_norm));
        double d = m3_det(sp);
        // an inverted update would make cbrt(det) negative and flip the rest shape: keep the old state
        if (!(d > SM_K_PLASTIC_DET_MIN) || !isfinite(d)) continue;
        sp = m3_scale(sp, 1.0 / cbrt(d));
        // the plastic rest shape's stretches within the deformation limit, like the goals'
        sm_limit_stretch(&sp.m[0][0], object->strain_limit);
        cluster->plastic = sp;
        sm_cluster_update_rest(world, cluster);
    }
}
