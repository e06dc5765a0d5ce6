/* The step: its checks, the one scheduler of the passes (both backends' steps run it), the CPU
 * reference's passes, and the state check. */
#include "step.h"
#include "clusters.h"
#include "cpu/cpu_passes.h"
#include "math3.h"
#include "opencl/cl_backend.h"
#include "world.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* ---- Stepping ------------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

sm_result sm_world_step_check(sm_world *world, double dt, int32_t substeps, const char *call, double *out_h)
{
    if (!world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: world must not be NULL", call);
    if (substeps < 1) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: substeps must be >= 1 (got %d)", call, substeps);
    if (!(dt / substeps >= SM_MIN_STEP && dt / substeps <= SM_MAX_STEP) || !isfinite(dt))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: dt / substeps must be in [%g, %g] s (got dt %g, %d substeps)", call,
                       SM_MIN_STEP, SM_MAX_STEP, dt, substeps);
    sm_result result = sm_world_update_map(world);
    if (result == SM_OK) result = sm_grid_layout(world);
    *out_h = dt / substeps;
    return result;
}

/// How far cluster c's farthest particle lies from its centre of mass, m. Formed from the
/// differences from one member, as the device's check forms it (kernels/10_check_state.cl): a
/// cluster of one particle, or of particles at one point, lies exactly at its centre, wherever
/// it is (the centre of mass from absolute positions is off by their rounding).
static double cluster_farthest(const sm_world *world, int32_t c)
{
    const sm_cluster *cluster = &world->clusters[c];
    const int32_t begin = cluster->first_member, end = begin + cluster->member_count;
    const sm_vec3 anchor = world->position[world->member_particle[begin]];
    sm_vec3 offset = {0, 0, 0};
    for (int32_t k = begin; k < end; k++) {
        const int32_t i = world->member_particle[k];
        offset = v3_add(offset, v3_scale(v3_sub(world->position[i], anchor), world->member_mass[k]));
    }
    offset = v3_scale(offset, 1.0 / cluster->mass);
    double farthest = 0.0;
    for (int32_t k = begin; k < end; k++)
        farthest = fmax(farthest, v3_length(v3_sub(v3_sub(world->position[world->member_particle[k]], anchor), offset)));
    return farthest;
}

/// Whether cluster c is stretched beyond check_extent (kernels/sm_formulas.h, shared with the
/// device's check).
static bool cluster_stretched(const sm_world *world, int32_t c, double extent)
{
    const sm_cluster *cluster = &world->clusters[c];
    if (cluster->member_count == 0) return false;
    const sm_vec3 a = world->position[world->member_particle[cluster->first_member]];
    const double anchor[3] = {a.x, a.y, a.z};
    return sm_cluster_stretched(cluster_farthest(world, c), extent, world->objects[cluster->object].strain_limit,
                                cluster->size, anchor);
}

/// The largest size of object `object`'s clusters (m).
static double object_size(const sm_world *world, int32_t object)
{
    const sm_object *o = &world->objects[object];
    double size = 0.0;
    for (int32_t c = o->first_cluster; c < o->first_cluster + o->cluster_count; c++)
        size = fmax(size, world->clusters[c].size);
    return size;
}

/// The state check (sm_world_def.check_interval): fails with SM_ERROR_NOT_FINITE naming the
/// first particle whose position or velocity is not finite, else with SM_ERROR_DIVERGED naming
/// the first particle faster than check_speed or the first cluster stretched beyond
/// check_extent. On OpenCL the device finds them and the state is then read back for the figures.
static sm_result check_state(sm_world *world)
{
    const double speed = world->def.check_speed, extent = world->def.check_extent;
    int32_t first[3] = {-1, -1, -1}; // not finite, too fast, too stretched
    if (world->cl) {
        sm_result result = sm_cl_check_state(world, first);
        if (result == SM_OK && (first[0] >= 0 || first[1] >= 0 || first[2] >= 0)) result = sm_cl_pull(world);
        if (result != SM_OK) return result;
    } else {
        for (int32_t i = 0; i < world->particle_count && first[0] < 0; i++) {
            if (!v3_is_finite(world->position[i]) || !v3_is_finite(world->velocity[i])) first[0] = i;
            else if (first[1] < 0 && speed > 0.0 && v3_length(world->velocity[i]) > speed) first[1] = i;
        }
        for (int32_t c = 0; c < world->cluster_count && first[2] < 0 && extent > 0.0; c++)
            if (cluster_stretched(world, c, extent)) first[2] = c;
    }
    const long long steps = (long long)world->profile.steps;
    if (first[0] >= 0 || first[1] >= 0) {
        const int32_t i = first[0] >= 0 ? first[0] : first[1], object = world->particle_object[i];
        const char *name = world->objects[object].name;
        if (first[0] >= 0)
            return sm_fail(SM_ERROR_NOT_FINITE,
                           "sm_world_step: particle %d (object %d%s%s) has a non-finite position or velocity after %lld steps "
                           "(%g s): the simulation diverged",
                           i, object, name ? ", " : "", name ? name : "", steps, world->time);
        // on OpenCL, float rounding alone moves the particles of a large object fast: say so where
        // the speed is within 100 times that
        const double size = world->cl ? object_size(world, object) : 0.0;
        const double rounding = steps > 0 ? FLT_EPSILON * size * steps / world->time : 0.0;
        const double v = v3_length(world->velocity[i]);
        char hint[256] = "";
        if (v <= 100.0 * rounding)
            snprintf(hint, sizeof hint,
                     " (or it is the OpenCL backend's float rounding: at these steps it alone moves the particles of "
                     "clusters of %.4g m at about %.4g m/s; raise check_speed or use the CPU backend)",
                     size, rounding);
        return sm_fail(SM_ERROR_DIVERGED,
                       "sm_world_step: particle %d (object %d%s%s) moves at %.4g m/s after %lld steps (%g s), faster than "
                       "check_speed (%g m/s): the simulation diverged%s",
                       i, object, name ? ", " : "", name ? name : "", v, steps, world->time, speed, hint);
    }
    if (first[2] < 0) return SM_OK;
    const int32_t c = first[2], object = world->clusters[c].object;
    const char *name = world->objects[object].name;
    const double farthest = cluster_farthest(world, c);
    return sm_fail(SM_ERROR_DIVERGED,
                   "sm_world_step: object %d%s%s%s: its cluster %d (world cluster %d) is stretched to %.4g times its strain "
                   "limit (%g) times its size (a particle %.4g m from its centre) after %lld steps (%g s), beyond "
                   "check_extent (%g): the simulation diverged",
                   object, name ? " (" : "", name ? name : "", name ? ")" : "", c - world->objects[object].first_cluster, c,
                   farthest / (world->objects[object].strain_limit * world->clusters[c].size), world->objects[object].strain_limit,
                   farthest, steps, world->time, extent);
}

bool sm_pass_runs(const sm_world *world, sm_pass pass)
{
    switch (pass) {
    case SM_PASS_COLLISION_GRID:
    case SM_PASS_COLLIDE: return world->grid.colliding > 0;
    case SM_PASS_GROUND: // (on OpenCL it also applies the contact pass's corrections)
        return world->def.ground.enabled || world->pusher.enabled || world->collider_count > 0 ||
               (world->cl && world->grid.colliding > 0);
    case SM_PASS_PLASTICITY:
        for (int32_t o = 0; o < world->object_count; o++)
            if (world->objects[o].plasticity.enabled) return true;
        return false;
    case SM_PASS_SKIN: return world->surface_vertex_count > 0;
    default: return true;
    }
}

sm_result sm_world_run_passes(sm_world *world, double h, int32_t substeps, const sm_pass_runner *runner)
{
    sm_result result = SM_OK;
    int32_t s = 0;
    for (; s < substeps && result == SM_OK; s++) {
        if (atomic_exchange(&world->cancel, 0)) { // (sm_world_cancel(): before this solver step)
            result = sm_fail(SM_ERROR_CANCELLED, "sm_world_step: cancelled after %d of its %d solver steps", s, substeps);
            break;
        }
        for (int p = 0; p < SM_PASS_COUNT && result == SM_OK; p++)
            if (p != SM_PASS_SKIN && sm_pass_runs(world, (sm_pass)p)) result = runner->run(world, (sm_pass)p, h, s);
        world->time += h;
        world->profile.steps++;
        if (runner->substep_done) runner->substep_done(world, result == SM_OK);
    }
    // once per call, after its solver steps (after those done, when cancelled)
    if ((result == SM_OK || (result == SM_ERROR_CANCELLED && s > 0)) && sm_pass_runs(world, SM_PASS_SKIN)) {
        const sm_result cancelled = result;
        result = runner->run(world, SM_PASS_SKIN, h, s - 1);
        if (runner->substep_done) runner->substep_done(world, result == SM_OK);
        if (result == SM_OK) result = cancelled;
    }
    return result;
}

/// The CPU reference's pass `pass`, timed into the profile.
static sm_result cpu_run_pass(sm_world *world, sm_pass pass, double h, int32_t substep)
{
    (void)substep;
    const double t0 = now_ms();
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS: sm_cpu_cluster_moments(world); break;
    case SM_PASS_ROTATION: sm_cpu_rotation(world); break;
    case SM_PASS_GOAL_TRANSFORM: sm_cpu_goal_transform(world, h); break;
    case SM_PASS_BLEND_INTEGRATE: sm_cpu_blend_integrate(world, h); break;
    case SM_PASS_COLLISION_GRID: sm_cpu_collision_grid(world); break;
    case SM_PASS_COLLIDE: sm_cpu_collide(world, h); break;
    case SM_PASS_GROUND: sm_cpu_ground(world, h); break;
    case SM_PASS_PLASTICITY: sm_cpu_plasticity(world, h); break;
    case SM_PASS_SKIN: sm_cpu_skin(world); break;
    case SM_PASS_COUNT: break;
    }
    world->profile.pass_ms[pass] += now_ms() - t0;
    return SM_OK;
}

sm_result sm_world_step(sm_world *world, double dt, int32_t substeps)
{
    double h = 0.0;
    sm_result result = sm_world_step_check(world, dt, substeps, "sm_world_step", &h);
    if (result != SM_OK) return result;
    const bool check = world->def.check_interval > 0 && ++world->step_calls % world->def.check_interval == 0;
    if (world->cl) {
        result = sm_cl_step(world, h, substeps);
        return result == SM_OK && check ? check_state(world) : result;
    }
    const double start = now_ms();
    static const sm_pass_runner cpu = {cpu_run_pass, NULL};
    result = sm_world_run_passes(world, h, substeps, &cpu);
    world->profile.step_ms += now_ms() - start;
    return result == SM_OK && check ? check_state(world) : result;
}

void sm_world_cancel(sm_world *world)
{
    if (world) atomic_store(&world->cancel, 1);
}

sm_profile sm_world_get_profile(const sm_world *world)
{
    if (!world) return (sm_profile){0};
    sm_profile profile = world->profile;
    sm_cl_transfer_counts(world, &profile.transfers, &profile.transfer_bytes);
    profile.launches = sm_cl_launch_count(world);
    return profile;
}

