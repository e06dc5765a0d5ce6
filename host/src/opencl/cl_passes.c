/* One enqueue function per pass, in pipeline order, each binding its kernel's arguments (the
 * buffers of kernels/0N_*.cl in their order) and launching one work-item per cluster or per
 * particle. */
#include "cl_internal.h"

static const char *kernel_names[SM_PASS_COUNT] = {"sm_cluster_moments", "sm_rotation", "sm_goal_transform",
                                                  "sm_blend_integrate", "sm_ground", "sm_plasticity"};

sm_result sm_cl_create_kernels(sm_cl_backend *cl)
{
    sm_result result = SM_OK;
    for (int p = 0; p < SM_PASS_COUNT; p++) {
        cl_int status = CL_SUCCESS;
        cl->kernels[p] = clCreateKernel(cl->device->program, kernel_names[p], &status);
        SM_CL_TRY(status);
        size_t group = 0;
        SM_CL_TRY(clGetKernelWorkGroupInfo(cl->kernels[p], cl->device->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof group,
                                           &group, NULL));
        // 64 suits every device we know; the kernels guard against the padding
        cl->group[p] = group < 64 ? group : 64;
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

static sm_result launch(sm_world *world, sm_pass pass, int32_t items, cl_event *event)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = SM_OK;
    const size_t group = cl->group[pass];
    const size_t global = ((size_t)items + group - 1) / group * group;
    if (event) *event = NULL;
    if (items == 0) return SM_OK;
    SM_CL_TRY(clEnqueueNDRangeKernel(cl->queue, cl->kernels[pass], 1, NULL, &global, &group, 0, NULL, event));
cleanup:
    return result;
}

/// 1. x_cm, A_pq and the quadratic fit per cluster.
static sm_result cluster_moments(sm_world *world, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &b->clusters, &b->objects, &b->member_particle, &b->member_q, &b->member_w,
                            &b->position, &b->position_lo, &b->center, &b->center_offset, &b->apq, &b->fit9};
    sm_result result = set_args(world->cl->kernels[SM_PASS_CLUSTER_MOMENTS], 12, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_CLUSTER_MOMENTS, n, event);
}

/// 2. R per cluster, warm-started from the last step's quaternion.
static sm_result rotation(sm_world *world, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t sizes[] = {sizeof n, sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
    const void *values[] = {&n, &b->apq, &b->quat, &b->rotation};
    sm_result result = set_args(world->cl->kernels[SM_PASS_ROTATION], 4, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_ROTATION, n, event);
}

/// 3. T and A_lin per cluster.
static sm_result goal_transform(sm_world *world, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &b->clusters, &b->objects, &b->cluster_rest, &b->apq, &b->fit9, &b->rotation,
                            &b->linear_fit, &b->transform};
    sm_result result = set_args(world->cl->kernels[SM_PASS_GOAL_TRANSFORM], 9, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_GOAL_TRANSFORM, n, event);
}

/// 4-8. Blended goals, velocities and positions per particle.
static sm_result blend_integrate(sm_world *world, float h, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->particle_count;
    const cl_float4 gravity = {{(float)world->def.gravity.x, (float)world->def.gravity.y, (float)world->def.gravity.z, 0.0f}};
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof h, sizeof gravity, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &h, &gravity, &b->particle_object, &b->objects, &b->particle_member_offsets,
                            &b->particle_members, &b->member_cluster, &b->member_q, &b->clusters, &b->cluster_rest,
                            &b->center, &b->center_offset, &b->transform, &b->force, &b->position, &b->position_lo,
                            &b->velocity, &b->goal};
    sm_result result = set_args(world->cl->kernels[SM_PASS_BLEND_INTEGRATE], 19, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_BLEND_INTEGRATE, n, event);
}

/// 9. The ground plane per particle.
static sm_result ground(sm_world *world, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->particle_count;
    const sm_ground g = world->def.ground;
    const float height = (float)g.height;
    const cl_float4 plane = {{height, (float)g.restitution, (float)g.friction, (float)(g.height - height)}};
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof plane, m, m, m, m};
    const void *values[] = {&n, &plane, &b->force, &b->position, &b->position_lo, &b->velocity};
    sm_result result = set_args(world->cl->kernels[SM_PASS_GROUND], 6, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_GROUND, n, event);
}

/// 10. Plastic state and rest data per cluster.
static sm_result plasticity(sm_world *world, float h, cl_event *event)
{
    sm_cl_buffers *b = &world->cl->buffers;
    const cl_int n = world->cluster_count;
    const size_t m = sizeof(cl_mem);
    const size_t sizes[] = {sizeof n, sizeof h, m, m, m, m, m, m, m, m, m, m, m};
    const void *values[] = {&n, &h, &b->clusters, &b->objects, &b->rotation, &b->linear_fit, &b->member_particle,
                            &b->member_rest, &b->position, &b->plastic, &b->member_q, &b->cluster_rest, &b->member_w};
    sm_result result = set_args(world->cl->kernels[SM_PASS_PLASTICITY], 13, sizes, values);
    return result != SM_OK ? result : launch(world, SM_PASS_PLASTICITY, n, event);
}

sm_result sm_cl_enqueue_pass(sm_world *world, sm_pass pass, float h, cl_event *event)
{
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS: return cluster_moments(world, event);
    case SM_PASS_ROTATION: return rotation(world, event);
    case SM_PASS_GOAL_TRANSFORM: return goal_transform(world, event);
    case SM_PASS_BLEND_INTEGRATE: return blend_integrate(world, h, event);
    case SM_PASS_GROUND: return ground(world, event);
    case SM_PASS_PLASTICITY: return plasticity(world, h, event);
    default: return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no pass %d", (int)pass);
    }
}
