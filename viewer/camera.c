#include "camera.h"

#include <math.h>

static sm_vec3 vec(double x, double y, double z) { return (sm_vec3){x, y, z}; }
static sm_vec3 add(sm_vec3 a, sm_vec3 b) { return vec(a.x + b.x, a.y + b.y, a.z + b.z); }
static sm_vec3 sub(sm_vec3 a, sm_vec3 b) { return vec(a.x - b.x, a.y - b.y, a.z - b.z); }
static sm_vec3 scale(sm_vec3 a, double s) { return vec(a.x * s, a.y * s, a.z * s); }
static double dot(sm_vec3 a, sm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static sm_vec3 cross(sm_vec3 a, sm_vec3 b) { return vec(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static sm_vec3 normalize(sm_vec3 a) { return scale(a, 1.0 / sqrt(dot(a, a))); }

view_camera camera_frame(sm_vec3 lo, sm_vec3 hi, int width, int height)
{
    view_camera c = {.yaw = 0.5, .pitch = 0.35, .fov_y = 45.0 * 3.14159265358979323846 / 180.0, .width = width, .height = height};
    c.target = scale(add(lo, hi), 0.5);
    const double radius = fmax(0.5 * sqrt(dot(sub(hi, lo), sub(hi, lo))), 0.1);
    const double aspect = (double)width / (height > 0 ? height : 1);
    const double half = fmin(c.fov_y, 2.0 * atan(tan(0.5 * c.fov_y) * aspect)) * 0.5;
    c.distance = 1.1 * radius / sin(half);
    return c;
}

sm_vec3 camera_eye(const view_camera *c)
{
    const sm_vec3 back = vec(cos(c->pitch) * sin(c->yaw), sin(c->pitch), cos(c->pitch) * cos(c->yaw));
    return add(c->target, scale(back, c->distance));
}

void camera_basis(const view_camera *c, sm_vec3 *forward, sm_vec3 *right, sm_vec3 *up)
{
    *forward = normalize(sub(c->target, camera_eye(c)));
    *right = normalize(cross(*forward, vec(0, 1, 0)));
    *up = cross(*right, *forward);
}

void camera_matrices(const view_camera *c, float view[16], float projection[16])
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const sm_vec3 eye = camera_eye(c);
    const float v[16] = {(float)r.x, (float)u.x, (float)-f.x, 0, (float)r.y, (float)u.y, (float)-f.y, 0,
                         (float)r.z, (float)u.z, (float)-f.z, 0, (float)-dot(r, eye), (float)-dot(u, eye), (float)dot(f, eye), 1};
    for (int i = 0; i < 16; i++) view[i] = v[i];
    const double near = 0.01 * c->distance, far = 200.0 * c->distance;
    const double t = 1.0 / tan(0.5 * c->fov_y), aspect = (double)c->width / (c->height > 0 ? c->height : 1);
    for (int i = 0; i < 16; i++) projection[i] = 0.0f;
    projection[0] = (float)(t / aspect);
    projection[5] = (float)t;
    projection[10] = (float)((far + near) / (near - far));
    projection[11] = -1.0f;
    projection[14] = (float)(2.0 * far * near / (near - far));
}

view_ray camera_ray(const view_camera *c, double x, double y)
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const double t = tan(0.5 * c->fov_y), aspect = (double)c->width / (c->height > 0 ? c->height : 1);
    const double nx = 2.0 * x / (c->width > 0 ? c->width : 1) - 1.0, ny = 1.0 - 2.0 * y / (c->height > 0 ? c->height : 1);
    const sm_vec3 d = add(f, add(scale(r, nx * t * aspect), scale(u, ny * t)));
    return (view_ray){camera_eye(c), normalize(d)};
}

void camera_orbit(view_camera *c, double dx, double dy)
{
    c->yaw -= dx * 0.008;
    c->pitch = fmax(-1.5, fmin(1.5, c->pitch + dy * 0.008));
}

void camera_pan(view_camera *c, double dx, double dy)
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const double per_pixel = 2.0 * c->distance * tan(0.5 * c->fov_y) / (c->height > 0 ? c->height : 1);
    c->target = add(c->target, add(scale(r, -dx * per_pixel), scale(u, dy * per_pixel)));
}

void camera_zoom(view_camera *c, double steps) { c->distance = fmax(1e-3, c->distance * pow(0.9, steps)); }

sm_vec3 camera_point_at_depth(const view_camera *c, view_ray ray, double depth)
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const double along = dot(ray.direction, f);
    return add(ray.origin, scale(ray.direction, depth / (along > 1e-6 ? along : 1e-6)));
}

double camera_depth(const view_camera *c, sm_vec3 p)
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    return dot(sub(p, camera_eye(c)), f);
}
