/* shapematch: soft bodies by meshless shape matching (Mueller, Heidelberger, Teschner &
 * Gross, SIGGRAPH 2005).
 *
 * Step by step
 *   1. sm_world_def wd = sm_world_def_default();   gravity, ground, backend, log callback
 *   2. sm_world *world; sm_world_create(&wd, &world);
 *   3. sm_object_def od = sm_object_def_default(); fill shape, mass, mode, clusters, ...
 *      sm_world_add_object(world, &od, NULL);      once per object
 *   4. sm_world_step(world, 1.0 / 60.0, 1);        once per frame
 *   5. sm_world_get_positions(world, 0, n, xyz);   read back when needed (on OpenCL, the
 *                                                  only moment the host waits for the device)
 *   6. sm_world_destroy(world);
 * A scene file does steps 1-3: sm_scene_load_file(), then sm_scene_create_world().
 *
 * Units are SI (m, kg, s, N); y is up. Every call that can fail returns an sm_result;
 * sm_last_error() then says what went wrong in a sentence. The library never prints and
 * never exits: notices go through the log callback of the world def.
 * Defs must come from their default constructor: a zeroed struct is rejected, because the
 * physical defaults are not zero.
 *
 * Threads
 *   - A world is used by one thread at a time (calls on one world are not synchronised); different
 *     worlds are independent and may run on different threads at once.
 *   - An OpenCL world enqueues all of its device work on one in-order queue, its own or the
 *     caller's (sm_world_def.opencl); it never makes a second one. Give each world its own queue
 *     when worlds run on different threads: a world waits for its queue (in its reads, blocking
 *     writes and sm_world_destroy()), and on a shared queue that is waiting for the other
 *     worlds' work too.
 *   - The GL calls (sm_world_share_gl_buffer(), sm_world_copy_to_gl()) run on the thread whose GL
 *     context is current.
 *   - Scene files are parsed by cJSON, whose parser keeps global state: load scenes from one
 *     thread at a time.
 * Inside a GPU pipeline (the caller's context, queue, events and device buffers): see
 * shapematch_opencl.h. */
#ifndef SHAPEMATCH_H
#define SHAPEMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(SM_BUILD_SHARED)
#define SM_API __declspec(dllexport)
#elif defined(__GNUC__)
#define SM_API __attribute__((visibility("default")))
#else
#define SM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SM_VERSION_MAJOR 0
#define SM_VERSION_MINOR 1
#define SM_VERSION_PATCH 0

/* ---- Basic types ------------------------------------------------------------------- */

/// A 3-vector of doubles (m, m/s, N or rad/s, as the field says).
typedef struct sm_vec3 {
    double x, y, z; ///< x, y, z components
} sm_vec3;

/// A 3x3 matrix of doubles, row-major: m[row][column].
typedef struct sm_mat3 {
    double m[3][3]; ///< m[row][column]
} sm_mat3;

/// Result of every call that can fail. sm_last_error() holds the sentence behind it.
typedef enum sm_result {
    SM_OK = 0, ///< success
    SM_ERROR_INVALID_ARGUMENT, ///< an argument or def field is out of range
    SM_ERROR_OUT_OF_MEMORY,    ///< an allocation failed
    SM_ERROR_IO,               ///< a file could not be opened, read or written
    SM_ERROR_SCENE,            ///< a scene file is malformed or holds a bad value
    SM_ERROR_UNAVAILABLE,      ///< the requested backend or device is not available, or the device failed
    SM_ERROR_NOT_FINITE,       ///< the state check found a particle with a non-finite position or velocity (sm_world_def.check_interval)
    SM_ERROR_DIVERGED,         ///< the state check found a cluster stretched beyond check_extent or a particle faster than check_speed
    SM_ERROR_CANCELLED,        ///< sm_world_cancel() stopped the step between two of its solver steps
} sm_result;

/// Short constant name of a result code, e.g. "SM_ERROR_SCENE".
SM_API const char *sm_result_name(sm_result result);

/// The message of the last failed call on this thread ("" if none failed yet). Messages are safe
/// to print on a terminal: the text they quote from files and arguments is escaped as by
/// sm_printable().
SM_API const char *sm_last_error(void);

/// Copies `text` into `out` (at most size - 1 bytes and a NUL) made safe to print on a terminal:
/// control characters (but newline and tab), DEL, C1 controls and bytes that are not UTF-8
/// become \xNN, so that quoted input cannot move the cursor, clear the screen or recolour it.
/// Returns out.
SM_API char *sm_printable(const char *text, char *out, size_t size);

/// Severity of a log message.
typedef enum sm_log_level {
    SM_LOG_ERROR, ///< a call failed or a result cannot be trusted
    SM_LOG_WARNING, ///< something was degraded or replaced (e.g. a cluster that supports fewer modes)
    SM_LOG_NOTICE, ///< information (the device chosen, a program built)
} sm_log_level;

/// Receives the library's messages; `user` is the pointer given in the world def.
typedef void sm_log_fn(sm_log_level level, const char *message, void *user);

/* ---- World ------------------------------------------------------------------------- */

/// Which implementation of the time step runs the world.
typedef enum sm_backend {
    SM_BACKEND_DEFAULT = 0, ///< OpenCL when a device is available, else the CPU reference (with a warning in the log)
    SM_BACKEND_CPU,         ///< the CPU reference, double precision
    SM_BACKEND_OPENCL,      ///< an OpenCL device, float precision; creating the world fails if there is none
} sm_backend;

/// Optional ground plane y = height that particles cannot go below.
typedef struct sm_ground {
    bool enabled;       ///< default false
    double height;      ///< m, default 0
    /// in [0, 1]: fraction of the normal speed kept on impact, of the speed the particle or its
    /// body (its clusters) began the solver step falling at where less, default 0.3
    double restitution;
    /// in [0, 1], Coulomb's coefficient: the fraction of the tangential velocity a solver step in
    /// contact removes, but no more than friction times the normal speed the ground took away,
    /// and at most alpha x its clusters' size / h, the speed its shape matching gives back in a
    /// step from one size away (the friction limit, docs/algorithm.md step 7); default 0.2
    double friction;
} sm_ground;

/// Contact between the particles of different objects (the collide passes). Each particle is a
/// sphere of its object's particle radius; particles closer than the sum of their radii are
/// pushed apart along the line between them, and their approach is stopped with restitution
/// and friction. A particle should not travel more than its radius in one solver step (speed
/// x dt / substeps < radius), or it can pass through thin objects: raise `substeps` for fast ones.
typedef struct sm_collisions {
    bool enabled;        ///< default false
    int32_t iterations;  ///< position-correction sweeps per solver step, 1 to 64, default 2
    /// Default particle radius, as a multiple of half the object's lattice spacing (so 1 makes
    /// neighbouring particles touch at rest), default 1. Objects may override it.
    double radius_scale;
    double restitution;  ///< in [0, 1]: fraction of the approach speed kept after a contact, default 0.2
    /// In [0, 1], default 0.3: Coulomb's coefficient between particles. A contact takes back the
    /// pair's sliding over the solver step while it is within friction times the overlap it
    /// pushes out (static), else that much of it (kinetic).
    double friction;
    /// Each particle moves by this many times the depth-weighted mean of its contacts'
    /// corrections, in [1, 2], default 1.5. Above 1 a soft body carries load at few substeps
    /// (it gives way under a contact, and the extra push makes up for it), but an isolated pair
    /// overshoots and separates with speed: a column of stiff bodies then bounces. Columns and
    /// towers of stiff or rigid bodies want 1 and enough substeps (docs/contact.md).
    double relaxation;
    /// m/s: the fastest a pair's overlap at the start of a solver step is pushed out, default 3
    /// (> 0). Overlap that the step's own motion makes is removed whole; overlap that was
    /// already there (bodies placed inside each other, or pushed in) goes at this speed, so
    /// that nothing is launched. The ground and the colliders push particles out of them the
    /// same way, with contact off too (so it is checked whether or not `enabled`).
    double push_speed;
} sm_collisions;

/// The OpenGL context an OpenCL world may share buffers with (cl_khr_gl_sharing), set in the
/// world def before sm_world_create(). Sharing is used only when the world's device lists
/// cl_khr_gl_sharing in its extensions and reports itself as the device of that GL context;
/// otherwise the world runs as usual and sm_world_gl_sharing() says why not.
typedef struct sm_gl_context {
    void *context; ///< GLXContext, or EGLContext with egl; NULL: no sharing (default)
    void *display; ///< Display * (X11), or EGLDisplay with egl
    bool egl;      ///< the context is EGL's, default false (GLX)
} sm_gl_context;

/// OpenCL objects of the caller's for an OpenCL world to run on (shapematch_opencl.h). All NULL
/// (the default): the world opens its own device (sm_world_def.device). `queue` alone: the
/// world runs on it, in its context and on its device. `context` (and optionally `device`, else
/// the context's first) without a queue: the world makes its one queue there. The world retains
/// what it is given and releases it when destroyed. The queue must execute in order (no
/// CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), and have CL_QUEUE_PROFILING_ENABLE if the def asks to
/// profile. The types are OpenCL's cl_context, cl_device_id and cl_command_queue.
typedef struct sm_opencl_objects {
    struct _cl_context *context; ///< cl_context, or NULL
    struct _cl_device_id *device; ///< cl_device_id, or NULL (the context's first device, or the queue's)
    struct _cl_command_queue *queue; ///< cl_command_queue, or NULL (the world makes one in `context`)
} sm_opencl_objects;

/// Everything a world needs at creation. Get one from sm_world_def_default().
typedef struct sm_world_def {
    sm_vec3 gravity;    ///< m/s^2, default (0, -9.81, 0)
    sm_ground ground;   ///< default disabled
    sm_collisions collisions; ///< contact between objects, default disabled
    sm_backend backend; ///< default SM_BACKEND_DEFAULT
    /// OpenCL device: an index into sm_opencl_devices()' list or part of a device or platform
    /// name (case-insensitive). NULL or "": $SM_DEVICE, else the first GPU, else the first device.
    /// A device that is named (here or by $SM_DEVICE) and not found fails sm_world_create() with
    /// SM_ERROR_INVALID_ARGUMENT, whatever the backend: it never falls back to the CPU
    /// reference; naming one for SM_BACKEND_CPU, or with the caller's OpenCL objects (`opencl`,
    /// which choose the device; $SM_DEVICE is then not read), is an error too.
    /// $SM_WORK_GROUP_SIZE, a power of two, sets the work-group size of the kernels that run a
    /// work-item per particle, cluster or vertex (default 64, or a kernel's limit when lower),
    /// which changes no result. When the device or a kernel cannot run groups of that size, the
    /// OpenCL backend is refused as if there were no device (the error names the variable).
    const char *device;
    /// OpenCL: time every pass with device events; each step then waits for the device.
    /// Default false (the CPU reference always times its passes).
    bool profile;
    /// Every this many sm_world_step() calls, check the state (on OpenCL two device passes and one
    /// 12-byte read, which waits for the device): a particle whose position or velocity is not
    /// finite stops that step with SM_ERROR_NOT_FINITE, and a particle faster than check_speed or
    /// a cluster stretched beyond check_extent with SM_ERROR_DIVERGED; the message names the
    /// particle or cluster, its object, the step and the figure, and the world keeps the state it
    /// reached. 0: never (default; `shapematch run` checks every 60).
    int32_t check_interval;
    /// The state check's bound on stretch: a cluster one of whose particles lies farther from its
    /// centre of mass than check_extent times its object's strain_limit times its size (its
    /// largest rest offset) has diverged. The deformation limit keeps clusters within about 2
    /// strain_limit sizes. Default 10; 0: not checked.
    double check_extent;
    /// The state check's bound on speed, m/s: a particle faster has diverged. Default 1e5; 0: not
    /// checked.
    double check_speed;
    /// Bytes the world may use on the host, and on an OpenCL device. sm_world_add_object() and
    /// sm_scene_create_world() estimate what objects need before sampling them (see
    /// sm_memory_estimate: exact on the device, the host's peak between 0.75 and 1.1 times its
    /// estimate) and refuse with SM_ERROR_OUT_OF_MEMORY, naming the figures, what would exceed
    /// it. 0 (default): $SM_MEMORY_BUDGET (a byte count such as
    /// 64G, K/M/G/T being powers of 1024, or "none"), else the host's available memory
    /// (MemAvailable) and the device's global memory. A device buffer larger than the device's
    /// largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is refused whatever the budget. Where the
    /// device's memory is the host's (CL_DEVICE_HOST_UNIFIED_MEMORY: CPU devices) both count
    /// against the host.
    int64_t memory_budget;
    /// OpenCL: the GL context to share buffers with (see sm_world_gl_sharing()), default none.
    sm_gl_context gl;
    /// OpenCL: the caller's context, device and queue to run on, default none (the world opens
    /// its own). Implies the OpenCL backend; not together with `gl`.
    sm_opencl_objects opencl;
    sm_log_fn *log;     ///< receives notices (e.g. a cluster that supports fewer modes); may be NULL
    void *log_user;     ///< passed back to `log`
    int32_t internal_value; ///< set by sm_world_def_default(); do not touch
} sm_world_def;

/// A world def with every field at its documented default.
SM_API sm_world_def sm_world_def_default(void);

/// A simulation: particles grouped in objects, objects in clusters.
typedef struct sm_world sm_world;

/// Creates an empty world. On success *out_world owns it; free it with sm_world_destroy().
SM_API sm_result sm_world_create(const sm_world_def *def, sm_world **out_world);

/// Frees the world and everything it holds. NULL is allowed.
SM_API void sm_world_destroy(sm_world *world);

/* ---- Objects ----------------------------------------------------------------------- */

/// The goal transform of an object's clusters (paper sections 3.3, 4.2, 4.3).
typedef enum sm_mode {
    SM_MODE_RIGID,     ///< goals are a rotation of the rest shape
    SM_MODE_LINEAR,    ///< beta blends the best linear fit with the rotation
    SM_MODE_QUADRATIC, ///< beta blends the best quadratic fit with the rotation
} sm_mode;

/// Where an object's particles come from. Procedural shapes are sampled as a lattice of
/// particles inside the shape, centred on the object's frame.
typedef enum sm_shape_type {
    SM_SHAPE_POINTS,  ///< an explicit list of points
    SM_SHAPE_BOX,     ///< a box lattice with `resolution` particles per edge
    SM_SHAPE_SPHERE,  ///< lattice points within `radius`
    SM_SHAPE_CAPSULE, ///< lattice points within `radius` of a segment of `length` along x (a stick)
    SM_SHAPE_TORUS,   ///< lattice points within `minor_radius` of a circle of `major_radius` in the xz plane
    SM_SHAPE_MESH,    ///< a triangle mesh: its vertices, or a lattice inside it (`mesh_particles`)
} sm_shape_type;

/// Where a mesh shape's particles come from.
typedef enum sm_mesh_particles {
    SM_MESH_PARTICLES_VERTICES, ///< one particle per mesh vertex
    /// the points of a cubic lattice of `spacing` (centred on the object's origin) inside the
    /// closed mesh, by its generalised winding number (above 0.5: inside)
    SM_MESH_PARTICLES_LATTICE,
} sm_mesh_particles;

/// The particles of an object, in the object's own frame.
typedef struct sm_shape {
    sm_shape_type type;     ///< default SM_SHAPE_BOX
    sm_vec3 size;           ///< box: edge lengths, m, default (1, 1, 1)
    int32_t resolution[3];  ///< box: particles along x, y, z (>= 1), default (4, 4, 4)
    double radius;          ///< sphere and capsule: m, default 0.5
    double length;          ///< capsule: distance between the two cap centres along x, m, default 1
    double major_radius;    ///< torus: from the centre to the tube's centre line, m, default 0.5
    double minor_radius;    ///< torus: tube radius, m, default 0.2
    double spacing;         ///< sphere, capsule, torus: lattice spacing, m, default 0.25
    const sm_vec3 *points;  ///< points: positions in the object's frame, m (copied)
    const double *point_masses; ///< points: optional mass of each point in [1e-30, 1e12] kg, summing to at
                                ///< most 1e12 kg (copied); NULL: `mass` split equally
    int32_t point_count;    ///< points: number of points
    const sm_vec3 *mesh_vertices;  ///< mesh: vertices in the object's frame, m (copied)
    int32_t mesh_vertex_count;     ///< mesh: number of vertices
    const int32_t *mesh_triangles; ///< mesh: 3 vertex indices per triangle (copied)
    int32_t mesh_triangle_count;   ///< mesh: number of triangles
    sm_mesh_particles mesh_particles; ///< mesh: default SM_MESH_PARTICLES_VERTICES
} sm_shape;

/// A triangle surface drawn over an object and moved by its clusters (docs/algorithm.md
/// step 9): each vertex is bound, at creation, to the clusters of the particle nearest to it
/// at rest, with its offset from each cluster's rest centre; after every sm_world_step() it is
/// placed at the mean over those clusters of T q~ + c, with T the cluster's goal transform of the
/// last step, q~ the quadratic terms of its plastic rest offset S_p (v0 - x0_cm) and c the
/// cluster's centre of mass after the step; vertex normals are the normalised sums of the
/// incident triangles' area-weighted normals.
typedef struct sm_surface {
    /// Vertices in the object's frame (placed like its particles), m (copied); NULL: no surface,
    /// except that a mesh shape then uses its own mesh (set `enabled` false to prevent it).
    const sm_vec3 *vertices;
    int32_t vertex_count; ///< number of vertices
    const int32_t *triangles;  ///< 3 vertex indices per triangle, counter-clockwise from outside (copied)
    int32_t triangle_count; ///< number of triangles
    bool enabled;              ///< default true
} sm_surface;

/// How an object is divided into clusters (paper section 4.4).
typedef struct sm_cluster_def {
    int32_t grid[3];  ///< cells along x, y, z over the rest bounding box, default (1, 1, 1)
    double overlap;   ///< each cell grows by overlap * cell size on every side, default 0.25
    /// Explicit clusters instead of a grid, in CSR form: cluster k holds the particle indices
    /// list_indices[list_offsets[k] .. list_offsets[k + 1]) of the object. NULL: use the grid.
    const int32_t *list_offsets;
    const int32_t *list_indices; ///< see list_offsets (copied)
    int32_t list_count;          ///< number of explicit clusters
} sm_cluster_def;

/// Plastic deformation (paper section 4.5); linear and quadratic modes only.
typedef struct sm_plasticity {
    bool enabled;  ///< default false
    double yield;  ///< ||S - I||_F above which the rest shape creeps, default 0.1
    /// Rate at which the rest shape follows the deformation, 1/s, default 5; creep h counts as
    /// at most 1 (a step follows the deformation at most all the way).
    double creep;
    /// Bound on ||S_p - I||_F before the volume normalisation, default 0.5; after it the
    /// strain stays below max + 0.5 max^3 for max <= 0.5. Whatever max, the plastic rest shape
    /// stretches within [1/s, s] (s the object's strain_limit), and an update that would take
    /// det(S_p) to 0.001 or below before the normalisation is skipped.
    double max;
} sm_plasticity;

/// Soft cap on the linear deformation (Henriques & Wuensche 2007, 3.1.2 method 3).
typedef struct sm_cap {
    bool enabled;  ///< default false
    double soft;   ///< ||A||_F^2 above which A is pulled toward R (>= 3), default 4
    /// Limit of the capped measure phi' (> soft), default 6. The blended A stays below
    /// (sqrt(hard) + sqrt(3))^2 in ||A||_F^2 and tends to R as the stretch grows.
    double hard;
} sm_cap;

/// How one object takes part in contact (when the world's collisions are enabled).
typedef struct sm_object_collisions {
    bool enabled;        ///< default true: its particles collide with other objects' particles
    /// Also collide with its own particles, default false. Pairs closer than 1.5 times the sum
    /// of their radii at rest (neighbours in the rest shape) never collide with each other.
    bool self;
    double radius;       ///< particle radius, m; 0 (default): radius_scale x lattice spacing / 2
    double radius_scale; ///< > 0: overrides the world's radius_scale for this object; 0 (default): the world's
} sm_object_collisions;

/// Everything that defines one object. Get one from sm_object_def_default().
typedef struct sm_object_def {
    const char *name;          ///< optional label (copied), default NULL
    sm_shape shape;            ///< default a 1 m box of 4x4x4 particles
    sm_vec3 position;          ///< m, where the shape's origin is placed, default 0
    sm_vec3 rotation;          ///< degrees about x, then y, then z (R = Rz Ry Rx), default 0
    sm_vec3 linear_velocity;   ///< m/s, default 0
    sm_vec3 angular_velocity;  ///< rad/s about the object's centre of mass, default 0
    double mass;               ///< total mass, kg, in [1e-12, 1e12], default 1
    sm_mode mode;              ///< default SM_MODE_LINEAR
    double alpha;              ///< stiffness in [0, 1]: fraction of the way to the goal per step, default 0.5
    double tau;                ///< s; when > 0, alpha = min(1, h / tau) for step length h, default 0 (use alpha)
    double beta;               ///< in [0, 1]: weight of the linear or quadratic fit against R, default 0.5
    bool volume_preservation;  ///< goals keep the rest volume: the nearest fit of determinant 1, default true
    bool volume_by_scaling;    ///< with volume_preservation, the paper's A / cbrt(det A) instead, default false
    sm_cluster_def clusters;   ///< default one cluster of the whole object
    sm_plasticity plasticity;  ///< default off
    sm_cap cap;                ///< default off
    /// The deformation limit s, in [1, 10], default 2: each cluster's goal is the nearest, in the
    /// cluster's mass-weighted metric, whose principal radii of gyration lie within [1/s, s]
    /// times the rest shape's (for a cluster as wide as long, every stretch within [1/s, s]) and
    /// whose quadratic part moves the members by at most s - 1 times the rest shape's RMS radius,
    /// and a plastic rest shape stretches within [1/s, s] (docs/algorithm.md, step 3). It bounds
    /// every object's deformation whatever the other parameters; a goal within the limit is not
    /// changed. 1 gives the goals the rest shape's radii of gyration (rigid, for clusters as wide
    /// as long).
    double strain_limit;
    double damping;            ///< velocity damping, 1/s, default 0
    const int32_t *fixed;      ///< indices of particles that never move (copied)
    int32_t fixed_count;       ///< number of fixed indices
    sm_vec3 force;             ///< constant external force on the object, N, spread over its particles by mass
    sm_object_collisions collisions; ///< contact settings, default: collides, no self-collision, radius from the spacing
    sm_surface surface;        ///< skinned surface, default none (a mesh shape's own mesh)
    int32_t internal_value;    ///< set by sm_object_def_default(); do not touch
} sm_object_def;

/// An object def with every field at its documented default.
SM_API sm_object_def sm_object_def_default(void);

/// Adds an object; its particles are appended after those already in the world, in the
/// shape's own order. *out_object (may be NULL) receives its index. On OpenCL, whose kernels
/// compute in float, values beyond the float range (3.4e38) are refused, and so are clusters too
/// small for its normal floats (docs/opencl.md, "Float range").
SM_API sm_result sm_world_add_object(sm_world *world, const sm_object_def *def, int32_t *out_object);

/* ---- Stepping ---------------------------------------------------------------------- */

/// Advances the world by dt seconds in `substeps` equal steps of h = dt / substeps, h in [1e-9, 10] s.
/// On OpenCL the first step after objects are added makes the device buffers: when they would not
/// fit the device (CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_MAX_MEM_ALLOC_SIZE, or $SM_DEVICE_MEMORY_LIMIT
/// bytes), it fails with SM_ERROR_OUT_OF_MEMORY giving the bytes needed and available, and the
/// world holds no device memory.
SM_API sm_result sm_world_step(sm_world *world, double dt, int32_t substeps);

/// Asks the world to stop stepping: the sm_world_step() in progress, or else the next one,
/// returns SM_ERROR_CANCELLED before its next solver step, and the world stays as the solver
/// steps it completed left it (its time included; on OpenCL those already enqueued run, and
/// sm_world_step() enqueues its solver steps at most two ahead of the device, so a cancel waits
/// for at most two of them; sm_world_step_cl() never waits). Safe to call from a signal handler or another thread: it only sets a flag,
/// which that return clears. A program ends a long step on Ctrl-C so.
SM_API void sm_world_cancel(sm_world *world);

/// The passes of one step, in pipeline order.
typedef enum sm_pass {
    SM_PASS_CLUSTER_MOMENTS, ///< centre of mass, A_pq and the quadratic moments per cluster
    SM_PASS_ROTATION,        ///< closest proper rotation R to A_pq
    SM_PASS_GOAL_TRANSFORM,  ///< T per cluster: mode, beta, volume, cap
    SM_PASS_BLEND_INTEGRATE, ///< blended goals, velocity, damping, position
    SM_PASS_COLLISION_GRID,  ///< particles sorted into the uniform grid (when collisions are on)
    SM_PASS_COLLIDE,         ///< contact between particles of different objects (when collisions are on)
    SM_PASS_GROUND,          ///< ground plane with restitution and friction
    SM_PASS_PLASTICITY,      ///< plastic state and rest shape update
    SM_PASS_SKIN,            ///< skinned surfaces: vertices and normals, once per sm_world_step() (when there are surfaces)
    SM_PASS_COUNT ///< the number of passes (not a pass)
} sm_pass;

/// Short name of a pass, e.g. "cluster_moments".
SM_API const char *sm_pass_name(sm_pass pass);

/// Accumulated wall time per pass since the world was created.
typedef struct sm_profile {
    double pass_ms[SM_PASS_COUNT]; ///< total milliseconds spent in each pass
    double step_ms;                ///< total milliseconds spent in sm_world_step
    int64_t steps;                 ///< number of steps of length h taken
    /// OpenCL: reads and writes between host and device memory the world has enqueued since it
    /// was created (uploads, read-backs, edits; kernels and fills on the device do not count).
    /// Steps add none, except one write of the colliders' states per sm_world_step() when a
    /// collider moves (static ones are written once), and the upload of the whole world at the
    /// first step after objects are added or the host changed everything (sm_world_copy_state(),
    /// a mode switch, a cut).
    int64_t transfers;
    int64_t transfer_bytes;        ///< bytes those transfers moved
    /// OpenCL: the kernels the world's steps have enqueued (each costs a GPU about 5 us however
    /// little it does); 0 on the CPU reference.
    int64_t launches;
} sm_profile;

/// The world's accumulated timings (all zero for a NULL world).
SM_API sm_profile sm_world_get_profile(const sm_world *world);

/* ---- Queries and edits --------------------------------------------------------------- */

/// Sizes of a world.
typedef struct sm_counts {
    int32_t objects; ///< objects added
    int32_t clusters; ///< clusters over all objects
    int32_t particles; ///< particles over all objects
    int32_t memberships; ///< sum over clusters of their particle counts
} sm_counts;

/// Totals of the world (all zero for a NULL world).
SM_API sm_counts sm_world_get_counts(const sm_world *world);

/// The device memory of an OpenCL world's buffers, by what each scales with (all 0 on the CPU
/// reference, and before the first step or after objects are added, until the next step).
typedef struct sm_memory {
    int64_t device_bytes;     ///< all of the world's device buffers
    int64_t particle_bytes;   ///< buffers with an entry per particle (positions, velocities, forces, maps)
    int64_t membership_bytes; ///< buffers with an entry per cluster membership (rest offsets, weights, CSR)
    int64_t cluster_bytes;    ///< buffers with an entry per cluster (and per object)
    int64_t surface_bytes;    ///< skinned surfaces: per vertex, binding and triangle
    int64_t contact_bytes;    ///< the collision grid: per colliding particle and hash bucket
    int64_t other_bytes;      ///< colliders, their per-step states and the targets
} sm_memory;

/// The world's device memory.
SM_API sm_memory sm_world_get_memory(const sm_world *world);

/// What a world needs with more objects added, before they are sampled (sm_world_def.memory_budget).
/// Grid clusters are counted as sm_world_add_object() will build them (their regions of fewer than
/// 4 particles dropped, the particles left in none joining one), from the particles enumerated
/// without storing them; only a mesh's inner lattice is not known before it is sampled: its
/// particles are estimated from the volume the mesh encloses, its grid clusters from the grid and
/// its overlap. tests/test_memory.c checks the counts and the device's bytes against worlds (every
/// shape, grids of 1 to 1024 cells a side with overlaps of 0 to 10, explicit lists) and the host's
/// peak in a fresh process adding one object of 50,000 to 200,000 particles with grid clusters.
typedef struct sm_memory_estimate {
    int64_t host_bytes; ///< the host's peak while they are added is 0.75 to 1.1 times this
    /// the OpenCL device's buffers (0 on the CPU reference): exact, but for a mesh's inner lattice
    /// and a skinned surface's bindings (estimated)
    int64_t device_bytes;
    int64_t particles;   ///< particles in all: exact, but for a mesh's inner lattice
    int64_t memberships; ///< cluster memberships in all: exact, but for a mesh's inner lattice
    int64_t clusters;    ///< clusters in all: exact, but for a mesh's inner lattice
} sm_memory_estimate;

/// Estimates the memory of the world with the objects of `defs` added (none: the world as it
/// is); fails on an invalid def as sm_world_add_object() would (a grid of over 2^26 cluster
/// memberships included). Nothing is sampled: counting an object's grid clusters takes its
/// (region, particle) pairs' time (a fraction of building them) and at most 8 MB of scratch
/// memory besides a bit a particle, 8 bytes a row of a lattice shape, 4 bytes a point of a list,
/// and 16 bytes a cluster where on OpenCL particles left in no region may carry a cluster to the
/// work-group size.
SM_API sm_result sm_world_estimate_memory(const sm_world *world, const sm_object_def *defs, int32_t count,
                                          sm_memory_estimate *out);

/// Which backend runs the world: "cpu" or "opencl" ("none" for a NULL world).
SM_API const char *sm_world_backend_name(const sm_world *world);

/// The OpenCL device running the world, "device name (platform name)"; "" on the CPU or for a NULL world.
SM_API const char *sm_world_device_name(const sm_world *world);

/// Copies the whole mutable state of `source` into `target`: positions, velocities, forces,
/// goals, and every cluster's plastic state, rest data and step state. The two worlds must be
/// built from the same objects (same counts); their backends may differ. Use it to restart a
/// world from another's state, e.g. to run one device step from the CPU reference's state.
SM_API sm_result sm_world_copy_state(sm_world *target, const sm_world *source);

/// One object's place in the world's arrays.
typedef struct sm_object_info {
    const char *name;        ///< "" when unnamed; valid while the world lives
    sm_shape_type shape; ///< how its particles were made
    sm_mode mode; ///< its goal transform
    double mass;             ///< kg
    /// its lowest particle index. An object as added has the particles [first_particle,
    /// first_particle + particle_count); a piece of a cut has some of its object's
    /// (`contiguous` false): sm_world_get_object_particles() lists an object's particles in
    /// every case
    int32_t first_particle;
    int32_t particle_count; ///< number of its particles
    bool contiguous;        ///< its particles are exactly [first_particle, first_particle + particle_count)
    int32_t first_cluster;   ///< its clusters are [first_cluster, first_cluster + cluster_count)
    int32_t cluster_count; ///< number of its clusters
    int32_t membership_count; ///< sum over its clusters of their particle counts
    bool collides;           ///< its particles take part in contact (the world's collisions are on and so are its own)
    bool self_collides;      ///< it also collides with itself
    /// m: the lattice spacing of its particles (a box's smallest step along its axes, the
    /// `spacing` of the other lattices, the median nearest-neighbour distance of points; 0 for
    /// a single particle)
    double spacing;
    double particle_radius;  ///< m: the radius of its particles in contact (0 when it does not collide)
    int32_t first_surface_vertex; ///< its surface's vertices are [first_surface_vertex, + surface_vertex_count) of the world's
    int32_t surface_vertex_count; ///< 0: no surface
    int32_t surface_triangle_count; ///< number of its surface triangles
} sm_object_info;

/// Describes object `object`.
SM_API sm_result sm_world_get_object(const sm_world *world, int32_t object, sm_object_info *out);

/// The particles of object `object`, ascending: *out_particles (owned by the world, valid until
/// the next sm_world_add_object() or sm_world_cut()) gets *out_count particle indices.
SM_API sm_result sm_world_get_object_particles(const sm_world *world, int32_t object, const int32_t **out_particles,
                                               int32_t *out_count);

/// Copies the object of each particle of [first, first + count) into `out`: which piece of a
/// cut each particle is in now.
SM_API sm_result sm_world_get_particle_objects(const sm_world *world, int32_t first, int32_t count, int32_t *out);

/// One cluster's state after the last step (before the first: the rest state, R = I).
typedef struct sm_cluster_info {
    int32_t object;          ///< the object it belongs to
    int32_t member_count;    ///< number of particles in it
    int32_t modes;           ///< deformation modes its rest shape supports (rank of A_qq or of the quadratic moment matrix)
    /// kg: the sum of its members' masses, each shared equally by the clusters holding it (a
    /// particle in n clusters weighs m / n in each; the sums below weigh members so)
    double mass;
    sm_vec3 rest_center;     ///< centre of mass of the rest positions, m
    sm_vec3 center;          ///< centre of mass x_cm at the start of the last step, m
    sm_vec3 velocity;        ///< its members' mean velocity v_cm at the start of the last step, m/s
    sm_mat3 rotation;        ///< R of the last step
    /// Goal transform of the last step: goal = T q~ + center, with q~ the rest offset q
    /// followed by its six centred quadratic terms (columns 3-8 are zero outside quadratic mode).
    double transform[3][9];
    sm_mat3 plastic;         ///< plastic state S_p (I without plasticity)
} sm_cluster_info;

/// Describes cluster `cluster` (world index).
SM_API sm_result sm_world_get_cluster(const sm_world *world, int32_t cluster, sm_cluster_info *out);

/// The particle indices (world indices) of cluster `cluster`; the array is owned by the
/// world and valid until the next sm_world_add_object() or sm_world_cut().
SM_API sm_result sm_world_get_cluster_members(const sm_world *world, int32_t cluster,
                                              const int32_t **out_particles, int32_t *out_count);

/// How deeply particles that may collide overlap: pairs of particles of different objects (and
/// of a self-colliding object, rest neighbours excluded) closer than the sum of their radii.
typedef struct sm_contact_stats {
    int64_t pairs;          ///< number of overlapping pairs
    double max_depth;       ///< m: the largest overlap r_i + r_j - |x_i - x_j|
    /// The largest overlap relative to the smaller radius of its pair (0.05: 5% of the radius)
    double max_depth_ratio;
    double mean_depth_ratio; ///< the mean of depth / smaller radius over the overlapping pairs
    /// Contacts left out: a particle takes at most SM_CONTACTS_PER_PARTICLE contact candidates a
    /// solver step (its nearest, ties by index), so each particle's work stays bounded however
    /// many particles are piled onto one point; the sum over the particles of their overlaps
    /// beyond that number
    int64_t dropped;
} sm_contact_stats;

/// The most contact candidates a particle takes in a solver step (sm_contact_stats.dropped).
#define SM_CONTACTS_PER_PARTICLE 32

/// Measures the overlaps of the current positions (on OpenCL, reads the positions back). A
/// world without collisions reports no pairs.
SM_API sm_result sm_world_get_contact_stats(const sm_world *world, sm_contact_stats *out);

/// Copies positions of particles [first, first + count) into xyz (3 doubles each), m.
SM_API sm_result sm_world_get_positions(const sm_world *world, int32_t first, int32_t count, double *xyz);

/// Copies velocities of particles [first, first + count) into xyz, m/s.
SM_API sm_result sm_world_get_velocities(const sm_world *world, int32_t first, int32_t count, double *xyz);

/// Copies rest positions (the positions at creation) of particles [first, first + count), m.
SM_API sm_result sm_world_get_rest_positions(const sm_world *world, int32_t first, int32_t count, double *xyz);

/// Copies the blended goal positions g of the last step, m (the positions, before any step).
SM_API sm_result sm_world_get_goals(const sm_world *world, int32_t first, int32_t count, double *xyz);

/// Copies particle masses, kg.
SM_API sm_result sm_world_get_masses(const sm_world *world, int32_t first, int32_t count, double *out);

/// Overwrites positions of particles [first, first + count), m. Rest shapes are unchanged.
SM_API sm_result sm_world_set_positions(sm_world *world, int32_t first, int32_t count, const double *xyz);

/// Overwrites velocities of particles [first, first + count), m/s.
SM_API sm_result sm_world_set_velocities(sm_world *world, int32_t first, int32_t count, const double *xyz);

/// Sets the constant external force on one particle, N (replaces the object's share). On OpenCL
/// the force and the acceleration it gives (force / mass) must lie within the float range.
SM_API sm_result sm_world_set_force(sm_world *world, int32_t particle, sm_vec3 force);

/// Sets the constant external forces of particles [first, first + count), N (3 doubles each), as
/// sm_world_set_force() does one, in one call (on OpenCL, one write to the device). Refused
/// whole, with nothing changed, when one is not finite or, on OpenCL, beyond the float range.
SM_API sm_result sm_world_set_forces(sm_world *world, int32_t first, int32_t count, const double *xyz);

/// Copies the external forces of particles [first, first + count) into xyz, N.
SM_API sm_result sm_world_get_forces(const sm_world *world, int32_t first, int32_t count, double *xyz);

/// Puts object `object` back as it was created, at rest: positions at their rest positions,
/// velocities zero, plastic state I (rest data recomputed), rotations and goal transforms I,
/// its skinned surface at rest. Other objects, forces and targets are untouched. On OpenCL it
/// reads the world's state back and uploads it again (a reset is rare; a step is not).
SM_API sm_result sm_world_reset_object(sm_world *world, int32_t object);

/// A target's stiffness that pins its particle to the target (kinematic) instead of pulling it.
#define SM_TARGET_PIN (-1.0)

/// Sets the kinematic target of one particle (docs/algorithm.md step 4d), m, for the following steps.
/// `stiffness` > 0, N/m: a spring toward the target, by backward Euler: after the integration
/// the particle's move and velocity go s / (1 + s) of the way to a pin's, s = h^2 stiffness /
/// mass, stable at any stiffness (the explicit force stiffness (target - x) for small s, the pin
/// for large); SM_TARGET_PIN: after the integration the particle is placed on the target, with
/// velocity (target - x) / h; 0: no target (the default). Contact, the ground and colliders act
/// after it. A scene's springs set the targets of the particles they pull (sm_scene_apply()).
SM_API sm_result sm_world_set_target(sm_world *world, int32_t particle, sm_vec3 target, double stiffness);

/// Copies the targets of particles [first, first + count): 4 doubles each (x, y, z in m, then the
/// stiffness in N/m, SM_TARGET_PIN or 0 for none).
SM_API sm_result sm_world_get_targets(const sm_world *world, int32_t first, int32_t count, double *xyzk);

/// The parameters of an object that may change while the world runs (as in sm_object_def).
/// On OpenCL, changing alpha, tau, beta, damping, volume preservation or the plasticity
/// parameters writes one object record to the device; turning plasticity off also reads the
/// world's state back first; a mode switch (which recomputes the object's rest data on the host)
/// or turning plasticity on reads it back and uploads the whole world before the next step.
typedef struct sm_object_params {
    sm_mode mode;   ///< goal transform; switching to quadratic works for any object (its moments are recomputed)
    double alpha;   ///< stiffness in [0, 1]
    double tau;     ///< s; when > 0, alpha = min(1, h / tau)
    double beta;    ///< in [0, 1]
    double damping; ///< 1/s, >= 0
    bool volume_preservation;  ///< goals keep the rest volume (the nearest linear fit of determinant 1)
    bool volume_by_scaling;    ///< with volume_preservation, the paper's A / cbrt(det A) instead
    sm_plasticity plasticity;  ///< plastic creep; turning it off keeps the rest shape reached so far
    double strain_limit;       ///< the deformation limit, in [1, 10] (sm_object_def.strain_limit)
} sm_object_params;

/// The current parameters of object `object`.
SM_API sm_result sm_world_get_object_params(const sm_world *world, int32_t object, sm_object_params *out);

/// Changes the parameters of object `object` from the next step on (positions, velocities and
/// plastic state are kept).
SM_API sm_result sm_world_set_object_params(sm_world *world, int32_t object, const sm_object_params *params);

/// A sphere that particles cannot enter, moved by the caller every step: the viewer's push tool
/// (Henriques & Wuensche 2007, 3.2). Applied after the ground (docs/algorithm.md
/// step 7b): a free particle inside is put on the sphere's surface along the line from the centre,
/// and its velocity relative to the sphere loses its inward normal part.
typedef struct sm_pusher {
    bool enabled;     ///< default false
    sm_vec3 center;   ///< m
    double radius;    ///< m, > 0
    sm_vec3 velocity; ///< m/s: how fast the sphere moves (a particle it pushes leaves at least this fast along the normal)
} sm_pusher;

/// Places (or, with enabled false, removes) the world's pusher for the following steps.
SM_API sm_result sm_world_set_pusher(sm_world *world, const sm_pusher *pusher);

/* ---- Cutting ----------------------------------------------------------------------------- */

/// A plane: the points x with dot(x - point, normal) = 0.
typedef struct sm_plane {
    sm_vec3 point;  ///< m: a point on the plane
    sm_vec3 normal; ///< the side called "front" (any finite length but zero)
} sm_plane;

/// What sm_world_cut() did.
typedef struct sm_cut_info {
    bool cut;                  ///< false: every particle lay on one side, and nothing changed
    double time;               ///< s: the world's time when it was cut (sm_world_get_time())
    int32_t back_object;       ///< the piece behind the plane: it keeps the cut object's id
    int32_t front_object;      ///< the piece in front: a new object, whose id is the world's object count before the cut
    int32_t back_particles;    ///< particles of the back piece
    int32_t front_particles;   ///< particles of the front piece
    int32_t kept_clusters;     ///< the pieces' clusters with exactly an old cluster's particles (its plastic state carried over whole)
    int32_t degraded_clusters; ///< the pieces' clusters that support fewer modes than the object's mode (each noted in the log)
    int32_t cap_triangles;     ///< triangles sealing the cross-sections of the surface, both pieces together
    int32_t open_loops;        ///< boundary chains of an open surface along the plane, left unsealed
} sm_cut_info;

/// Cuts object `object` in two along `plane` (Henriques & Wuensche 2007, 3.3; docs/cutting.md).
/// A particle goes to the side its current position lies on (front: dot(x - point, n) > 10^-4 D,
/// n the unit normal, D the diagonal of the object's bounding box: a particle or surface vertex
/// on the plane, as a lattice's layer is, goes behind it on both backends, whose positions differ
/// by rounding).
/// No particle moves: each keeps its index, and with it its position, velocity, rest position,
/// force, target and fixed flag, in every host array and device buffer, across any number of
/// cuts. No object's id changes either: the back piece keeps the cut object's id, the front piece
/// gets a new one (the world's object count before the cut), and the ids of every other object
/// stay; ids are never reused (objects are not removed). Each piece's clusters are rebuilt from
/// its own rest positions with the object's cluster settings (its grid over the piece, or its
/// explicit lists restricted to the piece); a new cluster with exactly an old cluster's
/// particles keeps that cluster's plastic state, another takes the volume-normalised
/// mass-weighted mean of its particles' old plastic states. A skinned surface is cut with the
/// particles: triangles that straddle the plane are clipped, the cross-section is sealed (holes
/// and concave outlines respected), and every vertex is bound to its piece's clusters again.
/// Every other object's state is kept bit for bit (on OpenCL, a plastic object's rest data are
/// taken again from its plastic state S_p, in double, as any read-back of the device does:
/// equal to float rounding). A cut that leaves one side empty changes
/// nothing (out->cut false, a notice in the log). On OpenCL the world is read back and uploaded
/// again (its buffers are made anew: take them again with sm_world_get_cl_state()): a cut is rare.
SM_API sm_result sm_world_cut(sm_world *world, int32_t object, sm_plane plane, sm_cut_info *out);

/// Every cut made in the world so far (those of sm_world_cut() that cut, a scene's included), in
/// order: *out_cuts (owned by the world, valid until the next cut) gets *out_count records. A
/// caller that keeps how many it has seen learns what the scene cut since.
SM_API sm_result sm_world_get_cuts(const sm_world *world, const sm_cut_info **out_cuts, int32_t *out_count);

/* ---- Colliders --------------------------------------------------------------------------- */

/// The shape of a collider.
typedef enum sm_collider_shape {
    SM_COLLIDER_PLANE,  ///< the half-space behind a plane through `position` with normal `normal`
    SM_COLLIDER_BOX,    ///< a box of edges `size` centred on `position`, turned by `rotation`
    SM_COLLIDER_SPHERE, ///< a ball of `radius` centred on `position`
    /// a triangle mesh read from the file `mesh`, scaled by `scale`, turned by `rotation` and
    /// placed at `position`, held as a signed distance field (docs/algorithm.md step 7a): a closed
    /// mesh (every edge shared by two triangles, triangles of no area aside) is solid, an open
    /// one, or a closed one thinner than a cell of its field (a warning in the log), a shell of
    /// `thickness`
    SM_COLLIDER_MESH,
} sm_collider_shape;

/// How a collider moves: it is kinematic, following a script, and nothing pushes it back.
typedef enum sm_motion_type {
    SM_MOTION_STATIC,     ///< stays at `position`
    /// Piecewise linear: at times[k] the collider is at position + offsets[k], in between it moves
    /// at constant velocity, before the first and after the last keyframe it rests.
    SM_MOTION_LINEAR,
    /// position + amplitude sin(2 pi frequency t + phase)
    SM_MOTION_SINUSOIDAL,
} sm_motion_type;

/// A collider's scripted motion over the world's time (sm_world_get_time()).
typedef struct sm_motion {
    sm_motion_type type;     ///< default SM_MOTION_STATIC
    const double *times;     ///< linear: keyframe times, s, strictly increasing (copied)
    const sm_vec3 *offsets;  ///< linear: displacement from `position` at each keyframe, m (copied)
    int32_t keyframe_count;  ///< linear: number of keyframes, >= 1
    sm_vec3 amplitude;       ///< sinusoidal: m
    double frequency;        ///< sinusoidal: Hz, >= 0
    double phase;            ///< sinusoidal: degrees
} sm_motion;

/// A static or kinematic solid that particles cannot enter (docs/algorithm.md step 7a). A particle found
/// inside after the ground is moved out along the shortest way (the plane's normal, the line from
/// the sphere's centre, the box's nearest face, a mesh's distance field's gradient; one that began
/// the solver step inside at no more than sm_collisions.push_speed), the inward part of its
/// velocity relative to the collider is turned outward with `restitution` (of the approach it or
/// its body began the solver step with, at most: a body resting on it does not bounce off its own
/// weight), and its tangential relative velocity is reduced by `friction`, as on the ground (by
/// Coulomb's law, within the same friction limit). Colliders act on particle centres, like the
/// ground.
///
/// A mesh collider's field is sampled on a grid of cubic cells of edge `cell` over the mesh's
/// bounds and 3 cells beyond, 4 bytes a node, at most SM_MESH_COLLIDER_MAX_NODES nodes; exact
/// within 3 cells of the surface (the distance to the nearest triangle), a chamfer estimate
/// beyond, read between nodes by trilinear interpolation. A particle that moves less than half
/// the solid's local thickness (a shell's: `thickness`) minus a cell in one solver step is
/// pushed back out the side it came in; a faster one may pass through (the tunnelling bound,
/// test_colliders).
typedef struct sm_collider_def {
    sm_collider_shape shape; ///< default SM_COLLIDER_BOX
    sm_vec3 position;        ///< m: the box's or sphere's centre, a point on the plane; default 0
    sm_vec3 normal;          ///< plane: the side particles stay on (normalised), default (0, 1, 0)
    sm_vec3 rotation;        ///< box: degrees about x, then y, then z (as objects), default 0
    sm_vec3 size;            ///< box: edge lengths, m, default (1, 1, 1)
    double radius;           ///< sphere: m, default 0.5
    double restitution;      ///< in [0, 1], default 0.3
    double friction;         ///< in [0, 1], default 0.2
    sm_motion motion;        ///< default static
    /// mesh: the path of a mesh file (OBJ, PLY, OFF, STL, Collada or glTF 2; sm_mesh_load_file())
    const char *mesh;
    sm_vec3 scale;           ///< mesh: multiplies the file's coordinates, each > 0, default (1, 1, 1)
    /// mesh: true (default): the mesh's bounding-box centre is placed at `position`; false: the
    /// file's origin is
    bool center;
    /// mesh: the field's cell edge, m; 0 (default): the scaled mesh's longest extent / 64, and
    /// no more than half the smallest lattice spacing of the objects already in the world, made
    /// coarser where that would exceed SM_MESH_COLLIDER_MAX_NODES nodes (a notice in the log)
    double cell;
    /// mesh, open (some edge not shared by two triangles): the shell's thickness, m; 0
    /// (default): two cells. A closed mesh is solid and ignores it.
    double thickness;
    int32_t internal_value;  ///< set by sm_collider_def_default(); do not touch
} sm_collider_def;

/// The most nodes a mesh collider's distance field may have (32 MB of floats).
#define SM_MESH_COLLIDER_MAX_NODES (1 << 23)

/// A collider def with every field at its documented default.
SM_API sm_collider_def sm_collider_def_default(void);

/// Adds a collider, which acts from the next step on; *out_collider (may be NULL) receives its index.
SM_API sm_result sm_world_add_collider(sm_world *world, const sm_collider_def *def, int32_t *out_collider);

/// A collider where it is at the world's current time.
typedef struct sm_collider_info {
    sm_collider_shape shape; ///< plane, box, sphere or mesh
    sm_vec3 center;    ///< m: position plus the motion's displacement now
    sm_vec3 velocity;  ///< m/s, now
    sm_mat3 axes;      ///< box: its rotation (columns are its local axes); plane: column 1 is the normal
    sm_vec3 size;      ///< box: edge lengths, m
    double radius;     ///< sphere: m
    double cell;       ///< mesh: the field's cell edge, m
    int32_t nodes[3];  ///< mesh: the field's nodes along its x, y and z
    bool closed;       ///< mesh: closed (solid) rather than a shell
} sm_collider_info;

/// The number of colliders in the world.
SM_API int32_t sm_world_get_collider_count(const sm_world *world);

/// Describes collider `collider` at the world's current time.
SM_API sm_result sm_world_get_collider(const sm_world *world, int32_t collider, sm_collider_info *out);

/// Mesh collider `collider`'s triangles as it was added: *out_vertices (vertex_count of them,
/// m) in its frame, scaled, turned and centred as placed (add sm_collider_info.center for the
/// world), *out_triangles (3 indices each); valid while the world lives. SM_ERROR_INVALID_ARGUMENT
/// for another shape.
SM_API sm_result sm_world_get_collider_mesh(const sm_world *world, int32_t collider, const sm_vec3 **out_vertices,
                                            int32_t *out_vertex_count, const int32_t **out_triangles,
                                            int32_t *out_triangle_count);

/// Seconds simulated since the world was created (the sum of the steps' lengths).
SM_API double sm_world_get_time(const sm_world *world);

/// Particle quantities that can be read as 4 floats per particle.
typedef enum sm_particle_field {
    SM_FIELD_POSITION, ///< x, y, z (m) and w = the particle's mass (kg)
    SM_FIELD_VELOCITY, ///< x, y, z (m/s) and w = 0
    SM_FIELD_GOAL,     ///< the blended goal of the last step, x, y, z (m) and w = 0
    /// Skinned surface vertices (indices over the world's surface vertices, not particles):
    /// x, y, z (m) after the last sm_world_step() (before the first: at rest) and w = 1.
    SM_FIELD_SURFACE_POSITION,
    SM_FIELD_SURFACE_NORMAL,   ///< their unit normals, x, y, z and w = 0
} sm_particle_field;

/// The triangles of object `object`'s surface: 3 indices each into its own vertices (add
/// first_surface_vertex of sm_object_info for the world's); owned by the world, valid until the
/// next sm_world_add_object() or sm_world_cut(). No surface: *out_triangles NULL and *out_count 0.
SM_API sm_result sm_world_get_surface_triangles(const sm_world *world, int32_t object, const int32_t **out_triangles,
                                                int32_t *out_count);

/// The world's number of surface vertices (all objects').
SM_API int32_t sm_world_get_surface_vertex_count(const sm_world *world);

/// Copies `field` of particles (surface vertices for the surface fields) [first, first + count)
/// as 4 floats each (16 bytes, the layout of the OpenCL buffers): on OpenCL one read of the device buffer straight into `out` (positions
/// lose their low halves, about 1e-7 relative), the fast path for drawing.
SM_API sm_result sm_world_get_float4(const sm_world *world, sm_particle_field field, int32_t first, int32_t count,
                                     float *out);

/* ---- Sharing with OpenGL ------------------------------------------------------------- */

/// Whether the world shares buffers with the GL context of its def. When not, *reason (may be
/// NULL) receives why, e.g. "the device has no cl_khr_gl_sharing".
SM_API bool sm_world_gl_sharing(const sm_world *world, const char **reason);

/// Makes GL buffer object `gl_buffer` (at least 16 bytes per particle, or per surface vertex for
/// the surface fields) the target of
/// sm_world_copy_to_gl() for `field`; 0 stops copying that field. Share again after objects
/// are added, with a buffer of the new size.
SM_API sm_result sm_world_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer);

/// Copies every shared field into its GL buffer on the device, as sm_world_get_float4() lays it
/// out: acquires the buffers, copies, releases them, and waits for the copies. Call it with GL
/// idle on those buffers (after glFinish()), from the thread whose GL context is current.
SM_API sm_result sm_world_copy_to_gl(sm_world *world);

/* ---- Scene files --------------------------------------------------------------------- */

/// A parsed scene file: a world def, step settings and object defs.
typedef struct sm_scene sm_scene;

/// Step settings and size of a scene.
typedef struct sm_scene_info {
    double dt;             ///< length of one step, s
    int32_t substeps;      ///< solver steps per step
    int32_t steps;         ///< suggested number of steps to run
    int32_t object_count;  ///< number of objects
    int32_t cut_count;     ///< number of timed cuts (`cuts`)
} sm_scene_info;

/// Reads and validates a JSON scene file (format in scenes/README.md). Errors name the
/// file, the object index and the field.
SM_API sm_result sm_scene_load_file(const char *path, sm_scene **out_scene);

/// Same as sm_scene_load_file() from a string; `origin` names it in error messages.
SM_API sm_result sm_scene_load_string(const char *json, const char *origin, sm_scene **out_scene);

/// Frees a scene. NULL is allowed.
SM_API void sm_scene_destroy(sm_scene *scene);

/// Step settings and size of the scene (all zero for a NULL scene).
SM_API sm_scene_info sm_scene_get_info(const sm_scene *scene);

/// The files the scene was read from: the scene file first (when it came from one), then every
/// file read for its meshes (objects', surfaces' and colliders'), and the files those name (an
/// OBJ's materials, a glTF's buffers), each once, as they were opened. Owned by the scene. The
/// command and the viewer refuse outputs that would overwrite any of them.
SM_API sm_result sm_scene_get_files(const sm_scene *scene, const char *const **out_paths, int32_t *out_count);

/// The world def the scene describes (gravity, ground; other fields at their defaults); a NULL
/// scene gives sm_world_def_default().
SM_API sm_world_def sm_scene_world_def(const sm_scene *scene);

/// The def of object `index`, owned by the scene, or NULL when out of range.
SM_API const sm_object_def *sm_scene_object_def(const sm_scene *scene, int32_t index);

/// Creates a world from `def` (NULL: sm_scene_world_def()) and adds every object of the scene.
SM_API sm_result sm_scene_create_world(const sm_scene *scene, const sm_world_def *def, sm_world **out_world);

/// Applies what the scene scripts for the world's current time t (sm_world_get_time()): its cuts
/// with t - dt < time <= t (dt: the scene's), by sm_world_cut(), each once (calling it again at
/// the same time cuts nothing more); its springs set the target of
/// each particle they pull (sm_world_set_target(): the sum of the active springs' stiffnesses,
/// toward the mean of their targets weighted by stiffness; none outside their time windows) and
/// its external force (its share of its object's force, minus the springs' damping c times its
/// velocity, by backward Euler over dt: c v / (1 + dt c / mass)). Call it before each step of a
/// world made from the scene (sm_scene_step() does both); on OpenCL it reads back the velocity
/// of each particle on a damped spring, so it waits for the device then.
SM_API sm_result sm_scene_apply(const sm_scene *scene, sm_world *world);

/// sm_scene_apply(), then one step of the scene's dt in its substeps.
SM_API sm_result sm_scene_step(const sm_scene *scene, sm_world *world);

/* ---- Meshes ---------------------------------------------------------------------------- */

/// A triangle mesh read from a file: positions welded into shared vertices, triangles as
/// vertex index triples (counter-clockwise seen from outside, as the file has them).
typedef struct sm_mesh {
    sm_vec3 *vertices;      ///< in the file's units, every node transform applied
    int32_t vertex_count; ///< number of vertices
    int32_t *triangles;     ///< 3 vertex indices per triangle
    int32_t triangle_count; ///< number of triangles
} sm_mesh;

/// Reads every mesh of a file through assimp, in one of the formats it accepts by the file's
/// extension: OBJ (.obj), PLY (.ply), OFF (.off), STL (.stl), Collada (.dae) and glTF 2 (.gltf,
/// .glb); any other is refused before assimp opens it (some of assimp's other readers crash on
/// malformed files). Triangulated, with the node transforms applied and the vertices welded:
/// vertices within 1e-6 of the bounding box's diagonal of each other (split by normals or
/// texture seams in the file) become one. Errors name the file and what assimp said. Free the
/// result with sm_mesh_free().
SM_API sm_result sm_mesh_load_file(const char *path, sm_mesh *out_mesh);

/// Frees the arrays of a mesh and zeroes it. NULL is allowed.
SM_API void sm_mesh_free(sm_mesh *mesh);

/// The number of edges not shared by exactly two triangles (0: the mesh is closed); triangles of
/// no area (corners on a line, or repeated) are left out, as they bound nothing.
SM_API int32_t sm_mesh_open_edges(const sm_mesh *mesh);

/// The generalised winding number of point p (about 1 inside a closed, outward-oriented mesh, 0
/// outside; Jacobson et al. 2013): the sum of the triangles' signed solid angles over 4 pi.
SM_API double sm_mesh_winding_number(const sm_mesh *mesh, sm_vec3 p);

/* ---- OpenCL devices -------------------------------------------------------------------- */

/// An OpenCL device the OpenCL backend can run on.
typedef struct sm_device_info {
    int32_t index;      ///< position in the list: a valid sm_world_def.device selector
    char name[128];     ///< the device's name
    char platform[128]; ///< its platform's name
    char version[128];  ///< its OpenCL version string
    bool gpu;           ///< a GPU (preferred by default)
    bool fp64;          ///< has double precision (used for the plastic rest-data refresh)
} sm_device_info;

/// Lists the OpenCL devices of every platform: fills up to `capacity` entries of `out` and sets
/// *out_count to the number found. SM_ERROR_UNAVAILABLE when there is no platform or device
/// (the message says what to install).
SM_API sm_result sm_opencl_devices(sm_device_info *out, int32_t capacity, int32_t *out_count);

/// The device that `selector` (as sm_world_def.device: an index or part of a device or platform
/// name, case-insensitive; NULL or "": $SM_DEVICE, else the first GPU, else the first device)
/// chooses, into *out. SM_ERROR_INVALID_ARGUMENT naming the selector when it chooses none,
/// SM_ERROR_UNAVAILABLE when there is no platform or device.
SM_API sm_result sm_opencl_device_for(const char *selector, sm_device_info *out);

/// Name of a mode as written in scene files ("rigid", "linear", "quadratic").
SM_API const char *sm_mode_name(sm_mode mode);

/// Name of a shape type as written in scene files ("points", "box", ...).
SM_API const char *sm_shape_name(sm_shape_type type);

#ifdef __cplusplus
}
#endif

#endif
