/* The memory budget: what a world of given sizes needs on the host and the device, estimated
 * before anything is sampled or allocated, against what there is. */
#include "memory.h"
#include "math3.h"
#include "objects.h"
#include "opencl/cl_backend.h"
#include "shapes.h"
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Host bytes per element: the world's arrays (sm_world_reserve(), the collision grid) and, at
 * the peak while an object is added, its sampled points and cluster lists; measured against the
 * process's peak resident memory by tests/test_memory.c, which keeps these within its bounds. */
#define SM_HOST_BYTES_PER_PARTICLE                                                                              \
    (5 * sizeof(sm_vec3) + 2 * sizeof(double) + 1 + 2 * sizeof(int32_t) + 4 * sizeof(double) + 3 * sizeof(float) + \
     sizeof(sm_vec3) + sizeof(double) + 3 * sizeof(int32_t))
#define SM_HOST_BYTES_PER_MEMBERSHIP (2 * sizeof(int32_t) + 2 * sizeof(sm_vec3) + sizeof(int32_t) + 16)
#define SM_HOST_BYTES_PER_CLUSTER (sizeof(sm_cluster) + 512)
#define SM_HOST_BYTES_PER_FIELD_NODE sizeof(float)
#define SM_HOST_BYTES_PER_CONTACT_PARTICLE ((4 + 1 + SM_CONTACTS_PER_PARTICLE + 1) * sizeof(int32_t) + 3 * sizeof(sm_vec3) + sizeof(double))
/* the collision grid's buckets: start, object, cell and near, and the box of 6 doubles (grid.h) */
#define SM_HOST_BYTES_PER_BUCKET ((int64_t)(4 * sizeof(int32_t) + 6 * sizeof(double)))
#define SM_HOST_BYTES_PER_SURFACE_VERTEX (4 * sizeof(sm_vec3) + 4 * sizeof(int32_t))
#define SM_HOST_BYTES_PER_SURFACE_BINDING (sizeof(int32_t) + sizeof(sm_vec3))
#define SM_HOST_BYTES_PER_SURFACE_TRIANGLE (6 * sizeof(int32_t))

sm_footprint sm_world_footprint(const sm_world *world)
{
    sm_footprint f = {
        .objects = world->object_count,
        .particles = world->particle_count,
        .clusters = world->cluster_count,
        .memberships = world->membership_count,
        .surface_vertices = world->surface_vertex_count,
        .surface_bindings = world->surface_binding_count,
        .surface_triangles = world->surface_triangle_count,
    };
    const int32_t large = sm_cl_large_threshold(world);
    for (int32_t i = 0; i < world->cluster_count; i++) f.large_clusters += world->clusters[i].member_count >= large;
    for (int32_t o = 0; o < world->object_count; o++) {
        const sm_object *object = &world->objects[o];
        f.quadratic |= object->mode == SM_MODE_QUADRATIC;
        if (object->collides) f.colliding += object->particle_count; // (their particles have a radius, the others none)
    }
    for (int32_t c = 0; c < world->collider_count; c++)
        if (world->colliders[c].def.shape == SM_COLLIDER_MESH) f.field_nodes += sm_sdf_node_count(&world->colliders[c].sdf);
    return f;
}

void sm_footprint_add(sm_footprint *to, const sm_footprint *add)
{
    to->objects += add->objects;
    to->particles += add->particles;
    to->clusters += add->clusters;
    to->memberships += add->memberships;
    to->colliding += add->colliding;
    to->large_clusters += add->large_clusters;
    to->surface_vertices += add->surface_vertices;
    to->surface_bindings += add->surface_bindings;
    to->surface_triangles += add->surface_triangles;
    to->field_nodes += add->field_nodes;
    to->quadratic |= add->quadratic;
}

sm_result sm_object_footprint(const sm_world *world, const sm_object_def *def, sm_footprint *out)
{
    int64_t particles = 0;
    sm_result result = sm_shape_count(&def->shape, &particles);
    if (result != SM_OK) return result;
    *out = sm_object_footprint_of(world, def, particles);
    return SM_OK;
}

sm_footprint sm_object_footprint_of(const sm_world *world, const sm_object_def *def, int64_t particles)
{
    sm_footprint f = {.objects = 1, .particles = particles, .quadratic = def->mode == SM_MODE_QUADRATIC};
    const int32_t large = sm_cl_large_threshold(world);
    if (def->clusters.list_offsets) {
        f.clusters = def->clusters.list_count;
        f.memberships = def->clusters.list_offsets[def->clusters.list_count];
        for (int32_t c = 0; c < f.clusters; c++)
            f.large_clusters += def->clusters.list_offsets[c + 1] - def->clusters.list_offsets[c] >= large;
    } else {
        // n cells grown by `overlap` on each side cover an axis n + 2 overlap (n - 1) times over
        // (the growth past either end holds no particle): the memberships per particle and axis
        // of particles spread evenly
        double per_particle = 1.0;
        f.clusters = 1;
        for (int a = 0; a < 3; a++) {
            const int32_t n = def->clusters.grid[a];
            per_particle *= fmin((double)n, 1.0 + 2.0 * def->clusters.overlap * (n - 1) / n);
            f.clusters *= n;
        }
        f.clusters = f.clusters < particles ? f.clusters : particles;
        f.memberships = (int64_t)ceil((double)particles * per_particle);
        f.large_clusters = f.memberships >= (int64_t)large * f.clusters ? f.clusters : 0; // clusters of the mean size
    }
    if (world->def.collisions.enabled && def->collisions.enabled) f.colliding = particles;
    const sm_surface *s = &def->surface;
    const bool own_mesh = def->shape.type == SM_SHAPE_MESH && !s->vertices && s->enabled;
    if (s->enabled && (s->vertices || own_mesh)) {
        f.surface_vertices = own_mesh ? def->shape.mesh_vertex_count : s->vertex_count;
        f.surface_triangles = own_mesh ? def->shape.mesh_triangle_count : s->triangle_count;
        f.surface_bindings = particles > 0 ? (int64_t)ceil((double)f.surface_vertices * (double)f.memberships / (double)particles) : 0;
    }
    return f;
}

int64_t sm_host_bytes(const sm_footprint *f)
{
    const int64_t table = sm_grid_table_size(f->colliding);
    return f->particles * (int64_t)SM_HOST_BYTES_PER_PARTICLE + f->memberships * (int64_t)SM_HOST_BYTES_PER_MEMBERSHIP +
           f->clusters * (int64_t)SM_HOST_BYTES_PER_CLUSTER + f->objects * (int64_t)sizeof(sm_object) +
           (f->colliding > 0 ? f->particles * (int64_t)SM_HOST_BYTES_PER_CONTACT_PARTICLE + SM_HOST_BYTES_PER_BUCKET * table : 0) +
           f->surface_vertices * (int64_t)SM_HOST_BYTES_PER_SURFACE_VERTEX +
           f->surface_bindings * (int64_t)SM_HOST_BYTES_PER_SURFACE_BINDING +
           f->surface_triangles * (int64_t)SM_HOST_BYTES_PER_SURFACE_TRIANGLE +
           f->field_nodes * (int64_t)SM_HOST_BYTES_PER_FIELD_NODE;
}

/// A byte count from $SM_MEMORY_BUDGET: digits with an optional K, M, G or T (powers of 1024),
/// or "none" (INT64_MAX); 0 when unset. Anything else is an error naming the variable.
static sm_result budget_from_environment(int64_t *out)
{
    *out = 0;
    const char *text = getenv("SM_MEMORY_BUDGET");
    if (!text || !*text) return SM_OK;
    if (strcmp(text, "none") == 0) {
        *out = INT64_MAX;
        return SM_OK;
    }
    char *end = NULL;
    const double value = strtod(text, &end);
    double scale = 1.0;
    if (end && *end) {
        const char *units = "KMGT";
        const char *unit = strchr(units, *end);
        if (unit && end[1] == '\0') scale = ldexp(1.0, 10 * (int)(unit - units + 1)), end++;
    }
    if (!(end && *end == '\0' && value > 0.0 && value * scale < 9e18)) {
        char printable[128];
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "$SM_MEMORY_BUDGET must be a byte count such as 64G (K, M, G, T: powers of 1024) or \"none\", got '%s'",
                       sm_printable(text, printable, sizeof printable));
    }
    *out = (int64_t)(value * scale);
    return SM_OK;
}

/// The host memory the world may still take: MemAvailable of /proc/meminfo (the free pages
/// where there is none); *from names the source.
static int64_t host_available(const char **from)
{
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (meminfo) {
        char line[256];
        long long kib = -1;
        while (fgets(line, sizeof line, meminfo))
            if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
        fclose(meminfo);
        if (kib >= 0) {
            *from = "MemAvailable in /proc/meminfo";
            return (int64_t)kib * 1024;
        }
    }
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *from = "the free physical pages";
    return pages > 0 && page > 0 ? (int64_t)pages * page : INT64_MAX;
}

/// "12.3 GB" for a byte count, in `buffer`.
static const char *gigabytes(int64_t bytes, char *buffer, size_t size)
{
    if (bytes >= 1000000000) snprintf(buffer, size, "%.1f GB", (double)bytes / 1e9);
    else snprintf(buffer, size, "%.1f MB", (double)bytes / 1e6);
    return buffer;
}

sm_result sm_check_memory(const sm_world *world, const sm_footprint *add, const char *what)
{
    int64_t budget = world->def.memory_budget;
    const char *budget_from = "sm_world_def.memory_budget";
    if (budget == 0) {
        sm_result result = budget_from_environment(&budget);
        if (result != SM_OK) return result;
        budget_from = "$SM_MEMORY_BUDGET";
    }
    const sm_footprint now = sm_world_footprint(world);
    sm_footprint after = now;
    sm_footprint_add(&after, add);
    // a mesh collider's field, named where it is part of what is added
    char fields[96] = "", field[96] = "";
    if (add->field_nodes > 0) {
        snprintf(fields, sizeof fields, ", with mesh-collider fields of %lld nodes", (long long)after.field_nodes);
        snprintf(field, sizeof field, ", and a mesh collider's field of %lld nodes", (long long)add->field_nodes);
    }
    const char *coarser = add->field_nodes > 0 ? "a mesh collider of larger cells" : "fewer or coarser objects";

    // the device: every buffer, and the largest one, against its memory (exact: the same plan
    // the buffers are made from)
    int64_t device_now = 0, device_after = 0;
    bool unified = false;
    if (world->cl) {
        int64_t largest = 0, global = 0, alloc = 0;
        const char *kind = "", *global_from = "", *alloc_from = "";
        sm_cl_plan_bytes(world, &now, &device_now, NULL, NULL);
        sm_cl_plan_bytes(world, &after, &device_after, &largest, &kind);
        sm_cl_device_memory(world, &global, &alloc, &unified, &global_from, &alloc_from);
        if (budget > 0 && budget < global) global = budget, global_from = budget_from;
        char need[32], have[32];
        if (device_after > global)
            return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                           "%s needs %s of OpenCL device memory (%lld bytes for a world of %lld particles, %lld "
                           "cluster memberships and %lld cluster%s%s), and %s has %s (%s); use %s%s",
                           what, gigabytes(device_after, need, sizeof need), (long long)device_after,
                           (long long)after.particles, (long long)after.memberships, (long long)after.clusters,
                           after.clusters == 1 ? "" : "s", fields,
                           sm_cl_device_name(world), gigabytes(global, have, sizeof have), global_from, coarser,
                           global_from == budget_from ? ", or raise the budget" : ", or a device with more memory");
        if (largest > alloc)
            return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                           "%s needs an OpenCL buffer of %s (%lld bytes, one of its %s buffers), and %s allocates at most "
                           "%s in one buffer (%s); use %s",
                           what, gigabytes(largest, need, sizeof need), (long long)largest, kind, sm_cl_device_name(world),
                           gigabytes(alloc, have, sizeof have), alloc_from, coarser);
    }

    // the host: what the world adds (with the device's buffers, where they live in host memory)
    const int64_t host_after = sm_host_bytes(&after) + (unified ? device_after : 0);
    const int64_t host_now = sm_host_bytes(&now) + (unified ? device_now : 0);
    int64_t available = budget > 0 ? budget - host_now : 0;
    const char *available_from = budget_from;
    if (budget == 0) available = host_available(&available_from);
    if (host_after - host_now > available) {
        char need[32], have[32];
        return sm_fail(SM_ERROR_OUT_OF_MEMORY,
                       "%s needs about %s of host memory (%lld bytes for %lld particles, %lld cluster memberships and "
                       "%lld cluster%s%s%s), and %s %s (%s); use %s, or raise the budget with "
                       "$SM_MEMORY_BUDGET (e.g. SM_MEMORY_BUDGET=64G) or sm_world_def.memory_budget",
                       what, gigabytes(host_after - host_now, need, sizeof need), (long long)(host_after - host_now),
                       (long long)(after.particles - now.particles), (long long)(after.memberships - now.memberships),
                       (long long)(after.clusters - now.clusters), after.clusters - now.clusters == 1 ? "" : "s",
                       field, unified ? ", with the OpenCL device's buffers" : "",
                       budget > 0 ? "the budget leaves" : "the host has", gigabytes(available, have, sizeof have),
                       available_from, coarser);
    }
    return SM_OK;
}

sm_result sm_world_estimate_memory(const sm_world *world, const sm_object_def *defs, int32_t count,
                                   sm_memory_estimate *out)
{
    if (!world || !out || count < 0 || (count > 0 && !defs))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_estimate_memory: world, out and count defs must be given");
    sm_footprint f = sm_world_footprint(world);
    for (int32_t i = 0; i < count; i++) {
        sm_footprint object;
        sm_result result = sm_validate_object_def(&defs[i]);
        if (result == SM_OK) result = sm_object_footprint(world, &defs[i], &object);
        if (result != SM_OK) return result;
        sm_footprint_add(&f, &object);
    }
    int64_t device = 0;
    if (world->cl) sm_cl_plan_bytes(world, &f, &device, NULL, NULL);
    *out = (sm_memory_estimate){.host_bytes = sm_host_bytes(&f), .device_bytes = device, .particles = f.particles,
                                .memberships = f.memberships, .clusters = f.clusters};
    return SM_OK;
}
