/* The embedding API (shapematch_opencl.h): the world's device buffers out, the caller's device
 * inputs in, and steps chained by events. */
#include "../clusters.h"
#include "../step.h"
#include "shapematch/shapematch_opencl.h"

#include "cl_internal.h"

/// The world's OpenCL backend, or NULL with the error recorded.
static sm_cl_backend *backend_of(const sm_world *world, const char *call)
{
    if (!world) {
        sm_fail(SM_ERROR_INVALID_ARGUMENT, "%s: world must not be NULL", call);
        return NULL;
    }
    if (!world->cl) sm_fail(SM_ERROR_UNAVAILABLE, "%s: the world runs on the CPU reference, not on OpenCL", call);
    return world->cl;
}

sm_result sm_world_get_cl_state(sm_world *world, sm_cl_state *out)
{
    sm_cl_backend *cl = backend_of(world, "sm_world_get_cl_state");
    if (!cl) return world ? SM_ERROR_UNAVAILABLE : SM_ERROR_INVALID_ARGUMENT;
    if (!out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_cl_state: out must not be NULL");
    sm_result result = sm_world_update_map(world);
    if (result == SM_OK) result = sm_grid_layout(world);
    if (result == SM_OK) result = sm_cl_prepare(world);
    if (result != SM_OK) return result;
    // the caller may change the buffers from now on: they are the world's state, the host arrays a stale copy
    cl->device_ahead = true;
    const sm_cl_buffers *b = &cl->buffers;
    const bool surfaces = world->surface_vertex_count > 0;
    *out = (sm_cl_state){
        .position = b->position,
        .position_low = b->position_lo,
        .velocity = b->velocity,
        .goal = b->goal,
        .surface_position = surfaces ? b->surface_position : NULL,
        .surface_normal = surfaces ? b->surface_normal : NULL,
        .particle_count = world->particle_count,
        .surface_vertex_count = world->surface_vertex_count,
    };
    return SM_OK;
}

sm_cl_inputs sm_cl_inputs_default(void) { return (sm_cl_inputs){.internal_value = SM_DEF_COOKIE}; }

/// Checks that `buffer` (may be NULL) lives in the world's context.
static sm_result check_context(const sm_cl_backend *cl, cl_mem buffer, const char *what)
{
    if (!buffer) return SM_OK;
    cl_context context = NULL;
    cl_int status = clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof context, &context, NULL);
    if (status != CL_SUCCESS)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_cl_inputs: the %s buffer is not a valid cl_mem (%s)", what,
                       sm_cl_error_name(status));
    if (context != cl->device->context)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_cl_inputs: the %s buffer belongs to another context than the world's",
                       what);
    return SM_OK;
}

/// Replaces a retained input buffer by `buffer` (retained; may be NULL).
static void hold(cl_mem *slot, cl_mem buffer)
{
    if (buffer) clRetainMemObject(buffer);
    if (*slot) clReleaseMemObject(*slot);
    *slot = buffer;
}

sm_result sm_world_set_cl_inputs(sm_world *world, const sm_cl_inputs *inputs)
{
    sm_cl_backend *cl = backend_of(world, "sm_world_set_cl_inputs");
    if (!cl) return world ? SM_ERROR_UNAVAILABLE : SM_ERROR_INVALID_ARGUMENT;
    if (!inputs || inputs->internal_value != SM_DEF_COOKIE)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_set_cl_inputs: the inputs must come from sm_cl_inputs_default()");
    sm_result result = check_context(cl, inputs->forces, "forces");
    if (result == SM_OK) result = check_context(cl, inputs->targets, "targets");
    if (result != SM_OK) return result;
    hold(&cl->input_force, inputs->forces);
    hold(&cl->input_target, inputs->targets);
    return SM_OK;
}

sm_result sm_world_step_cl(sm_world *world, double dt, int32_t substeps, cl_uint wait_count, const cl_event *wait_list,
                           cl_event *out_event)
{
    if (out_event) *out_event = NULL;
    sm_cl_backend *cl = backend_of(world, "sm_world_step_cl");
    if (!cl) return world ? SM_ERROR_UNAVAILABLE : SM_ERROR_INVALID_ARGUMENT;
    if ((wait_count > 0) != (wait_list != NULL))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_step_cl: wait_list must be NULL exactly when wait_count is 0");
    double h = 0.0;
    sm_result result = sm_world_step_check(world, dt, substeps, "sm_world_step_cl", &h);
    if (result != SM_OK) return result;
    return sm_cl_step_events(world, h, substeps, wait_count, wait_list, out_event);
}

cl_command_queue sm_world_get_cl_queue(const sm_world *world) { return world && world->cl ? world->cl->queue : NULL; }

cl_context sm_world_get_cl_context(const sm_world *world) { return world && world->cl ? world->cl->device->context : NULL; }

cl_device_id sm_world_get_cl_device(const sm_world *world) { return world && world->cl ? world->cl->device->device : NULL; }
