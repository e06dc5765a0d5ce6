/* One enqueue function per pass, in pipeline order, each binding its kernels' arguments (the
 * buffers of kernels/0N_*.cl in their order) and launching one work-item per cluster, per
 * particle (the grid's scan: a work-group per tile of its table). */
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *kernel_names[SM_CLK_COUNT] = {
    "sm_cluster_moments", "sm_cluster_moments_group", "sm_rotation", "sm_goal_transform", "sm_blend_integrate",
    "sm_grid_count", "sm_grid_scan", "sm_grid_scatter", "sm_grid_runs", "sm_find_contacts", "sm_collide",
    "sm_ground", "sm_plasticity", "sm_skin_centers", "sm_skin_vertices",
    "sm_skin_normals", "sm_check_particles", "sm_check_clusters"};

/// Whether kernels launch as on a GPU: one work-item per item and the scan's work-groups wide
/// (kernels/05): on a GPU, or on any device with $SM_GPU_LAUNCHES=1 (the tests run the GPU's
/// shapes on PoCL so). Read once, when the kernels are made.
static bool gpu_launches(const sm_cl_device *d)
{
    const char *env = getenv("SM_GPU_LAUNCHES");
    return d->gpu || (env && strcmp(env, "1") == 0);
}

/// Whether the grid's counts take the particles in a scrambled order ($SM_SCRAMBLE_ARRIVAL=1), so
/// that the atomics hand out the ranks in another order than the device's scheduling does, as
/// another device's might: the tests check that no result changes. Read once, when the kernels
/// are made.
static bool scramble_arrival(void)
{
    const char *env = getenv("SM_SCRAMBLE_ARRIVAL");
    return env && strcmp(env, "1") == 0;
}

/// $SM_WORK_GROUP_SIZE into *out (0 when it is not set): a power of two that the device's
/// CL_DEVICE_MAX_WORK_GROUP_SIZE and CL_DEVICE_MAX_WORK_ITEM_SIZES allow, else an error. (A
/// device may still fail at a size it reports: PoCL 3.1's CPU device reports 4096, but the
/// plasticity kernel's private arrays for a group of 4096 overflow its worker threads' stacks.)
static sm_result forced_group_size(const sm_cl_device *d, size_t *out)
{
    *out = 0;
    const char *env = getenv("SM_WORK_GROUP_SIZE");
    if (!env || !*env) return SM_OK;
    char *end = NULL;
    const long long value = strtoll(env, &end, 10);
    if (*end != '\0' || value < 1 || (value & (value - 1)) != 0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "SM_WORK_GROUP_SIZE must be a power of two (1, 2, 4, ...), got '%s'", env);
    size_t items[3] = {0, 0, 0};
    sm_result result = SM_OK;
    SM_CL_TRY(clGetDeviceInfo(d->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL));
    const size_t largest = d->max_group < items[0] ? d->max_group : items[0];
    if ((unsigned long long)value > largest)
        return sm_fail(SM_ERROR_UNAVAILABLE,
                       "SM_WORK_GROUP_SIZE=%lld: %s runs work-groups of at most %zu work-items "
                       "(CL_DEVICE_MAX_WORK_GROUP_SIZE %zu, CL_DEVICE_MAX_WORK_ITEM_SIZES[0] %zu)",
                       value, d->name, largest, d->max_group, items[0]);
    *out = (size_t)value;
cleanup:
    return result;
}

sm_result sm_cl_create_kernels(sm_cl_backend *cl)
{
    size_t forced = 0;
    sm_result result = forced_group_size(cl->device, &forced);
    if (result != SM_OK) return result;
    cl->gpu_launches = gpu_launches(cl->device);
    cl->scramble_arrival = scramble_arrival();
    for (int p = 0; p < SM_CLK_COUNT; p++) {
        cl_int status = CL_SUCCESS;
        cl->kernels[p] = clCreateKernel(cl->device->program, kernel_names[p], &status);
        SM_CL_TRY(status);
        size_t group = 0;
        SM_CL_TRY(clGetKernelWorkGroupInfo(cl->kernels[p], cl->device->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof group,
                                           &group, NULL));
        if (p == SM_CLK_CLUSTER_MOMENTS_GROUP) {
            // a work-group per large cluster: the largest power of two up to SM_K_GROUP_SIZE, fixed
            // by design whatever $SM_WORK_GROUP_SIZE says (its tree sum's order depends on the size,
            // so one device always sums a cluster alike)
            for (cl->group[p] = 1; 2 * cl->group[p] <= group && 2 * cl->group[p] <= SM_K_GROUP_SIZE;) cl->group[p] *= 2;
        } else if (p == SM_CLK_GRID_SCAN) {
            // the scan: a work-group per tile of SM_K_SCAN_TILE buckets, on a GPU of the largest
            // power of two up to an eighth of the tile (or $SM_WORK_GROUP_SIZE), on a CPU device
            // of one work-item, which reads its tile in order (its result, a sum of integers, does
            // not depend on the size)
            const size_t most = !cl->gpu_launches ? 1 : forced > 0 ? forced : SM_K_SCAN_TILE / 8;
            for (cl->group[p] = 1; 2 * cl->group[p] <= group && 2 * cl->group[p] <= most;) cl->group[p] *= 2;
        } else if (forced > 0) {
            // one work-item per cluster, particle or vertex, none depending on the others of
            // its group: any size gives the same results (tests/test_determinism runs several)
            if (forced > group)
                return sm_fail(SM_ERROR_UNAVAILABLE,
                               "SM_WORK_GROUP_SIZE=%zu: kernel %s runs work-groups of at most %zu work-items on %s "
                               "(CL_KERNEL_WORK_GROUP_SIZE)",
                               forced, kernel_names[p], group, cl->device->name);
            cl->group[p] = forced;
        } else {
            // 64 suits every device we know; the kernels guard against the padding
            cl->group[p] = group < 64 ? group : 64;
        }
    }
cleanup:
    return result;
}

/// Sets the arguments in order: each (size, pointer) pair is one argument.
static sm_result set_args(cl_kernel kernel, int count, const size_t *sizes, const void *const *values)
{
    sm_result result = SM_OK;
    for (int a = 0; a < count; a++) SM_CL_TRY(clSetKernelArg(kernel, (cl_uint)a, sizes[a], values[a]));
cleanup:
    return result;
}

/// Where the event of the next command of `pass` (kernel `kernel`) goes: a slot of cl->events
/// when profiling (none for SM_PASS_COUNT: work outside the step's passes).
static cl_event *event_slot(sm_world *world, sm_pass pass, sm_cl_kernel kernel)
{
    sm_cl_backend *cl = world->cl;
    if (!world->def.profile || pass == SM_PASS_COUNT || cl->event_count == SM_CL_MAX_STEP_COMMANDS) return NULL;
    cl->event_pass[cl->event_count] = pass;
    cl->event_kernel[cl->event_count] = kernel;
    return &cl->events[cl->event_count++];
}

const char *sm_cl_kernel_name(int kernel) { return kernel >= 0 && kernel < SM_CLK_COUNT ? kernel_names[kernel] : "?"; }

/// Binds `count` arguments to kernel `kernel` and launches it over `items` work-items.
static sm_result launch(sm_world *world, sm_pass pass, sm_cl_kernel kernel, int32_t items, int count,
                        const size_t *sizes, const void *const *values)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = set_args(cl->kernels[kernel], count, sizes, values);
    if (result != SM_OK || items == 0) return result;
    const size_t group = cl->group[kernel];
    const size_t global = ((size_t)items + group - 1) / group * group;
    SM_CL_TRY(clEnqueueNDRangeKernel(cl->queue, cl->kernels[kernel], 1, NULL, &global, &group, 0, NULL,
                                     event_slot(world, pass, kernel)));
    cl->launches++;
cleanup:
    return result;
}

/// The number of elements of an array.
#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

/// 1. x_cm, A_pq and the quadratic fit per cluster.
static sm_result cluster_moments(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const cl_int threshold = world->cl->large_threshold;
    const size_t sizes[] = {sizeof n, sizeof threshold, m, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &threshold, &b->clusters, &b->objects, &b->member_particle, &b->member_q, &b->member_w,
                            &b->position, &b->position_lo, &b->velocity, &b->center, &b->center_offset,
                            &b->cluster_velocity, &b->apq, &b->fit9, &b->goal_bias};
    sm_result result = launch(world, SM_PASS_CLUSTER_MOMENTS, SM_CLK_CLUSTER_MOMENTS, n, COUNT(values), sizes, values);
    const cl_int large = world->cl->large_count;
    if (result != SM_OK || large == 0) return result;
    // the large clusters: one work-group each, its partial sums in local memory
    const size_t group = world->cl->group[SM_CLK_CLUSTER_MOMENTS_GROUP];
    const size_t group_sizes[] = {sizeof large, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m,
                                  sizeof(cl_float) * SM_K_MOMENT_TERMS * group};
    const void *group_values[] = {&large, &b->large_clusters, &b->clusters, &b->objects, &b->member_particle, &b->member_q,
                                  &b->member_w, &b->position, &b->position_lo, &b->velocity, &b->center,
                                  &b->center_offset, &b->cluster_velocity, &b->apq, &b->fit9, &b->goal_bias, NULL};
    return launch(world, SM_PASS_CLUSTER_MOMENTS, SM_CLK_CLUSTER_MOMENTS_GROUP, (int32_t)(group * (size_t)large),
                  COUNT(group_values), group_sizes, group_values);
}

/// 2. R per cluster, warm-started from the last step's quaternion; each object's motion in chunks.
static sm_result rotation(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &b->cluster_rest, &b->apq, &b->quat, &b->rotation, &b->clusters, &b->objects,
                            &b->center, &b->center_offset, &b->cluster_velocity, &b->cluster_motion};
    return launch(world, SM_PASS_ROTATION, SM_CLK_ROTATION, n, COUNT(values), sizes, values);
}

/// 3. (3a) The spin limit on each cluster's flow, then T and A_lin per cluster.
static sm_result goal_transform(sm_world *world, float h)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, m, m, m, m, m, m, m, m, sizeof h, m, m, m, m, m, m, m};
    const void *values[] = {&n, &b->clusters, &b->objects, &b->cluster_rest, &b->apq, &b->fit9, &b->rotation,
                            &b->linear_fit, &b->transform, &h, &b->center, &b->center_offset,
                            &b->cluster_velocity, &b->cluster_motion, &b->object_motion, &b->null_fit,
                            &b->goal_bias};
    return launch(world, SM_PASS_GOAL_TRANSFORM, SM_CLK_GOAL_TRANSFORM, n, COUNT(values), sizes, values);
}

/// 4 (4a-4f). Blended goals, velocities and positions per particle.
static sm_result blend_integrate(sm_world *world, float h)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->particle_count;
    const cl_float4 gravity = {{(float)world->def.gravity.x, (float)world->def.gravity.y, (float)world->def.gravity.z, 0.0f}};
    const size_t m = sizeof(cl_mem);
    // the caller's forces and targets (sm_world_set_cl_inputs()), else the host's targets; an
    // absent input is bound to a buffer the kernel does not read
    const sm_cl_backend *cl = world->cl;
    const cl_mem targets = cl->input_target ? cl->input_target : world->target_count > 0 ? b->target : NULL; // NULL if not made
    const cl_int inputs = (cl->input_force ? SM_K_INPUT_FORCES : 0) | (targets ? SM_K_INPUT_TARGETS : 0);
    const cl_mem input_force = cl->input_force ? cl->input_force : b->force, target = targets ? targets : b->force;
    const size_t sizes[] = {sizeof n, sizeof h, sizeof gravity, m, m, m, m, m, m, m, m, m, m,
                            sizeof inputs, m, m, m, m, m, m, m};
    const void *values[] = {&n, &h, &gravity, &b->particle_object, &b->objects, &b->particle_member_offsets,
                            &b->particle_member_q, &b->cluster_rest, &b->center, &b->center_offset,
                            &b->cluster_velocity, &b->transform, &b->force, &inputs, &input_force, &target,
                            &b->position, &b->position_lo, &b->velocity, &b->goal, &b->step_start};
    return launch(world, SM_PASS_BLEND_INTEGRATE, SM_CLK_BLEND_INTEGRATE, n, COUNT(values), sizes, values);
}

/// 1 / the edge of the grid's cells (sm_grid_cell_size()): every pair that overlaps lies in
/// neighbouring cells.
static cl_float grid_inv_cell(const sm_world *world) { return 1.0f / (cl_float)world->grid.cell_size; }

/// The work-items of a kernel over `count` items (kernels/05's SM_K_CHUNK): on a GPU one item
/// per work-item, on a CPU a run of a few per work-item.
static int32_t run_items(const sm_world *world, int32_t count)
{
    const int32_t few = 1024;
    return world->cl->gpu_launches || count < few ? count : few;
}

/// The order in which sm_grid_count takes `count` particles: 0, in index order, or, where the
/// world scrambles it, a prime that does not divide `count` (particle k P mod count at k).
static cl_int arrival_order(const sm_world *world, int32_t count)
{
    if (!world->cl->scramble_arrival || count <= 0) return 0;
    const cl_int primes[] = {7919, 7927, 7933}; // (no positive count below 2^31 has all three as factors)
    int p = 0;
    while (count % primes[p] == 0) p++;
    return primes[p];
}

/// 5. The grid: each colliding particle's bucket and rank (count), the buckets' beginnings
/// (scan, a work-group per tile), the slots (scatter), and their runs and chunks (runs).
static sm_result collision_grid(sm_world *world)
{
    const sm_pass pass = SM_PASS_COLLISION_GRID;
    sm_cl_backend *cl = world->cl;
    sm_cl_buffers *b = &cl->buffers;
    const size_t m = sizeof(cl_mem);
    const cl_int n = world->particle_count, table = world->grid.table_size, mask = table - 1;
    const cl_float inv_cell = grid_inv_cell(world);
    const cl_int order = arrival_order(world, n);
    const size_t count_sizes[] = {sizeof n, sizeof order, sizeof inv_cell, sizeof mask, m, m, m, m};
    const void *count_values[] = {&n,           &order,       &inv_cell,           &mask,
                                  &b->contact,  &b->position, &b->particle_bucket, &b->bucket_count};
    sm_result result = launch(world, pass, SM_CLK_GRID_COUNT, run_items(world, n), COUNT(count_values), count_sizes,
                              count_values);
    if (result != SM_OK) return result;
    // the scan: a work-group per tile (local memory: the tile, and an int per work-item)
    const size_t group = cl->group[SM_CLK_GRID_SCAN];
    const size_t scan_sizes[] = {sizeof table, m, m, m, sizeof(cl_int) * SM_K_SCAN_TILE, sizeof(cl_int) * group};
    const void *scan_values[] = {&table, &b->bucket_count, &b->buckets, &b->scan_tiles, NULL, NULL};
    result = launch(world, pass, SM_CLK_GRID_SCAN, (int32_t)(group * (size_t)sm_cl_scan_groups(table)),
                    COUNT(scan_values), scan_sizes, scan_values);
    if (result != SM_OK) return result;
    const size_t scatter_sizes[] = {sizeof n, m, m, m, m, m, m, m, m};
    const void *scatter_values[] = {&n,           &b->particle_bucket, &b->buckets, &b->scan_tiles, &b->particle_object,
                                    &b->contact,  &b->position,        &b->members, &b->slots};
    result = launch(world, pass, SM_CLK_GRID_SCATTER, run_items(world, n), COUNT(scatter_values), scatter_sizes,
                    scatter_values);
    if (result != SM_OK) return result;
    const size_t run_sizes[] = {sizeof n, m, m, m, m, m, m, m, m};
    const void *run_values[] = {&n,          &b->particle_bucket, &b->contact,    &b->position, &b->members,
                                  &b->buckets, &b->scan_tiles,      &b->slot_boxes, &b->slots};
    return launch(world, pass, SM_CLK_GRID_RUNS, run_items(world, n), COUNT(run_values), run_sizes, run_values);
}

/// 6. Contact: each particle's candidates and weight, then `iterations` sweeps, each adding
/// every particle's correction to the sum of the sweeps before it; pass 7 applies the sum.
static sm_result collide(sm_world *world, float h)
{
    const sm_pass pass = SM_PASS_COLLIDE;
    sm_cl_buffers *b = &world->cl->buffers;
    const size_t m = sizeof(cl_mem);
    const sm_collisions *c = &world->def.collisions;
    const cl_int n = world->particle_count, mask = world->grid.table_size - 1;
    const int32_t items = run_items(world, n);
    const cl_float inv_cell = grid_inv_cell(world), restitution = (float)c->restitution, friction = (float)c->friction;
    const cl_float relaxation = (float)c->relaxation, push = (float)(c->push_speed * h / c->relaxation);
    // the first sweep's corrections so far, zero, and the weights: contact_moved[1]
    const cl_float largest = (cl_float)world->grid.largest;
    const size_t find_sizes[] = {sizeof n, sizeof h, sizeof mask, sizeof inv_cell, sizeof largest, m, m, m, m, m, m, m,
                                 m, m, m, m, m, m};
    const void *find_values[] = {&n,           &h,           &mask,           &inv_cell,          &largest,
                                 &b->objects,  &b->members, &b->contact, &b->buckets, &b->scan_tiles, &b->slot_boxes,
                                 &b->slots,    &b->candidates, &b->candidate_count, &b->position, &b->position_lo,
                                 &b->velocity, &b->contact_moved[1]};
    sm_result result = launch(world, pass, SM_CLK_FIND_CONTACTS, items, COUNT(find_values), find_sizes, find_values);
    for (cl_int sweep = 0; sweep < c->iterations && result == SM_OK; sweep++) {
        const size_t sizes[] = {sizeof n, sizeof sweep, sizeof h, sizeof restitution, sizeof friction, sizeof relaxation,
                                sizeof push, m, m, m, m, m, m, m, m, m, m};
        const void *values[] = {&n,           &sweep,        &h,           &restitution, &friction,
                                &relaxation,  &push,         &b->contact,  &b->candidates, &b->candidate_count,
                                &b->force,    &b->position,  &b->position_lo, &b->velocity,
                                &b->contact_moved[(sweep + 1) % 2], &b->contact_moved[sweep % 2], &b->contact_dv};
        result = launch(world, pass, SM_CLK_COLLIDE, items, COUNT(values), sizes, values);
    }
    world->cl->contacts_pending = result == SM_OK;
    return result;
}

/// 7. The contact corrections of pass 6, if it ran (apply_only: those alone), then the ground
/// plane, the colliders (7a) and the pusher (7b), per particle.
static sm_result ground(sm_world *world, float h, bool apply_only)
{
    sm_cl_backend *cl = world->cl;
    sm_cl_buffers *b = &cl->buffers;
    const cl_int n = world->particle_count;
    const sm_ground g = world->def.ground;
    const sm_pusher p = world->pusher;
    const cl_int flags = (cl->contacts_pending ? SM_K_CONTACTS_MADE : 0) |
                         (apply_only ? 0 : (g.enabled ? SM_K_GROUND : 0) | (p.enabled ? SM_K_PUSHER : 0));
    const float height = (float)g.height;
    const cl_float4 plane = {{height, (float)g.restitution, (float)g.friction, (float)(g.height - height)}};
    const cl_float4 sphere = {{(float)p.center.x, (float)p.center.y, (float)p.center.z, (float)p.radius}};
    const cl_float4 sphere_lo = {
        {sm_cl_low_half(p.center.x), sm_cl_low_half(p.center.y), sm_cl_low_half(p.center.z), 0.0f}};
    const cl_float4 sphere_velocity = {{(float)p.velocity.x, (float)p.velocity.y, (float)p.velocity.z, 0.0f}};
    const cl_int colliders = apply_only ? 0 : world->collider_count, state_first = cl->substep * world->collider_count;
    const float limit = (float)(world->def.collisions.push_speed * h);
    // the sum of the sweeps' corrections: in the buffer the last sweep wrote
    const cl_mem moved = b->contact_moved[(world->def.collisions.iterations + 1) % 2];
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof flags, sizeof plane, sizeof sphere, sizeof sphere_lo, sizeof sphere_velocity,
                            sizeof colliders, m, m, sizeof state_first, m, m, m, sizeof h, sizeof limit,
                            m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &flags, &plane, &sphere, &sphere_lo, &sphere_velocity, &colliders, &b->colliders,
                            &b->collider_fields, &state_first, &b->collider_state, &b->force, &b->step_start, &h, &limit,
                            cl->contacts_pending ? &moved : &b->force, cl->contacts_pending ? &b->contact_dv : &b->force,
                            &b->particle_object, &b->objects, &b->particle_member_offsets, &b->particle_member_q,
                            &b->cluster_rest, &b->cluster_velocity,
                            &b->position, &b->position_lo, &b->velocity};
    cl->contacts_pending = false;
    return launch(world, SM_PASS_GROUND, SM_CLK_GROUND, n, COUNT(values), sizes, values);
}

/// 8. Plastic state and rest data per cluster.
static sm_result plasticity(sm_world *world, float h)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof h, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n,           &h,          &b->clusters,    &b->objects,          &b->rotation,
                            &b->linear_fit, &b->member_rest, &b->plastic, &b->member_q, &b->member_slot,
                            &b->particle_member_q, &b->cluster_rest, &b->member_w, &b->null_fit, &b->goal_bias};
    return launch(world, SM_PASS_PLASTICITY, SM_CLK_PLASTICITY, n, COUNT(values), sizes, values);
}

/// 9. Skinned surfaces: the clusters' centres after the step, the vertices, their normals.
static sm_result skin(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int c = world->cluster_count, v = world->surface_vertex_count;
    const size_t m = sizeof(cl_mem);
    const size_t center_sizes[] = {sizeof c, m, m, m, m, m, m, m};
    const void *center_values[] = {&c, &b->clusters, &b->member_particle, &b->member_q, &b->position, &b->position_lo,
                                   &b->skin_center, &b->skin_center_offset};
    sm_result result = launch(world, SM_PASS_SKIN, SM_CLK_SKIN_CENTERS, c, COUNT(center_values), center_sizes, center_values);
    if (result != SM_OK) return result;
    const size_t vertex_sizes[] = {sizeof v, m, m, m, m, m, m, m, m, m, m, m};
    const void *vertex_values[] = {&v, &b->surface_binding_offsets, &b->surface_binding_cluster, &b->surface_binding_rest,
                                   &b->clusters, &b->objects, &b->cluster_rest, &b->plastic, &b->transform,
                                   &b->skin_center, &b->skin_center_offset, &b->surface_position};
    result = launch(world, SM_PASS_SKIN, SM_CLK_SKIN_VERTICES, v, COUNT(vertex_values), vertex_sizes, vertex_values);
    if (result != SM_OK) return result;
    const size_t normal_sizes[] = {sizeof v, m, m, m, m, m};
    const void *normal_values[] = {&v, &b->surface_incident_offsets, &b->surface_incident, &b->surface_triangles,
                                   &b->surface_position, &b->surface_normal};
    return launch(world, SM_PASS_SKIN, SM_CLK_SKIN_NORMALS, v, COUNT(normal_values), normal_sizes, normal_values);
}

sm_result sm_cl_check_state(sm_world *world, int32_t out_first[3])
{
    sm_cl_backend *cl = world->cl;
    sm_cl_buffers *b = &cl->buffers;
    const cl_int none = INT32_MAX, n = world->particle_count, c = world->cluster_count;
    const cl_float speed = (float)world->def.check_speed, extent = (float)world->def.check_extent;
    cl_int first[3] = {none, none, none};
    sm_result result = sm_cl_fill_buffer(cl, b->check_flag, &none, sizeof none, 0, 3, NULL);
    const size_t m = sizeof(cl_mem);
    const size_t particle_sizes[] = {sizeof n, sizeof speed, m, m, m, m};
    const void *particle_values[] = {&n, &speed, &b->position, &b->position_lo, &b->velocity, &b->check_flag};
    // (not passes of the step)
    if (result == SM_OK)
        result = launch(world, SM_PASS_COUNT, SM_CLK_CHECK_PARTICLES, n, COUNT(particle_values), particle_sizes,
                        particle_values);
    const size_t cluster_sizes[] = {sizeof c, sizeof extent, m, m, m, m, m, m, m, m};
    const void *cluster_values[] = {&c, &extent, &b->clusters, &b->objects, &b->cluster_rest, &b->member_particle,
                                    &b->member_q, &b->position, &b->position_lo, &b->check_flag};
    if (result == SM_OK && extent > 0.0f && c > 0)
        result = launch(world, SM_PASS_COUNT, SM_CLK_CHECK_CLUSTERS, c, COUNT(cluster_values), cluster_sizes,
                        cluster_values);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->check_flag, sizeof first, 0, 1, first);
    for (int k = 0; k < 3; k++) out_first[k] = first[k] == none ? -1 : first[k];
    return result;
}

sm_result sm_cl_enqueue_contact_corrections(sm_world *world, float h) { return ground(world, h, true); }

sm_result sm_cl_enqueue_pass(sm_world *world, sm_pass pass, float h)
{
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS: return cluster_moments(world);
    case SM_PASS_ROTATION: return rotation(world);
    case SM_PASS_GOAL_TRANSFORM: return goal_transform(world, h);
    case SM_PASS_BLEND_INTEGRATE: return blend_integrate(world, h);
    case SM_PASS_COLLISION_GRID: return collision_grid(world);
    case SM_PASS_COLLIDE: return collide(world, h);
    case SM_PASS_GROUND: return ground(world, h, false);
    case SM_PASS_PLASTICITY: return plasticity(world, h);
    case SM_PASS_SKIN: return skin(world);
    default: return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no pass %d", (int)pass);
    }
}
