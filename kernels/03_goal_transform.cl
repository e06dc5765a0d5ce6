/* Pass 3, goal transform (docs/algorithm.md step 3): per cluster, T from the mode, beta, volume
 * preservation and the deformation cap, and A_lin = A_pq A_qq for the plasticity pass. */
#include "sm_math.h"

/// The a' with det a' = 1 nearest to a (in place) in the cluster's mass-weighted metric, given
/// det a (of any sign) and the metric's roots: sm_volume_projection of the reference, step for
/// step. False, a untouched, where nothing finite is nearest.
inline bool sm_volume_projection(float *a, const float det, __global const sm_k_cluster_rest *rest)
{
    float root[9], root_inv[9], b[9], btb[9], values[3], v[9];
    sm_load_mat3(&rest->metric_root, root);
    sm_load_mat3(&rest->metric_root_inv, root_inv);
    sm_mul3(a, root, b);
    if (!(det >= SM_K_VOLUME_SQUASHED)) { // squashed, flat or inverted (kernels/sm_formulas.h, shared with the reference)
        float nearest[9];
        if (!sm_volume_nearest_squashed(b, nearest)) return false;
        sm_mul3(nearest, root_inv, a);
        return true;
    }
    sm_mul3_tn(b, b, btb);
    sm_sym_eigen_f(3, btb, values, v);
    float scale[3], m[9], bm[9];
    if (!sm_volume_scales(values, det, scale)) { // (kernels/sm_formulas.h, shared with the reference)
        const float factor = 1.0f / cbrt(det);
        for (int i = 0; i < 9; i++) a[i] *= factor;
        return true;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            float e = 0.0f;
            for (int k = 0; k < 3; k++) e += v[i * 3 + k] * scale[k] * v[j * 3 + k];
            m[i * 3 + j] = e;
        }
    sm_mul3(b, m, bm);
    sm_mul3(bm, root_inv, a);
    return true;
}

/// The a' of sm_volume_projection (det a' = 1, nearest to a in the metric: |(a' - a) root|
/// least) without an eigen-decomposition, for a fit whose det a is within
/// SM_K_VOLUME_FIXED_POINT_RANGE of 1. At the minimum, (a' - a) root root^T = mu cof(a'), so
/// a' = a + nu cof(a') M with M = (root root^T)^-1: each step takes N = cof(a') M from the last
/// a' and nu from det(a + nu N) = 1, a cubic in nu (det a + c1 nu + c2 nu^2 + c3 nu^3, with
/// c1 = cof(a) : N, c2 = a : cof(N), c3 = det N), by Newton's method from the last nu. The
/// steps converge at a rate about the size of the change, so a fit a few percent off a unit
/// determinant takes three or four. True, with a' in a, when a step changed a' by at most 1e-6
/// of it within SM_K_VOLUME_FIXED_POINT_STEPS; else a is untouched.
inline bool sm_volume_fixed_point(float *a, const float det, __global const sm_k_cluster_rest *rest)
{
    if (!(fabs(det - 1.0f) < SM_K_VOLUME_FIXED_POINT_RANGE)) return false;
    float root_inv[9], m[9], cof_a[9], x[9];
    sm_load_mat3(&rest->metric_root_inv, root_inv);
    sm_mul3_tn(root_inv, root_inv, m); // (root root^T)^-1 = root^-T root^-1
    sm_cofactors3(a, cof_a);
#pragma unroll
    for (int i = 0; i < 9; i++) x[i] = a[i];
    float nu = 0.0f;
    for (int it = 0; it < SM_K_VOLUME_FIXED_POINT_STEPS; it++) {
        float c[9], n[9], cof_n[9];
        sm_cofactors3(x, c);
        sm_mul3(c, m, n);
        sm_cofactors3(n, cof_n);
        float c1 = 0.0f, c2 = 0.0f;
#pragma unroll
        for (int i = 0; i < 9; i++) c1 += cof_a[i] * n[i], c2 += a[i] * cof_n[i];
        const float c3 = n[0] * cof_n[0] + n[1] * cof_n[1] + n[2] * cof_n[2];
        for (int k = 0; k < 8; k++) {
            const float p = ((c3 * nu + c2) * nu + c1) * nu + (det - 1.0f);
            const float dp = (3.0f * c3 * nu + 2.0f * c2) * nu + c1;
            const float step = p / dp;
            nu -= step;
            if (!(fabs(step) > 1e-7f * fabs(nu))) break;
        }
        float change = 0.0f, size = 0.0f;
#pragma unroll
        for (int i = 0; i < 9; i++) {
            const float next = a[i] + nu * n[i];
            change += (next - x[i]) * (next - x[i]);
            size += next * next;
            x[i] = next;
        }
        if (!isfinite(size)) return false;
        if (change <= 1e-12f * size) {
#pragma unroll
            for (int i = 0; i < 9; i++) a[i] = x[i];
            return true;
        }
    }
    return false;
}

/// Volume treatment, cap and deformation limit of the linear fit a (in place; step 3), given the
/// cluster's r, as on the reference. flat: a has rank below 3 by construction (a flat or colinear
/// cluster's A_pq A_qq), so its determinant is 0, not the float rounding of it (sm_spans_volume).
inline void sm_treat_linear_block(float *a, const float *r, const sm_k_object object,
                                  __global const sm_k_cluster_rest *rest, const bool flat)
{
    // from: what the deformation limit projects, the fit or what the scaling or the cap made of it
    float from[9], root[9], root_inv[9], axes[3];
    for (int i = 0; i < 9; i++) from[i] = a[i];
    const bool volume = object.flags & SM_K_VOLUME;
    if (volume) {
        const float d = flat ? 0.0f : sm_det3(a);
        if (object.flags & SM_K_VOLUME_SCALE) {
            // the paper's scaling: an inverted or flattened match never drives the goal
            // (Henriques & Wuensche 3.2)
            if (!(d > SM_K_DET_MIN)) {
                for (int i = 0; i < 9; i++) a[i] = r[i];
                return;
            }
            const float s = 1.0f / cbrt(d);
            for (int i = 0; i < 9; i++) from[i] = a[i] *= s;
        } else if (flat || (!sm_volume_fixed_point(a, d, rest) && !sm_volume_projection(a, d, rest))) {
            // a flat cluster's fit has no volume to keep, and one of rank below 2 no nearest
            for (int i = 0; i < 9; i++) a[i] = r[i];
            return;
        }
    }
    if (object.flags & SM_K_CAP) {
        const float soft = object.cap_soft, hard = object.cap_hard;
        const float phi = sm_norm2_3(a);
        if (phi > soft) {
            const float gamma = (soft + (hard - soft) * tanh((phi - soft) / (hard - soft))) / phi;
            for (int i = 0; i < 9; i++) from[i] = a[i] = gamma * a[i] + (1.0f - gamma) * r[i];
        }
    }
    // where the fit (of determinant 1 with volume preservation) is beyond the deformation limit,
    // the nearest within it
    sm_load_mat3(&rest->metric_root, root);
    sm_load_mat3(&rest->metric_root_inv, root_inv);
    for (int k = 0; k < 3; k++) axes[k] = rest->metric_axes[k];
    sm_limit_in_metric(a, from, root, root_inv, axes, object.strain_limit, volume);
}

/// (3a) The spin limit on every cluster's flow (sm_limit_spin: relative to its object's mean
/// motion, added up from pass 2's chunks in cluster_motion, in the same order by every cluster;
/// the object's first cluster writes it to object_motion), then T (3x9; columns 3-8 zero outside
/// quadratic mode), with the goal offset T b~ in the fourth row of its first three columns
/// (sm_k_bias), and A_lin of every cluster. A cluster holding a fixed particle keeps its flow of 0.
__kernel void sm_goal_transform(const int cluster_count, __global const sm_k_cluster *clusters,
                                __global const sm_k_object *objects, __global const sm_k_cluster_rest *rest,
                                __global const sm_k_mat3 *apq, __global const sm_k_mat39 *fit9,
                                __global const sm_k_mat3 *rotation,
                                __global sm_k_mat3 *linear_fit, __global sm_k_mat39 *transform, const float h,
                                __global const float4 *center, __global const float4 *center_offset,
                                __global float4 *cluster_velocity, __global const float4 *cluster_motion,
                                __global float4 *object_motion, __global const sm_k_mat39 *null_fit,
                                __global const sm_k_bias *goal_bias)
{
    const int c = get_global_id(0);
    if (c >= cluster_count) return;
    const int o = clusters[c].object;
    const sm_k_object object = objects[o];
    const int first = object.first_cluster, end = first + object.cluster_count;
    const int chunk = sm_motion_chunk(object.cluster_count);
    float4 sum_x = (float4)(0.0f), sum_v = (float4)(0.0f);
    for (int k = first; k < end; k += chunk) {
        sum_x += cluster_motion[2 * k];
        sum_v += cluster_motion[2 * k + 1];
    }
    const float share = sum_x.w > 0.0f ? 1.0f / sum_x.w : 0.0f;
    const float3 mean_x = sum_x.xyz * share, flow = sum_v.xyz * share; // x_o relative to the first cluster's centre
    if (c == first) {
        object_motion[2 * o] = (float4)(mean_x, 0.0f);
        object_motion[2 * o + 1] = (float4)(flow, 0.0f);
    }
    if (!clusters[c].anchored) {
        const float3 relative = cluster_velocity[c].xyz - flow;
        const float3 from = (center[c].xyz - center[first].xyz) + center_offset[c].xyz - mean_x; // x_cm - x_o
        float r[3] = {relative.x, relative.y, relative.z};
        if (sm_limit_spin(r, length(from), rest[c].size, h))
            cluster_velocity[c] = (float4)(flow + (float3)(r[0], r[1], r[2]), 0.0f);
    }
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
        float span[9];
        sm_load_mat3(&rest[c].span, span);
        sm_treat_linear_block(fit, r, object, &rest[c], !sm_spans_volume(span));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) t[i * 9 + j] = beta * fit[i * 3 + j] + (1.0f - beta) * r[i * 3 + j];
    } else {
        // ~A = ~A_pq ~A_qq = [A Q M], summed by the moments pass
        float full[27];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 9; j++) full[i * 9 + j] = fit9[c].c[j][i];
        // where ~A_qq is singular, the fit nearest [R 0] of those that match equally well: += R Z
        for (int j = 0; j < 9; j++) {
            const float4 z = vload4(0, null_fit[c].c[j]);
            if (z.x == 0.0f && z.y == 0.0f && z.z == 0.0f) continue;
            for (int i = 0; i < 3; i++) full[i * 9 + j] += r[i * 3 + 0] * z.x + r[i * 3 + 1] * z.y + r[i * 3 + 2] * z.z;
        }
        // the goals split into their linear fit L = A + X G and their own quadratic part X
        // (sm_quadratic_split), each treated in its own metric, as on the reference
        float l[9], treated[9], g[18], metric[21];
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 3; k++) g[j * 3 + k] = rest[c].quad_regression[j][k];
        for (int n = 0; n < 21; n++) metric[n] = rest[c].quad_metric[n];
        sm_goals_linear_fit(full, g, l);
        for (int i = 0; i < 9; i++) treated[i] = l[i];
        // a flat cluster's L is completed by R (R Z): with volume preservation it takes R, as in
        // linear mode, since its determinant would come from R's column
        float span[9];
        sm_load_mat3(&rest[c].span, span);
        sm_treat_linear_block(treated, r, object, &rest[c], !sm_spans_volume(span));
        sm_quadratic_transform(full, l, treated, g, metric, object.strain_limit, beta, r, t);
    }
    // the goal offset T b~ of the float rest offsets' mean, which the blend pass takes off (sm_k_bias)
    float bias[3] = {0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 9; j++) bias[i] += t[i * 9 + j] * goal_bias[c].b[j];
    for (int j = 0; j < 9; j++) vstore4((float4)(t[j], t[9 + j], t[18 + j], j < 3 ? bias[j] : 0.0f), 0, transform[c].c[j]);
}
