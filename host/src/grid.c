/* The uniform grid of the collide passes (Teschner et al. 2003), on the host: its layout, which
 * the OpenCL backend shares, and its construction as a counting sort, which the CPU reference's
 * pass 5 runs and the contact statistics reuse. */
#include "grid.h"
#include "../../kernels/sm_shared.h"
#include "math3.h"
#include "world.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

sm_result sm_grid_layout(sm_world *world)
{
    if (!world->grid_dirty) return SM_OK;
    sm_grid *grid = &world->grid;
    double largest = 0.0, smallest = INFINITY;
    int32_t colliding = 0;
    for (int32_t i = 0; i < world->particle_count; i++)
        if (world->radius[i] > 0.0) {
            largest = fmax(largest, world->radius[i]);
            smallest = fmin(smallest, world->radius[i]);
            colliding++;
        }
    const int64_t table = sm_grid_table_size(colliding);
    if (world->particle_count > grid->capacity || table > grid->table_size) {
        const size_t n = (size_t)(world->particle_count > 0 ? world->particle_count : 1);
        bool ok = sm_grow((void **)&grid->cell, 4 * sizeof(int32_t), n) && sm_grow((void **)&grid->sorted, sizeof(int32_t), n) &&
                  sm_grow((void **)&grid->bucket_start, sizeof(int32_t), (size_t)(table + 1)) &&
                  sm_grow((void **)&grid->bucket_object, sizeof(int32_t), (size_t)table) &&
                  sm_grow((void **)&grid->bucket_cells, sizeof(int32_t), (size_t)table) &&
                  sm_grow((void **)&grid->bucket_near, sizeof(int32_t), (size_t)table) &&
                  sm_grow((void **)&grid->bucket_box, 6 * sizeof(double), (size_t)table) &&
                  sm_grow((void **)&grid->candidates, SM_K_CONTACTS * sizeof(int32_t), n) &&
                  sm_grow((void **)&grid->candidate_count, sizeof(int32_t), n);
        for (int k = 0; k < 2; k++) ok = ok && sm_grow((void **)&grid->moved[k], sizeof(sm_vec3), n);
        ok = ok && sm_grow((void **)&grid->dv, sizeof(sm_vec3), n) && sm_grow((void **)&grid->weight, sizeof(double), n);
        if (!ok)
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for the collision grid of %d particles",
                           world->particle_count);
        // no candidates yet (and, in a world with contact, the memory the estimate counts taken
        // now rather than by the first pile)
        if (colliding > 0) memset(grid->candidates, 0, SM_K_CONTACTS * sizeof(int32_t) * n);
        memset(grid->candidate_count, 0, sizeof(int32_t) * n);
        grid->capacity = world->particle_count;
    }
    grid->cell_size = sm_grid_cell_size(smallest, largest); // (0 without colliding particles)
    grid->largest = largest;
    grid->table_size = (int32_t)table;
    grid->colliding = colliding;
    world->grid_dirty = false;
    return SM_OK;
}

/// The cell coordinate of x: floor(x / cell size), saturated to the int range (0 for NaN).
static int32_t cell_coordinate(double x, double inv_cell)
{
    const double c = floor(x * inv_cell);
    if (!(c == c)) return 0;
    return c < (double)INT_MIN ? INT_MIN : c > (double)INT_MAX ? INT_MAX : (int32_t)c;
}

void sm_grid_build(sm_grid *grid, double cell_size, const sm_vec3 *position, const double *radius, int32_t particle_count)
{
    const int32_t mask = grid->table_size - 1;
    const double inv_cell = cell_size > 0.0 ? 1.0 / cell_size : 0.0;
    int32_t *start = grid->bucket_start;
    memset(start, 0, sizeof *start * (size_t)(grid->table_size + 1));
    // cells and bucket counts
    for (int32_t i = 0; i < particle_count; i++) {
        int32_t *cell = &grid->cell[4 * i];
        if (!(radius[i] > 0.0)) {
            cell[0] = cell[1] = cell[2] = 0, cell[3] = -1;
            continue;
        }
        cell[0] = cell_coordinate(position[i].x, inv_cell);
        cell[1] = cell_coordinate(position[i].y, inv_cell);
        cell[2] = cell_coordinate(position[i].z, inv_cell);
        cell[3] = SM_K_CELL_HASH(cell[0], cell[1], cell[2], mask);
        start[cell[3] + 1]++;
    }
    // prefix sum: start[b] is where bucket b begins, start[table_size] the number sorted
    for (int32_t b = 1; b <= grid->table_size; b++) start[b] += start[b - 1];
    // scatter in index order, so that each bucket lists its particles by index; start[b] then
    // ends bucket b, and shifting the array by one restores the beginnings
    for (int32_t i = 0; i < particle_count; i++) {
        const int32_t b = grid->cell[4 * i + 3];
        if (b >= 0) grid->sorted[start[b]++] = i;
    }
    for (int32_t b = grid->table_size - 1; b > 0; b--) start[b] = start[b - 1];
    start[0] = 0;
}

int32_t sm_grid_neighbour_cell(const sm_grid *grid, const int32_t cell[4], int k, int32_t out[3])
{
    // wrapping at the int range is harmless: the cells still hash to buckets
    out[0] = (int32_t)((uint32_t)cell[0] + (uint32_t)(k % 3 - 1));
    out[1] = (int32_t)((uint32_t)cell[1] + (uint32_t)(k / 3 % 3 - 1));
    out[2] = (int32_t)((uint32_t)cell[2] + (uint32_t)(k / 9 - 1));
    return SM_K_CELL_HASH(out[0], out[1], out[2], grid->table_size - 1);
}

bool sm_grid_pair_collides(const sm_world *world, int32_t i, int32_t j)
{
    if (i == j || !(world->radius[i] > 0.0) || !(world->radius[j] > 0.0)) return false;
    const int32_t o = world->particle_object[i];
    if (o != world->particle_object[j]) return true;
    if (!world->objects[o].self_collides) return false;
    const double reach = SM_K_REST_NEIGHBOURS * (world->radius[i] + world->radius[j]);
    const sm_vec3 d = v3_sub(world->rest_position[i], world->rest_position[j]);
    return v3_dot(d, d) >= reach * reach;
}

void sm_grid_free(sm_grid *grid)
{
    free(grid->cell), free(grid->sorted), free(grid->bucket_start), free(grid->bucket_object), free(grid->bucket_cells);
    free(grid->bucket_near);
    free(grid->bucket_box);
    free(grid->candidates), free(grid->candidate_count);
    free(grid->moved[0]), free(grid->moved[1]), free(grid->dv), free(grid->weight);
    memset(grid, 0, sizeof *grid);
}

sm_result sm_world_get_contact_stats(const sm_world *world, sm_contact_stats *out)
{
    if (!world || !out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_contact_stats: world and out must not be NULL");
    *out = (sm_contact_stats){0};
    // the layout is a cache of the world's objects: bringing it up to date leaves the world unchanged
    sm_result result = sm_grid_layout((sm_world *)world);
    if (result != SM_OK || world->grid.colliding == 0) return result;
    const int32_t n = world->particle_count;
    double *xyz = malloc(sizeof *xyz * 3 * (size_t)n);
    if (!xyz) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory measuring the contacts of %d particles", n);
    result = sm_world_get_positions(world, 0, n, xyz);
    if (result != SM_OK) goto done;
    // the grid's arrays are scratch that every step sorts anew: sorting the positions read here
    // into them leaves the world unchanged
    sm_grid *grid = &((sm_world *)world)->grid;
    const sm_vec3 *position = (const sm_vec3 *)xyz;
    sm_grid_build(grid, grid->cell_size, position, world->radius, n);
    int32_t *overlaps = calloc((size_t)n, sizeof *overlaps); // per particle, for the contacts dropped
    if (!overlaps) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory measuring the contacts of %d particles", n);
        goto done;
    }
    double sum_ratio = 0.0;
    for (int32_t i = 0; i < n; i++) {
        if (grid->cell[4 * i + 3] < 0) continue;
        for (int k = 0; k < 27; k++) {
            int32_t c[3];
            const int32_t b = sm_grid_neighbour_cell(grid, &grid->cell[4 * i], k, c);
            for (int32_t s = grid->bucket_start[b]; s < grid->bucket_start[b + 1]; s++) {
                const int32_t j = grid->sorted[s];
                if (j <= i || !sm_grid_in_cell(grid, s, c) || !sm_grid_pair_collides(world, i, j)) continue; // each pair once
                const double depth = world->radius[i] + world->radius[j] - v3_length(v3_sub(position[i], position[j]));
                if (!(depth > 0.0)) continue;
                const double ratio = depth / fmin(world->radius[i], world->radius[j]);
                out->pairs++;
                overlaps[i]++, overlaps[j]++;
                out->max_depth = fmax(out->max_depth, depth);
                out->max_depth_ratio = fmax(out->max_depth_ratio, ratio);
                sum_ratio += ratio;
            }
        }
    }
    if (out->pairs > 0) out->mean_depth_ratio = sum_ratio / (double)out->pairs;
    for (int32_t i = 0; i < n; i++)
        if (!world->fixed[i] && overlaps[i] > SM_CONTACTS_PER_PARTICLE) out->dropped += overlaps[i] - SM_CONTACTS_PER_PARTICLE;
    free(overlaps);
done:
    free(xyz);
    return result;
}
