/* Cluster set-up: overlapping grid regions (paper section 4.4, rules in docs/algorithm.md), the
 * rest data of each cluster, and the inverse particle-to-membership map. */
#include "clusters.h"
#include "math3.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

/// Objects whose clusters would hold more memberships than this are refused.
#define SM_MAX_OBJECT_MEMBERSHIPS (1 << 26)

static int compare_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/// One (region, particle) membership while the grid clusters are built.
typedef struct region_member {
    int64_t region;
    int32_t particle;
} region_member;

static int compare_region_member(const void *a, const void *b)
{
    const region_member *x = a, *y = b;
    if (x->region != y->region) return (x->region > y->region) - (x->region < y->region);
    return (x->particle > y->particle) - (x->particle < y->particle);
}

bool sm_grid_region_holds(const sm_grid_frame *g, int a, int64_t i, double x)
{
    double lo = g->lo[a] + ((double)i - g->overlap) * g->cell[a] - g->eps;
    double hi = g->lo[a] + ((double)i + 1.0 + g->overlap) * g->cell[a] + g->eps;
    return x >= lo && x <= hi;
}

void sm_grid_region_range(const sm_grid_frame *g, int a, double x, int64_t *first, int64_t *last)
{
    int64_t lo = 0, hi = g->n[a] - 1;
    if (g->cell[a] > 0.0) {
        double t = (x - g->lo[a]) / g->cell[a];
        lo = (int64_t)fmax(0.0, floor(t - 1.0 - g->overlap) - 1.0);
        hi = (int64_t)fmin((double)(g->n[a] - 1), ceil(t + g->overlap) + 1.0);
    }
    while (lo <= hi && !sm_grid_region_holds(g, a, lo, x)) lo++;
    while (hi >= lo && !sm_grid_region_holds(g, a, hi, x)) hi--;
    *first = lo;
    *last = hi;
}

sm_result sm_clusters_from_grid(const sm_vec3 *local, int32_t count, const int32_t grid[3], double overlap,
                                int32_t **out_offsets, int32_t **out_indices, int32_t *out_cluster_count)
{
    double lo[3], hi[3];
    for (int a = 0; a < 3; a++) lo[a] = hi[a] = v3_get(local[0], a);
    for (int32_t i = 1; i < count; i++)
        for (int a = 0; a < 3; a++) {
            double x = v3_get(local[i], a);
            lo[a] = fmin(lo[a], x);
            hi[a] = fmax(hi[a], x);
        }
    sm_grid_frame g = {.overlap = overlap};
    double largest = 0.0;
    for (int a = 0; a < 3; a++) largest = fmax(largest, hi[a] - lo[a]);
    if (!isfinite(largest)) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the object's extent is not finite");
    for (int a = 0; a < 3; a++) {
        // an axis without extent has one cell: its regions would all be the same
        g.n[a] = hi[a] - lo[a] > 0.0 ? grid[a] : 1;
        g.lo[a] = lo[a];
        g.cell[a] = (hi[a] - lo[a]) / g.n[a];
    }
    g.eps = 1e-9 * largest;

    // each particle lies in a box of regions: count them, then list (region, particle) pairs
    int64_t total = 0;
    for (int32_t i = 0; i < count; i++) {
        int64_t span = 1;
        for (int a = 0; a < 3; a++) {
            int64_t first, last;
            sm_grid_region_range(&g, a, v3_get(local[i], a), &first, &last);
            span *= last >= first ? last - first + 1 : 0;
        }
        total += span;
        if (total > SM_MAX_OBJECT_MEMBERSHIPS)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "a grid of %d x %d x %d cells with overlap %g gives over %d cluster memberships; use fewer cells or less overlap",
                           grid[0], grid[1], grid[2], overlap, SM_MAX_OBJECT_MEMBERSHIPS);
    }
    region_member *pairs = malloc(sizeof(region_member) * (size_t)(total > 0 ? total : 1));
    int32_t *cluster_of = malloc(sizeof(int32_t) * (size_t)count); // a kept cluster holding i, or -1
    int64_t *kept_region = malloc(sizeof(int64_t) * (size_t)(total / 4 + 1));
    int32_t *offsets = malloc(sizeof(int32_t) * (size_t)(total / 4 + 2));
    int32_t *indices = malloc(sizeof(int32_t) * (size_t)(total + count + 1));
    int32_t *joins = malloc(sizeof(int32_t) * (size_t)count);
    if (!pairs || !cluster_of || !kept_region || !offsets || !indices || !joins) {
        free(pairs), free(cluster_of), free(kept_region), free(offsets), free(indices), free(joins);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building grid clusters for %d particles", count);
    }
    int64_t used = 0;
    for (int32_t i = 0; i < count; i++) {
        int64_t first[3], last[3];
        for (int a = 0; a < 3; a++) sm_grid_region_range(&g, a, v3_get(local[i], a), &first[a], &last[a]);
        for (int64_t iz = first[2]; iz <= last[2]; iz++)
            for (int64_t iy = first[1]; iy <= last[1]; iy++)
                for (int64_t ix = first[0]; ix <= last[0]; ix++)
                    pairs[used++] = (region_member){ix + (int64_t)g.n[0] * (iy + (int64_t)g.n[1] * iz), i};
    }
    qsort(pairs, (size_t)used, sizeof(region_member), compare_region_member);

    // regions in number order (x fastest); fewer than 4 particles cannot match a shape: dropped
    for (int32_t i = 0; i < count; i++) cluster_of[i] = -1;
    int32_t kept = 0;
    int64_t w = 0;
    offsets[0] = 0;
    for (int64_t k = 0; k < used;) {
        int64_t end = k;
        while (end < used && pairs[end].region == pairs[k].region) end++;
        if (end - k >= 4) {
            for (int64_t j = k; j < end; j++) {
                indices[w++] = pairs[j].particle;
                cluster_of[pairs[j].particle] = kept;
            }
            kept_region[kept++] = pairs[k].region;
            offsets[kept] = (int32_t)w;
        }
        k = end;
    }
    free(pairs);

    if (kept == 0) { // every region dropped: one cluster of the whole object
        for (int32_t i = 0; i < count; i++) indices[i] = i;
        offsets[1] = count;
        kept = 1;
    } else {
        // particles left in no cluster join the kept cluster whose region centre is nearest;
        // ties go to the lower number because the search keeps the first strict minimum
        bool orphans = false;
        for (int32_t i = 0; i < count; i++) {
            joins[i] = -1;
            if (cluster_of[i] >= 0) continue;
            orphans = true;
            double best = INFINITY;
            for (int32_t c = 0; c < kept; c++) {
                int64_t r = kept_region[c];
                int64_t idx[3] = {r % g.n[0], (r / g.n[0]) % g.n[1], r / ((int64_t)g.n[0] * g.n[1])};
                double d2 = 0.0;
                for (int a = 0; a < 3; a++) {
                    double d = v3_get(local[i], a) - (g.lo[a] + ((double)idx[a] + 0.5) * g.cell[a]);
                    d2 += d * d;
                }
                if (d2 < best) best = d2, joins[i] = c;
            }
        }
        if (orphans) {
            // shift each cluster's list to make room for its orphans, from the last cluster down,
            // then append them and sort the list
            int32_t *extra = calloc((size_t)kept + 1, sizeof(int32_t));
            if (!extra) {
                free(cluster_of), free(kept_region), free(offsets), free(indices), free(joins);
                return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building grid clusters for %d particles", count);
            }
            for (int32_t i = 0; i < count; i++)
                if (joins[i] >= 0) extra[joins[i] + 1]++;
            for (int32_t c = 0; c < kept; c++) extra[c + 1] += extra[c]; // orphans before cluster c + 1
            for (int32_t c = kept - 1; c >= 0; c--)
                memmove(indices + offsets[c] + extra[c], indices + offsets[c],
                        sizeof(int32_t) * (size_t)(offsets[c + 1] - offsets[c]));
            // (calloc: under -fsanitize=undefined GCC lets kept++ wrap, and its object-size check
            // rejects malloc(sizeof(int32_t) * (size_t)kept))
            int32_t *fill = calloc((size_t)kept, sizeof(int32_t));
            if (!fill) {
                free(extra), free(cluster_of), free(kept_region), free(offsets), free(indices), free(joins);
                return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building grid clusters for %d particles", count);
            }
            for (int32_t c = 0; c < kept; c++) fill[c] = offsets[c + 1] + extra[c];
            for (int32_t i = 0; i < count; i++)
                if (joins[i] >= 0) indices[fill[joins[i]]++] = i;
            for (int32_t c = 0; c <= kept; c++) offsets[c] += extra[c];
            for (int32_t c = 0; c < kept; c++)
                qsort(indices + offsets[c], (size_t)(offsets[c + 1] - offsets[c]), sizeof(int32_t), compare_int32);
            free(fill);
            free(extra);
        }
    }
    free(cluster_of);
    free(kept_region);
    free(joins);
    *out_offsets = offsets;
    *out_indices = indices;
    *out_cluster_count = kept;
    return SM_OK;
}

int32_t *sm_cluster_holders(const int32_t *offsets, const int32_t *indices, int32_t cluster_count, int32_t particles)
{
    const int32_t memberships = offsets[cluster_count];
    int32_t *count = calloc((size_t)(particles > 0 ? particles : 1), sizeof *count);
    int32_t *holders = malloc(sizeof *holders * (size_t)(memberships > 0 ? memberships : 1));
    if (count && holders) {
        for (int32_t j = 0; j < memberships; j++) count[indices[j]]++;
        for (int32_t j = 0; j < memberships; j++) holders[j] = count[indices[j]];
    } else {
        free(holders);
        holders = NULL;
    }
    free(count);
    return holders;
}

void sm_cluster_update_rest(sm_world *world, sm_cluster *cluster)
{
    const int32_t begin = cluster->first_member, end = begin + cluster->member_count;
    const bool quadratic = world->objects[cluster->object].mode == SM_MODE_QUADRATIC;

    double sum_q2 = 0.0, largest_q2 = 0.0;
    for (int32_t k = begin; k < end; k++) {
        sm_vec3 q = m3_apply(cluster->plastic, world->member_rest[k]);
        world->member_q[k] = q;
        sum_q2 += world->member_mass[k] * v3_dot(q, q);
        largest_q2 = fmax(largest_q2, v3_dot(q, q));
    }
    cluster->size = sqrt(largest_q2);
    // offsets divided by the cluster's RMS radius keep the moment matrices near unit scale,
    // so the pseudo-inverse threshold does not depend on the unit of length
    double scale = sqrt(sum_q2 / cluster->mass);
    if (!(scale > 0.0)) scale = 1.0;
    const double inv = 1.0 / scale;

    double mqq[9] = {0};
    double mean[6] = {0};
    for (int32_t k = begin; k < end; k++) {
        double m = world->member_mass[k];
        sm_vec3 q = world->member_q[k];
        sm_vec3 u = v3_scale(q, inv);
        double uu[3] = {u.x, u.y, u.z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) mqq[i * 3 + j] += m * uu[i] * uu[j];
        mean[0] += m * q.x * q.x, mean[1] += m * q.y * q.y, mean[2] += m * q.z * q.z;
        mean[3] += m * q.x * q.y, mean[4] += m * q.y * q.z, mean[5] += m * q.z * q.x;
    }
    // the rest data from the moments: kernels/sm_formulas.h, shared with the kernels' refresh
    const int rank = sm_linear_rest(mqq, inv, &cluster->aqq, &cluster->span);
    sm_metric_roots(mqq, &cluster->metric_root, &cluster->metric_root_inv, cluster->metric_axes);
    cluster->linear_modes = rank;

    memset(cluster->quad_regression, 0, sizeof cluster->quad_regression);
    memset(cluster->quad_metric, 0, sizeof cluster->quad_metric);
    memset(cluster->null_fit, 0, sizeof cluster->null_fit);
    cluster->has_null_fit = false;
    if (!quadratic) {
        memset(cluster->quad_mean, 0, sizeof cluster->quad_mean);
        cluster->modes = rank;
        return;
    }
    for (int j = 0; j < 6; j++) cluster->quad_mean[j] = mean[j] / cluster->mass;

    // q~ = D u~ with D = diag(s, s, s, s^2 x 6): pinv of the scaled moments, scaled back by D^-1
    double d_inv[9];
    for (int j = 0; j < 9; j++) d_inv[j] = j < 3 ? inv : inv * inv;
    double m99[81] = {0};
    for (int32_t k = begin; k < end; k++) {
        double m = world->member_mass[k];
        double u[9];
        sm_scaled_quadratic_terms(world->member_q[k], cluster->quad_mean, inv, u);
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) m99[i * 9 + j] += m * u[i] * u[j];
    }
    // (before the pseudo-inverse overwrites the moments)
    sm_quadratic_split(m99, inv, cluster->quad_regression, cluster->quad_metric);
    double p99[81], n99[81];
    cluster->modes = sm_sym_pinv_and_null(9, m99, p99, n99);
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) cluster->aqq9[i][j] = d_inv[i] * p99[i * 9 + j] * d_inv[j];
    cluster->has_null_fit = sm_quadratic_null_fit(n99, inv, cluster->null_fit);
}

void sm_cluster_quadratic_fit(const sm_cluster *cluster, double out[3][9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 9; j++) {
            double sum = 0.0;
            for (int k = 0; k < 9; k++) sum += cluster->apq9[i][k] * cluster->aqq9[k][j];
            out[i][j] = sum;
        }
}

void sm_cluster_quadratic_weights(const sm_world *world, const sm_cluster *cluster, int32_t k, double out[9])
{
    double qt[9];
    sm_quadratic_terms(world->member_q[k], cluster->quad_mean, qt);
    for (int i = 0; i < 9; i++) {
        double sum = 0.0;
        for (int j = 0; j < 9; j++) sum += cluster->aqq9[i][j] * qt[j];
        out[i] = sum;
    }
}

sm_result sm_world_update_map(sm_world *world)
{
    if (!world->map_dirty) return SM_OK;
    int32_t *offsets = realloc(world->particle_member_offsets, sizeof(int32_t) * (size_t)(world->particle_count + 1));
    if (!offsets) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building the particle-to-cluster map");
    world->particle_member_offsets = offsets;
    int32_t *members = realloc(world->particle_members, sizeof(int32_t) * (size_t)(world->membership_count + 1));
    if (!members) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building the particle-to-cluster map");
    world->particle_members = members;

    memset(offsets, 0, sizeof(int32_t) * (size_t)(world->particle_count + 1));
    for (int32_t k = 0; k < world->membership_count; k++) offsets[world->member_particle[k] + 1]++;
    for (int32_t i = 0; i < world->particle_count; i++) offsets[i + 1] += offsets[i];
    // fill in membership order, which is cluster order: a fixed gather order for the blend
    int32_t *cursor = malloc(sizeof(int32_t) * (size_t)(world->particle_count + 1));
    if (!cursor) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building the particle-to-cluster map");
    memcpy(cursor, offsets, sizeof(int32_t) * (size_t)(world->particle_count + 1));
    for (int32_t k = 0; k < world->membership_count; k++) members[cursor[world->member_particle[k]]++] = k;
    free(cursor);
    world->map_dirty = false;
    return SM_OK;
}
