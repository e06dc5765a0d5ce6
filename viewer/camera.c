#include "camera.h"

#include <math.h>

static sm_vec3 vec(double x, double y, double z) { return (sm_vec3){x, y, z}; }
static sm_vec3 add(sm_vec3 a, sm_vec3 b) { return vec(a.x + b.x, a.y + b.y, a.z + b.z); }
static sm_vec3 sub(sm_vec3 a, sm_vec3 b) { return vec(a.x - b.x, a.y - b.y, a.z - b.z); }
static sm_vec3 scale(sm_vec3 a, double s) { return vec(a.x * s, a.y * s, a.z * s); }
static double dot(sm_vec3 a, sm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static sm_vec3 cross(sm_vec3 a, sm_vec3 b) { return vec(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static sm_vec3 normalize(sm_vec3 a) { return scale(a, 1.0 / sqrt(dot(a, a))); }

/// How long re-centring takes to close about two thirds of the gap, s.
#define FOLLOW_TIME 0.25
/// Re-centring begins when a particle comes this near the picture's edge (a fraction of its half
/// width or height), frames the particles within FOLLOW_FRAME of it (as camera_frame() frames a
/// box, with a tenth to spare), and ends when the target is within FOLLOW_DONE of the distance of
/// the particles' centre and the distance within it of its goal.
#define FOLLOW_MARGIN 0.95
#define FOLLOW_FRAME 0.9
#define FOLLOW_DONE 0.02

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

double camera_distance_to_see(const view_camera *c, sm_vec3 target, const float *xyzw, int32_t count, double pad,
                              double margin)
{
    sm_vec3 f, r, u;
    camera_basis(c, &f, &r, &u);
    const double ty = margin * tan(0.5 * c->fov_y), tx = ty * (double)c->width / (c->height > 0 ? c->height : 1);
    // from distance d a point at (x, y) across the view and z along it from the target lies at
    // depth z + d: in view where |x| <= tx (z + d) and |y| <= ty (z + d)
    double need = 0.0;
    for (int32_t i = 0; i < count; i++) {
        const float *p = xyzw + 4 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) continue;
        const sm_vec3 d = sub(vec(p[0], p[1], p[2]), target);
        const double x = fabs(dot(d, r)) + pad, y = fabs(dot(d, u)) + pad;
        need = fmax(need, fmax(x / tx, y / ty) - dot(d, f));
    }
    return need;
}

void camera_follow(view_camera *c, view_follow *f, const float *xyzw, int32_t count, double pad, double seconds)
{
    if (!f->on) {
        f->moving = false;
        return;
    }
    // the centre of the particles' bounding box
    sm_vec3 lo = {INFINITY, INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < count; i++) {
        const float *p = xyzw + 4 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) continue;
        lo = vec(fmin(lo.x, p[0]), fmin(lo.y, p[1]), fmin(lo.z, p[2]));
        hi = vec(fmax(hi.x, p[0]), fmax(hi.y, p[1]), fmax(hi.z, p[2]));
    }
    if (!(lo.x <= hi.x) || !(seconds > 0.0)) return; // no particle, or no time
    if (!f->moving) {
        if (camera_distance_to_see(c, c->target, xyzw, count, pad, FOLLOW_MARGIN) <= c->distance) return;
        f->moving = true;
        f->distance = c->distance;
    }
    // the same fraction of the gap closes in the same time whatever the frame rate
    const double k = 1.0 - exp(-seconds / FOLLOW_TIME);
    const sm_vec3 centre = scale(add(lo, hi), 0.5);
    c->target = add(c->target, scale(sub(centre, c->target), k));
    // framed about the centre, or about the target while it lags the particles
    const double goal = fmax(f->distance, camera_distance_to_see(c, centre, xyzw, count, pad, FOLLOW_FRAME));
    const double now = camera_distance_to_see(c, c->target, xyzw, count, pad, FOLLOW_FRAME);
    c->distance += k * (fmax(goal, now) - c->distance);
    // and at once as far as it takes to keep every particle in the picture: a fast object outruns the easing
    c->distance = fmax(c->distance, camera_distance_to_see(c, c->target, xyzw, count, pad, 1.0));
    const double lag = sqrt(dot(sub(centre, c->target), sub(centre, c->target)));
    if (lag < FOLLOW_DONE * c->distance && fabs(c->distance - goal) < FOLLOW_DONE * c->distance) f->moving = false;
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
