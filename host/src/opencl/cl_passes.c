/* One enqueue function per pass, in pipeline order, each binding its kernels' arguments (the
 * buffers of kernels/0N_*.cl in their order) and launching one work-item per cluster, per
 * particle or per bucket. */
#include "cl_internal.h"

#include <stdlib.h>

static const char *kernel_names[SM_CLK_COUNT] = {
    "sm_cluster_moments", "sm_cluster_moments_group", "sm_rotation", "sm_goal_transform", "sm_blend_integrate",
    "sm_contact_refresh", "sm_contact_decide", "sm_contact_link", "sm_object_bounds", "sm_object_near",
    "sm_grid_hash", "sm_grid_scan_blocks", "sm_grid_scan_totals", "sm_grid_scan_apply", "sm_grid_scatter",
    "sm_grid_sort_buckets", "sm_contact_lists", "sm_contact_insert", "sm_contact_tidy", "sm_contact_active",
    "sm_collide", "sm_apply_contacts", "sm_ground", "sm_plasticity", "sm_skin_centers", "sm_skin_vertices",
    "sm_skin_normals", "sm_check_particles", "sm_check_clusters"};

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
        } else if (forced > 0) {
            // one work-item per cluster, particle, bucket or vertex, none depending on the others of
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

/// Where the event of the next command of `pass` goes: a slot of cl->events when profiling
/// (none for SM_PASS_COUNT: work outside the step's passes).
static cl_event *event_slot(sm_world *world, sm_pass pass)
{
    sm_cl_backend *cl = world->cl;
    if (!world->def.profile || pass == SM_PASS_COUNT || cl->event_count == SM_CL_MAX_STEP_COMMANDS) return NULL;
    cl->event_pass[cl->event_count] = pass;
    return &cl->events[cl->event_count++];
}

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
                                     event_slot(world, pass)));
cleanup:
    return result;
}

/// Zeroes `count` ints of `buffer` from int `first` on.
static sm_result zero_ints(sm_world *world, sm_pass pass, cl_mem buffer, int32_t first, int32_t count)
{
    const cl_int zero = 0;
    if (count <= 0) return SM_OK;
    return sm_cl_fill_buffer(world->cl, buffer, &zero, sizeof zero, first, count, event_slot(world, pass));
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
    const size_t sizes[] = {sizeof n, sizeof threshold, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &threshold, &b->clusters, &b->objects, &b->member_particle, &b->member_q, &b->member_w,
                            &b->position, &b->position_lo, &b->velocity, &b->center, &b->center_offset,
                            &b->cluster_velocity, &b->apq, &b->fit9};
    sm_result result = launch(world, SM_PASS_CLUSTER_MOMENTS, SM_CLK_CLUSTER_MOMENTS, n, COUNT(values), sizes, values);
    const cl_int large = world->cl->large_count;
    if (result != SM_OK || large == 0) return result;
    // the large clusters: one work-group each, its partial sums in local memory
    sm_cl_backend *cl = world->cl;
    const cl_kernel kernel = cl->kernels[SM_CLK_CLUSTER_MOMENTS_GROUP];
    const size_t group = cl->group[SM_CLK_CLUSTER_MOMENTS_GROUP], global = group * (size_t)large;
    const size_t group_sizes[] = {sizeof large, m, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *group_values[] = {&large, &b->large_clusters, &b->clusters, &b->objects, &b->member_particle, &b->member_q,
                                  &b->member_w, &b->position, &b->position_lo, &b->velocity, &b->center,
                                  &b->center_offset, &b->cluster_velocity, &b->apq, &b->fit9};
    result = set_args(kernel, COUNT(group_values), group_sizes, group_values);
    if (result != SM_OK) return result;
    SM_CL_TRY(clSetKernelArg(kernel, COUNT(group_values), sizeof(cl_float) * SM_K_MOMENT_TERMS * group, NULL));
    SM_CL_TRY(clEnqueueNDRangeKernel(cl->queue, kernel, 1, NULL, &global, &group, 0, NULL,
                                     event_slot(world, SM_PASS_CLUSTER_MOMENTS)));
cleanup:
    return result;
}

/// 2. R per cluster, warm-started from the last step's quaternion.
static sm_result rotation(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t sizes[] = {sizeof n, sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
    const void *values[] = {&n, &b->cluster_rest, &b->apq, &b->quat, &b->rotation};
    return launch(world, SM_PASS_ROTATION, SM_CLK_ROTATION, n, COUNT(values), sizes, values);
}

/// 3. T and A_lin per cluster.
static sm_result goal_transform(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &b->clusters, &b->objects, &b->cluster_rest, &b->apq, &b->fit9, &b->rotation,
                            &b->linear_fit, &b->transform};
    return launch(world, SM_PASS_GOAL_TRANSFORM, SM_CLK_GOAL_TRANSFORM, n, COUNT(values), sizes, values);
}

/// 4-8. Blended goals, velocities and positions per particle.
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
                            sizeof inputs, m, m, m, m, m, m};
    const void *values[] = {&n, &h, &gravity, &b->particle_object, &b->objects, &b->particle_member_offsets,
                            &b->particle_member_q, &b->cluster_rest, &b->center, &b->center_offset,
                            &b->cluster_velocity, &b->transform, &b->force, &inputs, &input_force, &target,
                            &b->position, &b->position_lo, &b->velocity, &b->goal};
    return launch(world, SM_PASS_BLEND_INTEGRATE, SM_CLK_BLEND_INTEGRATE, n, COUNT(values), sizes, values);
}

/// The skin of the contact candidates in metres, and the edge of the reference grid's cells.
static void candidate_skin(const sm_world *world, cl_float *skin, cl_float *cell)
{
    const double largest_radius = 0.5 * world->grid.cell_size; // the CPU grid's cell: twice the largest radius
    *skin = (float)(world->def.collisions.skin * largest_radius);
    *cell = (float)(world->grid.cell_size + *skin);
}

/// The number of arguments in kernels/05's SM_K_GRID_ARGS.
enum { GRID_ARG_COUNT = 17 };

/// Binds the arguments of kernels/05's SM_K_GRID_ARGS from argument `first` of `kernel` on.
static sm_result bind_grid(sm_world *world, cl_kernel kernel, cl_uint first)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const size_t m = sizeof(cl_mem);
    const cl_int mask = world->grid.table_size - 1, dirty_mask = SM_K_DIRTY_TABLE - 1;
    cl_float skin = 0.0f, cell = 0.0f;
    candidate_skin(world, &skin, &cell);
    const cl_float inv_cell = 1.0f / cell;
    const size_t sizes[] = {sizeof mask, sizeof dirty_mask, sizeof inv_cell, sizeof skin, m, m, m, m, m, m, m,
                            m, m, m, m, m, m};
    const void *values[] = {&mask,          &dirty_mask,      &inv_cell,        &skin,         &b->candidate_state,
                            &b->objects,    &b->contact,      &b->reference,    &b->particle_object, &b->bucket_start,
                            &b->slots,      &b->dirty,        &b->dirty_list,   &b->dirty_reference, &b->dirty_object,
                            &b->dirty_next, &b->dirty_head};
    _Static_assert(COUNT(values) == GRID_ARG_COUNT && COUNT(sizes) == GRID_ARG_COUNT, "bind_grid binds SM_K_GRID_ARGS");
    sm_result result = SM_OK;
    for (int a = 0; a < COUNT(values); a++) SM_CL_TRY(clSetKernelArg(kernel, first + (cl_uint)a, sizes[a], values[a]));
cleanup:
    return result;
}

/// Launches `kernel` over `items` work-items with `count` arguments before the grid's (which
/// bind_grid() binds) and `after` arguments after them.
static sm_result launch_walk(sm_world *world, sm_pass pass, sm_cl_kernel kernel, int32_t items, int count,
                             const size_t *sizes, const void *const *values, int after, const size_t *after_sizes,
                             const void *const *after_values)
{
    sm_cl_backend *cl = world->cl;
    const cl_kernel k = cl->kernels[kernel];
    sm_result result = set_args(k, count, sizes, values);
    if (result == SM_OK) result = bind_grid(world, k, (cl_uint)count);
    for (int a = 0; a < after && result == SM_OK; a++)
        SM_CL_TRY(clSetKernelArg(k, (cl_uint)(count + GRID_ARG_COUNT + a), after_sizes[a], after_values[a]));
    if (result != SM_OK || items == 0) return result;
    const size_t group = cl->group[kernel];
    const size_t global = ((size_t)items + group - 1) / group * group;
    SM_CL_TRY(clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &global, &group, 0, NULL, event_slot(world, pass)));
cleanup:
    return result;
}

/// The work-items of a kernel that takes `count` items in turn (kernels/05's SM_K_EACH and
/// SM_K_CHUNK): few, so that it costs little when it has nothing to do.
static int32_t few_items(const sm_world *world, int32_t count)
{
    const int32_t few = world->cl->device->gpu ? 65536 : 1024;
    return count < few ? count : few;
}

/// The work-items of a kernel that works on every one of `count` items in runs (kernels/05's
/// SM_K_CHUNK): on a GPU one item per work-item, on a CPU a run of a few per work-item.
static int32_t run_items(const sm_world *world, int32_t count)
{
    return world->cl->device->gpu ? count : few_items(world, count);
}

/// 8a. The contact candidates, before each sweep (the sweeps move particles too): new references
/// for the particles that moved past the trigger, which become dirty (entries of the dirty
/// table, added to its chains); when the table is full, the grid of the references rebuilt
/// (hash and count, scan, scatter, sort each bucket) and the table emptied; new lists
/// for the moved particles, which add themselves to their candidates' lists, and the lists
/// added to tidied.
static sm_result collision_grid(sm_world *world)
{
    const sm_pass pass = SM_PASS_COLLISION_GRID;
    sm_cl_backend *cl = world->cl;
    sm_cl_buffers *b = &cl->buffers;
    const size_t m = sizeof(cl_mem);
    const cl_int n = world->particle_count, table = world->grid.table_size, mask = table - 1, entries = table + 1;
    const cl_int dirty_mask = SM_K_DIRTY_TABLE - 1;
    const cl_int blocks = (entries + SM_K_SCAN_BLOCK - 1) / SM_K_SCAN_BLOCK;
    cl_float skin = 0.0f, cell = 0.0f;
    candidate_skin(world, &skin, &cell);
    const cl_float inv_cell = 1.0f / cell, trigger = SM_K_SKIN_TRIGGER * skin;
    cl->contact_generation = cl->contact_generation < INT32_MAX - 1 ? cl->contact_generation + 1 : 0;
    const cl_int generation = cl->contact_generation;

    // the kernels that often have nothing to do run on few work-items (kernels/05's SM_K_EACH)
    const int32_t particles = few_items(world, n), buckets = few_items(world, table), scan = few_items(world, blocks);

    // none moved yet in this refresh: the state's flags and counts after the dirty count zeroed
    // (not the count of particles with candidates: their list stands while nothing moves)
    sm_result result =
        zero_ints(world, pass, b->candidate_state, SM_K_ANY_MOVED, SM_K_TOUCHED_COUNT - SM_K_ANY_MOVED + 1);
    if (result != SM_OK) return result;
    const size_t refresh_sizes[] = {sizeof n, sizeof trigger, sizeof inv_cell, sizeof generation, m, m, m, m, m, m,
                                    m, m, m, m, m};
    const void *refresh_values[] = {&n,           &trigger,        &inv_cell,        &generation,   &b->particle_object,
                                    &b->contact,  &b->position,    &b->position_lo,  &b->reference, &b->moved,
                                    &b->object_moved, &b->dirty,   &b->dirty_list,   &b->moved_list, &b->candidate_state};
    // (on a CPU runs of particles, so that few atomic additions contend)
    result = launch(world, pass, SM_CLK_CONTACT_REFRESH, run_items(world, n), COUNT(refresh_values), refresh_sizes,
                    refresh_values);
    if (result != SM_OK) return result;
    const size_t decide_sizes[] = {m};
    const void *decide_values[] = {&b->candidate_state};
    result = launch(world, pass, SM_CLK_CONTACT_DECIDE, 1, COUNT(decide_values), decide_sizes, decide_values);
    if (result != SM_OK) return result;
    const size_t link_sizes[] = {sizeof inv_cell, sizeof dirty_mask, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *link_values[] = {&inv_cell,    &dirty_mask,          &b->candidate_state, &b->moved_list,
                                 &b->particle_object, &b->contact, &b->reference,      &b->dirty,
                                 &b->particle_slot, &b->slots,     &b->dirty_reference, &b->dirty_object,
                                 &b->dirty_next, &b->dirty_head};
    result = launch(world, pass, SM_CLK_CONTACT_LINK, particles, COUNT(link_values), link_sizes, link_values);
    if (result != SM_OK) return result;

    // the boxes of the objects whose particles moved, and the objects near them (with more
    // objects than SM_K_NEAR_OBJECTS, testing every pair would cost more than it saves)
    const cl_int objects = world->object_count, near = objects <= SM_K_NEAR_OBJECTS;
    if (near) {
        const size_t bounds_sizes[] = {sizeof objects, sizeof generation, m, m, m, m, m, m, m};
        const void *bounds_values[] = {&objects,          &generation,      &b->candidate_state, &b->objects,
                                       &b->object_particles, &b->object_moved, &b->contact,      &b->reference,
                                       &b->object_box};
        result = launch(world, pass, SM_CLK_OBJECT_BOUNDS, run_items(world, objects), COUNT(bounds_values),
                        bounds_sizes, bounds_values);
        if (result != SM_OK) return result;
        const size_t near_sizes[] = {sizeof objects, sizeof generation, sizeof skin, m, m, m, m};
        const void *near_values[] = {&objects,         &generation,    &skin,          &b->candidate_state,
                                     &b->object_moved, &b->object_box, &b->object_near};
        result = launch(world, pass, SM_CLK_OBJECT_NEAR, run_items(world, objects), COUNT(near_values), near_sizes,
                        near_values);
        if (result != SM_OK) return result;
    }

    // the grid of the references: these kernels return at once unless it is rebuilt (the
    // bucket counts are zero outside a rebuild: kernels/05's sm_grid_hash)
    const size_t hash_sizes[] = {sizeof n, sizeof inv_cell, sizeof mask, sizeof dirty_mask, m, m, m, m, m, m, m};
    const void *hash_values[] = {&n, &inv_cell, &mask, &dirty_mask, &b->candidate_state, &b->contact, &b->reference,
                                 &b->particle_bucket, &b->bucket_count, &b->dirty, &b->dirty_head};
    result = launch(world, pass, SM_CLK_GRID_HASH, particles, COUNT(hash_values), hash_sizes, hash_values);
    if (result != SM_OK) return result;
    const size_t blocks_sizes[] = {sizeof entries, m, m, m};
    const void *blocks_values[] = {&entries, &b->candidate_state, &b->bucket_count, &b->block_sum};
    result = launch(world, pass, SM_CLK_GRID_SCAN_BLOCKS, scan, COUNT(blocks_values), blocks_sizes, blocks_values);
    if (result != SM_OK) return result;
    const size_t totals_sizes[] = {sizeof blocks, m, m};
    const void *totals_values[] = {&blocks, &b->candidate_state, &b->block_sum};
    result = launch(world, pass, SM_CLK_GRID_SCAN_TOTALS, 1, COUNT(totals_values), totals_sizes, totals_values);
    if (result != SM_OK) return result;
    const size_t apply_sizes[] = {sizeof entries, m, m, m, m};
    const void *apply_values[] = {&entries, &b->candidate_state, &b->bucket_count, &b->block_sum, &b->bucket_start};
    result = launch(world, pass, SM_CLK_GRID_SCAN_APPLY, scan, COUNT(apply_values), apply_sizes, apply_values);
    if (result != SM_OK) return result;
    const size_t scatter_sizes[] = {sizeof n, m, m, m, m, m};
    const void *scatter_values[] = {&n, &b->candidate_state, &b->particle_bucket, &b->bucket_start, &b->bucket_count,
                                    &b->sorted};
    result = launch(world, pass, SM_CLK_GRID_SCATTER, particles, COUNT(scatter_values), scatter_sizes, scatter_values);
    if (result != SM_OK) return result;
    const size_t sort_sizes[] = {sizeof table, m, m, m, m, m, m, m, m, m};
    const void *sort_values[] = {&table,       &b->candidate_state, &b->bucket_start, &b->bucket_count, &b->particle_object,
                                 &b->contact,  &b->reference,       &b->sorted,       &b->particle_slot, &b->slots};
    result = launch(world, pass, SM_CLK_GRID_SORT_BUCKETS, buckets, COUNT(sort_values), sort_sizes, sort_values);
    if (result != SM_OK) return result;

    // new lists for the particles that moved, which add themselves to their candidates' lists
    const size_t list_sizes[] = {m, sizeof near, m, m};
    const void *lists_values[] = {&b->moved_list, &near, &b->object_box, &b->object_near};
    const size_t out_sizes[] = {m, m, m, m, m};
    const void *lists_out[] = {&b->candidates, &b->candidate_count};
    result = launch_walk(world, pass, SM_CLK_CONTACT_LISTS, particles, COUNT(lists_values), list_sizes, lists_values,
                         COUNT(lists_out), out_sizes, lists_out);
    if (result != SM_OK) return result;
    const size_t insert_sizes[] = {sizeof generation, m, m};
    const void *insert_values[] = {&generation, &b->moved, &b->moved_list};
    const void *insert_out[] = {&b->candidates, &b->candidate_count, &b->candidate_extra, &b->touched,
                                &b->candidate_state};
    result = launch_walk(world, pass, SM_CLK_CONTACT_INSERT, particles, COUNT(insert_values), insert_sizes,
                         insert_values, COUNT(insert_out), out_sizes, insert_out);
    if (result != SM_OK) return result;
    const void *tidy_values[] = {&b->touched};
    const void *tidy_out[] = {&b->candidates, &b->candidate_count, &b->candidate_extra};
    result = launch_walk(world, pass, SM_CLK_CONTACT_TIDY, particles, COUNT(tidy_values), out_sizes, tidy_values,
                         COUNT(tidy_out), out_sizes, tidy_out);
    if (result != SM_OK) return result;
    // the particles with candidates, which the sweeps visit
    const size_t active_sizes[] = {sizeof n, m, m, m};
    const void *active_values[] = {&n, &b->candidate_count, &b->active, &b->candidate_state};
    return launch(world, pass, SM_CLK_CONTACT_ACTIVE, particles, COUNT(active_values), active_sizes, active_values);
}

/// 8b. Contact: `iterations` sweeps of corrections, each computed for every particle with
/// candidates, then applied; the candidates are brought up to date before each sweep after the
/// first.
static sm_result collide(sm_world *world, float h)
{
    const sm_pass pass = SM_PASS_COLLIDE;
    sm_cl_buffers *b = &world->cl->buffers;
    const size_t m = sizeof(cl_mem);
    const sm_collisions *c = &world->def.collisions;
    // the particles with candidates, in runs (on a GPU as many work-items as particles: the
    // extra ones return at once)
    const int32_t items = run_items(world, world->particle_count);
    const cl_float restitution = (float)c->restitution, friction = (float)c->friction;
    sm_result result = SM_OK;
    for (int32_t sweep = 0; sweep < c->iterations && result == SM_OK; sweep++) {
        if (sweep > 0) result = collision_grid(world); // (the first sweep's are pass 8a)
        if (result != SM_OK) break;
        const cl_int respond = sweep == 0; // velocities respond once per step, in the first sweep
        const size_t sizes[] = {sizeof h, sizeof respond, sizeof restitution, sizeof friction};
        const void *values[] = {&h, &respond, &restitution, &friction};
        const size_t after_sizes[] = {m, m, m, m, m, m, m, m, m};
        const void *after_values[] = {&b->active, &b->candidates, &b->candidate_count, &b->force, &b->position,
                                      &b->position_lo, &b->velocity, &b->contact_dx, &b->contact_dv};
        result = launch_walk(world, pass, SM_CLK_COLLIDE, items, COUNT(values), sizes, values, COUNT(after_values),
                             after_sizes, after_values);
        if (result != SM_OK) break;
        const size_t apply_sizes[] = {sizeof h, sizeof respond, m, m, m, m, m, m, m};
        const void *apply_values[] = {&h, &respond, &b->candidate_state, &b->active, &b->contact_dx, &b->contact_dv,
                                      &b->position, &b->position_lo, &b->velocity};
        result = launch(world, pass, SM_CLK_APPLY_CONTACTS, items, COUNT(apply_values), apply_sizes, apply_values);
    }
    return result;
}

/// 9. The ground plane, the colliders (9a), then the pusher (9b), per particle.
static sm_result ground(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->particle_count;
    const sm_ground g = world->def.ground;
    const sm_pusher p = world->pusher;
    const cl_int flags = (g.enabled ? SM_K_GROUND : 0) | (p.enabled ? SM_K_PUSHER : 0);
    const float height = (float)g.height;
    const cl_float4 plane = {{height, (float)g.restitution, (float)g.friction, (float)(g.height - height)}};
    const cl_float4 sphere = {{(float)p.center.x, (float)p.center.y, (float)p.center.z, (float)p.radius}};
    const cl_float4 sphere_lo = {
        {sm_cl_low_half(p.center.x), sm_cl_low_half(p.center.y), sm_cl_low_half(p.center.z), 0.0f}};
    const cl_float4 sphere_velocity = {{(float)p.velocity.x, (float)p.velocity.y, (float)p.velocity.z, 0.0f}};
    const cl_int colliders = world->collider_count, state_first = world->cl->substep * colliders;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof flags, sizeof plane, sizeof sphere, sizeof sphere_lo, sizeof sphere_velocity,
                            sizeof colliders, m, sizeof state_first, m, m, m, m, m};
    const void *values[] = {&n, &flags, &plane, &sphere, &sphere_lo, &sphere_velocity, &colliders, &b->colliders,
                            &state_first, &b->collider_state, &b->force, &b->position, &b->position_lo, &b->velocity};
    return launch(world, SM_PASS_GROUND, SM_CLK_GROUND, n, COUNT(values), sizes, values);
}

/// 10. Plastic state and rest data per cluster.
static sm_result plasticity(sm_world *world, float h)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof h, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n,           &h,          &b->clusters,    &b->objects,          &b->rotation,
                            &b->linear_fit, &b->member_particle, &b->member_rest, &b->position, &b->plastic,
                            &b->member_q, &b->member_slot, &b->particle_member_q, &b->cluster_rest, &b->member_w};
    return launch(world, SM_PASS_PLASTICITY, SM_CLK_PLASTICITY, n, COUNT(values), sizes, values);
}

/// 11. Skinned surfaces: the clusters' centres after the step, the vertices, their normals.
static sm_result skin(sm_world *world)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int c = world->cluster_count, v = world->surface_vertex_count;
    const size_t m = sizeof(cl_mem);
    const size_t center_sizes[] = {sizeof c, m, m, m, m, m, m};
    const void *center_values[] = {&c, &b->clusters, &b->member_particle, &b->position, &b->position_lo, &b->skin_center,
                                   &b->skin_center_offset};
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
    const size_t cluster_sizes[] = {sizeof c, sizeof extent, m, m, m, m, m, m, m};
    const void *cluster_values[] = {&c, &extent, &b->clusters, &b->objects, &b->cluster_rest, &b->member_particle,
                                    &b->position, &b->position_lo, &b->check_flag};
    if (result == SM_OK && extent > 0.0f && c > 0)
        result = launch(world, SM_PASS_COUNT, SM_CLK_CHECK_CLUSTERS, c, COUNT(cluster_values), cluster_sizes,
                        cluster_values);
    if (result == SM_OK) result = sm_cl_read_buffer(cl, b->check_flag, sizeof first, 0, 1, first);
    for (int k = 0; k < 3; k++) out_first[k] = first[k] == none ? -1 : first[k];
    return result;
}

sm_result sm_cl_enqueue_pass(sm_world *world, sm_pass pass, float h)
{
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS: return cluster_moments(world);
    case SM_PASS_ROTATION: return rotation(world);
    case SM_PASS_GOAL_TRANSFORM: return goal_transform(world);
    case SM_PASS_BLEND_INTEGRATE: return blend_integrate(world, h);
    case SM_PASS_COLLISION_GRID: return collision_grid(world);
    case SM_PASS_COLLIDE: return collide(world, h);
    case SM_PASS_GROUND: return ground(world);
    case SM_PASS_PLASTICITY: return plasticity(world, h);
    case SM_PASS_SKIN: return skin(world);
    default: return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no pass %d", (int)pass);
    }
}
