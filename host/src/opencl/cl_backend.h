/* The OpenCL backend of a world: the state lives in device buffers; a step enqueues the passes
 * with no host synchronisation; the host reads back only what it is asked for.
 *
 * Who holds the state: after sm_cl_step() the device is ahead of the host arrays; queries read
 * the device directly; sm_cl_pull() brings the whole state back into the host arrays (before an
 * object is added, or to copy a world). Edits go to the host arrays and, where the device
 * buffers are current, straight to the device too; otherwise the next step uploads everything. */
#ifndef SM_CL_BACKEND_H
#define SM_CL_BACKEND_H

#include "../memory.h"
#include "../world.h"

typedef struct sm_cl_backend sm_cl_backend;

/// Opens the device `device` selects (see sm_world_def.device) and its program.
sm_result sm_cl_create(sm_world *world, const char *device);
/// Members from which the device reduces a cluster with a whole work-group (INT32_MAX: never).
int32_t sm_cl_large_threshold(const sm_world *world);
/// The device bytes of the buffers of a world of footprint f, all of them and (may be NULL) the
/// largest with the kind of buffer it is: the plan the buffers are made from, and the mesh
/// colliders' fields.
void sm_cl_plan_bytes(const sm_world *world, const sm_footprint *f, int64_t *out_total, int64_t *out_largest,
                      const char **out_kind);
/// What the world's device can hold: CL_DEVICE_GLOBAL_MEM_SIZE in all, CL_DEVICE_MAX_MEM_ALLOC_SIZE
/// in one buffer (each capped by $SM_DEVICE_MEMORY_LIMIT), whether its memory is the host's
/// (CL_DEVICE_HOST_UNIFIED_MEMORY), and where each bound comes from.
void sm_cl_device_memory(const sm_world *world, int64_t *out_global, int64_t *out_alloc, bool *out_unified,
                         const char **global_from, const char **alloc_from);
void sm_cl_destroy(sm_world *world);

/// "device name (platform)" of the world's device.
const char *sm_cl_device_name(const sm_world *world);

/// Runs `substeps` steps of length h on the device (uploading first if the host changed).
sm_result sm_cl_step(sm_world *world, double h, int32_t substeps);

/// Brings the device's state into the host arrays if the device is ahead.
sm_result sm_cl_pull(sm_world *world);

/// The host arrays are now the state and only a full upload carries them (objects added, state
/// copied): the device's state is discarded, so call sm_cl_pull() first to keep it.
void sm_cl_mark_host_changed(sm_world *world);

/// The host set the positions of particles [first, first + count): an upload splits them anew.
void sm_cl_forget_position_split(sm_world *world, int32_t first, int32_t count);
/// The rotations of clusters [first, first + count) were set on the host: an upload starts the
/// device's rotation from them rather than from the warm start it read back.
void sm_cl_forget_warm_starts(sm_world *world, int32_t first, int32_t count);
/// The clusters were renumbered (a cut): cluster c inherits the warm start of cluster from[c]
/// before (-1: none), for c < count.
void sm_cl_renumber_warm_starts(sm_world *world, const int32_t *from, int32_t count);
/// `target` takes the state `source` was read back with, where both run on OpenCL; else it
/// forgets its own (sm_world_copy_state()).
sm_result sm_cl_copy_device_split(sm_world *target, const sm_world *source);

/// Particle quantities a world can read or write on the device.
typedef enum sm_cl_field { SM_CL_POSITION, SM_CL_VELOCITY, SM_CL_GOAL, SM_CL_FORCE, SM_CL_TARGET } sm_cl_field;

/// Reads particles [first, first + count) of `field` into xyz (doubles); *done is false when
/// the host arrays hold the current values instead (nothing read).
sm_result sm_cl_read(const sm_world *world, sm_cl_field field, int32_t first, int32_t count, double *xyz, bool *done);

/// Writes the host arrays' particles [first, first + count) of `field` to the device where its
/// buffers are current, else arranges a full upload before the next step.
sm_result sm_cl_write(sm_world *world, sm_cl_field field, int32_t first, int32_t count);

/// Reads particles [first, first + count) of `field` as float4 straight into out; *done is false
/// when the host arrays hold the current values instead (nothing read).
sm_result sm_cl_read_float4(const sm_world *world, sm_particle_field field, int32_t first, int32_t count, float *out,
                           bool *done);

/// Writes object `object`'s parameters to the device where its buffers are current, else
/// arranges a full upload before the next step.
sm_result sm_cl_write_object(sm_world *world, int32_t object);

/// Whether the world's context is shared with its def's GL context; *reason says why not.
bool sm_cl_gl_sharing(const sm_world *world, const char **reason);
/// Creates the OpenCL image of GL buffer `gl_buffer` for `field` (0: none).
sm_result sm_cl_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer);
/// Acquires the shared GL buffers, copies the fields into them, releases them and waits.
sm_result sm_cl_copy_to_gl(sm_world *world);

/// The state check (waits for the device): the lowest index of a particle whose position or
/// velocity is not finite, of one faster than check_speed, and of a cluster stretched beyond
/// check_extent (step.c, check_state), each -1 when there is none.
sm_result sm_cl_check_state(sm_world *world, int32_t out_first[3]);

/// The reads and writes between host and device the world has enqueued, and their bytes.
void sm_cl_transfer_counts(const sm_world *world, int64_t *out_transfers, int64_t *out_bytes);
/// The kernels the world's steps have enqueued.
int64_t sm_cl_launch_count(const sm_world *world);

/// Reads the step state of one cluster (centre, R, T, S_p) into the host's cluster record when
/// the device is ahead.
sm_result sm_cl_read_cluster(const sm_world *world, int32_t cluster);

/* For the tests: one pass at a time on the current host state. */
/// Uploads the whole host state (particles, rest data and the clusters' step state).
sm_result sm_cl_push(sm_world *world);
/// Fills the buffers that pass `pass` writes (and does not read) with NaN.
sm_result sm_cl_poison_outputs(sm_world *world, sm_pass pass);
/// Enqueues one pass and waits for it.
sm_result sm_cl_run_pass(sm_world *world, sm_pass pass, double h);

#endif
