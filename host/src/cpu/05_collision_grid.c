#include "cpu_passes.h"

#include <stdint.h>
#include <stdlib.h>

/// The place of a particle's cell (x, y, z) in the box of cells from lo - 1 on, x fastest.
static inline int64_t box_index(const int32_t *cell, const int64_t *lo, int64_t stride_y, int64_t stride_z)
{
    return (cell[0] - lo[0] + 1) + (cell[1] - lo[1] + 1) * stride_y + (cell[2] - lo[2] + 1) * stride_z;
}

/// Which of the 27 cells around each colliding particle's own the collide pass searches
/// (grid->search, bit k for sm_grid_neighbour_cell()'s cell k): those that hold another object's
/// particle, or any particle when the object collides with itself. The cells hold no other pair
/// the pass would find, so leaving them out changes no result (the sweeps search the cells of
/// this grid however the particles move). The objects of the cells are marked in a dense box of
/// cells around the colliding particles, where a cell's neighbours lie close in memory; when
/// that box would be large (particles far apart), every cell is searched.
static void mark_search(sm_world *world)
{
    sm_grid *grid = &world->grid;
    const int32_t n = world->particle_count;
    const uint32_t all = (1u << 27) - 1;
    int64_t lo[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, hi[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
    for (int32_t i = 0; i < n; i++) {
        const int32_t *cell = &grid->cell[4 * i];
        if (cell[3] < 0) continue; // it does not collide
        for (int a = 0; a < 3; a++) lo[a] = cell[a] < lo[a] ? cell[a] : lo[a], hi[a] = cell[a] > hi[a] ? cell[a] : hi[a];
    }
    // the box with a cell of margin on every side, so that every neighbour of a cell is in it; of
    // at most 16 cells per colliding particle (or 65,536), so that it costs about what they do
    const int64_t limit = 16 * (int64_t)grid->colliding > 65536 ? 16 * (int64_t)grid->colliding : 65536;
    int64_t size[3], cells = 1;
    for (int a = 0; a < 3; a++) {
        size[a] = hi[a] >= lo[a] ? hi[a] - lo[a] + 3 : 1;
        cells = size[a] <= limit / cells ? cells * size[a] : limit + 1; // (past the limit: no overflow)
    }
    if (cells > limit || cells > grid->box_capacity) {
        int32_t *box = cells <= limit ? realloc(grid->box, sizeof *box * (size_t)cells) : NULL;
        if (!box) { // too large, or no memory: search every cell
            for (int32_t i = 0; i < n; i++) grid->search[i] = all;
            return;
        }
        grid->box = box;
        grid->box_capacity = cells;
    }
    int32_t *box = grid->box;
    for (int64_t k = 0; k < cells; k++) box[k] = -1; // no particle
    const int64_t stride_y = size[0], stride_z = size[0] * size[1];
    int64_t offset[27]; // of the neighbours in sm_grid_neighbour_cell()'s order: x fastest
    for (int k = 0; k < 27; k++) offset[k] = (k % 3 - 1) + (k / 3 % 3 - 1) * stride_y + (k / 9 - 1) * stride_z;
    for (int32_t i = 0; i < n; i++) { // the cell's object, or -2: several
        const int32_t *cell = &grid->cell[4 * i];
        if (cell[3] < 0) continue;
        const int64_t k = box_index(cell, lo, stride_y, stride_z);
        const int32_t object = world->particle_object[i];
        box[k] = box[k] == -1 || box[k] == object ? object : -2;
    }
    for (int32_t i = 0; i < n; i++) {
        const int32_t *cell = &grid->cell[4 * i];
        if (cell[3] < 0) continue;
        const int32_t object = world->particle_object[i];
        const int32_t own = world->objects[object].self_collides ? -1 : object; // the cells of `own` alone hold no pair
        const int32_t *centre = &box[box_index(cell, lo, stride_y, stride_z)];
        uint32_t search = 0;
        for (int k = 0; k < 27; k++) search |= (uint32_t)(centre[offset[k]] != -1 && centre[offset[k]] != own) << k;
        grid->search[i] = search;
    }
}

void sm_cpu_collision_grid(sm_world *world)
{
    sm_grid_build(&world->grid, world->position, world->radius, world->particle_count);
    mark_search(world);
}
