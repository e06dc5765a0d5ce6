/* Pass 3, goal transform (algorithm.md step 3): per cluster, T from the mode, beta, volume
 * preservation and the deformation cap, and A_lin = A_pq A_qq for the plasticity pass. */
#include "sm_math.h"

/// Volume treatment and soft cap of the linear block a (in place), given the cluster's r.
inline void sm_treat_linear_block(float *a, const float *r, const sm_k_object object)
{
    if (object.flags & SM_K_VOLUME) {
        const float d = sm_det3(a);
        // an inverted or flattened match never drives the goal (Henriques & Wuensche 3.2)
        if (d > SM_K_DET_MIN) {
            const float s = 1.0f / cbrt(d);
            for (int i = 0; i < 9; i++) a[i] *= s;
        } else {
            for (int i = 0; i < 9; i++) a[i] = r[i];
        }
    }
    if (object.flags & SM_K_CAP) {
        const float soft = object.cap_soft, hard = object.cap_hard;
        const float phi = sm_norm2_3(a);
        if (phi > soft) {
            const float gamma = (soft + (hard - soft) * tanh((phi - soft) / (hard - soft))) / phi;
            for (int i = 0; i < 9; i++) a[i] = gamma * a[i] + (1.0f - gamma) * r[i];
        }
    }
}

/// T (3x9; columns 3-8 zero outside quadratic mode) and A_lin of every cluster.
__kernel void sm_goal_transform(const int cluster_count, __global const sm_k_cluster *clusters,
                                __global const sm_k_object *objects, __global const sm_k_cluster_rest *rest,
                                __global const sm_k_mat3 *apq, __global const sm_k_mat39 *fit9,
                                __global const sm_k_mat3 *rotation,
                                __global sm_k_mat3 *linear_fit, __global sm_k_mat39 *transform)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_object object = objects[clusters[c].object];
    const float beta = object.beta;
    float r[9], a_pq[9], a_qq[9], fit[9];
    sm_load_mat3(&rotation[c], r);
    sm_load_mat3(&apq[c], a_pq);
    sm_load_mat3(&rest[c].aqq, a_qq);
    sm_mul3(a_pq, a_qq, fit);
    sm_store_mat3(&linear_fit[c], fit);

    float t[27] = {0};
    if (object.mode == SM_K_MODE_RIGID) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) t[i * 9 + j] = r[i * 3 + j];
    } else if (object.mode == SM_K_MODE_LINEAR) {
        sm_treat_linear_block(fit, r, object);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) t[i * 9 + j] = beta * fit[i * 3 + j] + (1.0f - beta) * r[i * 3 + j];
    } else {
        // ~A = ~A_pq ~A_qq = [A Q M], summed by the moments pass
        float full[27];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) full[i * 9 + j] = fit9[c].m[i][j];
        float a[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) a[i * 3 + j] = full[i * 9 + j];
        sm_treat_linear_block(a, r, object);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) t[i * 9 + j] = beta * a[i * 3 + j] + (1.0f - beta) * r[i * 3 + j];
            for (int j = 3; j < 9; j++) t[i * 9 + j] = beta * full[i * 9 + j];
        }
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 9; j++) transform[c].m[i][j] = t[i * 9 + j];
}
