/* shapematch-view's session (session.h): the world and its objects' origins, the scene's
 * bounds, framing and following, what lies under the cursor, cuts, edits, drops and reset. */
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The world ------------------------------------------------------------------------------ */

sm_vec3 *view_object_stats(const sm_world *world, int32_t *out_count)
{
    const sm_counts counts = sm_world_get_counts(world);
    sm_vec3 *stats = calloc((size_t)(counts.objects > 0 ? 2 * counts.objects : 1), sizeof *stats);
    double *x = malloc(sizeof(double) * 3 * (size_t)(counts.particles > 0 ? counts.particles : 1));
    double *m = malloc(sizeof(double) * (size_t)(counts.particles > 0 ? counts.particles : 1));
    if (!stats || !x || !m || sm_world_get_positions(world, 0, counts.particles, x) != SM_OK ||
        sm_world_get_masses(world, 0, counts.particles, m) != SM_OK) {
        free(x), free(m), free(stats);
        return NULL;
    }
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        double total = 0.0, spread = 0.0;
        sm_vec3 c = {0, 0, 0};
        const int32_t *list = NULL;
        int32_t count = 0;
        sm_world_get_object_particles(world, o, &list, &count);
        for (int32_t k = 0; k < count; k++) {
            const int32_t i = list[k];
            c.x += m[i] * x[3 * i], c.y += m[i] * x[3 * i + 1], c.z += m[i] * x[3 * i + 2];
            total += m[i];
        }
        if (total > 0.0) c = (sm_vec3){c.x / total, c.y / total, c.z / total};
        for (int32_t k = 0; k < count; k++) {
            const int32_t i = list[k];
            spread += m[i] * ((x[3 * i] - c.x) * (x[3 * i] - c.x) + (x[3 * i + 1] - c.y) * (x[3 * i + 1] - c.y) +
                              (x[3 * i + 2] - c.z) * (x[3 * i + 2] - c.z));
        }
        stats[2 * o] = c;
        stats[2 * o + 1] = (sm_vec3){total > 0.0 ? sqrt(spread / total) : 0.0, 0.0, 0.0};
    }
    free(x), free(m);
    *out_count = counts.objects;
    return stats;
}

/// Reads every position into v->host_xyzw (for picking, and every frame for following: the
/// buffer is kept between reads).
static bool read_positions(viewer *v)
{
    const int32_t n = sm_world_get_counts(v->world).particles;
    if (n > v->host_capacity || !v->host_xyzw) {
        free(v->host_xyzw);
        v->host_capacity = n > 0 ? n : 1;
        v->host_xyzw = malloc(sizeof(float) * 4 * (size_t)v->host_capacity);
        if (!v->host_xyzw) v->host_capacity = 0;
    }
    return v->host_xyzw && sm_world_get_float4(v->world, SM_FIELD_POSITION, 0, n, v->host_xyzw) == SM_OK;
}

/// (Re)builds the particle and surface buffers for the world as it is now.
static bool build_buffers(viewer *v, char *error, size_t error_size)
{
    if (!particles_build(&v->particles, v->world, v->interop, error, error_size) ||
        !surfaces_build(&v->surfaces, v->world, v->interop, error, error_size))
        return false;
    if (v->surfaces.note[0]) view_say("surfaces: not shared with OpenCL (%s): copied through the host", v->surfaces.note);
    return true;
}

/// Inserts `origin` as that of object `at` (the objects from `at` on move up one); false when out of memory.
static bool insert_origin(viewer *v, int32_t at, object_origin origin)
{
    if (v->origin_count == v->origin_capacity) {
        const int32_t capacity = v->origin_capacity ? 2 * v->origin_capacity : 64;
        object_origin *grown = realloc(v->origins, sizeof *grown * (size_t)capacity);
        if (!grown) return false;
        v->origins = grown, v->origin_capacity = capacity;
    }
    if (at < 0 || at > v->origin_count) at = v->origin_count;
    memmove(v->origins + at + 1, v->origins + at, sizeof *v->origins * (size_t)(v->origin_count - at));
    v->origins[at] = origin;
    v->origin_count++;
    return true;
}

bool view_open_world(viewer *v, char *error, size_t error_size)
{
    if (sm_scene_create_world(v->scene, &v->def, &v->world) != SM_OK) {
        char shown[1024]; // the scene file named, as the shapematch command does
        snprintf(error, error_size, "%s: %s", sm_printable(v->opt.scene, shown, sizeof shown), sm_last_error());
        return false;
    }
    const char *reason = "";
    v->interop = v->opt.interop != INTEROP_OFF && sm_world_gl_sharing(v->world, &reason);
    if (v->opt.interop == INTEROP_ON && !v->interop) {
        snprintf(error, error_size, "--interop on: CL-GL sharing is not available here: %s", reason);
        return false;
    }
    if (v->interop)
        snprintf(v->interop_text, sizeof v->interop_text, "CL-GL sharing (device-to-device copy, no host copy)");
    else if (v->opt.interop == INTEROP_OFF)
        snprintf(v->interop_text, sizeof v->interop_text, "fallback: host copy into a mapped GL buffer (--interop off)");
    else
        snprintf(v->interop_text, sizeof v->interop_text, "fallback: host copy into a mapped GL buffer (%s)", reason);
    if (!build_buffers(v, error, error_size)) return false;
    free(v->start_stats);
    v->start_objects = 0;
    v->start_stats = view_object_stats(v->world, &v->start_objects);
    v->origin_count = 0;
    for (int32_t o = 0; o < sm_world_get_counts(v->world).objects; o++)
        if (!insert_origin(v, o, (object_origin){o, false})) {
            snprintf(error, error_size, "out of memory");
            return false;
        }
    tools_init(&v->tools);
    v->last_profile = sm_world_get_profile(v->world);
    return true;
}

void view_bounds(viewer *v, sm_vec3 *lo, sm_vec3 *hi)
{
    *lo = (sm_vec3){-1, -1, -1}, *hi = (sm_vec3){1, 1, 1};
    const int32_t n = v->particles.count;
    if (n == 0 || !read_positions(v)) return;
    sm_vec3 a = {INFINITY, INFINITY, INFINITY}, b = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < n; i++) {
        const float *p = v->host_xyzw + 4 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) continue;
        a.x = fmin(a.x, p[0]), a.y = fmin(a.y, p[1]), a.z = fmin(a.z, p[2]);
        b.x = fmax(b.x, p[0]), b.y = fmax(b.y, p[1]), b.z = fmax(b.z, p[2]);
    }
    if (a.x <= b.x) *lo = a, *hi = b;
}

/// Grows [lo, hi] over the world's boxes and spheres where they are now (planes are endless), so
/// that the camera starts outside a plate that presses the objects.
static void add_colliders(const viewer *v, sm_vec3 *lo, sm_vec3 *hi)
{
    for (int32_t i = 0; i < sm_world_get_collider_count(v->world); i++) {
        sm_collider_info c;
        if (sm_world_get_collider(v->world, i, &c) != SM_OK || c.shape == SM_COLLIDER_PLANE) continue;
        double half[3] = {c.radius, c.radius, c.radius};
        const sm_vec3 *vertices;
        const int32_t *triangles;
        int32_t vertex_count, triangle_count;
        if (c.shape == SM_COLLIDER_MESH &&
            sm_world_get_collider_mesh(v->world, i, &vertices, &vertex_count, &triangles, &triangle_count) == SM_OK) {
            half[0] = half[1] = half[2] = 0.0; // the farthest vertex along each axis
            for (int32_t k = 0; k < vertex_count; k++)
                half[0] = fmax(half[0], fabs(vertices[k].x)), half[1] = fmax(half[1], fabs(vertices[k].y)),
                half[2] = fmax(half[2], fabs(vertices[k].z));
        }
        if (c.shape == SM_COLLIDER_BOX)
            for (int row = 0; row < 3; row++) // the box's extent along each world axis
                half[row] = 0.5 * (fabs(c.axes.m[row][0]) * c.size.x + fabs(c.axes.m[row][1]) * c.size.y +
                                   fabs(c.axes.m[row][2]) * c.size.z);
        lo->x = fmin(lo->x, c.center.x - half[0]), hi->x = fmax(hi->x, c.center.x + half[0]);
        lo->y = fmin(lo->y, c.center.y - half[1]), hi->y = fmax(hi->y, c.center.y + half[1]);
        lo->z = fmin(lo->z, c.center.z - half[2]), hi->z = fmax(hi->z, c.center.z + half[2]);
    }
}

void view_frame_scene(viewer *v)
{
    sm_vec3 lo, hi;
    view_bounds(v, &lo, &hi);
    add_colliders(v, &lo, &hi);
    v->camera = camera_frame(lo, hi, v->renderer.width, v->renderer.height);
    v->follow.moving = false;
}

void view_stop_following(viewer *v)
{
    if (!v->follow.on) return;
    v->follow.on = v->follow.moving = false;
    view_status(v, "camera: following off (T follows the objects again)");
}

void view_follow_objects(viewer *v, double seconds)
{
    if (!v->follow.on || v->tools.dragging >= 0 || v->tools.push_mode) return;
    if (v->particles.count > 0 && read_positions(v))
        camera_follow(&v->camera, &v->follow, v->host_xyzw, v->particles.count, v->particles.max_radius, seconds);
}

/* ---- Under the cursor ----------------------------------------------------------------------- */

view_ray view_cursor_ray(const viewer *v) { return camera_ray(&v->camera, v->cursor_x, v->cursor_y); }

int32_t view_particle_under_cursor(viewer *v)
{
    if (v->particles.count == 0 || !read_positions(v)) return -1;
    return tools_pick_particle(v->host_xyzw, v->particles.radius, v->particles.count, 0.0, view_cursor_ray(v), NULL);
}

double view_target_radius(const viewer *v) { return fmax(0.8 * v->particles.max_radius, 0.01 * v->extent); }

double view_push_radius(const viewer *v) { return 0.12 * v->extent; }

double view_cut_reach(const viewer *v) { return fmax(0.15 * v->extent, 2.0 * v->particles.max_radius); }

view_blades view_blades_now(viewer *v)
{
    double depth = camera_depth(&v->camera, v->camera.target);
    const int32_t i = view_particle_under_cursor(v);
    if (i >= 0) depth = camera_depth(&v->camera, (sm_vec3){v->host_xyzw[4 * i], v->host_xyzw[4 * i + 1], v->host_xyzw[4 * i + 2]});
    return tools_blades(&v->camera, view_cursor_ray(v), v->tools.cut_angle, depth);
}

/* ---- Changes to the world ------------------------------------------------------------------- */

bool view_take_cuts(viewer *v, bool by_scene)
{
    const sm_cut_info *cuts = NULL;
    int32_t count = 0;
    if (sm_world_get_cuts(v->world, &cuts, &count) != SM_OK || count <= v->cuts_seen) return true;
    int32_t objects = 0;
    sm_vec3 *stats = view_object_stats(v->world, &objects);
    for (int32_t k = v->cuts_seen; k < count; k++) {
        const sm_cut_info *c = &cuts[k];
        view_say("%scut object %d into %d and %d (%d + %d particles)", by_scene ? "scene: " : "", c->back_object,
            c->back_object, c->front_object, c->back_particles, c->front_particles);
        // the front piece comes from the same object as the back one
        if (c->back_object < v->origin_count) {
            v->origins[c->back_object].piece = true;
            if (!insert_origin(v, c->front_object, v->origins[c->back_object])) v->quit = v->failed = true;
        }
        if (v->cut_count < (int)(sizeof v->cuts / sizeof v->cuts[0])) {
            cut_record *r = &v->cuts[v->cut_count++];
            *r = (cut_record){.frame = v->frame, .scene = by_scene, .info = *c};
            if (stats && c->back_object < objects) r->back_centre = stats[2 * c->back_object];
            if (stats && c->front_object < objects) r->front_centre = stats[2 * c->front_object];
        }
    }
    free(stats);
    v->cuts_seen = count;
    char error[512];
    if (!build_buffers(v, error, sizeof error)) {
        view_status(v, "error: %s", error);
        v->quit = v->failed = true;
        return false;
    }
    return true;
}

void view_edit_object(viewer *v, const char *key)
{
    const int32_t i = view_particle_under_cursor(v);
    if (i < 0) {
        view_status(v, "no object under the cursor");
        return;
    }
    const int32_t object = v->particles.object[i];
    sm_object_params p;
    sm_world_get_object_params(v->world, object, &p);
    switch (key[0]) {
    case '1': p.mode = SM_MODE_RIGID; break;
    case '2': p.mode = SM_MODE_LINEAR; break;
    case '3': p.mode = SM_MODE_QUADRATIC; break;
    case 'Q': p.alpha = fmin(1.0, p.alpha + 0.05); break;
    case 'A': p.alpha = fmax(0.0, p.alpha - 0.05); break;
    case 'W': p.beta = fmin(1.0, p.beta + 0.05); break;
    case 'S': p.beta = fmax(0.0, p.beta - 0.05); break;
    }
    if (sm_world_set_object_params(v->world, object, &p) != SM_OK) {
        view_status(v, "%s", sm_last_error());
        return;
    }
    view_status(v, "object %d: %s, alpha %.2f, beta %.2f", object, sm_mode_name(p.mode), p.alpha, p.beta);
}

void view_drop_object(viewer *v)
{
    char error[512];
    const int32_t count = v->info.object_count;
    if (count == 0) return;
    sm_object_def def = *sm_scene_object_def(v->scene, v->spawned % count);
    const sm_vec3 p = camera_point_at_depth(&v->camera, view_cursor_ray(v), camera_depth(&v->camera, v->camera.target));
    def.position = (sm_vec3){p.x, fmax(p.y, v->hi.y) + 0.3 * v->extent, p.z};
    def.linear_velocity = def.angular_velocity = (sm_vec3){0, 0, 0};
    def.name = NULL;
    int32_t object = -1;
    if (sm_world_add_object(v->world, &def, &object) != SM_OK) {
        view_status(v, "cannot drop an object: %s", sm_last_error());
        return;
    }
    v->spawned++;
    if (!insert_origin(v, object, (object_origin){-1, false})) {
        view_status(v, "error: out of memory");
        v->quit = v->failed = true;
        return;
    }
    if (!build_buffers(v, error, sizeof error)) {
        view_status(v, "error: %s", error);
        v->quit = v->failed = true;
        return;
    }
    view_status(v, "dropped object %d at (%.2f, %.2f, %.2f)", object, def.position.x, def.position.y, def.position.z);
}

void view_reset(viewer *v)
{
    char error[512];
    sm_world_destroy(v->world);
    v->world = NULL;
    tools_forget(&v->tools);
    if (!view_open_world(v, error, sizeof error)) {
        view_say("error: %s", error);
        v->quit = v->failed = true;
        return;
    }
    v->sim_time = 0.0, v->accumulator = 0.0;
    v->pick_count = 0; // the picks were of the old world's particles
    v->cut_count = 0;  // and the cuts of its objects
    v->cuts_seen = 0;
    v->cut_closed = 0;
    v->follow.moving = false;
    view_status(v, "scene reset");
}
