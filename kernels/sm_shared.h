/* What crosses the host-device boundary: constants and packed structs, included by the host
 * C code and by every kernel. Only 4-byte scalars and 4-wide vectors cross, so each struct has
 * the same layout on both sides; the host checks the sizes with _Static_assert. */
#ifndef SM_SHARED_H
#define SM_SHARED_H

#ifdef __OPENCL_VERSION__
typedef int sm_int;
typedef uint sm_uint;
typedef float sm_float;
#else
#include <stdint.h>
typedef int32_t sm_int;
typedef uint32_t sm_uint;
typedef float sm_float;
#endif

/* Positions are double-float pairs: position (x, y, z, mass) holds the float nearest to each
 * coordinate and position_lo the float nearest to the remainder, so that a position keeps about
 * 48 bits wherever it is. Float alone loses a step's small motions to rounding far from the
 * origin (at 100 m its spacing is 8e-6 m), and stiff objects amplify that rounding over
 * substeps. The kernels form every difference of positions (p = x - x_cm, g - x) from the
 * pairs, so only the small differences are rounded to float. Cluster centres are likewise a
 * pair: the float nearest to x_cm and the rest. */

/* Modes, equal to the public sm_mode values. */
#define SM_K_MODE_RIGID 0
#define SM_K_MODE_LINEAR 1
#define SM_K_MODE_QUADRATIC 2

/* Object flags. */
#define SM_K_VOLUME 1  /* volume preservation: the nearest linear fit of determinant 1 */
#define SM_K_CAP 2     /* soft deformation cap */
#define SM_K_PLASTIC 4 /* plastic rest-shape update */
#define SM_K_SELF_COLLIDE 8 /* its particles collide with each other (rest neighbours excepted) */
#define SM_K_VOLUME_SCALE 16 /* volume preservation by the paper's A / cbrt(det A) instead */

/* The pseudo-inverse of a cluster's moments (A_qq, and ~A_qq in quadratic mode) counts an
 * eigenvalue below this times the largest as zero, of the moments of its offsets over its RMS
 * radius, on both backends (float devices cannot use less). The float kernels' fit loses
 * accuracy as the moments' condition number grows: at 1e-9, a quadratic cluster of 10 random
 * points (9 modes, one of 1e-8) had its goal transform 3e-3 from the reference's in one step. */
#define SM_MOMENT_THRESHOLD 1e-6

/* A cluster is flat (or colinear) where an eigenvalue of its 3x3 moments sum m q q^T is below
 * this times the largest: thinner than about 1% of its width. Its pseudo-inverse A_qq and its
 * metric then leave that direction out, on both backends. The float kernels apply a thinner
 * one's linear fit A_pq A_qq to about FLT_EPSILON times the moments' condition number: one step
 * of a cluster 1.3% as thick as wide landed 5e-5 of its size from the reference's, and at a
 * threshold of 1e-9 a cluster of 4 points 5e-4 as thick as wide 9 cm (test_opencl's
 * single_steps_agree_for_clusters_of_any_shape). */
#define SM_FLAT_THRESHOLD 1e-4

/* The most moves along a mesh collider's field that take a particle out of it (sm_formulas.h's
 * SM_DEFINE_SDF_PUSH): one where the field is a plane's, more near an edge or a corner. */
#define SM_SDF_PUSH_MOVES 4

/* Rotation (step 2): a cluster whose linear match A_pq A_qq has a determinant below minus this
 * (turned inside out by more than 0.1% of its volume) keeps its rotation of the step before. */
#define SM_INVERTED_VOLUME 0.001f

/* Rotation on the device (kernels/02_rotation.cl): the polar decomposition by Newton's method
 * takes at most this many steps, and only clusters whose A_pq has a determinant above
 * SM_K_POLAR_DET_MIN times the cube of its RMS singular value; the others, and any that do not
 * converge, take Horn's quaternion method. */
#define SM_K_POLAR_ITERATIONS 16
#define SM_K_POLAR_DET_MIN 0.001f

/* Most Newton steps for the volume projection's one unknown (docs/algorithm.md, step 3);
 * it stops earlier once a step changes it by at most 4 epsilon of its value. */
#define SM_VOLUME_ITERATIONS 16

/* The volume projection on the device (kernels/03_goal_transform.cl) first tries the fixed
 * point of its condition for a minimum, at most this many steps, for fits whose determinant
 * is within this of 1; the others, and any that do not converge, take the eigen-decomposition. */
#define SM_K_VOLUME_FIXED_POINT_STEPS 8
#define SM_K_VOLUME_FIXED_POINT_RANGE 0.5f

/* Flags of the ground pass: which of its parts are on. */
#define SM_K_GROUND 1
#define SM_K_PUSHER 2
#define SM_K_CONTACTS_MADE 4 /* pass 6 ran: apply its corrections first */

/* What the blend-integrate pass reads besides the world's own forces */
#define SM_K_INPUT_FORCES 1 /* the caller's forces, float4 per particle (xyz: N) */
#define SM_K_INPUT_TARGETS 2 /* targets, float4 per particle (xyz: m, w: stiffness N/m, SM_K_TARGET_PIN pins, 0 none) */
#define SM_K_TARGET_PIN (-1.0f)

/* The collide passes. A cell (x, y, z) of the uniform grid goes to bucket
 * SM_K_CELL_HASH(x, y, z, table_size - 1) of the hash table (the table size is a power of two):
 * Teschner et al. 2003's hash of y and z, plus x, so that the cells of a row along x go to
 * consecutive buckets (a search reads the buckets of three neighbouring cells together).
 * Particles of one self-colliding object whose rest distance is below SM_K_REST_NEIGHBOURS
 * times the sum of their radii never collide with each other. */
#define SM_K_CELL_HASH(x, y, z, mask)                                                               \
    ((sm_int)(((sm_uint)(x) + (((sm_uint)(y) * 19349663u) ^ ((sm_uint)(z) * 83492791u))) & (sm_uint)(mask)))
#define SM_K_REST_NEIGHBOURS 1.5f
/* On a GPU, clusters of at least SM_K_LARGE_CLUSTER members are reduced by a work-group each
 * (pass 1's second kernel), of up to SM_K_GROUP_SIZE work-items, instead of one work-item's loop.
 * On a CPU device the loop is faster, but one work-item's float sums over more than
 * SM_K_LARGE_CLUSTER_CPU members round beyond the single-step bound of 1e-5 (a cluster of 936,000
 * members: 2e-5; reduced by a group, 7e-8), so larger clusters take the group there too.
 * $SM_LARGE_CLUSTER sets the threshold on any device. */
#define SM_K_LARGE_CLUSTER 1024
#define SM_K_LARGE_CLUSTER_CPU 16384
#define SM_K_GROUP_SIZE 128
#define SM_K_MOMENT_TERMS 42 /* sum m (y - q) (3), sum m v (3), A_pq (9) and the quadratic fit (27) */

/* Contact (passes 5 and 6, docs/contact.md). Each colliding particle takes, once per solver
 * step, the SM_K_CONTACTS particles that overlap it deepest (ties: the lower index), in index
 * order; the sweeps sum over them. A search reads
 * at most SM_K_CELL_VISITS particles of each bucket of the grid, the lowest indices (a bucket
 * that holds more is crowded: particles piled onto one point), so that the work of every
 * particle is bounded. */
#define SM_K_CONTACTS 32 /* = SM_CONTACTS_PER_PARTICLE of shapematch.h */
#define SM_K_CELL_VISITS 512
/* A bucket's consecutive slots of one object (a run) lie in chunks of at most SM_K_CHUNK_SLOTS,
 * each with the box of its spheres (pass 5), so that a search passes over the chunks out of its
 * particle's reach without reading them. */
#define SM_K_CHUNK_SLOTS 8
/* The scan of the grid's bucket counts (pass 5) runs a work-group per tile of SM_K_SCAN_TILE
 * buckets (a bucket's beginning: its tile's beginning plus its own in the tile). */
#define SM_K_SCAN_TILE_LOG 10
#define SM_K_SCAN_TILE (1 << SM_K_SCAN_TILE_LOG)

/* Collider shapes, equal to the public sm_collider_shape values. */
#define SM_K_COLLIDER_PLANE 0
#define SM_K_COLLIDER_BOX 1
#define SM_K_COLLIDER_SPHERE 2
#define SM_K_COLLIDER_MESH 3

/* The motion limit (step 4f), in sizes of the particle's clusters (their largest rest offsets):
 * a particle moves at most SM_MOTION_STEP of them relative to its clusters' motion in a step,
 * and ends at most SM_MOTION_DEVIATION of them from where its goal goes. (Two sizes of
 * deviation let the pieces of bodies of several clusters pull apart further than the bound of
 * "Stable" in the random draws; less makes ordinary scrambled starts reach it.) */
#define SM_MOTION_STEP 1.0f
#define SM_MOTION_DEVIATION 1.0f
/* The spin limit (docs/algorithm.md step 3a): a cluster's flow, relative to its object's, moves
 * it at most SM_SPIN_STEP of its reach from the object's centre in a step: a quarter radian of a
 * turn about the centre. */
#define SM_SPIN_STEP 0.25f

/* The state check's allowance for rounding (sm_cluster_stretched), relative to the magnitude of
 * a cluster's positions: far above the rounding of their differences on either backend (1e-16
 * in double, about 1e-14 with the device's double-float positions), far below any stretch. */
#define SM_K_CHECK_ROUNDING 1e-9f

/* Below this det(A) the paper's volume scaling takes R instead (docs/algorithm.md step 3). */
#define SM_K_DET_MIN 1e-6f
/* Fits of det(A) below this (squashed to under a hundredth of their volume, flattened or
 * inverted) reach the nearest fit of determinant 1 through its singular frames
 * (sm_volume_nearest_squashed), where scaling A's own columns would magnify the rounding of a
 * nearly lost direction (1e-9 of det A' - 1 at det A 1e-5). */
#define SM_K_VOLUME_SQUASHED 1e-2f
/* A plastic update whose det(S_p) (before the volume normalisation; 1 before the update) is at
 * most this is skipped: it would flip the rest shape, or collapse it to a plane or a line whose
 * normalisation only rounding decides (a flat cluster's update at full rate has det 0). */
#define SM_K_PLASTIC_DET_MIN 1e-3f

/// Per-object parameters (64 bytes).
typedef struct sm_k_object {
    sm_int mode, flags;
    sm_int first_particle, particle_count; /* its particles: object_particles[first_particle, + particle_count) */
    sm_float alpha, tau, beta, damping; /* tau > 0: alpha = min(1, h / tau) */
    sm_float cap_soft, cap_hard;
    sm_float plastic_yield, plastic_creep, plastic_max;
    sm_float strain_limit; /* the deformation limit s (sm_limit_stretch, sm_limit_quadratic) */
    sm_int first_cluster, cluster_count; /* its clusters (the spin limit's sums) */
} sm_k_object;

/// Per-cluster constants (32 bytes): memberships [first_member, first_member + member_count).
typedef struct sm_k_cluster {
    sm_int first_member, member_count, object;
    sm_float mass;  /* M_c, kg */
    sm_int anchor;  /* the member particle nearest the rest centre (where sums start when no last centre is known) */
    sm_int anchored; /* 1: it holds a fixed particle, and its velocity v_cm is 0 */
    sm_int unused[2];
} sm_k_cluster;

/// A 3x3 matrix, row-major, one row per 4-float group (48 bytes; the fourth column is unused).
typedef struct sm_k_mat3 {
    sm_float m[3][4];
} sm_k_mat3;

/// A 3x9 matrix by columns, one column per 4-float group (144 bytes; the fourth row is unused
/// and zero), so that a kernel moves a column as one float4: the quadratic moments and goal
/// transforms. Row r of column s is c[s][r]. In the goal transforms T, the fourth row of columns
/// 0 to 2 holds the goal offset T b~ (sm_k_bias), which the blend pass takes off the centre.
typedef struct sm_k_mat39 {
    sm_float c[9][4];
} sm_k_mat39;

/// Per-cluster rest data that plasticity changes (392 bytes): A_qq, the means a1..a6 of the
/// quadratic terms, what volume preservation and the deformation limit measure in: the roots of
/// the moments W = sum m q q^T scaled to determinant 1 and the roots' singular values, and, in
/// quadratic mode, the split of the quadratic terms into their regression G on q and what it
/// leaves, whose moments K the limit measures the quadratic block in (QUADRATIC_SPLIT in
/// kernels/sm_formulas.h).
typedef struct sm_k_cluster_rest {
    sm_k_mat3 aqq;
    sm_float quad_mean[6];
    sm_float size; /* m: the largest |q| over the members (the motion and spin limits) */
    sm_k_mat3 metric_root, metric_root_inv;
    sm_float metric_axes[4];         /* metric_root's singular values, largest first, and 0 (sm_limit_in_metric) */
    sm_float quad_regression[6][3];  /* G: p = G q + r (sm_quadratic_split) */
    sm_float quad_metric[21];        /* K = sum m r r^T over sum m |q|^2, upper triangle by rows (sm_limit_quadratic) */
    sm_k_mat3 span; /* A_qq W: the projector onto the directions the rest shape spans (I when it spans all three) */
} sm_k_cluster_rest;

/// The mass-weighted mean b~ of a cluster's rest offsets q~ as the device holds them (48 bytes):
/// the float rest offsets, and the quadratic terms as sm_quadratic_terms_f() forms them from them,
/// which do not sum to 0 as the exact ones do. At rest every step would otherwise move the
/// cluster's goals, and so the object, by T b~ (about 1e-8 of its size): the goal-transform pass
/// writes T b~ beside T (sm_k_mat39) and the blend pass takes it off. b[0..2]: the linear terms,
/// b[3..8] the quadratic ones (0 outside quadratic mode), b[9..11] 0.
typedef struct sm_k_bias {
    sm_float b[12];
} sm_k_bias;

/// The quadratic fit weights ~A_qq q~ of one membership (36 bytes), quadratic clusters only.
/// With them the fit ~A = ~A_pq ~A_qq is computed as sum m p w^T: the same matrix, but the
/// ill-conditioned ~A_qq is applied in double on the host (or in the plasticity pass) instead
/// of being rounded to float and multiplied on the device, which for long, thin clusters loses
/// up to its condition number in accuracy.
typedef struct sm_k_weights {
    sm_float w[9];
} sm_k_weights;

/// A bucket of the device's grid (8 bytes): its first slot within its tile of the scan (`start`;
/// kernels/05's sm_bucket_start() adds the tile's, and the next bucket's beginning ends it) and
/// its particles' object, or -2 when they are of several (-1 while pass 5 builds it).
typedef struct sm_k_bucket {
    sm_int start, object;
} sm_k_bucket;

/// The box of the spheres of a run or a chunk of a bucket's slots (32 bytes), kept at boxes[2 s]
/// for a chunk and boxes[2 s + 1] for a run beginning at slot s: lo.xyz the least x - r per axis,
/// hi.xyz the greatest x + r. A search passes over a run or chunk whose box is out of its
/// particle's reach without reading its slots.
typedef struct sm_k_box {
    sm_float lo[4], hi[4];
} sm_k_box;

/// A slot of the device's grid (32 bytes): the position and radius of a colliding particle
/// (xyz, w), the particle, its object, and where it begins a run or a chunk, the slot after the
/// run (the consecutive slots of one object in its bucket, which a search passes over together
/// where they are its own object's) and the slot after the chunk (SM_K_CHUNK_SLOTS of a run at a
/// time). What a search reads of a slot lies in one place.
typedef struct sm_k_slot {
    sm_float position[4];
    sm_int particle, object, run_end, chunk_end;
} sm_k_slot;

/// A collider's shape (128 bytes). axes: row k is the box's or mesh's local axis k in world
/// coordinates; a plane's normal is row 0. size: the box's half extents (x, y, z) and the
/// sphere's radius (w). A mesh's field: its first node in the fields buffer (field_first), its
/// nodes along x, y, z, and origin = (node (0, 0, 0) in the unturned frame, the cell).
typedef struct sm_k_collider {
    sm_int shape, field_first, unused[2];
    sm_int nodes[4];
    sm_float axes[3][4];
    sm_float size[4];
    sm_float origin[4];
    sm_float restitution, friction, unused2[2];
} sm_k_collider;

/// Where a collider is during one step (48 bytes): its centre as a double-float pair like the
/// positions (center + center_lo) and its velocity; the host writes one per collider per step.
typedef struct sm_k_collider_state {
    sm_float center[4], center_lo[4], velocity[4];
} sm_k_collider_state;

#endif
