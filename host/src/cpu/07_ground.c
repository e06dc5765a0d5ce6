#include "cpu_passes.h"
#include "../math3.h"

/// Moves particle x out of a solid by `push`, then reflects the inward part of its velocity
/// relative to the solid (moving at `solid_velocity`) with `restitution` and removes `friction`
/// of the tangential part.
static void respond(sm_vec3 *x, sm_vec3 *v, sm_vec3 push, sm_vec3 n, sm_vec3 solid_velocity, double restitution,
                    double friction)
{
    *x = v3_add(*x, push);
    sm_vec3 relative = v3_sub(*v, solid_velocity);
    double normal = v3_dot(relative, n);
    if (normal < 0.0) {
        relative = v3_sub(relative, v3_scale(n, (1.0 + restitution) * normal));
        normal = -restitution * normal;
    }
    const sm_vec3 tangential = v3_sub(relative, v3_scale(n, normal));
    relative = v3_sub(relative, v3_scale(tangential, friction));
    *v = v3_add(solid_velocity, relative);
}

void sm_cpu_ground(sm_world *world, double h)
{
    const sm_ground ground = world->def.ground;
    const sm_pusher pusher = world->pusher;
    // the colliders where they are at the end of this step
    sm_vec3 center[SM_MAX_COLLIDERS], velocity[SM_MAX_COLLIDERS];
    for (int32_t c = 0; c < world->collider_count; c++)
        sm_collider_state(&world->colliders[c], world->time + h, &center[c], &velocity[c]);
    for (int32_t i = 0; i < world->particle_count; i++) {
        if (world->fixed[i]) continue;
        sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
        if (ground.enabled && x->y < ground.height) {
            x->y = ground.height;
            if (v->y < 0.0) v->y = -ground.restitution * v->y;
            v->x *= 1.0 - ground.friction;
            v->z *= 1.0 - ground.friction;
        }
        for (int32_t c = 0; c < world->collider_count; c++) {
            const sm_collider *collider = &world->colliders[c];
            sm_vec3 push, n;
            if (sm_collider_push_out(collider, v3_sub(*x, center[c]), &push, &n))
                respond(x, v, push, n, velocity[c], collider->def.restitution, collider->def.friction);
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
