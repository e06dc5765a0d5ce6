/* shapematch inside the caller's OpenCL pipeline: the program owns the context and the queue, its
 * own kernel reads the world's positions and writes an attractor's forces, and the steps are
 * chained to it by events, entirely on the device (no host transfer in the loop).
 *
 *   shapematch_example [steps]   default 300; exits 0 when the box has come within 1 m of the
 *                                attractor without any host transfer inside the steps
 *
 * A project of its own: CMakeLists.txt here finds the installed package (find_package). */
#include <shapematch/shapematch_opencl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

// The caller's kernel: a spring-like pull of every particle toward a point, weakening with distance.
static const char *attractor_source =
    "__kernel void attract(const int n, const float4 center, const float strength,\n"
    "                      __global const float4 *position, __global float4 *force)\n"
    "{\n"
    "    const int i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    const float4 x = position[i];      /* x, y, z in m; w: the particle's mass in kg */\n"
    "    const float3 d = center.xyz - x.xyz;\n"
    "    force[i] = (float4)(strength * x.w * d / (1.0f + dot(d, d)), 0.0f); /* N */\n"
    "}\n";

#define CHECK(call, what)                                                                                     \
    do {                                                                                                      \
        if ((call) != 0) {                                                                                    \
            fprintf(stderr, "shapematch_example: %s failed: %s\n", what, sm_last_error());                    \
            return 1;                                                                                         \
        }                                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    const int steps = argc > 1 ? atoi(argv[1]) : 300;

    // 1. the program's own OpenCL objects: the first device, a context, an in-order queue, a kernel
    cl_platform_id platform;
    cl_device_id device;
    cl_int status = clGetPlatformIDs(1, &platform, NULL);
    CHECK(status || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "finding an OpenCL device");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    CHECK(status, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    CHECK(status, "clCreateCommandQueue");
    cl_program program = clCreateProgramWithSource(context, 1, &attractor_source, NULL, &status);
    CHECK(status || clBuildProgram(program, 1, &device, "", NULL, NULL), "building the attractor kernel");
    cl_kernel attract = clCreateKernel(program, "attract", &status);
    CHECK(status, "clCreateKernel");

    // 2. a world on that queue, with a soft box floating in zero gravity
    sm_world_def world_def = sm_world_def_default();
    world_def.gravity = (sm_vec3){0.0, 0.0, 0.0};
    world_def.opencl.queue = queue;
    sm_world *world = NULL;
    CHECK(sm_world_create(&world_def, &world), "sm_world_create");
    sm_object_def box = sm_object_def_default();
    box.shape.resolution[0] = box.shape.resolution[1] = box.shape.resolution[2] = 8;
    box.clusters.grid[0] = box.clusters.grid[1] = box.clusters.grid[2] = 2;
    box.damping = 1.0; // 1/s: it settles on the attractor instead of swinging through it
    CHECK(sm_world_add_object(world, &box, NULL), "sm_world_add_object");

    // 3. the world's positions on the device, and a force buffer of ours that every step reads
    sm_cl_state state;
    CHECK(sm_world_get_cl_state(world, &state), "sm_world_get_cl_state");
    const cl_int n = state.particle_count;
    cl_mem forces = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_float4) * (size_t)n, NULL, &status);
    CHECK(status, "clCreateBuffer");
    sm_cl_inputs inputs = sm_cl_inputs_default();
    inputs.forces = forces;
    CHECK(sm_world_set_cl_inputs(world, &inputs), "sm_world_set_cl_inputs");
    const cl_float4 center = {{3.0f, 0.0f, 0.0f, 0.0f}};
    const cl_float strength = 2.0f; // N per kg at 1 m
    clSetKernelArg(attract, 0, sizeof n, &n);
    clSetKernelArg(attract, 1, sizeof center, &center);
    clSetKernelArg(attract, 2, sizeof strength, &strength);
    clSetKernelArg(attract, 3, sizeof(cl_mem), &state.position);
    clSetKernelArg(attract, 4, sizeof(cl_mem), &forces);

    // 4. each frame: our kernel after the last step, the step after our kernel; the host never waits
    const long long transfers_before = (long long)sm_world_get_profile(world).transfers;
    const size_t global = (size_t)n;
    cl_event stepped = NULL;
    for (int s = 0; s < steps; s++) {
        cl_event pulled;
        CHECK(clEnqueueNDRangeKernel(queue, attract, 1, NULL, &global, NULL, stepped ? 1 : 0, stepped ? &stepped : NULL,
                                     &pulled),
              "enqueueing the attractor");
        if (stepped) clReleaseEvent(stepped);
        CHECK(sm_world_step_cl(world, 1.0 / 60.0, 1, 1, &pulled, &stepped), "sm_world_step_cl");
        clReleaseEvent(pulled);
    }
    clWaitForEvents(1, &stepped);
    clReleaseEvent(stepped);
    const long long transfers = (long long)sm_world_get_profile(world).transfers - transfers_before;

    // 5. where the box went (one read, after the loop)
    double *xyz = malloc(sizeof(double) * 3 * (size_t)n), mean = 0.0;
    CHECK(!xyz || sm_world_get_positions(world, 0, n, xyz), "sm_world_get_positions");
    for (int i = 0; i < n; i++) mean += xyz[3 * i] / n;
    free(xyz);
    printf("shapematch_example: %d steps on %s: the box's mean x went from 0 to %.3f m (attractor at x = 3), %lld host "
           "transfers in the steps\n",
           steps, sm_world_device_name(world), mean, transfers);

    sm_world_destroy(world); // releases its hold on the queue and our force buffer
    clReleaseMemObject(forces);
    clReleaseKernel(attract);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return fabs(mean - 3.0) < 1.0 && transfers == 0 ? 0 : 1;
}
