#include "../clusters.h"
#include "../math3.h"
#include "cpu_passes.h"

/// Volume treatment, cap and deformation limit of a linear fit A (step 3), given the cluster.
/// `flat`: A has rank below 3 by construction (a flat or colinear cluster's A_pq A_qq), so its
/// determinant is 0, not what rounding makes of it (sm_spans_volume).
static sm_mat3 treat_linear_block(sm_mat3 a, const sm_cluster *cluster, const sm_object *object, bool flat)
{
    const sm_mat3 r = cluster->rotation;
    sm_mat3 from = a; // what the deformation limit projects: the fit, or what the scaling or the cap made of it
    if (object->volume_preservation) {
        const double d = flat ? 0.0 : m3_det(a);
        if (object->volume_by_scaling) {
            // the paper's scaling: an inverted or flattened match never drives the goal
            // (Henriques & Wuensche 3.2)
            if (!(d > SM_K_DET_MIN)) return r;
            a = from = m3_scale(a, 1.0 / cbrt(d));
        } else if (flat || !sm_volume_projection(&a, d, cluster->metric_root, cluster->metric_root_inv)) {
            // a flat cluster's fit has no volume to keep, and one of rank below 2 no nearest
            return r;
        }
    }
    if (object->cap.enabled) {
        double soft = object->cap.soft, hard = object->cap.hard;
        double phi = m3_norm2(a);
        if (phi > soft) {
            double capped = soft + (hard - soft) * tanh((phi - soft) / (hard - soft));
            a = from = m3_lerp(r, a, capped / phi);
        }
    }
    // where the fit (of determinant 1 with volume preservation) is beyond the deformation limit,
    // the nearest within it
    sm_limit_in_metric(&a.m[0][0], &from.m[0][0], &cluster->metric_root.m[0][0], &cluster->metric_root_inv.m[0][0],
                       cluster->metric_axes, object->strain_limit, object->volume_preservation);
    return a;
}

void sm_cpu_goal_transform(sm_world *world, double h)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        const sm_object *object = &world->objects[cluster->object];
        // 3a. the spin limit on the cluster's flow, relative to its object's (a cluster holding a
        // fixed particle keeps its flow of 0)
        if (!cluster->anchored) {
            const sm_vec3 relative = v3_sub(cluster->velocity, object->motion_velocity);
            double r[3] = {relative.x, relative.y, relative.z};
            if (sm_limit_spin(r, v3_length(v3_sub(cluster->center, object->motion_center)), cluster->size, h))
                cluster->velocity = v3_add(object->motion_velocity, v3(r[0], r[1], r[2]));
        }
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
            sm_mat3 a = treat_linear_block(cluster->linear_fit, cluster, object, !sm_spans_volume(&cluster->span.m[0][0]));
            sm_mat3 blended = m3_lerp(r, a, beta);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) t[i][j] = blended.m[i][j];
            break;
        }
        case SM_MODE_QUADRATIC: {
            double fit[3][9]; // ~A = ~A_pq ~A_qq = [A Q M]
            sm_cluster_quadratic_fit(cluster, fit);
            // where ~A_qq is singular, of the fits that match the members equally well the one
            // nearest [R 0]: ~A += R Z (the members' goals are unchanged; the linear block gains
            // R's columns in the directions the cluster does not span)
            if (cluster->has_null_fit)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 9; j++)
                        for (int k = 0; k < 3; k++) fit[i][j] += r.m[i][k] * cluster->null_fit[k][j];
            // the goals split into their linear fit L = A + X G and their own quadratic part X
            // (sm_quadratic_split), each treated in its own metric: L as a linear fit is, X
            // within the deformation limit (kernels/sm_formulas.h, shared with the kernels)
            sm_mat3 l;
            sm_goals_linear_fit(&fit[0][0], &cluster->quad_regression[0][0], &l.m[0][0]);
            // a flat cluster's L is completed by R (R Z): with volume preservation it takes R, as
            // in linear mode, since its determinant would come from R's column
            const sm_mat3 treated = treat_linear_block(l, cluster, object, !sm_spans_volume(&cluster->span.m[0][0]));
            sm_quadratic_transform(&fit[0][0], &l.m[0][0], &treated.m[0][0], &cluster->quad_regression[0][0],
                                   cluster->quad_metric, object->strain_limit, beta, &r.m[0][0], &t[0][0]);
            break;
        }
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) cluster->transform[i][j] = t[i][j];
    }
}
