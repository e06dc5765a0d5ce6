/* Colliders: static and kinematic planes, boxes, spheres and meshes that particles cannot enter.
 * Their scripted motion and their geometry live here, shared by the CPU reference's ground pass
 * and the state the OpenCL backend uploads for its kernel. */
#include "colliders.h"
#include "../../kernels/sm_formulas.h"
#include "math3.h"
#include "memory.h"
#include "world.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SM_DEFINE_SDF_PUSH(sdf_push, ) // kernels/sm_formulas.h, shared with the ground kernel

sm_collider_def sm_collider_def_default(void)
{
    sm_collider_def def;
    memset(&def, 0, sizeof def);
    def.shape = SM_COLLIDER_BOX;
    def.normal = v3(0.0, 1.0, 0.0);
    def.size = v3(1.0, 1.0, 1.0);
    def.radius = 0.5;
    def.restitution = 0.3;
    def.friction = 0.2;
    def.motion.type = SM_MOTION_STATIC;
    def.scale = v3(1.0, 1.0, 1.0);
    def.center = true;
    def.internal_value = SM_DEF_COOKIE;
    return def;
}

static sm_result check_def(const sm_collider_def *d)
{
#define BAD(...) sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: " __VA_ARGS__)
    if (d->internal_value != SM_DEF_COOKIE) return BAD("the def was not made by sm_collider_def_default()");
    if (d->shape != SM_COLLIDER_PLANE && d->shape != SM_COLLIDER_BOX && d->shape != SM_COLLIDER_SPHERE &&
        d->shape != SM_COLLIDER_MESH)
        return BAD("unknown shape %d", (int)d->shape);
    if (d->shape == SM_COLLIDER_MESH) {
        if (!d->mesh || !*d->mesh) return BAD("a mesh collider needs the path of its mesh file");
        if (!(d->scale.x > 0.0 && d->scale.y > 0.0 && d->scale.z > 0.0 && v3_is_finite(d->scale)))
            return BAD("a mesh's scale must be finite and > 0 (got %g, %g, %g)", d->scale.x, d->scale.y, d->scale.z);
        if (!(d->cell >= 0.0 && isfinite(d->cell))) return BAD("a mesh's cell must be finite and >= 0 (got %g)", d->cell);
        if (!(d->thickness >= 0.0 && isfinite(d->thickness)))
            return BAD("a mesh's thickness must be finite and >= 0 (got %g)", d->thickness);
    }
    if (!v3_is_finite(d->position) || !v3_is_finite(d->rotation)) return BAD("position and rotation must be finite");
    sm_vec3 unit; // (any length: 1e200 overflowed its length to infinity and the normal to 0)
    if (d->shape == SM_COLLIDER_PLANE && !v3_direction(d->normal, &unit))
        return BAD("a plane's normal must be finite and non-zero");
    if (d->shape == SM_COLLIDER_BOX && !(d->size.x > 0.0 && d->size.y > 0.0 && d->size.z > 0.0 && v3_is_finite(d->size)))
        return BAD("a box's size must be finite and > 0 (got %g, %g, %g)", d->size.x, d->size.y, d->size.z);
    if (d->shape == SM_COLLIDER_SPHERE && !(d->radius > 0.0 && isfinite(d->radius)))
        return BAD("a sphere's radius must be finite and > 0 (got %g)", d->radius);
    char got[32];
    if (!(d->restitution >= 0.0 && d->restitution <= 1.0))
        return BAD("restitution must be in [0, 1] (got %s)", sm_number_text(d->restitution, got));
    if (!(d->friction >= 0.0 && d->friction <= 1.0)) return BAD("friction must be in [0, 1] (got %s)", sm_number_text(d->friction, got));
    const sm_motion *m = &d->motion;
    switch (m->type) {
    case SM_MOTION_STATIC: break;
    case SM_MOTION_LINEAR:
        if (m->keyframe_count < 1 || !m->times || !m->offsets)
            return BAD("linear motion needs at least one keyframe (times and offsets)");
        for (int32_t k = 0; k < m->keyframe_count; k++) {
            if (!isfinite(m->times[k]) || !v3_is_finite(m->offsets[k])) return BAD("keyframe %d is not finite", k);
            if (k > 0 && !(m->times[k] > m->times[k - 1]))
                return BAD("keyframe times must increase (keyframe %d: %g after %g)", k, m->times[k], m->times[k - 1]);
        }
        break;
    case SM_MOTION_SINUSOIDAL:
        if (!v3_is_finite(m->amplitude) || !(m->frequency >= 0.0 && isfinite(m->frequency)) || !isfinite(m->phase))
            return BAD("sinusoidal motion needs a finite amplitude and phase and a frequency >= 0");
        break;
    default: return BAD("unknown motion type %d", (int)m->type);
    }
    return SM_OK;
#undef BAD
}

/// The thickness of a mesh collider's field: 0 for a closed mesh, else the def's or two cells.
static double shell_thickness(const sm_collider_def *def, bool closed, double cell)
{
    return closed ? 0.0 : (def->thickness > 0.0 ? def->thickness : 2.0 * cell);
}

/// The default cell of a mesh collider's field: the mesh's longest extent / 64, at most half the
/// smallest lattice spacing of the world's objects, coarsened until the field fits
/// SM_MESH_COLLIDER_MAX_NODES nodes and SM_SDF_MAX_WORK node visits to build.
static double default_cell(const sm_world *world, const sm_collider_def *def, bool closed, sm_vec3 extent,
                           const sm_mesh *mesh)
{
    const double longest = fmax(extent.x, fmax(extent.y, extent.z));
    double cell = longest / 64.0;
    for (int32_t o = 0; o < world->object_count; o++)
        if (world->objects[o].spacing > 0.0) cell = fmin(cell, 0.5 * world->objects[o].spacing);
    if (!(cell > 0.0)) cell = 1.0;
    const double want = cell;
    while (sm_sdf_nodes(extent, cell, shell_thickness(def, closed, cell)) > (double)SM_MESH_COLLIDER_MAX_NODES) cell *= 1.1;
    for (int i = 0; i < 400 && !(sm_sdf_work(mesh->vertices, mesh->vertex_count, mesh->triangles, mesh->triangle_count, cell,
                                             shell_thickness(def, closed, cell)) <= SM_SDF_MAX_WORK); i++)
        cell *= 1.1;
    if (cell > want)
        sm_log(world, SM_LOG_NOTICE,
               "sm_world_add_collider: the mesh's field takes cells of %g m rather than %g m (at most %d nodes and "
               "%.3g node visits to build)", cell, want, SM_MESH_COLLIDER_MAX_NODES, SM_SDF_MAX_WORK);
    return cell;
}

/// Whether some node of the field lies inside its mesh (a negative value).
static bool sdf_has_inside(const sm_sdf *sdf)
{
    const int64_t total = (int64_t)sdf->nodes[0] * sdf->nodes[1] * sdf->nodes[2];
    for (int64_t n = 0; n < total; n++)
        if (sdf->value[n] < 0.0f) return true;
    return false;
}

/// Loads a mesh collider's file, places its vertices (scaled, centred) and builds its field.
static sm_result add_mesh(sm_world *world, sm_collider *c, const sm_collider_def *def)
{
    sm_mesh mesh;
    sm_result result = sm_mesh_load_file(def->mesh, &mesh);
    if (result != SM_OK) return result;
    char what[96];
    snprintf(what, sizeof what, "sm_world_add_collider: mesh collider %d", world->collider_count);
    if (mesh.triangle_count < 1) {
        sm_mesh_free(&mesh);
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: %s has no triangles", what, def->mesh);
    }
    // scaled, then centred on its bounding box (as mesh objects are), in the unturned frame
    sm_vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int32_t i = 0; i < mesh.vertex_count; i++) {
        sm_vec3 *p = &mesh.vertices[i];
        *p = v3(p->x * def->scale.x, p->y * def->scale.y, p->z * def->scale.z);
        lo = v3(fmin(lo.x, p->x), fmin(lo.y, p->y), fmin(lo.z, p->z));
        hi = v3(fmax(hi.x, p->x), fmax(hi.y, p->y), fmax(hi.z, p->z));
    }
    const sm_vec3 middle = def->center ? v3_scale(v3_add(lo, hi), 0.5) : v3(0.0, 0.0, 0.0);
    for (int32_t i = 0; i < mesh.vertex_count; i++) mesh.vertices[i] = v3_sub(mesh.vertices[i], middle);
    c->closed = sm_mesh_open_edges(&mesh) == 0;
    const double cell = def->cell > 0.0 ? def->cell : default_cell(world, def, c->closed, v3_sub(hi, lo), &mesh);
    // a closed mesh's field is signed; where no node lies inside it (a solid thinner than a cell,
    // or two faces back to back) it says nothing is, and the mesh is taken as a shell instead
    for (int attempt = 0; attempt < 2 && result == SM_OK; attempt++) {
        const double thickness = shell_thickness(def, c->closed, cell);
        c->def.cell = cell, c->def.thickness = thickness;
        // the field against the memory budget, before it is built (a field past the limit of
        // nodes is refused by sm_sdf_build(), naming the limit)
        const double nodes = sm_sdf_nodes(v3_sub(hi, lo), cell, thickness);
        if (nodes <= (double)SM_MESH_COLLIDER_MAX_NODES) {
            const sm_footprint field = {.field_nodes = (int64_t)nodes};
            result = sm_check_memory(world, &field, what);
        }
        if (result == SM_OK)
            result = sm_sdf_build(mesh.vertices, mesh.vertex_count, mesh.triangles, mesh.triangle_count, cell, thickness,
                                  SM_MESH_COLLIDER_MAX_NODES, what, &c->sdf);
        if (result != SM_OK || !c->closed || sdf_has_inside(&c->sdf)) break;
        sm_log(world, SM_LOG_WARNING,
               "%s: %s is closed, but no node of its field (cells of %g m) lies inside it: it is thinner than a cell, "
               "so it is taken as a shell %g m thick (give a smaller cell to keep it solid)", what, def->mesh, cell,
               shell_thickness(def, false, cell));
        sm_sdf_free(&c->sdf);
        c->closed = false;
    }
    if (result != SM_OK) {
        sm_mesh_free(&mesh);
        return result;
    }
    // the vertices as placed, turned, for drawing; the triangles kept
    for (int32_t i = 0; i < mesh.vertex_count; i++) mesh.vertices[i] = m3_apply(c->axes, mesh.vertices[i]);
    c->vertices = mesh.vertices, c->vertex_count = mesh.vertex_count;
    c->triangles = mesh.triangles, c->triangle_count = mesh.triangle_count;
    sm_log(world, SM_LOG_NOTICE, "%s: %s, %d triangles, %s, a field of %d x %d x %d nodes of %g m", what, def->mesh,
           mesh.triangle_count, c->closed ? "closed (solid)" : "open (a shell)", c->sdf.nodes[0], c->sdf.nodes[1],
           c->sdf.nodes[2], cell);
    return SM_OK;
}

/// On OpenCL, where the collider goes within float (its position with any offset of its motion)
/// and its size within SM_CL_RADIUS_MAX (the kernels square distances of about its size).
static sm_result check_device_range(const sm_world *world, const sm_collider_def *d)
{
#define BAD(...) sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: " __VA_ARGS__)
    if (!world->cl) return SM_OK;
    sm_vec3 reach = v3(fabs(d->position.x), fabs(d->position.y), fabs(d->position.z));
    if (d->motion.type == SM_MOTION_SINUSOIDAL)
        reach = v3_add(reach, v3(fabs(d->motion.amplitude.x), fabs(d->motion.amplitude.y), fabs(d->motion.amplitude.z)));
    for (int32_t k = 0; d->motion.type == SM_MOTION_LINEAR && k < d->motion.keyframe_count; k++) {
        const sm_vec3 o = d->motion.offsets[k];
        reach = v3(fmax(reach.x, fabs(d->position.x + o.x)), fmax(reach.y, fabs(d->position.y + o.y)),
                   fmax(reach.z, fabs(d->position.z + o.z)));
    }
    if (!sm_fits_device(world, reach))
        return BAD("its position, with its motion, reaches (%g, %g, %g) m, beyond the float range of the OpenCL backend "
                   "(%g)", reach.x, reach.y, reach.z, (double)FLT_MAX);
    // and its velocity: a swing's amplitude times 2 pi its frequency, a key's offset over its span
    double speed = 0.0;
    if (d->motion.type == SM_MOTION_SINUSOIDAL)
        speed = 2.0 * SM_PI * d->motion.frequency *
                fmax(fabs(d->motion.amplitude.x), fmax(fabs(d->motion.amplitude.y), fabs(d->motion.amplitude.z)));
    for (int32_t k = 1; d->motion.type == SM_MOTION_LINEAR && k < d->motion.keyframe_count; k++) {
        const sm_vec3 o = v3_sub(d->motion.offsets[k], d->motion.offsets[k - 1]);
        const double span = d->motion.times[k] - d->motion.times[k - 1];
        if (span > 0.0) speed = fmax(speed, fmax(fabs(o.x), fmax(fabs(o.y), fabs(o.z))) / span);
    }
    if (!(speed <= FLT_MAX))
        return BAD("its motion's speed reaches %g m/s, beyond the float range of the OpenCL backend (%g)", speed,
                   (double)FLT_MAX);
    const double size = d->shape == SM_COLLIDER_BOX      ? fmax(d->size.x, fmax(d->size.y, d->size.z))
                        : d->shape == SM_COLLIDER_SPHERE ? d->radius
                                                         : 0.0;
    if (!(size <= SM_CL_RADIUS_MAX))
        return BAD("a %s of %g m is beyond what the float range of the OpenCL backend allows (%g m: its kernels "
                   "square distances of about that size)", d->shape == SM_COLLIDER_BOX ? "box's edge" : "sphere's radius", size,
                   SM_CL_RADIUS_MAX);
    return SM_OK;
#undef BAD
}

/// On OpenCL, the mesh collider's scaled mesh within SM_CL_RADIUS_MAX of its centre.
static sm_result check_device_mesh(const sm_world *world, const sm_collider *c)
{
    double extent = 0.0;
    for (int32_t v = 0; world->cl && v < c->vertex_count; v++)
        extent = fmax(extent, fmax(fabs(c->vertices[v].x), fmax(fabs(c->vertices[v].y), fabs(c->vertices[v].z))));
    if (!(extent <= SM_CL_RADIUS_MAX))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_add_collider: the mesh reaches %g m from its centre, beyond what the float range of the "
                       "OpenCL backend allows (%g m: its kernels square distances of about that size)", extent,
                       SM_CL_RADIUS_MAX);
    return SM_OK;
}

sm_result sm_world_add_collider(sm_world *world, const sm_collider_def *def, int32_t *out_collider)
{
    if (!world || !def) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: world and def must not be NULL");
    sm_result result = check_def(def);
    if (result == SM_OK) result = check_device_range(world, def);
    if (result != SM_OK) return result;
    if (world->collider_count == SM_MAX_COLLIDERS)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: a world holds at most %d colliders", SM_MAX_COLLIDERS);
    if (world->collider_count == world->collider_capacity) {
        const int32_t capacity = world->collider_capacity ? 2 * world->collider_capacity : 4;
        if (!sm_grow((void **)&world->colliders, sizeof *world->colliders, (size_t)capacity))
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding a collider");
        world->collider_capacity = capacity;
    }
    sm_collider c = {.def = *def};
    c.def.motion.times = NULL, c.def.motion.offsets = NULL;
    if (def->motion.type == SM_MOTION_LINEAR) {
        const size_t n = (size_t)def->motion.keyframe_count;
        c.times = malloc(n * sizeof *c.times);
        c.offsets = malloc(n * sizeof *c.offsets);
        if (!c.times || !c.offsets) {
            free(c.times), free(c.offsets);
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding a collider");
        }
        memcpy(c.times, def->motion.times, n * sizeof *c.times);
        memcpy(c.offsets, def->motion.offsets, n * sizeof *c.offsets);
        c.def.motion.times = c.times, c.def.motion.offsets = c.offsets;
    }
    c.axes = sm_rotation_from_euler_degrees(def->shape == SM_COLLIDER_BOX || def->shape == SM_COLLIDER_MESH ? def->rotation
                                                                                                             : v3(0.0, 0.0, 0.0));
    c.def.mesh = NULL;
    if (def->shape == SM_COLLIDER_MESH) {
        result = add_mesh(world, &c, def);
        if (result == SM_OK && (result = check_device_mesh(world, &c)) != SM_OK) {
            free(c.vertices), free(c.triangles);
            sm_sdf_free(&c.sdf);
        }
        if (result != SM_OK) {
            free(c.times), free(c.offsets);
            return result;
        }
    }
    if (def->shape == SM_COLLIDER_PLANE) {
        // an orthonormal frame whose second column is the normal, for drawing
        sm_vec3 n;
        v3_direction(def->normal, &n); // (checked: finite and non-zero)
        const sm_vec3 t = fabs(n.x) < 0.9 ? v3(1.0, 0.0, 0.0) : v3(0.0, 0.0, 1.0);
        const sm_vec3 u = v3_cross(t, n);
        const sm_vec3 a = v3_scale(u, 1.0 / v3_length(u)), b = v3_cross(n, a);
        c.normal = n;
        c.axes = (sm_mat3){{{b.x, n.x, a.x}, {b.y, n.y, a.y}, {b.z, n.z, a.z}}};
    }
    world->colliders[world->collider_count] = c;
    if (out_collider) *out_collider = world->collider_count;
    world->collider_count++;
    return SM_OK;
}

void sm_colliders_free(sm_world *world)
{
    for (int32_t i = 0; i < world->collider_count; i++) {
        sm_collider *c = &world->colliders[i];
        free(c->times), free(c->offsets), free(c->vertices), free(c->triangles);
        sm_sdf_free(&c->sdf);
    }
    free(world->colliders);
}

void sm_collider_state(const sm_collider *c, double t, sm_vec3 *center, sm_vec3 *velocity)
{
    const sm_motion *m = &c->def.motion;
    sm_vec3 offset = v3(0.0, 0.0, 0.0), v = v3(0.0, 0.0, 0.0);
    if (m->type == SM_MOTION_LINEAR) {
        const int32_t last = m->keyframe_count - 1;
        if (t <= m->times[0]) {
            offset = m->offsets[0];
        } else if (t >= m->times[last]) {
            offset = m->offsets[last];
        } else {
            int32_t k = 0;
            while (t >= m->times[k + 1]) k++;
            const double span = m->times[k + 1] - m->times[k];
            v = v3_scale(v3_sub(m->offsets[k + 1], m->offsets[k]), 1.0 / span);
            offset = v3_add(m->offsets[k], v3_scale(v, t - m->times[k]));
        }
    } else if (m->type == SM_MOTION_SINUSOIDAL) {
        const double omega = 2.0 * SM_PI * m->frequency;
        const double angle = omega * t + m->phase * (SM_PI / 180.0);
        offset = v3_scale(m->amplitude, sin(angle));
        v = v3_scale(m->amplitude, omega * cos(angle));
    }
    *center = v3_add(c->def.position, offset);
    *velocity = v;
}

bool sm_collider_push_out(const sm_collider *c, sm_vec3 d, sm_vec3 *push, sm_vec3 *normal)
{
    switch (c->def.shape) {
    case SM_COLLIDER_PLANE: {
        const double s = v3_dot(d, c->normal);
        if (!(s < 0.0)) return false;
        *normal = c->normal;
        *push = v3_scale(c->normal, -s);
        return true;
    }
    case SM_COLLIDER_SPHERE: {
        const double distance = v3_length(d);
        if (!(distance < c->def.radius)) return false;
        *normal = distance > 0.0 ? v3_scale(d, 1.0 / distance) : v3(0.0, 1.0, 0.0);
        *push = v3_scale(*normal, c->def.radius - distance);
        return true;
    }
    case SM_COLLIDER_BOX: {
        // in the box's frame: inside when within every half extent; out through the nearest face
        const sm_vec3 local = m3_apply(m3_transpose(c->axes), d);
        const double half[3] = {0.5 * c->def.size.x, 0.5 * c->def.size.y, 0.5 * c->def.size.z};
        int best = -1;
        double best_depth = 0.0;
        for (int k = 0; k < 3; k++) {
            const double depth = half[k] - fabs(v3_get(local, k));
            if (!(depth > 0.0)) return false;
            if (best < 0 || depth < best_depth) best = k, best_depth = depth;
        }
        const double sign = v3_get(local, best) < 0.0 ? -1.0 : 1.0;
        const sm_vec3 axis = v3(c->axes.m[0][best], c->axes.m[1][best], c->axes.m[2][best]);
        *normal = v3_scale(axis, sign);
        *push = v3_scale(*normal, best_depth);
        return true;
    }
    case SM_COLLIDER_MESH: {
        // in the mesh's unturned frame, out along the field's gradient by its depth
        const sm_vec3 local = m3_apply(m3_transpose(c->axes), d);
        const double p[3] = {local.x, local.y, local.z}, origin[3] = {c->sdf.origin.x, c->sdf.origin.y, c->sdf.origin.z};
        double move[3], n[3];
        if (!sdf_push_out(c->sdf.value, c->sdf.nodes, origin, c->sdf.cell, p, move, n)) return false;
        *normal = m3_apply(c->axes, v3(n[0], n[1], n[2]));
        *push = m3_apply(c->axes, v3(move[0], move[1], move[2]));
        return true;
    }
    }
    return false;
}

int32_t sm_world_get_collider_count(const sm_world *world) { return world ? world->collider_count : 0; }

double sm_world_get_time(const sm_world *world) { return world ? world->time : 0.0; }

sm_result sm_world_get_collider(const sm_world *world, int32_t collider, sm_collider_info *out)
{
    if (!world || !out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider: world and out must not be NULL");
    if (collider < 0 || collider >= world->collider_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider: no collider %d (the world has %d)", collider,
                       world->collider_count);
    const sm_collider *c = &world->colliders[collider];
    memset(out, 0, sizeof *out);
    out->shape = c->def.shape;
    sm_collider_state(c, world->time, &out->center, &out->velocity);
    out->axes = c->axes;
    out->size = c->def.size;
    out->radius = c->def.radius;
    if (c->def.shape == SM_COLLIDER_MESH) {
        out->cell = c->sdf.cell;
        memcpy(out->nodes, c->sdf.nodes, sizeof out->nodes);
        out->closed = c->closed;
    }
    return SM_OK;
}

sm_result sm_world_get_collider_mesh(const sm_world *world, int32_t collider, const sm_vec3 **out_vertices,
                                     int32_t *out_vertex_count, const int32_t **out_triangles, int32_t *out_triangle_count)
{
    if (!world || !out_vertices || !out_vertex_count || !out_triangles || !out_triangle_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider_mesh: world and outputs must not be NULL");
    if (collider < 0 || collider >= world->collider_count || world->colliders[collider].def.shape != SM_COLLIDER_MESH)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider_mesh: collider %d is not a mesh collider", collider);
    const sm_collider *c = &world->colliders[collider];
    *out_vertices = c->vertices, *out_vertex_count = c->vertex_count;
    *out_triangles = c->triangles, *out_triangle_count = c->triangle_count;
    return SM_OK;
}
