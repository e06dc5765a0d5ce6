#include "cpu_passes.h"
#include "../math3.h"

/// g_i^c = T q~ + x_cm for membership k.
static sm_vec3 cluster_goal(const sm_world *world, int32_t k)
{
    const sm_cluster *cluster = &world->clusters[world->member_cluster[k]];
    double qt[9];
    sm_quadratic_terms(world->member_q[k], cluster->quad_mean, qt);
    // outside quadratic mode columns 3-8 of T are zero, so only the linear terms count
    int columns = world->objects[cluster->object].mode == SM_MODE_QUADRATIC ? 9 : 3;
    double g[3];
    for (int r = 0; r < 3; r++) {
        double s = 0.0;
        for (int j = 0; j < columns; j++) s += cluster->transform[r][j] * qt[j];
        g[r] = s;
    }
    return v3_add(v3(g[0], g[1], g[2]), cluster->center);
}

void sm_cpu_blend_integrate(sm_world *world, double h)
{
    const sm_vec3 gravity = world->def.gravity;
    for (int32_t o = 0; o < world->object_count; o++) {
        const sm_object *object = &world->objects[o];
        const double alpha = sm_object_alpha(object, h);
        const double damping = fmax(0.0, 1.0 - object->damping * h);
        for (int32_t k = 0; k < object->particle_count; k++) {
            const int32_t i = sm_object_particle(world, object, k);
            // 4b. the mean of the goals of every cluster holding the particle, gathered in cluster order
            const int32_t begin_k = world->particle_member_offsets[i];
            const int32_t end_k = world->particle_member_offsets[i + 1];
            sm_vec3 goal = world->position[i];
            // for the motion limit, the means of its clusters' sizes and velocities
            double size = 0.0;
            sm_vec3 flow = {0, 0, 0};
            if (end_k > begin_k) {
                sm_vec3 sum = {0, 0, 0};
                for (int32_t j = begin_k; j < end_k; j++) {
                    const int32_t k = world->particle_members[j];
                    const sm_cluster *cluster = &world->clusters[world->member_cluster[k]];
                    sum = v3_add(sum, cluster_goal(world, k));
                    size += cluster->size;
                    flow = v3_add(flow, cluster->velocity);
                }
                const double share = 1.0 / (double)(end_k - begin_k);
                goal = v3_scale(sum, share);
                size *= share;
                flow = v3_scale(flow, share);
            }
            world->goal[i] = goal;
            if (world->fixed[i]) continue;

            // 4c. velocity, 4e. damping, 4f. position
            const double m = world->mass[i];
            const sm_vec3 f = world->force[i];
            sm_vec3 accel = v3_add(gravity, v3(f.x / m, f.y / m, f.z / m));
            sm_vec3 v = world->velocity[i];
            world->start_velocity[i] = v;
            v = v3_add(v, v3_scale(v3_sub(goal, world->position[i]), alpha / h));
            v = v3_add(v, v3_scale(accel, h));
            v = v3_scale(v, damping);
            // 4f. the move, within one size of its clusters of their motion and of the goal carried
            // along by it (with the particle's own acceleration and damping: the limits act on
            // what shape matching does, not on gravity and the forces)
            sm_vec3 move = v3_scale(v, h);
            const sm_vec3 d = v3_sub(goal, world->position[i]), u = v3_scale(v3_add(flow, v3_scale(accel, h)), damping);
            double va[3] = {v.x, v.y, v.z}, da[3] = {d.x, d.y, d.z}, ua[3] = {u.x, u.y, u.z}, ma[3];
            if (end_k > begin_k && sm_limit_motion(va, da, ua, h, size, ma)) {
                move = v3(ma[0], ma[1], ma[2]);
                v = v3(va[0], va[1], va[2]);
            }
            // 4d. the particle's target: a spring pulls the move and the velocity toward the
            // pin's by backward Euler's share of the way (sm_spring_share); a pin puts it on
            // the target, moving as it moved
            const double *t = &world->target[4 * (size_t)i];
            const sm_vec3 to_target = v3_sub(v3(t[0], t[1], t[2]), world->position[i]);
            if (t[3] > 0.0) {
                const double share = sm_spring_share(t[3], 0.0, h, 1.0 / m);
                move = v3_add(move, v3_scale(v3_sub(to_target, move), share));
                v = v3_add(v, v3_scale(v3_sub(v3_scale(to_target, 1.0 / h), v), share));
            }
            world->velocity[i] = v;
            world->position[i] = v3_add(world->position[i], move);
            world->move_slack[i] = v3_length(v3_sub(v3_scale(v, h), move));
            if (t[3] == SM_TARGET_PIN) {
                world->velocity[i] = v3_scale(to_target, 1.0 / h);
                world->position[i] = v3(t[0], t[1], t[2]);
                world->move_slack[i] = 0.0;
            }
        }
    }
}
