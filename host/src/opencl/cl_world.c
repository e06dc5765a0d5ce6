/* The OpenCL backend's life cycle and its step: the backend record made and released with the
 * world, and the step enqueued without waiting (after uploading what changed on the host). */
#include "../step.h"
#include "cl_internal.h"

#include <stdio.h>
#include <stdlib.h>
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
    // a work-group per large cluster; a CPU device's work-item loop is faster up to the size at
    // which its float sums round too far (kernels/sm_shared.h)
    cl->large_threshold = cl->device->gpu ? SM_K_LARGE_CLUSTER : SM_K_LARGE_CLUSTER_CPU;
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

/// The profile's milliseconds per solver step of each kernel, as a notice (the passes' sums are
/// in sm_world_get_profile()).
static void log_kernel_profile(sm_world *world)
{
    const sm_cl_backend *cl = world->cl;
    if (!world->def.profile || world->profile.steps == 0) return;
    char text[1024];
    int used = snprintf(text, sizeof text, "OpenCL profile, ms per solver step by kernel:");
    for (int k = 0; k < SM_CLK_COUNT && used < (int)sizeof text; k++)
        if (cl->kernel_ms[k] > 0.0)
            used += snprintf(text + used, sizeof text - (size_t)used, " %s %.4f", sm_cl_kernel_name(k),
                             cl->kernel_ms[k] / (double)world->profile.steps);
    sm_log(world, SM_LOG_NOTICE, "%s", text);
}

void sm_cl_destroy(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    if (!cl) return;
    if (cl->queue) clFinish(cl->queue);
    log_kernel_profile(world);
    for (int k = 0; k < 2; k++)
        if (cl->markers[k]) clReleaseEvent(cl->markers[k]);
    sm_cl_release_buffers(cl);
    for (int f = 0; f < SM_CL_GL_FIELDS; f++)
        if (cl->gl_buffers[f]) clReleaseMemObject(cl->gl_buffers[f]);
    if (cl->input_force) clReleaseMemObject(cl->input_force);
    if (cl->input_target) clReleaseMemObject(cl->input_target);
    free(cl->position_hi);
    free(cl->warm_start);
    for (int k = 0; k < SM_CLK_COUNT; k++)
        if (cl->kernels[k]) clReleaseKernel(cl->kernels[k]);
    if (cl->queue) clReleaseCommandQueue(cl->queue);
    sm_cl_device_release(cl->device);
    free(cl);
    world->cl = NULL;
}

const char *sm_cl_device_name(const sm_world *world) { return world->cl ? world->cl->device->name : ""; }

/* ---- Stepping ------------------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int64_t sm_cl_launch_count(const sm_world *world) { return world->cl ? world->cl->launches : 0; }

/// Uploads everything if the host changed or objects were added since the last upload (both
/// pulled the device's state to the host first, see sm_cl_mark_host_changed()), and the
/// colliders if any were added.
sm_result sm_cl_prepare(sm_world *world)
{
    sm_result result = sm_cl_buffers_current(world->cl, world) ? SM_OK : sm_cl_push(world);
    bool made = false; // targets set while their buffer could not be made: again now, or fail again
    if (result == SM_OK) result = sm_cl_ensure_targets(world, &made);
    return result == SM_OK ? sm_cl_upload_colliders(world) : result;
}

/// Releases the events kept while profiling; with `add`, first waits for each command and adds
/// its device time to its pass.
void sm_cl_collect_events(sm_world *world, bool add)
{
    sm_cl_backend *cl = world->cl;
    for (int32_t e = 0; e < cl->event_count; e++) {
        cl_ulong begin = 0, end = 0;
        if (add && clWaitForEvents(1, &cl->events[e]) == CL_SUCCESS &&
            clGetEventProfilingInfo(cl->events[e], CL_PROFILING_COMMAND_START, sizeof begin, &begin, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(cl->events[e], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS)
        {
            world->profile.pass_ms[cl->event_pass[e]] += (double)(end - begin) * 1e-6;
            cl->kernel_ms[cl->event_kernel[e]] += (double)(end - begin) * 1e-6;
        }
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

/// After each solver step enqueued: its events collected (the profile), and, unless the step
/// came through the embedding API, a marker of it; the host then waits for the solver step
/// before the previous one, so that it enqueues at most two ahead of the device and a cancel
/// (sm_world_cancel()) takes effect within two solver steps of the device's.
static void substep_enqueued(sm_world *world, bool ok)
{
    sm_cl_collect_events(world, ok);
    sm_cl_backend *cl = world->cl;
    if (!ok || !cl->throttle) return;
    if (cl->markers[0]) {
        clWaitForEvents(1, &cl->markers[0]); // (a failure shows in the next command)
        clReleaseEvent(cl->markers[0]);
    }
    cl->markers[0] = cl->markers[1];
    cl->markers[1] = NULL;
    if (clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &cl->markers[1]) != CL_SUCCESS) cl->markers[1] = NULL;
    else clFlush(cl->queue);
}

/// A step's enqueue; `throttle`: wait for the solver steps two back (substep_enqueued()).
static sm_result step(sm_world *world, double h, int32_t substeps, cl_uint wait_count, const cl_event *wait_list,
                      cl_event *out_event, bool throttle)
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
        // the caller's events: of another context, released or not events at all (its mistake)
        if (status == CL_INVALID_CONTEXT || status == CL_INVALID_EVENT_WAIT_LIST || status == CL_INVALID_EVENT)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_step_cl: the events to wait for are not valid events of "
                           "the world's context (%s)", sm_cl_error_name(status));
        if (status != CL_SUCCESS) return sm_cl_fail("clEnqueueBarrierWithWaitList", status, __FILE__, __LINE__);
    }
    result = sm_cl_write_collider_states(world, h, substeps);
    const int64_t steps_before = world->profile.steps;
    static const sm_pass_runner device = {enqueue_pass, substep_enqueued};
    cl->throttle = throttle;
    if (result == SM_OK) result = sm_world_run_passes(world, h, substeps, &device);
    // what a cancel left enqueued runs
    const sm_result cancelled = result;
    if (result == SM_ERROR_CANCELLED) result = SM_OK;
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
    // (a step cancelled before its first solver step changed nothing: the host's state stays exact)
    if (result == SM_OK && world->profile.steps > steps_before) cl->device_ahead = true;
    return result == SM_OK ? cancelled : result;
}

sm_result sm_cl_step(sm_world *world, double h, int32_t substeps) { return step(world, h, substeps, 0, NULL, NULL, true); }

sm_result sm_cl_step_events(sm_world *world, double h, int32_t substeps, cl_uint wait_count, const cl_event *wait_list,
                            cl_event *out_event)
{
    return step(world, h, substeps, wait_count, wait_list, out_event, false); // (the embedding API's: no waiting)
}
