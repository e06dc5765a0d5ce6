/* shapematch-view: a window on a running scene. The simulation advances in fixed steps of the
 * scene's dt, decoupled from the frame rate (an accumulator, at most --max-steps steps per
 * frame: a slow frame drops time instead of spiralling); the particles and skinned surfaces are
 * drawn from the simulation's buffers (CL-GL interop, or a copy through a mapped buffer), the
 * colliders where they are at each frame; the mouse picks, drags, locks, pushes and cuts (tools.h);
 * --frames, --screenshot, --record and --script run it without a person. */
#include "camera.h"
#include "headless.h"
#include "native.h"
#include "options.h"
#include "particles_gl.h"
#include "render.h"
#include "script.h"
#include "surfaces_gl.h"
#include "tools.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *help_text =
    "mouse\n"
    "  left drag on a particle   pull it with a spring (wheel: target nearer / farther)\n"
    "  right click while pulling lock the spring in place; left drag on its red ball regrabs it\n"
    "  left drag elsewhere       orbit            right drag      orbit\n"
    "  middle or shift+right     pan              wheel           zoom\n"
    "keys\n"
    "  P      pick / push mode (push: a sphere follows the cursor; wheel: nearer / farther)\n"
    "  X      cut mode: scissors follow the cursor, left click cuts (shift+wheel: turn the blades)\n"
    "  C      remove all springs            O      drop a new object under the cursor\n"
    "  1 2 3  rigid / linear / quadratic mode of the object under the cursor\n"
    "  Q A    alpha +/- 0.05 of the object under the cursor\n"
    "  W S    beta +/- 0.05 of the object under the cursor\n"
    "  K      colour by object / cluster / strain\n"
    "  M      draw surfaces / particles / both (objects with a skinned surface)\n"
    "  T      follow the objects on / off (on at the start; a pan or a zoom turns it off)\n"
    "  SPACE  pause            N  single step (paused)          R  reset the scene\n"
    "  F      frame the scene  H  this help                     ESC  quit";

/// What is drawn of the objects that have a skinned surface (the others always show their particles).
typedef enum draw_mode { DRAW_SURFACES, DRAW_PARTICLES, DRAW_BOTH, DRAW_MODE_COUNT } draw_mode;

/// One pick, for the report.
typedef struct pick_record {
    int64_t frame;
    int32_t particle, object;
    sm_vec3 position;
} pick_record;

/// One cut, for the report: what the world reported of it (sm_world_get_cuts()), and the
/// centres of mass of its pieces right after it.
typedef struct cut_record {
    int64_t frame;
    bool scene; ///< scripted by the scene's "cuts", else made with the scissors
    sm_cut_info info;
    sm_vec3 back_centre, front_centre;
} cut_record;

/// Where an object of the world came from, for the report.
typedef struct object_origin {
    int32_t start; ///< its index in the scene at the start (or the one it is a piece of), -1: dropped with O
    bool piece;    ///< a piece of a cut
} object_origin;

/// Frames the blades stay drawn closed after a cut.
#define CUT_CLOSED_FRAMES 8

typedef struct viewer {
    options opt;
    GLFWwindow *window;   ///< NULL when headless
    headless_gl headless; ///< the EGL context of --headless
    bool has_gl;          ///< a context is current: the GL objects exist
    double last_start;    ///< when the frame loop began
    double run_seconds;   ///< wall time of the frame loop, for the report's frames per second
    sm_scene *scene;
    sm_scene_info info;
    sm_world_def def;
    sm_world *world;
    view_particles particles;
    view_surfaces surfaces;
    draw_mode draw_mode;
    view_renderer renderer;
    view_camera camera;
    view_follow follow; ///< the camera keeps the objects in view (T)
    view_tools tools;
    view_script script;
    view_colour colour;
    bool paused, step_once, help, quit;
    bool failed; ///< quit because something failed: exit status 1, no screenshot or report
    // the mouse
    double cursor_x, cursor_y;
    bool orbiting, panning;
    bool script_shift; ///< shift held by the script (mod shift on)
    int cut_closed;    ///< frames left to draw the blades closed
    // time
    int64_t frame, steps;
    double sim_time, accumulator;
    // the scene's extent at the start and the state the report compares with
    sm_vec3 lo, hi;
    double extent;
    sm_vec3 *start_stats; ///< object_stats() at the start
    int32_t start_objects;
    int spawned;
    object_origin *origins; ///< per object of the world now
    int32_t origin_count, origin_capacity;
    // interop
    bool interop;
    char interop_text[320];
    // overlay figures, refreshed twice a second
    double fps, step_ms, pass_ms[SM_PASS_COUNT], last_sample_time;
    int64_t last_sample_frame;
    sm_profile last_profile;
    char status[200];
    char overlay[2048]; ///< the overlay's text as last drawn (before render_text() breaks its lines), for the report
    // report
    pick_record picks[256];
    int pick_count;
    cut_record cuts[256];
    int cut_count;
    int32_t cuts_seen; ///< the world's cuts taken so far (sm_world_get_cuts())
    float *host_xyzw; ///< positions read for picking and following
    int32_t host_capacity; ///< particles host_xyzw has room for
} viewer;

static void say(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("shapematch-view: ");
    vprintf(format, args);
    printf("\n");
    fflush(stdout);
    va_end(args);
}

static void status(viewer *v, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(v->status, sizeof v->status, format, args);
    va_end(args);
    say("%s", v->status);
}

static void log_callback(sm_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != SM_LOG_NOTICE) say("%s", message);
}

/* ---- The world ------------------------------------------------------------------------------ */

/// Centre of mass and RMS distance of the particles from it, per object (malloc'd, 2 per object:
/// the centre, then (rms, 0, 0)).
static sm_vec3 *object_stats(const sm_world *world, int32_t *out_count)
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
    if (v->surfaces.note[0]) say("surfaces: not shared with OpenCL (%s): copied through the host", v->surfaces.note);
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

/// Creates the world from the scene and the particle buffers; false with a message on failure.
static bool open_world(viewer *v, char *error, size_t error_size)
{
    if (sm_scene_create_world(v->scene, &v->def, &v->world) != SM_OK) {
        snprintf(error, error_size, "%s", sm_last_error());
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
    v->start_stats = object_stats(v->world, &v->start_objects);
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

/// The bounding box of the particles now (those with a finite position: one that diverged is
/// left out), else the box of side 2 about the origin.
static void bounds(viewer *v, sm_vec3 *lo, sm_vec3 *hi)
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
        if (c.shape == SM_COLLIDER_BOX)
            for (int row = 0; row < 3; row++) // the box's extent along each world axis
                half[row] = 0.5 * (fabs(c.axes.m[row][0]) * c.size.x + fabs(c.axes.m[row][1]) * c.size.y +
                                   fabs(c.axes.m[row][2]) * c.size.z);
        lo->x = fmin(lo->x, c.center.x - half[0]), hi->x = fmax(hi->x, c.center.x + half[0]);
        lo->y = fmin(lo->y, c.center.y - half[1]), hi->y = fmax(hi->y, c.center.y + half[1]);
        lo->z = fmin(lo->z, c.center.z - half[2]), hi->z = fmax(hi->z, c.center.z + half[2]);
    }
}

static void frame_scene(viewer *v)
{
    sm_vec3 lo, hi;
    bounds(v, &lo, &hi);
    add_colliders(v, &lo, &hi);
    v->camera = camera_frame(lo, hi, v->renderer.width, v->renderer.height);
    v->follow.moving = false;
}

/// Turns following off because the user moved the camera (a pan or a zoom, which following
/// would undo).
static void stop_following(viewer *v)
{
    if (!v->follow.on) return;
    v->follow.on = v->follow.moving = false;
    status(v, "camera: following off (T follows the objects again)");
}

/// One frame of following the objects (camera_follow()), `seconds` long. Not while a spring is
/// dragged or the push sphere is out: they sit under the cursor, so a moving camera would move
/// them and push the objects on, which the camera would follow again.
static void follow_objects(viewer *v, double seconds)
{
    if (!v->follow.on || v->tools.dragging >= 0 || v->tools.push_mode) return;
    if (v->particles.count > 0 && read_positions(v))
        camera_follow(&v->camera, &v->follow, v->host_xyzw, v->particles.count, v->particles.max_radius, seconds);
}

/* ---- Interaction ---------------------------------------------------------------------------- */

static view_ray cursor_ray(const viewer *v) { return camera_ray(&v->camera, v->cursor_x, v->cursor_y); }

/// The particle under the cursor (reads the positions), or -1.
static int32_t particle_under_cursor(viewer *v)
{
    if (v->particles.count == 0 || !read_positions(v)) return -1;
    return tools_pick_particle(v->host_xyzw, v->particles.radius, v->particles.count, 0.0, cursor_ray(v), NULL);
}

static double target_radius(const viewer *v) { return fmax(0.8 * v->particles.max_radius, 0.01 * v->extent); }
static double push_radius(const viewer *v) { return 0.12 * v->extent; }
/// The blades' length, and how far from the cursor's ray the particles they cut may lie.
static double cut_reach(const viewer *v) { return fmax(0.15 * v->extent, 2.0 * v->particles.max_radius); }

/// The blades under the cursor, at the depth of the particle under it, else of the camera's
/// target (reads the positions).
static view_blades blades_now(viewer *v)
{
    double depth = camera_depth(&v->camera, v->camera.target);
    const int32_t i = particle_under_cursor(v);
    if (i >= 0) depth = camera_depth(&v->camera, (sm_vec3){v->host_xyzw[4 * i], v->host_xyzw[4 * i + 1], v->host_xyzw[4 * i + 2]});
    return tools_blades(&v->camera, cursor_ray(v), v->tools.cut_angle, depth);
}

/// Takes the cuts the world made since the viewer last looked (sm_world_get_cuts(): the
/// scissors' and the scene's alike): logs and records each, with the centres of its pieces for
/// the report, notes where each front piece came from, and rebuilds the buffers for the objects
/// as they are now (sizes, colours per object, the surfaces' triangles). Particles keep their
/// indices and objects their ids through a cut, so springs and picks need nothing. False (and
/// the viewer quits) when the buffers cannot be rebuilt.
static bool take_cuts(viewer *v, bool by_scene)
{
    const sm_cut_info *cuts = NULL;
    int32_t count = 0;
    if (sm_world_get_cuts(v->world, &cuts, &count) != SM_OK || count <= v->cuts_seen) return true;
    int32_t objects = 0;
    sm_vec3 *stats = object_stats(v->world, &objects);
    for (int32_t k = v->cuts_seen; k < count; k++) {
        const sm_cut_info *c = &cuts[k];
        say("%scut object %d into %d and %d (%d + %d particles)", by_scene ? "scene: " : "", c->back_object,
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
        status(v, "error: %s", error);
        v->quit = v->failed = true;
        return false;
    }
    return true;
}

/// Closes the blades: cuts every object they reach across (tools_cut()), then takes the cuts.
static void cut_here(viewer *v)
{
    enum { MAX_CUTS = 256 };
    static sm_cut_info cuts[MAX_CUTS];
    v->cut_closed = CUT_CLOSED_FRAMES;
    const view_blades blades = blades_now(v);
    if (v->particles.count == 0 || !v->host_xyzw) {
        status(v, "nothing to cut");
        return;
    }
    int count = 0;
    const sm_result result = tools_cut(v->world, v->host_xyzw, &blades, cursor_ray(v), cut_reach(v), cuts, MAX_CUTS, &count);
    if (count > 0 && !take_cuts(v, false)) return;
    if (result != SM_OK) status(v, "cut failed: %s", sm_last_error());
    else if (count == 0) status(v, "the blades cut nothing");
    else status(v, "%d cut%s: %d objects", count, count == 1 ? "" : "s", sm_world_get_counts(v->world).objects);
}

static void press_left(viewer *v, int mods)
{
    if (mods & GLFW_MOD_SHIFT) {
        v->panning = true;
        return;
    }
    if (v->tools.push_mode) {
        v->orbiting = true;
        return;
    }
    if (v->tools.cut_mode) {
        cut_here(v);
        return;
    }
    const view_ray ray = cursor_ray(v);
    const int locked = tools_pick_target(&v->tools, ray, target_radius(v));
    if (locked >= 0) {
        tools_regrab(&v->tools, locked, camera_depth(&v->camera, v->tools.springs[locked].target));
        status(v, "spring %d grabbed again", locked);
        return;
    }
    const int32_t i = particle_under_cursor(v);
    if (i < 0) {
        v->orbiting = true;
        return;
    }
    const sm_vec3 p = {v->host_xyzw[4 * i], v->host_xyzw[4 * i + 1], v->host_xyzw[4 * i + 2]};
    if (tools_grab(&v->tools, v->world, i, p, camera_depth(&v->camera, p)) != SM_OK) {
        status(v, "no more springs (at most %d)", VIEW_MAX_SPRINGS);
        return;
    }
    if (v->pick_count < (int)(sizeof v->picks / sizeof v->picks[0]))
        v->picks[v->pick_count++] = (pick_record){v->frame, i, v->particles.object[i], p};
    status(v, "picked particle %d of object %d at (%.3f, %.3f, %.3f)", i, v->particles.object[i], p.x, p.y, p.z);
}

static void handle_button(viewer *v, int button, bool press, int mods)
{
    if (button == 0) {
        if (press) {
            press_left(v, mods);
        } else {
            if (v->tools.dragging >= 0) tools_release(&v->tools, v->world);
            v->orbiting = v->panning = false;
        }
    } else if (button == 1) {
        if (press && v->tools.dragging >= 0) {
            tools_lock(&v->tools);
            status(v, "spring locked");
        } else if (press) {
            if (mods & GLFW_MOD_SHIFT) v->panning = true;
            else v->orbiting = true;
        } else {
            v->orbiting = v->panning = false;
        }
    } else if (button == 2) {
        v->panning = press;
    }
}

static void place_pusher(viewer *v)
{
    if (!v->tools.push_mode) return;
    tools_place_pusher(&v->tools, true, camera_point_at_depth(&v->camera, cursor_ray(v), v->tools.push_depth), push_radius(v));
}

static void handle_cursor(viewer *v, double x, double y)
{
    const double dx = x - v->cursor_x, dy = y - v->cursor_y;
    v->cursor_x = x, v->cursor_y = y;
    if (v->orbiting) camera_orbit(&v->camera, dx, dy);
    if (v->panning && (dx != 0.0 || dy != 0.0)) {
        stop_following(v);
        camera_pan(&v->camera, dx, dy);
    }
    if (v->tools.dragging >= 0) tools_drag_to(&v->tools, camera_point_at_depth(&v->camera, cursor_ray(v), v->tools.drag_depth));
    place_pusher(v);
}

static void handle_wheel(viewer *v, double notches, bool shift)
{
    const double step = 0.05 * v->camera.distance * notches;
    if (v->tools.cut_mode && shift) {
        // the blades turn on the screen, 15 degrees a notch
        const double pi = 3.14159265358979323846, notch = 15.0 * pi / 180.0;
        v->tools.cut_angle = fmod(v->tools.cut_angle + notches * notch, 2.0 * pi);
        if (v->tools.cut_angle < 0.0) v->tools.cut_angle += 2.0 * pi;
        status(v, "blades at %.0f degrees", v->tools.cut_angle * 180.0 / pi);
    } else if (v->tools.dragging >= 0) {
        v->tools.drag_depth = fmax(0.01 * v->camera.distance, v->tools.drag_depth + step);
        tools_drag_to(&v->tools, camera_point_at_depth(&v->camera, cursor_ray(v), v->tools.drag_depth));
    } else if (v->tools.push_mode) {
        v->tools.push_depth = fmax(0.01 * v->camera.distance, v->tools.push_depth + step);
        place_pusher(v);
    } else {
        stop_following(v);
        camera_zoom(&v->camera, notches);
    }
}

/// Changes the parameters of the object under the cursor with `change`.
static void edit_object(viewer *v, const char *key)
{
    const int32_t i = particle_under_cursor(v);
    if (i < 0) {
        status(v, "no object under the cursor");
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
        status(v, "%s", sm_last_error());
        return;
    }
    status(v, "object %d: %s, alpha %.2f, beta %.2f", object, sm_mode_name(p.mode), p.alpha, p.beta);
}

/// Drops a copy of one of the scene's objects (in turn) above the point under the cursor.
static void drop_object(viewer *v)
{
    char error[512];
    const int32_t count = v->info.object_count;
    if (count == 0) return;
    sm_object_def def = *sm_scene_object_def(v->scene, v->spawned % count);
    const sm_vec3 p = camera_point_at_depth(&v->camera, cursor_ray(v), camera_depth(&v->camera, v->camera.target));
    def.position = (sm_vec3){p.x, fmax(p.y, v->hi.y) + 0.3 * v->extent, p.z};
    def.linear_velocity = def.angular_velocity = (sm_vec3){0, 0, 0};
    def.name = NULL;
    int32_t object = -1;
    if (sm_world_add_object(v->world, &def, &object) != SM_OK) {
        status(v, "cannot drop an object: %s", sm_last_error());
        return;
    }
    v->spawned++;
    if (!insert_origin(v, object, (object_origin){-1, false})) {
        status(v, "error: out of memory");
        v->quit = v->failed = true;
        return;
    }
    if (!build_buffers(v, error, sizeof error)) {
        status(v, "error: %s", error);
        v->quit = v->failed = true;
        return;
    }
    status(v, "dropped object %d at (%.2f, %.2f, %.2f)", object, def.position.x, def.position.y, def.position.z);
}

static void reset(viewer *v)
{
    char error[512];
    sm_world_destroy(v->world);
    v->world = NULL;
    tools_forget(&v->tools);
    if (!open_world(v, error, sizeof error)) {
        say("error: %s", error);
        v->quit = v->failed = true;
        return;
    }
    v->sim_time = 0.0, v->accumulator = 0.0;
    v->pick_count = 0; // the picks were of the old world's particles
    v->cut_count = 0;  // and the cuts of its objects
    v->cuts_seen = 0;
    v->cut_closed = 0;
    v->follow.moving = false;
    status(v, "scene reset");
}

static void handle_key(viewer *v, const char *key)
{
    if (strcmp(key, "ESCAPE") == 0) v->quit = true;
    else if (strcmp(key, "SPACE") == 0) v->paused = !v->paused, v->step_once = false, status(v, v->paused ? "paused" : "running");
    else if (strcmp(key, "N") == 0 || strcmp(key, "PERIOD") == 0) v->step_once = true;
    else if (strcmp(key, "R") == 0) reset(v);
    else if (strcmp(key, "H") == 0) v->help = !v->help;
    else if (strcmp(key, "F") == 0) frame_scene(v);
    else if (strcmp(key, "T") == 0) {
        v->follow.on = !v->follow.on;
        v->follow.moving = false;
        status(v, v->follow.on ? "camera: following the objects" : "camera: following off");
    }
    else if (strcmp(key, "K") == 0) v->colour = (view_colour)((v->colour + 1) % VIEW_COLOUR_COUNT);
    else if (strcmp(key, "O") == 0) drop_object(v);
    else if (strcmp(key, "M") == 0) {
        static const char *modes[DRAW_MODE_COUNT] = {"surfaces", "particles", "surfaces and particles"};
        v->draw_mode = (draw_mode)((v->draw_mode + 1) % DRAW_MODE_COUNT);
        status(v, "drawing %s%s", modes[v->draw_mode], v->surfaces.triangle_count > 0 ? "" : " (no object has a surface)");
    } else if (strcmp(key, "C") == 0) {
        tools_clear(&v->tools, v->world);
        status(v, "springs removed");
    } else if (strcmp(key, "P") == 0) {
        if (v->tools.dragging >= 0) tools_release(&v->tools, v->world);
        v->tools.cut_mode = false;
        v->tools.push_mode = !v->tools.push_mode;
        v->tools.push_depth = camera_depth(&v->camera, v->camera.target);
        if (v->tools.push_mode) place_pusher(v);
        else tools_place_pusher(&v->tools, false, v->tools.pusher.center, v->tools.pusher.radius);
        status(v, v->tools.push_mode ? "push mode" : "pick mode");
    } else if (strcmp(key, "X") == 0) {
        if (v->tools.dragging >= 0) tools_release(&v->tools, v->world);
        if (v->tools.push_mode) {
            v->tools.push_mode = false;
            tools_place_pusher(&v->tools, false, v->tools.pusher.center, v->tools.pusher.radius);
        }
        v->tools.cut_mode = !v->tools.cut_mode;
        v->cut_closed = 0;
        status(v, v->tools.cut_mode ? "cut mode" : "pick mode");
    } else if (strlen(key) == 1 && strchr("123QAWS", key[0])) edit_object(v, key);
}

/* ---- GLFW callbacks -------------------------------------------------------------------------- */

static viewer *of(GLFWwindow *window) { return glfwGetWindowUserPointer(window); }

/// Whether input is still handled (not once the viewer is quitting, when the world may be gone).
static bool live(const viewer *v) { return !v->quit && v->world; }

static void on_cursor(GLFWwindow *window, double x, double y)
{
    viewer *v = of(window);
    if (!live(v)) return;
    int w, h, fw, fh;
    glfwGetWindowSize(window, &w, &h);
    glfwGetFramebufferSize(window, &fw, &fh);
    handle_cursor(v, x * fw / (w > 0 ? w : 1), y * fh / (h > 0 ? h : 1)); // in framebuffer pixels
}

static void on_button(GLFWwindow *window, int button, int action, int mods)
{
    if (button <= 2 && live(of(window))) handle_button(of(window), button == GLFW_MOUSE_BUTTON_LEFT ? 0 : button == GLFW_MOUSE_BUTTON_RIGHT ? 1 : 2,
                                   action == GLFW_PRESS, mods);
}

static void on_scroll(GLFWwindow *window, double dx, double dy)
{
    const bool shift = glfwGetKey(window, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(window, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
    // some systems turn shift + wheel into a sideways scroll
    const double notches = dy != 0.0 || !shift ? dy : dx;
    if (live(of(window)) && notches != 0.0) handle_wheel(of(window), notches, shift);
}

static void on_key(GLFWwindow *window, int key, int scancode, int action, int mods)
{
    (void)scancode, (void)mods;
    if (action != GLFW_PRESS) return;
    char name[16] = "";
    if (key >= GLFW_KEY_A && key <= GLFW_KEY_Z) name[0] = (char)('A' + key - GLFW_KEY_A);
    else if (key >= GLFW_KEY_0 && key <= GLFW_KEY_9) name[0] = (char)('0' + key - GLFW_KEY_0);
    else if (key == GLFW_KEY_SPACE) snprintf(name, sizeof name, "SPACE");
    else if (key == GLFW_KEY_ESCAPE) snprintf(name, sizeof name, "ESCAPE");
    else if (key == GLFW_KEY_PERIOD) snprintf(name, sizeof name, "N");
    if (name[0] && live(of(window))) handle_key(of(window), name);
}

static void on_resize(GLFWwindow *window, int width, int height)
{
    viewer *v = of(window);
    if (width <= 0 || height <= 0) return;
    render_resize(&v->renderer, width, height);
    v->camera.width = width, v->camera.height = height;
}

/* ---- The frame ------------------------------------------------------------------------------ */

/// Applies the script's events that are due by the current simulated time.
static void run_script(viewer *v)
{
    view_script *s = &v->script;
    while (live(v) && s->next < s->count && s->events[s->next].time <= v->sim_time + 1e-9) {
        const view_event *e = &s->events[s->next++];
        switch (e->type) {
        case VIEW_CURSOR: handle_cursor(v, e->x * v->renderer.width, e->y * v->renderer.height); break;
        case VIEW_PRESS: handle_button(v, e->button, true, v->script_shift ? GLFW_MOD_SHIFT : 0); break;
        case VIEW_RELEASE: handle_button(v, e->button, false, v->script_shift ? GLFW_MOD_SHIFT : 0); break;
        case VIEW_WHEEL: handle_wheel(v, e->x, v->script_shift); break;
        case VIEW_KEY: handle_key(v, e->key); break;
        case VIEW_MOD: v->script_shift = e->x != 0.0; break;
        }
    }
}

static bool step(viewer *v)
{
    const double dt = v->info.dt;
    const int32_t objects = sm_world_get_counts(v->world).objects;
    if (sm_scene_apply(v->scene, v->world) != SM_OK) {
        say("error: %s", sm_last_error());
        return false;
    }
    if (sm_world_get_counts(v->world).objects != objects) {
        const int seen = v->cut_count;
        if (!take_cuts(v, true)) return false;
        if (v->cut_count > seen) status(v, "the scene cut: %d objects", sm_world_get_counts(v->world).objects);
    }
    if (tools_apply(&v->tools, v->world, dt) != SM_OK || sm_world_step(v->world, dt, v->info.substeps) != SM_OK) {
        say("error: %s", sm_last_error());
        return false;
    }
    v->sim_time += dt;
    v->steps++;
    return true;
}

/// Advances the simulation for a frame that took `elapsed` seconds of wall time.
static bool advance(viewer *v, double elapsed)
{
    if (v->paused) {
        v->accumulator = 0.0;
        if (v->step_once) {
            v->step_once = false;
            return step(v);
        }
        return true;
    }
    if (v->opt.frames > 0) return step(v); // headless: one step per frame, independent of the clock
    const double dt = v->info.dt;
    v->accumulator += fmin(elapsed, v->opt.max_steps * dt);
    int taken = 0;
    while (v->accumulator >= dt && taken < v->opt.max_steps) {
        if (!step(v)) return false;
        v->accumulator -= dt;
        taken++;
    }
    if (taken == v->opt.max_steps) v->accumulator = 0.0; // behind: drop the time rather than spiral
    return true;
}

static void sample_figures(viewer *v, double now)
{
    if (now - v->last_sample_time < 0.5 && v->last_sample_frame > 0) return;
    const sm_profile p = sm_world_get_profile(v->world);
    const double frames = (double)(v->frame - v->last_sample_frame);
    const double solver_steps = (double)(p.steps - v->last_profile.steps);
    if (now > v->last_sample_time && frames > 0) v->fps = frames / (now - v->last_sample_time);
    if (solver_steps > 0) {
        const double substeps = v->info.substeps;
        v->step_ms = (p.step_ms - v->last_profile.step_ms) / solver_steps * substeps;
        for (int i = 0; i < SM_PASS_COUNT; i++)
            v->pass_ms[i] = (p.pass_ms[i] - v->last_profile.pass_ms[i]) / solver_steps * substeps;
    }
    v->last_profile = p;
    v->last_sample_time = now;
    v->last_sample_frame = v->frame;
}

/// The overlay's text scale, font units to pixels: 2 in windows of 1280 x 720 and up, down to 1
/// at 640 x 360 and below, in half steps (stb_easy_font's strokes stay even at those).
static float text_scale(const viewer *v)
{
    const double fit = fmin(v->renderer.width / 640.0, v->renderer.height / 360.0);
    return (float)fmax(1.0, fmin(2.0, floor(2.0 * fit) / 2.0));
}

static void draw_overlay(viewer *v)
{
    const sm_counts counts = sm_world_get_counts(v->world);
    static const char *colours[] = {"object", "cluster", "strain"};
    static const char *draws[DRAW_MODE_COUNT] = {"surfaces", "particles", "both"};
    static const char *short_names[SM_PASS_COUNT] = {"moments", "rotation", "goal", "blend", "grid",
                                                     "collide", "ground", "plastic", "skin"};
    const bool surfaces = v->surfaces.triangle_count > 0; // the draw mode and the surface counts only then
    char *text = v->overlay;
    const size_t size = sizeof v->overlay;
    int n = snprintf(text, size,
                     "%.1f fps   sim %.2f ms per step (%d substeps)   t = %.2f s%s\n"
                     "passes ms/step:",
                     v->fps, v->step_ms, v->info.substeps, v->sim_time, v->paused ? "   PAUSED" : "");
    for (int i = 0; i < SM_PASS_COUNT && n < (int)size; i++)
        if (v->pass_ms[i] > 0.0) {
            const char *name = short_names[i] ? short_names[i] : sm_pass_name((sm_pass)i);
            n += snprintf(text + n, size - (size_t)n, " %s %.2f", name, v->pass_ms[i]);
        }
    const char *device = sm_world_device_name(v->world);
    char mode[64], surface_counts[96] = "", draw[48] = "";
    if (v->tools.cut_mode) snprintf(mode, sizeof mode, "cut (blades at %.0f deg)", v->tools.cut_angle * 180.0 / 3.14159265358979323846);
    else snprintf(mode, sizeof mode, "%s", v->tools.push_mode ? "push" : "pick");
    if (surfaces) {
        snprintf(surface_counts, sizeof surface_counts, "   surface vertices %d   triangles %d", v->surfaces.vertex_count,
                 v->surfaces.triangle_count);
        snprintf(draw, sizeof draw, "   draw: %s", draws[v->draw_mode]);
    }
    if (n < (int)size)
        n += snprintf(text + n, size - (size_t)n,
                      "\nobjects %d   particles %d   clusters %d%s   colliders %d\n"
                      "%s%s%s\ninterop: %s\n%s mode   colour: %s%s   camera: %s   springs %d   cuts %d   [H] help",
                      counts.objects, counts.particles, counts.clusters, surface_counts,
                      sm_world_get_collider_count(v->world), sm_world_backend_name(v->world), *device ? ": " : "", device,
                      v->interop_text, mode, colours[v->colour], draw, v->follow.on ? "follow" : "fixed",
                      v->tools.spring_count, v->cut_count);
    if (v->status[0] && n < (int)size) snprintf(text + n, size - (size_t)n, "\n%s", v->status);
    // the text fits the window's width (render_text() breaks longer lines), 12 pixels from its
    // edges; the help sits on the bottom edge, below the overlay where there is room
    const float scale = text_scale(v), margin = 12.0f, width = (float)v->renderer.width - 2.0f * margin;
    render_text(&v->renderer, text, margin, margin, scale, width);
    if (v->help) {
        const float below = margin + render_text_height(text, scale, width) + 2.0f * margin;
        const float y = (float)v->renderer.height - render_text_height(help_text, scale, width) - margin;
        render_text(&v->renderer, help_text, margin, y > below ? y : below, scale, width);
    }
}

/// The springs (a line and a red ball each) and the push sphere.
static void draw_tools(viewer *v)
{
    float centres[4 * (VIEW_MAX_SPRINGS + 1)], styles[4 * (VIEW_MAX_SPRINGS + 1)], lines[12 * VIEW_MAX_SPRINGS];
    int spheres = 0, segments = 0;
    for (int s = 0; s < v->tools.spring_count; s++) {
        const view_spring *spring = &v->tools.springs[s];
        double x[3];
        if (sm_world_get_positions(v->world, spring->particle, 1, x) != SM_OK) continue;
        const float g = spring->locked ? 0.55f : 0.15f;
        const float line[12] = {(float)x[0], (float)x[1], (float)x[2], 1.0f, g, 0.1f,
                                (float)spring->target.x, (float)spring->target.y, (float)spring->target.z, 1.0f, g, 0.1f};
        memcpy(lines + 12 * segments++, line, sizeof line);
        const float c[4] = {(float)spring->target.x, (float)spring->target.y, (float)spring->target.z, 0.0f};
        const float st[4] = {0.95f, g, 0.1f, (float)target_radius(v)};
        memcpy(centres + 4 * spheres, c, sizeof c), memcpy(styles + 4 * spheres++, st, sizeof st);
    }
    if (v->tools.push_mode && v->tools.pusher.enabled) {
        const sm_pusher *p = &v->tools.pusher;
        const float c[4] = {(float)p->center.x, (float)p->center.y, (float)p->center.z, 0.0f};
        const float st[4] = {0.75f, 0.78f, 0.85f, (float)p->radius};
        memcpy(centres + 4 * spheres, c, sizeof c), memcpy(styles + 4 * spheres++, st, sizeof st);
    }
    render_lines(&v->renderer, lines, segments);
    render_spheres(&v->renderer, centres, styles, spheres);
}

/// Appends the flat triangle (a, b, c) in colour rgb to `out` (18 floats).
static float *put_triangle(float *out, sm_vec3 a, sm_vec3 b, sm_vec3 c, const float rgb[3])
{
    const sm_vec3 p[3] = {a, b, c};
    for (int k = 0; k < 3; k++, out += 6)
        out[0] = (float)p[k].x, out[1] = (float)p[k].y, out[2] = (float)p[k].z, out[3] = rgb[0], out[4] = rgb[1], out[5] = rgb[2];
    return out;
}

/// Appends the segment (a, b) in colour rgb to `out` (12 floats).
static float *put_line(float *out, sm_vec3 a, sm_vec3 b, const float rgb[3])
{
    const sm_vec3 p[2] = {a, b};
    for (int k = 0; k < 2; k++, out += 6)
        out[0] = (float)p[k].x, out[1] = (float)p[k].y, out[2] = (float)p[k].z, out[3] = rgb[0], out[4] = rgb[1], out[5] = rgb[2];
    return out;
}

static sm_vec3 along(sm_vec3 p, sm_vec3 d, double s) { return (sm_vec3){p.x + s * d.x, p.y + s * d.y, p.z + s * d.z}; }

/// The scissors under the cursor, translucent over the scene (docs/viewer.md, "The scissors"): two
/// blades from the apex on the plane facing the camera, open 12 degrees each side of the cut's
/// line and outlined, closed (and gold) for a few frames after a click; the ring handles behind
/// the apex; a faint line along the cut and a faint circle of the blades' reach.
static void draw_blades(viewer *v)
{
    enum { RING = 16, CIRCLE = 48, LINES = 2 * (4 + 1 + RING) + 1 + CIRCLE };
    float triangles[18 * 4], lines[12 * LINES];
    const view_blades b = blades_now(v);
    const double pi = 3.14159265358979323846, reach = cut_reach(v), width = 0.12 * reach;
    const bool closed = v->cut_closed > 0;
    const double half = closed ? 0.0 : 12.0 * pi / 180.0;
    static const float steel[3] = {0.82f, 0.86f, 0.94f}, gold[3] = {1.0f, 0.82f, 0.25f}, edge[3] = {0.12f, 0.13f, 0.17f},
                       faint[3] = {0.78f, 0.80f, 0.86f};
    const float *colour = closed ? gold : steel;
    const sm_vec3 zero = {0, 0, 0};
    float *t = triangles, *l = lines;
    for (int sign = -1; sign <= 1; sign += 2) {
        // the blade's direction, and its back (away from the other blade) in the plane facing the camera
        const sm_vec3 u = along(along(zero, b.direction, cos(half)), b.side, sign * sin(half));
        const sm_vec3 out = along(along(zero, b.direction, -sin(half)), b.side, sign * cos(half));
        const sm_vec3 tip = along(b.apex, u, reach), heel = along(b.apex, u, 0.25 * reach);
        const sm_vec3 back = along(heel, out, width), front = along(heel, out, -0.15 * width);
        t = put_triangle(t, b.apex, back, tip, colour); // the back of the blade
        t = put_triangle(t, b.apex, tip, front, colour); // its edge
        l = put_line(l, b.apex, back, edge), l = put_line(l, back, tip, edge);
        l = put_line(l, tip, front, edge), l = put_line(l, front, b.apex, edge);
        // the handle: straight on through the apex, to a ring
        const sm_vec3 ring = along(b.apex, u, -0.55 * reach);
        l = put_line(l, b.apex, along(ring, u, 0.15 * reach), edge);
        for (int k = 0; k < RING; k++) {
            const double a0 = 2.0 * pi * k / RING, a1 = 2.0 * pi * (k + 1) / RING, r = 0.15 * reach;
            l = put_line(l, along(along(ring, u, r * cos(a0)), out, r * sin(a0)),
                         along(along(ring, u, r * cos(a1)), out, r * sin(a1)), edge);
        }
    }
    l = put_line(l, along(b.apex, b.direction, -reach), along(b.apex, b.direction, reach), faint); // the cut's line
    for (int k = 0; k < CIRCLE; k++) {
        const double a0 = 2.0 * pi * k / CIRCLE, a1 = 2.0 * pi * (k + 1) / CIRCLE;
        l = put_line(l, along(along(b.apex, b.direction, reach * cos(a0)), b.side, reach * sin(a0)),
                     along(along(b.apex, b.direction, reach * cos(a1)), b.side, reach * sin(a1)), faint);
    }
    render_overlay_shapes(&v->renderer, triangles, (int)((t - triangles) / 18), lines, (int)((l - lines) / 12), 0.6f);
    if (v->cut_closed > 0) v->cut_closed--;
}

/// Every collider where it is now.
static bool draw_colliders(viewer *v)
{
    const int32_t count = sm_world_get_collider_count(v->world);
    if (count == 0) return true;
    sm_collider_info *colliders = malloc(sizeof *colliders * (size_t)count);
    bool ok = colliders != NULL;
    for (int32_t i = 0; ok && i < count; i++) ok = sm_world_get_collider(v->world, i, &colliders[i]) == SM_OK;
    if (ok) render_colliders(&v->renderer, colliders, count, v->camera.target, 20.0 * fmax(v->extent, 1.0));
    else say("error: %s", colliders ? sm_last_error() : "out of memory for the colliders");
    free(colliders);
    return ok;
}

static bool draw(viewer *v)
{
    char error[512];
    // shared: one sm_world_copy_to_gl() here brings the surfaces' buffers up to date too
    if (!particles_update(&v->particles, v->world, v->colour == VIEW_COLOUR_STRAIN, error, sizeof error)) {
        say("error: %s", error);
        return false;
    }
    const bool surfaces = v->draw_mode != DRAW_PARTICLES && v->surfaces.triangle_count > 0;
    if (surfaces && !surfaces_update(&v->surfaces, v->world, error, sizeof error)) {
        say("error: %s", error);
        return false;
    }
    const double ground_height = v->def.ground.height, strain_scale = 0.5 * v->particles.max_radius;
    render_begin(&v->renderer, &v->camera, v->def.ground.enabled, ground_height, v->extent);
    if (surfaces && v->draw_mode == DRAW_SURFACES) {
        // only the particles of the objects without a surface
        for (int32_t k = 0; k < v->surfaces.bare_run_count; k++)
            render_particles(&v->renderer, &v->particles, v->colour, strain_scale, v->surfaces.bare_runs[2 * k],
                             v->surfaces.bare_runs[2 * k + 1]);
    } else {
        render_particles(&v->renderer, &v->particles, v->colour, strain_scale, 0, v->particles.count);
    }
    if (surfaces) render_surfaces(&v->renderer, &v->surfaces);
    draw_tools(v);
    if (!draw_colliders(v)) return false;
    if (v->tools.cut_mode) draw_blades(v);
    draw_overlay(v);
    return true;
}

/* ---- The report ----------------------------------------------------------------------------- */

static cJSON *vec_json(sm_vec3 p)
{
    const double values[3] = {p.x, p.y, p.z};
    return cJSON_CreateDoubleArray(values, 3);
}

static bool write_report(viewer *v, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scene", v->opt.scene);
    cJSON_AddNumberToObject(root, "frames", (double)v->frame);
    cJSON_AddNumberToObject(root, "steps", (double)v->steps);
    cJSON_AddNumberToObject(root, "time", v->sim_time);
    cJSON_AddStringToObject(root, "backend", sm_world_backend_name(v->world));
    cJSON_AddStringToObject(root, "device", sm_world_device_name(v->world));
    cJSON_AddStringToObject(root, "interop", v->interop ? "shared" : "fallback");
    cJSON_AddStringToObject(root, "interop_detail", v->interop_text);
    cJSON_AddStringToObject(root, "gl_renderer", (const char *)glGetString(GL_RENDERER));
    cJSON_AddBoolToObject(root, "headless", v->opt.headless);
    cJSON_AddNumberToObject(root, "frames_per_second", v->run_seconds > 0.0 ? (double)v->frame / v->run_seconds : 0.0);
    cJSON_AddStringToObject(root, "overlay", v->overlay);
    cJSON *camera = cJSON_AddObjectToObject(root, "camera"); // where it ended: following moves it
    cJSON_AddItemToObject(camera, "target", vec_json(v->camera.target));
    cJSON_AddNumberToObject(camera, "distance", v->camera.distance);
    cJSON_AddNumberToObject(camera, "yaw", v->camera.yaw);
    cJSON_AddNumberToObject(camera, "pitch", v->camera.pitch);
    cJSON_AddBoolToObject(camera, "follow", v->follow.on);
    cJSON *picks = cJSON_AddArrayToObject(root, "picks");
    for (int p = 0; p < v->pick_count; p++) {
        cJSON *pick = cJSON_CreateObject();
        cJSON_AddNumberToObject(pick, "frame", (double)v->picks[p].frame);
        cJSON_AddNumberToObject(pick, "particle", v->picks[p].particle);
        cJSON_AddNumberToObject(pick, "object", v->picks[p].object);
        cJSON_AddItemToObject(pick, "position", vec_json(v->picks[p].position));
        double x[3] = {0, 0, 0};
        if (v->picks[p].particle < sm_world_get_counts(v->world).particles)
            sm_world_get_positions(v->world, v->picks[p].particle, 1, x);
        cJSON_AddItemToObject(pick, "position_end", vec_json((sm_vec3){x[0], x[1], x[2]}));
        if (v->picks[p].particle < sm_world_get_counts(v->world).particles)
            sm_world_get_rest_positions(v->world, v->picks[p].particle, 1, x);
        cJSON_AddItemToObject(pick, "rest_position", vec_json((sm_vec3){x[0], x[1], x[2]}));
        cJSON_AddItemToArray(picks, pick);
    }
    cJSON *springs = cJSON_AddArrayToObject(root, "springs");
    for (int s = 0; s < v->tools.spring_count; s++) {
        const view_spring *spring = &v->tools.springs[s];
        double x[3] = {0, 0, 0};
        sm_world_get_positions(v->world, spring->particle, 1, x);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "particle", spring->particle);
        cJSON_AddBoolToObject(item, "locked", spring->locked);
        cJSON_AddItemToObject(item, "target", vec_json(spring->target));
        cJSON_AddItemToObject(item, "position", vec_json((sm_vec3){x[0], x[1], x[2]}));
        cJSON_AddItemToArray(springs, item);
    }
    cJSON *cuts = cJSON_AddArrayToObject(root, "cuts");
    for (int c = 0; c < v->cut_count; c++) {
        const cut_record *cut = &v->cuts[c];
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "frame", (double)cut->frame);
        cJSON_AddNumberToObject(item, "time", cut->info.time);
        cJSON_AddStringToObject(item, "by", cut->scene ? "scene" : "scissors");
        cJSON_AddNumberToObject(item, "object", cut->info.back_object);
        const int pieces[2] = {cut->info.back_object, cut->info.front_object};
        const int counts[2] = {cut->info.back_particles, cut->info.front_particles};
        cJSON_AddItemToObject(item, "pieces", cJSON_CreateIntArray(pieces, 2));
        cJSON_AddItemToObject(item, "particles", cJSON_CreateIntArray(counts, 2));
        cJSON_AddItemToObject(item, "back_centre", vec_json(cut->back_centre));
        cJSON_AddItemToObject(item, "front_centre", vec_json(cut->front_centre));
        cJSON_AddNumberToObject(item, "cap_triangles", cut->info.cap_triangles);
        cJSON_AddItemToArray(cuts, item);
    }
    // each object: centre of mass and RMS radius at the start and now, mean distance of its
    // particles to their goals
    int32_t count = 0;
    sm_vec3 *stats = object_stats(v->world, &count);
    const int32_t n = sm_world_get_counts(v->world).particles;
    double *x = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1)), *g = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
    cJSON *objects = cJSON_AddArrayToObject(root, "objects");
    const bool ok = stats && x && g && sm_world_get_positions(v->world, 0, n, x) == SM_OK &&
                    sm_world_get_goals(v->world, 0, n, g) == SM_OK;
    for (int32_t o = 0; ok && o < count; o++) {
        sm_object_info info;
        sm_world_get_object(v->world, o, &info);
        double strain = 0.0;
        const int32_t *list = NULL;
        int32_t listed = 0;
        sm_world_get_object_particles(v->world, o, &list, &listed);
        for (int32_t k = 0; k < listed; k++) {
            const int32_t i = list[k];
            strain += sqrt((x[3 * i] - g[3 * i]) * (x[3 * i] - g[3 * i]) + (x[3 * i + 1] - g[3 * i + 1]) * (x[3 * i + 1] - g[3 * i + 1]) +
                           (x[3 * i + 2] - g[3 * i + 2]) * (x[3 * i + 2] - g[3 * i + 2]));
        }
        cJSON *item = cJSON_CreateObject();
        const object_origin origin = o < v->origin_count ? v->origins[o] : (object_origin){-1, false};
        cJSON_AddNumberToObject(item, "particles", info.particle_count);
        if (info.surface_triangle_count > 0) cJSON_AddNumberToObject(item, "surface_triangles", info.surface_triangle_count);
        if (origin.piece) cJSON_AddNumberToObject(item, "piece_of", origin.start); // -1: of a dropped object
        else if (v->start_stats && origin.start >= 0 && origin.start < v->start_objects) {
            cJSON_AddItemToObject(item, "centre_start", vec_json(v->start_stats[2 * origin.start]));
            cJSON_AddNumberToObject(item, "rms_radius_start", v->start_stats[2 * origin.start + 1].x);
        }
        cJSON_AddItemToObject(item, "centre_end", vec_json(stats[2 * o]));
        cJSON_AddNumberToObject(item, "rms_radius_end", stats[2 * o + 1].x);
        cJSON_AddNumberToObject(item, "mean_goal_distance", info.particle_count > 0 ? strain / info.particle_count : 0.0);
        cJSON_AddItemToArray(objects, item);
    }
    free(stats), free(x), free(g);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *file = text && ok ? fopen(path, "w") : NULL;
    bool written = file && fputs(text, file) >= 0;
    if (file) written &= fclose(file) == 0;
    free(text);
    if (!written) say("error: cannot write the report %s (%s)", path, ok ? strerror(errno) : sm_last_error());
    return written;
}

/* ---- Set-up --------------------------------------------------------------------------------- */

static void glfw_error(int code, const char *description) { say("GLFW error 0x%x: %s", code, description); }

/// Seconds on a monotonic clock: GLFW's, or the system's when headless.
static double now_seconds(const viewer *v)
{
    if (v->window) return glfwGetTime();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/// Opens the window (or, headless, the EGL context), makes its context current and loads GL.
static bool open_gl(viewer *v, char *error, size_t error_size)
{
    if (v->opt.headless) {
        if (!headless_open(&v->headless, v->opt.width, v->opt.height, error, error_size)) return false;
        if (!gladLoadGL(headless_get_proc)) {
            snprintf(error, error_size, "cannot load the OpenGL functions through EGL");
            return false;
        }
        say("headless: %s", v->headless.detail);
        return true;
    }
    glfwSetErrorCallback(glfw_error);
    if (!glfwInit()) {
        snprintf(error, error_size, "cannot initialise GLFW: no display? (set DISPLAY; run headless with "
                                    "--frames N --headless, or under 'xvfb-run -a -s \"-screen 0 1280x720x24\" "
                                    "shapematch-view ...')");
        return false;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    if (v->opt.frames > 0) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE); // runs of --frames draw offscreen
    char title[512];
    snprintf(title, sizeof title, "shapematch-view: %s", v->opt.scene);
    v->window = glfwCreateWindow(v->opt.width, v->opt.height, title, NULL, NULL);
    if (!v->window) {
        snprintf(error, error_size, "cannot open an OpenGL 3.3 core window");
        return false;
    }
    glfwMakeContextCurrent(v->window);
    glfwSwapInterval(v->opt.frames > 0 ? 0 : 1);
    if (!gladLoadGL(glfwGetProcAddress)) {
        snprintf(error, error_size, "cannot load the OpenGL functions");
        return false;
    }
    return true;
}

/// The size of what is drawn: the window's framebuffer, or headless, --size.
static void framebuffer_size(const viewer *v, int *width, int *height)
{
    if (v->window) glfwGetFramebufferSize(v->window, width, height);
    else *width = v->opt.width, *height = v->opt.height;
}

static bool make_directory(const char *path)
{
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

int main(int argc, char **argv)
{
    static viewer v; // large; zeroed
    int code = view_parse_options(argc, argv, &v.opt);
    if (code >= 0) return code;
    char error[1024];
    if (v.opt.script && !script_load(v.opt.script, &v.script, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        return 1;
    }
    if (v.opt.record && !make_directory(v.opt.record)) {
        fprintf(stderr, "shapematch-view: cannot create %s (%s)\n", v.opt.record, strerror(errno));
        return 1;
    }
    if (sm_scene_load_file(v.opt.scene, &v.scene) != SM_OK) {
        fprintf(stderr, "shapematch-view: %s\n", sm_last_error());
        return 1;
    }
    v.info = sm_scene_get_info(v.scene);

    int status_code = 1;
    if (!open_gl(&v, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        goto done;
    }
    v.has_gl = true;
    say("OpenGL %s (%s)", (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER));
    int fw, fh;
    framebuffer_size(&v, &fw, &fh);
    if (!render_init(&v.renderer, fw, fh, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        goto done;
    }

    v.def = sm_scene_world_def(v.scene);
    v.def.backend = v.opt.backend;
    v.def.device = v.opt.device;
    v.def.profile = true; // the overlay's per-pass times
    v.def.log = log_callback;
    const char *why = NULL;
    if (v.opt.headless && v.opt.interop != INTEROP_OFF) v.def.gl = headless_gl_context(&v.headless);
    else if (!v.opt.headless && v.opt.interop != INTEROP_OFF && !native_gl_context(v.window, &v.def.gl, &why) &&
             v.opt.interop == INTEROP_ON) {
        fprintf(stderr, "shapematch-view: --interop on: %s\n", why);
        goto done;
    }
    if (!open_world(&v, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        goto done;
    }
    v.colour = v.opt.colour;
    const sm_counts counts = sm_world_get_counts(v.world);
    say("scene %s: %d objects, %d particles, %d clusters; dt %g s, %d substeps", v.opt.scene, counts.objects,
        counts.particles, counts.clusters, v.info.dt, v.info.substeps);
    say("backend %s%s%s", sm_world_backend_name(v.world), *sm_world_device_name(v.world) ? " on " : "",
        sm_world_device_name(v.world));
    say("interop: %s", v.interop_text);
    bounds(&v, &v.lo, &v.hi);
    v.extent = sqrt((v.hi.x - v.lo.x) * (v.hi.x - v.lo.x) + (v.hi.y - v.lo.y) * (v.hi.y - v.lo.y) +
                    (v.hi.z - v.lo.z) * (v.hi.z - v.lo.z));
    frame_scene(&v);
    v.follow.on = true;

    if (v.window) {
        glfwSetWindowUserPointer(v.window, &v);
        glfwSetCursorPosCallback(v.window, on_cursor);
        glfwSetMouseButtonCallback(v.window, on_button);
        glfwSetScrollCallback(v.window, on_scroll);
        glfwSetKeyCallback(v.window, on_key);
        glfwSetFramebufferSizeCallback(v.window, on_resize);
    }

    status_code = 0;
    double last = now_seconds(&v);
    v.last_sample_time = v.last_start = last;
    while (!v.quit && !(v.window && glfwWindowShouldClose(v.window))) {
        const double now = now_seconds(&v);
        run_script(&v);
        bool ok = !v.quit && advance(&v, now - last);
        // following moves the camera by the frame's time step with --frames, so that those runs
        // stay reproducible, else by the wall time (at most a tenth of a second: a stall does
        // not throw the camera)
        if (ok) follow_objects(&v, v.opt.frames > 0 ? v.info.dt : fmin(now - last, 0.1));
        if (!ok || !draw(&v)) {
            status_code = v.quit && !v.failed ? status_code : 1;
            break;
        }
        last = now;
        v.frame++;
        sample_figures(&v, now_seconds(&v));
        if (v.opt.record) {
            char path[4096];
            snprintf(path, sizeof path, "%s/frame_%05lld.png", v.opt.record, (long long)v.frame);
            if (!render_screenshot(&v.renderer, path, error, sizeof error)) {
                say("error: %s", error);
                status_code = 1;
                break;
            }
        }
        if (v.window) {
            int ww, wh;
            glfwGetFramebufferSize(v.window, &ww, &wh);
            render_end(&v.renderer, ww, wh);
            glfwSwapBuffers(v.window);
            glfwPollEvents();
        } else {
            glFlush(); // headless: nothing to show; the frame stays in the renderer's framebuffer
        }
        if (v.opt.frames > 0 && v.frame >= v.opt.frames) break;
        if (v.frame % 120 == 0 && v.opt.frames > 0) say("frame %lld of %d", (long long)v.frame, v.opt.frames);
    }
    v.run_seconds = now_seconds(&v) - v.last_start;
    if (v.failed) status_code = 1;
    if (status_code == 0 && v.opt.screenshot) {
        if (render_screenshot(&v.renderer, v.opt.screenshot, error, sizeof error)) say("wrote %s", v.opt.screenshot);
        else say("error: %s", error), status_code = 1;
    }
    if (status_code == 0 && v.opt.report && !write_report(&v, v.opt.report)) status_code = 1;
    say("%lld frames, %lld steps, %.2f s simulated, %.1f frames/s", (long long)v.frame, (long long)v.steps, v.sim_time,
        v.run_seconds > 0.0 ? (double)v.frame / v.run_seconds : 0.0);

done:
    // the world releases its shared GL buffers before GL deletes them
    sm_world_destroy(v.world);
    if (v.has_gl) {
        particles_free(&v.particles);
        surfaces_free(&v.surfaces);
        render_free(&v.renderer);
    }
    if (v.window) glfwDestroyWindow(v.window);
    if (!v.opt.headless) glfwTerminate();
    headless_close(&v.headless);
    sm_scene_destroy(v.scene);
    script_free(&v.script);
    free(v.start_stats), free(v.host_xyzw), free(v.origins);
    return status_code;
}
