/* The sizes and field offsets of the structs the Python package mirrors (python/shapematch/
 * _native.py), as this compiler lays them out: test_python.py checks its ctypes mirrors against
 * them. Prints one JSON object: {"struct": {"size": N, "fields": {"name": offset, ...}}, ...}. */
#include <shapematch/shapematch.h>
#ifdef SM_LAYOUT_OPENCL
#include <shapematch/shapematch_opencl.h>
#endif

#include <stddef.h>
#include <stdio.h>

static int first_struct = 1, first_field = 1;

static void begin(const char *name, size_t size)
{
    printf("%s\"%s\": {\"size\": %zu, \"fields\": {", first_struct ? "{" : "}}, ", name, size);
    first_struct = 0, first_field = 1;
}

static void field(const char *name, size_t offset)
{
    printf("%s\"%s\": %zu", first_field ? "" : ", ", name, offset);
    first_field = 0;
}

#define BEGIN(type) begin(#type, sizeof(type))
#define FIELD(type, name) field(#name, offsetof(type, name))

int main(void)
{
    BEGIN(sm_world_def);
    FIELD(sm_world_def, gravity), FIELD(sm_world_def, ground), FIELD(sm_world_def, collisions);
    FIELD(sm_world_def, backend), FIELD(sm_world_def, device), FIELD(sm_world_def, profile);
    FIELD(sm_world_def, check_interval), FIELD(sm_world_def, check_extent), FIELD(sm_world_def, check_speed);
    FIELD(sm_world_def, memory_budget), FIELD(sm_world_def, gl), FIELD(sm_world_def, opencl);
    FIELD(sm_world_def, log), FIELD(sm_world_def, log_user), FIELD(sm_world_def, internal_value);
    BEGIN(sm_collisions);
    FIELD(sm_collisions, enabled), FIELD(sm_collisions, iterations), FIELD(sm_collisions, radius_scale);
    FIELD(sm_collisions, restitution), FIELD(sm_collisions, friction);
    FIELD(sm_collisions, relaxation), FIELD(sm_collisions, push_speed);
    BEGIN(sm_counts);
    FIELD(sm_counts, objects), FIELD(sm_counts, clusters), FIELD(sm_counts, particles), FIELD(sm_counts, memberships);
    BEGIN(sm_object_info);
    FIELD(sm_object_info, name), FIELD(sm_object_info, shape), FIELD(sm_object_info, mode), FIELD(sm_object_info, mass);
    FIELD(sm_object_info, first_particle), FIELD(sm_object_info, particle_count), FIELD(sm_object_info, contiguous);
    FIELD(sm_object_info, first_cluster), FIELD(sm_object_info, cluster_count), FIELD(sm_object_info, membership_count);
    FIELD(sm_object_info, collides), FIELD(sm_object_info, self_collides), FIELD(sm_object_info, spacing);
    FIELD(sm_object_info, particle_radius), FIELD(sm_object_info, first_surface_vertex);
    FIELD(sm_object_info, surface_vertex_count), FIELD(sm_object_info, surface_triangle_count);
    BEGIN(sm_cut_info);
    FIELD(sm_cut_info, cut), FIELD(sm_cut_info, time), FIELD(sm_cut_info, back_object), FIELD(sm_cut_info, front_object);
    FIELD(sm_cut_info, back_particles), FIELD(sm_cut_info, front_particles), FIELD(sm_cut_info, kept_clusters);
    FIELD(sm_cut_info, degraded_clusters), FIELD(sm_cut_info, cap_triangles), FIELD(sm_cut_info, open_loops);
    BEGIN(sm_profile);
    FIELD(sm_profile, pass_ms), FIELD(sm_profile, step_ms), FIELD(sm_profile, steps), FIELD(sm_profile, transfers);
    FIELD(sm_profile, transfer_bytes), FIELD(sm_profile, launches);
    BEGIN(sm_scene_info);
    FIELD(sm_scene_info, dt), FIELD(sm_scene_info, substeps), FIELD(sm_scene_info, steps);
    FIELD(sm_scene_info, object_count), FIELD(sm_scene_info, cut_count);
    BEGIN(sm_contact_stats);
    FIELD(sm_contact_stats, pairs), FIELD(sm_contact_stats, max_depth), FIELD(sm_contact_stats, max_depth_ratio);
    FIELD(sm_contact_stats, mean_depth_ratio), FIELD(sm_contact_stats, dropped);
    BEGIN(sm_device_info);
    FIELD(sm_device_info, index), FIELD(sm_device_info, name), FIELD(sm_device_info, platform);
    FIELD(sm_device_info, version), FIELD(sm_device_info, gpu), FIELD(sm_device_info, fp64);
    BEGIN(sm_plane);
    FIELD(sm_plane, point), FIELD(sm_plane, normal);
#ifdef SM_LAYOUT_OPENCL
    BEGIN(sm_cl_state);
    FIELD(sm_cl_state, position), FIELD(sm_cl_state, position_low), FIELD(sm_cl_state, velocity);
    FIELD(sm_cl_state, goal), FIELD(sm_cl_state, surface_position), FIELD(sm_cl_state, surface_normal);
    FIELD(sm_cl_state, particle_count), FIELD(sm_cl_state, surface_vertex_count);
    BEGIN(sm_cl_inputs);
    FIELD(sm_cl_inputs, forces), FIELD(sm_cl_inputs, targets), FIELD(sm_cl_inputs, internal_value);
#endif
    printf("}}}\n");
    return 0;
}
