#include "cpu_passes.h"

void sm_cpu_collision_grid(sm_world *world)
{
    sm_grid *grid = &world->grid;
    sm_grid_build(grid, sm_grid_search_cell(world), world->position, world->radius, world->particle_count);
    // each bucket's object and cell key, -2 when it holds several
    for (int32_t b = 0; b < grid->table_size; b++) {
        int32_t object = -1, key = -1;
        for (int32_t s = grid->bucket_start[b]; s < grid->bucket_start[b + 1]; s++) {
            const int32_t i = grid->sorted[s], o = world->particle_object[i], k = sm_grid_cell_key(&grid->cell[4 * i]);
            object = object == -1 || object == o ? o : -2;
            key = key == -1 || key == k ? k : -2;
        }
        grid->bucket_object[b] = object, grid->bucket_cell[b] = key;
    }
    // whether another object's particle may lie in the 27 cells around each bucket's (kernels/05's
    // sm_bucket_near_others): when not, its particles have no candidates without a search
    for (int32_t b = 0; b < grid->table_size; b++) {
        const int32_t begin = grid->bucket_start[b], object = grid->bucket_object[b];
        if (begin == grid->bucket_start[b + 1]) continue;
        int32_t near = object == -2 || grid->bucket_cell[b] == -2;
        for (int k = 0; k < 27 && !near; k++) {
            int32_t c[3];
            const int32_t nb = sm_grid_neighbour_cell(grid, &grid->cell[4 * grid->sorted[begin]], k, c);
            const int32_t key = grid->bucket_cell[nb];
            near = grid->bucket_object[nb] != -1 && grid->bucket_object[nb] != object &&
                   (key == -2 || key == sm_grid_cell_key(c));
        }
        grid->bucket_near[b] = near;
    }
}
