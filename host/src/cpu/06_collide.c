#include "cpu_passes.h"
#include "../../../kernels/sm_formulas.h"
#include "../math3.h"

_Static_assert(SM_K_CONTACTS == SM_CONTACTS_PER_PARTICLE, "one limit of contacts per particle for both backends");

/// The squared distance from x to a bucket's box (lo xyz, hi xyz): 0 inside it.
static double box_distance_squared(const double *box, sm_vec3 x)
{
    const double p[3] = {x.x, x.y, x.z};
    double d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        const double d = p[k] < box[k] ? box[k] - p[k] : p[k] > box[3 + k] ? p[k] - box[3 + k] : 0.0;
        d2 += d * d;
    }
    return d2;
}

/// Particle i's candidates (docs/contact.md): the particles of the 27 cells around its own (in
/// each bucket at most its first SM_K_CELL_VISITS particles, the lowest indices) that may collide
/// with it and overlap it; of those the SM_K_CONTACTS of the smallest gaps (sm_contact_nearer()),
/// into own[] in index order. Returns how many. Cells out of its reach (sm_cells_in_reach()),
/// buckets that hold only its own object's particles (unless it collides with itself), and
/// buckets whose box lies out of its reach are passed over.
static int32_t find_candidates(const sm_world *world, int32_t i, int32_t *own)
{
    const sm_grid *grid = &world->grid;
    const sm_vec3 x_i = world->position[i];
    const int32_t object = world->particle_object[i];
    const bool self = world->objects[object].self_collides;
    double key[SM_K_CONTACTS];
    int32_t found = 0;
    // the cells its reach meets (its radius plus the largest), with room for the rounding of the
    // cells' arithmetic
    const double inv_cell = 1.0 / grid->cell_size, at[3] = {x_i.x * inv_cell, x_i.y * inv_cell, x_i.z * inv_cell};
    const double place[3] = {at[0] - grid->cell[4 * i], at[1] - grid->cell[4 * i + 1], at[2] - grid->cell[4 * i + 2]};
    const double room = 1e-9 * (1.0 + fabs(at[0]) + fabs(at[1]) + fabs(at[2]));
    const unsigned cells = sm_cells_in_reach(place, (world->radius[i] + grid->largest) * inv_cell + room);
    for (int k = 0; k < 27; k++) {
        if (!(cells >> k & 1u)) continue;
        int32_t c[3];
        const int32_t b = sm_grid_neighbour_cell(grid, &grid->cell[4 * i], k, c), holds = grid->bucket_object[b];
        if (holds == -1 || (holds == object && !self)) continue; // empty, or its own object's alone
        if (!(box_distance_squared(&grid->bucket_box[6 * b], x_i) < world->radius[i] * world->radius[i])) continue;
        const int32_t begin = grid->bucket_start[b], end = grid->bucket_start[b + 1];
        for (int32_t s = begin; s < end && s < begin + SM_K_CELL_VISITS; s++) {
            const int32_t j = grid->sorted[s];
            if (!sm_grid_in_cell(grid, s, c) || !sm_grid_pair_collides(world, i, j)) continue;
            const double reach = world->radius[i] + world->radius[j];
            const sm_vec3 d = v3_sub(x_i, world->position[j]);
            const double d2 = v3_dot(d, d);
            if (!(d2 < reach * reach)) continue;
            found = sm_contact_keep(own, key, found, j, sqrt(d2) - reach);
        }
    }
    sm_contact_order(own, found);
    return found;
}

/// The normal of the pair (i, j) (kernels/06's sm_pair_normal): its direction at the start of the
/// step, base - h v_rel normalised (base = x_i - x_j at the step's positions), else base's
/// direction, else +y for the higher index; *before_length = |base - h v_rel|.
static sm_vec3 pair_normal(int32_t i, int32_t j, sm_vec3 base, sm_vec3 v_rel, double h, double *before_length)
{
    const sm_vec3 before = v3_sub(base, v3_scale(v_rel, h));
    const double length = v3_length(before), base_length = v3_length(base);
    *before_length = length;
    return length > 0.0        ? v3_scale(before, 1.0 / length)
           : base_length > 0.0 ? v3_scale(base, 1.0 / base_length)
                               : v3(0.0, i > j ? 1.0 : -1.0, 0.0); // coincident: the higher index goes up
}

/// The pair's depth at the step's positions along n where it overlaps there, else 0
/// (sm_pair_depth).
static double pair_depth(sm_vec3 base, sm_vec3 n, double reach)
{
    return v3_dot(base, base) < reach * reach ? fmax(reach - v3_dot(base, n), 0.0) : 0.0;
}

/// Adds the contact of particle i with particle j, i's part of it w (sm_contact_split: the pair's
/// corrections change no momentum), to the sums: `base` is x_i - x_j at the step's positions,
/// `moved` the corrections of i and j so far (c_i - c_j): the push along the normal, the friction
/// across it, and in the first sweep restitution (sm_contact of kernels/06).
static void add_contact(const sm_world *world, int32_t i, int32_t j, double w, sm_vec3 n, double before_length,
                        sm_vec3 base, sm_vec3 moved, sm_vec3 v_rel, double h, bool respond, sm_vec3 *sum_dx,
                        sm_vec3 *sum_dv)
{
    const sm_collisions *settings = &world->def.collisions;
    const double reach = world->radius[i] + world->radius[j];
    const sm_vec3 d = v3_add(base, moved);
    if (!(v3_dot(d, d) < reach * reach)) return;
    const double depth = reach - v3_dot(d, n);
    if (!(depth > 0.0)) return;
    const double push = settings->push_speed * h / settings->relaxation;
    const double target = sm_overlap_target(depth, reach - before_length, push);
    if (target > 0.0) {
        // pushed apart along n, and the pair's sliding over the step (its relative motion h v_rel
        // across n) taken back as far as friction allows
        const sm_vec3 motion = v3_scale(v_rel, h);
        const sm_vec3 slide = v3_sub(motion, v3_scale(n, v3_dot(motion, n)));
        const double keep = sm_contact_friction(v3_length(slide), settings->friction, target);
        const sm_vec3 correction = v3_sub(v3_scale(n, target), v3_scale(slide, keep));
        *sum_dx = v3_add(*sum_dx, v3_scale(correction, w));
    }
    if (respond) { // the correction's velocity stops the approach; restitution returns part of it
        const double vn = v3_dot(v_rel, n);
        if (vn < 0.0) *sum_dv = v3_add(*sum_dv, v3_scale(n, -settings->restitution * vn * w));
    }
}

void sm_cpu_collide(sm_world *world, double h)
{
    sm_grid *grid = &world->grid;
    const int32_t n = world->particle_count;
    const sm_collisions *c = &world->def.collisions;
    // each particle's candidates, and its weight: the sum of its contacts' depths at the step's positions
    for (int32_t i = 0; i < n; i++) {
        int32_t *own = grid->candidates + (size_t)i * SM_K_CONTACTS;
        // (no other object's particle in the cells around its own: no candidate, pass 5)
        const int32_t b = grid->cell[4 * i + 3];
        const bool self = world->objects[world->particle_object[i]].self_collides;
        grid->candidate_count[i] = b >= 0 && (self || grid->bucket_near[b]) ? find_candidates(world, i, own) : 0;
        grid->weight[i] = 0.0;
        for (int32_t k = 0; k < grid->candidate_count[i]; k++) {
            const int32_t j = own[k];
            const sm_vec3 base = v3_sub(world->position[i], world->position[j]);
            double before_length = 0.0;
            const sm_vec3 normal =
                pair_normal(i, j, base, v3_sub(world->velocity[i], world->velocity[j]), h, &before_length);
            grid->weight[i] += pair_depth(base, normal, world->radius[i] + world->radius[j]);
        }
    }
    sm_vec3 *in = grid->moved[1], *out = grid->moved[0];
    for (int32_t sweep = 0; sweep < c->iterations; sweep++) {
        const bool first = sweep == 0;
        for (int32_t i = 0; i < n; i++) {
            const int32_t *own = grid->candidates + (size_t)i * SM_K_CONTACTS;
            const sm_vec3 moved_i = first ? v3(0, 0, 0) : in[i];
            sm_vec3 sum_dx = {0, 0, 0}, sum_dv = {0, 0, 0};
            if (!world->fixed[i]) // (a fixed particle does not move)
                for (int32_t k = 0; k < grid->candidate_count[i]; k++) {
                    const int32_t j = own[k];
                    const sm_vec3 base = v3_sub(world->position[i], world->position[j]);
                    const sm_vec3 v_rel = v3_sub(world->velocity[i], world->velocity[j]);
                    const double reach = world->radius[i] + world->radius[j];
                    double before_length = 0.0;
                    const sm_vec3 normal = pair_normal(i, j, base, v_rel, h, &before_length);
                    const double w = sm_contact_split(pair_depth(base, normal, reach), 1.0 / world->mass[i], grid->weight[i],
                                                      world->fixed[j] ? 0.0 : 1.0 / world->mass[j], grid->weight[j]);
                    if (!(w > 0.0)) continue;
                    add_contact(world, i, j, w, normal, before_length, base, first ? v3(0, 0, 0) : v3_sub(moved_i, in[j]),
                                v_rel, h, first, &sum_dx, &sum_dv);
                }
            out[i] = v3_add(moved_i, v3_scale(sum_dx, c->relaxation));
            if (first) grid->dv[i] = sum_dv;
        }
        sm_vec3 *swap = in;
        in = out, out = swap;
    }
    // every particle takes its correction of all the sweeps and the velocity of that move, and the
    // first sweep's velocity change (which x - h v then no longer undoes: pass 7's slack)
    for (int32_t i = 0; i < n; i++) {
        world->position[i] = v3_add(world->position[i], in[i]);
        world->velocity[i] = v3_add(world->velocity[i], v3_add(v3_scale(in[i], 1.0 / h), grid->dv[i]));
        world->move_slack[i] += h * v3_length(grid->dv[i]);
    }
}
