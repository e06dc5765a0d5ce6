/* The world's life cycle: defs and their defaults, names, creation and destruction, its arrays
 * grown, the pusher, and sharing with OpenGL. */
#include "world.h"
#include "math3.h"
#include "opencl/cl_backend.h"
#include "surfaces.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sm_world_def sm_world_def_default(void)
{
    sm_world_def def;
    memset(&def, 0, sizeof def);
    def.gravity = v3(0.0, -9.81, 0.0);
    def.ground = (sm_ground){.enabled = false, .height = 0.0, .restitution = 0.3, .friction = 0.2};
    def.collisions = (sm_collisions){.enabled = false, .iterations = 2, .radius_scale = 1.0, .restitution = 0.2, .friction = 0.3,
                                     .relaxation = 1.5, .push_speed = 3.0};
    def.backend = SM_BACKEND_DEFAULT;
    def.check_extent = 10.0;
    def.check_speed = 1e5;
    def.internal_value = SM_DEF_COOKIE;
    return def;
}

sm_object_def sm_object_def_default(void)
{
    sm_object_def def;
    memset(&def, 0, sizeof def);
    def.shape = (sm_shape){
        .type = SM_SHAPE_BOX,
        .size = {1.0, 1.0, 1.0},
        .resolution = {4, 4, 4},
        .radius = 0.5,
        .length = 1.0,
        .major_radius = 0.5,
        .minor_radius = 0.2,
        .spacing = 0.25,
    };
    def.mass = 1.0;
    def.mode = SM_MODE_LINEAR;
    def.alpha = 0.5;
    def.tau = 0.0;
    def.beta = 0.5;
    def.volume_preservation = true;
    def.clusters = (sm_cluster_def){.grid = {1, 1, 1}, .overlap = 0.25};
    def.plasticity = (sm_plasticity){.enabled = false, .yield = 0.1, .creep = 5.0, .max = 0.5};
    def.cap = (sm_cap){.enabled = false, .soft = 4.0, .hard = 6.0};
    def.strain_limit = 2.0;
    def.collisions = (sm_object_collisions){.enabled = true, .self = false, .radius = 0.0, .radius_scale = 0.0};
    def.surface.enabled = true;
    def.internal_value = SM_DEF_COOKIE;
    return def;
}

const char *sm_mode_name(sm_mode mode)
{
    switch (mode) {
    case SM_MODE_RIGID: return "rigid";
    case SM_MODE_LINEAR: return "linear";
    case SM_MODE_QUADRATIC: return "quadratic";
    }
    return "?";
}

const char *sm_shape_name(sm_shape_type type)
{
    switch (type) {
    case SM_SHAPE_POINTS: return "points";
    case SM_SHAPE_BOX: return "box";
    case SM_SHAPE_SPHERE: return "sphere";
    case SM_SHAPE_CAPSULE: return "capsule";
    case SM_SHAPE_TORUS: return "torus";
    case SM_SHAPE_MESH: return "mesh";
    }
    return "?";
}

const char *sm_pass_name(sm_pass pass)
{
    static const char *names[SM_PASS_COUNT] = {"cluster_moments", "rotation", "goal_transform",
                                               "blend_integrate", "collision_grid", "collide",
                                               "ground", "plasticity", "skin"};
    return (pass >= 0 && pass < SM_PASS_COUNT) ? names[pass] : "?";
}


bool sm_fits_device(const sm_world *world, sm_vec3 v)
{
    return !world->cl || (fabs(v.x) <= FLT_MAX && fabs(v.y) <= FLT_MAX && fabs(v.z) <= FLT_MAX);
}

sm_result sm_world_create(const sm_world_def *def, sm_world **out_world)
{
    if (out_world) *out_world = NULL;
    if (!def || !out_world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: def and out_world must not be NULL");
    if (def->internal_value != SM_DEF_COOKIE)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: the def was not made by sm_world_def_default()");
    if (!v3_is_finite(def->gravity)) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: gravity must be finite");
    if (def->ground.enabled) {
        if (!isfinite(def->ground.height))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: ground height must be finite");
        if (!(def->ground.restitution >= 0.0 && def->ground.restitution <= 1.0))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: ground restitution must be in [0, 1] (got %g)",
                           def->ground.restitution);
        if (!(def->ground.friction >= 0.0 && def->ground.friction <= 1.0))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: ground friction must be in [0, 1] (got %g)",
                           def->ground.friction);
    }
    const sm_collisions *c = &def->collisions;
    if (c->enabled) {
        if (c->iterations < 1 || c->iterations > 64)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision iterations must be 1 to 64 (got %d)", c->iterations);
        if (!(c->radius_scale > 0.0) || !isfinite(c->radius_scale))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision radius_scale must be > 0 (got %g)", c->radius_scale);
        if (!sm_in_unit_interval(c->restitution))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision restitution must be in [0, 1] (got %g)", c->restitution);
        if (!sm_in_unit_interval(c->friction))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision friction must be in [0, 1] (got %g)", c->friction);
        if (!(c->relaxation >= 1.0 && c->relaxation <= 2.0))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision relaxation must be in [1, 2] (got %g)",
                           c->relaxation);
    }
    // the ground and the colliders use it with contact off too
    if (!(c->push_speed > 0.0 && isfinite(c->push_speed)))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision push_speed must be positive (got %g)",
                       c->push_speed);
    if (def->memory_budget < 0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: memory_budget must be a byte count >= 0 (got %lld)",
                       (long long)def->memory_budget);
    if (def->check_interval < 0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: check_interval must be >= 0 (got %d)", def->check_interval);
    if (!(def->check_extent >= 0.0) || !isfinite(def->check_extent))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: check_extent must be a finite number >= 0 (got %g)",
                       def->check_extent);
    if (!(def->check_speed >= 0.0) || !isfinite(def->check_speed))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: check_speed must be a finite number >= 0 m/s (got %g)",
                       def->check_speed);
    if (def->backend != SM_BACKEND_DEFAULT && def->backend != SM_BACKEND_CPU && def->backend != SM_BACKEND_OPENCL)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: unknown backend %d", (int)def->backend);
    const bool callers_opencl = def->opencl.context || def->opencl.device || def->opencl.queue;
    if (callers_opencl && def->backend == SM_BACKEND_CPU)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: OpenCL objects were given for the CPU backend");
    if (callers_opencl && def->gl.context)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: give either the caller's OpenCL objects or a GL context, not both");
    if (def->opencl.device && !def->opencl.context && !def->opencl.queue)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: an OpenCL device needs its context (or a queue)");
    if (callers_opencl && def->device && *def->device)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: device '%s' was named with the caller's OpenCL "
                       "objects, which choose the device (give one or the other)", def->device);
    const char *env_device = getenv("SM_DEVICE");
    const bool device_named = (def->device && *def->device) || (env_device && *env_device);
    if (def->backend == SM_BACKEND_CPU && def->device && *def->device)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: device '%s' was named for the CPU backend (a device "
                       "selects an OpenCL device)", def->device);
    sm_world *world = calloc(1, sizeof *world);
    if (!world) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory creating a world");
    world->def = *def;
    world->def.device = NULL; // the caller's string need not outlive this call
    world->backend_name = "cpu";
    if (def->backend != SM_BACKEND_CPU) {
        sm_result result = sm_cl_create(world, def->device);
        if (result == SM_OK) {
            world->backend_name = "opencl";
            if (def->ground.enabled && !(fabs(def->ground.height) <= FLT_MAX)) {
                sm_world_destroy(world);
                return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                               "sm_world_create: the ground's height %g m is beyond the float range of the OpenCL backend "
                               "(%g)", def->ground.height, (double)FLT_MAX);
            }
            if (!sm_fits_device(world, def->gravity)) {
                sm_world_destroy(world);
                return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                               "sm_world_create: gravity (%g, %g, %g) m/s^2 is beyond the float range of the OpenCL "
                               "backend (|g| <= %g per axis)", def->gravity.x, def->gravity.y, def->gravity.z,
                               (double)FLT_MAX);
            }
        } else if (def->backend == SM_BACKEND_OPENCL || callers_opencl || device_named) {
            // (a device that was named and is not there is an error, not a reason to fall back)
            sm_world_destroy(world);
            return result;
        } else {
            char reason[1024];
            snprintf(reason, sizeof reason, "%s", sm_last_error());
            sm_log(world, SM_LOG_WARNING, "OpenCL is not available (%s); running the CPU reference instead", reason);
        }
    }
    *out_world = world;
    return SM_OK;
}

void sm_world_free_objects(sm_world *world)
{
    for (int32_t o = 0; o < world->object_count; o++) free(world->objects[o].name);
    free(world->objects);
    free(world->position), free(world->velocity), free(world->rest_position), free(world->goal), free(world->force);
    free(world->mass), free(world->fixed), free(world->particle_object), free(world->object_particles), free(world->radius), free(world->target);
    free(world->move_slack), free(world->start_velocity);
    sm_grid_free(&world->grid);
    sm_surfaces_free(world);
    free(world->clusters);
    free(world->member_particle), free(world->member_cluster), free(world->member_rest), free(world->member_q);
    free(world->member_mass);
    free(world->particle_member_offsets), free(world->particle_members);
}

void sm_world_take_objects(sm_world *world, sm_world *from)
{
    sm_world_free_objects(world);
    // objects
    world->object_count = from->object_count, world->object_capacity = from->object_capacity;
    world->objects = from->objects;
    // particles
    world->particle_count = from->particle_count, world->particle_capacity = from->particle_capacity;
    world->position = from->position, world->velocity = from->velocity, world->rest_position = from->rest_position;
    world->goal = from->goal, world->force = from->force, world->mass = from->mass, world->fixed = from->fixed;
    world->particle_object = from->particle_object, world->object_particles = from->object_particles;
    world->radius = from->radius, world->target = from->target, world->target_count = from->target_count;
    world->move_slack = from->move_slack, world->start_velocity = from->start_velocity;
    // clusters and memberships, and the inverse map
    world->cluster_count = from->cluster_count, world->cluster_capacity = from->cluster_capacity;
    world->clusters = from->clusters;
    world->membership_count = from->membership_count, world->membership_capacity = from->membership_capacity;
    world->member_particle = from->member_particle, world->member_cluster = from->member_cluster;
    world->member_rest = from->member_rest, world->member_q = from->member_q;
    world->member_mass = from->member_mass;
    world->map_dirty = from->map_dirty;
    world->particle_member_offsets = from->particle_member_offsets, world->particle_members = from->particle_members;
    // the contact grid
    world->grid_dirty = from->grid_dirty, world->grid = from->grid;
    // surfaces
    world->surface_vertex_count = from->surface_vertex_count, world->surface_triangle_count = from->surface_triangle_count;
    world->surface_binding_count = from->surface_binding_count;
    world->surface_rest = from->surface_rest, world->surface_position = from->surface_position;
    world->surface_normal = from->surface_normal;
    world->surface_binding_offsets = from->surface_binding_offsets, world->surface_binding_cluster = from->surface_binding_cluster;
    world->surface_binding_rest = from->surface_binding_rest;
    world->surface_triangles = from->surface_triangles, world->surface_triangles_local = from->surface_triangles_local;
    world->surface_incident_offsets = from->surface_incident_offsets, world->surface_incident = from->surface_incident;
    world->skin_center = from->skin_center;
}

void sm_world_destroy(sm_world *world)
{
    if (!world) return;
    sm_cl_destroy(world);
    sm_world_free_objects(world);
    sm_colliders_free(world);
    free(world->cuts), free(world->scene_cut_front);
    free(world);
}

bool sm_grow(void **array, size_t element, size_t capacity)
{
    void *grown = realloc(*array, element * capacity);
    if (!grown) return false;
    *array = grown;
    return true;
}

/// Doubles, or grows straight to what is needed when that is more (so that a reserve for a whole
/// scene allocates what it needs and no more).
static int32_t next_capacity(int32_t current, int64_t needed)
{
    int64_t c = current > 0 ? 2 * (int64_t)current : 16;
    if (c < needed) c = needed;
    return c > INT32_MAX ? INT32_MAX : (int32_t)c;
}

sm_result sm_world_reserve(sm_world *w, int64_t particles, int64_t clusters, int64_t memberships)
{
    if (particles > INT32_MAX / 2 || clusters > INT32_MAX / 2 || memberships > INT32_MAX / 2)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the world would exceed %d particles, clusters or memberships", INT32_MAX / 2);
    bool ok = true;
    if (particles > w->particle_capacity) {
        int32_t cap = next_capacity(w->particle_capacity, particles);
        ok = ok && sm_grow((void **)&w->position, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->velocity, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->rest_position, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->goal, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->force, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->mass, sizeof(double), (size_t)cap) && sm_grow((void **)&w->fixed, 1, (size_t)cap) &&
             sm_grow((void **)&w->particle_object, sizeof(int32_t), (size_t)cap) &&
             sm_grow((void **)&w->object_particles, sizeof(int32_t), (size_t)cap) &&
             sm_grow((void **)&w->radius, sizeof(double), (size_t)cap) &&
             sm_grow((void **)&w->target, 4 * sizeof(double), (size_t)cap) &&
             sm_grow((void **)&w->move_slack, sizeof(double), (size_t)cap) &&
             sm_grow((void **)&w->start_velocity, sizeof(sm_vec3), (size_t)cap);
        if (ok) w->particle_capacity = cap;
    }
    if (ok && clusters > w->cluster_capacity) {
        int32_t cap = next_capacity(w->cluster_capacity, clusters);
        ok = sm_grow((void **)&w->clusters, sizeof(sm_cluster), (size_t)cap);
        if (ok) w->cluster_capacity = cap;
    }
    if (ok && memberships > w->membership_capacity) {
        int32_t cap = next_capacity(w->membership_capacity, memberships);
        ok = sm_grow((void **)&w->member_particle, sizeof(int32_t), (size_t)cap) &&
             sm_grow((void **)&w->member_cluster, sizeof(int32_t), (size_t)cap) &&
             sm_grow((void **)&w->member_rest, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->member_q, sizeof(sm_vec3), (size_t)cap) &&
             sm_grow((void **)&w->member_mass, sizeof(double), (size_t)cap);
        if (ok) w->membership_capacity = cap;
    }
    if (ok && w->object_count + 1 > w->object_capacity) {
        int32_t cap = next_capacity(w->object_capacity, w->object_count + 1);
        ok = sm_grow((void **)&w->objects, sizeof(sm_object), (size_t)cap);
        if (ok) w->object_capacity = cap;
    }
    return ok ? SM_OK : sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory growing the world to %lld particles",
                                (long long)particles);
}

/// The particles [first, first + count) of an object being added, of mass `total_mass` centred on
/// `com`: their velocities are finite (linear_velocity + angular_velocity x r can overflow), and on
/// OpenCL every value the device takes as a float (position, velocity, force, mass and its inverse,
/// acceleration), the object's mass and its second moment about `com` (the largest a cluster's
/// moment matrices start at) are within the float range.
sm_result sm_world_set_pusher(sm_world *world, const sm_pusher *pusher)
{
    if (!world || !pusher) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_pusher: world and pusher must not be NULL");
    if (pusher->enabled &&
        (!v3_is_finite(pusher->center) || !v3_is_finite(pusher->velocity) || !(pusher->radius > 0.0) || !isfinite(pusher->radius)))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_set_pusher: the centre and velocity must be finite and the radius > 0 (got %g)", pusher->radius);
    world->pusher = *pusher;
    return SM_OK;
}

/* ---- Sharing with OpenGL ------------------------------------------------------------------ */

bool sm_world_gl_sharing(const sm_world *world, const char **reason)
{
    if (!world || !world->cl) {
        if (reason) *reason = world ? "the world runs on the CPU reference, which has no device buffers" : "no world";
        return false;
    }
    return sm_cl_gl_sharing(world, reason);
}

static sm_result check_sharing(const sm_world *world, const char *call)
{
    const char *reason = "";
    if (!world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: world must not be NULL", call);
    if (!sm_world_gl_sharing(world, &reason)) return sm_fail(SM_ERROR_UNAVAILABLE, "%s: no GL sharing: %s", call, reason);
    return SM_OK;
}

sm_result sm_world_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer)
{
    sm_result result = check_sharing(world, "sm_world_share_gl_buffer");
    if (result != SM_OK) return result;
    if (field < SM_FIELD_POSITION || field > SM_FIELD_SURFACE_NORMAL)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_share_gl_buffer: unknown field %d", (int)field);
    return sm_cl_share_gl_buffer(world, field, gl_buffer);
}

sm_result sm_world_copy_to_gl(sm_world *world)
{
    sm_result result = check_sharing(world, "sm_world_copy_to_gl");
    return result == SM_OK ? sm_cl_copy_to_gl(world) : result; // its upload, if any, lays out the map and grid
}

