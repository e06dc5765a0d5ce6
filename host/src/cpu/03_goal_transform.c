#include "cpu_passes.h"
#include "../math3.h"

/// Volume treatment and deformation cap of a linear block A, given the cluster's R.
static sm_mat3 treat_linear_block(sm_mat3 a, sm_mat3 r, const sm_object *object)
{
    if (object->volume_preservation) {
        double d = m3_det(a);
        // an inverted or flattened match never drives the goal (Henriques & Wuensche 3.2)
        a = d > 1e-6 ? m3_scale(a, 1.0 / cbrt(d)) : r;
    }
    if (object->cap.enabled) {
        double soft = object->cap.soft, hard = object->cap.hard;
        double phi = m3_norm2(a);
        if (phi > soft) {
            double capped = soft + (hard - soft) * tanh((phi - soft) / (hard - soft));
            a = m3_lerp(r, a, capped / phi);
        }
    }
    return a;
}

void sm_cpu_goal_transform(sm_world *world)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        const sm_object *object = &world->objects[cluster->object];
        const sm_mat3 r = cluster->rotation;
        const double beta = object->beta;

        cluster->linear_fit = m3_mul(cluster->apq, cluster->aqq);
        double t[3][9] = {{0}};
        switch (object->mode) {
        case SM_MODE_RIGID:
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) t[i][j] = r.m[i][j];
            break;
        case SM_MODE_LINEAR: {
            sm_mat3 a = treat_linear_block(cluster->linear_fit, r, object);
            sm_mat3 blended = m3_lerp(r, a, beta);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) t[i][j] = blended.m[i][j];
            break;
        }
        case SM_MODE_QUADRATIC: {
            double fit[3][9]; // ~A = ~A_pq ~A_qq = [A Q M]
            sm_cluster_quadratic_fit(cluster, fit);
            sm_mat3 a;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) a.m[i][j] = fit[i][j];
            a = treat_linear_block(a, r, object);
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) t[i][j] = beta * a.m[i][j] + (1.0 - beta) * r.m[i][j];
                for (int j = 3; j < 9; j++) t[i][j] = beta * fit[i][j];
            }
            break;
        }
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) cluster->transform[i][j] = t[i][j];
    }
}
