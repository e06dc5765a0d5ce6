#include "cpu_passes.h"

void sm_cpu_ground(sm_world *world)
{
    const sm_ground ground = world->def.ground;
    if (!ground.enabled) return;
    for (int32_t i = 0; i < world->particle_count; i++) {
        if (world->fixed[i] || !(world->position[i].y < ground.height)) continue;
        sm_vec3 *v = &world->velocity[i];
        world->position[i].y = ground.height;
        if (v->y < 0.0) v->y = -ground.restitution * v->y;
        v->x *= 1.0 - ground.friction;
        v->z *= 1.0 - ground.friction;
    }
}
