/* World life cycle, object creation, stepping and queries. */
#include "cpu/cpu_passes.h"
#include "math3.h"
#include "opencl/cl_backend.h"
#include "world.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

sm_world_def sm_world_def_default(void)
{
    sm_world_def def;
    memset(&def, 0, sizeof def);
    def.gravity = v3(0.0, -9.81, 0.0);
    def.ground = (sm_ground){.enabled = false, .height = 0.0, .restitution = 0.3, .friction = 0.2};
    def.collisions = (sm_collisions){.enabled = false, .iterations = 2, .radius_scale = 1.0, .restitution = 0.2, .friction = 0.3, .skin = 0.5,
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

static bool in_unit_interval(double x) { return x >= 0.0 && x <= 1.0; }

/// Whether a vector reaches the world's device intact: OpenCL kernels take floats, so there each
/// component must be within the float range (any finite vector on the CPU reference).
static bool fits_device(const sm_world *world, sm_vec3 v)
{
    return !world->cl || (fabs(v.x) <= FLT_MAX && fabs(v.y) <= FLT_MAX && fabs(v.z) <= FLT_MAX);
}

sm_result sm_world_create(const sm_world_def *def, sm_world **out_world)
{
    if (!def || !out_world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: def and out_world must not be NULL");
    *out_world = NULL;
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
        if (!in_unit_interval(c->restitution))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision restitution must be in [0, 1] (got %g)", c->restitution);
        if (!in_unit_interval(c->friction))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision friction must be in [0, 1] (got %g)", c->friction);
        if (!(c->skin >= 0.0 && c->skin <= 10.0))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision skin must be in [0, 10] (got %g)", c->skin);
        if (!(c->relaxation >= 1.0 && c->relaxation <= 2.0))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision relaxation must be in [1, 2] (got %g)",
                           c->relaxation);
        if (!(c->push_speed > 0.0 && isfinite(c->push_speed)))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: collision push_speed must be positive (got %g)",
                           c->push_speed);
    }
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
            if (!fits_device(world, def->gravity)) {
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
    free(world->position_hi);
    sm_grid_free(&world->grid);
    sm_surfaces_free(world);
    free(world->clusters);
    free(world->member_particle), free(world->member_cluster), free(world->member_rest), free(world->member_q);
    free(world->particle_member_offsets), free(world->particle_members);
}

void sm_world_destroy(sm_world *world)
{
    if (!world) return;
    sm_cl_destroy(world);
    sm_world_free_objects(world);
    sm_colliders_free(world);
    free(world->cuts);
    free(world);
}

/* ---- Adding objects ------------------------------------------------------------------ */

static bool valid_strain_limit(double s) { return s >= SM_STRAIN_LIMIT_MIN && s <= SM_STRAIN_LIMIT_MAX; }

/// Checks plasticity settings that are enabled; `call` prefixes the message ("" or "name: ").

static sm_result check_plasticity(const sm_plasticity *p, const char *call)
{
    if (!p->enabled) return SM_OK;
    if (!(p->yield >= 0.0) || !isfinite(p->yield))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%splasticity yield must be >= 0 (got %g)", call, p->yield);
    if (!(p->creep >= 0.0) || !isfinite(p->creep))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%splasticity creep must be >= 0 per second (got %g)", call, p->creep);
    if (!(p->max > 0.0) || !isfinite(p->max))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%splasticity max must be > 0 (got %g)", call, p->max);
    return SM_OK;
}

/// Checks the parameters that do not depend on the sampled particles.
sm_result sm_validate_object_def(const sm_object_def *d)
{
#define BAD(...) return sm_fail(SM_ERROR_INVALID_ARGUMENT, __VA_ARGS__)
    if (d->internal_value != SM_DEF_COOKIE) BAD("the object def was not made by sm_object_def_default()");
    if (!(d->mass >= SM_MASS_MIN && d->mass <= SM_MASS_MAX))
        BAD("mass must be in [%g, %g] kg (got %g)", SM_MASS_MIN, SM_MASS_MAX, d->mass);
    if (!in_unit_interval(d->alpha)) BAD("alpha must be in [0, 1] (got %g)", d->alpha);
    if (!(d->tau >= 0.0) || !isfinite(d->tau)) BAD("tau must be a positive time in s, or 0 to use alpha (got %g)", d->tau);
    if (!in_unit_interval(d->beta)) BAD("beta must be in [0, 1] (got %g)", d->beta);
    if (!(d->damping >= 0.0) || !isfinite(d->damping)) BAD("damping must be >= 0 per second (got %g)", d->damping);
    if (d->mode != SM_MODE_RIGID && d->mode != SM_MODE_LINEAR && d->mode != SM_MODE_QUADRATIC)
        BAD("mode %d is not one of rigid, linear, quadratic", (int)d->mode);
    const struct {
        const char *field;
        sm_vec3 value;
    } vectors[] = {{"position", d->position}, {"rotation", d->rotation}, {"linear_velocity", d->linear_velocity},
                   {"angular_velocity", d->angular_velocity}, {"force", d->force}};
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++)
        if (!v3_is_finite(vectors[v].value))
            BAD("%s must be finite (got (%g, %g, %g))", vectors[v].field, vectors[v].value.x, vectors[v].value.y,
                vectors[v].value.z);
    if (d->cap.enabled && !(d->cap.soft >= 3.0 && d->cap.hard > d->cap.soft && isfinite(d->cap.hard)))
        BAD("cap needs 3 <= soft < hard (got soft %g, hard %g)", d->cap.soft, d->cap.hard);
    if (!valid_strain_limit(d->strain_limit))
        BAD("strain_limit must be in [%g, %g] (got %g)", SM_STRAIN_LIMIT_MIN, SM_STRAIN_LIMIT_MAX, d->strain_limit);
    sm_result plastic = check_plasticity(&d->plasticity, "");
    if (plastic != SM_OK) return plastic;
    const sm_shape *s = &d->shape;
    switch (s->type) {
    case SM_SHAPE_POINTS:
        if (s->point_count < 1 || !s->points) BAD("a points shape needs at least one point");
        double point_mass_sum = 0.0;
        for (int32_t i = 0; i < s->point_count; i++) {
            if (!v3_is_finite(s->points[i])) BAD("point %d is not finite", i);
            if (s->point_masses && !(s->point_masses[i] >= SM_POINT_MASS_MIN && s->point_masses[i] <= SM_MASS_MAX))
                BAD("the mass of point %d must be in [%g, %g] kg (got %g)", i, SM_POINT_MASS_MIN, SM_MASS_MAX,
                    s->point_masses[i]);
            if (s->point_masses) point_mass_sum += s->point_masses[i];
        }
        if (s->point_masses && !(point_mass_sum >= SM_MASS_MIN && point_mass_sum <= SM_MASS_MAX))
            BAD("the points' masses sum to %g kg, outside [%g, %g] kg", point_mass_sum, SM_MASS_MIN, SM_MASS_MAX);
        break;
    case SM_SHAPE_BOX:
        if (!(s->size.x >= 0.0 && s->size.y >= 0.0 && s->size.z >= 0.0) || !v3_is_finite(s->size))
            BAD("box size must be three lengths >= 0 m");
        for (int a = 0; a < 3; a++)
            if (s->resolution[a] < 1) BAD("box resolution must be >= 1 particle per axis (got %d)", s->resolution[a]);
        break;
    case SM_SHAPE_SPHERE:
    case SM_SHAPE_CAPSULE:
    case SM_SHAPE_TORUS:
        if (!(s->spacing > 0.0) || !isfinite(s->spacing)) BAD("spacing must be > 0 m (got %g)", s->spacing);
        if (s->type == SM_SHAPE_TORUS) {
            if (!(s->major_radius > 0.0 && s->minor_radius > 0.0) || !isfinite(s->major_radius) || !isfinite(s->minor_radius))
                BAD("torus radii must be > 0 m (got major %g, minor %g)", s->major_radius, s->minor_radius);
        } else if (!(s->radius > 0.0) || !isfinite(s->radius)) {
            BAD("radius must be > 0 m (got %g)", s->radius);
        }
        if (s->type == SM_SHAPE_CAPSULE && (!(s->length >= 0.0) || !isfinite(s->length)))
            BAD("capsule length must be >= 0 m (got %g)", s->length);
        break;
    case SM_SHAPE_MESH:
        if (s->mesh_vertex_count < 1 || !s->mesh_vertices) BAD("a mesh shape needs at least one vertex");
        if (s->mesh_triangle_count < 0 || (s->mesh_triangle_count > 0 && !s->mesh_triangles))
            BAD("a mesh shape's triangles must be given with their count");
        for (int32_t i = 0; i < s->mesh_vertex_count; i++)
            if (!v3_is_finite(s->mesh_vertices[i])) BAD("mesh vertex %d is not finite", i);
        for (int32_t i = 0; i < 3 * s->mesh_triangle_count; i++)
            if (s->mesh_triangles[i] < 0 || s->mesh_triangles[i] >= s->mesh_vertex_count)
                BAD("mesh triangle %d refers to vertex %d of %d", i / 3, s->mesh_triangles[i], s->mesh_vertex_count);
        if (s->mesh_particles != SM_MESH_PARTICLES_VERTICES && s->mesh_particles != SM_MESH_PARTICLES_LATTICE)
            BAD("mesh_particles %d is unknown", (int)s->mesh_particles);
        if (s->mesh_particles == SM_MESH_PARTICLES_LATTICE && (!(s->spacing > 0.0) || !isfinite(s->spacing)))
            BAD("spacing must be > 0 m (got %g)", s->spacing);
        if (s->mesh_particles == SM_MESH_PARTICLES_LATTICE && s->mesh_triangle_count < 1)
            BAD("a lattice inside a mesh needs its triangles");
        break;
    default: BAD("shape type %d is unknown", (int)s->type);
    }
    const sm_surface *f = &d->surface;
    if (f->vertex_count < 0 || f->triangle_count < 0 || (f->vertex_count > 0 && !f->vertices) ||
        (f->triangle_count > 0 && !f->triangles))
        BAD("a surface's vertices and triangles must be given with their counts");
    for (int32_t i = 0; i < f->vertex_count; i++)
        if (!v3_is_finite(f->vertices[i])) BAD("surface vertex %d is not finite", i);
    for (int32_t i = 0; i < 3 * f->triangle_count; i++)
        if (f->triangles[i] < 0 || f->triangles[i] >= f->vertex_count)
            BAD("surface triangle %d refers to vertex %d of %d", i / 3, f->triangles[i], f->vertex_count);
    if (d->fixed_count < 0 || (d->fixed_count > 0 && !d->fixed))
        BAD("fixed must hold fixed_count particle indices (got %d indices%s)", d->fixed_count,
            d->fixed ? "" : " and no array");
    if (!(d->collisions.radius >= 0.0) || !isfinite(d->collisions.radius))
        BAD("collision radius must be >= 0 m (got %g)", d->collisions.radius);
    if (!(d->collisions.radius_scale >= 0.0) || !isfinite(d->collisions.radius_scale))
        BAD("collision radius_scale must be >= 0 (got %g)", d->collisions.radius_scale);
    const sm_cluster_def *c = &d->clusters;
    if (!c->list_offsets) {
        for (int a = 0; a < 3; a++)
            if (c->grid[a] < 1 || c->grid[a] > 1024) BAD("cluster grid must be 1 to 1024 cells per axis (got %d)", c->grid[a]);
        if (!(c->overlap >= 0.0 && c->overlap <= 10.0)) BAD("cluster overlap must be in [0, 10] (got %g)", c->overlap);
    } else if (c->list_count < 1 || !c->list_indices) {
        BAD("explicit clusters need at least one list");
    }
    return SM_OK;
#undef BAD
}

sm_result sm_object_check_indices(const sm_object_def *d, int32_t count, char *field, size_t field_size)
{
    const sm_cluster_def *c = &d->clusters;
    if (c->list_offsets) {
        snprintf(field, field_size, "clusters.lists");
        if (c->list_offsets[0] != 0) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "offsets must start at 0");
        uint8_t *seen = calloc((size_t)count, 1);
        if (!seen) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory checking cluster lists");
        for (int32_t k = 0; k < c->list_count; k++) {
            snprintf(field, field_size, "clusters.lists[%d]", k);
            int32_t b = c->list_offsets[k], e = c->list_offsets[k + 1];
            sm_result bad = e <= b ? sm_fail(SM_ERROR_INVALID_ARGUMENT, "is empty") : SM_OK;
            for (int32_t j = b; j < e && bad == SM_OK; j++) {
                int32_t i = c->list_indices[j];
                if (i < 0 || i >= count)
                    bad = sm_fail(SM_ERROR_INVALID_ARGUMENT, "particle index %d is outside [0, %d)", i, count);
                else if (seen[i])
                    bad = sm_fail(SM_ERROR_INVALID_ARGUMENT, "lists particle %d twice", i);
                else
                    seen[i] = 1;
            }
            if (bad != SM_OK) {
                free(seen);
                return bad;
            }
            // clear the marks so the next cluster starts clean
            for (int32_t j = b; j < e; j++) seen[c->list_indices[j]] = 0;
        }
        free(seen);
    }
    snprintf(field, field_size, "fixed");
    for (int32_t f = 0; f < d->fixed_count; f++) {
        int32_t i = d->fixed ? d->fixed[f] : -1;
        if (i < 0 || i >= count)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "entry %d: particle index %d is outside [0, %d)", f, i, count);
    }
    return SM_OK;
}

/// Grows an array to `capacity` elements; the pointer is only replaced on success.
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
             sm_grow((void **)&w->position_hi, 3 * sizeof(float), (size_t)cap);
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
             sm_grow((void **)&w->member_q, sizeof(sm_vec3), (size_t)cap);
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
static sm_result check_new_particles(const sm_world *world, int32_t first, int32_t count, double total_mass, sm_vec3 com)
{
    double moment = 0.0;
    for (int32_t i = first; i < first + count; i++) {
        const sm_vec3 v = world->velocity[i];
        if (!v3_is_finite(v))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "particle %d: its velocity (linear_velocity + angular_velocity x its offset from the centre of "
                           "mass) is not finite (got (%g, %g, %g))", i - first, v.x, v.y, v.z);
        if (!world->cl) continue;
        const double m = world->mass[i];
        if (!(m <= FLT_MAX && 1.0 / m <= FLT_MAX))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "particle %d: its mass %g kg (from mass) or its inverse is beyond the float range of the "
                           "OpenCL backend (%g)", i - first, m, (double)FLT_MAX);
        const struct {
            const char *what;
            sm_vec3 value;
        } values[] = {{"position (from position and shape)", world->position[i]},
                      {"velocity (from linear_velocity and angular_velocity)", v},
                      {"force", world->force[i]},
                      {"acceleration (force / mass)", v3_scale(world->force[i], 1.0 / m)}};
        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
            if (!fits_device(world, values[k].value))
                return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                               "particle %d: its %s (%g, %g, %g) is beyond the float range of the OpenCL backend (%g)",
                               i - first, values[k].what, values[k].value.x, values[k].value.y, values[k].value.z,
                               (double)FLT_MAX);
        const sm_vec3 r = v3_sub(world->position[i], com);
        moment += m * v3_dot(r, r);
    }
    if (world->cl && !(total_mass <= FLT_MAX && moment <= FLT_MAX))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "the object's mass %g kg or its second moment %g kg m^2 (sum of m |x - x_cm|^2) is beyond the float "
                       "range of the OpenCL backend (%g): use the CPU backend or smaller units", total_mass, moment,
                       (double)FLT_MAX);
    return SM_OK;
}

sm_result sm_world_add_object(sm_world *world, const sm_object_def *def, int32_t *out_object)
{
    if (!world || !def) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_object: world and def must not be NULL");
    sm_result result = sm_validate_object_def(def);
    if (result != SM_OK) return result;
    sm_footprint adds;
    result = sm_object_footprint(world, def, &adds); // the memory it needs, before anything is sampled
    if (result == SM_OK) result = sm_check_memory(world, &adds, "the object");
    if (result != SM_OK) return result;
    result = sm_cl_pull(world); // the device's state is the world's: bring it to the host arrays first
    if (result != SM_OK) return result;

    sm_vec3 *local = NULL;
    double *masses = NULL;
    int32_t count = 0, cluster_count = 0;
    int32_t *grid_offsets = NULL, *grid_indices = NULL;
    char *name = NULL;
    result = sm_shape_sample(&def->shape, def->mass, &local, &masses, &count);
    if (result != SM_OK) return result;
    char field[48];
    result = sm_object_check_indices(def, count, field, sizeof field);
    if (result != SM_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", sm_last_error());
        sm_fail(result, "%s: %s", field, detail);
        goto done;
    }

    const int32_t *offsets, *indices;
    if (def->clusters.list_offsets) {
        offsets = def->clusters.list_offsets;
        indices = def->clusters.list_indices;
        cluster_count = def->clusters.list_count;
    } else {
        result = sm_clusters_from_grid(local, count, def->clusters.grid, def->clusters.overlap, &grid_offsets,
                                       &grid_indices, &cluster_count);
        if (result != SM_OK) goto done;
        offsets = grid_offsets;
        indices = grid_indices;
    }
    const int32_t memberships = offsets[cluster_count];
    result = sm_world_reserve(world, (int64_t)world->particle_count + count, (int64_t)world->cluster_count + cluster_count,
                     (int64_t)world->membership_count + memberships);
    if (result != SM_OK) goto done;
    if (def->name) {
        name = malloc(strlen(def->name) + 1);
        if (!name) {
            result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory copying an object name");
            goto done;
        }
        strcpy(name, def->name);
    }

    // particles: placed by the object's rotation and position, spun about their centre of mass
    const int32_t first = world->particle_count;
    const sm_mat3 rot = sm_rotation_from_euler_degrees(def->rotation);
    double total_mass = 0.0;
    sm_vec3 com = {0, 0, 0};
    for (int32_t i = 0; i < count; i++) {
        sm_vec3 x = v3_add(def->position, m3_apply(rot, local[i]));
        world->position[first + i] = world->rest_position[first + i] = world->goal[first + i] = x;
        world->mass[first + i] = masses[i];
        world->fixed[first + i] = 0;
        total_mass += masses[i];
        com = v3_add(com, v3_scale(x, masses[i]));
    }
    if (!isfinite(total_mass) || !isfinite(com.x) || !isfinite(com.y) || !isfinite(com.z)) {
        result = sm_fail(SM_ERROR_INVALID_ARGUMENT, "the object's total mass or placement is not finite");
        goto done;
    }
    for (int32_t i = 0; i < count; i++)
        if (!isnormal(masses[i])) {
            result = sm_fail(SM_ERROR_INVALID_ARGUMENT, "particle %d has mass %g kg, too small to divide by", i, masses[i]);
            goto done;
        }
    com = v3_scale(com, 1.0 / total_mass);
    for (int32_t i = 0; i < count; i++) {
        sm_vec3 r = v3_sub(world->position[first + i], com);
        world->velocity[first + i] = v3_add(def->linear_velocity, v3_cross(def->angular_velocity, r));
        world->force[first + i] = v3_scale(def->force, masses[i] / total_mass);
    }
    result = check_new_particles(world, first, count, total_mass, com);
    if (result != SM_OK) goto done;
    memset(world->target + 4 * (size_t)first, 0, 4 * sizeof(double) * (size_t)count); // no targets
    sm_forget_position_split(world, first, count);
    for (int32_t f = 0; f < def->fixed_count; f++) {
        world->fixed[first + def->fixed[f]] = 1;
        world->velocity[first + def->fixed[f]] = v3(0, 0, 0); // it never moves, so it reports rest
    }

    // contact: the radius given, else radius_scale x half the lattice spacing
    const sm_collisions *collisions = &world->def.collisions;
    const double spacing = sm_shape_spacing(&def->shape, local, count);
    double radius = def->collisions.radius;
    if (!(radius > 0.0)) {
        const double scale = def->collisions.radius_scale > 0.0 ? def->collisions.radius_scale : collisions->radius_scale;
        radius = 0.5 * scale * spacing;
    }
    const bool collides = collisions->enabled && def->collisions.enabled && radius > 0.0;
    if (collisions->enabled && def->collisions.enabled && !collides)
        sm_log(world, SM_LOG_WARNING,
               "object %d%s%s%s: %s, so there is no spacing to take a collision radius from and it does not collide; "
               "give it a collision radius", world->object_count, def->name ? " (" : "", def->name ? def->name : "",
               def->name ? ")" : "", count == 1 ? "it is a single particle" : "all its particles lie at one point");
    for (int32_t i = 0; i < count; i++) {
        world->particle_object[first + i] = world->object_count;
        world->object_particles[first + i] = first + i; // (objects are added after every cut piece's list)
        world->radius[first + i] = collides ? radius : 0.0;
    }

    const int32_t object_index = world->object_count;
    sm_object *object = &world->objects[object_index];
    *object = (sm_object){
        .name = name,
        .shape = def->shape.type,
        .mode = def->mode,
        .alpha = def->alpha,
        .tau = def->tau,
        .beta = def->beta,
        .damping = def->damping,
        .volume_preservation = def->volume_preservation,
        .volume_by_scaling = def->volume_by_scaling,
        .plasticity = def->plasticity,
        .cap = def->cap,
        .strain_limit = def->strain_limit,
        .mass = total_mass,
        .first_particle = first,
        .particle_count = count,
        .origin_first = first,
        .origin_mass = total_mass,
        .first_cluster = world->cluster_count,
        .cluster_count = cluster_count,
        .membership_count = memberships,
        .collides = collides,
        .self_collides = collides && def->collisions.self,
        .spacing = spacing,
        .particle_radius = collides ? radius : 0.0,
        .frame = rot,
        .origin = def->position,
        .cluster_grid = {def->clusters.grid[0], def->clusters.grid[1], def->clusters.grid[2]},
        .cluster_overlap = def->clusters.overlap,
        .clusters_listed = def->clusters.list_offsets != NULL,
    };
    name = NULL;
    world->object_count++;
    world->particle_count += count;

    // clusters and their memberships, in list order
    for (int32_t c = 0; c < cluster_count; c++) {
        sm_world_append_cluster(world, object_index, first, indices + offsets[c], offsets[c + 1] - offsets[c], m3_identity());
        sm_cluster_note_modes(world, object_index, world->cluster_count - 1);
    }
    if (!sm_grow((void **)&world->skin_center, sizeof(sm_vec3), (size_t)world->cluster_count)) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding an object");
        goto done;
    }
    sm_surface surface = def->surface;
    if (def->shape.type == SM_SHAPE_MESH && !surface.vertices && surface.enabled) {
        surface.vertices = def->shape.mesh_vertices, surface.vertex_count = def->shape.mesh_vertex_count;
        surface.triangles = def->shape.mesh_triangles, surface.triangle_count = def->shape.mesh_triangle_count;
    }
    result = sm_surface_add(world, object_index, &surface, rot, def->position);
    if (result != SM_OK) goto done;
    world->map_dirty = true;
    world->grid_dirty = true;
    sm_cl_mark_host_changed(world);
    if (out_object) *out_object = object_index;

done:
    free(name);
    free(local);
    free(masses);
    free(grid_offsets);
    free(grid_indices);
    return result;
}

void sm_world_append_cluster(sm_world *world, int32_t object, int32_t first, const int32_t *members, int32_t count,
                             sm_mat3 plastic)
{
    sm_cluster *cluster = &world->clusters[world->cluster_count];
    memset(cluster, 0, sizeof *cluster);
    cluster->object = object;
    cluster->first_member = world->membership_count;
    cluster->member_count = count;
    sm_vec3 weighted = {0, 0, 0};
    for (int32_t j = 0; j < count; j++) {
        const int32_t i = first + members[j];
        cluster->mass += world->mass[i];
        cluster->anchored = cluster->anchored || world->fixed[i];
        weighted = v3_add(weighted, v3_scale(world->rest_position[i], world->mass[i]));
    }
    cluster->rest_center = v3_scale(weighted, 1.0 / cluster->mass);
    for (int32_t j = 0; j < count; j++) {
        const int32_t k = world->membership_count++, i = first + members[j];
        world->member_particle[k] = i;
        world->member_cluster[k] = world->cluster_count;
        world->member_rest[k] = v3_sub(world->rest_position[i], cluster->rest_center);
    }
    cluster->plastic = plastic;
    sm_cluster_update_rest(world, cluster);
    // the rest state: goals are the positions themselves
    cluster->center = cluster->rest_center;
    cluster->rotation = m3_identity();
    cluster->linear_fit = m3_identity();
    for (int i = 0; i < 3; i++) cluster->transform[i][i] = 1.0;
    world->cluster_count++;
}

bool sm_cluster_note_modes(const sm_world *world, int32_t object, int32_t c)
{
    const sm_object *o = &world->objects[object];
    const sm_cluster *cluster = &world->clusters[c];
    const int full = o->mode == SM_MODE_QUADRATIC ? 9 : 3;
    if (o->mode == SM_MODE_RIGID || cluster->modes >= full) return false;
    const char *name = o->name;
    sm_log(world, SM_LOG_NOTICE, "object %d%s%s%s cluster %d: its %d particles support %d of the %d %s modes; the rest follow R%s",
           object, name ? " (" : "", name ? name : "", name ? ")" : "", c - o->first_cluster, cluster->member_count,
           cluster->modes, full, sm_mode_name(o->mode),
           cluster->linear_modes < 3 && o->volume_preservation
               ? " (it is flat or colinear, so with volume preservation its whole linear fit is replaced by R)"
               : "");
    return true;
}

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

/// How far cluster c's farthest particle lies from its centre of mass, in its object's
/// strain_limit times its size (the state check's measure of stretch).
static double cluster_stretch(const sm_world *world, int32_t c)
{
    const sm_cluster *cluster = &world->clusters[c];
    const int32_t begin = cluster->first_member, end = begin + cluster->member_count;
    sm_vec3 center = {0, 0, 0};
    for (int32_t k = begin; k < end; k++) {
        const int32_t i = world->member_particle[k];
        center = v3_add(center, v3_scale(world->position[i], world->mass[i]));
    }
    center = v3_scale(center, 1.0 / cluster->mass);
    double farthest = 0.0;
    for (int32_t k = begin; k < end; k++) farthest = fmax(farthest, v3_length(v3_sub(world->position[world->member_particle[k]], center)));
    return farthest / (world->objects[cluster->object].strain_limit * cluster->size);
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
            if (world->clusters[c].member_count > 0 && !(cluster_stretch(world, c) <= extent)) first[2] = c;
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
        return sm_fail(SM_ERROR_DIVERGED,
                       "sm_world_step: particle %d (object %d%s%s) moves at %.4g m/s after %lld steps (%g s), faster than "
                       "check_speed (%g m/s): the simulation diverged",
                       i, object, name ? ", " : "", name ? name : "", v3_length(world->velocity[i]), steps, world->time, speed);
    }
    if (first[2] < 0) return SM_OK;
    const int32_t c = first[2], object = world->clusters[c].object;
    const char *name = world->objects[object].name;
    return sm_fail(SM_ERROR_DIVERGED,
                   "sm_world_step: object %d%s%s%s: its cluster %d (world cluster %d) is stretched to %.4g times its strain "
                   "limit (%g) times its size after %lld steps (%g s), beyond check_extent (%g): the simulation diverged",
                   object, name ? " (" : "", name ? name : "", name ? ")" : "", c - world->objects[object].first_cluster, c,
                   cluster_stretch(world, c), world->objects[object].strain_limit, steps, world->time, extent);
}

bool sm_pass_runs(const sm_world *world, sm_pass pass)
{
    switch (pass) {
    case SM_PASS_COLLISION_GRID:
    case SM_PASS_COLLIDE: return world->grid.colliding > 0;
    case SM_PASS_GROUND: return world->def.ground.enabled || world->pusher.enabled || world->collider_count > 0;
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
    for (int32_t s = 0; s < substeps && result == SM_OK; s++) {
        for (int p = 0; p < SM_PASS_COUNT && result == SM_OK; p++)
            if (p != SM_PASS_SKIN && sm_pass_runs(world, (sm_pass)p)) result = runner->run(world, (sm_pass)p, h, s);
        world->time += h;
        world->profile.steps++;
        if (runner->substep_done) runner->substep_done(world, result == SM_OK);
    }
    if (result == SM_OK && sm_pass_runs(world, SM_PASS_SKIN)) { // once per call, after its solver steps
        result = runner->run(world, SM_PASS_SKIN, h, substeps - 1);
        if (runner->substep_done) runner->substep_done(world, result == SM_OK);
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
    case SM_PASS_GOAL_TRANSFORM: sm_cpu_goal_transform(world); break;
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

sm_profile sm_world_get_profile(const sm_world *world)
{
    sm_profile profile = world->profile;
    sm_cl_transfer_counts(world, &profile.transfers, &profile.transfer_bytes);
    profile.launches = sm_cl_launch_count(world);
    return profile;
}

/* ---- Queries and edits ----------------------------------------------------------------- */

sm_counts sm_world_get_counts(const sm_world *world)
{
    return (sm_counts){world->object_count, world->cluster_count, world->particle_count, world->membership_count};
}

const char *sm_world_backend_name(const sm_world *world) { return world->backend_name; }

const char *sm_world_device_name(const sm_world *world) { return sm_cl_device_name(world); }

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
    }
    if (count > 0) memcpy(target + first, xyz, sizeof(sm_vec3) * (size_t)count);
    if (field == SM_CL_POSITION) sm_forget_position_split(world, first, count); // (the host set them)
    return sm_cl_write(world, field, first, count);
}

void sm_forget_position_split(sm_world *world, int32_t first, int32_t count)
{
    for (int64_t i = 3 * (int64_t)first; i < 3 * ((int64_t)first + count); i++) world->position_hi[i] = NAN;
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
    world->force[particle] = force;
    return sm_cl_write(world, SM_CL_FORCE, particle, 1);
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
        sm_forget_position_split(world, i, 1);
    }
    for (int32_t c = o->first_cluster; c < o->first_cluster + o->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        cluster->plastic = m3_identity();
        sm_cluster_update_rest(world, cluster);
        cluster->center = cluster->rest_center;
        cluster->rotation = cluster->linear_fit = m3_identity();
        cluster->warm_start_set = false;
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
    if (!fits_device(world, target) || (world->cl && !(stiffness <= FLT_MAX)))
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
    // the source's host arrays are a cache of its device state: refreshing them leaves it unchanged
    sm_result result = sm_cl_pull((sm_world *)source);
    if (result != SM_OK) return result;
    const size_t n = (size_t)source->particle_count, k = (size_t)source->membership_count;
    memcpy(target->position, source->position, n * sizeof(sm_vec3));
    memcpy(target->velocity, source->velocity, n * sizeof(sm_vec3));
    memcpy(target->goal, source->goal, n * sizeof(sm_vec3));
    memcpy(target->force, source->force, n * sizeof(sm_vec3));
    memcpy(target->target, source->target, 4 * n * sizeof(double));
    memcpy(target->position_hi, source->position_hi, 3 * n * sizeof(float));
    if (!source->cl) sm_forget_position_split(target, 0, source->particle_count); // (a CPU world's are stale)
    target->target_count = source->target_count;
    memcpy(target->member_q, source->member_q, k * sizeof(sm_vec3));
    memcpy(target->clusters, source->clusters, (size_t)source->cluster_count * sizeof(sm_cluster));
    target->time = source->time;
    if (target->surface_vertex_count == source->surface_vertex_count && source->surface_vertex_count > 0) {
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

/* ---- Changes while the world runs --------------------------------------------------------- */

sm_result sm_world_get_object_params(const sm_world *world, int32_t object, sm_object_params *out)
{
    if (!world || !out || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_object_params: no object %d (the world has %d)", object,
                       world ? world->object_count : 0);
    const sm_object *o = &world->objects[object];
    *out = (sm_object_params){o->mode, o->alpha, o->tau, o->beta, o->damping, o->volume_preservation,
                                o->volume_by_scaling, o->plasticity, o->strain_limit};
    return SM_OK;
}

sm_result sm_world_set_object_params(sm_world *world, int32_t object, const sm_object_params *params)
{
    if (!world || !params || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_object_params: no object %d (the world has %d)", object,
                       world ? world->object_count : 0);
    const sm_object_params *p = params;
    if (p->mode != SM_MODE_RIGID && p->mode != SM_MODE_LINEAR && p->mode != SM_MODE_QUADRATIC)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_object_params: unknown mode %d", (int)p->mode);
    if (!in_unit_interval(p->alpha) || !in_unit_interval(p->beta))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_object_params: alpha and beta must be in [0, 1] (got %g, %g)",
                       p->alpha, p->beta);
    if (!(p->tau >= 0.0) || !isfinite(p->tau) || !(p->damping >= 0.0) || !isfinite(p->damping))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_object_params: tau and damping must be finite and >= 0 (got %g, %g)",
                       p->tau, p->damping);
    if (!valid_strain_limit(p->strain_limit))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_object_params: strain_limit must be in [%g, %g] (got %g)",
                       SM_STRAIN_LIMIT_MIN, SM_STRAIN_LIMIT_MAX, p->strain_limit);
    sm_result result = check_plasticity(&p->plasticity, "sm_world_set_object_params: ");
    if (result != SM_OK) return result;
    sm_object *o = &world->objects[object];
    // a new mode needs the clusters' rest data of that mode (the quadratic moments); a plastic
    // object's rest data live on the device (the host recomputes them from S_p when it pulls, for
    // plastic objects only): bring the state to the host before anything changes
    const bool mode_change = p->mode != o->mode, plastic_on = p->plasticity.enabled && !o->plasticity.enabled;
    if (mode_change || p->plasticity.enabled != o->plasticity.enabled) result = sm_cl_pull(world);
    if (result != SM_OK) return result;
    o->mode = p->mode, o->alpha = p->alpha, o->tau = p->tau, o->beta = p->beta, o->damping = p->damping;
    o->volume_preservation = p->volume_preservation;
    o->volume_by_scaling = p->volume_by_scaling;
    o->plasticity = p->plasticity;
    o->strain_limit = p->strain_limit;
    if (!mode_change && !plastic_on) return sm_cl_write_object(world, object);
    if (mode_change)
        for (int32_t c = o->first_cluster; c < o->first_cluster + o->cluster_count; c++)
            sm_cluster_update_rest(world, &world->clusters[c]);
    sm_cl_mark_host_changed(world); // upload everything before the next step
    return SM_OK;
}

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
        if (reason) *reason = "the world runs on the CPU reference, which has no device buffers";
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
