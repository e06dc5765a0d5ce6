/* shapematch-view's state, shared by its files (main.c, session.c, input.c, overlay.c,
 * report.c): the options, the window or EGL context, the scene and its world, the GL buffers,
 * the camera, the tools, the script, the mouse, the time and what the report records; and the
 * messages they print. */
#ifndef SM_VIEW_VIEWER_H
#define SM_VIEW_VIEWER_H

#include "camera.h"
#include "headless.h"
#include "options.h"
#include "particles_gl.h"
#include "render.h"
#include "script.h"
#include "surfaces_gl.h"
#include "tools.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

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
    sm_vec3 *start_stats; ///< view_object_stats() at the start
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
    // the mesh colliders' triangles uploaded for drawing, per collider ({0} for the others), of the
    // world they were made for (remade when the world is reopened)
    view_mesh *collider_meshes;
    int32_t collider_mesh_count;
    const sm_world *collider_meshes_world;
    float *host_xyzw; ///< positions read for picking and following
    int32_t host_capacity; ///< particles host_xyzw has room for
} viewer;

/// Prints "shapematch-view: " and the formatted message on a line of its own (stdout, flushed).
void view_say(const char *format, ...);
/// Formats the status line (the overlay's last line) and prints it with view_say().
void view_status(viewer *v, const char *format, ...);

#endif
