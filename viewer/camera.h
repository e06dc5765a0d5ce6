/* The viewer's orbit camera: a target point, yaw, pitch and distance; its matrices for OpenGL
 * and the ray under a pixel, for picking. */
#ifndef SM_VIEW_CAMERA_H
#define SM_VIEW_CAMERA_H

#include <shapematch/shapematch.h>

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

/// A camera looking at the box [lo, hi] from slightly above, the whole box in view.
view_camera camera_frame(sm_vec3 lo, sm_vec3 hi, int width, int height);
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
