#include "cpu_passes.h"
#include "../math3.h"

void sm_cpu_ground(sm_world *world)
{
    const sm_ground ground = world->def.ground;
    const sm_pusher pusher = world->pusher;
    for (int32_t i = 0; i < world->particle_count; i++) {
        if (world->fixed[i]) continue;
        sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
        if (ground.enabled && x->y < ground.height) {
            x->y = ground.height;
            if (v->y < 0.0) v->y = -ground.restitution * v->y;
            v->x *= 1.0 - ground.friction;
            v->z *= 1.0 - ground.friction;
        }
        if (pusher.enabled) {
            const sm_vec3 d = v3_sub(*x, pusher.center);
            const double distance = v3_length(d);
            if (distance < pusher.radius) {
                const sm_vec3 n = distance > 0.0 ? v3_scale(d, 1.0 / distance) : v3(0.0, 1.0, 0.0);
                *x = v3_add(pusher.center, v3_scale(n, pusher.radius));
                const double approach = v3_dot(v3_sub(*v, pusher.velocity), n);
                if (approach < 0.0) *v = v3_sub(*v, v3_scale(n, approach));
            }
        }
    }
}
