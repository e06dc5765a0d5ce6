/* The uniform grid of the collide passes (grid.c): its layout, shared with the OpenCL backend, and
 * its construction on the host. */
#ifndef SM_GRID_H
#define SM_GRID_H

#include "shapematch/shapematch.h"

#include <math.h>

/// The uniform grid of the collide passes (Teschner et al. 2003): cubic cells of two to four times
/// the largest particle radius (sm_grid_cell_size()), hashed into a table of buckets; the
/// colliding particles sorted by bucket, then by index (a counting sort). Every pair closer than
/// the sum of its radii lies in neighbouring cells, so a particle finds its contacts in the 27
/// cells around its own, and in those of them its reach meets (sm_cells_in_reach()).
typedef struct sm_grid {
    double cell_size;       ///< m: sm_grid_cell_size() of the colliding particles' radii
    double largest;         ///< m: the largest colliding particle's radius
    int32_t table_size;     ///< buckets: a power of two, at least twice the colliding particles
    int32_t colliding;      ///< particles with a radius (of colliding objects)
    int32_t capacity;       ///< particles the arrays below hold
    int32_t *cell;          ///< 4 per particle: cell x, y, z and its bucket (-1: does not collide)
    int32_t *bucket_start;  ///< table_size + 1: bucket b holds sorted[bucket_start[b] .. bucket_start[b + 1])
    int32_t *sorted;        ///< the colliding particles by bucket, then by index
    // table_size each (pass 5): the object of a bucket's particles (-2: several, -1: none; the
    // device's sm_k_bucket.object); and, on the CPU reference alone, the box of their spheres, 6
    // a bucket (the least x - r per axis, then the greatest x + r; the device keeps boxes of runs
    // and chunks instead, sm_k_box), whether they lie in several cells (buckets are shared) and
    // whether another object's particle may lie in the 27 cells around it (when not, its
    // particles have no candidates without a search)
    int32_t *bucket_object, *bucket_cells, *bucket_near;
    double *bucket_box;
    // the CPU collide pass: each particle's candidates (SM_CONTACTS_PER_PARTICLE each) and their
    // number; the corrections of the sweeps so far (two arrays, read and written in turn), the
    // first sweep's velocity changes and the weights (sm_contact_weight()), per particle
    int32_t *candidates, *candidate_count;
    sm_vec3 *moved[2], *dv;
    double *weight;
} sm_grid;

/// The edge of the collision grid's cells for particles of radii `smallest` to `largest`: four
/// times the largest radius, so that a particle's reach (its radius plus the largest) meets two
/// cells along each axis, but at most eight times the smallest, so that a cell holds no more
/// particles of an object than at twice the largest where radii differ by more than two (a cell
/// holds about (c / spacing)^3 particles of an object at rest, and a search reads at most
/// SM_K_CELL_VISITS of a bucket), and at least twice the largest, so that every pair that
/// overlaps lies in neighbouring cells.
static inline double sm_grid_cell_size(double smallest, double largest)
{
    return fmax(2.0 * largest, fmin(4.0 * largest, 8.0 * smallest));
}

/// The collision grid's hash table size for `colliding` particles: the least power of two of
/// at least twice as many buckets (a cell holds about sixteen particles in a pile, so that few
/// cells share a bucket: a shared bucket is read by the searches of both cells).
static inline int64_t sm_grid_table_size(int64_t colliding)
{
    int64_t table = 1;
    while (table < 2 * colliding) table *= 2;
    return table;
}

/// Sizes the grid for the world's colliding particles (cell size, table size, arrays); a no-op
/// unless objects were added since.
sm_result sm_grid_layout(sm_world *world);
/// Sorts the colliding particles at `position` into the grid of cells of edge `cell` (its layout
/// must be current).
void sm_grid_build(sm_grid *grid, double cell, const sm_vec3 *position, const double *radius, int32_t particle_count);
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

#endif
