/* shapematch-view's input (input.h): mouse and key handling, picking, cutting and the pusher,
 * GLFW's callbacks, and the script's events. */
#include "input.h"
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Interaction ---------------------------------------------------------------------------- */

/// Closes the blades: cuts every object they reach across (tools_cut()), then takes the cuts.
static void cut_here(viewer *v)
{
    enum { MAX_CUTS = 256 };
    static sm_cut_info cuts[MAX_CUTS];
    v->cut_closed = CUT_CLOSED_FRAMES;
    const view_blades blades = view_blades_now(v);
    if (v->particles.count == 0 || !v->host_xyzw) {
        view_status(v, "nothing to cut");
        return;
    }
    int count = 0;
    const sm_result result = tools_cut(v->world, v->host_xyzw, &blades, view_cursor_ray(v), view_cut_reach(v), cuts, MAX_CUTS, &count);
    if (count > 0 && !view_take_cuts(v, false)) return;
    if (result != SM_OK) view_status(v, "cut failed: %s", sm_last_error());
    else if (count == 0) view_status(v, "the blades cut nothing");
    else view_status(v, "%d cut%s: %d objects", count, count == 1 ? "" : "s", sm_world_get_counts(v->world).objects);
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
    const view_ray ray = view_cursor_ray(v);
    const int locked = tools_pick_target(&v->tools, ray, view_target_radius(v));
    if (locked >= 0) {
        tools_regrab(&v->tools, locked, camera_depth(&v->camera, v->tools.springs[locked].target));
        view_status(v, "spring %d grabbed again", locked);
        return;
    }
    const int32_t i = view_particle_under_cursor(v);
    if (i < 0) {
        v->orbiting = true;
        return;
    }
    const sm_vec3 p = {v->host_xyzw[4 * i], v->host_xyzw[4 * i + 1], v->host_xyzw[4 * i + 2]};
    if (tools_grab(&v->tools, v->world, i, p, camera_depth(&v->camera, p)) != SM_OK) {
        view_status(v, "no more springs (at most %d)", VIEW_MAX_SPRINGS);
        return;
    }
    if (v->pick_count < (int)(sizeof v->picks / sizeof v->picks[0]))
        v->picks[v->pick_count++] = (pick_record){v->frame, i, v->particles.object[i], p};
    view_status(v, "picked particle %d of object %d at (%.3f, %.3f, %.3f)", i, v->particles.object[i], p.x, p.y, p.z);
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
            view_status(v, "spring locked");
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
    tools_place_pusher(&v->tools, true, camera_point_at_depth(&v->camera, view_cursor_ray(v), v->tools.push_depth), view_push_radius(v));
}

static void handle_cursor(viewer *v, double x, double y)
{
    const double dx = x - v->cursor_x, dy = y - v->cursor_y;
    v->cursor_x = x, v->cursor_y = y;
    if (v->orbiting) camera_orbit(&v->camera, dx, dy);
    if (v->panning && (dx != 0.0 || dy != 0.0)) {
        view_stop_following(v);
        camera_pan(&v->camera, dx, dy);
    }
    if (v->tools.dragging >= 0) tools_drag_to(&v->tools, camera_point_at_depth(&v->camera, view_cursor_ray(v), v->tools.drag_depth));
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
        view_status(v, "blades at %.0f degrees", v->tools.cut_angle * 180.0 / pi);
    } else if (v->tools.dragging >= 0) {
        v->tools.drag_depth = fmax(0.01 * v->camera.distance, v->tools.drag_depth + step);
        tools_drag_to(&v->tools, camera_point_at_depth(&v->camera, view_cursor_ray(v), v->tools.drag_depth));
    } else if (v->tools.push_mode) {
        v->tools.push_depth = fmax(0.01 * v->camera.distance, v->tools.push_depth + step);
        place_pusher(v);
    } else {
        view_stop_following(v);
        camera_zoom(&v->camera, notches);
    }
}

static void handle_key(viewer *v, const char *key)
{
    if (strcmp(key, "ESCAPE") == 0) v->quit = true;
    else if (strcmp(key, "SPACE") == 0) v->paused = !v->paused, v->step_once = false, view_status(v, v->paused ? "paused" : "running");
    else if (strcmp(key, "N") == 0 || strcmp(key, "PERIOD") == 0) v->step_once = true;
    else if (strcmp(key, "R") == 0) view_reset(v);
    else if (strcmp(key, "H") == 0) v->help = !v->help;
    else if (strcmp(key, "F") == 0) view_frame_scene(v);
    else if (strcmp(key, "T") == 0) {
        v->follow.on = !v->follow.on;
        v->follow.moving = false;
        view_status(v, v->follow.on ? "camera: following the objects" : "camera: following off");
    }
    else if (strcmp(key, "K") == 0) v->colour = (view_colour)((v->colour + 1) % VIEW_COLOUR_COUNT);
    else if (strcmp(key, "O") == 0) view_drop_object(v);
    else if (strcmp(key, "M") == 0) {
        static const char *modes[DRAW_MODE_COUNT] = {"surfaces", "particles", "surfaces and particles"};
        v->draw_mode = (draw_mode)((v->draw_mode + 1) % DRAW_MODE_COUNT);
        view_status(v, "drawing %s%s", modes[v->draw_mode], v->surfaces.triangle_count > 0 ? "" : " (no object has a surface)");
    } else if (strcmp(key, "C") == 0) {
        tools_clear(&v->tools, v->world);
        view_status(v, "springs removed");
    } else if (strcmp(key, "P") == 0) {
        if (v->tools.dragging >= 0) tools_release(&v->tools, v->world);
        v->tools.cut_mode = false;
        v->tools.push_mode = !v->tools.push_mode;
        v->tools.push_depth = camera_depth(&v->camera, v->camera.target);
        if (v->tools.push_mode) place_pusher(v);
        else tools_place_pusher(&v->tools, false, v->tools.pusher.center, v->tools.pusher.radius);
        view_status(v, v->tools.push_mode ? "push mode" : "pick mode");
    } else if (strcmp(key, "X") == 0) {
        if (v->tools.dragging >= 0) tools_release(&v->tools, v->world);
        if (v->tools.push_mode) {
            v->tools.push_mode = false;
            tools_place_pusher(&v->tools, false, v->tools.pusher.center, v->tools.pusher.radius);
        }
        v->tools.cut_mode = !v->tools.cut_mode;
        v->cut_closed = 0;
        view_status(v, v->tools.cut_mode ? "cut mode" : "pick mode");
    } else if (strlen(key) == 1 && strchr("123QAWS", key[0])) view_edit_object(v, key);
}

/* ---- GLFW callbacks ------------------------------------------------------------------------- */

static viewer *of(GLFWwindow *window) { return glfwGetWindowUserPointer(window); }

/// Whether input is still handled (not once the viewer is quitting, when the world may be gone).
static bool live(const viewer *v) { return !v->quit && v->world; }

void view_on_cursor(GLFWwindow *window, double x, double y)
{
    viewer *v = of(window);
    if (!live(v)) return;
    int w, h, fw, fh;
    glfwGetWindowSize(window, &w, &h);
    glfwGetFramebufferSize(window, &fw, &fh);
    handle_cursor(v, x * fw / (w > 0 ? w : 1), y * fh / (h > 0 ? h : 1)); // in framebuffer pixels
}

void view_on_button(GLFWwindow *window, int button, int action, int mods)
{
    if (button <= 2 && live(of(window))) handle_button(of(window), button == GLFW_MOUSE_BUTTON_LEFT ? 0 : button == GLFW_MOUSE_BUTTON_RIGHT ? 1 : 2,
                                   action == GLFW_PRESS, mods);
}

void view_on_scroll(GLFWwindow *window, double dx, double dy)
{
    const bool shift = glfwGetKey(window, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(window, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
    // some systems turn shift + wheel into a sideways scroll
    const double notches = dy != 0.0 || !shift ? dy : dx;
    if (live(of(window)) && notches != 0.0) handle_wheel(of(window), notches, shift);
}

void view_on_key(GLFWwindow *window, int key, int scancode, int action, int mods)
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

void view_on_resize(GLFWwindow *window, int width, int height)
{
    viewer *v = of(window);
    if (width <= 0 || height <= 0) return;
    render_resize(&v->renderer, width, height);
    v->camera.width = width, v->camera.height = height;
}

/* ---- The script ----------------------------------------------------------------------------- */

void view_run_script(viewer *v)
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
