/* Skinned surfaces: triangle meshes drawn over objects and moved by their clusters. Each vertex
 * is bound, when its object is added, to the clusters of the particle nearest to it at rest, with
 * its offset from each cluster's rest centre; the skin pass (cpu/09_skin.c, kernels/09_skin.cl)
 * moves it with those clusters' goal transforms. */
#include "surfaces.h"
#include "math3.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

/// sm_grow() to `count` elements (at least one, so that an empty array is still allocated).
static bool resize(void **array, size_t size, int64_t count)
{
    return sm_grow(array, size, (size_t)(count > 0 ? count : 1));
}

void sm_surface_normals(const sm_world *world, const sm_vec3 *position, sm_vec3 *normal, int32_t first, int32_t count)
{
    for (int32_t v = first; v < first + count; v++) {
        sm_vec3 sum = {0, 0, 0};
        for (int32_t j = world->surface_incident_offsets[v]; j < world->surface_incident_offsets[v + 1]; j++) {
            const int32_t *t = &world->surface_triangles[3 * world->surface_incident[j]];
            const sm_vec3 a = position[t[0]], b = position[t[1]], c = position[t[2]];
            sum = v3_add(sum, v3_cross(v3_sub(b, a), v3_sub(c, a))); // twice the area times the unit normal
        }
        const double length = v3_length(sum);
        normal[v] = length > 0.0 ? v3_scale(sum, 1.0 / length) : v3(0.0, 0.0, 0.0);
    }
}

sm_result sm_surface_add(sm_world *world, int32_t object_index, const sm_surface *surface, sm_mat3 rot, sm_vec3 position)
{
    sm_object *object = &world->objects[object_index];
    object->first_surface_vertex = world->surface_vertex_count;
    object->first_surface_triangle = world->surface_triangle_count;
    object->surface_vertex_count = object->surface_triangle_count = 0;
    const int32_t nv = surface->vertex_count, nt = surface->triangle_count;
    if (!surface->enabled || nv == 0) return SM_OK;
    if (object->cluster_count == 0) { // nothing to bind to (a piece of a cut left without clusters)
        sm_log(world, SM_LOG_WARNING, "object %d has no cluster: its surface is not drawn", object_index);
        return SM_OK;
    }

    // the clusters of each particle of the object, from its memberships (CSR by particle)
    const int32_t np = object->particle_count;
    const int32_t k0 = world->clusters[object->first_cluster].first_member;
    int32_t *offsets = calloc((size_t)np + 1, sizeof *offsets);
    int32_t *clusters = malloc(sizeof *clusters * (size_t)(object->membership_count > 0 ? object->membership_count : 1));
    if (!offsets || !clusters) {
        free(offsets), free(clusters);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory binding a surface");
    }
    for (int32_t k = k0; k < k0 + object->membership_count; k++)
        offsets[sm_object_local(world, object, world->member_particle[k]) + 1]++;
    for (int32_t i = 0; i < np; i++) offsets[i + 1] += offsets[i];
    {
        int32_t *fill = malloc(sizeof *fill * (size_t)(np > 0 ? np : 1));
        if (!fill) {
            free(offsets), free(clusters);
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory binding a surface");
        }
        memcpy(fill, offsets, sizeof *fill * (size_t)np);
        for (int32_t k = k0; k < k0 + object->membership_count; k++)
            clusters[fill[sm_object_local(world, object, world->member_particle[k])]++] = world->member_cluster[k];
        free(fill);
    }

    // count the bindings: the clusters of each vertex's nearest particle that has any
    const int32_t v0 = world->surface_vertex_count, t0 = world->surface_triangle_count;
    int32_t *nearest = malloc(sizeof *nearest * (size_t)nv);
    if (!nearest) {
        free(offsets), free(clusters);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory binding a surface");
    }
    int64_t bindings = 0;
    for (int32_t v = 0; v < nv; v++) {
        const sm_vec3 x = v3_add(position, m3_apply(rot, surface->vertices[v]));
        double best = INFINITY;
        nearest[v] = -1;
        for (int32_t i = 0; i < np; i++) {
            if (offsets[i + 1] == offsets[i]) continue;
            const sm_vec3 d = v3_sub(world->rest_position[sm_object_particle(world, object, i)], x);
            const double d2 = v3_dot(d, d);
            if (d2 < best) best = d2, nearest[v] = i;
        }
        if (nearest[v] >= 0) bindings += offsets[nearest[v] + 1] - offsets[nearest[v]];
    }

    // grow the world's arrays
    const int64_t vertices = (int64_t)v0 + nv, triangles = (int64_t)t0 + nt, all_bindings = world->surface_binding_count + bindings;
    int64_t incident = world->surface_vertex_count > 0 ? world->surface_incident_offsets[v0] : 0;
    const int64_t all_incident = incident + 3 * (int64_t)nt;
    bool ok = vertices <= INT32_MAX && all_bindings <= INT32_MAX && all_incident <= INT32_MAX &&
              resize((void **)&world->surface_rest, sizeof(sm_vec3), vertices) &&
              resize((void **)&world->surface_position, sizeof(sm_vec3), vertices) &&
              resize((void **)&world->surface_normal, sizeof(sm_vec3), vertices) &&
              resize((void **)&world->surface_binding_offsets, sizeof(int32_t), vertices + 1) &&
              resize((void **)&world->surface_binding_cluster, sizeof(int32_t), all_bindings) &&
              resize((void **)&world->surface_binding_rest, sizeof(sm_vec3), all_bindings) &&
              resize((void **)&world->surface_triangles, 3 * sizeof(int32_t), triangles) &&
              resize((void **)&world->surface_triangles_local, 3 * sizeof(int32_t), triangles) &&
              resize((void **)&world->surface_incident_offsets, sizeof(int32_t), vertices + 1) &&
              resize((void **)&world->surface_incident, sizeof(int32_t), all_incident);
    if (!ok) {
        free(offsets), free(clusters), free(nearest);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for a surface of %d vertices", nv);
    }
    if (v0 == 0) world->surface_binding_offsets[0] = world->surface_incident_offsets[0] = 0;

    // vertices and their bindings, in cluster order
    int32_t b = world->surface_binding_count;
    for (int32_t v = 0; v < nv; v++) {
        const sm_vec3 x = v3_add(position, m3_apply(rot, surface->vertices[v]));
        world->surface_rest[v0 + v] = world->surface_position[v0 + v] = x;
        if (nearest[v] >= 0)
            for (int32_t j = offsets[nearest[v]]; j < offsets[nearest[v] + 1]; j++, b++) {
                world->surface_binding_cluster[b] = clusters[j];
                world->surface_binding_rest[b] = v3_sub(x, world->clusters[clusters[j]].rest_center);
            }
        world->surface_binding_offsets[v0 + v + 1] = b;
    }
    free(offsets), free(clusters), free(nearest);

    // triangles, and the triangles around each vertex (by triangle, so the sums have one order)
    int32_t *count = calloc((size_t)nv, sizeof *count);
    if (!count) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for a surface of %d vertices", nv);
    for (int32_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++) {
            const int32_t v = surface->triangles[3 * t + c];
            world->surface_triangles_local[3 * (t0 + t) + c] = v;
            world->surface_triangles[3 * (t0 + t) + c] = v0 + v;
            count[v]++;
        }
    for (int32_t v = 0; v < nv; v++) world->surface_incident_offsets[v0 + v + 1] = world->surface_incident_offsets[v0 + v] + count[v];
    memset(count, 0, sizeof *count * (size_t)nv);
    for (int32_t t = 0; t < nt; t++)
        for (int c = 0; c < 3; c++) {
            const int32_t v = surface->triangles[3 * t + c];
            // a vertex used twice by one (degenerate) triangle is listed once per use, as counted
            world->surface_incident[world->surface_incident_offsets[v0 + v] + count[v]++] = t0 + t;
        }
    free(count);

    world->surface_vertex_count = (int32_t)vertices;
    world->surface_triangle_count = (int32_t)triangles;
    world->surface_binding_count = b;
    object->surface_vertex_count = nv;
    object->surface_triangle_count = nt;
    sm_surface_normals(world, world->surface_position, world->surface_normal, v0, nv);
    return SM_OK;
}

void sm_surfaces_free(sm_world *world)
{
    free(world->surface_rest), free(world->surface_position), free(world->surface_normal);
    free(world->surface_binding_offsets), free(world->surface_binding_cluster), free(world->surface_binding_rest);
    free(world->surface_triangles), free(world->surface_triangles_local);
    free(world->surface_incident_offsets), free(world->surface_incident);
    free(world->skin_center);
}

int32_t sm_world_get_surface_vertex_count(const sm_world *world) { return world ? world->surface_vertex_count : 0; }

sm_result sm_world_get_surface_triangles(const sm_world *world, int32_t object, const int32_t **out_triangles,
                                         int32_t *out_count)
{
    if (!world || !out_triangles || !out_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_surface_triangles: arguments must not be NULL");
    if (object < 0 || object >= world->object_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_get_surface_triangles: no object %d (the world has %d)", object,
                       world->object_count);
    const sm_object *o = &world->objects[object];
    *out_count = o->surface_triangle_count;
    *out_triangles = o->surface_triangle_count > 0 ? &world->surface_triangles_local[3 * o->first_surface_triangle] : NULL;
    return SM_OK;
}
