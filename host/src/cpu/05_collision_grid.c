#include "cpu_passes.h"

#include <math.h>

void sm_cpu_collision_grid(sm_world *world)
{
    sm_grid *grid = &world->grid;
    sm_grid_build(grid, grid->cell_size, world->position, world->radius, world->particle_count);
    // each bucket's object (-2 when it holds several), whether it holds several cells, and the box
    // of its particles' spheres (kernels/05's sm_grid_runs)
    for (int32_t b = 0; b < grid->table_size; b++) {
        int32_t object = -1, cells = 0;
        double *box = &grid->bucket_box[6 * b];
        for (int k = 0; k < 3; k++) box[k] = INFINITY, box[3 + k] = -INFINITY;
        const int32_t begin = grid->bucket_start[b];
        for (int32_t s = begin; s < grid->bucket_start[b + 1]; s++) {
            const int32_t i = grid->sorted[s], o = world->particle_object[i];
            object = object == -1 || object == o ? o : -2;
            cells = cells || !sm_grid_in_cell(grid, s, &grid->cell[4 * grid->sorted[begin]]);
            const double x[3] = {world->position[i].x, world->position[i].y, world->position[i].z}, r = world->radius[i];
            for (int a = 0; a < 3; a++) box[a] = fmin(box[a], x[a] - r), box[3 + a] = fmax(box[3 + a], x[a] + r);
        }
        grid->bucket_object[b] = object, grid->bucket_cells[b] = cells;
    }
    // whether another object's particle lies in the 27 cells around each bucket's (a bucket of
    // several objects or cells: may lie; the device searches from every particle: on a GPU that
    // costs less than this pass): when not, its particles have no candidates without a search
    for (int32_t b = 0; b < grid->table_size; b++) {
        const int32_t begin = grid->bucket_start[b], object = grid->bucket_object[b];
        if (begin == grid->bucket_start[b + 1]) continue;
        int32_t near = object == -2 || grid->bucket_cells[b];
        for (int k = 0; k < 27 && !near; k++) {
            int32_t c[3];
            const int32_t nb = sm_grid_neighbour_cell(grid, &grid->cell[4 * grid->sorted[begin]], k, c);
            const int32_t holds = grid->bucket_object[nb];
            if (holds == -1 || holds == object) continue;
            // another object's particles, or several objects': those of cell c (buckets are shared)
            for (int32_t s = grid->bucket_start[nb]; s < grid->bucket_start[nb + 1] && !near; s++)
                near = sm_grid_in_cell(grid, s, c) && world->particle_object[grid->sorted[s]] != object;
        }
        grid->bucket_near[b] = near;
    }
}
