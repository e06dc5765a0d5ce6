/* Cluster set-up: overlapping grid regions (paper section 4.4, rules in algorithm.md), the
 * rest data of each cluster, and the inverse particle-to-membership map. */
#include "math3.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

static int compare_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
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
    double largest = 0.0, cell[3];
    int32_t n[3];
    for (int a = 0; a < 3; a++) largest = fmax(largest, hi[a] - lo[a]);
    for (int a = 0; a < 3; a++) {
        // an axis without extent has one cell: its regions would all be the same
        n[a] = hi[a] - lo[a] > 0.0 ? grid[a] : 1;
        cell[a] = (hi[a] - lo[a]) / n[a];
    }
    // boundaries are inclusive up to round-off in the lattice coordinates
    const double eps = 1e-9 * largest;
    const int64_t regions = (int64_t)n[0] * n[1] * n[2];

    int32_t *region_of = malloc(sizeof(int32_t) * (size_t)count); // some kept region holding i, or -1
    int32_t *kept_region = malloc(sizeof(int32_t) * (size_t)(regions + 1));
    int32_t *offsets = malloc(sizeof(int32_t) * (size_t)(regions + 2));
    // a particle is in at most 2^3 regions when overlap < 0.5, more beyond; bound by regions
    size_t capacity = (size_t)count * 8 + 16;
    int32_t *indices = malloc(sizeof(int32_t) * capacity);
    if (!region_of || !kept_region || !offsets || !indices) goto out_of_memory;
    for (int32_t i = 0; i < count; i++) region_of[i] = -1;

    int32_t kept = 0;
    size_t used = 0;
    offsets[0] = 0;
    for (int64_t r = 0; r < regions; r++) {
        int32_t ix = (int32_t)(r % n[0]), iy = (int32_t)((r / n[0]) % n[1]), iz = (int32_t)(r / ((int64_t)n[0] * n[1]));
        int32_t idx[3] = {ix, iy, iz};
        double rlo[3], rhi[3];
        for (int a = 0; a < 3; a++) {
            rlo[a] = lo[a] + (idx[a] - overlap) * cell[a] - eps;
            rhi[a] = lo[a] + (idx[a] + 1 + overlap) * cell[a] + eps;
        }
        size_t start = used;
        for (int32_t i = 0; i < count; i++) {
            sm_vec3 p = local[i];
            if (p.x < rlo[0] || p.x > rhi[0] || p.y < rlo[1] || p.y > rhi[1] || p.z < rlo[2] || p.z > rhi[2])
                continue;
            if (used == capacity) {
                capacity *= 2;
                int32_t *grown = realloc(indices, sizeof(int32_t) * capacity);
                if (!grown) goto out_of_memory;
                indices = grown;
            }
            indices[used++] = i;
        }
        if (used - start < 4) { // too few particles to match a shape: drop the region
            used = start;
            continue;
        }
        for (size_t k = start; k < used; k++) region_of[indices[k]] = kept;
        kept_region[kept++] = (int32_t)r;
        offsets[kept] = (int32_t)used;
    }

    if (kept == 0) { // every region dropped: one cluster of the whole object
        for (int32_t i = 0; i < count; i++) indices[i] = i;
        offsets[0] = 0;
        offsets[1] = count;
        kept = 1;
        used = (size_t)count;
    } else {
        // particles left in no cluster join the kept cluster whose region centre is nearest;
        // ties go to the lower number because the search keeps the first strict minimum
        int32_t orphans = 0;
        for (int32_t i = 0; i < count; i++) orphans += region_of[i] < 0;
        if (orphans > 0) {
            int32_t *joins = malloc(sizeof(int32_t) * (size_t)count);
            int32_t *grown = realloc(indices, sizeof(int32_t) * (used + (size_t)orphans));
            if (!joins || !grown) {
                free(joins);
                if (grown) indices = grown;
                goto out_of_memory;
            }
            indices = grown;
            for (int32_t i = 0; i < count; i++) {
                joins[i] = -1;
                if (region_of[i] >= 0) continue;
                double best = INFINITY;
                for (int32_t c = 0; c < kept; c++) {
                    int32_t r = kept_region[c];
                    int32_t idx[3] = {r % n[0], (r / n[0]) % n[1], r / (n[0] * n[1])};
                    double d2 = 0.0;
                    for (int a = 0; a < 3; a++) {
                        double centre = lo[a] + (idx[a] + 0.5) * cell[a];
                        double d = v3_get(local[i], a) - centre;
                        d2 += d * d;
                    }
                    if (d2 < best) best = d2, joins[i] = c;
                }
            }
            // rebuild the CSR with the orphans appended to their clusters, each list sorted
            int32_t *merged = malloc(sizeof(int32_t) * (used + (size_t)orphans));
            int32_t *merged_offsets = malloc(sizeof(int32_t) * (size_t)(kept + 1));
            if (!merged || !merged_offsets) {
                free(joins), free(merged), free(merged_offsets);
                goto out_of_memory;
            }
            size_t w = 0;
            merged_offsets[0] = 0;
            for (int32_t c = 0; c < kept; c++) {
                for (int32_t k = offsets[c]; k < offsets[c + 1]; k++) merged[w++] = indices[k];
                for (int32_t i = 0; i < count; i++)
                    if (joins[i] == c) merged[w++] = i;
                qsort(merged + merged_offsets[c], w - (size_t)merged_offsets[c], sizeof(int32_t), compare_int32);
                merged_offsets[c + 1] = (int32_t)w;
            }
            free(joins);
            free(indices);
            indices = merged;
            memcpy(offsets, merged_offsets, sizeof(int32_t) * (size_t)(kept + 1));
            free(merged_offsets);
            used = w;
        }
    }

    free(region_of);
    free(kept_region);
    *out_offsets = offsets;
    *out_indices = indices;
    *out_cluster_count = kept;
    return SM_OK;

out_of_memory:
    free(region_of), free(kept_region), free(offsets), free(indices);
    return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory building grid clusters for %d particles", count);
}

void sm_cluster_update_rest(sm_world *world, sm_cluster *cluster)
{
    const int32_t begin = cluster->first_member, end = begin + cluster->member_count;
    const bool quadratic = world->objects[cluster->object].mode == SM_MODE_QUADRATIC;

    double sum_q2 = 0.0;
    for (int32_t k = begin; k < end; k++) {
        sm_vec3 q = m3_apply(cluster->plastic, world->member_rest[k]);
        world->member_q[k] = q;
        sum_q2 += world->mass[world->member_particle[k]] * v3_dot(q, q);
    }
    // offsets divided by the cluster's RMS radius keep the moment matrices near unit scale,
    // so the pseudo-inverse threshold does not depend on the unit of length
    double scale = sqrt(sum_q2 / cluster->mass);
    if (!(scale > 0.0)) scale = 1.0;
    const double inv = 1.0 / scale;

    double mqq[9] = {0};
    double mean[6] = {0};
    for (int32_t k = begin; k < end; k++) {
        double m = world->mass[world->member_particle[k]];
        sm_vec3 q = world->member_q[k];
        sm_vec3 u = v3_scale(q, inv);
        double uu[3] = {u.x, u.y, u.z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) mqq[i * 3 + j] += m * uu[i] * uu[j];
        mean[0] += m * q.x * q.x, mean[1] += m * q.y * q.y, mean[2] += m * q.z * q.z;
        mean[3] += m * q.x * q.y, mean[4] += m * q.y * q.z, mean[5] += m * q.z * q.x;
    }
    double aqq[9];
    int rank = sm_sym_pinv(3, mqq, aqq);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) cluster->aqq.m[i][j] = aqq[i * 3 + j] * inv * inv;

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
        double m = world->mass[world->member_particle[k]];
        double qt[9];
        sm_quadratic_terms(world->member_q[k], cluster->quad_mean, qt);
        for (int j = 0; j < 9; j++) qt[j] *= d_inv[j];
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++) m99[i * 9 + j] += m * qt[i] * qt[j];
    }
    double p99[81];
    cluster->modes = sm_sym_pinv(9, m99, p99);
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) cluster->aqq9[i][j] = d_inv[i] * p99[i * 9 + j] * d_inv[j];
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
