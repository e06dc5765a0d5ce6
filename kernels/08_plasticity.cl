/* Pass 8, plasticity (docs/algorithm.md step 10): per cluster of a plastic object, the plastic state
 * S_p follows the strain S = R^T A_lin of this step once it exceeds the yield; then the rest
 * offsets q = S_p (x0 - x0_cm), A_qq and the quadratic weights w = ~A_qq q~ are recomputed, in
 * double where the device has it, for the next step. */
#include "sm_math.h"

/// u = D^-1 q~: the centred quadratic terms of q over the cluster's RMS radius 1 / inv, as
/// sm_cluster_update_rest scales them.
inline void sm_scaled_terms(const sm_real *q, const sm_real *mean, sm_real inv, sm_real *u)
{
    const sm_real inv2 = inv * inv;
    u[0] = q[0] * inv, u[1] = q[1] * inv, u[2] = q[2] * inv;
    u[3] = (q[0] * q[0] - mean[0]) * inv2, u[4] = (q[1] * q[1] - mean[1]) * inv2;
    u[5] = (q[2] * q[2] - mean[2]) * inv2, u[6] = (q[0] * q[1] - mean[3]) * inv2;
    u[7] = (q[1] * q[2] - mean[4]) * inv2, u[8] = (q[2] * q[0] - mean[5]) * inv2;
}

/// The roots of the rest moments scaled to determinant 1 (sm_metric_roots of the reference),
/// from the scaled moments mqq (not modified).
inline void sm_store_metric_roots(const sm_real *mqq, __global sm_k_cluster_rest *rest)
{
    sm_real a[9], values[3], vectors[9];
    for (int i = 0; i < 9; i++) a[i] = mqq[i];
    sm_sym_eigen_r(3, a, values, vectors);
    const sm_real largest = fmax(values[0], fmax(values[1], values[2]));
    bool full = true;
    for (int k = 0; k < 3; k++) full = full && values[k] > SM_PINV_THRESHOLD * largest;
    const sm_real g = full ? cbrt(sqrt(values[0] * values[1] * values[2])) : 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            sm_real root = 0, root_inv = 0;
            for (int k = 0; k < 3; k++) {
                const sm_real s = sqrt(values[k]) / g;
                root += vectors[i * 3 + k] * vectors[j * 3 + k] * s;
                root_inv += vectors[i * 3 + k] * vectors[j * 3 + k] / s;
            }
            rest->metric_root.m[i][j] = (float)(full ? root : (i == j));
            rest->metric_root_inv.m[i][j] = (float)(full ? root_inv : (i == j));
        }
}

/// The linear block's metric in quadratic mode (sm_quadratic_volume_metric of the reference),
/// from the pinv of the scaled 9x9 moments: ~A_qq = D^-1 pinv D^-1, D = diag(s x 3, s^2 x 6).
inline void sm_store_quadratic_metric(const sm_real *pinv, const sm_real inv, __global sm_k_cluster_rest *rest)
{
    sm_real gll[9], schur[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) gll[i * 3 + j] = pinv[i * 9 + j] * inv * inv;
    sm_sym_pinv_r(3, gll, schur);
    sm_store_metric_roots(schur, rest);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
            sm_real sum = 0;
            for (int k = 0; k < 3; k++) sum += schur[i * 3 + k] * pinv[k * 9 + 3 + j] * inv * inv * inv;
            rest->coupling[i][j] = (float)sum;
        }
}

/// The plastic update of every cluster; clusters that do not yield are left untouched.
__kernel void sm_plasticity(const int cluster_count, const float h, __global const sm_k_cluster *clusters,
                            __global const sm_k_object *objects, __global const sm_k_mat3 *rotation,
                            __global const sm_k_mat3 *linear_fit, __global const int *member_particle,
                            __global const float4 *member_rest, __global const float4 *position,
                            __global sm_k_mat3 *plastic, __global float4 *member_q,
                            __global const int *member_slot, __global float4 *particle_member_q,
                            __global sm_k_cluster_rest *rest, __global sm_k_weights *member_w)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    const sm_k_object object = objects[cluster.object];
    if (!(object.flags & SM_K_PLASTIC) || object.mode == SM_K_MODE_RIGID) return;

    float r[9], fit[9], strain[9];
    sm_load_mat3(&rotation[c], r);
    sm_load_mat3(&linear_fit[c], fit);
    sm_mul3_tn(r, fit, strain);
    for (int i = 0; i < 3; i++) strain[i * 4] -= 1.0f;
    if (!(sqrt(sm_norm2_3(strain)) > object.plastic_yield)) return;

    // S_p = (I + h creep (S - I)) S_p, its excess over I bounded by max, then unit determinant
    float step[9], old[9], sp[9];
    // creep h is at most 1: a step follows the deformation at most all the way
    const float rate = fmin(h * object.plastic_creep, 1.0f);
    for (int i = 0; i < 9; i++) step[i] = rate * strain[i];
    for (int i = 0; i < 3; i++) step[i * 4] += 1.0f;
    sm_load_mat3(&plastic[c], old);
    sm_mul3(step, old, sp);
    for (int i = 0; i < 3; i++) sp[i * 4] -= 1.0f;
    const float excess = sqrt(sm_norm2_3(sp));
    if (excess > object.plastic_max)
        for (int i = 0; i < 9; i++) sp[i] *= object.plastic_max / excess;
    for (int i = 0; i < 3; i++) sp[i * 4] += 1.0f;
    const float d = sm_det3(sp);
    // an inverted update would make cbrt(det) negative and flip the rest shape: keep the old state
    if (!(d > SM_K_PLASTIC_DET_MIN) || !isfinite(d)) return;
    const float s = 1.0f / cbrt(d);
    for (int i = 0; i < 9; i++) sp[i] *= s;
    // the plastic rest shape's stretches within the deformation limit, like the goals'
    sm_limit_stretch(sp, object.strain_limit);
    sm_store_mat3(&plastic[c], sp);

    // the rest data of the new S_p, as sm_cluster_update_rest computes it on the host
    const int begin = cluster.first_member, end = begin + cluster.member_count;
    sm_real sum_q2 = 0;
    for (int k = begin; k < end; k++) {
        const float4 x0 = member_rest[k];
        const sm_real q[3] = {(sm_real)sp[0] * x0.x + (sm_real)sp[1] * x0.y + (sm_real)sp[2] * x0.z,
                              (sm_real)sp[3] * x0.x + (sm_real)sp[4] * x0.y + (sm_real)sp[5] * x0.z,
                              (sm_real)sp[6] * x0.x + (sm_real)sp[7] * x0.y + (sm_real)sp[8] * x0.z};
        const float3 qf = (float3)((float)q[0], (float)q[1], (float)q[2]);
        member_q[k] = (float4)(qf, 0.0f);
        particle_member_q[member_slot[k]].xyz = qf; // (w: the cluster, kept)
        sum_q2 += (sm_real)position[member_particle[k]].w * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    }
    float largest = 0.0f;
    for (int k = begin; k < end; k++) largest = fmax(largest, length(member_q[k].xyz));
    rest[c].size = largest;
    // offsets divided by the cluster's RMS radius keep the pseudo-inverse threshold unit-free
    sm_real scale = sqrt(sum_q2 / cluster.mass);
    if (!(scale > 0)) scale = 1;
    const sm_real inv = 1 / scale;
    sm_real mqq[9] = {0}, mean[6] = {0};
    for (int k = begin; k < end; k++) {
        const sm_real m = position[member_particle[k]].w;
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) mqq[i * 3 + j] += m * (q[i] * inv) * (q[j] * inv);
        mean[0] += m * q[0] * q[0], mean[1] += m * q[1] * q[1], mean[2] += m * q[2] * q[2];
        mean[3] += m * q[0] * q[1], mean[4] += m * q[1] * q[2], mean[5] += m * q[2] * q[0];
    }
    // quadratic clusters take theirs from the Schur complement below
    if (object.mode != SM_K_MODE_QUADRATIC) sm_store_metric_roots(mqq, &rest[c]);
    sm_real pinv[81], moments[9];
    for (int i = 0; i < 9; i++) moments[i] = mqq[i];
    const int rank = sm_sym_pinv_r(3, mqq, pinv);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            rest[c].aqq.m[i][j] = (float)(pinv[i * 3 + j] * inv * inv);
            // the directions the rest shape spans: A_qq W (I when it spans all three)
            sm_real p = 0;
            for (int k = 0; k < 3; k++) p += pinv[i * 3 + k] * moments[k * 3 + j];
            rest[c].span.m[i][j] = rank == 3 ? (float)(i == j) : (float)p;
        }
    if (object.mode != SM_K_MODE_QUADRATIC) return;

    for (int j = 0; j < 6; j++) mean[j] /= cluster.mass;
    for (int j = 0; j < 6; j++) rest[c].quad_mean[j] = (float)mean[j];
    float largest_q2 = 0.0f, largest_terms2 = 0.0f, mean_f[6];
    for (int j = 0; j < 6; j++) mean_f[j] = (float)mean[j];
    for (int k = begin; k < end; k++) {
        const float4 qf = member_q[k];
        const float q[3] = {qf.x, qf.y, qf.z};
        largest_q2 = fmax(largest_q2, q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        largest_terms2 = fmax(largest_terms2, sm_quadratic_terms_norm2(q, mean_f));
    }
    rest[c].quad_reach = largest_q2 > 0.0f ? sqrt(largest_terms2 / largest_q2) : 0.0f;
    // q~ = D u~ with D = diag(s, s, s, s^2 x 6): pinv of the scaled moments, scaled back by D^-1
    sm_real m99[81] = {0};
    for (int k = begin; k < end; k++) {
        const sm_real m = position[member_particle[k]].w;
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        sm_real u[9];
        sm_scaled_terms(q, mean, inv, u);
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) m99[i * 9 + j] += m * u[i] * u[j];
    }
    sm_sym_pinv_r(9, m99, pinv);
    sm_store_quadratic_metric(pinv, inv, &rest[c]);
    // w = ~A_qq q~ = D^-1 pinv D^-1 q~ = D^-1 pinv u
    for (int k = begin; k < end; k++) {
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        sm_real u[9];
        sm_scaled_terms(q, mean, inv, u);
        for (int i = 0; i < 9; i++) {
            sm_real s = 0;
            for (int j = 0; j < 9; j++) s += pinv[i * 9 + j] * u[j];
            member_w[k].w[i] = (float)(s * (i < 3 ? inv : inv * inv));
        }
    }
}
