#include "../clusters.h"
#include "../math3.h"
#include "cpu_passes.h"

/// Volume treatment and deformation cap of a linear block A, given the cluster. `projected`
/// gets the change the volume projection made (zero otherwise). `flat`: A has rank below 3 by
/// construction (a flat or colinear cluster's A_pq A_qq), so its determinant is 0, not what
/// rounding makes of it (sm_spans_volume).
static sm_mat3 treat_linear_block(sm_mat3 a, const sm_cluster *cluster, const sm_object *object, bool flat,
                                  sm_mat3 *projected)
{
    const sm_mat3 r = cluster->rotation;
    *projected = m3_zero();
    if (object->volume_preservation) {
        double d = flat ? 0.0 : m3_det(a);
        // an inverted or flattened match never drives the goal (Henriques & Wuensche 3.2)
        if (!(d > SM_K_DET_MIN)) {
            a = r;
        } else if (object->volume_by_scaling) {
            a = m3_scale(a, 1.0 / cbrt(d));
        } else {
            const sm_mat3 before = a;
            a = sm_volume_projection(a, d, cluster->metric_root, cluster->metric_root_inv);
            *projected = m3_sub(a, before);
        }
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

/// The deformation limit (step 3): T's linear block within the stretches [1/s, s], its
/// quadratic block within s - 1 of the cluster's size.
static void limit_deformation(double t[3][9], const sm_cluster *cluster, const sm_object *object)
{
    double linear[9], quadratic[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) linear[i * 3 + j] = t[i][j];
    if (sm_limit_stretch(linear, object->strain_limit))
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) t[i][j] = linear[i * 3 + j];
    if (object->mode != SM_MODE_QUADRATIC) return;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) quadratic[i * 6 + j] = t[i][3 + j];
    if (sm_limit_quadratic(quadratic, cluster->quad_reach, object->strain_limit))
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++) t[i][3 + j] = quadratic[i * 6 + j];
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
            sm_mat3 projected;
            sm_mat3 a = treat_linear_block(cluster->linear_fit, cluster, object, !sm_spans_volume(&cluster->span.m[0][0]),
                                           &projected);
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
            sm_mat3 a;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) a.m[i][j] = fit[i][j];
            sm_mat3 projected;
            a = treat_linear_block(a, cluster, object, false, &projected); // (completed by R Z where flat)
            // the quadratic block refitted to the projected linear one: [Q M] += (A' - A) C
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 6; j++)
                    for (int k = 0; k < 3; k++) fit[i][3 + j] += projected.m[i][k] * cluster->coupling[k][j];
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) t[i][j] = beta * a.m[i][j] + (1.0 - beta) * r.m[i][j];
                for (int j = 3; j < 9; j++) t[i][j] = beta * fit[i][j];
            }
            break;
        }
        }
        if (object->mode != SM_MODE_RIGID) limit_deformation(t, cluster, object);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) cluster->transform[i][j] = t[i][j];
    }
}
