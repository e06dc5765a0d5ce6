/* The OpenCL backend's transfers between host and device: the conversions of the host's
 * records to the kernels' layouts and back, the upload of the whole world (sm_cl_push) and its
 * read-back (sm_cl_pull), the reads and writes of single fields, and the colliders' uploads. */
#include "../clusters.h"
#include "../math3.h"
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>

static cl_float4 f4(sm_vec3 v, double w) { return (cl_float4){{(float)v.x, (float)v.y, (float)v.z, (float)w}}; }
static sm_vec3 from_f4(cl_float4 v) { return v3(v.s[0], v.s[1], v.s[2]); }

/// The remainder v - (float)v of each coordinate: the low half of a double-float pair.
static cl_float4 f4_lo(sm_vec3 v)
{
    return (cl_float4){{sm_cl_low_half(v.x), sm_cl_low_half(v.y), sm_cl_low_half(v.z), 0.0f}};
}

/// hi + lo of a double-float pair.
static sm_vec3 from_pair(cl_float4 hi, cl_float4 lo)
{
    return v3((double)hi.s[0] + lo.s[0], (double)hi.s[1] + lo.s[1], (double)hi.s[2] + lo.s[2]);
}

static sm_k_mat3 k_mat3(sm_mat3 a)
{
    sm_k_mat3 k = {{{0}}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) k.m[i][j] = (float)a.m[i][j];
    return k;
}

static sm_mat3 from_k_mat3(const sm_k_mat3 *k)
{
    sm_mat3 a;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] = k->m[i][j];
    return a;
}

/// The unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method: the largest of
/// the four candidate divisors keeps it accurate for every angle).
static cl_float4 quat_of(sm_mat3 r)
{
    const double (*m)[3] = r.m;
    double t = m[0][0] + m[1][1] + m[2][2], w, x, y, z;
    if (t > m[0][0] && t > m[1][1] && t > m[2][2]) {
        double s = 2.0 * sqrt(fmax(1.0 + t, 1e-300));
        w = 0.25 * s, x = (m[2][1] - m[1][2]) / s, y = (m[0][2] - m[2][0]) / s, z = (m[1][0] - m[0][1]) / s;
    } else if (m[0][0] >= m[1][1] && m[0][0] >= m[2][2]) {
        double s = 2.0 * sqrt(fmax(1.0 + m[0][0] - m[1][1] - m[2][2], 1e-300));
        w = (m[2][1] - m[1][2]) / s, x = 0.25 * s, y = (m[0][1] + m[1][0]) / s, z = (m[0][2] + m[2][0]) / s;
    } else if (m[1][1] >= m[2][2]) {
        double s = 2.0 * sqrt(fmax(1.0 + m[1][1] - m[0][0] - m[2][2], 1e-300));
        w = (m[0][2] - m[2][0]) / s, x = (m[0][1] + m[1][0]) / s, y = 0.25 * s, z = (m[1][2] + m[2][1]) / s;
    } else {
        double s = 2.0 * sqrt(fmax(1.0 + m[2][2] - m[0][0] - m[1][1], 1e-300));
        w = (m[1][0] - m[0][1]) / s, x = (m[0][2] + m[2][0]) / s, y = (m[1][2] + m[2][1]) / s, z = 0.25 * s;
    }
    double norm = sqrt(w * w + x * x + y * y + z * z);
    if (!(norm > 0.0) || !isfinite(norm)) return (cl_float4){{0, 0, 0, 1}};
    return (cl_float4){{(float)(x / norm), (float)(y / norm), (float)(z / norm), (float)(w / norm)}};
}

static sm_k_object k_object(const sm_object *o)
{
    sm_k_object k = {
        .mode = (sm_int)o->mode,
        .flags = (o->volume_preservation ? SM_K_VOLUME : 0) | (o->volume_by_scaling ? SM_K_VOLUME_SCALE : 0) |
                 (o->cap.enabled ? SM_K_CAP : 0) | (o->plasticity.enabled ? SM_K_PLASTIC : 0) |
                 (o->self_collides ? SM_K_SELF_COLLIDE : 0),
        .first_particle = o->first_particle,
        .particle_count = o->particle_count,
        .alpha = (float)o->alpha,
        .tau = (float)o->tau,
        .beta = (float)o->beta,
        .damping = (float)o->damping,
        .cap_soft = (float)o->cap.soft,
        .cap_hard = (float)o->cap.hard,
        .plastic_yield = (float)o->plasticity.yield,
        .plastic_creep = (float)o->plasticity.creep,
        .plastic_max = (float)o->plasticity.max,
        .strain_limit = (float)o->strain_limit,
        .first_cluster = o->first_cluster,
        .cluster_count = o->cluster_count,
    };
    return k;
}

/// The mass-weighted mean b~ of a cluster's rest offsets as the device holds them (sm_k_bias): the
/// float offsets, and their quadratic terms formed as kernels/sm_math.h's sm_quadratic_terms_f()
/// forms them (each product rounded to float, then less the float mean, never fused: the
/// volatile keeps a compiler from fusing them here).
static sm_k_bias float_offsets_mean(const sm_world *world, const sm_cluster *cluster, const sm_k_cluster_rest *rest)
{
    const bool quadratic = world->objects[cluster->object].mode == SM_MODE_QUADRATIC;
    double sum[9] = {0}, mass = 0.0;
    for (int32_t j = cluster->first_member; j < cluster->first_member + cluster->member_count; j++) {
        const double m = (float)world->member_mass[j]; // the device's membership mass
        const float q[3] = {(float)world->member_q[j].x, (float)world->member_q[j].y, (float)world->member_q[j].z};
        mass += m;
        for (int a = 0; a < 3; a++) sum[a] += m * q[a];
        if (!quadratic) continue;
        static const int u[6] = {0, 1, 2, 0, 1, 2}, v[6] = {0, 1, 2, 1, 2, 0};
        for (int k = 0; k < 6; k++) {
            volatile float product = q[u[k]] * q[v[k]];
            volatile float term = product - rest->quad_mean[k];
            sum[3 + k] += m * term;
        }
    }
    sm_k_bias bias = {{0}};
    for (int k = 0; k < 9 && mass > 0.0; k++) bias.b[k] = (float)(sum[k] / mass);
    return bias;
}

/// One blocking write of `count` elements of `element` bytes at element `first`.
static sm_result write_buffer(sm_cl_backend *cl, cl_mem buffer, size_t element, int64_t first, int64_t count,
                              const void *data)
{
    sm_result result = SM_OK;
    if (count <= 0) return SM_OK;
    sm_cl_count_transfer(cl, element * (size_t)count);
    SM_CL_TRY(clEnqueueWriteBuffer(cl->queue, buffer, CL_TRUE, element * (size_t)first, element * (size_t)count, data, 0,
                                   NULL, NULL));
cleanup:
    return result;
}

sm_result sm_cl_fill_buffer(const sm_cl_backend *cl, cl_mem buffer, const void *pattern, size_t size, int64_t first,
                            int64_t count, cl_event *event)
{
    sm_result result = SM_OK;
    if (count <= 0) return SM_OK;
    SM_CL_TRY(clEnqueueFillBuffer(cl->queue, buffer, pattern, size, size * (size_t)first, size * (size_t)count, 0, NULL,
                                  event));
cleanup:
    return result;
}

sm_result sm_cl_read_buffer(const sm_cl_backend *cl, cl_mem buffer, size_t element, int64_t first, int64_t count,
                            void *data)
{
    sm_result result = SM_OK;
    if (count <= 0) return SM_OK;
    sm_cl_count_transfer(cl, element * (size_t)count);
    SM_CL_TRY(clEnqueueReadBuffer(cl->queue, buffer, CL_TRUE, element * (size_t)first, element * (size_t)count, data, 0,
                                  NULL, NULL));
cleanup:
    return result;
}

/// The float4 a particle field has on the device: position.w is the mass, force.w the inverse
/// mass (0 for a fixed particle, so the kernels need no flag).
static cl_float4 particle_value(const sm_world *world, sm_cl_field field, int32_t i)
{
    switch (field) {
    case SM_CL_POSITION: return f4(world->position[i], world->mass[i]);
    case SM_CL_VELOCITY: return f4(world->velocity[i], 0.0);
    case SM_CL_GOAL: return f4(world->goal[i], 0.0);
    case SM_CL_FORCE: return f4(world->force[i], world->fixed[i] ? 0.0 : 1.0 / world->mass[i]);
    case SM_CL_TARGET: {
        const double *t = &world->target[4 * (size_t)i];
        return f4(v3(t[0], t[1], t[2]), t[3]);
    }
    }
    return f4(v3(0, 0, 0), 0.0);
}

static cl_mem field_buffer(const sm_cl_backend *cl, sm_cl_field field)
{
    switch (field) {
    case SM_CL_POSITION: return cl->buffers.position;
    case SM_CL_VELOCITY: return cl->buffers.velocity;
    case SM_CL_GOAL: return cl->buffers.goal;
    case SM_CL_FORCE: return cl->buffers.force;
    case SM_CL_TARGET: return cl->buffers.target;
    }
    return NULL;
}

/// The buffer of a public particle or surface field (its float4 layout is the buffer's).
cl_mem sm_cl_particle_field_buffer(const sm_cl_backend *cl, sm_particle_field field)
{
    if (field == SM_FIELD_SURFACE_POSITION) return cl->buffers.surface_position;
    if (field == SM_FIELD_SURFACE_NORMAL) return cl->buffers.surface_normal;
    return field_buffer(cl, field == SM_FIELD_POSITION ? SM_CL_POSITION : field == SM_FIELD_VELOCITY ? SM_CL_VELOCITY : SM_CL_GOAL);
}

static sm_result write_particles(sm_world *world, sm_cl_field field, int32_t first, int32_t count)
{
    if (count <= 0) return SM_OK;
    cl_float4 *data = malloc(sizeof *data * (size_t)count);
    if (!data) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading %d particles", count);
    for (int32_t i = 0; i < count; i++) data[i] = particle_value(world, field, first + i);
    cl_float4 *lo = field == SM_CL_POSITION ? malloc(sizeof *lo * (size_t)count) : NULL;
    if (field == SM_CL_POSITION && !lo) {
        free(data);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading %d particles", count);
    }
    // a position read back from the device goes back split as it was (when it still adds up)
    for (int32_t i = 0; lo && i < count; i++) {
        const sm_vec3 p = world->position[first + i];
        lo[i] = f4_lo(p);
        if (first + i >= world->cl->position_hi_count) continue;
        const float *hi = &world->cl->position_hi[3 * (size_t)(first + i)];
        const double rest[3] = {p.x - hi[0], p.y - hi[1], p.z - hi[2]};
        if (!isnan(hi[0]) && (float)rest[0] == rest[0] && (float)rest[1] == rest[1] && (float)rest[2] == rest[2])
            for (int a = 0; a < 3; a++) data[i].s[a] = hi[a], lo[i].s[a] = (float)rest[a];
    }
    sm_result result = write_buffer(world->cl, field_buffer(world->cl, field), sizeof *data, first, count, data);
    if (result == SM_OK && lo) result = write_buffer(world->cl, world->cl->buffers.position_lo, sizeof *lo, first, count, lo);
    free(lo);
    free(data);
    return result;
}

/// Makes the target buffer hold every particle once the world has targets, uploading them all
/// when it is made; *made says whether it was.
sm_result sm_cl_ensure_targets(sm_world *world, bool *made)
{
    sm_cl_backend *cl = world->cl;
    *made = false;
    if (world->target_count == 0 || cl->target_capacity >= world->particle_count) return SM_OK;
    int64_t used = 0;
    for (int k = 0; k < SM_CL_MEM_KINDS; k++) used += cl->memory[k];
    const int64_t bytes = (int64_t)sizeof(cl_float4) * world->particle_count;
    sm_result result = sm_cl_check_device_memory(world, used + bytes, bytes, "target");
    if (result != SM_OK) return result;
    if (cl->buffers.target) clReleaseMemObject(cl->buffers.target);
    cl->buffers.target = NULL;
    cl->target_capacity = 0;
    result = sm_cl_make_buffer(cl, &cl->buffers.target, sizeof(cl_float4), world->particle_count);
    if (result != SM_OK) return result;
    cl->target_capacity = world->particle_count;
    *made = true;
    return write_particles(world, SM_CL_TARGET, 0, world->particle_count);
}

/// Allocates `count` elements of `size` bytes for staging, zeroed; one element when count is 0.
static void *staging(size_t size, int64_t count) { return calloc((size_t)(count > 0 ? count : 1), size); }

/// Uploads the skinned surfaces: bindings, triangles and the vertices and normals as they are.
static sm_result push_surfaces(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_cl_buffers *b = &cl->buffers;
    const int32_t v = world->surface_vertex_count, n_bind = world->surface_binding_count, t = world->surface_triangle_count;
    const int32_t incident = world->surface_incident_offsets[v];
    sm_result result = SM_OK;
    cl_float4 *vec4 = staging(sizeof *vec4, v > n_bind ? v : n_bind);
    if (!vec4) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the surfaces");
#define PUT(buffer, element, count, data)                                                     \
    if (result == SM_OK) result = write_buffer(cl, buffer, element, 0, count, data)
    PUT(b->surface_binding_offsets, sizeof(cl_int), v + 1, world->surface_binding_offsets);
    PUT(b->surface_binding_cluster, sizeof(cl_int), n_bind, world->surface_binding_cluster);
    for (int32_t i = 0; i < n_bind; i++) vec4[i] = f4(world->surface_binding_rest[i], 0.0);
    PUT(b->surface_binding_rest, sizeof *vec4, n_bind, vec4);
    PUT(b->surface_triangles, 3 * sizeof(cl_int), t, world->surface_triangles);
    PUT(b->surface_incident_offsets, sizeof(cl_int), v + 1, world->surface_incident_offsets);
    PUT(b->surface_incident, sizeof(cl_int), incident, world->surface_incident);
    for (int32_t i = 0; i < v; i++) vec4[i] = f4(world->surface_position[i], 1.0);
    PUT(b->surface_position, sizeof *vec4, v, vec4);
    for (int32_t i = 0; i < v; i++) vec4[i] = f4(world->surface_normal[i], 0.0);
    PUT(b->surface_normal, sizeof *vec4, v, vec4);
#undef PUT
    free(vec4);
    return result;
}

/* ---- The device's state that float does not round-trip ----------------------------------- */

/// Grows *array from *count to `count` elements of `element` bytes, the new ones NaN floats.
static bool grow_nan(void **array, int32_t *have, int32_t count, size_t element)
{
    if (count <= *have) return true;
    if (!sm_grow(array, element, (size_t)count)) return false;
    float *f = *array;
    for (size_t k = (size_t)*have * element / sizeof(float); k < (size_t)count * element / sizeof(float); k++) f[k] = NAN;
    *have = count;
    return true;
}

void sm_cl_forget_position_split(sm_world *world, int32_t first, int32_t count)
{
    sm_cl_backend *cl = world->cl;
    for (int64_t i = first; cl && i < (int64_t)first + count && i < cl->position_hi_count; i++) cl->position_hi[3 * i] = NAN;
}

void sm_cl_forget_warm_starts(sm_world *world, int32_t first, int32_t count)
{
    sm_cl_backend *cl = world->cl;
    for (int64_t c = first; cl && c < (int64_t)first + count && c < cl->warm_start_count; c++) cl->warm_start[c].s[0] = NAN;
}

void sm_cl_renumber_warm_starts(sm_world *world, const int32_t *from, int32_t count)
{
    sm_cl_backend *cl = world->cl;
    if (!cl || cl->warm_start_count == 0) return;
    cl_float4 *next = staging(sizeof *next, count);
    if (!next) { // (a warm start only speeds the device's rotation up: start from R instead)
        sm_cl_forget_warm_starts(world, 0, cl->warm_start_count);
        return;
    }
    for (int32_t c = 0; c < count; c++)
        next[c] = from[c] >= 0 && from[c] < cl->warm_start_count ? cl->warm_start[from[c]] : (cl_float4){{NAN, 0, 0, 0}};
    free(cl->warm_start);
    cl->warm_start = next;
    cl->warm_start_count = count;
}

sm_result sm_cl_copy_device_split(sm_world *target, const sm_world *source)
{
    sm_cl_backend *to = target->cl;
    const sm_cl_backend *from = source->cl;
    if (!to) return SM_OK;
    sm_cl_forget_position_split(target, 0, to->position_hi_count);
    sm_cl_forget_warm_starts(target, 0, to->warm_start_count);
    if (!from) return SM_OK; // (a CPU world's state has no split)
    if (!grow_nan((void **)&to->position_hi, &to->position_hi_count, from->position_hi_count, 3 * sizeof(float)) ||
        !grow_nan((void **)&to->warm_start, &to->warm_start_count, from->warm_start_count, sizeof(cl_float4)))
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_world_copy_state: out of memory");
    if (from->position_hi_count > 0) memcpy(to->position_hi, from->position_hi, 3 * sizeof(float) * (size_t)from->position_hi_count);
    if (from->warm_start_count > 0) memcpy(to->warm_start, from->warm_start, sizeof(cl_float4) * (size_t)from->warm_start_count);
    return SM_OK;
}

sm_result sm_cl_push(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = sm_world_update_map(world);
    if (result == SM_OK) result = sm_grid_layout(world);
    if (result != SM_OK) return result;
    bool quadratic = false, plastic = false;
    sm_cl_mode_mix(world, &quadratic, &plastic);
    // new buffers only for new objects or a first quadratic or plastic object: the handles given
    // out by sm_world_get_cl_state() stay valid when an object leaves quadratic mode or plasticity
    if (cl->objects_on_device != world->object_count || cl->particles_on_device != world->particle_count ||
        (quadratic && !cl->any_quadratic) || (plastic && !cl->any_plastic)) {
        result = sm_cl_make_buffers(world);
        if (result != SM_OK) return result;
    }
    const int32_t n = world->particle_count, c = world->cluster_count, k = world->membership_count;
    sm_cl_buffers *b = &cl->buffers;

    for (int f = SM_CL_POSITION; f <= SM_CL_FORCE && result == SM_OK; f++) result = write_particles(world, (sm_cl_field)f, 0, n);

    sm_k_object *objects = staging(sizeof *objects, world->object_count);
    cl_int *ints = staging(sizeof *ints, (int64_t)(n > k ? n : k) + 1);
    cl_float4 *vec4 = staging(sizeof *vec4, k > c ? k : c);
    sm_k_cluster *clusters = staging(sizeof *clusters, c);
    sm_k_cluster_rest *rest = staging(sizeof *rest, c);
    sm_k_mat3 *mat3 = staging(sizeof *mat3, c);
    sm_k_mat39 *mat39 = staging(sizeof *mat39, c);
    sm_k_weights *weights = cl->any_quadratic ? staging(sizeof *weights, k) : NULL;
    if (!objects || !ints || !vec4 || !clusters || !rest || !mat3 || !mat39 || (cl->any_quadratic && !weights)) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the world");
        goto cleanup;
    }
#define PUT(buffer, element, count, data)                                                     \
    if (result == SM_OK) result = write_buffer(cl, buffer, element, 0, count, data)

    for (int32_t o = 0; o < world->object_count; o++) objects[o] = k_object(&world->objects[o]);
    PUT(b->objects, sizeof *objects, world->object_count, objects);

    // particles: owning object and the particle-to-membership map
    PUT(b->particle_object, sizeof *world->particle_object, n, world->particle_object);
    for (int32_t i = 0; i <= n; i++) ints[i] = world->particle_member_offsets ? world->particle_member_offsets[i] : 0;
    PUT(b->particle_member_offsets, sizeof *ints, n + 1, ints);
    // (q~, cluster) of each membership in particle order, and where each one sits in it
    for (int32_t j = 0; j < k; j++) {
        const int32_t member = world->particle_members[j];
        const cl_int cluster = world->member_cluster[member];
        vec4[j] = f4(world->member_q[member], 0.0);
        memcpy(&vec4[j].s[3], &cluster, sizeof cluster);
        ints[member] = j;
    }
    PUT(b->particle_member_q, sizeof *vec4, k, vec4);
    PUT(b->member_slot, sizeof *ints, k, ints);
    if (world->grid.colliding > 0) {
        // contact: the rest position (for self-collision) and the radius, 0 for particles that do not collide
        cl_float4 *contact = staging(sizeof *contact, n);
        if (!contact) result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the world");
        for (int32_t i = 0; i < n && contact; i++) contact[i] = f4(world->rest_position[i], world->radius[i]);
        PUT(b->contact, sizeof *contact, n, contact);
        free(contact);
        // between steps the bucket counts and the scan's ticket are zero (each step's scan zeroes
        // them again)
        const cl_int zero = 0;
        if (result == SM_OK)
            result = sm_cl_fill_buffer(cl, b->bucket_count, &zero, sizeof zero, 0, world->grid.table_size + 1, NULL);
        if (result == SM_OK) result = sm_cl_fill_buffer(cl, b->scan_tiles, &zero, sizeof zero, 0, 1, NULL);
    }

    // memberships
    for (int32_t j = 0; j < k; j++) ints[j] = world->member_particle[j];
    PUT(b->member_particle, sizeof *ints, k, ints);
    // (w: the membership's mass, sm_member_mass)
    for (int32_t j = 0; j < k; j++) vec4[j] = f4(world->member_q[j], world->member_mass[j]);
    PUT(b->member_q, sizeof *vec4, k, vec4);
    for (int32_t j = 0; j < k; j++) vec4[j] = f4(world->member_rest[j], world->member_mass[j]);
    PUT(b->member_rest, sizeof *vec4, k, vec4);

    // clusters: constants, rest data and the step state
    for (int32_t i = 0; i < c; i++) {
        const sm_cluster *cluster = &world->clusters[i];
        clusters[i] = (sm_k_cluster){cluster->first_member, cluster->member_count, cluster->object, (float)cluster->mass,
                                     .anchor = cluster->member_count > 0 ? world->member_particle[cluster->first_member] : 0,
                                     .anchored = cluster->anchored};
        double nearest = INFINITY;
        for (int32_t j = cluster->first_member; j < cluster->first_member + cluster->member_count; j++)
            if (v3_dot(world->member_rest[j], world->member_rest[j]) < nearest) {
                nearest = v3_dot(world->member_rest[j], world->member_rest[j]);
                clusters[i].anchor = world->member_particle[j];
            }
        rest[i] = (sm_k_cluster_rest){.aqq = k_mat3(cluster->aqq), .metric_root = k_mat3(cluster->metric_root),
                                      .metric_root_inv = k_mat3(cluster->metric_root_inv), .span = k_mat3(cluster->span)};
        for (int j = 0; j < 6; j++) rest[i].quad_mean[j] = (float)cluster->quad_mean[j];
        for (int k = 0; k < 3; k++) rest[i].metric_axes[k] = (float)cluster->metric_axes[k];
        rest[i].size = (float)cluster->size;
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 3; k++) rest[i].quad_regression[j][k] = (float)cluster->quad_regression[j][k];
        for (int n = 0; n < 21; n++) rest[i].quad_metric[n] = (float)cluster->quad_metric[n];
    }
    PUT(b->clusters, sizeof *clusters, c, clusters);
    for (int32_t i = 0, l = 0; i < c; i++)
        if (world->clusters[i].member_count >= cl->large_threshold) ints[l++] = i;
    PUT(b->large_clusters, sizeof *ints, cl->large_count, ints);
    PUT(b->cluster_rest, sizeof *rest, c, rest);
    // the mean of each cluster's rest offsets as the device holds them (sm_k_bias)
    sm_k_bias *bias = staging(sizeof *bias, c);
    if (!bias && result == SM_OK) result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the world");
    for (int32_t i = 0; i < c && bias; i++) bias[i] = float_offsets_mean(world, &world->clusters[i], &rest[i]);
    PUT(b->goal_bias, sizeof *bias, c, bias);
    free(bias);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4(world->clusters[i].center, world->clusters[i].mass);
    PUT(b->center, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4_lo(world->clusters[i].center);
    PUT(b->center_offset, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4(world->clusters[i].velocity, 0.0);
    PUT(b->cluster_velocity, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) {
        vec4[i] = quat_of(world->clusters[i].rotation);
        if (i < cl->warm_start_count && !isnan(cl->warm_start[i].s[0])) vec4[i] = cl->warm_start[i];
    }
    PUT(b->quat, sizeof *vec4, c, vec4);
#define PUT_MAT3(buffer, member)                                                       \
    for (int32_t i = 0; i < c; i++) mat3[i] = k_mat3(world->clusters[i].member);        \
    PUT(buffer, sizeof *mat3, c, mat3)
    PUT_MAT3(b->plastic, plastic);
    PUT_MAT3(b->apq, apq);
    PUT_MAT3(b->rotation, rotation);
    PUT_MAT3(b->linear_fit, linear_fit);
#undef PUT_MAT3
    for (int32_t i = 0; i < c; i++)
        for (int s = 0; s < 9; s++) {
            for (int r = 0; r < 3; r++) mat39[i].c[s][r] = (float)world->clusters[i].transform[r][s];
            mat39[i].c[s][3] = 0.0f;
        }
    PUT(b->transform, sizeof *mat39, c, mat39);
    if (cl->any_quadratic) {
        // the quadratic fit ~A_pq ~A_qq and the weights w = ~A_qq q~ of each membership, in double
        for (int32_t i = 0; i < c; i++) {
            const sm_cluster *cluster = &world->clusters[i];
            double fit[3][9], w[9];
            sm_cluster_quadratic_fit(cluster, fit);
            for (int r = 0; r < 3; r++)
                for (int s = 0; s < 9; s++) mat39[i].c[s][r] = (float)fit[r][s];
            for (int32_t j = cluster->first_member; j < cluster->first_member + cluster->member_count; j++) {
                sm_cluster_quadratic_weights(world, cluster, j, w);
                for (int r = 0; r < 9; r++) weights[j].w[r] = (float)w[r];
            }
        }
        PUT(b->fit9, sizeof *mat39, c, mat39);
        PUT(b->member_w, sizeof *weights, k, weights);
        // Z, the fit's share of R where ~A_qq is singular (0 elsewhere)
        for (int32_t i = 0; i < c; i++)
            for (int s = 0; s < 9; s++) {
                for (int r = 0; r < 3; r++) mat39[i].c[s][r] = (float)world->clusters[i].null_fit[r][s];
                mat39[i].c[s][3] = 0.0f;
            }
        PUT(b->null_fit, sizeof *mat39, c, mat39);
    }
    if (world->surface_vertex_count > 0 && result == SM_OK) result = push_surfaces(world);
    if (result == SM_OK && world->target_count > 0) {
        bool made = false;
        result = sm_cl_ensure_targets(world, &made);
        if (result == SM_OK && !made) result = write_particles(world, SM_CL_TARGET, 0, n);
    }
#undef PUT
    if (result == SM_OK) {
        cl->host_changed = false;
        cl->device_ahead = false;
    }
cleanup:
    free(objects), free(ints), free(vec4), free(clusters), free(rest), free(mat3), free(mat39), free(weights);
    if (result == SM_ERROR_OUT_OF_MEMORY) sm_cl_release_buffers(cl); // the device ran out: free what it holds of this world
    return result;
}

sm_result sm_cl_pull(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    if (!cl || !cl->device_ahead) return SM_OK;
    const int32_t n = cl->particles_on_device, c = cl->clusters_on_device;
    sm_cl_buffers *b = &cl->buffers;
    sm_result result = SM_OK;
    cl_float4 *vec4 = staging(sizeof *vec4, n > c ? n : c), *lo = staging(sizeof *lo, n > c ? n : c);
    sm_k_mat3 *mat3 = staging(sizeof *mat3, c);
    sm_k_mat39 *mat39 = staging(sizeof *mat39, c);
    if (!vec4 || !lo || !mat3 || !mat39) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading the world back");
        goto cleanup;
    }
#define GET(buffer, element, count, data)                                                     \
    if (result == SM_OK) result = sm_cl_read_buffer(cl, buffer, element, 0, count, data)
    if (!grow_nan((void **)&cl->position_hi, &cl->position_hi_count, n, 3 * sizeof(float)) ||
        !grow_nan((void **)&cl->warm_start, &cl->warm_start_count, c, sizeof(cl_float4))) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading the world back");
        goto cleanup;
    }
    GET(b->position, sizeof *vec4, n, vec4);
    GET(b->position_lo, sizeof *lo, n, lo);
    for (int32_t i = 0; i < n && result == SM_OK; i++) {
        world->position[i] = from_pair(vec4[i], lo[i]);
        memcpy(&cl->position_hi[3 * (size_t)i], vec4[i].s, 3 * sizeof(float));
    }
    GET(b->velocity, sizeof *vec4, n, vec4);
    for (int32_t i = 0; i < n && result == SM_OK; i++) world->velocity[i] = from_f4(vec4[i]);
    GET(b->goal, sizeof *vec4, n, vec4);
    for (int32_t i = 0; i < n && result == SM_OK; i++) world->goal[i] = from_f4(vec4[i]);
    GET(b->center, sizeof *vec4, c, vec4);
    GET(b->center_offset, sizeof *lo, c, lo);
    for (int32_t i = 0; i < c && result == SM_OK; i++) world->clusters[i].center = from_pair(vec4[i], lo[i]);
    GET(b->cluster_velocity, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c && result == SM_OK; i++) world->clusters[i].velocity = from_f4(vec4[i]);
    GET(b->quat, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c && result == SM_OK; i++) cl->warm_start[i] = vec4[i];
#define GET_MAT3(buffer, member)                                                                      \
    GET(buffer, sizeof *mat3, c, mat3);                                                                \
    for (int32_t i = 0; i < c && result == SM_OK; i++) world->clusters[i].member = from_k_mat3(&mat3[i])
    GET_MAT3(b->apq, apq);
    GET_MAT3(b->rotation, rotation);
    GET_MAT3(b->linear_fit, linear_fit);
    GET_MAT3(b->plastic, plastic);
#undef GET_MAT3
    GET(b->transform, sizeof *mat39, c, mat39);
    for (int32_t i = 0; i < c && result == SM_OK; i++)
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 9; s++) world->clusters[i].transform[r][s] = mat39[i].c[s][r];
    // (the device keeps the quadratic fit, not ~A_pq: the host's ~A_pq is recomputed by its next step)
    const int32_t sv = world->surface_vertex_count;
    if (sv > 0 && result == SM_OK) {
        cl_float4 *surface = staging(sizeof *surface, sv);
        if (!surface) result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading the surfaces back");
        GET(b->surface_position, sizeof *surface, sv, surface);
        for (int32_t i = 0; i < sv && result == SM_OK; i++) world->surface_position[i] = from_f4(surface[i]);
        GET(b->surface_normal, sizeof *surface, sv, surface);
        for (int32_t i = 0; i < sv && result == SM_OK; i++) world->surface_normal[i] = from_f4(surface[i]);
        free(surface);
    }
#undef GET
    // the rest data follow from S_p: recompute them in double rather than read the float copies
    if (result == SM_OK && cl->any_plastic)
        for (int32_t i = 0; i < c; i++)
            if (world->objects[world->clusters[i].object].plasticity.enabled) sm_cluster_update_rest(world, &world->clusters[i]);
    if (result == SM_OK) cl->device_ahead = false;
cleanup:
    free(vec4), free(lo), free(mat3), free(mat39);
    return result;
}

void sm_cl_mark_host_changed(sm_world *world)
{
    if (!world->cl) return;
    world->cl->host_changed = true;
    world->cl->device_ahead = false;
}

bool sm_cl_buffers_current(const sm_cl_backend *cl, const sm_world *world)
{
    return cl->objects_on_device == world->object_count && !cl->host_changed;
}

sm_result sm_cl_read(const sm_world *world, sm_cl_field field, int32_t first, int32_t count, double *xyz, bool *done)
{
    const sm_cl_backend *cl = world->cl;
    *done = false;
    if (!cl || !cl->device_ahead || count <= 0) return SM_OK;
    cl_float4 *data = calloc((size_t)count * 2, sizeof *data);
    if (!data) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading %d particles", count);
    cl_float4 *lo = data + count; // zero unless the field is a double-float pair
    sm_result result = sm_cl_read_buffer(cl, field_buffer(cl, field), sizeof *data, first, count, data);
    if (result == SM_OK && field == SM_CL_POSITION)
        result = sm_cl_read_buffer(cl, cl->buffers.position_lo, sizeof *lo, first, count, lo);
    for (int32_t i = 0; i < count && result == SM_OK; i++) {
        sm_vec3 v = from_pair(data[i], lo[i]);
        xyz[3 * i] = v.x, xyz[3 * i + 1] = v.y, xyz[3 * i + 2] = v.z;
    }
    free(data);
    *done = result == SM_OK;
    return result;
}

sm_result sm_cl_write(sm_world *world, sm_cl_field field, int32_t first, int32_t count)
{
    sm_cl_backend *cl = world->cl;
    if (!cl) return SM_OK;
    if (!sm_cl_buffers_current(cl, world)) {
        cl->host_changed = true;
        return SM_OK;
    }
    bool made = false;
    if (field == SM_CL_TARGET) {
        if (world->target_count == 0 && !cl->buffers.target) return SM_OK; // no targets anywhere: nothing to clear
        sm_result result = sm_cl_ensure_targets(world, &made);
        if (result != SM_OK || made) return result;
    }
    return write_particles(world, field, first, count);
}

void sm_cl_transfer_counts(const sm_world *world, int64_t *out_transfers, int64_t *out_bytes)
{
    *out_transfers = world->cl ? world->cl->transfers : 0;
    *out_bytes = world->cl ? world->cl->transfer_bytes : 0;
}

sm_result sm_cl_read_cluster(const sm_world *world, int32_t index)
{
    const sm_cl_backend *cl = world->cl;
    if (!cl || !cl->device_ahead) return SM_OK;
    sm_cluster *cluster = &world->clusters[index];
    const sm_cl_buffers *b = &cl->buffers;
    cl_float4 center, offset, velocity;
    sm_k_mat3 rotation, plastic;
    sm_k_mat39 transform;
    sm_result result = sm_cl_read_buffer(cl, b->center, sizeof center, index, 1, &center);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->center_offset, sizeof offset, index, 1, &offset);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->cluster_velocity, sizeof velocity, index, 1, &velocity);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->rotation, sizeof rotation, index, 1, &rotation);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->plastic, sizeof plastic, index, 1, &plastic);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->transform, sizeof transform, index, 1, &transform);
    if (result != SM_OK) return result;
    // the host record is a cache of the device here (the world is logically unchanged)
    cluster->center = from_pair(center, offset);
    cluster->velocity = from_f4(velocity);
    cluster->rotation = from_k_mat3(&rotation);
    cluster->plastic = from_k_mat3(&plastic);
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 9; s++) cluster->transform[r][s] = transform.c[s][r];
    return SM_OK;
}

sm_result sm_cl_read_float4(const sm_world *world, sm_particle_field field, int32_t first, int32_t count, float *out,
                           bool *done)
{
    const sm_cl_backend *cl = world->cl;
    *done = false;
    if (!cl || !cl->device_ahead || count <= 0) return SM_OK;
    sm_result result = sm_cl_read_buffer(cl, sm_cl_particle_field_buffer(cl, field), sizeof(cl_float4), first, count, out);
    *done = result == SM_OK;
    return result;
}

sm_result sm_cl_write_object(sm_world *world, int32_t object)
{
    sm_cl_backend *cl = world->cl;
    if (!cl) return SM_OK;
    if (!sm_cl_buffers_current(cl, world)) {
        cl->host_changed = true;
        return SM_OK;
    }
    const sm_k_object k = k_object(&world->objects[object]);
    return write_buffer(cl, cl->buffers.objects, sizeof k, object, 1, &k);
}

/* ---- Colliders ----------------------------------------------------------------------------- */

/// Uploads the colliders' shapes when colliders were added since the last upload.
sm_result sm_cl_upload_colliders(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    if (cl->colliders_on_device == world->collider_count) return SM_OK;
    if (cl->buffers.colliders) clReleaseMemObject(cl->buffers.colliders);
    cl->buffers.colliders = NULL;
    sm_result result = sm_cl_make_buffer(cl, &cl->buffers.colliders, sizeof(sm_k_collider), world->collider_count);
    if (result != SM_OK) return result;
    sm_k_collider *k = staging(sizeof *k, world->collider_count);
    if (!k) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the colliders");
    int64_t field_nodes = 0;
    for (int32_t c = 0; c < world->collider_count; c++) {
        const sm_collider *collider = &world->colliders[c];
        k[c].shape = collider->def.shape;
        if (collider->def.shape == SM_COLLIDER_MESH) {
            if (field_nodes + sm_sdf_node_count(&collider->sdf) > INT32_MAX) { // (the kernel indexes them with an int)
                free(k);
                return sm_fail(SM_ERROR_OUT_OF_MEMORY, "the mesh colliders' fields hold more than %d nodes in all", INT32_MAX);
            }
            k[c].field_first = (cl_int)field_nodes;
            for (int a = 0; a < 3; a++) k[c].nodes[a] = collider->sdf.nodes[a];
            k[c].origin[0] = (float)collider->sdf.origin.x, k[c].origin[1] = (float)collider->sdf.origin.y;
            k[c].origin[2] = (float)collider->sdf.origin.z, k[c].origin[3] = (float)collider->sdf.cell;
            field_nodes += sm_sdf_node_count(&collider->sdf);
        }
        for (int r = 0; r < 3; r++)
            for (int col = 0; col < 3; col++) // row r: local axis r, the axes matrix's column r
                k[c].axes[r][col] = (float)collider->axes.m[col][r];
        if (collider->def.shape == SM_COLLIDER_PLANE)
            for (int col = 0; col < 3; col++) k[c].axes[0][col] = (float)v3_get(collider->normal, col);
        k[c].size[0] = (float)(0.5 * collider->def.size.x);
        k[c].size[1] = (float)(0.5 * collider->def.size.y);
        k[c].size[2] = (float)(0.5 * collider->def.size.z);
        k[c].size[3] = (float)collider->def.radius;
        k[c].restitution = (float)collider->def.restitution;
        k[c].friction = (float)collider->def.friction;
    }
    result = write_buffer(cl, cl->buffers.colliders, sizeof *k, 0, world->collider_count, k);
    // the mesh colliders' fields, one after another at their field_first (a float when there is none)
    if (cl->buffers.collider_fields) clReleaseMemObject(cl->buffers.collider_fields);
    cl->buffers.collider_fields = NULL;
    if (result == SM_OK) result = sm_cl_make_buffer(cl, &cl->buffers.collider_fields, sizeof(float), field_nodes > 0 ? field_nodes : 1);
    for (int32_t c = 0; c < world->collider_count && result == SM_OK; c++) {
        const sm_collider *collider = &world->colliders[c];
        if (collider->def.shape == SM_COLLIDER_MESH)
            result = write_buffer(cl, cl->buffers.collider_fields, sizeof(float), k[c].field_first,
                                  sm_sdf_node_count(&collider->sdf), collider->sdf.value);
    }
    free(k);
    if (result == SM_OK) cl->colliders_on_device = world->collider_count;
    cl->static_states_written = 0; // (the states are written again for the new list)
    return result;
}

static void CL_CALLBACK free_staging(cl_event event, cl_int status, void *data)
{
    (void)event, (void)status;
    free(data);
}

/// Writes where each collider is at the end of each of the next `substeps` steps of length h,
/// without waiting: the staging memory is freed when the write completes.
sm_result sm_cl_write_collider_states(sm_world *world, double h, int32_t substeps)
{
    sm_cl_backend *cl = world->cl;
    // the state at each step's start and end: substeps + 1 of them (step s reads s and s + 1)
    const int64_t count = (int64_t)(substeps + 1) * world->collider_count;
    if (count == 0) return SM_OK;
    // static colliders are where they were: their states, once written for this many steps, stay
    bool all_static = true;
    for (int32_t c = 0; c < world->collider_count; c++) all_static &= world->colliders[c].def.motion.type == SM_MOTION_STATIC;
    if (all_static && cl->static_states_written >= substeps) return SM_OK;
    cl->static_states_written = 0;
    sm_result result = SM_OK;
    if (count > cl->collider_state_capacity) {
        if (cl->buffers.collider_state) clReleaseMemObject(cl->buffers.collider_state);
        cl->buffers.collider_state = NULL;
        cl->collider_state_capacity = 0;
        result = sm_cl_make_buffer(cl, &cl->buffers.collider_state, sizeof(sm_k_collider_state), count);
        if (result != SM_OK) return result;
        cl->collider_state_capacity = (int32_t)count;
    }
    sm_k_collider_state *k = staging(sizeof *k, count);
    if (!k) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory moving the colliders");
    // each step's end time summed as the world's time is, step by step, so that both backends
    // sample a collider at the same double: t0 + (s + 1) h rounds differently, and where a
    // keyframe falls on a step's end one backend saw the collider still moving and the other
    // stopped (an object thrown 0.55 m apart in a second)
    double t = world->time;
    for (int32_t s = 0; s <= substeps; s++) {
        if (s > 0) t += h;
        for (int32_t c = 0; c < world->collider_count; c++) {
            sm_vec3 center, velocity;
            sm_collider_state(&world->colliders[c], t, &center, &velocity);
            sm_k_collider_state *out = &k[(int64_t)s * world->collider_count + c];
            const cl_float4 hi = f4(center, 0.0), lo = f4_lo(center), v = f4(velocity, 0.0);
            memcpy(out->center, hi.s, sizeof out->center);
            memcpy(out->center_lo, lo.s, sizeof out->center_lo);
            memcpy(out->velocity, v.s, sizeof out->velocity);
        }
    }
    cl_event written = NULL;
    sm_cl_count_transfer(cl, (size_t)count * sizeof *k);
    cl_int status = clEnqueueWriteBuffer(cl->queue, cl->buffers.collider_state, CL_FALSE, 0, (size_t)count * sizeof *k, k,
                                         0, NULL, &written);
    if (status != CL_SUCCESS) {
        free(k);
        return sm_cl_fail("clEnqueueWriteBuffer", status, __FILE__, __LINE__);
    }
    if (clSetEventCallback(written, CL_COMPLETE, free_staging, k) != CL_SUCCESS) {
        clWaitForEvents(1, &written); // no callback: wait for the write instead
        free(k);
    }
    clReleaseEvent(written);
    cl->static_states_written = all_static ? substeps : 0;
    return SM_OK;
}
