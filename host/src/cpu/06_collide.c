#include "cpu_passes.h"
#include "../../../kernels/sm_shared.h"
#include "../math3.h"

/// The contact of particle i with particle j, whose offset d = x_i - x_j overlaps (|d|^2 =
/// dist2 < reach^2), added to the sums of its corrections, each weighted by its depth (so that a
/// contact that just begins weighs nothing).
static void add_contact(const sm_world *world, int32_t i, int32_t j, sm_vec3 d, double dist2, double reach, double h,
                        bool respond, sm_vec3 *dx, sm_vec3 *dv, double *weight)
{
    const sm_collisions *settings = &world->def.collisions;
    // the normal is the pair's direction at the start of the step, x - h v, so that a particle
    // that moved past the other's centre in one step is pushed back, not through
    const sm_vec3 v_rel = v3_sub(world->velocity[i], world->velocity[j]);
    const sm_vec3 before = v3_sub(d, v3_scale(v_rel, h));
    const double before_length = v3_length(before), dist = sqrt(dist2);
    sm_vec3 n = before_length > 0.0 ? v3_scale(before, 1.0 / before_length)
                : dist > 0.0      ? v3_scale(d, 1.0 / dist)
                                  : v3(0.0, i > j ? 1.0 : -1.0, 0.0); // coincident: the higher index goes up
    const double w_i = 1.0 / world->mass[i], w_j = world->fixed[j] ? 0.0 : 1.0 / world->mass[j];
    const double share = w_i / (w_i + w_j); // i's part of the pair's correction
    const double depth = reach - v3_dot(d, n);
    if (!(depth > 0.0)) return;
    *dx = v3_add(*dx, v3_scale(n, depth * share * depth));
    if (respond) {
        const double vn = v3_dot(v_rel, n);
        const sm_vec3 tangential = v3_sub(v_rel, v3_scale(n, vn));
        sm_vec3 impulse = v3_scale(tangential, -settings->friction * share);
        // the correction's velocity stops the approach; restitution returns part of it
        if (vn < 0.0) impulse = v3_add(impulse, v3_scale(n, -settings->restitution * vn * share));
        *dv = v3_add(*dv, v3_scale(impulse, depth));
    }
    *weight += depth;
}

_Static_assert(SM_K_CONTACTS == SM_CONTACTS_PER_PARTICLE, "one limit of contacts per particle for both backends");

/// A particle's overlap: the other particle, its offset and squared distance.
typedef struct overlap {
    int32_t j;
    double dist2;
    sm_vec3 d;
    double reach;
} overlap;

/// Whether a comes before b among the nearest: the nearer, or at the same distance the lower index.
static bool nearer(const overlap *a, const overlap *b) { return a->dist2 < b->dist2 || (a->dist2 == b->dist2 && a->j < b->j); }

/// One particle's contact response, from the positions and velocities at the start of the sweep:
/// the sums of the corrections of its contacts (add_contact()), over every particle it overlaps
/// in the grid's order, or, when it overlaps more than SM_K_CONTACTS, over the SM_K_CONTACTS
/// nearest in index order. Returns the sum of the weights.
static double particle_contacts(const sm_world *world, int32_t i, double h, bool respond, sm_vec3 *out_dx, sm_vec3 *out_dv)
{
    const sm_grid *grid = &world->grid;
    const sm_vec3 x_i = world->position[i];
    const int32_t object = world->particle_object[i];
    const bool self = world->objects[object].self_collides;
    const uint32_t search = grid->search[i]; // the cells that may hold a pair (pass 5)
    overlap kept[SM_K_CONTACTS];
    int32_t found = 0, overlapping = 0;
    for (int k = 0; k < 27; k++) {
        if (!(search >> k & 1u)) continue;
        int32_t c[3];
        const int32_t b = sm_grid_neighbour_cell(grid, &grid->cell[4 * i], k, c);
        for (int32_t s = grid->bucket_start[b]; s < grid->bucket_start[b + 1]; s++) {
            // (the tests in the order that rejects most at least cost, from the slots' copies: another
            // object's particle in the grid always collides with i, sm_grid_pair_collides() decides
            // the others)
            const bool other = grid->slot_object[s] != object;
            if (!other && !self) continue;
            const double *slot = &grid->slot[4 * s]; // x_j, r_j
            const sm_vec3 d = v3_sub(x_i, v3(slot[0], slot[1], slot[2]));
            const double reach = world->radius[i] + slot[3], dist2 = v3_dot(d, d);
            if (!(dist2 < reach * reach)) continue;
            const int32_t j = grid->sorted[s];
            if (!sm_grid_in_cell(grid, s, c) || !(other || sm_grid_pair_collides(world, i, j))) continue;
            overlapping++;
            // the first SM_K_CONTACTS in the grid's order; past them, the nearest (insertion)
            const overlap next = {j, dist2, d, reach};
            if (found < SM_K_CONTACTS) {
                kept[found++] = next;
                continue;
            }
            if (overlapping == SM_K_CONTACTS + 1) // the first past the limit: order what is kept by nearness
                for (int32_t m = 1; m < found; m++)
                    for (int32_t t = m; t > 0 && nearer(&kept[t], &kept[t - 1]); t--) {
                        const overlap swap = kept[t];
                        kept[t] = kept[t - 1], kept[t - 1] = swap;
                    }
            if (!nearer(&next, &kept[found - 1])) continue;
            int32_t t = found - 1;
            for (; t > 0 && nearer(&next, &kept[t - 1]); t--) kept[t] = kept[t - 1];
            kept[t] = next;
        }
    }
    if (overlapping > SM_K_CONTACTS) // summed in index order, as the device does
        for (int32_t m = 1; m < found; m++)
            for (int32_t t = m; t > 0 && kept[t].j < kept[t - 1].j; t--) {
                const overlap swap = kept[t];
                kept[t] = kept[t - 1], kept[t - 1] = swap;
            }
    sm_vec3 dx = {0, 0, 0}, dv = {0, 0, 0};
    double weight = 0.0;
    for (int32_t m = 0; m < found; m++)
        add_contact(world, i, kept[m].j, kept[m].d, kept[m].dist2, kept[m].reach, h, respond, &dx, &dv, &weight);
    *out_dx = dx;
    *out_dv = dv;
    return weight;
}

void sm_cpu_collide(sm_world *world, double h)
{
    const int32_t n = world->particle_count;
    sm_vec3 *dx = world->grid.dx, *dv = world->grid.dv;
    double *weight = world->grid.weight;
    const int32_t slots = world->grid.bucket_start[world->grid.table_size];
    for (int32_t s = 0; s < slots; s++) world->grid.slot_object[s] = world->particle_object[world->grid.sorted[s]];
    for (int32_t sweep = 0; sweep < world->def.collisions.iterations; sweep++) {
        const bool respond = sweep == 0; // velocities respond once per step, in the first sweep
        for (int32_t s = 0; s < slots; s++) {
            const int32_t j = world->grid.sorted[s];
            double *slot = world->grid.slot + 4 * (size_t)s;
            slot[0] = world->position[j].x, slot[1] = world->position[j].y, slot[2] = world->position[j].z;
            slot[3] = world->radius[j];
        }
        for (int32_t i = 0; i < n; i++) {
            weight[i] = 0.0;
            // (no cell around it holds a particle it may collide with: pass 5)
            if (world->fixed[i] || world->grid.cell[4 * i + 3] < 0 || world->grid.search[i] == 0) continue;
            weight[i] = particle_contacts(world, i, h, respond, &dx[i], &dv[i]);
        }
        for (int32_t i = 0; i < n; i++) {
            if (!(weight[i] > 0.0)) continue;
            // the correction moves the particle and gives it the velocity of that move
            const sm_vec3 correction = v3_scale(dx[i], SM_K_CONTACT_RELAXATION / weight[i]);
            sm_vec3 v = v3_add(world->velocity[i], v3_scale(correction, 1.0 / h));
            if (respond) v = v3_add(v, v3_scale(dv[i], 1.0 / weight[i]));
            world->position[i] = v3_add(world->position[i], correction);
            world->velocity[i] = v;
        }
    }
}
