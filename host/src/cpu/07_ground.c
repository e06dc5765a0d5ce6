#include "cpu_passes.h"
#include "../math3.h"

/// The share of a sliding speed `slide` that `friction` takes from particle i in a step of h,
/// within the friction limit of its object's stiffness and its clusters' mean size (the motion
/// limit's; 0 for a particle in none).
static double friction_share(const sm_world *world, int32_t i, double friction, double slide, double h)
{
    const int32_t begin = world->particle_member_offsets[i], end = world->particle_member_offsets[i + 1];
    double size = 0.0;
    for (int32_t j = begin; j < end; j++)
        size += world->clusters[world->member_cluster[world->particle_members[j]]].size;
    size = end > begin ? size * (1.0 / (double)(end - begin)) : 0.0;
    const double alpha = sm_object_alpha(&world->objects[world->particle_object[i]], h);
    return sm_friction_share(friction, slide, alpha, size, h);
}

/// Moves particle i out of a solid by `push`, then reflects the inward part of its velocity
/// relative to the solid (moving at `solid_velocity`) with `restitution` and removes `friction`
/// of the tangential part, within the friction limit (friction_share).
static void respond(sm_world *world, int32_t i, sm_vec3 push, sm_vec3 n, sm_vec3 solid_velocity, double restitution,
                    double friction, double h)
{
    sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
    *x = v3_add(*x, push);
    sm_vec3 relative = v3_sub(*v, solid_velocity);
    double normal = v3_dot(relative, n);
    if (normal < 0.0) {
        relative = v3_sub(relative, v3_scale(n, (1.0 + restitution) * normal));
        normal = -restitution * normal;
    }
    const sm_vec3 tangential = v3_sub(relative, v3_scale(n, normal));
    relative = v3_sub(relative, v3_scale(tangential, friction_share(world, i, friction, v3_length(tangential), h)));
    *v = v3_add(solid_velocity, relative);
}

void sm_cpu_ground(sm_world *world, double h)
{
    const sm_ground ground = world->def.ground;
    const sm_pusher pusher = world->pusher;
    // the colliders where they are at the end of this step (world->time + h: the sum the OpenCL
    // backend forms too, sm_cl_write_collider_states())
    sm_vec3 center[SM_MAX_COLLIDERS], velocity[SM_MAX_COLLIDERS];
    for (int32_t c = 0; c < world->collider_count; c++)
        sm_collider_state(&world->colliders[c], world->time + h, &center[c], &velocity[c]);
    for (int32_t i = 0; i < world->particle_count; i++) {
        if (world->fixed[i]) continue;
        sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
        if (ground.enabled && x->y < ground.height) {
            x->y = ground.height;
            if (v->y < 0.0) v->y = -ground.restitution * v->y;
            const double share = friction_share(world, i, ground.friction, hypot(v->x, v->z), h);
            v->x *= 1.0 - share;
            v->z *= 1.0 - share;
        }
        for (int32_t c = 0; c < world->collider_count; c++) {
            const sm_collider *collider = &world->colliders[c];
            sm_vec3 push, n;
            if (sm_collider_push_out(collider, v3_sub(*x, center[c]), &push, &n))
                respond(world, i, push, n, velocity[c], collider->def.restitution, collider->def.friction, h);
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
