/* Cutting an object in two along a plane (Henriques & Wuensche 2007, section 3.3 of their
 * interaction paper; 4.1 of the improved meshless deformation paper). Particles never move: a
 * particle's index is its identity for the world's life, so every array of particles, on the
 * host and on the device, means the same after a cut as before. What a cut rebuilds is the
 * objects' records, their particle lists, clusters, memberships and surfaces, into a fresh world
 * record, object by object: every other object is copied as it is (its clusters, memberships and
 * surface move up by whatever the cut added before them), the cut object becomes its back piece
 * at its own index, the front piece is appended as a new object (so no object's index ever
 * changes), and the record is swapped in. On OpenCL the device buffers are then rebuilt by the
 * next step's upload. */
#include "clusters.h"
#include "cut_surface.h"
#include "math3.h"
#include "objects.h"
#include "opencl/cl_backend.h"
#include "surfaces.h"
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The particles listed by `next`'s objects so far (each object's list follows the one before):
/// where the next object's list begins.
static int32_t listed(const sm_world *next)
{
    const sm_object *last = next->object_count > 0 ? &next->objects[next->object_count - 1] : NULL;
    return last ? last->first_particle + last->particle_count : 0;
}

/// Appends object record `source` to `next` (its name copied), its particle list and clusters
/// starting after those of `next`'s objects so far.
static sm_result append_object(sm_world *next, const sm_object *source, const char *name)
{
    const int32_t first = listed(next);
    sm_object *o = &next->objects[next->object_count];
    *o = *source;
    o->name = NULL;
    if (name && *name) {
        o->name = malloc(strlen(name) + 1);
        if (!o->name) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
        strcpy(o->name, name);
    }
    o->first_particle = first;
    o->particle_count = 0;
    o->first_cluster = next->cluster_count;
    o->first_surface_vertex = o->first_surface_triangle = 0;
    o->surface_vertex_count = o->surface_triangle_count = 0;
    next->object_count++;
    return SM_OK;
}

/// Lists particles piece[0..count) (ascending) as object `index`'s, which owns them from now on.
static void list_particles(sm_world *next, int32_t index, const int32_t *piece, int32_t count)
{
    sm_object *o = &next->objects[index];
    for (int32_t i = 0; i < count; i++) {
        next->object_particles[o->first_particle + i] = piece[i];
        next->particle_object[piece[i]] = index;
    }
    o->particle_count = count;
}

/// Adds a surface with rest vertices `rest` (world frame), current `position` and `triangles` to
/// object `object` of `next` (bound to its clusters like any other), then puts its vertices where
/// they are now.
static sm_result add_surface(sm_world *next, int32_t object, const sm_vec3 *rest, const sm_vec3 *position,
                             int32_t vertex_count, const int32_t *triangles, int32_t triangle_count)
{
    sm_surface surface = {.vertices = rest, .vertex_count = vertex_count, .triangles = triangles,
                          .triangle_count = triangle_count, .enabled = true};
    sm_result result = sm_surface_add(next, object, &surface, m3_identity(), v3(0.0, 0.0, 0.0));
    const sm_object *o = &next->objects[object];
    if (result != SM_OK || o->surface_vertex_count == 0) return result; // (none added: no cluster to bind to)
    memcpy(next->surface_position + o->first_surface_vertex, position, sizeof(sm_vec3) * (size_t)vertex_count);
    sm_surface_normals(next, next->surface_position, next->surface_normal, o->first_surface_vertex, vertex_count);
    return SM_OK;
}

/// Grows the per-cluster centres of the skin pass to the clusters of `next`.
static sm_result grow_skin_centers(sm_world *next)
{
    return sm_grow((void **)&next->skin_center, sizeof(sm_vec3), (size_t)(next->cluster_count > 0 ? next->cluster_count : 1))
               ? SM_OK
               : sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
}

/// Copies the particles of `world` into `next`, every array whole and in the same order: only
/// which object owns them changes in a cut.
static sm_result copy_particles(sm_world *next, const sm_world *world)
{
    const int32_t n = world->particle_count;
    sm_result result = sm_world_reserve(next, n, 0, 0);
    if (result != SM_OK || n == 0) return result;
    const size_t count = (size_t)n;
    memcpy(next->position, world->position, sizeof(sm_vec3) * count);
    memcpy(next->velocity, world->velocity, sizeof(sm_vec3) * count);
    memcpy(next->rest_position, world->rest_position, sizeof(sm_vec3) * count);
    memcpy(next->goal, world->goal, sizeof(sm_vec3) * count);
    memcpy(next->force, world->force, sizeof(sm_vec3) * count);
    memcpy(next->mass, world->mass, sizeof(double) * count);
    memcpy(next->fixed, world->fixed, count);
    memcpy(next->radius, world->radius, sizeof(double) * count);
    memcpy(next->particle_object, world->particle_object, sizeof(int32_t) * count);
    memcpy(next->target, world->target, 4 * sizeof(double) * count);
    memcpy(next->move_slack, world->move_slack, sizeof(double) * count);
    memcpy(next->start_velocity, world->start_velocity, sizeof(sm_vec3) * count);
    next->particle_count = n;
    next->target_count = world->target_count;
    return SM_OK;
}

/// Copies object `j` of `world` to the end of `next` unchanged: its particle list, clusters with
/// their rest data and step state, memberships and surface.
static sm_result copy_object(sm_world *next, const sm_world *world, int32_t j)
{
    const sm_object *source = &world->objects[j];
    sm_result result = sm_world_reserve(next, next->particle_count, (int64_t)next->cluster_count + source->cluster_count,
                                        (int64_t)next->membership_count + source->membership_count);
    const int32_t index = next->object_count;
    if (result == SM_OK) result = append_object(next, source, source->name);
    if (result != SM_OK) return result;
    list_particles(next, index, world->object_particles + source->first_particle, source->particle_count);
    for (int32_t c = source->first_cluster; c < source->first_cluster + source->cluster_count; c++) {
        sm_cluster *cluster = &next->clusters[next->cluster_count];
        *cluster = world->clusters[c];
        cluster->object = index;
        cluster->first_member = next->membership_count;
        for (int32_t k = world->clusters[c].first_member; k < world->clusters[c].first_member + cluster->member_count; k++) {
            const int32_t m = next->membership_count++;
            next->member_particle[m] = world->member_particle[k];
            next->member_cluster[m] = next->cluster_count;
            next->member_rest[m] = world->member_rest[k];
            next->member_q[m] = world->member_q[k];
            next->member_mass[m] = world->member_mass[k];
        }
        next->cluster_count++;
    }
    result = grow_skin_centers(next);
    if (result != SM_OK || source->surface_vertex_count == 0) return result;
    const int32_t v0 = source->first_surface_vertex;
    result = add_surface(next, index, world->surface_rest + v0, world->surface_position + v0, source->surface_vertex_count,
                         world->surface_triangles_local + 3 * (size_t)source->first_surface_triangle,
                         source->surface_triangle_count);
    // its normals as they were (on OpenCL the device's, which the host's formula rounds otherwise)
    const sm_object *copied = &next->objects[index];
    if (result == SM_OK && copied->surface_vertex_count == source->surface_vertex_count)
        memcpy(next->surface_normal + copied->first_surface_vertex, world->surface_normal + v0,
               sizeof(sm_vec3) * (size_t)source->surface_vertex_count);
    return result;
}

/// The clusters of a piece, as lists of indices into `piece` (its particles' old world indices,
/// ascending): the object's grid over the piece's rest positions in the object's frame, or its
/// explicit clusters restricted to the piece. CSR into *offsets / *indices (malloc'd).
static sm_result piece_clusters(const sm_world *world, const sm_object *source, const int32_t *piece, int32_t count,
                                int32_t **offsets, int32_t **indices, int32_t *cluster_count)
{
    *offsets = *indices = NULL;
    *cluster_count = 0;
    if (!source->clusters_listed) {
        sm_vec3 *local = malloc(sizeof *local * (size_t)count);
        if (!local) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
        const sm_mat3 to_local = m3_transpose(source->frame);
        for (int32_t i = 0; i < count; i++) local[i] = m3_apply(to_local, v3_sub(world->rest_position[piece[i]], source->origin));
        sm_result result = sm_clusters_from_grid(local, count, source->cluster_grid, source->cluster_overlap, offsets, indices,
                                                 cluster_count);
        free(local);
        return result;
    }
    // explicit lists: each old cluster keeps the members that went to this piece
    int32_t *slot = malloc(sizeof *slot * (size_t)source->particle_count);
    *offsets = calloc((size_t)source->cluster_count + 1, sizeof **offsets);
    *indices = malloc(sizeof **indices * (size_t)(source->membership_count > 0 ? source->membership_count : 1));
    if (!slot || !*offsets || !*indices) {
        free(slot), free(*offsets), free(*indices);
        *offsets = *indices = NULL;
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
    }
    for (int32_t i = 0; i < source->particle_count; i++) slot[i] = -1;
    for (int32_t i = 0; i < count; i++) slot[sm_object_local(world, source, piece[i])] = i;
    int32_t n = 0, filled = 0;
    for (int32_t c = source->first_cluster; c < source->first_cluster + source->cluster_count; c++) {
        const sm_cluster *cluster = &world->clusters[c];
        for (int32_t k = cluster->first_member; k < cluster->first_member + cluster->member_count; k++) {
            const int32_t s = slot[sm_object_local(world, source, world->member_particle[k])];
            if (s >= 0) (*indices)[filled++] = s;
        }
        if (filled > (*offsets)[n]) (*offsets)[++n] = filled; // empty remainders are dropped
    }
    free(slot);
    *cluster_count = n;
    return SM_OK;
}

/// The old cluster with exactly the particles piece[list[0..count)] in that order, or -1.
static int32_t surviving_cluster(const sm_world *world, const int32_t *piece, const int32_t *list, int32_t count)
{
    const int32_t i = piece[list[0]];
    for (int32_t j = world->particle_member_offsets[i]; j < world->particle_member_offsets[i + 1]; j++) {
        const sm_cluster *old = &world->clusters[world->member_cluster[world->particle_members[j]]];
        bool same = old->member_count == count;
        for (int32_t m = 0; m < count && same; m++) same = world->member_particle[old->first_member + m] == piece[list[m]];
        if (same) return world->member_cluster[world->particle_members[j]];
    }
    return -1;
}

/// For each particle piece[p] of a piece, its mass times the mean S_p of the old clusters holding
/// it (0 for a particle in none): what it adds to the plastic state of each new cluster it is in.
/// Computed once per piece, so that a cut's cost grows with its memberships, not with clusters
/// times members times memberships.
static sm_mat3 *particle_plastic(const sm_world *world, const int32_t *piece, int32_t count)
{
    sm_mat3 *out = malloc(sizeof *out * (size_t)(count > 0 ? count : 1));
    for (int32_t p = 0; p < count && out; p++) {
        const int32_t i = piece[p];
        const int32_t begin = world->particle_member_offsets[i], end = world->particle_member_offsets[i + 1];
        sm_mat3 sum = m3_zero();
        for (int32_t j = begin; j < end; j++)
            sum = m3_add(sum, world->clusters[world->member_cluster[world->particle_members[j]]].plastic);
        out[p] = end > begin ? m3_scale(sum, world->mass[i] / (end - begin)) : sum;
    }
    return out;
}

/// The plastic state a new cluster of the particles piece[list[0..count)] inherits: the
/// mass-weighted mean over them of the mean S_p of the old clusters holding each (their
/// particle_plastic terms summed), scaled to det 1 (I if that fails).
static sm_mat3 inherited_plastic(const sm_mat3 *terms, const int32_t *list, int32_t count)
{
    sm_mat3 sum = m3_zero();
    for (int32_t m = 0; m < count; m++) sum = m3_add(sum, terms[list[m]]);
    const double det = m3_det(sum);
    return det > 1e-300 && isfinite(det) ? m3_scale(sum, 1.0 / cbrt(det)) : m3_identity();
}

/// Appends one piece of object `o` of `world` to `next`: the particles piece[0..count) (world
/// indices, ascending), its clusters rebuilt, and its part of the cut surface.
static sm_result add_piece(sm_world *next, const sm_world *world, int32_t o, const int32_t *piece, int32_t count,
                           const char *name, const sm_cut_piece *surface, sm_cut_info *info)
{
    const sm_object *source = &world->objects[o];
    int32_t *offsets = NULL, *indices = NULL, clusters = 0;
    sm_mat3 *terms = NULL;
    int32_t *holders = NULL; // (sm_cluster_holders)
    int32_t *absolute = malloc(sizeof *absolute * (size_t)(count > 0 ? count : 1)); // a cluster's members
    sm_result result = absolute ? piece_clusters(world, source, piece, count, &offsets, &indices, &clusters)
                                : sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
    if (result == SM_OK && !(terms = particle_plastic(world, piece, count)))
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object of %d particles", count);
    if (result == SM_OK && !(holders = sm_cluster_holders(offsets, indices, clusters, count)))
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object of %d particles", count);
    if (result == SM_OK)
        result = sm_world_reserve(next, next->particle_count, (int64_t)next->cluster_count + clusters,
                                  (int64_t)next->membership_count + offsets[clusters]);
    const int32_t index = next->object_count;
    if (result == SM_OK) result = append_object(next, source, name);
    if (result != SM_OK) {
        free(offsets), free(indices), free(terms), free(absolute), free(holders);
        return result;
    }
    list_particles(next, index, piece, count);
    sm_object *object = &next->objects[index];
    object->mass = 0.0;
    for (int32_t i = 0; i < count; i++) object->mass += world->mass[piece[i]];
    object->cluster_count = clusters;
    object->membership_count = offsets[clusters];
    for (int32_t c = 0; c < clusters; c++) {
        const int32_t *list = indices + offsets[c], size = offsets[c + 1] - offsets[c];
        const int32_t kept = surviving_cluster(world, piece, list, size);
        const sm_mat3 plastic = kept >= 0 ? world->clusters[kept].plastic : inherited_plastic(terms, list, size);
        for (int32_t m = 0; m < size; m++) absolute[m] = piece[list[m]];
        sm_world_append_cluster(next, index, 0, absolute, holders + offsets[c], size, plastic);
        sm_cluster *cluster = &next->clusters[next->cluster_count - 1];
        // its state now: the centre of mass of its particles, and the rotation of the old cluster
        // of its first particle (whose warm start on the device it takes too: cluster_origins())
        sm_vec3 center = {0, 0, 0};
        for (int32_t m = 0; m < size; m++)
            center = v3_add(center, v3_scale(world->position[piece[list[m]]], next->member_mass[cluster->first_member + m]));
        cluster->center = v3_scale(center, 1.0 / cluster->mass);
        const int32_t i = piece[list[0]];
        if (world->particle_member_offsets[i + 1] > world->particle_member_offsets[i]) {
            const sm_cluster *old = &world->clusters[world->member_cluster[world->particle_members[world->particle_member_offsets[i]]]];
            cluster->rotation = old->rotation;
        }
        info->kept_clusters += kept >= 0;
        info->degraded_clusters += sm_cluster_note_modes(next, index, next->cluster_count - 1);
    }
    free(offsets), free(indices), free(terms), free(absolute), free(holders);
    result = grow_skin_centers(next);
    if (result != SM_OK || !surface || surface->vertex_count == 0) return result;
    result = add_surface(next, index, surface->rest, surface->position, surface->vertex_count, surface->triangles,
                         surface->triangle_count);
    if (next->objects[index].surface_vertex_count > 0) info->cap_triangles += surface->cap_triangle_count;
    return result;
}

/// For each cluster of `next` (the world after a cut) the cluster of `world` it continues: a
/// copied object's clusters their own, a piece's the old cluster of its first particle (-1:
/// none); malloc'd, NULL when out of memory.
static int32_t *cluster_origins(const sm_world *next, const sm_world *world, int32_t cut_object)
{
    int32_t *from = malloc(sizeof *from * (size_t)(next->cluster_count > 0 ? next->cluster_count : 1));
    if (!from) return NULL;
    for (int32_t o = 0; o < next->object_count; o++) {
        const sm_object *object = &next->objects[o];
        for (int32_t k = 0; k < object->cluster_count; k++) {
            const int32_t c = object->first_cluster + k;
            from[c] = -1;
            if (o != cut_object && o < world->object_count) {
                from[c] = world->objects[o].first_cluster + k;
                continue;
            }
            if (next->clusters[c].member_count == 0) continue;
            const int32_t i = next->member_particle[next->clusters[c].first_member];
            if (world->particle_member_offsets[i + 1] > world->particle_member_offsets[i])
                from[c] = world->member_cluster[world->particle_members[world->particle_member_offsets[i]]];
        }
    }
    return from;
}

/// Moves `next`'s objects, particles, clusters and surfaces into `world`, freeing the old ones
/// (sm_world_take_objects()); everything else of `world` (its def, colliders, pusher, time,
/// cuts, profile, step count, cancel request, backend) stays.
static void swap_in(sm_world *world, sm_world *next)
{
    // the objects that were there keep their name strings (sm_object_info.name stays valid while
    // the world lives): next's copies of them go, the originals move over
    for (int32_t o = 0; o < world->object_count; o++) {
        free(next->objects[o].name);
        next->objects[o].name = world->objects[o].name;
        world->objects[o].name = NULL;
    }
    sm_world_take_objects(world, next);
    world->map_dirty = true;
    world->grid_dirty = true;
    free(next);
}

/// How far a cut moves its plane to its front, in the cut object's size (the diagonal of its
/// particles' bounding box).
#define SM_CUT_ON_PLANE 1e-4

sm_result sm_world_cut(sm_world *world, int32_t object, sm_plane plane, sm_cut_info *out)
{
    sm_cut_info info = {.back_object = object, .front_object = -1};
    if (out) *out = info;
    if (!world || object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_cut: no object %d (the world has %d)", object,
                       world ? world->object_count : 0);
    sm_vec3 normal;
    if (!v3_is_finite(plane.point) || !v3_direction(plane.normal, &normal))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_cut: the plane needs a finite point and a non-zero normal");
    sm_result result = sm_cl_pull(world); // the device's state is the world's: bring it to the host first
    if (result == SM_OK) result = sm_world_update_map(world);
    if (result != SM_OK) return result;

    const sm_object *source = &world->objects[object];
    const int32_t n = source->particle_count, *particles = world->object_particles + source->first_particle;
    // the plane moved SM_CUT_ON_PLANE of the object's size to its front, so that particles and
    // surface vertices on it (a lattice's layer, to rounding: a body at rest on a device wanders
    // by a few 1e-6 of its size in tens of steps) go behind it on both backends
    sm_vec3 lo = world->position[particles[0]], hi = lo;
    for (int32_t k = 1; k < n; k++) {
        const sm_vec3 x = world->position[particles[k]];
        lo = v3(fmin(lo.x, x.x), fmin(lo.y, x.y), fmin(lo.z, x.z)), hi = v3(fmax(hi.x, x.x), fmax(hi.y, x.y), fmax(hi.z, x.z));
    }
    plane.point = v3_add(plane.point, v3_scale(normal, SM_CUT_ON_PLANE * v3_length(v3_sub(hi, lo))));
    plane.normal = v3_scaled_to_one(plane.normal); // (exactly the caller's direction)

    // the sides, by current position: back first, each ascending
    int32_t *order = malloc(sizeof *order * (size_t)(n > 0 ? n : 1));
    if (!order) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
    int32_t back = 0;
    for (int32_t k = 0; k < n; k++)
        if (!(v3_dot(v3_sub(world->position[particles[k]], plane.point), plane.normal) > 0.0)) order[back++] = particles[k];
    for (int32_t k = 0, f = back; k < n; k++)
        if (v3_dot(v3_sub(world->position[particles[k]], plane.point), plane.normal) > 0.0) order[f++] = particles[k];
    if (back == 0 || back == n) {
        free(order);
        sm_log(world, SM_LOG_NOTICE, "sm_world_cut: object %d lies wholly %s the plane: nothing to cut", object,
               back == 0 ? "in front of" : "behind");
        return SM_OK;
    }

    // the surface, cut with the same plane at its current positions
    sm_cut_piece pieces[2] = {{0}, {0}};
    if (source->surface_vertex_count > 0) {
        const int32_t v0 = source->first_surface_vertex;
        const sm_cut_input in = {
            .position = world->surface_position + v0,
            .rest = world->surface_rest + v0,
            .vertex_count = source->surface_vertex_count,
            .triangles = world->surface_triangles_local + 3 * (size_t)source->first_surface_triangle,
            .triangle_count = source->surface_triangle_count,
            .point = plane.point,
            .normal = plane.normal,
        };
        result = sm_cut_surface(&in, &pieces[0], &pieces[1], &info.open_loops);
    }

    // room in the log of cuts
    if (world->cut_count == world->cut_capacity) {
        const int32_t capacity = world->cut_capacity > 0 ? 2 * world->cut_capacity : 8;
        if (!sm_grow((void **)&world->cuts, sizeof *world->cuts, (size_t)capacity))
            result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
        else world->cut_capacity = capacity;
    }

    // the world's objects again: the cut one as its back piece, then the front piece as a new one
    const int32_t front = world->object_count;
    sm_world *next = calloc(1, sizeof *next);
    if (!next && result == SM_OK) result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
    if (next) next->def = world->def; // for the log
    if (result == SM_OK) result = copy_particles(next, world);
    for (int32_t j = 0; j < world->object_count && result == SM_OK; j++)
        result = j != object ? copy_object(next, world, j)
                             : add_piece(next, world, object, order, back, source->name, &pieces[0], &info);
    if (result == SM_OK) {
        char name[300];
        const char *base = source->name ? source->name : "";
        snprintf(name, sizeof name, "%s%s%d", base, *base ? "/" : "piece ", front);
        result = add_piece(next, world, object, order + back, n - back, name, &pieces[1], &info);
    }
    sm_cut_piece_free(&pieces[0]);
    sm_cut_piece_free(&pieces[1]);
    free(order);
    if (result != SM_OK) {
        if (next) sm_world_free_objects(next);
        free(next);
        return result;
    }
    int32_t *origins = cluster_origins(next, world, object);
    if (!origins) {
        sm_world_free_objects(next);
        free(next);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory cutting an object");
    }
    const int32_t clusters = next->cluster_count;
    swap_in(world, next);
    sm_cl_renumber_warm_starts(world, origins, clusters);
    free(origins);
    sm_cl_mark_host_changed(world); // the next step uploads the new layout
    info.cut = true;
    info.time = world->time;
    info.front_object = front;
    info.back_particles = back;
    info.front_particles = n - back;
    sm_log(world, SM_LOG_NOTICE,
           "sm_world_cut: object %d cut into objects %d (%d particles) and %d (%d); %d of their clusters kept whole, %d "
           "degraded, %d cap triangles%s",
           object, object, back, front, n - back, info.kept_clusters, info.degraded_clusters, info.cap_triangles,
           info.open_loops > 0 ? " (an open surface: some boundary left unsealed)" : "");
    world->cuts[world->cut_count++] = info;
    if (out) *out = info;
    return SM_OK;
}

sm_result sm_world_get_cuts(const sm_world *world, const sm_cut_info **out_cuts, int32_t *out_count)
{
    if (!world || !out_cuts || !out_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_cuts: world and outputs must not be NULL");
    *out_cuts = world->cuts;
    *out_count = world->cut_count;
    return SM_OK;
}
