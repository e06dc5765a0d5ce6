#include "cpu_passes.h"
#include "../math3.h"

/// The means over particle i's clusters of their sizes (the motion limit's) and velocities v_cm
/// (its body's velocity at the step's start), summed in membership order; 0 and its own start
/// velocity for a particle in none.
static void cluster_means(const sm_world *world, int32_t i, double *size, sm_vec3 *flow)
{
    const int32_t begin = world->particle_member_offsets[i], end = world->particle_member_offsets[i + 1];
    *size = 0.0;
    *flow = end > begin ? v3(0.0, 0.0, 0.0) : world->start_velocity[i];
    for (int32_t j = begin; j < end; j++) {
        const sm_cluster *cluster = &world->clusters[world->member_cluster[world->particle_members[j]]];
        *size += cluster->size;
        *flow = v3_add(*flow, cluster->velocity);
    }
    if (end > begin) {
        const double share = 1.0 / (double)(end - begin);
        *size *= share;
        *flow = v3_scale(*flow, share);
    }
}

/// The share of a sliding speed `slide` that `friction` takes from particle i in a step of h,
/// pressed in at `pressed` (sm_friction_share), within the friction limit of its object's
/// stiffness and its clusters' mean size `size`.
static double friction_share(const sm_world *world, int32_t i, double friction, double slide, double pressed, double size,
                             double h)
{
    const double alpha = sm_object_alpha(&world->objects[world->particle_object[i]], h);
    return sm_friction_share(friction, slide, pressed, alpha, size, h);
}

/// Moves particle i out of a solid by `push` (of length `depth`) as far as sm_overlap_target
/// allows (`before`: the depth it was in at the step's start, `limit`: push_speed h), then turns
/// the inward part of its velocity relative to the solid (moving at `solid_velocity`) outward,
/// by `restitution` of it, or of the approach it or its body (`flow`) began the step with where
/// less (sm_rebound), and removes `friction` of the tangential part, up to `friction` times the
/// normal speed taken away and within the friction limit of its clusters' mean size `size`
/// (friction_share).
static void respond(sm_world *world, int32_t i, sm_vec3 push, double depth, double before, double limit, sm_vec3 n,
                    sm_vec3 solid_velocity, double restitution, double friction, double size, sm_vec3 flow, double h)
{
    sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
    const double target = sm_overlap_target(depth, before, limit);
    if (target >= depth) *x = v3_add(*x, push);
    else if (target > 0.0) *x = v3_add(*x, v3_scale(push, target / depth));
    sm_vec3 relative = v3_sub(*v, solid_velocity);
    double normal = v3_dot(relative, n), pressed = 0.0;
    if (normal < 0.0) {
        const double rebound = sm_rebound(restitution, -normal, -v3_dot(v3_sub(world->start_velocity[i], solid_velocity), n),
                                          -v3_dot(v3_sub(flow, solid_velocity), n));
        relative = v3_add(relative, v3_scale(n, rebound - normal));
        pressed = rebound - normal;
        normal = rebound;
    }
    const sm_vec3 tangential = v3_sub(relative, v3_scale(n, normal));
    relative = v3_sub(relative,
                      v3_scale(tangential, friction_share(world, i, friction, v3_length(tangential), pressed, size, h)));
    *v = v3_add(solid_velocity, relative);
}

void sm_cpu_ground(sm_world *world, double h)
{
    const sm_ground ground = world->def.ground;
    const sm_pusher pusher = world->pusher;
    const double limit = world->def.collisions.push_speed * h;
    // the colliders where they are at the start and the end of this step (world->time + h: the
    // sum the OpenCL backend forms too, sm_cl_write_collider_states())
    sm_vec3 start[SM_MAX_COLLIDERS], center[SM_MAX_COLLIDERS], velocity[SM_MAX_COLLIDERS];
    for (int32_t c = 0; c < world->collider_count; c++) {
        sm_vec3 unused;
        sm_collider_state(&world->colliders[c], world->time, &start[c], &unused);
        sm_collider_state(&world->colliders[c], world->time + h, &center[c], &velocity[c]);
    }
    for (int32_t i = 0; i < world->particle_count; i++) {
        if (world->fixed[i]) continue;
        sm_vec3 *x = &world->position[i], *v = &world->velocity[i];
        // where the particle began the step: the step moved it by h v (contact's corrections
        // moved both alike), within its slack (pass 4); the depth it began in, at least
        const sm_vec3 began = v3_sub(*x, v3_scale(*v, h));
        const double slack = world->move_slack[i];
        // its clusters' mean size and velocity, once it touches a solid
        double size = 0.0;
        sm_vec3 flow = {0.0, 0.0, 0.0};
        bool means = false;
        if (ground.enabled && x->y < ground.height) {
            cluster_means(world, i, &size, &flow);
            means = true;
            const double depth = ground.height - x->y;
            const double target = sm_overlap_target(depth, ground.height - began.y - slack, limit);
            if (target >= depth) x->y = ground.height;
            else if (target > 0.0) x->y += target;
            double pressed = 0.0;
            if (v->y < 0.0) {
                const double rebound = sm_rebound(ground.restitution, -v->y, -world->start_velocity[i].y, -flow.y);
                pressed = rebound - v->y;
                v->y = rebound;
            }
            const double share = friction_share(world, i, ground.friction, hypot(v->x, v->z), pressed, size, h);
            v->x *= 1.0 - share;
            v->z *= 1.0 - share;
        }
        for (int32_t c = 0; c < world->collider_count; c++) {
            const sm_collider *collider = &world->colliders[c];
            sm_vec3 push, n, push_before, n_before;
            if (!sm_collider_push_out(collider, v3_sub(*x, center[c]), &push, &n)) continue;
            const double before = sm_collider_push_out(collider, v3_sub(began, start[c]), &push_before, &n_before)
                                      ? v3_length(push_before) - slack
                                      : 0.0;
            if (!means) {
                cluster_means(world, i, &size, &flow);
                means = true;
            }
            respond(world, i, push, v3_length(push), before, limit, n, velocity[c], collider->def.restitution,
                    collider->def.friction, size, flow, h);
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
