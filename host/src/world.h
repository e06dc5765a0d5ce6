/* The world as every backend sees it: particles, objects, clusters in CSR form with the
 * inverse particle-to-membership map, and the per-cluster state of the current step. */
#ifndef SM_WORLD_H
#define SM_WORLD_H

#include "shapematch/shapematch.h"

#include <stddef.h>

#define SM_DEF_COOKIE 0x5348414d /* "SHAM": marks defs made by their default constructor */
#define SM_MAX_COLLIDERS 256      /* colliders per world: each particle tests every one */
#define SM_MIN_STEP 1e-9          /* s: shorter steps make alpha / h overflow long before they are useful */
#define SM_MAX_STEP 10.0          /* s: longer steps are no simulation (positions grow as g h^2) */
#define SM_STRAIN_LIMIT_MIN 1.0   /* sm_object_def.strain_limit: rigid goals */
#define SM_STRAIN_LIMIT_MAX 10.0
#define SM_MASS_MIN 1e-12         /* kg: an object's total mass; with at most 2^26 particles each */
#define SM_MASS_MAX 1e12          /* kg: ... keeps a mass, its inverse and m |x|^2 well inside float */
#define SM_POINT_MASS_MIN 1e-30   /* kg: a points shape's per-point mass */

/// Per-object parameters, as given in its def.
typedef struct sm_object {
    char *name;
    sm_shape_type shape;
    sm_mode mode;
    double alpha, tau, beta, damping;
    bool volume_preservation, volume_by_scaling;
    sm_plasticity plasticity;
    sm_cap cap;
    double strain_limit; ///< the deformation limit s (sm_object_def.strain_limit)
    double mass;
    /// its particles are world->object_particles[first_particle, first_particle + particle_count),
    /// ascending: [first_particle, + particle_count) itself until a cut made it a piece (particles
    /// never move: a particle's index is its identity for the world's life)
    int32_t first_particle, particle_count;
    /// the first particle and the mass of the object as it was created, which its pieces keep:
    /// particle origin_first + k is the k-th particle of the object as created (scene springs)
    int32_t origin_first;
    double origin_mass;
    int32_t first_cluster, cluster_count;
    int32_t membership_count;
    bool collides, self_collides; ///< takes part in contact; also with itself
    double spacing;               ///< m: the lattice spacing of its particles (sm_shape_spacing())
    double particle_radius;       ///< m, 0 when it does not collide
    int32_t first_surface_vertex, surface_vertex_count;     ///< its skinned surface's vertices
    int32_t first_surface_triangle, surface_triangle_count; ///< and triangles
    // how it was made, for rebuilding the clusters of its pieces when it is cut (cut.c)
    sm_mat3 frame;           ///< the rotation that placed its particles
    sm_vec3 origin;          ///< m: where its frame's origin was placed
    int32_t cluster_grid[3]; ///< the grid of its clusters (when not listed)
    double cluster_overlap;
    bool clusters_listed;    ///< its clusters were explicit lists
} sm_object;

/// Per-cluster rest data (changes only with plasticity) and the state of the current step.
typedef struct sm_cluster {
    int32_t object;
    int32_t first_member, member_count; ///< its memberships are [first_member, first_member + member_count)
    bool anchored;                      ///< holds a fixed particle: its velocity v_cm is 0
    double mass;                        ///< M_c
    sm_vec3 rest_center;                ///< x0_cm
    sm_mat3 plastic;                    ///< S_p
    sm_mat3 aqq;                        ///< A_qq = (sum m q q^T)^+
    sm_mat3 metric_root, metric_root_inv; ///< the linear block's metric^(+-1/2), determinant 1 (volume preservation)
    sm_mat3 span;                       ///< A_qq W: the projector onto the directions its rest shape spans (I when all)
    double coupling[3][6];              ///< quadratic mode: [Q M] += (A' - A) coupling after volume preservation
    double aqq9[9][9];                  ///< ~A_qq = (sum m q~ q~^T)^+ (quadratic objects)
    double quad_mean[6];                ///< a1..a6: mass-weighted means of qx^2, qy^2, qz^2, qx qy, qy qz, qz qx
    double quad_reach;                  ///< m: max |q~ quadratic terms| / max |q| (sm_limit_quadratic)
    double size;                        ///< m: the largest |q| over its members (sm_limit_deviation)
    int32_t modes;                      ///< rank kept by the pseudo-inverse (3 or 9 when complete)
    int32_t linear_modes;               ///< rank of A_qq (3 unless the cluster is flat or colinear)

    // state of the current step (pass outputs)
    sm_vec3 center;        ///< x_cm
    sm_vec3 velocity;      ///< v_cm, the members' mass-weighted mean velocity (the deviation limit's reference)
    sm_mat3 apq;           ///< A_pq
    double apq9[3][9];     ///< ~A_pq (quadratic objects)
    sm_mat3 rotation;      ///< R
    sm_mat3 linear_fit;    ///< A_pq A_qq before volume treatment and cap (used by plasticity)
    double transform[3][9];///< T
    /// OpenCL: the device's warm start of the rotation (a unit quaternion x, y, z, w) as read back,
    /// uploaded again as it was so that a read-back and upload change nothing; unset: from R
    float warm_start[4];
    bool warm_start_set;
} sm_cluster;

/// The uniform grid of the collide passes (Teschner et al. 2003): cubic cells of twice the
/// largest particle radius, hashed into a table of buckets; the colliding particles sorted by
/// bucket, then by index (a counting sort). Every pair closer than the sum of its radii lies
/// in neighbouring cells, so a particle finds its contacts in the 27 cells around its own.
typedef struct sm_grid {
    double cell_size;       ///< m: twice the largest particle radius
    int32_t table_size;     ///< buckets: a power of two, at least twice the colliding particles
    int32_t colliding;      ///< particles with a radius (of colliding objects)
    int32_t capacity;       ///< particles the arrays below hold
    int32_t *cell;          ///< 4 per particle: cell x, y, z and its bucket (-1: does not collide)
    int32_t *bucket_start;  ///< table_size + 1: bucket b holds sorted[bucket_start[b] .. bucket_start[b + 1])
    int32_t *sorted;        ///< the colliding particles by bucket, then by index
    // table_size each (pass 5): the object of a bucket's particles (-2: several, -1: none), the key
    // of their cell (sm_grid_cell_key(); -2: several) and whether another object's particle may
    // lie in the 27 cells around it (kernels/05's sm_bucket_near_others)
    int32_t *bucket_object, *bucket_cell, *bucket_near;
    // the CPU collide pass: each particle's candidates (SM_CONTACTS_PER_PARTICLE each) and their
    // number; the corrections of the sweeps so far (two arrays, read and written in turn) and
    // the first sweep's velocity changes, per particle
    int32_t *candidates, *candidate_count;
    sm_vec3 *moved[2], *dv;
} sm_grid;

/// A collider as the world keeps it: its def (the keyframes copied), its normal and axes.
typedef struct sm_collider {
    sm_collider_def def; ///< motion.times and motion.offsets point at the copies below
    double *times;
    sm_vec3 *offsets;
    sm_vec3 normal;      ///< plane: the unit normal
    sm_mat3 axes;        ///< box: rotation (columns: local axes); plane: column 1 is the normal
} sm_collider;

struct sm_world {
    sm_world_def def;
    const char *backend_name;

    int32_t object_count, object_capacity;
    sm_object *objects;

    // particles
    int32_t particle_count, particle_capacity;
    sm_vec3 *position, *velocity, *rest_position, *goal, *force;
    double *mass;
    uint8_t *fixed;
    int32_t *particle_object; ///< the object each particle belongs to
    int32_t *object_particles; ///< every object's particles, ascending, object after object (sm_object.first_particle)
    double *radius;           ///< m: its radius in contact, 0 when its object does not collide
    /// kinematic targets, 4 per particle: x, y, z (m) and the stiffness (N/m; SM_TARGET_PIN pins;
    /// 0: none); target_count: particles with a target
    double *target;
    int32_t target_count;
    /// OpenCL: 3 per particle, the high floats of the device's position pairs as last read back
    /// (NaN: none, or the host changed the position since); an upload splits a position the same
    /// way when it still adds up, so that reading back and uploading change nothing
    float *position_hi;

    // clusters and their memberships (CSR): membership k joins particle member_particle[k]
    // to cluster member_cluster[k] with rest offset member_rest[k] = x0_i - x0_cm and plastic
    // rest offset member_q[k] = S_p member_rest[k].
    int32_t cluster_count, cluster_capacity;
    sm_cluster *clusters;
    int32_t membership_count, membership_capacity;
    int32_t *member_particle, *member_cluster;
    sm_vec3 *member_rest, *member_q;

    // inverse map, rebuilt lazily: particle i's memberships are
    // particle_members[particle_member_offsets[i] .. particle_member_offsets[i + 1]), by cluster
    bool map_dirty;
    int32_t *particle_member_offsets, *particle_members;

    // the collide passes' grid, laid out again after objects are added
    bool grid_dirty;
    sm_grid grid;

    // skinned surfaces (surfaces.c, the skin pass): every object's surface vertices in one array,
    // each bound to clusters (CSR: vertex v's bindings are [surface_binding_offsets[v],
    // surface_binding_offsets[v + 1])), with its rest offset from each cluster's rest centre;
    // triangles as world vertex indices (and object-local ones for the API), and the triangles
    // around each vertex (CSR) for the normals
    int32_t surface_vertex_count, surface_triangle_count, surface_binding_count;
    sm_vec3 *surface_rest, *surface_position, *surface_normal;
    int32_t *surface_binding_offsets, *surface_binding_cluster;
    sm_vec3 *surface_binding_rest;
    int32_t *surface_triangles, *surface_triangles_local;
    int32_t *surface_incident_offsets, *surface_incident;
    sm_vec3 *skin_center; ///< per cluster, the skin pass's centre of mass of the current positions

    sm_pusher pusher; ///< the caller's push sphere (ground pass)
    int32_t collider_count, collider_capacity;
    sm_collider *colliders; ///< static and kinematic solids (ground pass, step 9a)
    double time;            ///< s simulated so far
    sm_cut_info *cuts;      ///< every cut made, in order (sm_world_get_cuts())
    int32_t cut_count, cut_capacity;

    sm_profile profile;
    int64_t step_calls; ///< sm_world_step() calls, for the state check's interval

    // the OpenCL backend (opencl/cl_backend.h), NULL on the CPU reference
    struct sm_cl_backend *cl;
};

/* errors.c */
/// Records a formatted message for sm_last_error() and returns `code`.
sm_result sm_fail(sm_result code, const char *format, ...) __attribute__((format(printf, 2, 3)));
/// Sends a formatted message to the world's log callback, if any.
void sm_log(const sm_world *world, sm_log_level level, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* files.c */
typedef enum sm_read_status {
    SM_READ_OK,
    SM_READ_CANNOT_OPEN, ///< fopen failed; errno says why
    SM_READ_FAILED,      ///< a read failed (a directory, an I/O error)
    SM_READ_TOO_LARGE,   ///< the file is larger than the limit
    SM_READ_NO_MEMORY,
} sm_read_status;
/// Reads a whole file into *out (malloc'd, with a NUL appended; *out_size excludes it). Files
/// of `limit` bytes or more are refused.
sm_read_status sm_read_file(const char *path, size_t limit, char **out, size_t *out_size);

/* clusters.c */
/// Builds the grid clusters of an object from its local (unrotated) points: returns CSR lists
/// in *out_offsets / *out_indices (malloc'd) and the count.
sm_result sm_clusters_from_grid(const sm_vec3 *local, int32_t count, const int32_t grid[3], double overlap,
                                int32_t **out_offsets, int32_t **out_indices, int32_t *out_cluster_count);
/// Recomputes q_k = S_p (x0_k - x0_cm), A_qq, ~A_qq and the quadratic means of one cluster.
void sm_cluster_update_rest(sm_world *world, sm_cluster *cluster);
/// The quadratic fit ~A = ~A_pq ~A_qq = [A Q M] of a cluster's current moments.
void sm_cluster_quadratic_fit(const sm_cluster *cluster, double out[3][9]);
/// The weights w = ~A_qq q~ of membership k of a quadratic cluster: the fit is sum m p w^T.
void sm_cluster_quadratic_weights(const sm_world *world, const sm_cluster *cluster, int32_t k, double out[9]);
/// Rebuilds the particle-to-membership map if objects were added since.
sm_result sm_world_update_map(sm_world *world);

/// The i-th particle of object `o` (i in [0, o->particle_count)): its world index.
static inline int32_t sm_object_particle(const sm_world *world, const sm_object *o, int32_t i)
{
    return world->object_particles[o->first_particle + i];
}

/// Where particle `particle` is in object `o`'s list (the inverse of sm_object_particle()), or -1
/// when it is not one of the object's: a binary search of the ascending list.
static inline int32_t sm_object_local(const sm_world *world, const sm_object *o, int32_t particle)
{
    const int32_t *list = world->object_particles + o->first_particle;
    int32_t lo = 0, hi = o->particle_count;
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (list[mid] < particle) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->particle_count && list[lo] == particle ? lo : -1;
}

/* world.c */
/// Reallocates *array to `capacity` elements of `element` bytes; false (and *array untouched)
/// when out of memory.
bool sm_grow(void **array, size_t element, size_t capacity);
/// Marks the positions of particles [first, first + count) as set by the host (no device split).
void sm_forget_position_split(sm_world *world, int32_t first, int32_t count);
/// Frees the world's objects, particles, clusters, memberships, grid and surfaces (not the
/// world record itself, its colliders or its backend).
void sm_world_free_objects(sm_world *world);
/// Grows the world's arrays to hold `particles`, `clusters` and `memberships` and one more object.
sm_result sm_world_reserve(sm_world *w, int64_t particles, int64_t clusters, int64_t memberships);
/// Appends a cluster of object `object` (space reserved) holding particles first + members[j],
/// in that order, with plastic state `plastic`: its rest data computed, its step state the rest state.
void sm_world_append_cluster(sm_world *world, int32_t object, int32_t first, const int32_t *members, int32_t count,
                             sm_mat3 plastic);
/// Logs a notice when cluster `c` (world index) of object `object` supports fewer modes than its
/// mode has; returns whether it does.
bool sm_cluster_note_modes(const sm_world *world, int32_t object, int32_t c);
/// The one scheduler of the passes: whether pass `pass` runs in this world (the grid and collide
/// with colliding particles, the ground with a ground, a pusher or colliders, plasticity with a
/// plastic object, the skin with surfaces; the others always).
bool sm_pass_runs(const sm_world *world, sm_pass pass);
/// How a backend runs the passes the scheduler picks: `run` runs (or enqueues) pass `pass` of
/// solver step `substep` (the skin: after the last), `substep_done` (may be NULL) follows each
/// solver step and the skin, told whether they went well.
typedef struct sm_pass_runner {
    sm_result (*run)(sm_world *world, sm_pass pass, double h, int32_t substep);
    void (*substep_done)(sm_world *world, bool ok);
} sm_pass_runner;
/// Runs `substeps` solver steps of length h, each the passes that run in pipeline order, then
/// the skin once, through `runner`; advances the world's time and step count. Both backends'
/// steps are this loop.
sm_result sm_world_run_passes(sm_world *world, double h, int32_t substeps, const sm_pass_runner *runner);
/// Checks a step's arguments for `call`, brings the membership map and the grid up to date and
/// sets *out_h = dt / substeps.
sm_result sm_world_step_check(sm_world *world, double dt, int32_t substeps, const char *call, double *out_h);
/// Checks an object def's explicit cluster lists and fixed indices against its particle count.
/// On failure sm_last_error() holds the problem and `field` the field at fault, as named in
/// scene files ("clusters.lists[2]", "fixed").
sm_result sm_object_check_indices(const sm_object_def *def, int32_t count, char *field, size_t field_size);

/* grid.c */
/// Sizes the grid for the world's colliding particles (cell size, table size, arrays); a no-op
/// unless objects were added since.
sm_result sm_grid_layout(sm_world *world);
/// Sorts the colliding particles at `position` into the grid of cells of edge `cell` (its layout
/// must be current).
void sm_grid_build(sm_grid *grid, double cell, const sm_vec3 *position, const double *radius, int32_t particle_count);
/// A key of a cell, never negative: kernels/05's sm_cell_key.
static inline int32_t sm_grid_cell_key(const int32_t c[3])
{
    return (int32_t)((((uint32_t)c[0] * 73856093u) ^ ((uint32_t)c[1] * 19349663u) ^ ((uint32_t)c[2] * 83492791u)) & 0x7fffffffu);
}
/// m: the skin of the contact candidates, collisions.skin times the largest particle radius.
double sm_grid_skin(const sm_world *world);
/// The edge of the cells of the collide passes' grid: twice the largest radius plus the skin.
double sm_grid_search_cell(const sm_world *world);
/// Cell k (0 to 26: x fastest, then y, then z, each from -1 to +1) of the 27 around `cell`:
/// its coordinates into out, and its bucket. The bucket may also hold particles of other cells;
/// sm_grid_in_cell() tells them apart.
int32_t sm_grid_neighbour_cell(const sm_grid *grid, const int32_t cell[4], int k, int32_t out[3]);
/// Whether the particle in slot s of the sorted array lies in cell c.
static inline bool sm_grid_in_cell(const sm_grid *grid, int32_t s, const int32_t c[3])
{
    const int32_t *own = &grid->cell[4 * grid->sorted[s]];
    return own[0] == c[0] && own[1] == c[1] && own[2] == c[2];
}
/// Whether particles i and j may collide: both have a radius, and they belong to different
/// objects or to one self-colliding object in which they are not rest neighbours.
bool sm_grid_pair_collides(const sm_world *world, int32_t i, int32_t j);
void sm_grid_free(sm_grid *grid);

/* colliders.c */
/// Where collider `c` is at time t: its centre and velocity.
void sm_collider_state(const sm_collider *c, double t, sm_vec3 *center, sm_vec3 *velocity);
/// Whether point d (relative to the collider's centre) is inside collider `c`; if so, *push
/// receives the shortest displacement that puts it on the surface and *normal the outward unit
/// normal there.
bool sm_collider_push_out(const sm_collider *c, sm_vec3 d, sm_vec3 *push, sm_vec3 *normal);
void sm_colliders_free(sm_world *world);

/* surfaces.c */
/// Binds the surface of object `object` (just added, with its clusters; `rot` and `position` place
/// it like the particles) and appends it to the world's surfaces.
sm_result sm_surface_add(sm_world *world, int32_t object, const sm_surface *surface, sm_mat3 rot, sm_vec3 position);
/// The vertex normals of the surfaces from `position` into `normal` (vertices [first, first + count)).
void sm_surface_normals(const sm_world *world, const sm_vec3 *position, sm_vec3 *normal, int32_t first, int32_t count);
void sm_surfaces_free(sm_world *world);

/// The collision grid's hash table size for `colliding` particles: the least power of two of
/// at least twice as many buckets.
static inline int64_t sm_grid_table_size(int64_t colliding)
{
    int64_t table = 1;
    while (table < 2 * colliding) table *= 2;
    return table;
}

/// Checks an object def's parameters (those that do not depend on its sampled particles).
sm_result sm_validate_object_def(const sm_object_def *d);

/* memory.c */
/// The sizes that set a world's memory: a world's (sm_world_footprint()) or what an object adds.
typedef struct sm_footprint {
    int64_t objects, particles, clusters, memberships;
    int64_t colliding; ///< particles with a collision radius
    int64_t large_clusters; ///< OpenCL: clusters reduced by a work-group (sm_cl_large_threshold())
    int64_t surface_vertices, surface_bindings, surface_triangles;
    bool quadratic; ///< any quadratic object (the quadratic buffers are made only then)
} sm_footprint;
sm_footprint sm_world_footprint(const sm_world *world);
void sm_footprint_add(sm_footprint *to, const sm_footprint *add);
/// What adding the object of a def (validated) to the world adds, from sm_shape_count() and its
/// cluster def, without sampling it: exact particles and list clusters; grid clusters and
/// memberships estimated from the grid and its overlap.
sm_result sm_object_footprint(const sm_world *world, const sm_object_def *def, sm_footprint *out);
/// The host bytes of a world of footprint f, at the peak while its objects are added.
int64_t sm_host_bytes(const sm_footprint *f);
/// Fails with SM_ERROR_OUT_OF_MEMORY, naming the figures, when the world with `add` added would
/// not fit the memory budget (sm_world_def.memory_budget, else $SM_MEMORY_BUDGET, else the host's
/// available memory and the device's global memory) or one of its device buffers would exceed the
/// device's largest allocation. `what` names the addition in the message ("the scene").
sm_result sm_check_memory(const sm_world *world, const sm_footprint *add, const char *what);

/* shapes.c */
/// Samples a shape into points in the object's frame (malloc'd) and their masses (malloc'd).
sm_result sm_shape_sample(const sm_shape *shape, double total_mass, sm_vec3 **out_points,
                          double **out_masses, int32_t *out_count);
/// How many particles sm_shape_sample() makes of the shape, without sampling it: exact, except a
/// mesh's inner lattice, which is estimated from the volume the mesh encloses.
sm_result sm_shape_count(const sm_shape *shape, int64_t *out_count);
/// The lattice spacing of a sampled shape, m: the smallest particle distance along a box's axes,
/// `spacing` for the lattice shapes, the median nearest-neighbour distance for points; 0 for a
/// single particle.
double sm_shape_spacing(const sm_shape *shape, const sm_vec3 *points, int32_t count);

/// The quadratic feature vector q~ = [q, qx^2 - a1, qy^2 - a2, qz^2 - a3, qx qy - a4, qy qz - a5, qz qx - a6].
static inline void sm_quadratic_terms(sm_vec3 q, const double mean[6], double out[9])
{
    out[0] = q.x, out[1] = q.y, out[2] = q.z;
    out[3] = q.x * q.x - mean[0];
    out[4] = q.y * q.y - mean[1];
    out[5] = q.z * q.z - mean[2];
    out[6] = q.x * q.y - mean[3];
    out[7] = q.y * q.z - mean[4];
    out[8] = q.z * q.x - mean[5];
}

/// alpha for a step of length h: min(1, h / tau) when tau is set.
static inline double sm_object_alpha(const sm_object *object, double h)
{
    if (object->tau > 0.0) return h / object->tau < 1.0 ? h / object->tau : 1.0;
    return object->alpha;
}

#endif
