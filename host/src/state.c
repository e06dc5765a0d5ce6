/* Reading and changing the world's state: counts, objects, clusters, particle fields, targets,
 * forces, and copies of a world's state. */
#include "clusters.h"
#include "math3.h"
#include "opencl/cl_backend.h"
#include "surfaces.h"
#include "world.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- Queries and edits ----------------------------------------------------------------- */

sm_counts sm_world_get_counts(const sm_world *world)
{
    if (!world) return (sm_counts){0};
    return (sm_counts){world->object_count, world->cluster_count, world->particle_count, world->membership_count};
}

const char *sm_world_backend_name(const sm_world *world) { return world ? world->backend_name : "none"; }

const char *sm_world_device_name(const sm_world *world) { return world ? sm_cl_device_name(world) : ""; }

sm_result sm_world_get_object(const sm_world *world, int32_t object, sm_object_info *out)
{
    if (!world || !out || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_object: no object %d (the world has %d)", object,
                       world ? world->object_count : 0);
    const sm_object *o = &world->objects[object];
    *out = (sm_object_info){
        .name = o->name ? o->name : "",
        .shape = o->shape,
        .mode = o->mode,
        .mass = o->mass,
        .first_particle = o->particle_count > 0 ? sm_object_particle(world, o, 0) : 0,
        .particle_count = o->particle_count,
        .contiguous = o->particle_count == 0 ||
                      sm_object_particle(world, o, o->particle_count - 1) - sm_object_particle(world, o, 0) == o->particle_count - 1,
        .first_cluster = o->first_cluster,
        .cluster_count = o->cluster_count,
        .membership_count = o->membership_count,
        .collides = o->collides,
        .self_collides = o->self_collides,
        .spacing = o->spacing,
        .particle_radius = o->particle_radius,
        .first_surface_vertex = o->first_surface_vertex,
        .surface_vertex_count = o->surface_vertex_count,
        .surface_triangle_count = o->surface_triangle_count,
    };
    return SM_OK;
}

sm_result sm_world_get_object_particles(const sm_world *world, int32_t object, const int32_t **out_particles,
                                       int32_t *out_count)
{
    if (!world || !out_particles || !out_count || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_object_particles: no object %d (the world has %d)",
                       object, world ? world->object_count : 0);
    const sm_object *o = &world->objects[object];
    *out_particles = world->object_particles + o->first_particle;
    *out_count = o->particle_count;
    return SM_OK;
}

sm_result sm_world_get_cluster(const sm_world *world, int32_t cluster, sm_cluster_info *out)
{
    if (!world || !out || cluster < 0 || cluster >= world->cluster_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_cluster: no cluster %d (the world has %d)", cluster,
                       world ? world->cluster_count : 0);
    sm_result result = sm_cl_read_cluster(world, cluster);
    if (result != SM_OK) return result;
    const sm_cluster *c = &world->clusters[cluster];
    out->object = c->object;
    out->member_count = c->member_count;
    out->modes = c->modes;
    out->mass = c->mass;
    out->rest_center = c->rest_center;
    out->center = c->center;
    out->velocity = c->velocity;
    out->rotation = c->rotation;
    memcpy(out->transform, c->transform, sizeof out->transform);
    out->plastic = c->plastic;
    return SM_OK;
}

sm_result sm_world_get_cluster_members(const sm_world *world, int32_t cluster, const int32_t **out_particles,
                                       int32_t *out_count)
{
    if (!world || !out_particles || !out_count || cluster < 0 || cluster >= world->cluster_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_cluster_members: no cluster %d", cluster);
    *out_particles = world->member_particle + world->clusters[cluster].first_member;
    *out_count = world->clusters[cluster].member_count;
    return SM_OK;
}

static sm_result check_range(const sm_world *world, int32_t first, int32_t count, const void *data, const char *call)
{
    if (!world || !data) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: world and buffer must not be NULL", call);
    if (first < 0 || count < 0 || (int64_t)first + count > world->particle_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: particles [%d, %lld) are outside [0, %d)", call, first,
                       (long long)first + count, world->particle_count);
    return SM_OK;
}

/// Copies a particle quantity out: from the device when it is ahead, else from the host arrays.
static sm_result copy_out(const sm_world *world, const sm_vec3 *source, int field, int32_t first, int32_t count,
                          double *xyz, const char *call)
{
    sm_result result = check_range(world, first, count, xyz, call);
    if (result != SM_OK) return result;
    bool done = false;
    if (field >= 0) {
        result = sm_cl_read(world, (sm_cl_field)field, first, count, xyz, &done);
        if (result != SM_OK) return result;
    }
    // (an empty world's arrays are NULL, which even an offset of 0 may not be applied to)
    if (!done && count > 0) memcpy(xyz, source + first, sizeof(sm_vec3) * (size_t)count);
    return SM_OK;
}

sm_result sm_world_get_positions(const sm_world *world, int32_t first, int32_t count, double *xyz)
{
    return copy_out(world, world ? world->position : NULL, SM_CL_POSITION, first, count, xyz, "sm_world_get_positions");
}

sm_result sm_world_get_velocities(const sm_world *world, int32_t first, int32_t count, double *xyz)
{
    return copy_out(world, world ? world->velocity : NULL, SM_CL_VELOCITY, first, count, xyz, "sm_world_get_velocities");
}

sm_result sm_world_get_rest_positions(const sm_world *world, int32_t first, int32_t count, double *xyz)
{
    return copy_out(world, world ? world->rest_position : NULL, -1, first, count, xyz, "sm_world_get_rest_positions");
}

sm_result sm_world_get_goals(const sm_world *world, int32_t first, int32_t count, double *xyz)
{
    return copy_out(world, world ? world->goal : NULL, SM_CL_GOAL, first, count, xyz, "sm_world_get_goals");
}

sm_result sm_world_get_particle_objects(const sm_world *world, int32_t first, int32_t count, int32_t *out)
{
    sm_result result = check_range(world, first, count, out, "sm_world_get_particle_objects");
    if (result != SM_OK) return result;
    if (count > 0) memcpy(out, world->particle_object + first, sizeof(int32_t) * (size_t)count);
    return SM_OK;
}

sm_result sm_world_get_masses(const sm_world *world, int32_t first, int32_t count, double *out)
{
    sm_result result = check_range(world, first, count, out, "sm_world_get_masses");
    if (result != SM_OK) return result;
    if (count > 0) memcpy(out, world->mass + first, sizeof(double) * (size_t)count);
    return SM_OK;
}

/// Copies a particle quantity in: into the host arrays and, on OpenCL, to the device.
static sm_result copy_in(sm_world *world, sm_vec3 *target, sm_cl_field field, int32_t first, int32_t count,
                         const double *xyz, const char *call)
{
    sm_result result = check_range(world, first, count, xyz, call);
    if (result != SM_OK) return result;
    for (int32_t i = 0; i < 3 * count; i++) {
        if (!isfinite(xyz[i])) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: value %d is not finite", call, i);
        if (world->cl && !(fabs(xyz[i]) <= FLT_MAX))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: value %d (%g) is beyond the float range of the OpenCL backend",
                           call, i, xyz[i]);
        // a force's acceleration too, which the kernels form as f / m in float
        if (world->cl && field == SM_CL_FORCE && !(fabs(xyz[i]) / world->mass[first + i / 3] <= FLT_MAX))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "%s: value %d (%g N) over its particle's mass (%g kg) is an acceleration beyond the float "
                           "range of the OpenCL backend", call, i, xyz[i], world->mass[first + i / 3]);
    }
    if (count > 0) memcpy(target + first, xyz, sizeof(sm_vec3) * (size_t)count);
    if (field == SM_CL_POSITION) sm_cl_forget_position_split(world, first, count); // (the host set them)
    return sm_cl_write(world, field, first, count);
}

sm_result sm_world_set_positions(sm_world *world, int32_t first, int32_t count, const double *xyz)
{
    return copy_in(world, world ? world->position : NULL, SM_CL_POSITION, first, count, xyz, "sm_world_set_positions");
}

sm_result sm_world_set_velocities(sm_world *world, int32_t first, int32_t count, const double *xyz)
{
    return copy_in(world, world ? world->velocity : NULL, SM_CL_VELOCITY, first, count, xyz, "sm_world_set_velocities");
}

sm_result sm_world_set_force(sm_world *world, int32_t particle, sm_vec3 force)
{
    if (!world || particle < 0 || particle >= world->particle_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_force: no particle %d", particle);
    if (!v3_is_finite(force)) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_force: force must be finite");
    const double xyz[3] = {force.x, force.y, force.z};
    return copy_in(world, world->force, SM_CL_FORCE, particle, 1, xyz, "sm_world_set_force");
}

sm_result sm_world_set_forces(sm_world *world, int32_t first, int32_t count, const double *xyz)
{
    return copy_in(world, world ? world->force : NULL, SM_CL_FORCE, first, count, xyz, "sm_world_set_forces");
}

sm_result sm_world_reset_object(sm_world *world, int32_t object)
{
    if (!world || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_reset_object: no object %d (the world has %d)", object,
                       world ? world->object_count : 0);
    sm_result result = sm_cl_pull(world); // the other objects' state is kept as the device has it
    if (result != SM_OK) return result;
    const sm_object *o = &world->objects[object];
    for (int32_t k = 0; k < o->particle_count; k++) {
        const int32_t i = sm_object_particle(world, o, k);
        world->position[i] = world->goal[i] = world->rest_position[i];
        world->velocity[i] = v3(0, 0, 0);
        sm_cl_forget_position_split(world, i, 1);
    }
    sm_cl_forget_warm_starts(world, o->first_cluster, o->cluster_count);
    for (int32_t c = o->first_cluster; c < o->first_cluster + o->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        cluster->plastic = m3_identity();
        sm_cluster_update_rest(world, cluster);
        cluster->center = cluster->rest_center;
        cluster->rotation = cluster->linear_fit = m3_identity();
        memset(cluster->transform, 0, sizeof cluster->transform);
        for (int r = 0; r < 3; r++) cluster->transform[r][r] = 1.0;
    }
    const int32_t v = o->first_surface_vertex, count = o->surface_vertex_count;
    if (count > 0) {
        memcpy(world->surface_position + v, world->surface_rest + v, sizeof(sm_vec3) * (size_t)count);
        sm_surface_normals(world, world->surface_position, world->surface_normal, v, count);
    }
    sm_cl_mark_host_changed(world);
    return SM_OK;
}

sm_result sm_world_set_target(sm_world *world, int32_t particle, sm_vec3 target, double stiffness)
{
    if (!world || particle < 0 || particle >= world->particle_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_target: no particle %d", particle);
    if (!v3_is_finite(target)) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_target: target must be finite");
    if (!(stiffness >= 0.0 || stiffness == SM_TARGET_PIN) || !isfinite(stiffness))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_target: stiffness must be >= 0 N/m or SM_TARGET_PIN (got %g)",
                       stiffness);
    if (!sm_fits_device(world, target) || (world->cl && !(stiffness <= FLT_MAX)))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_target: target (%g, %g, %g) or stiffness %g is beyond the "
                       "float range of the OpenCL backend", target.x, target.y, target.z, stiffness);
    double *t = &world->target[4 * (size_t)particle];
    const double before[4] = {t[0], t[1], t[2], t[3]};
    const int32_t count_before = world->target_count;
    world->target_count += (stiffness != 0.0) - (t[3] != 0.0);
    t[0] = target.x, t[1] = target.y, t[2] = target.z, t[3] = stiffness;
    sm_result result = sm_cl_write(world, SM_CL_TARGET, particle, 1);
    if (result != SM_OK) { // the device could not take it: the world keeps its targets as they were
        memcpy(t, before, sizeof before);
        world->target_count = count_before;
    }
    return result;
}

sm_result sm_world_get_targets(const sm_world *world, int32_t first, int32_t count, double *xyzk)
{
    sm_result result = check_range(world, first, count, xyzk, "sm_world_get_targets");
    if (result != SM_OK) return result;
    if (count > 0) memcpy(xyzk, world->target + 4 * (size_t)first, 4 * sizeof(double) * (size_t)count);
    return SM_OK;
}

/// Do the two worlds hold the same skinned surfaces: vertices, triangles and bindings alike, and
/// each object's share of them? (A cut splits a surface where its plane crosses it, so worlds cut
/// along different planes can hold the same particles and different surfaces.)
static bool same_surfaces(const sm_world *a, const sm_world *b)
{
    if (a->surface_vertex_count != b->surface_vertex_count || a->surface_triangle_count != b->surface_triangle_count ||
        a->surface_binding_count != b->surface_binding_count)
        return false;
    for (int32_t o = 0; o < a->object_count; o++) {
        const sm_object *x = &a->objects[o], *y = &b->objects[o];
        if (x->first_surface_vertex != y->first_surface_vertex || x->surface_vertex_count != y->surface_vertex_count ||
            x->first_surface_triangle != y->first_surface_triangle || x->surface_triangle_count != y->surface_triangle_count)
            return false;
    }
    const size_t v = (size_t)a->surface_vertex_count, t = (size_t)a->surface_triangle_count,
                 k = (size_t)a->surface_binding_count;
    if (v == 0) return true;
    return memcmp(a->surface_rest, b->surface_rest, v * sizeof(sm_vec3)) == 0 &&
           memcmp(a->surface_binding_offsets, b->surface_binding_offsets, (v + 1) * sizeof(int32_t)) == 0 &&
           (k == 0 || (memcmp(a->surface_binding_cluster, b->surface_binding_cluster, k * sizeof(int32_t)) == 0 &&
                       memcmp(a->surface_binding_rest, b->surface_binding_rest, k * sizeof(sm_vec3)) == 0)) &&
           (t == 0 || memcmp(a->surface_triangles, b->surface_triangles, 3 * t * sizeof(int32_t)) == 0);
}

sm_result sm_world_copy_state(sm_world *target, const sm_world *source)
{
    if (!target || !source) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_copy_state: worlds must not be NULL");
    if (target == source) return SM_OK;
    if (target->object_count != source->object_count || target->particle_count != source->particle_count ||
        target->cluster_count != source->cluster_count || target->membership_count != source->membership_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_copy_state: the worlds differ (%d/%d objects, %d/%d particles, %d/%d clusters)",
                       target->object_count, source->object_count, target->particle_count, source->particle_count,
                       target->cluster_count, source->cluster_count);
    for (int32_t o = 0; o < source->object_count; o++)
        if (target->objects[o].particle_count != source->objects[o].particle_count ||
            target->objects[o].cluster_count != source->objects[o].cluster_count)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_copy_state: object %d differs between the worlds", o);
    // the same counts can hold different particles (an object cut along different planes)
    const size_t np = (size_t)source->particle_count, nk = (size_t)source->membership_count;
    if ((np > 0 && memcmp(target->particle_object, source->particle_object, np * sizeof(int32_t)) != 0) ||
        (nk > 0 && (memcmp(target->member_particle, source->member_particle, nk * sizeof(int32_t)) != 0 ||
                    memcmp(target->member_rest, source->member_rest, nk * sizeof(sm_vec3)) != 0)))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_copy_state: the worlds' clusters hold different particles (objects cut differently?)");
    if (!same_surfaces(target, source))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_copy_state: the worlds' skinned surfaces differ (different meshes, or objects cut "
                       "differently?)");
    // the source's host arrays are a cache of its device state: refreshing them leaves it unchanged
    sm_result result = sm_cl_pull((sm_world *)source);
    if (result != SM_OK) return result;
    const size_t n = (size_t)source->particle_count, k = (size_t)source->membership_count;
    memcpy(target->position, source->position, n * sizeof(sm_vec3));
    memcpy(target->velocity, source->velocity, n * sizeof(sm_vec3));
    memcpy(target->goal, source->goal, n * sizeof(sm_vec3));
    memcpy(target->force, source->force, n * sizeof(sm_vec3));
    memcpy(target->target, source->target, 4 * n * sizeof(double));
    result = sm_cl_copy_device_split(target, source);
    if (result != SM_OK) return result;
    target->target_count = source->target_count;
    memcpy(target->member_q, source->member_q, k * sizeof(sm_vec3));
    memcpy(target->clusters, source->clusters, (size_t)source->cluster_count * sizeof(sm_cluster));
    target->time = source->time;
    if (source->surface_vertex_count > 0) {
        memcpy(target->surface_position, source->surface_position, sizeof(sm_vec3) * (size_t)source->surface_vertex_count);
        memcpy(target->surface_normal, source->surface_normal, sizeof(sm_vec3) * (size_t)source->surface_vertex_count);
    }
    sm_cl_mark_host_changed(target);
    return SM_OK;
}

sm_result sm_world_get_forces(const sm_world *world, int32_t first, int32_t count, double *xyz)
{
    return copy_out(world, world ? world->force : NULL, SM_CL_FORCE, first, count, xyz, "sm_world_get_forces");
}

sm_result sm_world_get_float4(const sm_world *world, sm_particle_field field, int32_t first, int32_t count, float *out)
{
    if (!world || !out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_float4: world and buffer must not be NULL");
    if (field < SM_FIELD_POSITION || field > SM_FIELD_SURFACE_NORMAL)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_float4: unknown field %d", (int)field);
    // the surface fields count surface vertices, the others particles
    const bool surface = field == SM_FIELD_SURFACE_POSITION || field == SM_FIELD_SURFACE_NORMAL;
    const int32_t limit = surface ? world->surface_vertex_count : world->particle_count;
    if (first < 0 || count < 0 || (int64_t)first + count > limit)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_float4: %s [%d, %lld) are outside [0, %d)",
                       surface ? "surface vertices" : "particles", first, (long long)first + count, limit);
    bool done = false;
    sm_result result = sm_cl_read_float4(world, field, first, count, out, &done);
    if (result != SM_OK || done) return result;
    const sm_vec3 *source[] = {world->position, world->velocity, world->goal, world->surface_position, world->surface_normal};
    for (int32_t i = 0; i < count; i++) {
        const sm_vec3 v = source[field][first + i];
        out[4 * i] = (float)v.x, out[4 * i + 1] = (float)v.y, out[4 * i + 2] = (float)v.z;
        out[4 * i + 3] = field == SM_FIELD_POSITION ? (float)world->mass[first + i] : field == SM_FIELD_SURFACE_POSITION ? 1.0f : 0.0f;
    }
    return SM_OK;
}

