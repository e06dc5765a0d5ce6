#include "cpu_passes.h"

void sm_cpu_collision_grid(sm_world *world)
{
    sm_grid_build(&world->grid, world->position, world->radius, world->particle_count);
}
