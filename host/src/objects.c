/* Adding objects: their defs checked, their particles sampled and placed, their clusters and
 * surfaces built; and their parameters changed while the world runs. */
#include "objects.h"
#include "clusters.h"
#include "math3.h"
#include "memory.h"
#include "opencl/cl_backend.h"
#include "shapes.h"
#include "surfaces.h"
#include "world.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    if (!sm_in_unit_interval(d->alpha)) BAD("alpha must be in [0, 1] (got %g)", d->alpha);
    if (!(d->tau >= 0.0) || !isfinite(d->tau)) BAD("tau must be a positive time in s, or 0 to use alpha (got %g)", d->tau);
    if (!sm_in_unit_interval(d->beta)) BAD("beta must be in [0, 1] (got %g)", d->beta);
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

/// Checks the particles first to first + count - 1 just placed: finite velocities and, on
/// OpenCL, masses, positions, velocities, forces and the object's second moment within float.
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
            if (!sm_fits_device(world, values[k].value))
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

/// On OpenCL, each new cluster's scales within the normal floats: the device sums products m y q^T
/// (and in quadratic mode m y w^T, with weights w of about 1 / (M s^2) applied to quadratic terms
/// of about s^2), so for the cluster's size s (its largest rest offset) and smallest member mass
/// m, s^2 and m s^2 must be at least FLT_MIN (M s^2 at most FLT_MAX is the object's second
/// moment, checked before). Below, the sums are subnormal or 0 and the fit silently wrong: a
/// linear box of 1e-20 m spinning on the device ended 15% of its size from the reference's, and
/// a quadratic one's weights were not finite. A cluster of size 0 (one particle, or all at one
/// point) forms no moments.
static sm_result check_cluster_scales(const sm_world *world, const sm_vec3 *local, const double *masses,
                                      const int32_t *offsets, const int32_t *indices, const int32_t *holders,
                                      int32_t cluster_count)
{
    if (!world->cl) return SM_OK;
    for (int32_t c = 0; c < cluster_count; c++) {
        double least = INFINITY, mass = 0.0, size = 0.0;
        sm_vec3 center = {0, 0, 0};
        bool one_point = true;
        for (int32_t j = offsets[c]; j < offsets[c + 1]; j++) {
            const double m = sm_member_mass(masses[indices[j]], holders[j]);
            mass += m, least = fmin(least, m);
            center = v3_add(center, v3_scale(local[indices[j]], m));
            one_point = one_point && v3_equal(local[indices[j]], local[indices[offsets[c]]]);
        }
        // (as sm_world_append_cluster() centres it)
        center = one_point ? local[indices[offsets[c]]] : v3_scale(center, 1.0 / mass);
        for (int32_t j = offsets[c]; j < offsets[c + 1]; j++)
            size = fmax(size, v3_length(v3_sub(local[indices[j]], center)));
        if (size > 0.0 && !(size * size >= FLT_MIN && least * size * size >= FLT_MIN))
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "cluster %d: its size %g m (its largest rest offset) squared, or that times its smallest "
                           "membership's mass %g kg (a particle's mass shared by its clusters), is below the smallest "
                           "normal float (%g), so the OpenCL backend's moments would be lost to rounding: use the CPU "
                           "backend or larger units",
                           c, size, least, (double)FLT_MIN);
    }
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
    int32_t *grid_offsets = NULL, *grid_indices = NULL, *holders = NULL;
    char *name = NULL;
    result = sm_shape_sample(&def->shape, def->mass, &local, &masses, &count);
    if (result != SM_OK) return result;
    if (def->shape.type == SM_SHAPE_MESH && def->shape.mesh_particles == SM_MESH_PARTICLES_LATTICE &&
        count > adds.particles) {
        // the lattice inside a mesh was only estimated (from its volume, about 0 for a thin mesh):
        // the budget again, with the particles sampled
        adds = sm_object_footprint_of(world, def, count);
        char what[96];
        snprintf(what, sizeof what, "the lattice of %d particles inside the mesh", count);
        result = sm_check_memory(world, &adds, what);
        if (result != SM_OK) goto done;
    }
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
    holders = sm_cluster_holders(offsets, indices, cluster_count, count);
    if (!holders) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding an object");
        goto done;
    }
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
        world->move_slack[first + i] = 0.0;
        world->start_velocity[first + i] = v3(0.0, 0.0, 0.0);
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
    if (result == SM_OK) result = check_cluster_scales(world, local, masses, offsets, indices, holders, cluster_count);
    if (result != SM_OK) goto done;
    // a skinned surface's vertices, placed like the particles, within the device's floats too
    for (int32_t v = 0; world->cl && v < def->surface.vertex_count && def->surface.vertices; v++) {
        const sm_vec3 x = v3_add(def->position, m3_apply(rot, def->surface.vertices[v]));
        if (!sm_fits_device(world, x)) {
            result = sm_fail(SM_ERROR_INVALID_ARGUMENT,
                             "surface vertex %d: its position (%g, %g, %g) is beyond the float range of the OpenCL backend "
                             "(%g)", v, x.x, x.y, x.z, (double)FLT_MAX);
            goto done;
        }
    }

    // contact: the radius given, else radius_scale x half the lattice spacing
    const sm_collisions *collisions = &world->def.collisions;
    const double spacing = sm_shape_spacing(&def->shape, local, count);
    double radius = def->collisions.radius;
    const double scale = def->collisions.radius_scale > 0.0 ? def->collisions.radius_scale : collisions->radius_scale;
    if (!(radius > 0.0)) radius = 0.5 * scale * spacing;
    const bool collides = collisions->enabled && def->collisions.enabled && radius > 0.0;
    if (collides && world->cl && !(radius <= SM_CL_RADIUS_MAX)) {
        char from[160];
        if (def->collisions.radius > 0.0)
            snprintf(from, sizeof from, "collisions.radius");
        else
            snprintf(from, sizeof from, "%s %g x half the lattice spacing %g m",
                     def->collisions.radius_scale > 0.0 ? "collisions.radius_scale" : "the world's collisions.radius_scale",
                     scale, spacing);
        result = sm_fail(SM_ERROR_INVALID_ARGUMENT,
                         "the collision radius %g m (from %s) is beyond the OpenCL backend's limit of %g m (its float "
                         "contact search squares the sum of two radii); use a smaller radius, the CPU backend or "
                         "larger units", radius, from, SM_CL_RADIUS_MAX);
        goto done;
    }
    memset(world->target + 4 * (size_t)first, 0, 4 * sizeof(double) * (size_t)count); // no targets
    sm_cl_forget_position_split(world, first, count);
    for (int32_t f = 0; f < def->fixed_count; f++) {
        world->fixed[first + def->fixed[f]] = 1;
        world->velocity[first + def->fixed[f]] = v3(0, 0, 0); // it never moves, so it reports rest
    }

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
        sm_world_append_cluster(world, object_index, first, indices + offsets[c], holders + offsets[c],
                                offsets[c + 1] - offsets[c], m3_identity());
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
    free(holders);
    return result;
}

void sm_world_append_cluster(sm_world *world, int32_t object, int32_t first, const int32_t *members,
                             const int32_t *holders, int32_t count, sm_mat3 plastic)
{
    sm_cluster *cluster = &world->clusters[world->cluster_count];
    memset(cluster, 0, sizeof *cluster);
    cluster->object = object;
    cluster->first_member = world->membership_count;
    cluster->member_count = count;
    sm_vec3 weighted = {0, 0, 0};
    bool one_point = true;
    const sm_vec3 x0 = world->rest_position[first + members[0]];
    for (int32_t j = 0; j < count; j++) {
        const int32_t i = first + members[j];
        const double m = sm_member_mass(world->mass[i], holders[j]);
        cluster->mass += m;
        cluster->anchored = cluster->anchored || world->fixed[i];
        weighted = v3_add(weighted, v3_scale(world->rest_position[i], m));
        one_point = one_point && v3_equal(world->rest_position[i], x0);
    }
    // a cluster of one particle, or of particles at one point, is centred on it exactly: the
    // rounding of m x / m would give it a size (1e-17 m at 100 m), whose moments on a float
    // device are below the normal floats (a one-particle piece of a cut turned NaN)
    cluster->rest_center = one_point ? x0 : v3_scale(weighted, 1.0 / cluster->mass);
    for (int32_t j = 0; j < count; j++) {
        const int32_t k = world->membership_count++, i = first + members[j];
        world->member_particle[k] = i;
        world->member_cluster[k] = world->cluster_count;
        world->member_rest[k] = v3_sub(world->rest_position[i], cluster->rest_center);
        world->member_mass[k] = sm_member_mass(world->mass[i], holders[j]);
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
    if (!sm_in_unit_interval(p->alpha) || !sm_in_unit_interval(p->beta))
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

