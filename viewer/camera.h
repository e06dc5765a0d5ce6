/* The viewer's orbit camera: a target point, yaw, pitch and distance; its matrices for OpenGL
 * and the ray under a pixel, for picking. */
#ifndef SM_VIEW_CAMERA_H
#define SM_VIEW_CAMERA_H

#include <shapematch/shapematch.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct view_camera {
    sm_vec3 target;   ///< the point orbited, m
    double yaw;       ///< radians about y
    double pitch;     ///< radians above the horizontal
    double distance;  ///< m from the target
    double fov_y;     ///< vertical field of view, radians
    int width, height; ///< viewport, pixels
} view_camera;

/// A ray from the eye.
typedef struct view_ray {
    sm_vec3 origin, direction; ///< direction has unit length
} view_ray;

/// Following (the viewer's T): the camera keeps the objects in view. While every particle stays
/// inside the picture the camera stays put, so that picking and dragging work on a still view;
/// once one comes near the picture's edge (or behind the eye) the camera re-centres: its target
/// eases toward the centre of the particles' bounding box and its distance toward one from which
/// they are all in view about the target as it is (backing off while the target lags a fast
/// object, at once where a particle would otherwise leave the picture), never nearer than it was
/// when the re-centring began, until the target has caught up.
typedef struct view_follow {
    bool on;              ///< following
    bool moving;          ///< re-centring
    double distance;      ///< the camera's distance when the re-centring began
} view_follow;

/// A camera looking at the box [lo, hi] from slightly above, the whole box in view.
view_camera camera_frame(sm_vec3 lo, sm_vec3 hi, int width, int height);
/// The least distance from which every point of `xyzw` (x, y, z, w per point; those not finite
/// left out), as a ball of radius `pad`, lies in the picture within `margin` (a fraction of its
/// half width and half height) of its centre, the camera orbiting `target` in its direction.
/// 0 for no points.
double camera_distance_to_see(const view_camera *camera, sm_vec3 target, const float *xyzw, int32_t count, double pad,
                              double margin);
/// One frame of following the particles of `xyzw` (see view_follow) that lasted `seconds`: the
/// same points and seconds move the camera the same way, so runs of --frames stay reproducible.
void camera_follow(view_camera *camera, view_follow *follow, const float *xyzw, int32_t count, double pad, double seconds);
/// The eye position and its forward, right and up unit vectors.
sm_vec3 camera_eye(const view_camera *camera);
void camera_basis(const view_camera *camera, sm_vec3 *forward, sm_vec3 *right, sm_vec3 *up);
/// Column-major 4x4 view and projection matrices.
void camera_matrices(const view_camera *camera, float view[16], float projection[16]);
/// The ray through pixel (x, y), measured from the top-left corner.
view_ray camera_ray(const view_camera *camera, double x, double y);
/// Orbit by pixel deltas; pan by pixel deltas (the target moves in the view plane); zoom by steps.
void camera_orbit(view_camera *camera, double dx, double dy);
void camera_pan(view_camera *camera, double dx, double dy);
void camera_zoom(view_camera *camera, double steps);
/// The point where the ray meets the plane facing the camera at `depth` along its forward axis.
sm_vec3 camera_point_at_depth(const view_camera *camera, view_ray ray, double depth);
/// How far along the forward axis point p lies from the eye.
double camera_depth(const view_camera *camera, sm_vec3 p);

#endif
