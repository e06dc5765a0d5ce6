/* The embedding API (shapematch_opencl.h): a world on the caller's context and queue, its state
 * read and written by the caller's kernels, forces and targets from the caller's buffers, steps
 * chained by events, and no host transfer inside steps. */
#include "support.h"

#include <shapematch/shapematch_opencl.h>
#include <stdlib.h>
#include <time.h>

static const char *user_source =
    "__kernel void wind(const int n, const float strength, __global const float4 *position, __global float4 *force)\n"
    "{\n"
    "    const int i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    const float4 x = position[i];\n" // a gust that grows with height and swirls with x
    "    force[i] = (float4)(strength * (1.0f + x.y), 0.0f, strength * sin(3.0f * x.x), 0.0f);\n"
    "}\n"
    "__kernel void lift(const int first, const int count, const float dy, __global float4 *position,\n"
    "                   __global float4 *position_low)\n"
    "{\n"
    "    const int i = first + get_global_id(0);\n"
    "    if (i >= first + count) return;\n"
    "    position[i].y += dy;\n" // teleport: keep w (the mass), drop the low part
    "    position_low[i] = (float4)(0.0f);\n"
    "}\n";

/// The caller's OpenCL objects: the first device of the first platform, a context, a queue and the kernels above.
typedef struct caller {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue, other_queue;
    cl_program program;
    cl_kernel wind, lift;
} caller;

static bool caller_open(caller *c)
{
    memset(c, 0, sizeof *c);
    cl_platform_id platform = NULL;
    cl_int status = clGetPlatformIDs(1, &platform, NULL);
    if (status == CL_SUCCESS) status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &c->device, NULL);
    if (status == CL_SUCCESS) c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &status);
    if (status == CL_SUCCESS) c->queue = clCreateCommandQueue(c->context, c->device, 0, &status);
    if (status == CL_SUCCESS) c->other_queue = clCreateCommandQueue(c->context, c->device, 0, &status);
    if (status == CL_SUCCESS) c->program = clCreateProgramWithSource(c->context, 1, &user_source, NULL, &status);
    if (status == CL_SUCCESS) status = clBuildProgram(c->program, 1, &c->device, "", NULL, NULL);
    if (status == CL_SUCCESS) c->wind = clCreateKernel(c->program, "wind", &status);
    if (status == CL_SUCCESS) c->lift = clCreateKernel(c->program, "lift", &status);
    if (status != CL_SUCCESS) fprintf(stderr, "the test's own OpenCL set-up failed: %d\n", status);
    ENSURE(status == CL_SUCCESS);
    return status == CL_SUCCESS;
}

static void caller_close(caller *c)
{
    if (c->wind) clReleaseKernel(c->wind);
    if (c->lift) clReleaseKernel(c->lift);
    if (c->program) clReleaseProgram(c->program);
    if (c->other_queue) clReleaseCommandQueue(c->other_queue);
    if (c->queue) clReleaseCommandQueue(c->queue);
    if (c->context) clReleaseContext(c->context);
}

static cl_uint queue_references(cl_command_queue queue)
{
    cl_uint count = 0;
    clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof count, &count, NULL);
    return count;
}

/// A world of two soft boxes (432 particles) on `queue`, or on the CPU reference when queue is NULL.
static sm_world *two_boxes(cl_command_queue queue)
{
    sm_world_def wd = sm_world_def_default();
    wd.ground.enabled = true;
    if (queue) wd.opencl.queue = queue;
    else wd.backend = SM_BACKEND_CPU;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return NULL;
    for (int b = 0; b < 2; b++) {
        sm_object_def od = sm_object_def_default();
        od.shape.resolution[0] = od.shape.resolution[1] = od.shape.resolution[2] = 6;
        od.position = (sm_vec3){2.0 * b, 1.0 + b, 0.0};
        od.clusters.grid[0] = od.clusters.grid[1] = od.clusters.grid[2] = 2;
        od.mode = b == 0 ? SM_MODE_LINEAR : SM_MODE_QUADRATIC;
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
    }
    return world;
}

/// Largest coordinate difference between two worlds' positions.
static double position_difference(const sm_world *a, const sm_world *b)
{
    double *pa = get_positions(a), *pb = get_positions(b), worst = 0.0;
    const int32_t n = sm_world_get_counts(a).particles;
    for (int32_t i = 0; i < 3 * n; i++) worst = fmax(worst, isfinite(pa[i] - pb[i]) ? fabs(pa[i] - pb[i]) : INFINITY);
    free(pa), free(pb);
    return worst;
}

/// A float4 buffer of n particles in the caller's context.
static cl_mem float4_buffer(const caller *c, int32_t n, const float *data)
{
    cl_int status = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(c->context, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0), 16 * (size_t)n,
                                   (void *)data, &status);
    ENSURE(status == CL_SUCCESS);
    return buffer;
}

/// "A world is created on the caller's OpenCL objects, which it retains and releases, and never on a second queue";
/// what cannot work (a queue without profiling or out of order, a device without its context, a
/// device named as well, events of another context) is refused with a reason.
static void world_runs_on_the_callers_queue(void)
{
    caller c;
    if (!caller_open(&c)) return;
    const cl_uint before = queue_references(c.queue);
    sm_world *world = two_boxes(c.queue);
    if (!world) return;
    ENSURE(queue_references(c.queue) == before + 1);
    ENSURE(sm_world_get_cl_queue(world) == c.queue);
    ENSURE(sm_world_get_cl_context(world) == c.context);
    ENSURE(sm_world_get_cl_device(world) == c.device);
    ENSURE(strcmp(sm_world_backend_name(world), "opencl") == 0);
    double y0 = 0.0, y1 = 0.0, x[3];
    ENSURE_OK(sm_world_get_positions(world, 0, 1, x));
    y0 = x[1];
    for (int s = 0; s < 10; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    ENSURE_OK(sm_world_get_positions(world, 0, 1, x));
    y1 = x[1];
    printf("  on the caller's queue: particle 0 fell %.4f m in 10 steps (free fall: %.4f m)\n", y0 - y1,
           0.5 * 9.81 * (10.0 / 60.0) * (11.0 / 60.0));
    ENSURE_RANGE(y0 - y1, 0.1, 0.2);
    sm_world_destroy(world);
    // the driver may drop its own references to the queue as its commands retire
    for (int wait = 0; wait < 200 && queue_references(c.queue) != before; wait++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    printf("  queue references: %u before the world, %u after it\n", before, queue_references(c.queue));
    ENSURE(queue_references(c.queue) == before);

    // a context alone: the world makes its one queue there
    sm_world_def wd = sm_world_def_default();
    wd.opencl.context = c.context;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (world) ENSURE(sm_world_get_cl_context(world) == c.context && sm_world_get_cl_queue(world) != c.queue);
    sm_world_destroy(world);

    // what cannot work is refused with a reason
    wd = sm_world_def_default();
    wd.opencl.queue = c.queue;
    wd.profile = true; // the queue has no profiling
    ENSURE(sm_world_create(&wd, &world) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "PROFILING"));
    wd.profile = false;
    wd.backend = SM_BACKEND_CPU;
    ENSURE(sm_world_create(&wd, &world) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "CPU"));
    wd = sm_world_def_default();
    wd.opencl.device = c.device; // no context
    ENSURE(sm_world_create(&wd, &world) == SM_ERROR_INVALID_ARGUMENT);
    // a device named as well as the caller's objects, which choose it: one or the other
    const char *const names[] = {"no such device", "0", "pthread"};
    for (int k = 0; k < 3; k++) {
        wd = sm_world_def_default();
        wd.device = names[k];
        if (k % 2 == 0) wd.opencl.context = c.context;
        else wd.opencl.queue = c.queue;
        ENSURE(sm_world_create(&wd, &world) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), names[k]) &&
               strstr(sm_last_error(), "caller's OpenCL objects"));
    }
    cl_int status = CL_SUCCESS;
    cl_command_queue unordered = clCreateCommandQueue(c.context, c.device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &status);
    if (status == CL_SUCCESS) {
        wd = sm_world_def_default();
        wd.opencl.queue = unordered;
        ENSURE(sm_world_create(&wd, &world) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "out of order"));
        clReleaseCommandQueue(unordered);
    } else {
        printf("  (the device makes no out-of-order queue: that refusal is not exercised)\n");
    }
    // an event of another context to wait for: the caller's mistake, and the world steps on
    cl_context elsewhere = clCreateContext(NULL, 1, &c.device, NULL, NULL, &status);
    cl_event foreign = status == CL_SUCCESS ? clCreateUserEvent(elsewhere, &status) : NULL;
    ENSURE(status == CL_SUCCESS);
    world = two_boxes(c.queue);
    if (world && foreign) {
        ENSURE(sm_world_step_cl(world, 1.0 / 60.0, 1, 1, &foreign, NULL) == SM_ERROR_INVALID_ARGUMENT &&
               strstr(sm_last_error(), "events to wait for"));
        ENSURE_OK(sm_world_step_cl(world, 1.0 / 60.0, 1, 0, NULL, NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    }
    sm_world_destroy(world);
    if (foreign) clSetUserEventStatus(foreign, CL_COMPLETE), clReleaseEvent(foreign);
    if (elsewhere) clReleaseContext(elsewhere);
    // a CPU world has no device state
    sm_world *cpu = two_boxes(NULL);
    sm_cl_state state;
    ENSURE(sm_world_get_cl_state(cpu, &state) == SM_ERROR_UNAVAILABLE);
    ENSURE(sm_world_step_cl(cpu, 1.0 / 60.0, 1, 0, NULL, NULL) == SM_ERROR_UNAVAILABLE);
    sm_world_destroy(cpu);
    caller_close(&c);
}

/// "Forces read from a device buffer give the same trajectory as the same forces given through the host API."
static void device_forces_match_host_forces(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *host = two_boxes(c.queue), *device = two_boxes(c.queue);
    if (!host || !device) return;
    const int32_t n = sm_world_get_counts(host).particles;
    float *forces = calloc(4 * (size_t)n, sizeof *forces);
    for (int32_t i = 0; i < n; i++) {
        const sm_vec3 f = {0.02 * sin(0.1 * i), 0.01 * (i % 7), -0.015 * cos(0.3 * i)};
        forces[4 * i] = (float)f.x, forces[4 * i + 1] = (float)f.y, forces[4 * i + 2] = (float)f.z;
        ENSURE_OK(sm_world_set_force(host, i, (sm_vec3){forces[4 * i], forces[4 * i + 1], forces[4 * i + 2]}));
    }
    cl_mem buffer = float4_buffer(&c, n, forces);
    sm_cl_inputs inputs = sm_cl_inputs_default();
    inputs.forces = buffer;
    ENSURE_OK(sm_world_set_cl_inputs(device, &inputs));
    for (int s = 0; s < 120; s++) {
        ENSURE_OK(sm_world_step(host, 1.0 / 60.0, 2));
        ENSURE_OK(sm_world_step_cl(device, 1.0 / 60.0, 2, 0, NULL, NULL));
    }
    const double difference = position_difference(host, device);
    printf("  120 steps: device-buffer forces vs host forces, max |dx| = %.3g m\n", difference);
    ENSURE_SMALL(difference, 1e-6);

    // the inputs must cover the world and live in its context
    cl_mem small = float4_buffer(&c, n / 2, NULL);
    inputs.forces = small;
    ENSURE_OK(sm_world_set_cl_inputs(device, &inputs));
    ENSURE(sm_world_step(device, 1.0 / 60.0, 1) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "forces buffer holds"));
    caller stranger;
    if (caller_open(&stranger)) {
        cl_mem foreign = float4_buffer(&stranger, n, NULL);
        inputs.forces = foreign;
        ENSURE(sm_world_set_cl_inputs(device, &inputs) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "context"));
        clReleaseMemObject(foreign);
        caller_close(&stranger);
    }
    const sm_cl_inputs none = sm_cl_inputs_default();
    ENSURE_OK(sm_world_set_cl_inputs(device, &none));
    ENSURE_OK(sm_world_step(device, 1.0 / 60.0, 1));
    clReleaseMemObject(small);
    clReleaseMemObject(buffer); // the world released its hold when the inputs were replaced
    free(forces);
    sm_world_destroy(host);
    sm_world_destroy(device);
    caller_close(&c);
}

/// Runs `steps` frames of the wind kernel (on the caller's other queue) feeding the world's step:
/// chained by events, or with the host waiting after every command. Returns the host transfers
/// the world enqueued over the frames.
static int64_t run_wind(caller *c, sm_world *world, cl_mem forces, int steps, bool events)
{
    sm_cl_state state;
    ENSURE_OK(sm_world_get_cl_state(world, &state));
    sm_cl_inputs inputs = sm_cl_inputs_default();
    inputs.forces = forces;
    ENSURE_OK(sm_world_set_cl_inputs(world, &inputs));
    const cl_int n = state.particle_count;
    const cl_float strength = 0.001f;
    clSetKernelArg(c->wind, 0, sizeof n, &n);
    clSetKernelArg(c->wind, 1, sizeof strength, &strength);
    clSetKernelArg(c->wind, 2, sizeof(cl_mem), &state.position);
    clSetKernelArg(c->wind, 3, sizeof(cl_mem), &forces);
    const size_t global = (size_t)n;
    const int64_t before = sm_world_get_profile(world).transfers;
    cl_event stepped = NULL;
    for (int s = 0; s < steps; s++) {
        if (events) {
            // wind (other queue) after the last step; the step after the wind; the host never waits
            cl_event blown = NULL;
            ENSURE(clEnqueueNDRangeKernel(c->other_queue, c->wind, 1, NULL, &global, NULL, stepped ? 1 : 0,
                                          stepped ? &stepped : NULL, &blown) == CL_SUCCESS);
            if (stepped) clReleaseEvent(stepped);
            ENSURE_OK(sm_world_step_cl(world, 1.0 / 60.0, 1, 1, &blown, &stepped));
            clReleaseEvent(blown);
        } else {
            ENSURE(clEnqueueNDRangeKernel(c->other_queue, c->wind, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS);
            ENSURE(clFinish(c->other_queue) == CL_SUCCESS);
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
            ENSURE(clFinish(sm_world_get_cl_queue(world)) == CL_SUCCESS);
        }
    }
    if (stepped) {
        ENSURE(clWaitForEvents(1, &stepped) == CL_SUCCESS);
        clReleaseEvent(stepped);
    }
    return sm_world_get_profile(world).transfers - before;
}

/// "A user kernel that reads positions and writes forces, chained with the steps by events, gives
/// what blocking calls give, and the steps move no data between host and device."
static void event_chaining_matches_blocking_calls(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *chained = two_boxes(c.queue), *blocking = two_boxes(c.queue);
    if (!chained || !blocking) return;
    const int32_t n = sm_world_get_counts(chained).particles;
    cl_mem forces_a = float4_buffer(&c, n, NULL), forces_b = float4_buffer(&c, n, NULL);
    const int64_t transfers = run_wind(&c, chained, forces_a, 200, true);
    run_wind(&c, blocking, forces_b, 200, false);
    const double difference = position_difference(chained, blocking);
    double *x = get_positions(chained), drift = 0.0;
    double *rest = get_rest_positions(chained);
    for (int32_t i = 0; i < n; i++) drift += (x[3 * i] - rest[3 * i]) / n;
    printf("  200 steps of wind: chained vs blocking max |dx| = %.3g m; the wind moved the boxes %.3f m along x; "
           "%lld host transfers in the chained steps\n",
           difference, drift, (long long)transfers);
    ENSURE(difference == 0.0); // the same commands in the same order: bit for bit
    ENSURE(drift > 0.05);      // the forces did act
    ENSURE(transfers == 0);
    // a read is a transfer, and the counter sees it
    const int64_t before = sm_world_get_profile(chained).transfers;
    ENSURE_OK(sm_world_get_positions(chained, 0, 1, x));
    ENSURE(sm_world_get_profile(chained).transfers > before);
    free(x), free(rest);
    clReleaseMemObject(forces_a), clReleaseMemObject(forces_b);
    sm_world_destroy(chained);
    sm_world_destroy(blocking);
    caller_close(&c);
}

/// "The caller's kernel may teleport particles through the device buffers, and the world moves on from there."
static void caller_kernels_can_move_particles(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *world = two_boxes(c.queue);
    if (!world) return;
    sm_object_info box;
    ENSURE_OK(sm_world_get_object(world, 1, &box));
    for (int s = 0; s < 30; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    double *before = get_positions(world);
    sm_cl_state state;
    ENSURE_OK(sm_world_get_cl_state(world, &state));
    const cl_int first = box.first_particle, count = box.particle_count;
    const cl_float dy = 5.0f;
    clSetKernelArg(c.lift, 0, sizeof first, &first);
    clSetKernelArg(c.lift, 1, sizeof count, &count);
    clSetKernelArg(c.lift, 2, sizeof dy, &dy);
    clSetKernelArg(c.lift, 3, sizeof(cl_mem), &state.position);
    clSetKernelArg(c.lift, 4, sizeof(cl_mem), &state.position_low);
    const size_t global = (size_t)count;
    ENSURE(clEnqueueNDRangeKernel(c.queue, c.lift, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS);
    double *after = get_positions(world);
    double worst = 0.0;
    for (int32_t i = first; i < first + count; i++)
        worst = fmax(worst, fabs(after[3 * i + 1] - ((double)(float)before[3 * i + 1] + 5.0)));
    printf("  lifted box 1 by 5 m in a kernel: max error %.3g m (float rounding of the lifted coordinate)\n", worst);
    ENSURE_SMALL(worst, 1e-5);
    ENSURE(after[1] == before[1]); // box 0 untouched
    ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    double *next = get_positions(world);
    ENSURE(next[3 * first + 1] > 4.0 && isfinite(next[3 * first + 1])); // it goes on from up there
    free(before), free(after), free(next);
    sm_world_destroy(world);
    caller_close(&c);
}

/// "A pinned particle follows its target; a pulled one is drawn to it; device targets act as host
/// targets; the CPU reference computes the same."
static void targets_pin_and_pull(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *cpu = two_boxes(NULL), *host = two_boxes(c.queue), *device = two_boxes(c.queue), *free_world = two_boxes(NULL);
    if (!cpu || !host || !device || !free_world) return;
    const int32_t n = sm_world_get_counts(cpu).particles;
    float *targets = calloc(4 * (size_t)n, sizeof *targets);
    // box 0: particle 0 pinned to a point that rises; box 1: its particle 216 pulled up hard
    const sm_vec3 pin = {-0.5, 0.8, -0.5}, pull = {2.0, 4.0, 0.0};
    targets[0] = (float)pin.x, targets[1] = (float)pin.y, targets[2] = (float)pin.z, targets[3] = (float)SM_TARGET_PIN;
    targets[4 * 216] = (float)pull.x, targets[4 * 216 + 1] = (float)pull.y, targets[4 * 216 + 2] = (float)pull.z;
    targets[4 * 216 + 3] = 5.0f;
    sm_world *worlds[2] = {cpu, host};
    for (int w = 0; w < 2; w++) {
        ENSURE_OK(sm_world_set_target(worlds[w], 0, (sm_vec3){targets[0], targets[1], targets[2]}, SM_TARGET_PIN));
        ENSURE_OK(sm_world_set_target(worlds[w], 216, (sm_vec3){targets[864], targets[865], targets[866]}, 5.0));
    }
    cl_mem buffer = float4_buffer(&c, n, targets);
    sm_cl_inputs inputs = sm_cl_inputs_default();
    inputs.targets = buffer;
    ENSURE_OK(sm_world_set_cl_inputs(device, &inputs));
    for (int s = 0; s < 90; s++) {
        ENSURE_OK(sm_world_step(cpu, 1.0 / 60.0, 1));
        ENSURE_OK(sm_world_step(host, 1.0 / 60.0, 1));
        ENSURE_OK(sm_world_step(device, 1.0 / 60.0, 1));
        ENSURE_OK(sm_world_step(free_world, 1.0 / 60.0, 1));
    }
    double *x = get_positions(cpu), *v = get_velocities(cpu), *unpulled = get_positions(free_world);
    const double pinned = fabs(x[0] - pin.x) + fabs(x[1] - pin.y) + fabs(x[2] - pin.z);
    const double pulled = sqrt(pow(x[648] - pull.x, 2) + pow(x[649] - pull.y, 2) + pow(x[650] - pull.z, 2));
    const double left = sqrt(pow(unpulled[648] - pull.x, 2) + pow(unpulled[649] - pull.y, 2) + pow(unpulled[650] - pull.z, 2));
    printf("  pinned particle off its target by %.3g m (speed %.3g m/s); pulled particle %.3f m from its target "
           "(%.3f m without the pull)\n",
           pinned, fabs(v[0]) + fabs(v[1]) + fabs(v[2]), pulled, left);
    ENSURE_SMALL(pinned, 1e-6);
    ENSURE_SMALL(fabs(v[0]) + fabs(v[1]) + fabs(v[2]), 1e-6);
    ENSURE(pulled < left - 0.3);
    const double host_device = position_difference(host, device), cpu_opencl = position_difference(cpu, host);
    printf("  90 steps with targets: device-buffer vs host targets %.3g m; CPU reference vs OpenCL %.3g m\n", host_device,
           cpu_opencl);
    ENSURE(host_device == 0.0);
    ENSURE_SMALL(cpu_opencl, 1e-4);
    double back[4];
    ENSURE_OK(sm_world_get_targets(cpu, 216, 1, back));
    ENSURE(back[3] == 5.0 && back[1] == targets[865]);
    ENSURE(sm_world_set_target(cpu, 0, pin, -2.0) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(sm_world_set_target(cpu, n, pin, 1.0) == SM_ERROR_INVALID_ARGUMENT);
    free(x), free(v), free(unpulled), free(targets);
    clReleaseMemObject(buffer);
    sm_world_destroy(cpu), sm_world_destroy(host), sm_world_destroy(device), sm_world_destroy(free_world);
    caller_close(&c);
}

/// "Alpha, beta, mode and plasticity change while the world runs, on the device as on the CPU
/// reference, without rebuilding the world."
static void parameters_change_without_rebuilding(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *cpu = two_boxes(NULL), *gpu = two_boxes(c.queue);
    if (!cpu || !gpu) return;
    sm_cl_state state;
    ENSURE_OK(sm_world_get_cl_state(gpu, &state));
    sm_world *worlds[2] = {cpu, gpu};
    for (int phase = 0; phase < 3; phase++) {
        for (int w = 0; w < 2; w++) {
            sm_object_params p;
            ENSURE_OK(sm_world_get_object_params(worlds[w], 0, &p));
            if (phase == 0) p.alpha = 0.3, p.beta = 0.6;
            if (phase == 1) p.plasticity.enabled = true;
            if (phase == 2) p.mode = SM_MODE_QUADRATIC;
            const int64_t before = sm_world_get_profile(worlds[w]).transfers;
            ENSURE_OK(sm_world_set_object_params(worlds[w], 0, &p));
            if (w == 1 && phase == 0) ENSURE(sm_world_get_profile(gpu).transfers - before == 1); // one object record
            sm_object_params q;
            ENSURE_OK(sm_world_get_object_params(worlds[w], 0, &q));
            ENSURE(q.alpha == p.alpha && q.plasticity.enabled == p.plasticity.enabled && q.mode == p.mode);
        }
        for (int s = 0; s < 40; s++) {
            ENSURE_OK(sm_world_step(cpu, 1.0 / 60.0, 1));
            ENSURE_OK(sm_world_step(gpu, 1.0 / 60.0, 1));
        }
        const double difference = position_difference(cpu, gpu);
        printf("  after change %d and 40 steps: CPU reference vs OpenCL max |dx| = %.3g m\n", phase, difference);

        ENSURE_SMALL(difference, 1e-4);
    }
    sm_cl_state again;
    ENSURE_OK(sm_world_get_cl_state(gpu, &again));
    ENSURE(again.particle_count == state.particle_count);

    // plasticity off keeps the rest shape reached so far, through a later upload of the whole world
    sm_object_def ball = sm_object_def_default();
    ball.position = (sm_vec3){-3.0, 1.0, 0.0};
    for (int w = 0; w < 2; w++) {
        sm_object_params p;
        ENSURE_OK(sm_world_get_object_params(worlds[w], 0, &p));
        p.plasticity.enabled = false;
        ENSURE_OK(sm_world_set_object_params(worlds[w], 0, &p));
        for (int s = 0; s < 20; s++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
        ENSURE_OK(sm_world_add_object(worlds[w], &ball, NULL));
        for (int s = 0; s < 40; s++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
    }
    double difference = position_difference(cpu, gpu);
    printf("  plasticity off, an object added, 60 steps: CPU reference vs OpenCL max |dx| = %.3g m\n", difference);
    ENSURE_SMALL(difference, 1e-4);

    // a handle given out survives plasticity turned off and an upload of everything
    for (int on = 1; on >= 0; on--) {
        sm_object_params p;
        ENSURE_OK(sm_world_get_object_params(gpu, 0, &p));
        p.plasticity.enabled = on;
        ENSURE_OK(sm_world_set_object_params(gpu, 0, &p));
        ENSURE_OK(sm_world_step(gpu, 1.0 / 60.0, 1));
        if (on) ENSURE_OK(sm_world_get_cl_state(gpu, &again));
    }
    clRetainMemObject(again.position);
    ENSURE_OK(sm_world_copy_state(gpu, cpu));
    ENSURE_OK(sm_world_step(gpu, 1.0 / 60.0, 1));
    ENSURE(clFinish(sm_world_get_cl_queue(gpu)) == CL_SUCCESS);
    cl_uint references = 0;
    clGetMemObjectInfo(again.position, CL_MEM_REFERENCE_COUNT, sizeof references, &references, NULL);
    printf("  the position buffer's references after plasticity off and a full upload: %u\n", references);
    ENSURE(references >= 2); // ours and the world's (the driver may hold more while commands retire)
    clReleaseMemObject(again.position);

    // clearing a target where there is none is no work
    ENSURE_OK(sm_world_set_target(gpu, 0, (sm_vec3){0, 0, 0}, 0.0));
    sm_object_params bad;
    ENSURE_OK(sm_world_get_object_params(cpu, 0, &bad));
    bad.plasticity.enabled = true, bad.plasticity.max = 0.0;
    ENSURE(sm_world_set_object_params(cpu, 0, &bad) == SM_ERROR_INVALID_ARGUMENT && strstr(sm_last_error(), "plasticity max"));
    sm_world_destroy(cpu), sm_world_destroy(gpu);
    caller_close(&c);
}

/// "A reset puts one object back at rest, on both backends, and leaves the others as they were."
static void reset_puts_an_object_back_at_rest(void)
{
    caller c;
    if (!caller_open(&c)) return;
    sm_world *worlds[2] = {two_boxes(NULL), two_boxes(c.queue)};
    if (!worlds[0] || !worlds[1]) return;
    sm_object_info box;
    ENSURE_OK(sm_world_get_object(worlds[0], 1, &box));
    const int32_t n = sm_world_get_counts(worlds[0]).particles;
    for (int w = 0; w < 2; w++) {
        sm_object_params p;
        ENSURE_OK(sm_world_get_object_params(worlds[w], 1, &p));
        p.plasticity.enabled = true; // the fall bends its rest shape; the reset must undo that too
        p.plasticity.yield = 0.02;
        ENSURE_OK(sm_world_set_object_params(worlds[w], 1, &p));
        for (int s = 0; s < 60; s++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
        double bent = 0.0;
        for (int32_t k = box.first_cluster; k < box.first_cluster + box.cluster_count; k++) {
            sm_cluster_info info;
            ENSURE_OK(sm_world_get_cluster(worlds[w], k, &info));
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++) bent = fmax(bent, fabs(info.plastic.m[r][q] - (r == q)));
        }
        printf("  %s: box 1's plastic state after the fall: max |S_p - I| = %.3g\n", sm_world_backend_name(worlds[w]), bent);
        ENSURE(bent > 1e-3);
        double *before = get_positions(worlds[w]);
        ENSURE_OK(sm_world_reset_object(worlds[w], 1));
        double *after = get_positions(worlds[w]), *v = get_velocities(worlds[w]), *rest = get_rest_positions(worlds[w]);
        double off_rest = 0.0, speed = 0.0, others = 0.0;
        for (int32_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) {
                if (i >= box.first_particle && i < box.first_particle + box.particle_count) {
                    off_rest = fmax(off_rest, fabs(after[3 * i + k] - rest[3 * i + k]));
                    speed = fmax(speed, fabs(v[3 * i + k]));
                } else {
                    others = fmax(others, fabs(after[3 * i + k] - before[3 * i + k]));
                }
            }
        sm_cluster_info cluster;
        ENSURE_OK(sm_world_get_cluster(worlds[w], box.first_cluster, &cluster));
        printf("  %s: after the reset box 1 is %.3g m from rest, moving at %.3g m/s, S_p - I %.3g; box 0 moved %.3g m\n",
               sm_world_backend_name(worlds[w]), off_rest, speed, fabs(cluster.plastic.m[0][0] - 1.0) + fabs(cluster.plastic.m[0][1]),
               others);
        ENSURE_SMALL(off_rest, 1e-12);
        ENSURE(speed == 0.0 && others == 0.0);
        ENSURE(cluster.plastic.m[0][0] == 1.0 && cluster.plastic.m[0][1] == 0.0);
        free(before), free(after), free(v), free(rest);
    }
    for (int s = 0; s < 30; s++)
        for (int w = 0; w < 2; w++) ENSURE_OK(sm_world_step(worlds[w], 1.0 / 60.0, 1));
    const double difference = position_difference(worlds[0], worlds[1]);
    printf("  30 steps after the reset: CPU reference vs OpenCL max |dx| = %.3g m\n", difference);
    ENSURE_SMALL(difference, 1e-4);
    ENSURE(sm_world_reset_object(worlds[0], 2) == SM_ERROR_INVALID_ARGUMENT);
    sm_world_destroy(worlds[0]), sm_world_destroy(worlds[1]);
    caller_close(&c);
}

/// "Steps move no data between host and device": with static colliders too; a moving collider's
/// states are the one write a step makes.
static void colliders_and_transfers(void)
{
    for (int moving = 0; moving < 2; moving++) {
        sm_world_def wd = sm_world_def_default();
        wd.backend = SM_BACKEND_OPENCL;
        sm_world *world = NULL;
        ENSURE_OK(sm_world_create(&wd, &world));
        if (!world) return;
        sm_object_def od = sm_object_def_default();
        od.position = (sm_vec3){0.0, 2.0, 0.0};
        ENSURE_OK(sm_world_add_object(world, &od, NULL));
        sm_collider_def cd = sm_collider_def_default();
        cd.size = (sm_vec3){4.0, 0.5, 4.0};
        if (moving) {
            cd.motion.type = SM_MOTION_SINUSOIDAL;
            cd.motion.amplitude = (sm_vec3){0.0, 0.2, 0.0};
            cd.motion.frequency = 1.0;
        }
        ENSURE_OK(sm_world_add_collider(world, &cd, NULL));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2)); // the upload
        const int64_t before = sm_world_get_profile(world).transfers;
        for (int s = 0; s < 60; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 2));
        const int64_t transfers = sm_world_get_profile(world).transfers - before;
        double x[3];
        ENSURE_OK(sm_world_get_positions(world, 0, 1, x));
        printf("  60 steps over a %s collider: %lld host transfers; the box rests at y = %.3f m\n", moving ? "moving" : "static",
               (long long)transfers, x[1]);
        ENSURE(transfers == (moving ? 60 : 0));
        ENSURE(x[1] > 0.2 && x[1] < 1.0); // on the collider (its top at 0.25 m), not through it
        sm_world_destroy(world);
    }
}

/// A world on `backend` checking its state every `interval` steps, with two default objects:
/// "calm" (object 0, particles 0 to 63) and "wild" (object 1), 3 m along x; NULL if it fails.
static sm_world *calm_and_wild(sm_backend backend, int interval)
{
    sm_world_def wd = sm_world_def_default();
    wd.backend = backend;
    wd.check_interval = interval;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return NULL;
    sm_object_def calm = sm_object_def_default(), wild = sm_object_def_default();
    calm.name = "calm", wild.name = "wild";
    wild.position = (sm_vec3){3.0, 0.0, 0.0};
    ENSURE_OK(sm_world_add_object(world, &calm, NULL));
    ENSURE_OK(sm_world_add_object(world, &wild, NULL));
    return world;
}

/// "A diverging world stops with a message naming the object instead of spreading NaN": the
/// state check (check_interval) on both backends; without it the steps go on. The CPU reference
/// takes a force of 1e307 N, which overflows (NOT_FINITE); OpenCL refuses one beyond the float
/// range, and 1e20 N flings its particle past check_speed (DIVERGED); a NaN velocity written into
/// the device's buffer stops the OpenCL world with NOT_FINITE.
static void the_state_check_stops_a_diverging_world(void)
{
    for (int b = 0; b < 2; b++) {
        for (int interval = 0; interval <= 5; interval += 5) {
            sm_world *world = calm_and_wild(b == 0 ? SM_BACKEND_CPU : SM_BACKEND_OPENCL, interval);
            if (!world) return;
            ENSURE_OK(sm_world_set_force(world, 64 + 5, (sm_vec3){b == 0 ? 1e307 : 1e20, 0.0, 0.0}));
            int stopped = 0;
            sm_result r = SM_OK;
            for (int s = 1; s <= 20 && !stopped; s++)
                if ((r = sm_world_step(world, 1.0 / 60.0, 1)) != SM_OK) stopped = s;
            printf("  %s, check every %d steps: %s\n", sm_world_backend_name(world), interval,
                   stopped ? sm_last_error() : "20 steps, no check");
            if (interval > 0) {
                ENSURE(stopped > 0 && stopped % interval == 0 && r == (b == 0 ? SM_ERROR_NOT_FINITE : SM_ERROR_DIVERGED));
                ENSURE(strstr(sm_last_error(), "object 1, wild") != NULL);
            } else {
                ENSURE(stopped == 0);
            }
            sm_world_destroy(world);
        }
    }
    // a non-finite particle on the device (a NaN velocity written into its buffer, as a caller's
    // kernel might): NOT_FINITE on OpenCL too, at the next check, naming the object
    for (int interval = 1; interval <= 5; interval += 4) {
        sm_world *world = calm_and_wild(SM_BACKEND_OPENCL, interval);
        if (!world) return;
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
        sm_cl_state state;
        ENSURE_OK(sm_world_get_cl_state(world, &state));
        const cl_float nan4[4] = {NAN, 0.0f, 0.0f, 0.0f};
        ENSURE(clEnqueueWriteBuffer(sm_world_get_cl_queue(world), state.velocity, CL_TRUE, sizeof nan4 * (64 + 5), sizeof nan4,
                                    nan4, 0, NULL, NULL) == CL_SUCCESS);
        int stopped = 0;
        sm_result r = SM_OK;
        for (int s = 2; s <= 20 && !stopped; s++)
            if ((r = sm_world_step(world, 1.0 / 60.0, 1)) != SM_OK) stopped = s;
        printf("  OpenCL, a NaN velocity written on the device, check every %d steps: %s\n", interval,
               stopped ? sm_last_error() : "20 steps, not stopped");
        ENSURE(stopped > 0 && stopped <= 1 + interval && stopped % interval == 0 && r == SM_ERROR_NOT_FINITE);
        ENSURE(strstr(sm_last_error(), "object 1, wild") != NULL);
        sm_world_destroy(world);
    }
    sm_world_def bad = sm_world_def_default();
    bad.check_interval = -1;
    sm_world *world = NULL;
    ENSURE(sm_world_create(&bad, &world) == SM_ERROR_INVALID_ARGUMENT);
}

/// What the log callback received: every error message, joined.
typedef struct captured_log {
    char text[65536];
    size_t length;
} captured_log;

static void capture_log(sm_log_level level, const char *message, void *user)
{
    captured_log *log = user;
    if (level != SM_LOG_ERROR) return;
    log->length += (size_t)snprintf(log->text + log->length, sizeof log->text - log->length, "%s\n", message);
    if (log->length >= sizeof log->text) log->length = sizeof log->text - 1;
}

/// "A kernel that fails to build is reported with its full build log": kernels from
/// $SM_KERNEL_DIR with a syntax error, built in the caller's context (a program of its own).
static void a_kernel_that_fails_to_build_is_reported(void)
{
    char dir[512], command[4096];
    snprintf(dir, sizeof dir, "%s/broken_kernels", SM_TEST_TMP);
    snprintf(command, sizeof command, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/* '%s'/ && printf '\\nthis is not OpenCL C;\\n' >> '%s/05_collision_grid.cl'",
             dir, dir, SM_KERNELS_DIR, dir, dir);
    ENSURE(system(command) == 0);
    caller c;
    if (!caller_open(&c)) return;
    setenv("SM_KERNEL_DIR", dir, 1);
    static captured_log log;
    log.length = 0, log.text[0] = '\0';
    sm_world_def wd = sm_world_def_default();
    wd.opencl.queue = c.queue;
    wd.log = capture_log, wd.log_user = &log;
    sm_world *world = NULL;
    const sm_result r = sm_world_create(&wd, &world);
    unsetenv("SM_KERNEL_DIR");
    printf("  sm_world_create: %s; the error begins \"%.60s...\"; the log callback got %zu bytes\n", sm_result_name(r),
           sm_last_error(), log.length);
    ENSURE(r == SM_ERROR_UNAVAILABLE && !world);
    ENSURE(strstr(sm_last_error(), "build log") && strstr(sm_last_error(), "sent to the log callback"));
    ENSURE(strstr(log.text, "build log") && strstr(log.text, "error")); // the compiler's own words
    sm_world_destroy(world);
    caller_close(&c);
}

int main(int argc, char **argv)
{
    const sm_test_case tests[] = {
        TEST(world_runs_on_the_callers_queue),
        TEST(device_forces_match_host_forces),
        TEST(event_chaining_matches_blocking_calls),
        TEST(caller_kernels_can_move_particles),
        TEST(targets_pin_and_pull),
        TEST(parameters_change_without_rebuilding),
        TEST(reset_puts_an_object_back_at_rest),
        TEST(colliders_and_transfers),
        TEST(the_state_check_stops_a_diverging_world),
        TEST(a_kernel_that_fails_to_build_is_reported),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
