#include "tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sm_vec3 vadd(sm_vec3 a, sm_vec3 b) { return (sm_vec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static sm_vec3 vsub(sm_vec3 a, sm_vec3 b) { return (sm_vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static sm_vec3 vscale(sm_vec3 a, double s) { return (sm_vec3){a.x * s, a.y * s, a.z * s}; }
static double vdot(sm_vec3 a, sm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static sm_vec3 vcross(sm_vec3 a, sm_vec3 b)
{
    return (sm_vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static sm_vec3 vunit(sm_vec3 a)
{
    const double n = sqrt(vdot(a, a));
    return n > 0.0 ? vscale(a, 1.0 / n) : a;
}

void tools_init(view_tools *tools)
{
    memset(tools, 0, sizeof *tools);
    tools->dragging = -1;
    tools->strength = 0.3;
    tools->damping = 0.3;
    tools->cut_angle = 0.5 * 3.14159265358979323846; // blades up the screen: a vertical cut
}

/// Distance along the ray to the first intersection with the sphere (c, r), or INFINITY.
static double ray_sphere(view_ray ray, sm_vec3 c, double r)
{
    const sm_vec3 d = {c.x - ray.origin.x, c.y - ray.origin.y, c.z - ray.origin.z};
    const double along = d.x * ray.direction.x + d.y * ray.direction.y + d.z * ray.direction.z;
    const double miss2 = d.x * d.x + d.y * d.y + d.z * d.z - along * along;
    if (miss2 > r * r) return INFINITY;
    const double t = along - sqrt(r * r - miss2);
    return t > 0.0 ? t : (along > 0.0 ? along : INFINITY);
}

int32_t tools_pick_particle(const float *xyzw, const float *radius, int32_t count, double min_radius, view_ray ray,
                            double *out_t)
{
    int32_t best = -1;
    double best_t = INFINITY;
    for (int32_t i = 0; i < count; i++) {
        const sm_vec3 c = {xyzw[4 * i], xyzw[4 * i + 1], xyzw[4 * i + 2]};
        const double t = ray_sphere(ray, c, fmax(radius[i], min_radius));
        if (t < best_t) best_t = t, best = i;
    }
    if (out_t) *out_t = best_t;
    return best;
}

int tools_pick_target(const view_tools *tools, view_ray ray, double radius)
{
    int best = -1;
    double best_t = INFINITY;
    for (int s = 0; s < tools->spring_count; s++) {
        if (!tools->springs[s].locked) continue;
        const double t = ray_sphere(ray, tools->springs[s].target, radius);
        if (t < best_t) best_t = t, best = s;
    }
    return best;
}

sm_result tools_grab(view_tools *tools, sm_world *world, int32_t particle, sm_vec3 target, double depth)
{
    if (tools->spring_count == VIEW_MAX_SPRINGS) return SM_ERROR_INVALID_ARGUMENT;
    // the particle's own force: from a spring already on it (its force now includes that pull)
    sm_vec3 own = {0, 0, 0};
    bool held = false;
    for (int s = 0; s < tools->spring_count && !held; s++)
        if (tools->springs[s].particle == particle) own = tools->springs[s].base_force, held = true;
    if (!held) {
        double base[3];
        sm_result result = sm_world_get_forces(world, particle, 1, base);
        if (result != SM_OK) return result;
        own = (sm_vec3){base[0], base[1], base[2]};
    }
    tools->springs[tools->spring_count] =
        (view_spring){.particle = particle, .target = target, .locked = false, .base_force = own};
    tools->dragging = tools->spring_count++;
    tools->drag_depth = depth;
    return SM_OK;
}

void tools_regrab(view_tools *tools, int index, double depth)
{
    if (index < 0 || index >= tools->spring_count) return;
    tools->springs[index].locked = false;
    tools->dragging = index;
    tools->drag_depth = depth;
}

void tools_drag_to(view_tools *tools, sm_vec3 target)
{
    if (tools->dragging >= 0) tools->springs[tools->dragging].target = target;
}

void tools_lock(view_tools *tools)
{
    if (tools->dragging < 0) return;
    tools->springs[tools->dragging].locked = true;
    tools->dragging = -1;
}

/// Removes spring `index`, restoring its particle's own force.
static sm_result remove_spring(view_tools *tools, sm_world *world, int index)
{
    const view_spring spring = tools->springs[index];
    tools->springs[index] = tools->springs[--tools->spring_count];
    if (tools->dragging == tools->spring_count) tools->dragging = index;
    // another spring may hold the same particle: its force is set again by the next tools_apply()
    return sm_world_set_force(world, spring.particle, spring.base_force);
}

sm_result tools_release(view_tools *tools, sm_world *world)
{
    const int index = tools->dragging;
    tools->dragging = -1;
    if (index < 0 || tools->springs[index].locked) return SM_OK;
    return remove_spring(tools, world, index);
}

sm_result tools_clear(view_tools *tools, sm_world *world)
{
    sm_result result = SM_OK;
    // newest first, so a particle held twice gets back the force it had before the first spring
    while (tools->spring_count > 0 && result == SM_OK) result = remove_spring(tools, world, tools->spring_count - 1);
    tools->dragging = -1;
    return result;
}

void tools_forget(view_tools *tools)
{
    tools->spring_count = 0;
    tools->dragging = -1;
    tools->pusher_moved = false;
    tools->pusher_idle = 0.0;
}

void tools_place_pusher(view_tools *tools, bool enabled, sm_vec3 center, double radius)
{
    if (!tools->pusher.enabled && enabled) tools->pusher_last = center, tools->pusher_idle = 0.0; // appears at rest
    tools->pusher.enabled = enabled;
    tools->pusher.center = center;
    tools->pusher.radius = radius;
    tools->pusher_moved = true;
}

sm_result tools_apply(view_tools *tools, sm_world *world, double dt)
{
    sm_result result = SM_OK;
    // each particle's force is its own plus the pull of every spring on it
    for (int s = 0; s < tools->spring_count && result == SM_OK; s++) {
        const int32_t i = tools->springs[s].particle;
        sm_vec3 total = tools->springs[s].base_force;
        bool first = true;
        for (int t = 0; t < s; t++) first &= tools->springs[t].particle != i;
        if (!first) continue;
        double x[3], v[3], m;
        result = sm_world_get_positions(world, i, 1, x);
        if (result == SM_OK) result = sm_world_get_velocities(world, i, 1, v);
        if (result == SM_OK) result = sm_world_get_masses(world, i, 1, &m);
        if (result != SM_OK) break;
        for (int t = s; t < tools->spring_count; t++) {
            if (tools->springs[t].particle != i) continue;
            const sm_vec3 g = tools->springs[t].target;
            total.x += m * (tools->strength * (g.x - x[0]) / (dt * dt) - tools->damping * v[0] / dt);
            total.y += m * (tools->strength * (g.y - x[1]) / (dt * dt) - tools->damping * v[1] / dt);
            total.z += m * (tools->strength * (g.z - x[2]) / (dt * dt) - tools->damping * v[2] / dt);
        }
        result = sm_world_set_force(world, i, total);
    }
    if (result != SM_OK) return result;
    sm_pusher pusher = tools->pusher;
    if (pusher.enabled) {
        // a move's velocity is spread over the time since the sphere last moved (a frame may
        // take several steps between moves of the cursor)
        tools->pusher_idle += dt;
        const sm_vec3 c = pusher.center, last = tools->pusher_last;
        const double t = tools->pusher_idle;
        pusher.velocity = tools->pusher_moved ? (sm_vec3){(c.x - last.x) / t, (c.y - last.y) / t, (c.z - last.z) / t}
                                              : (sm_vec3){0, 0, 0};
        if (tools->pusher_moved) tools->pusher_idle = 0.0;
        tools->pusher_last = c;
        tools->pusher_moved = false;
    }
    return sm_world_set_pusher(world, &pusher);
}

view_blades tools_blades(const view_camera *camera, view_ray ray, double angle, double depth)
{
    sm_vec3 forward, right, up;
    camera_basis(camera, &forward, &right, &up);
    view_blades b;
    b.apex = camera_point_at_depth(camera, ray, depth);
    b.direction = vadd(vscale(right, cos(angle)), vscale(up, sin(angle)));
    b.side = vcross(forward, b.direction); // a quarter turn on the screen, in the plane facing the camera
    // the plane holds the ray and the blades' direction: its normal is perpendicular to both
    // (never degenerate: the ray points forward, the direction lies across)
    b.plane = (sm_plane){b.apex, vunit(vcross(ray.direction, b.direction))};
    return b;
}

bool tools_blades_cross(const float *xyzw, const int32_t *particles, int32_t count, sm_plane plane, view_ray ray,
                        double reach)
{
    bool front = false, back = false;
    for (int32_t k = 0; k < count && !(front && back); k++) {
        const int32_t i = particles[k];
        const sm_vec3 x = {xyzw[4 * i], xyzw[4 * i + 1], xyzw[4 * i + 2]};
        const sm_vec3 d = vsub(x, ray.origin);
        const double along = vdot(d, ray.direction);
        if (along <= 0.0 || vdot(d, d) - along * along > reach * reach) continue; // out of the blades' reach
        if (vdot(vsub(x, plane.point), plane.normal) > 0.0) front = true;
        else back = true;
    }
    return front && back;
}

sm_result tools_cut(sm_world *world, const float *xyzw, const view_blades *blades, view_ray ray, double reach,
                    sm_cut_info *cuts, int max_cuts, int *out_count)
{
    *out_count = 0;
    sm_result result = SM_OK;
    // the objects there were before the click (a cut appends its front piece, which this click
    // does not cut again); particles keep their indices, so springs and picks need nothing
    const int32_t objects = sm_world_get_counts(world).objects;
    for (int32_t o = 0; o < objects && result == SM_OK; o++) {
        const int32_t *particles = NULL;
        int32_t count = 0;
        result = sm_world_get_object_particles(world, o, &particles, &count);
        if (result != SM_OK || !tools_blades_cross(xyzw, particles, count, blades->plane, ray, reach)) continue;
        sm_cut_info info;
        result = sm_world_cut(world, o, blades->plane, &info);
        if (result == SM_OK && info.cut) {
            if (*out_count < max_cuts) cuts[*out_count] = info;
            ++*out_count;
        }
    }
    return result;
}
