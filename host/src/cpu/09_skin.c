#include "../math3.h"
#include "../surfaces.h"
#include "cpu_passes.h"

/// T q~ + c for binding b of a surface vertex: q = S_p r is the plastic rest offset of the
/// vertex from the cluster's rest centre and c the cluster's centre of mass after the step.
static sm_vec3 skinned(const sm_world *world, int32_t b)
{
    const int32_t c = world->surface_binding_cluster[b];
    const sm_cluster *cluster = &world->clusters[c];
    const sm_vec3 q = m3_apply(cluster->plastic, world->surface_binding_rest[b]);
    double qt[9];
    sm_quadratic_terms(q, cluster->quad_mean, qt);
    const int columns = world->objects[cluster->object].mode == SM_MODE_QUADRATIC ? 9 : 3;
    double g[3];
    for (int r = 0; r < 3; r++) {
        double s = 0.0;
        for (int j = 0; j < columns; j++) s += cluster->transform[r][j] * qt[j];
        g[r] = s;
    }
    return v3_add(v3(g[0], g[1], g[2]), world->skin_center[c]);
}

void sm_cpu_skin(sm_world *world)
{
    // 11a. the centre of mass of every cluster from the positions after the step
    for (int32_t c = 0; c < world->cluster_count; c++) {
        const sm_cluster *cluster = &world->clusters[c];
        sm_vec3 sum = {0, 0, 0};
        for (int32_t k = cluster->first_member; k < cluster->first_member + cluster->member_count; k++) {
            const int32_t i = world->member_particle[k];
            sum = v3_add(sum, v3_scale(world->position[i], world->member_mass[k]));
        }
        world->skin_center[c] = v3_scale(sum, 1.0 / cluster->mass);
    }
    // 11b. each vertex: the mean of its clusters' transforms of it (no binding: it stays at rest)
    for (int32_t v = 0; v < world->surface_vertex_count; v++) {
        const int32_t begin = world->surface_binding_offsets[v], end = world->surface_binding_offsets[v + 1];
        if (end == begin) continue;
        sm_vec3 sum = {0, 0, 0};
        for (int32_t b = begin; b < end; b++) sum = v3_add(sum, skinned(world, b));
        world->surface_position[v] = v3_scale(sum, 1.0 / (double)(end - begin));
    }
    // 11c. vertex normals
    sm_surface_normals(world, world->surface_position, world->surface_normal, 0, world->surface_vertex_count);
}
