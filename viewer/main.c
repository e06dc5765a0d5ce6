/* shapematch-view: a window on a running scene. The simulation advances in fixed steps of the
 * scene's dt, decoupled from the frame rate (an accumulator, at most --max-steps steps per
 * frame: a slow frame drops time instead of spiralling); the particles and skinned surfaces are
 * drawn from the simulation's buffers (CL-GL interop, or a copy through a mapped buffer), the
 * colliders where they are at each frame; the mouse picks, drags, locks, pushes and cuts (tools.h);
 * --frames, --screenshot, --record and --script run it without a person. This file holds main(),
 * the window (or the EGL context) and the frame loop; the state they share is in viewer.h, the
 * world and its changes in session.c, the mouse and keys in input.c, the tools' drawing and the
 * overlay in overlay.c, the JSON report in report.c. */
#include "headless.h"
#include "input.h"
#include "native.h"
#include "overlay.h"
#include "report.h"
#include "session.h"
#include "viewer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void log_callback(sm_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != SM_LOG_NOTICE) view_say("%s", message);
}

/* ---- The frame ------------------------------------------------------------------------------ */

static bool step(viewer *v)
{
    const double dt = v->info.dt;
    const int32_t objects = sm_world_get_counts(v->world).objects;
    if (sm_scene_apply(v->scene, v->world) != SM_OK) {
        view_say("error: %s", sm_last_error());
        return false;
    }
    if (sm_world_get_counts(v->world).objects != objects) {
        const int seen = v->cut_count;
        if (!view_take_cuts(v, true)) return false;
        if (v->cut_count > seen) view_status(v, "the scene cut: %d objects", sm_world_get_counts(v->world).objects);
    }
    if (tools_apply(&v->tools, v->world, dt) != SM_OK || sm_world_step(v->world, dt, v->info.substeps) != SM_OK) {
        view_say("error: %s", sm_last_error());
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

static bool draw(viewer *v)
{
    char error[512];
    // shared: one sm_world_copy_to_gl() here brings the surfaces' buffers up to date too
    if (!particles_update(&v->particles, v->world, v->colour == VIEW_COLOUR_STRAIN, error, sizeof error)) {
        view_say("error: %s", error);
        return false;
    }
    const bool surfaces = v->draw_mode != DRAW_PARTICLES && v->surfaces.triangle_count > 0;
    if (surfaces && !surfaces_update(&v->surfaces, v->world, error, sizeof error)) {
        view_say("error: %s", error);
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
    view_draw_tools(v);
    if (!view_draw_colliders(v)) return false;
    if (v->tools.cut_mode) view_draw_blades(v);
    view_draw_overlay(v);
    return true;
}

/* ---- Set-up --------------------------------------------------------------------------------- */

static void glfw_error(int code, const char *description) { view_say("GLFW error 0x%x: %s", code, description); }

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
        view_say("headless: %s", v->headless.detail);
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

/// Whether two paths name one existing file (compared by device and inode).
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/// Whether `path` is, or would be, a frame of --record `folder` (folder/frame_NNNNN.png).
static bool recorded_frame(const char *folder, const char *path)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    const size_t digits = strncmp(name, "frame_", 6) == 0 ? strspn(name + 6, "0123456789") : 0;
    if (digits < 5 || strcmp(name + 6 + digits, ".png") != 0) return false;
    char parent[4096];
    const int length = !slash ? 1 : slash == path ? 1 : (int)(slash - path);
    snprintf(parent, sizeof parent, "%.*s", length, !slash ? "." : slash == path ? "/" : path);
    return same_file(parent, folder);
}

/// Refuses (false, a message) outputs that would overwrite an input: --screenshot, --report or a
/// frame of --record on the scene file, a file read for its meshes (sm_scene_get_files()) or the
/// --script, and --screenshot and --report on each other.
static bool outputs_spare_inputs(const viewer *v)
{
    const char *const *files = NULL;
    int32_t count = 0;
    sm_scene_get_files(v->scene, &files, &count);
    const char *outputs[2] = {v->opt.screenshot, v->opt.report}, *names[2] = {"--screenshot", "--report"};
    char shown[2][256];
    for (int32_t i = -1; i < count; i++) {
        const char *input = i < 0 ? v->opt.script : files[i];
        if (!input) continue;
        script_printable(input, 120, shown[1], sizeof shown[1]);
        for (int o = 0; o < 2; o++)
            if (same_file(outputs[o], input)) {
                script_printable(outputs[o], 120, shown[0], sizeof shown[0]);
                fprintf(stderr, "shapematch-view: %s %s is %s, which the viewer reads: choose another file\n", names[o],
                        shown[0], shown[1]);
                return false;
            }
        if (v->opt.record && recorded_frame(v->opt.record, input)) {
            script_printable(v->opt.record, 120, shown[0], sizeof shown[0]);
            fprintf(stderr, "shapematch-view: %s, which the viewer reads, is one of the frames of --record %s "
                            "(frame_NNNNN.png): choose another folder\n", shown[1], shown[0]);
            return false;
        }
    }
    if (same_file(v->opt.screenshot, v->opt.report) ||
        (v->opt.screenshot && v->opt.report && strcmp(v->opt.screenshot, v->opt.report) == 0)) {
        fprintf(stderr, "shapematch-view: --screenshot and --report name the same file: give each its own\n");
        return false;
    }
    return true;
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
        char shown[256];
        script_printable(v.opt.record, 120, shown, sizeof shown);
        fprintf(stderr, "shapematch-view: cannot create %s (%s)\n", shown, strerror(errno));
        return 1;
    }
    if (sm_scene_load_file(v.opt.scene, &v.scene) != SM_OK) {
        fprintf(stderr, "shapematch-view: %s\n", sm_last_error());
        return 1;
    }
    if (!outputs_spare_inputs(&v)) {
        sm_scene_destroy(v.scene);
        return 2;
    }
    v.info = sm_scene_get_info(v.scene);

    int status_code = 1;
    if (!open_gl(&v, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        goto done;
    }
    v.has_gl = true;
    view_say("OpenGL %s (%s)", (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER));
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
    if (!view_open_world(&v, error, sizeof error)) {
        fprintf(stderr, "shapematch-view: %s\n", error);
        goto done;
    }
    v.colour = v.opt.colour;
    const sm_counts counts = sm_world_get_counts(v.world);
    view_say("scene %s: %d objects, %d particles, %d clusters; dt %g s, %d substeps", v.opt.scene, counts.objects,
        counts.particles, counts.clusters, v.info.dt, v.info.substeps);
    view_say("backend %s%s%s", sm_world_backend_name(v.world), *sm_world_device_name(v.world) ? " on " : "",
        sm_world_device_name(v.world));
    view_say("interop: %s", v.interop_text);
    view_bounds(&v, &v.lo, &v.hi);
    v.extent = sqrt((v.hi.x - v.lo.x) * (v.hi.x - v.lo.x) + (v.hi.y - v.lo.y) * (v.hi.y - v.lo.y) +
                    (v.hi.z - v.lo.z) * (v.hi.z - v.lo.z));
    view_frame_scene(&v);
    v.follow.on = true;

    if (v.window) {
        glfwSetWindowUserPointer(v.window, &v);
        glfwSetCursorPosCallback(v.window, view_on_cursor);
        glfwSetMouseButtonCallback(v.window, view_on_button);
        glfwSetScrollCallback(v.window, view_on_scroll);
        glfwSetKeyCallback(v.window, view_on_key);
        glfwSetFramebufferSizeCallback(v.window, view_on_resize);
    }

    status_code = 0;
    double last = now_seconds(&v);
    v.last_sample_time = v.last_start = last;
    while (!v.quit && !(v.window && glfwWindowShouldClose(v.window))) {
        const double now = now_seconds(&v);
        view_run_script(&v);
        bool ok = !v.quit && advance(&v, now - last);
        // following moves the camera by the frame's time step with --frames, so that those runs
        // stay reproducible, else by the wall time (at most a tenth of a second: a stall does
        // not throw the camera)
        if (ok) view_follow_objects(&v, v.opt.frames > 0 ? v.info.dt : fmin(now - last, 0.1));
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
                view_say("error: %s", error);
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
        if (v.frame % 120 == 0 && v.opt.frames > 0) view_say("frame %lld of %d", (long long)v.frame, v.opt.frames);
    }
    v.run_seconds = now_seconds(&v) - v.last_start;
    if (v.failed) status_code = 1;
    if (status_code == 0 && v.opt.screenshot) {
        if (render_screenshot(&v.renderer, v.opt.screenshot, error, sizeof error)) view_say("wrote %s", v.opt.screenshot);
        else view_say("error: %s", error), status_code = 1;
    }
    if (status_code == 0 && v.opt.report && !view_write_report(&v, v.opt.report)) status_code = 1;
    view_say("%lld frames, %lld steps, %.2f s simulated, %.1f frames/s", (long long)v.frame, (long long)v.steps, v.sim_time,
        v.run_seconds > 0.0 ? (double)v.frame / v.run_seconds : 0.0);

done:
    // the world releases its shared GL buffers before GL deletes them
    sm_world_destroy(v.world);
    if (v.has_gl) {
        view_free_collider_meshes(&v);
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
