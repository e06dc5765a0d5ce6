/* Clusters (clusters.c): grid clusters of an object, a cluster's rest data, its quadratic fit, and
 * the particle-to-membership map. */
#ifndef SM_CLUSTERS_H
#define SM_CLUSTERS_H

#include "world.h"

/// The grid over an object's rest bounding box: n regions an axis from lo, cells of `cell`, each
/// region its cell grown by `overlap` cells on every side, eps the round-off allowed at its faces.
typedef struct sm_grid_frame {
    double lo[3], cell[3], overlap, eps;
    int32_t n[3];
} sm_grid_frame;
/// Does region index i along axis a hold coordinate x? Grown cells, boundaries inclusive up to
/// round-off in the lattice coordinates.
bool sm_grid_region_holds(const sm_grid_frame *g, int a, int64_t i, double x);
/// The contiguous range [first, last] of region indices along axis a that hold x (empty when
/// first > last). Candidates come from the cell arithmetic with a margin; the exact test decides.
void sm_grid_region_range(const sm_grid_frame *g, int a, double x, int64_t *first, int64_t *last);

/// Builds the grid clusters of an object from its local (unrotated) points: returns CSR lists
/// in *out_offsets / *out_indices (malloc'd) and the count.
sm_result sm_clusters_from_grid(const sm_vec3 *local, int32_t count, const int32_t grid[3], double overlap,
                                int32_t **out_offsets, int32_t **out_indices, int32_t *out_cluster_count);
/// For each membership j of an object's clusters (CSR: offsets, indices into its `particles`
/// particles), how many memberships its particle has: n_i, by which a membership's mass is m_i /
/// n_i (sm_member_mass). Returns a malloc'd array of offsets[cluster_count] entries (at least
/// one), or NULL when out of memory.
int32_t *sm_cluster_holders(const int32_t *offsets, const int32_t *indices, int32_t cluster_count, int32_t particles);
/// A membership's mass: its particle's mass m_i shared equally by the n_i clusters holding it, so
/// that a particle weighs m_i in all its clusters' sums together. With goals averaged over a
/// particle's clusters (step 4), shape matching is then the gradient of one potential in the
/// particles' own masses: it changes no momentum and, where each cluster's goals are a
/// projection in its metric, no energy (docs/algorithm.md step 1).
static inline double sm_member_mass(double particle_mass, int32_t holders) { return particle_mass / holders; }
/// Recomputes q_k = S_p (x0_k - x0_cm), A_qq, ~A_qq and the quadratic means of one cluster.
void sm_cluster_update_rest(sm_world *world, sm_cluster *cluster);
/// The quadratic fit ~A = ~A_pq ~A_qq = [A Q M] of a cluster's current moments.
void sm_cluster_quadratic_fit(const sm_cluster *cluster, double out[3][9]);
/// The weights w = ~A_qq q~ of membership k of a quadratic cluster: the fit is sum m p w^T.
void sm_cluster_quadratic_weights(const sm_world *world, const sm_cluster *cluster, int32_t k, double out[9]);
/// Rebuilds the particle-to-membership map if objects were added since.
sm_result sm_world_update_map(sm_world *world);

#endif
