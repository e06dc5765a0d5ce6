/* The viewer's interaction tools (Henriques & Wuensche 2007, section 3), without OpenGL so the
 * tests can drive them:
 *   picking: a spring pulls a particle toward a target that follows the cursor on a plane
 *     facing the camera (the wheel moves that plane); a locked spring stays where it was left
 *     and can be grabbed again; all springs can be removed at once;
 *   pushing: a sphere that follows the cursor the same way and pushes particles out;
 *   cutting: two blades that follow the cursor and, closed, cut every object near the cursor's
 *     ray in two along the plane through that ray and the blades' direction on the screen
 *     (sm_world_cut()); the springs on cut objects follow their particles to the pieces.
 * The springs act through sm_world_set_force() once per step. A spring gives its particle the
 * velocity change  s (target - x) / dt - c v  over the step (s = strength, c = damping), the
 * same kind of fractional pull toward a goal as shape matching's alpha: for 0 < s, c < 1 the
 * particle alone approaches the target without overshoot growing, whatever dt, so dragging is
 * stable at any frame rate. As with alpha, the pull per second depends on dt: the same s pulls
 * more gently at longer steps (the viewer always steps by the scene's dt). */
#ifndef SM_VIEW_TOOLS_H
#define SM_VIEW_TOOLS_H

#include "camera.h"

#define VIEW_MAX_SPRINGS 64

typedef struct view_spring {
    int32_t particle;
    sm_vec3 target;     ///< m
    bool locked;        ///< stays in place when the mouse lets go
    sm_vec3 base_force; ///< the particle's own external force, restored when the spring goes
} view_spring;

typedef struct view_tools {
    view_spring springs[VIEW_MAX_SPRINGS];
    int spring_count;
    int dragging;        ///< the spring following the cursor, -1: none
    double drag_depth;   ///< m along the camera's forward axis: the plane the dragged target moves in
    double strength;     ///< s, default 0.3
    double damping;      ///< c, default 0.3
    bool push_mode;      ///< the push sphere follows the cursor
    double push_depth;   ///< m along the forward axis
    sm_pusher pusher;    ///< the push sphere given to the world
    bool pusher_moved;   ///< the sphere moved since the last step (its velocity is from that move)
    sm_vec3 pusher_last; ///< where it was at the last step
    double pusher_idle;  ///< s stepped since it last moved
    bool cut_mode;       ///< the blades follow the cursor and the left button cuts
    double cut_angle;    ///< radians: the blades' direction on the screen, from the right toward up
} view_tools;

/// The scissors under the cursor: two blades meeting at `apex` on the plane facing the camera,
/// pointing along `direction` (in that plane, at cut_angle from the screen's right toward its
/// up), opening along `side`; `plane` is the cut: through the cursor's ray and `direction`,
/// with a unit normal.
typedef struct view_blades {
    sm_vec3 apex;      ///< m: where the blades meet, on the cursor's ray
    sm_vec3 direction; ///< unit: where the blades point
    sm_vec3 side;      ///< unit, in the plane facing the camera, perpendicular to direction
    sm_plane plane;    ///< the cut plane (point: the apex)
} view_blades;

/// No springs, no pusher, default strength and damping.
void tools_init(view_tools *tools);

/// The first particle the ray hits, each a sphere of radius[i] (at least min_radius) around
/// xyzw[4 i .. 4 i + 2]; -1 if none. *out_t (may be NULL) receives the distance along the ray.
int32_t tools_pick_particle(const float *xyzw, const float *radius, int32_t count, double min_radius, view_ray ray,
                            double *out_t);

/// The locked spring whose target sphere of `radius` the ray hits first, or -1.
int tools_pick_target(const view_tools *tools, view_ray ray, double radius);

/// Attaches a new spring to `particle` with its target at `target` and starts dragging it.
sm_result tools_grab(view_tools *tools, sm_world *world, int32_t particle, sm_vec3 target, double depth);

/// Starts dragging locked spring `index` again.
void tools_regrab(view_tools *tools, int index, double depth);

/// Moves the dragged spring's target (nothing when none is dragged).
void tools_drag_to(view_tools *tools, sm_vec3 target);

/// Locks the dragged spring where it is.
void tools_lock(view_tools *tools);

/// Lets go of the dragged spring: unlocked, it is removed.
sm_result tools_release(view_tools *tools, sm_world *world);

/// Removes every spring.
sm_result tools_clear(view_tools *tools, sm_world *world);

/// Puts the push sphere at `center` with `radius` (enabled) or takes it away.
void tools_place_pusher(view_tools *tools, bool enabled, sm_vec3 center, double radius);

/// Before a step of dt: sets each spring's force from its particle's current position and
/// velocity, and gives the world the push sphere with the velocity of its last move.
sm_result tools_apply(view_tools *tools, sm_world *world, double dt);

/// Forgets every spring without touching a world (after the world was replaced).
void tools_forget(view_tools *tools);

/// The blades at `depth` along the camera's forward axis on `ray` (a ray of `camera`), pointing
/// at `angle` radians from the screen's right toward its up.
view_blades tools_blades(const view_camera *camera, view_ray ray, double angle, double depth);

/// Whether the particles particles[0 .. count) of xyzw (4 floats per particle) that lie within
/// `reach` of the ray's line, in front of its origin, lie on both sides of `plane` (front: dot(x -
/// point, normal) > 0, as sm_world_cut() decides): whether the blades reach across the object.
bool tools_blades_cross(const float *xyzw, const int32_t *particles, int32_t count, sm_plane plane, view_ray ray,
                        double reach);

/// Closes the blades: cuts along blades.plane every object (of those there are before the cut)
/// whose particles near the ray (within `reach`, by xyzw: every particle's position, 4 floats
/// each, read before the cut) lie on both sides of it. Particles keep their indices and objects
/// their ids through a cut, so the springs stay on their particles. Each cut made goes into
/// cuts[] (up to max_cuts; *out_count says how many, also past max_cuts). Stops at the first
/// failure, returning it.
sm_result tools_cut(sm_world *world, const float *xyzw, const view_blades *blades, view_ray ray, double reach,
                    sm_cut_info *cuts, int max_cuts, int *out_count);

#endif
