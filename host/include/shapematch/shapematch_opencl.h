/* shapematch inside an OpenCL pipeline: the world's device state, the caller's device inputs and
 * event-chained steps. Needs the OpenCL headers (and libOpenCL to link).
 *
 * Step by step
 *   1. sm_world_def wd = sm_world_def_default();
 *      wd.opencl.queue = my_queue;                 run on the caller's in-order queue (its
 *                                                  context and device); the world retains it
 *   2. sm_world_create(&wd, &world); sm_world_add_object(...) as usual
 *   3. sm_cl_state state; sm_world_get_cl_state(world, &state);
 *                                                  the device buffers of positions, velocities,
 *                                                  goals and skinned vertices, laid out below
 *   4. sm_cl_inputs in = sm_cl_inputs_default(); in.forces = my_forces;
 *      sm_world_set_cl_inputs(world, &in);         read by every following step, on the device
 *   5. each frame: enqueue your kernel that reads state.position and writes my_forces, then
 *      sm_world_step_cl(world, dt, substeps, 1, &mine, &done);
 *                                                  the step waits for `mine`; `done` completes
 *                                                  with it; nothing blocks the host
 *   6. sm_world_destroy(world);                    waits for the queue, releases what it retained
 *
 * Layout: every per-particle buffer holds one float4 (16 bytes) per particle, in the world's
 * particle order (object o's particles are [first_particle, first_particle + particle_count) of
 * sm_object_info); per-vertex buffers likewise per skinned surface vertex.
 *
 * Synchronisation: the world enqueues everything on its one queue, in order. A kernel of the
 * caller's on the same queue, enqueued between two steps, sees the first step's results and is
 * seen by the second; on another queue, chain it with the events of sm_world_step_cl(). Steps
 * enqueue no host transfer (sm_profile.transfers says when one happens); the host calls that read
 * (sm_world_get_positions() and the like) wait for the queue.
 *
 * Buffers stay valid until the world's layout changes: sm_world_add_object(), sm_world_cut(), or
 * sm_world_set_object_params() switching an object's mode or turning plasticity on (ask again
 * after those). Particle i is element i of every per-particle buffer, before and after any
 * number of cuts: a cut changes which object owns a particle, never its index. */
#ifndef SHAPEMATCH_OPENCL_H
#define SHAPEMATCH_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "shapematch.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The device buffers of a world's state (owned by the world: do not release them).
typedef struct sm_cl_state {
    /// float4 per particle: x, y, z (m) and w = the particle's mass (kg). A coordinate is the sum
    /// of this float and the matching one of position_low (a double-float pair); reading .xyz
    /// alone is accurate to about 1e-7 relative. To move particles in your own kernel (teleport,
    /// reset), write .xyz, keep .w, and write 0 into their position_low; or call
    /// sm_world_set_positions() or sm_world_reset_object() from the host.
    cl_mem position;
    cl_mem position_low;     ///< float4 per particle: the low parts of the coordinates, m; w = 0
    /// float4 per particle: m/s, w = 0. Your kernels may read and write it (a new velocity takes
    /// effect in the next step); fixed particles ignore it.
    cl_mem velocity;
    cl_mem goal;             ///< float4 per particle: the blended goal of the last step, m; w = 0 (read only)
    cl_mem surface_position; ///< float4 per surface vertex, m, w = 1, after the last step; NULL without surfaces
    cl_mem surface_normal;   ///< float4 per surface vertex: unit normal, w = 0; NULL without surfaces
    int32_t particle_count;       ///< particles in the buffers
    int32_t surface_vertex_count; ///< surface vertices in the buffers
} sm_cl_state;

/// The world's device state. Uploads the world first if it changed on the host (the one call here
/// that may wait); from then on the device buffers are the world's state.
SM_API sm_result sm_world_get_cl_state(sm_world *world, sm_cl_state *out);

/// Device buffers of the caller's that every step reads (sm_world_set_cl_inputs()). The world
/// retains them; each must hold a float4 per particle of the world when a step runs.
typedef struct sm_cl_inputs {
    /// float4 per particle: a force, N, added to the particle's external force (sm_world_set_force())
    /// in each step; w is ignored. NULL: none (default).
    cl_mem forces;
    /// float4 per particle: a kinematic target x, y, z (m) and w = its stiffness, as in
    /// sm_world_set_target(): > 0 N/m pulls, SM_TARGET_PIN (-1) pins, 0 ignores the particle.
    /// It replaces the host's targets while set. NULL: the host's targets (default).
    cl_mem targets;
    int32_t internal_value; ///< set by sm_cl_inputs_default(); do not touch
} sm_cl_inputs;

/// Inputs with no buffers.
SM_API sm_cl_inputs sm_cl_inputs_default(void);

/// Makes the following steps read `inputs` (replacing the previous ones; sm_cl_inputs_default()
/// removes them). The buffers must belong to the world's context.
SM_API sm_result sm_world_set_cl_inputs(sm_world *world, const sm_cl_inputs *inputs);

/// sm_world_step() on the device after the `wait_count` events of `wait_list` (may be 0 and
/// NULL); *out_event (may be NULL; release it with clReleaseEvent()) completes when the step's
/// last command has. Returns without waiting for the device, unless the world def asks to profile
/// (each step then waits for its commands' timings). Events that are not valid events of the
/// world's context are refused with SM_ERROR_INVALID_ARGUMENT, and nothing is enqueued.
SM_API sm_result sm_world_step_cl(sm_world *world, double dt, int32_t substeps, cl_uint wait_count,
                                  const cl_event *wait_list, cl_event *out_event);

/// The queue the world enqueues on (not retained for the caller).
SM_API cl_command_queue sm_world_get_cl_queue(const sm_world *world);

/// The world's OpenCL context (not retained for the caller).
SM_API cl_context sm_world_get_cl_context(const sm_world *world);

/// The world's OpenCL device.
SM_API cl_device_id sm_world_get_cl_device(const sm_world *world);

#ifdef __cplusplus
}
#endif

#endif
