/* The OpenCL backend's state: device buffers made from the world's host arrays, the step
 * enqueued without waiting, and the transfers between host and device. */
#include "../math3.h"
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

sm_result sm_cl_create(sm_world *world, const char *device)
{
    sm_cl_backend *cl = calloc(1, sizeof *cl);
    if (!cl) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory creating the OpenCL backend");
    cl->objects_on_device = -1;
    cl->colliders_on_device = -1;
    sm_result result = SM_OK;
    const sm_opencl_objects caller = world->def.opencl;
    cl_context context = caller.context;
    cl_device_id queue_device = caller.device;
    if (caller.queue) {
        // the caller's queue names its context and device
        cl_command_queue_properties properties = 0;
        cl_context queue_context = NULL;
        cl_int status = clGetCommandQueueInfo(caller.queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL);
        if (status == CL_SUCCESS)
            status = clGetCommandQueueInfo(caller.queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL);
        if (status == CL_SUCCESS)
            status = clGetCommandQueueInfo(caller.queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, NULL);
        if (status != CL_SUCCESS) {
            free(cl);
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: the caller's OpenCL queue is not valid (%s)",
                           sm_cl_error_name(status));
        }
        const char *problem = (context && context != queue_context)              ? "its context is not the def's context"
                              : (caller.device && caller.device != queue_device) ? "its device is not the def's device"
                              : (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                                  ? "it executes out of order (the passes rely on an in-order queue)"
                              : (world->def.profile && !(properties & CL_QUEUE_PROFILING_ENABLE))
                                  ? "the def asks to profile and the queue was made without CL_QUEUE_PROFILING_ENABLE"
                                  : NULL;
        if (problem) {
            free(cl);
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: the caller's OpenCL queue cannot be used: %s", problem);
        }
        context = queue_context;
    }
    if (context)
        result = sm_cl_device_adopt(context, queue_device, world, &cl->device);
    else if (world->def.gl.context)
        result = sm_cl_device_acquire_gl(device, world, &cl->device, &cl->gl_sharing, cl->gl_reason, sizeof cl->gl_reason);
    else
        result = sm_cl_device_acquire(device, world, &cl->device);
    if (result != SM_OK) {
        free(cl);
        return result;
    }
    cl_int status = CL_SUCCESS;
    if (caller.queue) {
        SM_CL_TRY(clRetainCommandQueue(caller.queue));
        cl->queue = caller.queue; // released with the world
    } else {
        cl->queue = clCreateCommandQueue(cl->device->context, cl->device->device,
                                         world->def.profile ? CL_QUEUE_PROFILING_ENABLE : 0, &status);
        SM_CL_TRY(status);
    }
    result = sm_cl_create_kernels(cl);
    if (result != SM_OK) goto cleanup;
    // a work-group per large cluster on a GPU; a CPU device's work-item loop is faster
    cl->large_threshold = cl->device->gpu ? SM_K_LARGE_CLUSTER : INT32_MAX;
    const char *threshold = getenv("SM_LARGE_CLUSTER");
    if (threshold && atoi(threshold) >= 1) cl->large_threshold = atoi(threshold);
    world->cl = cl;
    sm_log(world, SM_LOG_NOTICE, "OpenCL: running on %s%s%s", cl->device->name, context ? ", on the caller's context" : "",
           cl->device->fp64 ? "" : " (no double precision: plastic rest data are refreshed in float)");
    if (world->def.gl.context)
        sm_log(world, SM_LOG_NOTICE, "OpenCL: %s%s", cl->gl_sharing ? "sharing buffers with the GL context" : "no GL sharing: ",
               cl->gl_sharing ? "" : cl->gl_reason);
    return SM_OK;
cleanup:
    world->cl = cl;
    sm_cl_destroy(world);
    return result;
}

static void release_buffers(sm_cl_backend *cl)
{
    cl_mem *all = (cl_mem *)&cl->buffers;
    for (size_t i = 0; i < sizeof cl->buffers / sizeof(cl_mem); i++)
        if (all[i]) clReleaseMemObject(all[i]);
    memset(&cl->buffers, 0, sizeof cl->buffers);
    memset(cl->memory, 0, sizeof cl->memory);
    cl->objects_on_device = -1;
    cl->colliders_on_device = -1;
    cl->collider_state_capacity = 0;
    cl->static_states_written = 0;
    cl->target_capacity = 0;
}

void sm_cl_destroy(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    if (!cl) return;
    if (cl->queue) clFinish(cl->queue);
    release_buffers(cl);
    for (int f = 0; f < SM_CL_GL_FIELDS; f++)
        if (cl->gl_buffers[f]) clReleaseMemObject(cl->gl_buffers[f]);
    if (cl->input_force) clReleaseMemObject(cl->input_force);
    if (cl->input_target) clReleaseMemObject(cl->input_target);
    for (int k = 0; k < SM_CLK_COUNT; k++)
        if (cl->kernels[k]) clReleaseKernel(cl->kernels[k]);
    if (cl->queue) clReleaseCommandQueue(cl->queue);
    sm_cl_device_release(cl->device);
    free(cl);
    world->cl = NULL;
}

const char *sm_cl_device_name(const sm_world *world) { return world->cl ? world->cl->device->name : ""; }

/* ---- Buffers ------------------------------------------------------------------------------- */

static sm_result make_buffer(sm_cl_backend *cl, cl_mem *out, size_t element, int64_t count)
{
    cl_int status = CL_SUCCESS;
    // OpenCL has no empty buffers: an empty array gets one element nobody reads
    *out = clCreateBuffer(cl->device->context, CL_MEM_READ_WRITE, element * (size_t)(count > 0 ? count : 1), NULL, &status);
    if (status != CL_SUCCESS)
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "OpenCL: cannot allocate %lld bytes on %s (%s)",
                       (long long)(element * (size_t)count), cl->device->name, sm_cl_error_name(status));
    return SM_OK;
}

void sm_cl_device_memory(const sm_world *world, int64_t *out_global, int64_t *out_alloc, bool *out_unified,
                         const char **global_from, const char **alloc_from)
{
    const sm_cl_backend *cl = world->cl;
    cl_ulong global = 0, alloc = 0;
    cl_bool unified = CL_FALSE;
    if (clGetDeviceInfo(cl->device->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL) != CL_SUCCESS)
        global = (cl_ulong)INT64_MAX;
    if (clGetDeviceInfo(cl->device->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL) != CL_SUCCESS)
        alloc = global;
    if (clGetDeviceInfo(cl->device->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) != CL_SUCCESS)
        unified = CL_FALSE;
    *out_global = global > (cl_ulong)INT64_MAX ? INT64_MAX : (int64_t)global;
    *out_alloc = alloc > (cl_ulong)INT64_MAX ? INT64_MAX : (int64_t)alloc;
    *out_unified = unified == CL_TRUE;
    *global_from = "CL_DEVICE_GLOBAL_MEM_SIZE";
    *alloc_from = "CL_DEVICE_MAX_MEM_ALLOC_SIZE";
    // $SM_DEVICE_MEMORY_LIMIT: "BYTES" caps both at BYTES; "BYTES,BUFFER_BYTES" caps one buffer
    // at BUFFER_BYTES (a smaller device, for tests)
    const char *env = getenv("SM_DEVICE_MEMORY_LIMIT");
    if (!env || !*env) return;
    char *end = NULL;
    const long long limit = strtoll(env, &end, 10);
    long long buffer_limit = limit;
    if (end && *end == ',') buffer_limit = strtoll(end + 1, &end, 10);
    if (!(limit > 0 && buffer_limit > 0 && end && *end == '\0')) return; // not a byte count: ignored
    if (limit < *out_global) *out_global = limit, *global_from = "$SM_DEVICE_MEMORY_LIMIT";
    if (buffer_limit < *out_alloc) *out_alloc = buffer_limit, *alloc_from = "$SM_DEVICE_MEMORY_LIMIT";
}

/// Fails with SM_ERROR_OUT_OF_MEMORY, before they are allocated, when `total` bytes of buffers
/// (the largest `largest` bytes, one of the `what` buffers) do not fit the device.
static sm_result check_device_memory(const sm_world *world, int64_t total, int64_t largest, const char *what)
{
    const sm_cl_backend *cl = world->cl;
    int64_t global = 0, alloc = 0;
    bool unified = false;
    const char *global_from = "", *alloc_from = "";
    sm_cl_device_memory(world, &global, &alloc, &unified, &global_from, &alloc_from);
    if (total > global)
        return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                       "OpenCL: the world (%d particles, %d clusters, %d memberships) needs %lld bytes of device memory, "
                       "and %s has %lld bytes (%s)",
                       world->particle_count, world->cluster_count, world->membership_count, (long long)total,
                       cl->device->name, (long long)global, global_from);
    if (largest > alloc)
        return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                       "OpenCL: the world (%d particles, %d clusters, %d memberships) needs a buffer of %lld bytes "
                       "(one of its %s buffers), and %s allocates at most %lld bytes in one buffer (%s)",
                       world->particle_count, world->cluster_count, world->membership_count, (long long)largest, what,
                       cl->device->name, (long long)alloc, alloc_from);
    return SM_OK;
}

/// Whether any object is quadratic, and any plastic (their buffers are made only then).
static void mode_mix(const sm_world *world, bool *quadratic, bool *plastic)
{
    *quadratic = *plastic = false;
    for (int32_t o = 0; o < world->object_count; o++) {
        const sm_object *object = &world->objects[o];
        *quadratic |= object->mode == SM_MODE_QUADRATIC;
        *plastic |= object->plasticity.enabled && object->mode != SM_MODE_RIGID;
    }
}

/// One device buffer of the layout: where its handle goes, its element size and count.
typedef struct buffer_plan {
    cl_mem *buffer;
    size_t element;
    int64_t count;
    sm_cl_memory_kind kind;
} buffer_plan;

enum { SM_CL_PLAN_BUFFERS = 96 };

/// The device buffers of a world of footprint f, into plan (which holds SM_CL_PLAN_BUFFERS);
/// returns how many. The one layout that both the buffers and the
/// memory estimate (sm_cl_plan_bytes()) are made from.
static size_t plan_buffers(sm_cl_backend *cl, const sm_footprint *f, buffer_plan *plan)
{
    const int64_t n = f->particles, c = f->clusters, k = f->memberships;
    const int64_t c9 = f->quadratic ? c : 1, k9 = f->quadratic ? k : 1; // quadratic worlds only
    // the grid, in worlds with contact only
    const bool collide = f->colliding > 0;
    const int64_t nc = collide ? n : 1, table = collide ? sm_grid_table_size(f->colliding) + 1 : 1;
    sm_cl_buffers *b = &cl->buffers;
    const buffer_plan layout[] = {
        {&b->objects, sizeof(sm_k_object), f->objects, SM_CL_MEM_CLUSTERS},
        {&b->check_flag, sizeof(cl_int), 3, SM_CL_MEM_CLUSTERS},
        {&b->large_clusters, sizeof(cl_int), f->large_clusters, SM_CL_MEM_CLUSTERS},
        {&b->clusters, sizeof(sm_k_cluster), c, SM_CL_MEM_CLUSTERS},
        {&b->cluster_rest, sizeof(sm_k_cluster_rest), c, SM_CL_MEM_CLUSTERS},
        {&b->plastic, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->center, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->center_offset, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->cluster_velocity, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->apq, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->fit9, sizeof(sm_k_mat39), c9, SM_CL_MEM_CLUSTERS},
        {&b->quat, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->rotation, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->linear_fit, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->transform, sizeof(sm_k_mat39), c, SM_CL_MEM_CLUSTERS},
        {&b->member_particle, sizeof(cl_int), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->member_slot, sizeof(cl_int), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->member_q, sizeof(cl_float4), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->member_rest, sizeof(cl_float4), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->member_w, sizeof(sm_k_weights), k9, SM_CL_MEM_MEMBERSHIPS},
        {&b->position, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->position_lo, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->velocity, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->goal, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->force, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->particle_object, sizeof(cl_int), n, SM_CL_MEM_PARTICLES},
        {&b->particle_member_offsets, sizeof(cl_int), n + 1, SM_CL_MEM_PARTICLES},
        {&b->particle_member_q, sizeof(cl_float4), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->contact, sizeof(cl_float4), nc, SM_CL_MEM_CONTACT},
        {&b->particle_bucket, 2 * sizeof(cl_int), nc, SM_CL_MEM_CONTACT},
        {&b->bucket_count, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->bucket_object, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->bucket_cell, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->bucket_near, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->bucket_start, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->slots, sizeof(sm_k_slot), nc, SM_CL_MEM_CONTACT},
        {&b->candidates, sizeof(cl_int), nc * SM_K_CONTACTS, SM_CL_MEM_CONTACT},
        {&b->candidate_count, sizeof(cl_int), nc, SM_CL_MEM_CONTACT},
        {&b->contact_moved[0], sizeof(cl_float4), nc, SM_CL_MEM_CONTACT},
        {&b->contact_moved[1], sizeof(cl_float4), nc, SM_CL_MEM_CONTACT},
        {&b->contact_dv, sizeof(cl_float4), nc, SM_CL_MEM_CONTACT},
        {&b->surface_binding_offsets, sizeof(cl_int), f->surface_vertices + 1, SM_CL_MEM_SURFACES},
        {&b->surface_binding_cluster, sizeof(cl_int), f->surface_bindings, SM_CL_MEM_SURFACES},
        {&b->surface_binding_rest, sizeof(cl_float4), f->surface_bindings, SM_CL_MEM_SURFACES},
        {&b->surface_triangles, 3 * sizeof(cl_int), f->surface_triangles, SM_CL_MEM_SURFACES},
        {&b->surface_incident_offsets, sizeof(cl_int), f->surface_vertices + 1, SM_CL_MEM_SURFACES},
        {&b->surface_incident, sizeof(cl_int), 3 * f->surface_triangles, SM_CL_MEM_SURFACES},
        {&b->skin_center, sizeof(cl_float4), f->surface_vertices > 0 ? c : 1, SM_CL_MEM_SURFACES},
        {&b->skin_center_offset, sizeof(cl_float4), f->surface_vertices > 0 ? c : 1, SM_CL_MEM_SURFACES},
        {&b->surface_position, sizeof(cl_float4), f->surface_vertices, SM_CL_MEM_SURFACES},
        {&b->surface_normal, sizeof(cl_float4), f->surface_vertices, SM_CL_MEM_SURFACES},
    };
    _Static_assert(sizeof layout / sizeof layout[0] <= SM_CL_PLAN_BUFFERS, "the plan outgrew SM_CL_PLAN_BUFFERS");
    memcpy(plan, layout, sizeof layout);
    return sizeof layout / sizeof layout[0];
}

/// The bytes of one planned buffer: OpenCL has no empty buffers, an empty array gets one element.
static int64_t plan_bytes(const buffer_plan *p) { return (int64_t)p->element * (p->count > 0 ? p->count : 1); }

static const char *const kind_names[SM_CL_MEM_KINDS] = {"per-particle", "per-membership", "per-cluster", "surface",
                                                        "contact"};

int32_t sm_cl_large_threshold(const sm_world *world) { return world->cl ? world->cl->large_threshold : INT32_MAX; }

/// The bytes of the `count` buffers of a plan in all, of its largest buffer, and what kind that is.
static void plan_totals(const buffer_plan *plan, size_t count, int64_t *out_total, int64_t *out_largest,
                        const char **out_kind)
{
    int64_t total = 0, largest = 0;
    const char *kind = "";
    for (size_t i = 0; i < count; i++) {
        total += plan_bytes(&plan[i]);
        if (plan_bytes(&plan[i]) > largest) largest = plan_bytes(&plan[i]), kind = kind_names[plan[i].kind];
    }
    *out_total = total;
    if (out_largest) *out_largest = largest;
    if (out_kind) *out_kind = kind;
}

void sm_cl_plan_bytes(const sm_world *world, const sm_footprint *f, int64_t *out_total, int64_t *out_largest,
                      const char **out_kind)
{
    buffer_plan plan[SM_CL_PLAN_BUFFERS];
    plan_totals(plan, plan_buffers(world->cl, f, plan), out_total, out_largest, out_kind);
}

static sm_result make_buffers(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    release_buffers(cl);
    mode_mix(world, &cl->any_quadratic, &cl->any_plastic);
    sm_footprint f = sm_world_footprint(world);
    f.colliding = world->grid.colliding;
    f.quadratic = cl->any_quadratic;
    buffer_plan plan[SM_CL_PLAN_BUFFERS];
    const size_t planned = plan_buffers(cl, &f, plan);
    // the whole layout against the device's memory first, so a world too large fails cleanly
    int64_t total = 0, largest = 0;
    const char *largest_kind = "";
    plan_totals(plan, planned, &total, &largest, &largest_kind);
    sm_result checked = check_device_memory(world, total, largest, largest_kind);
    if (checked != SM_OK) return checked;
    for (size_t i = 0; i < planned; i++) {
        sm_result result = make_buffer(cl, plan[i].buffer, plan[i].element, plan[i].count);
        if (result != SM_OK) {
            release_buffers(cl);
            return result;
        }
        cl->memory[plan[i].kind] += plan_bytes(&plan[i]);
    }
    cl->objects_on_device = world->object_count;
    cl->particles_on_device = world->particle_count;
    cl->clusters_on_device = world->cluster_count;
    cl->memberships_on_device = world->membership_count;
    cl->large_count = (int32_t)f.large_clusters;
    return SM_OK;
}

/* ---- Host <-> device ---------------------------------------------------------------------- */

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
    };
    return k;
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
static cl_mem particle_field_buffer(const sm_cl_backend *cl, sm_particle_field field)
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
        const float *hi = &world->position_hi[3 * (size_t)(first + i)];
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
static sm_result ensure_targets(sm_world *world, bool *made)
{
    sm_cl_backend *cl = world->cl;
    *made = false;
    if (world->target_count == 0 || cl->target_capacity >= world->particle_count) return SM_OK;
    int64_t used = 0;
    for (int k = 0; k < SM_CL_MEM_KINDS; k++) used += cl->memory[k];
    const int64_t bytes = (int64_t)sizeof(cl_float4) * world->particle_count;
    sm_result result = check_device_memory(world, used + bytes, bytes, "target");
    if (result != SM_OK) return result;
    if (cl->buffers.target) clReleaseMemObject(cl->buffers.target);
    cl->buffers.target = NULL;
    cl->target_capacity = 0;
    result = make_buffer(cl, &cl->buffers.target, sizeof(cl_float4), world->particle_count);
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

sm_result sm_cl_push(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = sm_world_update_map(world);
    if (result == SM_OK) result = sm_grid_layout(world);
    if (result != SM_OK) return result;
    bool quadratic = false, plastic = false;
    mode_mix(world, &quadratic, &plastic);
    // new buffers only for new objects or a first quadratic or plastic object: the handles given
    // out by sm_world_get_cl_state() stay valid when an object leaves quadratic mode or plasticity
    if (cl->objects_on_device != world->object_count || cl->particles_on_device != world->particle_count ||
        (quadratic && !cl->any_quadratic) || (plastic && !cl->any_plastic)) {
        result = make_buffers(world);
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
        // between steps the bucket counts are zero (each step's scan zeroes them again) and the
        // buckets' objects and cells -1 (each step's apply of the contacts sets them so again)
        const cl_int zero = 0, none = -1;
        if (result == SM_OK)
            result = sm_cl_fill_buffer(cl, b->bucket_count, &zero, sizeof zero, 0, world->grid.table_size + 1, NULL);
        if (result == SM_OK)
            result = sm_cl_fill_buffer(cl, b->bucket_object, &none, sizeof none, 0, world->grid.table_size + 1, NULL);
        if (result == SM_OK)
            result = sm_cl_fill_buffer(cl, b->bucket_cell, &none, sizeof none, 0, world->grid.table_size + 1, NULL);
    }

    // memberships
    for (int32_t j = 0; j < k; j++) ints[j] = world->member_particle[j];
    PUT(b->member_particle, sizeof *ints, k, ints);
    for (int32_t j = 0; j < k; j++) vec4[j] = f4(world->member_q[j], 0.0);
    PUT(b->member_q, sizeof *vec4, k, vec4);
    for (int32_t j = 0; j < k; j++) vec4[j] = f4(world->member_rest[j], 0.0);
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
        rest[i].quad_reach = (float)cluster->quad_reach;
        rest[i].size = (float)cluster->size;
        for (int r = 0; r < 3; r++)
            for (int j = 0; j < 6; j++) rest[i].coupling[r][j] = (float)cluster->coupling[r][j];
    }
    PUT(b->clusters, sizeof *clusters, c, clusters);
    for (int32_t i = 0, l = 0; i < c; i++)
        if (world->clusters[i].member_count >= cl->large_threshold) ints[l++] = i;
    PUT(b->large_clusters, sizeof *ints, cl->large_count, ints);
    PUT(b->cluster_rest, sizeof *rest, c, rest);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4(world->clusters[i].center, world->clusters[i].mass);
    PUT(b->center, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4_lo(world->clusters[i].center);
    PUT(b->center_offset, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) vec4[i] = f4(world->clusters[i].velocity, 0.0);
    PUT(b->cluster_velocity, sizeof *vec4, c, vec4);
    for (int32_t i = 0; i < c; i++) {
        const sm_cluster *cluster = &world->clusters[i];
        vec4[i] = quat_of(cluster->rotation);
        if (cluster->warm_start_set) memcpy(vec4[i].s, cluster->warm_start, sizeof cluster->warm_start);
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
    }
    if (world->surface_vertex_count > 0 && result == SM_OK) result = push_surfaces(world);
    if (result == SM_OK && world->target_count > 0) {
        bool made = false;
        result = ensure_targets(world, &made);
        if (result == SM_OK && !made) result = write_particles(world, SM_CL_TARGET, 0, n);
    }
#undef PUT
    if (result == SM_OK) {
        cl->host_changed = false;
        cl->device_ahead = false;
    }
cleanup:
    free(objects), free(ints), free(vec4), free(clusters), free(rest), free(mat3), free(mat39), free(weights);
    if (result == SM_ERROR_OUT_OF_MEMORY) release_buffers(cl); // the device ran out: free what it holds of this world
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
    GET(b->position, sizeof *vec4, n, vec4);
    GET(b->position_lo, sizeof *lo, n, lo);
    for (int32_t i = 0; i < n && result == SM_OK; i++) {
        world->position[i] = from_pair(vec4[i], lo[i]);
        memcpy(&world->position_hi[3 * (size_t)i], vec4[i].s, 3 * sizeof(float));
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
    for (int32_t i = 0; i < c && result == SM_OK; i++) {
        memcpy(world->clusters[i].warm_start, vec4[i].s, sizeof world->clusters[i].warm_start);
        world->clusters[i].warm_start_set = true;
    }
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
        sm_result result = ensure_targets(world, &made);
        if (result != SM_OK || made) return result;
    }
    return write_particles(world, field, first, count);
}

sm_memory sm_world_get_memory(const sm_world *world)
{
    sm_memory m = {0};
    if (!world || !world->cl) return m;
    const sm_cl_backend *cl = world->cl;
    m.particle_bytes = cl->memory[SM_CL_MEM_PARTICLES];
    m.membership_bytes = cl->memory[SM_CL_MEM_MEMBERSHIPS];
    m.cluster_bytes = cl->memory[SM_CL_MEM_CLUSTERS];
    m.surface_bytes = cl->memory[SM_CL_MEM_SURFACES];
    m.contact_bytes = cl->memory[SM_CL_MEM_CONTACT];
    // made apart from the layout: the colliders, their states and the targets
    m.other_bytes = (int64_t)sizeof(sm_k_collider) * (cl->colliders_on_device > 0 ? cl->colliders_on_device : 0) +
                    (int64_t)sizeof(sm_k_collider_state) * cl->collider_state_capacity +
                    (int64_t)sizeof(cl_float4) * cl->target_capacity;
    m.device_bytes = m.particle_bytes + m.membership_bytes + m.cluster_bytes + m.surface_bytes + m.contact_bytes + m.other_bytes;
    return m;
}

void sm_cl_transfer_counts(const sm_world *world, int64_t *out_transfers, int64_t *out_bytes)
{
    *out_transfers = world->cl ? world->cl->transfers : 0;
    *out_bytes = world->cl ? world->cl->transfer_bytes : 0;
}

int64_t sm_cl_launch_count(const sm_world *world) { return world->cl ? world->cl->launches : 0; }

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
    sm_result result = sm_cl_read_buffer(cl, particle_field_buffer(cl, field), sizeof(cl_float4), first, count, out);
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

/* ---- Sharing with OpenGL ------------------------------------------------------------------- */

bool sm_cl_gl_sharing(const sm_world *world, const char **reason)
{
    const sm_cl_backend *cl = world->cl;
    if (reason)
        *reason = !world->def.gl.context ? "the world def names no GL context"
                  : cl->gl_sharing        ? ""
                                          : cl->gl_reason;
    return cl->gl_sharing;
}

sm_result sm_cl_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = SM_OK;
    if (cl->gl_buffers[field]) clReleaseMemObject(cl->gl_buffers[field]);
    cl->gl_buffers[field] = NULL;
    if (gl_buffer == 0) return SM_OK;
    cl_int status = CL_SUCCESS;
    cl->gl_buffers[field] = clCreateFromGLBuffer(cl->device->context, CL_MEM_WRITE_ONLY, gl_buffer, &status);
    SM_CL_TRY(status);
cleanup:
    return result;
}

sm_result sm_cl_copy_to_gl(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = sm_cl_prepare(world);
    if (result != SM_OK) return result;
    size_t bytes[SM_CL_GL_FIELDS];
    cl_mem shared[SM_CL_GL_FIELDS];
    cl_uint count = 0;
    bool acquired = false;
    for (int f = 0; f < SM_CL_GL_FIELDS; f++) {
        const bool surface = f == SM_FIELD_SURFACE_POSITION || f == SM_FIELD_SURFACE_NORMAL;
        const int32_t items = surface ? world->surface_vertex_count : world->particle_count;
        bytes[f] = sizeof(cl_float4) * (size_t)items;
        if (!cl->gl_buffers[f] || bytes[f] == 0) continue;
        size_t size = 0;
        SM_CL_TRY(clGetMemObjectInfo(cl->gl_buffers[f], CL_MEM_SIZE, sizeof size, &size, NULL));
        if (size < bytes[f])
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "sm_world_copy_to_gl: GL buffer of field %d holds %zu bytes, the world's %d %s need %zu "
                           "(share a larger one after adding objects)",
                           f, size, items, surface ? "surface vertices" : "particles", bytes[f]);
        shared[count++] = cl->gl_buffers[f];
    }
    if (count == 0) return SM_OK;
    SM_CL_TRY(clEnqueueAcquireGLObjects(cl->queue, count, shared, 0, NULL, NULL));
    acquired = true;
    for (int f = 0; f < SM_CL_GL_FIELDS; f++)
        if (cl->gl_buffers[f] && bytes[f] > 0)
            SM_CL_TRY(clEnqueueCopyBuffer(cl->queue, particle_field_buffer(cl, (sm_particle_field)f), cl->gl_buffers[f], 0, 0,
                                          bytes[f], 0, NULL, NULL));
cleanup:
    // once acquired, the buffers go back to GL whatever happened
    if (acquired) {
        cl_int status = clEnqueueReleaseGLObjects(cl->queue, count, shared, 0, NULL, NULL);
        if (status != CL_SUCCESS && result == SM_OK) result = sm_cl_fail("clEnqueueReleaseGLObjects", status, __FILE__, __LINE__);
        // without cl_khr_gl_event the release is synchronised with GL by finishing the queue
        status = clFinish(cl->queue);
        if (status != CL_SUCCESS && result == SM_OK) result = sm_cl_fail("clFinish", status, __FILE__, __LINE__);
    }
    return result;
}

/* ---- Stepping ------------------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/// Uploads the colliders' shapes when colliders were added since the last upload.
static sm_result upload_colliders(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    if (cl->colliders_on_device == world->collider_count) return SM_OK;
    if (cl->buffers.colliders) clReleaseMemObject(cl->buffers.colliders);
    cl->buffers.colliders = NULL;
    sm_result result = make_buffer(cl, &cl->buffers.colliders, sizeof(sm_k_collider), world->collider_count);
    if (result != SM_OK) return result;
    sm_k_collider *k = staging(sizeof *k, world->collider_count);
    if (!k) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory uploading the colliders");
    for (int32_t c = 0; c < world->collider_count; c++) {
        const sm_collider *collider = &world->colliders[c];
        k[c].shape = collider->def.shape;
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
static sm_result write_collider_states(sm_world *world, double h, int32_t substeps)
{
    sm_cl_backend *cl = world->cl;
    const int64_t count = (int64_t)substeps * world->collider_count;
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
        result = make_buffer(cl, &cl->buffers.collider_state, sizeof(sm_k_collider_state), count);
        if (result != SM_OK) return result;
        cl->collider_state_capacity = (int32_t)count;
    }
    sm_k_collider_state *k = staging(sizeof *k, count);
    if (!k) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory moving the colliders");
    for (int32_t s = 0; s < substeps; s++) {
        for (int32_t c = 0; c < world->collider_count; c++) {
            sm_vec3 center, velocity;
            sm_collider_state(&world->colliders[c], world->time + (s + 1) * h, &center, &velocity);
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

/// Uploads everything if the host changed or objects were added since the last upload (both
/// pulled the device's state to the host first, see sm_cl_mark_host_changed()), and the
/// colliders if any were added.
sm_result sm_cl_prepare(sm_world *world)
{
    sm_result result = sm_cl_buffers_current(world->cl, world) ? SM_OK : sm_cl_push(world);
    bool made = false; // targets set while their buffer could not be made: again now, or fail again
    if (result == SM_OK) result = ensure_targets(world, &made);
    return result == SM_OK ? upload_colliders(world) : result;
}

/// Releases the events kept while profiling; with `add`, first waits for each command and adds
/// its device time to its pass.
static void collect_events(sm_world *world, bool add)
{
    sm_cl_backend *cl = world->cl;
    for (int32_t e = 0; e < cl->event_count; e++) {
        cl_ulong begin = 0, end = 0;
        if (add && clWaitForEvents(1, &cl->events[e]) == CL_SUCCESS &&
            clGetEventProfilingInfo(cl->events[e], CL_PROFILING_COMMAND_START, sizeof begin, &begin, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(cl->events[e], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS)
            world->profile.pass_ms[cl->event_pass[e]] += (double)(end - begin) * 1e-6;
        clReleaseEvent(cl->events[e]);
    }
    cl->event_count = 0;
}

/// The device's pass `pass` of solver step `substep`, enqueued (the core's scheduler picks them:
/// sm_world_run_passes()).
static sm_result enqueue_pass(sm_world *world, sm_pass pass, double h, int32_t substep)
{
    world->cl->substep = substep; // (which of the colliders' states the ground pass reads)
    return sm_cl_enqueue_pass(world, pass, (float)h);
}

/// Checks that the caller's input buffer `input` (may be NULL) still holds a float4 per particle.
static sm_result check_input(const sm_world *world, cl_mem input, const char *what)
{
    sm_result result = SM_OK;
    if (!input) return SM_OK;
    size_t size = 0;
    SM_CL_TRY(clGetMemObjectInfo(input, CL_MEM_SIZE, sizeof size, &size, NULL));
    if (size < sizeof(cl_float4) * (size_t)world->particle_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "sm_world_step: the caller's %s buffer holds %zu bytes, the world's %d particles need %zu (16 each)",
                       what, size, world->particle_count, sizeof(cl_float4) * (size_t)world->particle_count);
cleanup:
    return result;
}

sm_result sm_cl_step(sm_world *world, double h, int32_t substeps) { return sm_cl_step_events(world, h, substeps, 0, NULL, NULL); }

sm_result sm_cl_step_events(sm_world *world, double h, int32_t substeps, cl_uint wait_count, const cl_event *wait_list,
                            cl_event *out_event)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = sm_cl_prepare(world);
    if (result == SM_OK) result = check_input(world, cl->input_force, "forces");
    if (result == SM_OK) result = check_input(world, cl->input_target, "targets");
    if (result != SM_OK) return result;
    const double start = now_ms();
    // the step's first command waits for the caller's events (the queue is in order)
    if (wait_count > 0) {
        cl_int status = clEnqueueBarrierWithWaitList(cl->queue, wait_count, wait_list, NULL);
        if (status != CL_SUCCESS) return sm_cl_fail("clEnqueueBarrierWithWaitList", status, __FILE__, __LINE__);
    }
    result = write_collider_states(world, h, substeps);
    static const sm_pass_runner device = {enqueue_pass, collect_events};
    if (result == SM_OK) result = sm_world_run_passes(world, h, substeps, &device);
    // an event that completes with the step's last command
    if (result == SM_OK && out_event) {
        cl_int status = clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, out_event);
        if (status != CL_SUCCESS) result = sm_cl_fail("clEnqueueMarkerWithWaitList", status, __FILE__, __LINE__);
    }
    // start the work without waiting for it
    if (result == SM_OK) {
        cl_int status = clFlush(cl->queue);
        if (status != CL_SUCCESS) result = sm_cl_fail("clFlush", status, __FILE__, __LINE__);
    }
    world->profile.step_ms += now_ms() - start;
    if (result == SM_OK) cl->device_ahead = true;
    return result;
}

/* ---- Single passes, for the tests ------------------------------------------------------------ */

sm_result sm_cl_poison_outputs(sm_world *world, sm_pass pass)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = SM_OK;
    const float nan = NAN;
    sm_cl_buffers *b = &cl->buffers;
    cl_mem outputs[5] = {NULL, NULL, NULL, NULL, NULL};
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS:
        outputs[0] = b->center, outputs[1] = b->center_offset, outputs[2] = b->apq;
        outputs[3] = cl->any_quadratic ? b->fit9 : NULL, outputs[4] = b->cluster_velocity;
        break;
    case SM_PASS_ROTATION: outputs[0] = b->rotation, outputs[1] = b->quat; break;
    case SM_PASS_GOAL_TRANSFORM: outputs[0] = b->linear_fit, outputs[1] = b->transform; break;
    case SM_PASS_BLEND_INTEGRATE: outputs[0] = b->goal; break;
    case SM_PASS_COLLISION_GRID: outputs[0] = b->particle_bucket, outputs[1] = b->bucket_start, outputs[2] = b->slots; break;
    case SM_PASS_SKIN: // (unbound vertices keep their position: it is not an output)
        outputs[0] = b->skin_center, outputs[1] = b->skin_center_offset, outputs[2] = b->surface_normal;
        break;
    default: break; // collide, ground and plasticity update their inputs in place
    }
    for (int i = 0; i < 5; i++) {
        if (!outputs[i]) continue;
        size_t size = 0;
        SM_CL_TRY(clGetMemObjectInfo(outputs[i], CL_MEM_SIZE, sizeof size, &size, NULL));
        SM_CL_TRY(clEnqueueFillBuffer(cl->queue, outputs[i], &nan, sizeof nan, 0, size, 0, NULL, NULL));
    }
    SM_CL_TRY(clFinish(cl->queue));
cleanup:
    return result;
}

sm_result sm_cl_run_pass(sm_world *world, sm_pass pass, double h)
{
    sm_cl_backend *cl = world->cl;
    cl->substep = 0;
    sm_result result = upload_colliders(world);
    if (result == SM_OK && pass == SM_PASS_GROUND) result = write_collider_states(world, h, 1);
    if (result == SM_OK) result = sm_cl_enqueue_pass(world, pass, (float)h);
    if (result == SM_OK) SM_CL_TRY(clFinish(cl->queue));
    cl->device_ahead = true;
cleanup:
    collect_events(world, false);
    return result;
}
