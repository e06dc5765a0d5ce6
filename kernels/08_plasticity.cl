/* Pass 8, plasticity (docs/algorithm.md step 8): per cluster of a plastic object, the plastic state
 * S_p follows the strain S = R^T A_lin of this step once it exceeds the yield; then the rest
 * offsets q = S_p (x0 - x0_cm), A_qq, the quadratic weights w = ~A_qq q~ and Z are recomputed, in
 * double where the device has it, for the next step. */
#include "sm_math.h"

/// The pseudo-inverse of a cluster's 3x3 moments, flat below SM_FLAT_THRESHOLD as on the host.
SM_DEFINE_SYM_PINV(sm_sym_pinv_flat_r, sm_real, sm_sym_eigen_r, SM_FLAT_THRESHOLD)

/// The rest-data formulas (kernels/sm_formulas.h) in sm_real: sm_rest_scaled_terms,
/// sm_rest_metric_roots, sm_rest_linear_rest, sm_rest_quadratic_split and sm_rest_null_fit.
SM_DEFINE_REST_FORMULAS(sm_rest, sm_real, sm_sym_eigen_r, sm_sym_pinv_r, SM_PINV_THRESHOLD, sm_sym_pinv_flat_r)

/// Stores a 3x3 of sm_real (row-major) as a float matrix.
inline void sm_store_real_mat3(__global sm_k_mat3 *s, const sm_real *a)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) s->m[i][j] = (float)a[i * 3 + j];
        s->m[i][3] = 0.0f;
    }
}

/// The plastic update of every cluster; clusters that do not yield are left untouched.
__kernel void sm_plasticity(const int cluster_count, const float h, __global const sm_k_cluster *clusters,
                            __global const sm_k_object *objects, __global const sm_k_mat3 *rotation,
                            __global const sm_k_mat3 *linear_fit,
                            __global const float4 *member_rest, // w: the membership's mass
                            __global sm_k_mat3 *plastic, __global float4 *member_q,
                            __global const int *member_slot, __global float4 *particle_member_q,
                            __global sm_k_cluster_rest *rest, __global sm_k_weights *member_w,
                            __global sm_k_mat39 *null_fit, __global sm_k_bias *goal_bias)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const sm_k_cluster cluster = clusters[c];
    const sm_k_object object = objects[cluster.object];
    if (!(object.flags & SM_K_PLASTIC) || object.mode == SM_K_MODE_RIGID) return;

    float r[9], fit[9], sp[9];
    sm_load_mat3(&rotation[c], r);
    sm_load_mat3(&linear_fit[c], fit);
    sm_load_mat3(&plastic[c], sp);
    if (!sm_plastic_update(r, fit, h, object.plastic_yield, object.plastic_creep, object.plastic_max, object.strain_limit, sp))
        return;
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
        member_q[k] = (float4)(qf, x0.w); // (w: the membership's mass)
        particle_member_q[member_slot[k]].xyz = qf; // (w: the cluster, kept)
        sum_q2 += (sm_real)member_rest[k].w * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
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
        const sm_real m = member_rest[k].w;
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) mqq[i * 3 + j] += m * (q[i] * inv) * (q[j] * inv);
        mean[0] += m * q[0] * q[0], mean[1] += m * q[1] * q[1], mean[2] += m * q[2] * q[2];
        mean[3] += m * q[0] * q[1], mean[4] += m * q[1] * q[2], mean[5] += m * q[2] * q[0];
    }
    // the mean of the float rest offsets (sm_k_bias), as the host forms it; in quadratic mode
    // with the quadratic terms added below
    sm_real bias[9] = {0}, mass = 0;
    for (int k = begin; k < end; k++) {
        const sm_real m = member_rest[k].w;
        mass += m;
        bias[0] += m * member_q[k].x, bias[1] += m * member_q[k].y, bias[2] += m * member_q[k].z;
    }
    sm_real aqq[9], span[9], root[9], root_inv[9], axes[3];
    sm_rest_linear_rest(mqq, inv, aqq, span);
    sm_store_real_mat3(&rest[c].aqq, aqq);
    sm_store_real_mat3(&rest[c].span, span);
    sm_rest_metric_roots(mqq, root, root_inv, axes);
    sm_store_real_mat3(&rest[c].metric_root, root);
    sm_store_real_mat3(&rest[c].metric_root_inv, root_inv);
    for (int k = 0; k < 3; k++) rest[c].metric_axes[k] = (float)axes[k];
    if (object.mode != SM_K_MODE_QUADRATIC) {
        for (int j = 0; j < 12; j++) goal_bias[c].b[j] = j < 3 && mass > 0 ? (float)(bias[j] / mass) : 0.0f;
        return;
    }
    for (int j = 0; j < 6; j++) mean[j] /= cluster.mass;
    for (int j = 0; j < 6; j++) rest[c].quad_mean[j] = (float)mean[j];
    float mean_f[6];
    for (int j = 0; j < 6; j++) mean_f[j] = (float)mean[j];
    for (int k = begin; k < end; k++) {
        float qt[6];
        sm_quadratic_terms_f(member_q[k].xyz, mean_f, qt);
        for (int j = 0; j < 6; j++) bias[3 + j] += (sm_real)member_rest[k].w * qt[j];
    }
    for (int j = 0; j < 12; j++) goal_bias[c].b[j] = j < 9 && mass > 0 ? (float)(bias[j] / mass) : 0.0f;
    // q~ = D u~ with D = diag(s, s, s, s^2 x 6): pinv of the scaled moments, scaled back by D^-1
    sm_real m99[81] = {0};
    for (int k = begin; k < end; k++) {
        const sm_real m = member_rest[k].w;
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        sm_real u[9];
        sm_rest_scaled_terms(q, mean, inv, u);
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) m99[i * 9 + j] += m * u[i] * u[j];
    }
    sm_real pinv[81], nullspace[81], regression[18], metric[21], z[27];
    // (before the pseudo-inverse overwrites the moments)
    sm_rest_quadratic_split(m99, inv, regression, metric);
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 3; k++) rest[c].quad_regression[j][k] = (float)regression[j * 3 + k];
    for (int n = 0; n < 21; n++) rest[c].quad_metric[n] = (float)metric[n];
    sm_sym_pinv_r_and_null(9, m99, pinv, nullspace);
    sm_rest_null_fit(nullspace, inv, z);
    for (int j = 0; j < 9; j++) vstore4((float4)((float)z[j], (float)z[9 + j], (float)z[18 + j], 0.0f), 0, null_fit[c].c[j]);
    // w = ~A_qq q~ = D^-1 pinv D^-1 q~ = D^-1 pinv u
    for (int k = begin; k < end; k++) {
        const float4 qf = member_q[k];
        const sm_real q[3] = {qf.x, qf.y, qf.z};
        sm_real u[9];
        sm_rest_scaled_terms(q, mean, inv, u);
        for (int i = 0; i < 9; i++) {
            sm_real s = 0;
            for (int j = 0; j < 9; j++) s += pinv[i * 9 + j] * u[j];
            member_w[k].w[i] = (float)(s * (i < 3 ? inv : inv * inv));
        }
    }
}
