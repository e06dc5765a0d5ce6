/* The OpenCL backend's device buffers: the one layout they are planned from (and the memory
 * estimate with them), what the device can hold, and making and releasing them. */
#include "../memory.h"
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>

sm_result sm_cl_make_buffer(sm_cl_backend *cl, cl_mem *out, size_t element, int64_t count)
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
sm_result sm_cl_check_device_memory(const sm_world *world, int64_t total, int64_t largest, const char *what)
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
void sm_cl_mode_mix(const sm_world *world, bool *quadratic, bool *plastic)
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
    const int64_t scan_tiles = 2 * sm_cl_scan_groups(table - 1) + 1; // (kernels/05's sm_grid_scan)
    sm_cl_buffers *b = &cl->buffers;
    const buffer_plan layout[] = {
        {&b->objects, sizeof(sm_k_object), f->objects, SM_CL_MEM_CLUSTERS},
        {&b->object_motion, 2 * sizeof(cl_float4), f->objects, SM_CL_MEM_CLUSTERS},
        {&b->check_flag, sizeof(cl_int), 3, SM_CL_MEM_CLUSTERS},
        {&b->large_clusters, sizeof(cl_int), f->large_clusters, SM_CL_MEM_CLUSTERS},
        {&b->clusters, sizeof(sm_k_cluster), c, SM_CL_MEM_CLUSTERS},
        {&b->cluster_rest, sizeof(sm_k_cluster_rest), c, SM_CL_MEM_CLUSTERS},
        {&b->plastic, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->center, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->center_offset, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->cluster_velocity, sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->cluster_motion, 2 * sizeof(cl_float4), c, SM_CL_MEM_CLUSTERS},
        {&b->goal_bias, sizeof(sm_k_bias), c, SM_CL_MEM_CLUSTERS},
        {&b->apq, sizeof(sm_k_mat3), c, SM_CL_MEM_CLUSTERS},
        {&b->fit9, sizeof(sm_k_mat39), c9, SM_CL_MEM_CLUSTERS},
        {&b->null_fit, sizeof(sm_k_mat39), c9, SM_CL_MEM_CLUSTERS},
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
        {&b->step_start, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->force, sizeof(cl_float4), n, SM_CL_MEM_PARTICLES},
        {&b->particle_object, sizeof(cl_int), n, SM_CL_MEM_PARTICLES},
        {&b->particle_member_offsets, sizeof(cl_int), n + 1, SM_CL_MEM_PARTICLES},
        {&b->particle_member_q, sizeof(cl_float4), k, SM_CL_MEM_MEMBERSHIPS},
        {&b->contact, sizeof(cl_float4), nc, SM_CL_MEM_CONTACT},
        {&b->particle_bucket, 2 * sizeof(cl_int), nc, SM_CL_MEM_CONTACT},
        {&b->bucket_count, sizeof(cl_int), table, SM_CL_MEM_CONTACT},
        {&b->buckets, sizeof(sm_k_bucket), table, SM_CL_MEM_CONTACT},
        {&b->scan_tiles, sizeof(cl_int), scan_tiles, SM_CL_MEM_CONTACT},
        {&b->members, 2 * sizeof(cl_int), nc, SM_CL_MEM_CONTACT},
        {&b->slot_boxes, sizeof(sm_k_box), 2 * nc, SM_CL_MEM_CONTACT},
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
    // the mesh colliders' fields, one buffer (sm_cl_upload_colliders())
    const int64_t fields = (int64_t)sizeof(cl_float) * f->field_nodes;
    *out_total += fields;
    if (out_largest && fields > *out_largest) {
        *out_largest = fields;
        if (out_kind) *out_kind = "mesh-collider field";
    }
}

void sm_cl_release_buffers(sm_cl_backend *cl)
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

sm_result sm_cl_make_buffers(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_cl_release_buffers(cl);
    sm_cl_mode_mix(world, &cl->any_quadratic, &cl->any_plastic);
    sm_footprint f = sm_world_footprint(world);
    f.colliding = world->grid.colliding;
    f.quadratic = cl->any_quadratic;
    buffer_plan plan[SM_CL_PLAN_BUFFERS];
    const size_t planned = plan_buffers(cl, &f, plan);
    // the whole layout against the device's memory first, so a world too large fails cleanly
    int64_t total = 0, largest = 0;
    const char *largest_kind = "";
    plan_totals(plan, planned, &total, &largest, &largest_kind);
    sm_result checked = sm_cl_check_device_memory(world, total, largest, largest_kind);
    if (checked != SM_OK) return checked;
    for (size_t i = 0; i < planned; i++) {
        sm_result result = sm_cl_make_buffer(cl, plan[i].buffer, plan[i].element, plan[i].count);
        if (result != SM_OK) {
            sm_cl_release_buffers(cl);
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
    int64_t fields = 0; // the mesh colliders' distance fields, a float a node
    for (int32_t c = 0; c < world->collider_count && c < cl->colliders_on_device; c++)
        if (world->colliders[c].def.shape == SM_COLLIDER_MESH)
            fields += (int64_t)sizeof(float) * sm_sdf_node_count(&world->colliders[c].sdf);
    m.other_bytes = fields + (int64_t)sizeof(sm_k_collider) * (cl->colliders_on_device > 0 ? cl->colliders_on_device : 0) +
                    (int64_t)sizeof(sm_k_collider_state) * cl->collider_state_capacity +
                    (int64_t)sizeof(cl_float4) * cl->target_capacity;
    m.device_bytes = m.particle_bytes + m.membership_bytes + m.cluster_bytes + m.surface_bytes + m.contact_bytes + m.other_bytes;
    return m;
}
