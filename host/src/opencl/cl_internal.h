/* What the OpenCL backend's files share: the backend record and its buffers. */
#ifndef SM_CL_INTERNAL_H
#define SM_CL_INTERNAL_H

#include "cl_backend.h"
#include "cl_program.h"

#include "../../../kernels/sm_shared.h"

_Static_assert(sizeof(sm_k_object) == 64, "sm_k_object must match the kernels' layout");
_Static_assert(sizeof(sm_k_cluster) == 32, "sm_k_cluster must match the kernels' layout");
_Static_assert(sizeof(sm_k_mat3) == 48, "sm_k_mat3 must match the kernels' layout");
_Static_assert(sizeof(sm_k_mat39) == 144, "sm_k_mat39 must match the kernels' layout");
_Static_assert(sizeof(sm_k_weights) == 36, "sm_k_weights must match the kernels' layout");
_Static_assert(sizeof(sm_k_cluster_rest) == 392, "sm_k_cluster_rest must match the kernels' layout");
_Static_assert(sizeof(sm_k_slot) == 32, "sm_k_slot must match the kernels' layout");
_Static_assert(sizeof(sm_k_box) == 32, "sm_k_box must match the kernels' layout");
_Static_assert(sizeof(sm_k_collider) == 128, "sm_k_collider must match the kernels' layout");
_Static_assert(sizeof(sm_k_collider_state) == 48, "sm_k_collider_state must match the kernels' layout");
_Static_assert(SM_K_COLLIDER_PLANE == SM_COLLIDER_PLANE && SM_K_COLLIDER_BOX == SM_COLLIDER_BOX &&
                   SM_K_COLLIDER_SPHERE == SM_COLLIDER_SPHERE,
               "kernel collider shapes must equal sm_collider_shape");
_Static_assert(SM_K_MODE_RIGID == SM_MODE_RIGID && SM_K_MODE_LINEAR == SM_MODE_LINEAR &&
                   SM_K_MODE_QUADRATIC == SM_MODE_QUADRATIC,
               "kernel mode numbers must equal sm_mode");

/// The device buffers, one per array of the kernels' signatures.
typedef struct sm_cl_buffers {
    // objects and clusters
    cl_mem objects, clusters, cluster_rest, plastic;
    // the clusters of at least SM_K_LARGE_CLUSTER members (reduced by a work-group each)
    cl_mem large_clusters;
    // the clusters' step state (fit9: the quadratic fit ~A_pq ~A_qq)
    // x_cm = center + center_offset (an anchor and a small offset, see sm_shared.h)
    cl_mem center, center_offset, cluster_velocity, apq, fit9, quat, rotation, linear_fit, transform;
    // quadratic worlds: Z per cluster, the fit's share of R where ~A_qq is singular (step 3)
    cl_mem null_fit;
    // per cluster, the mean b~ of its float rest offsets (sm_k_bias), whose goal offset T b~ the
    // goal-transform pass writes beside T and the blend pass takes off
    cl_mem goal_bias;
    // the spin limit's sums (step 3a): per cluster, two float4s, written at the head of each chunk
    // of its object's clusters (sm_motion_chunk) by pass 2: the chunk's mass-weighted centres,
    // relative to the object's first cluster's centre, with their mass in w, and its mass-weighted
    // flows; per object, two float4s written by pass 3: the mean centre (relative to the same
    // centre) and flow that it added up from the chunks
    cl_mem cluster_motion, object_motion;
    // memberships (CSR, cluster order); member_w: quadratic weights ~A_qq q~; member_slot: where
    // each membership sits in particle order
    cl_mem member_particle, member_slot, member_q, member_rest, member_w;
    // particles and their memberships in particle order (CSR: particle_member_q holds each
    // membership's q~ with its cluster's index in w, as_int, so that the goal pass reads them in a
    // row); positions are double-float pairs: position (w: mass) + position_lo
    cl_mem position, position_lo, velocity, goal, force, particle_object, particle_member_offsets, particle_member_q;
    // each free particle's velocity at the start of the solver step, and in w how far x - h v may
    // lie from where it began it (pass 4 writes them, pass 7 reads them)
    cl_mem step_start;
    // the collide passes: contact = (rest position, radius) per particle; the grid (each
    // particle's bucket and rank in it, the bucket counts, the buckets' beginnings and objects:
    // sm_k_bucket, the scan's tiles (kernels/05's sm_grid_scan), the memberships (particle,
    // object) in the order of arrival, the slots: sm_k_slot, and two boxes a slot: sm_k_box, its
    // chunk's and its run's where it begins them);
    // each particle's candidates and their number (kernels/06); the corrections of the sweeps so
    // far (two buffers, read and written in turn) and the first sweep's velocity changes
    cl_mem contact, particle_bucket, bucket_count, buckets, scan_tiles, members, slot_boxes, slots, candidates, candidate_count;
    cl_mem contact_moved[2], contact_dv;
    // the colliders' shapes, and their state in each step of one sm_cl_step() (step-major)
    cl_mem colliders, collider_state;
    cl_mem collider_fields; ///< the mesh colliders' distance fields, one after another (a float at least)
    // the host's targets (sm_world_set_target()), made when the first is set
    cl_mem target;
    // the state check's answer: the lowest index of a non-finite particle
    cl_mem check_flag;
    // skinned surfaces (world.h): the bindings (CSR by vertex), triangles and the triangles around
    // each vertex (CSR), the clusters' centres after the step, and the vertices and normals
    cl_mem surface_binding_offsets, surface_binding_cluster, surface_binding_rest, surface_triangles,
        surface_incident_offsets, surface_incident, skin_center, skin_center_offset, surface_position, surface_normal;
} sm_cl_buffers;

/// The kernels, in pipeline order; a pass may take several.
typedef enum sm_cl_kernel {
    SM_CLK_CLUSTER_MOMENTS,
    SM_CLK_CLUSTER_MOMENTS_GROUP,
    SM_CLK_ROTATION,
    SM_CLK_GOAL_TRANSFORM,
    SM_CLK_BLEND_INTEGRATE,
    SM_CLK_GRID_COUNT,
    SM_CLK_GRID_SCAN,
    SM_CLK_GRID_SCATTER,
    SM_CLK_GRID_RUNS,
    SM_CLK_FIND_CONTACTS,
    SM_CLK_COLLIDE,
    SM_CLK_GROUND,
    SM_CLK_PLASTICITY,
    SM_CLK_SKIN_CENTERS,
    SM_CLK_SKIN_VERTICES,
    SM_CLK_SKIN_NORMALS,
    SM_CLK_CHECK_PARTICLES,
    SM_CLK_CHECK_CLUSTERS,
    SM_CLK_COUNT
} sm_cl_kernel;

/// What a device buffer's size scales with (sm_memory).
typedef enum sm_cl_memory_kind {
    SM_CL_MEM_PARTICLES,
    SM_CL_MEM_MEMBERSHIPS,
    SM_CL_MEM_CLUSTERS,
    SM_CL_MEM_SURFACES,
    SM_CL_MEM_CONTACT,
    SM_CL_MEM_KINDS
} sm_cl_memory_kind;

/// Fields that can be copied into GL buffers (sm_particle_field).
#define SM_CL_GL_FIELDS 5

/// Most commands one step enqueues (for profiling): the passes' kernels and buffer fills, with
/// the largest number of collision sweeps.
#define SM_CL_MAX_STEP_COMMANDS (SM_CLK_COUNT + 3 + 64)

struct sm_cl_backend {
    sm_cl_device *device;
    cl_command_queue queue;
    cl_kernel kernels[SM_CLK_COUNT];
    size_t group[SM_CLK_COUNT]; ///< work-group size of each kernel
    sm_cl_buffers buffers;
    // profiling: the events of the commands enqueued in this step, the pass and kernel of each
    // (SM_CLK_COUNT: not a kernel), and each kernel's milliseconds so far
    int32_t event_count;
    cl_event events[SM_CL_MAX_STEP_COMMANDS];
    sm_pass event_pass[SM_CL_MAX_STEP_COMMANDS];
    int event_kernel[SM_CL_MAX_STEP_COMMANDS];
    double kernel_ms[SM_CLK_COUNT];
    int32_t objects_on_device;  ///< objects the buffers were made for; -1: none yet
    int32_t particles_on_device, clusters_on_device, memberships_on_device;
    bool any_quadratic, any_plastic;
    bool host_changed;          ///< the next step must upload everything first
    // sharing with OpenGL: whether the context is shared, why not, and the GL buffers per field
    bool gl_sharing;
    char gl_reason[256];
    cl_mem gl_buffers[SM_CL_GL_FIELDS];
    bool device_ahead;          ///< the device has stepped since the host arrays were filled
    int32_t colliders_on_device;      ///< colliders the colliders buffer holds; -1: none made
    int32_t collider_state_capacity;  ///< states the collider_state buffer holds
    int32_t substep;                  ///< the step of the current sm_cl_step() being enqueued
    bool contacts_pending;            ///< pass 6 ran and its corrections await pass 7 (sm_ground applies them)
    bool throttle;                    ///< the step in progress waits for its solver steps two back (cl_world.c)
    cl_event markers[2];              ///< the ends of the last two solver steps enqueued, the older first
    int32_t target_capacity;          ///< particles the target buffer holds
    int32_t large_count;              ///< clusters in large_clusters
    int32_t static_states_written;    ///< steps of states the collider_state buffer holds for static colliders (0: none)
    int32_t large_threshold;          ///< members from which a cluster is reduced by a work-group
    bool gpu_launches;                ///< kernels launch as on a GPU (cl_passes.c, sm_cl_create_kernels())
    bool scramble_arrival;            ///< the grid's counts take the particles in a scrambled order (cl_passes.c)
    int64_t launches;                 ///< kernels enqueued by the steps so far
    // the device's state where float does not round-trip through the host's doubles, as last
    // read back, uploaded again as it was so that a read-back and an upload change nothing:
    // 3 per particle, the high floats of its position pair (NaN: none, or the host set the
    // position since; an upload splits a position the same way when it still adds up), and per
    // cluster the warm start of its rotation, a unit quaternion (x NaN: none, from R)
    float *position_hi;
    cl_float4 *warm_start;
    int32_t position_hi_count, warm_start_count; ///< particles and clusters they hold
    // the caller's device inputs (sm_world_set_cl_inputs()), retained; NULL: none
    cl_mem input_force, input_target;
    // reads and writes between host and device enqueued so far (a cache-like count: also
    // updated by queries on a const world)
    int64_t transfers, transfer_bytes;
    int64_t memory[SM_CL_MEM_KINDS]; ///< bytes of the layout's buffers by kind
};

/// Counts one transfer of `bytes` between host and device.
static inline void sm_cl_count_transfer(const sm_cl_backend *cl, size_t bytes)
{
    sm_cl_backend *counted = (sm_cl_backend *)cl; // the counters are not the world's state
    counted->transfers++;
    counted->transfer_bytes += (int64_t)bytes;
}

/// The low half of the double-float pair of x: x - (float)x, rounded to float. The float is read
/// back through a volatile: at -O2, GCC 12 vectorizes two neighbouring coordinates and its value
/// numbering (FRE) then folds the vector (double)(float)x to x, which zeroed the low halves of x
/// and y of every position, cluster centre, collider and pusher sent to the device.
static inline float sm_cl_low_half(double x)
{
    volatile float hi = (float)x;
    return (float)(x - hi);
}

/* cl_buffers.c */
/// Makes a device buffer of `count` elements of `element` bytes (one element when count is 0).
sm_result sm_cl_make_buffer(sm_cl_backend *cl, cl_mem *out, size_t element, int64_t count);
/// Releases every device buffer (the colliders' and the targets' too) and forgets what they held.
void sm_cl_release_buffers(sm_cl_backend *cl);
/// Fails with SM_ERROR_OUT_OF_MEMORY when `total` bytes of buffers (a `what` one of `largest`) do not fit.
sm_result sm_cl_check_device_memory(const sm_world *world, int64_t total, int64_t largest, const char *what);
/// Whether any object is quadratic, and any plastic (their buffers are made only then).
void sm_cl_mode_mix(const sm_world *world, bool *quadratic, bool *plastic);
/// Makes the world's buffers anew from the layout, once the whole layout is known to fit the device.
sm_result sm_cl_make_buffers(sm_world *world);

/* cl_transfer.c */
/// One blocking read of `count` elements of `element` bytes from element `first` of `buffer`
/// (counted as a transfer).
sm_result sm_cl_read_buffer(const sm_cl_backend *cl, cl_mem buffer, size_t element, int64_t first, int64_t count,
                            void *data);
/// Fills `count` elements of `size` bytes from element `first` of `buffer` with `pattern`, on
/// the device (not a transfer); `event` may be NULL.
sm_result sm_cl_fill_buffer(const sm_cl_backend *cl, cl_mem buffer, const void *pattern, size_t size, int64_t first,
                            int64_t count, cl_event *event);
/// Whether the device buffers hold every particle of the world.
bool sm_cl_buffers_current(const sm_cl_backend *cl, const sm_world *world);
/// The buffer of a public particle or surface field (its float4 layout is the buffer's).
cl_mem sm_cl_particle_field_buffer(const sm_cl_backend *cl, sm_particle_field field);
/// Makes the target buffer hold every particle once the world has targets; *made says whether it was.
sm_result sm_cl_ensure_targets(sm_world *world, bool *made);
/// Uploads the colliders' shapes when colliders were added since the last upload.
sm_result sm_cl_upload_colliders(sm_world *world);
/// Writes where each collider is at the end of each of the next `substeps` steps of length h, without waiting.
sm_result sm_cl_write_collider_states(sm_world *world, double h, int32_t substeps);

/* cl_world.c */
/// sm_cl_step() after the caller's events; *out_event (may be NULL) receives an event that
/// completes with the step's last command.
sm_result sm_cl_step_events(sm_world *world, double h, int32_t substeps, cl_uint wait_count, const cl_event *wait_list,
                            cl_event *out_event);
/// Uploads what changed on the host (everything, the colliders) before device work is enqueued.
sm_result sm_cl_prepare(sm_world *world);
/// Releases the events kept while profiling; with `add`, first adds each command's device time to its pass.
void sm_cl_collect_events(sm_world *world, bool add);

/* cl_passes.c */
/// Creates the kernels of the world's program.
sm_result sm_cl_create_kernels(sm_cl_backend *cl);
/// Enqueues pass `pass` for a step of length h; with profiling on, the events of its commands
/// are kept in cl->events.
sm_result sm_cl_enqueue_pass(sm_world *world, sm_pass pass, float h);
/// The work-groups of the grid's scan over a table of `table` buckets: one per SM_K_SCAN_TILE of
/// its beginnings (table + 1 of them).
static inline int64_t sm_cl_scan_groups(int64_t table) { return (table + SM_K_SCAN_TILE) / SM_K_SCAN_TILE; }
/// The name of kernel `kernel` (sm_cl_kernel), for the profile.
const char *sm_cl_kernel_name(int kernel);
/// Pass 7's first part alone: the corrections of the contact pass just enqueued (the tests run
/// pass 6 on its own with it).
sm_result sm_cl_enqueue_contact_corrections(sm_world *world, float h);

#endif
