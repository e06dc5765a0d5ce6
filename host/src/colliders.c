/* Colliders: static and kinematic planes, boxes and spheres that particles cannot enter. Their
 * scripted motion and their geometry live here, shared by the CPU reference's ground pass and
 * the state the OpenCL backend uploads for its kernel. */
#include "colliders.h"
#include "math3.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

sm_collider_def sm_collider_def_default(void)
{
    sm_collider_def def;
    memset(&def, 0, sizeof def);
    def.shape = SM_COLLIDER_BOX;
    def.normal = v3(0.0, 1.0, 0.0);
    def.size = v3(1.0, 1.0, 1.0);
    def.radius = 0.5;
    def.restitution = 0.3;
    def.friction = 0.2;
    def.motion.type = SM_MOTION_STATIC;
    def.internal_value = SM_DEF_COOKIE;
    return def;
}

static sm_result check_def(const sm_collider_def *d)
{
#define BAD(...) sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: " __VA_ARGS__)
    if (d->internal_value != SM_DEF_COOKIE) return BAD("the def was not made by sm_collider_def_default()");
    if (d->shape != SM_COLLIDER_PLANE && d->shape != SM_COLLIDER_BOX && d->shape != SM_COLLIDER_SPHERE)
        return BAD("unknown shape %d", (int)d->shape);
    if (!v3_is_finite(d->position) || !v3_is_finite(d->rotation)) return BAD("position and rotation must be finite");
    if (d->shape == SM_COLLIDER_PLANE && !(v3_length(d->normal) > 1e-12 && v3_is_finite(d->normal)))
        return BAD("a plane's normal must be finite and non-zero");
    if (d->shape == SM_COLLIDER_BOX && !(d->size.x > 0.0 && d->size.y > 0.0 && d->size.z > 0.0 && v3_is_finite(d->size)))
        return BAD("a box's size must be finite and > 0 (got %g, %g, %g)", d->size.x, d->size.y, d->size.z);
    if (d->shape == SM_COLLIDER_SPHERE && !(d->radius > 0.0 && isfinite(d->radius)))
        return BAD("a sphere's radius must be finite and > 0 (got %g)", d->radius);
    if (!(d->restitution >= 0.0 && d->restitution <= 1.0)) return BAD("restitution must be in [0, 1] (got %g)", d->restitution);
    if (!(d->friction >= 0.0 && d->friction <= 1.0)) return BAD("friction must be in [0, 1] (got %g)", d->friction);
    const sm_motion *m = &d->motion;
    switch (m->type) {
    case SM_MOTION_STATIC: break;
    case SM_MOTION_LINEAR:
        if (m->keyframe_count < 1 || !m->times || !m->offsets)
            return BAD("linear motion needs at least one keyframe (times and offsets)");
        for (int32_t k = 0; k < m->keyframe_count; k++) {
            if (!isfinite(m->times[k]) || !v3_is_finite(m->offsets[k])) return BAD("keyframe %d is not finite", k);
            if (k > 0 && !(m->times[k] > m->times[k - 1]))
                return BAD("keyframe times must increase (keyframe %d: %g after %g)", k, m->times[k], m->times[k - 1]);
        }
        break;
    case SM_MOTION_SINUSOIDAL:
        if (!v3_is_finite(m->amplitude) || !(m->frequency >= 0.0 && isfinite(m->frequency)) || !isfinite(m->phase))
            return BAD("sinusoidal motion needs a finite amplitude and phase and a frequency >= 0");
        break;
    default: return BAD("unknown motion type %d", (int)m->type);
    }
    return SM_OK;
#undef BAD
}

sm_result sm_world_add_collider(sm_world *world, const sm_collider_def *def, int32_t *out_collider)
{
    if (!world || !def) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: world and def must not be NULL");
    sm_result result = check_def(def);
    if (result != SM_OK) return result;
    if (world->collider_count == SM_MAX_COLLIDERS)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_add_collider: a world holds at most %d colliders", SM_MAX_COLLIDERS);
    if (world->collider_count == world->collider_capacity) {
        const int32_t capacity = world->collider_capacity ? 2 * world->collider_capacity : 4;
        if (!sm_grow((void **)&world->colliders, sizeof *world->colliders, (size_t)capacity))
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding a collider");
        world->collider_capacity = capacity;
    }
    sm_collider c = {.def = *def};
    c.def.motion.times = NULL, c.def.motion.offsets = NULL;
    if (def->motion.type == SM_MOTION_LINEAR) {
        const size_t n = (size_t)def->motion.keyframe_count;
        c.times = malloc(n * sizeof *c.times);
        c.offsets = malloc(n * sizeof *c.offsets);
        if (!c.times || !c.offsets) {
            free(c.times), free(c.offsets);
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adding a collider");
        }
        memcpy(c.times, def->motion.times, n * sizeof *c.times);
        memcpy(c.offsets, def->motion.offsets, n * sizeof *c.offsets);
        c.def.motion.times = c.times, c.def.motion.offsets = c.offsets;
    }
    c.axes = sm_rotation_from_euler_degrees(def->shape == SM_COLLIDER_BOX ? def->rotation : v3(0.0, 0.0, 0.0));
    if (def->shape == SM_COLLIDER_PLANE) {
        // an orthonormal frame whose second column is the normal, for drawing
        const sm_vec3 n = v3_scale(def->normal, 1.0 / v3_length(def->normal));
        const sm_vec3 t = fabs(n.x) < 0.9 ? v3(1.0, 0.0, 0.0) : v3(0.0, 0.0, 1.0);
        const sm_vec3 u = v3_cross(t, n);
        const sm_vec3 a = v3_scale(u, 1.0 / v3_length(u)), b = v3_cross(n, a);
        c.normal = n;
        c.axes = (sm_mat3){{{b.x, n.x, a.x}, {b.y, n.y, a.y}, {b.z, n.z, a.z}}};
    }
    world->colliders[world->collider_count] = c;
    if (out_collider) *out_collider = world->collider_count;
    world->collider_count++;
    return SM_OK;
}

void sm_colliders_free(sm_world *world)
{
    for (int32_t i = 0; i < world->collider_count; i++) free(world->colliders[i].times), free(world->colliders[i].offsets);
    free(world->colliders);
}

void sm_collider_state(const sm_collider *c, double t, sm_vec3 *center, sm_vec3 *velocity)
{
    const sm_motion *m = &c->def.motion;
    sm_vec3 offset = v3(0.0, 0.0, 0.0), v = v3(0.0, 0.0, 0.0);
    if (m->type == SM_MOTION_LINEAR) {
        const int32_t last = m->keyframe_count - 1;
        if (t <= m->times[0]) {
            offset = m->offsets[0];
        } else if (t >= m->times[last]) {
            offset = m->offsets[last];
        } else {
            int32_t k = 0;
            while (t >= m->times[k + 1]) k++;
            const double span = m->times[k + 1] - m->times[k];
            v = v3_scale(v3_sub(m->offsets[k + 1], m->offsets[k]), 1.0 / span);
            offset = v3_add(m->offsets[k], v3_scale(v, t - m->times[k]));
        }
    } else if (m->type == SM_MOTION_SINUSOIDAL) {
        const double omega = 2.0 * SM_PI * m->frequency;
        const double angle = omega * t + m->phase * (SM_PI / 180.0);
        offset = v3_scale(m->amplitude, sin(angle));
        v = v3_scale(m->amplitude, omega * cos(angle));
    }
    *center = v3_add(c->def.position, offset);
    *velocity = v;
}

bool sm_collider_push_out(const sm_collider *c, sm_vec3 d, sm_vec3 *push, sm_vec3 *normal)
{
    switch (c->def.shape) {
    case SM_COLLIDER_PLANE: {
        const double s = v3_dot(d, c->normal);
        if (!(s < 0.0)) return false;
        *normal = c->normal;
        *push = v3_scale(c->normal, -s);
        return true;
    }
    case SM_COLLIDER_SPHERE: {
        const double distance = v3_length(d);
        if (!(distance < c->def.radius)) return false;
        *normal = distance > 0.0 ? v3_scale(d, 1.0 / distance) : v3(0.0, 1.0, 0.0);
        *push = v3_scale(*normal, c->def.radius - distance);
        return true;
    }
    case SM_COLLIDER_BOX: {
        // in the box's frame: inside when within every half extent; out through the nearest face
        const sm_vec3 local = m3_apply(m3_transpose(c->axes), d);
        const double half[3] = {0.5 * c->def.size.x, 0.5 * c->def.size.y, 0.5 * c->def.size.z};
        int best = -1;
        double best_depth = 0.0;
        for (int k = 0; k < 3; k++) {
            const double depth = half[k] - fabs(v3_get(local, k));
            if (!(depth > 0.0)) return false;
            if (best < 0 || depth < best_depth) best = k, best_depth = depth;
        }
        const double sign = v3_get(local, best) < 0.0 ? -1.0 : 1.0;
        const sm_vec3 axis = v3(c->axes.m[0][best], c->axes.m[1][best], c->axes.m[2][best]);
        *normal = v3_scale(axis, sign);
        *push = v3_scale(*normal, best_depth);
        return true;
    }
    }
    return false;
}

int32_t sm_world_get_collider_count(const sm_world *world) { return world ? world->collider_count : 0; }

double sm_world_get_time(const sm_world *world) { return world ? world->time : 0.0; }

sm_result sm_world_get_collider(const sm_world *world, int32_t collider, sm_collider_info *out)
{
    if (!world || !out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider: world and out must not be NULL");
    if (collider < 0 || collider >= world->collider_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_collider: no collider %d (the world has %d)", collider,
                       world->collider_count);
    const sm_collider *c = &world->colliders[collider];
    memset(out, 0, sizeof *out);
    out->shape = c->def.shape;
    sm_collider_state(c, world->time, &out->center, &out->velocity);
    out->axes = c->axes;
    out->size = c->def.size;
    out->radius = c->def.radius;
    return SM_OK;
}
