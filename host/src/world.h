/* The world as every backend sees it: particles, objects, clusters in CSR form with the
 * inverse particle-to-membership map, and the per-cluster state of the current step. */
#ifndef SM_WORLD_H
#define SM_WORLD_H

#include "colliders.h"
#include "errors.h"
#include "grid.h"
#include "shapematch/shapematch.h"

#include "../../kernels/sm_formulas.h" /* sm_step_alpha */

#include <stdatomic.h>
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
    /// step 2: the mass-weighted means of its clusters' centres and flows (the spin limit, 3a)
    sm_vec3 motion_center, motion_velocity;
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
    double metric_axes[3];              ///< metric_root's singular values, largest first (the deformation limit)
    sm_mat3 span;                       ///< A_qq W: the projector onto the directions its rest shape spans (I when all)
    double quad_regression[6][3];       ///< quadratic mode: G, the quadratic terms' regression on q (sm_quadratic_split)
    double quad_metric[21];             ///< quadratic mode: K over sum m |q|^2, what G leaves (sm_limit_quadratic)
    double aqq9[9][9];                  ///< ~A_qq = (sum m q~ q~^T)^+ (quadratic objects)
    double null_fit[3][9];              ///< quadratic mode: Z, the fit's share of R where ~A_qq is singular (sm_quadratic_null_fit)
    bool has_null_fit;                  ///< Z is not 0
    double quad_mean[6];                ///< a1..a6: mass-weighted means of qx^2, qy^2, qz^2, qx qy, qy qz, qz qx
    double size;                        ///< m: the largest |q| over its members (the motion and spin limits)
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
} sm_cluster;

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
    /// for pass 7, set by pass 4 each solver step: the velocity a particle began the step with
    /// (restitution returns no more than its approach then, sm_rebound) and how far, m, x - h v
    /// may lie from where it began (the motion limit shortens a move more than the velocity;
    /// contact's velocity change adds to it), to tell the depth it began the step in
    sm_vec3 *start_velocity;
    double *move_slack;

    // clusters and their memberships (CSR): membership k joins particle member_particle[k]
    // to cluster member_cluster[k] with rest offset member_rest[k] = x0_i - x0_cm, plastic
    // rest offset member_q[k] = S_p member_rest[k] and mass member_mass[k] = m_i / n_i, n_i the
    // clusters holding particle i: the particle's weight in every sum over a cluster's members
    // (sm_member_mass(), docs/algorithm.md step 1).
    int32_t cluster_count, cluster_capacity;
    sm_cluster *clusters;
    int32_t membership_count, membership_capacity;
    int32_t *member_particle, *member_cluster;
    sm_vec3 *member_rest, *member_q;
    double *member_mass;

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
    sm_collider *colliders; ///< static and kinematic solids (ground pass, step 7a)
    double time;            ///< s simulated so far
    sm_cut_info *cuts;      ///< every cut made, in order (sm_world_get_cuts())
    int32_t cut_count, cut_capacity;
    /// per cut of the scene that sm_scene_apply() follows, the id of its front piece here: -2
    /// before its time, -1 when it cut nothing (the file's ids of pieces are not the world's once
    /// a cut misses, or the viewer's scissors cut too)
    int32_t *scene_cut_front, scene_cut_count;

    sm_profile profile;
    int64_t step_calls; ///< sm_world_step() calls, for the state check's interval
    atomic_int cancel;  ///< sm_world_cancel() asked the step to stop (lock-free: a signal handler may set it)

    // the OpenCL backend (opencl/cl_backend.h), NULL on the CPU reference
    struct sm_cl_backend *cl;
};

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
/// Whether x lies in [0, 1].
static inline bool sm_in_unit_interval(double x) { return x >= 0.0 && x <= 1.0; }
/// Whether a vector reaches the world's device intact: OpenCL kernels take floats, so there each
/// component must be within the float range (any finite vector on the CPU reference).
bool sm_fits_device(const sm_world *world, sm_vec3 v);

/// The largest length the OpenCL backend takes for a collision radius or a collider's size, m:
/// its kernels square distances of about twice that (the reach of two particles; a point to a
/// sphere's centre), and (2 x 1e18)^2 stays far below FLT_MAX (3.4e38).
#define SM_CL_RADIUS_MAX 1e18
/// Reallocates *array to `capacity` elements of `element` bytes; false (and *array untouched)
/// when out of memory.
bool sm_grow(void **array, size_t element, size_t capacity);
/// Frees the world's objects, particles, clusters, memberships, grid and surfaces (not the
/// world record itself, its colliders or its backend).
void sm_world_free_objects(sm_world *world);
/// Replaces `world`'s objects, particles, clusters, memberships, surfaces and contact grid (what
/// sm_world_free_objects() frees, which it does to `world`'s) by `from`'s, which `world` owns
/// from then on; every other field of `world` (its def, colliders, time, cuts, profile, step
/// count, cancel request, device) stays. (`from`'s struct is the caller's to free.)
void sm_world_take_objects(sm_world *world, sm_world *from);
/// Grows the world's arrays to hold `particles`, `clusters` and `memberships` and one more object.
sm_result sm_world_reserve(sm_world *w, int64_t particles, int64_t clusters, int64_t memberships);

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
    return sm_step_alpha(object->alpha, object->tau, h);
}

#endif
