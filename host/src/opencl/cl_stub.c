/* Builds without OpenCL (cmake -DSM_OPENCL=OFF): the backend reports itself unavailable. */
#include "cl_backend.h"

static const char *message = "the OpenCL backend is not part of this build (configured with -DSM_OPENCL=OFF)";

sm_result sm_cl_create(sm_world *world, const char *device)
{
    (void)world, (void)device;
    return sm_fail(SM_ERROR_UNAVAILABLE, "%s", message);
}
void sm_cl_destroy(sm_world *world) { (void)world; }
int32_t sm_cl_large_threshold(const sm_world *world) { (void)world; return INT32_MAX; }
void sm_cl_plan_bytes(const sm_world *world, const sm_footprint *f, int64_t *out_total, int64_t *out_largest,
                      const char **out_kind)
{
    (void)world, (void)f;
    *out_total = 0;
    if (out_largest) *out_largest = 0;
    if (out_kind) *out_kind = "";
}
void sm_cl_device_memory(const sm_world *world, int64_t *out_global, int64_t *out_alloc, bool *out_unified,
                         const char **global_from, const char **alloc_from)
{
    (void)world;
    *out_global = *out_alloc = INT64_MAX, *out_unified = false, *global_from = *alloc_from = "";
}
const char *sm_cl_device_name(const sm_world *world) { (void)world; return ""; }
sm_result sm_cl_step(sm_world *world, double h, int32_t substeps)
{
    (void)world, (void)h, (void)substeps;
    return sm_fail(SM_ERROR_UNAVAILABLE, "%s", message);
}
sm_result sm_cl_pull(sm_world *world) { (void)world; return SM_OK; }
void sm_cl_mark_host_changed(sm_world *world) { (void)world; }
void sm_cl_forget_position_split(sm_world *world, int32_t first, int32_t count) { (void)world, (void)first, (void)count; }
void sm_cl_forget_warm_starts(sm_world *world, int32_t first, int32_t count) { (void)world, (void)first, (void)count; }
void sm_cl_renumber_warm_starts(sm_world *world, const int32_t *from, int32_t count) { (void)world, (void)from, (void)count; }
sm_result sm_cl_copy_device_split(sm_world *target, const sm_world *source) { (void)target, (void)source; return SM_OK; }
sm_result sm_cl_read(const sm_world *world, sm_cl_field field, int32_t first, int32_t count, double *xyz, bool *done)
{
    (void)world, (void)field, (void)first, (void)count, (void)xyz;
    *done = false;
    return SM_OK;
}
sm_result sm_cl_write(sm_world *world, sm_cl_field field, int32_t first, int32_t count)
{
    (void)world, (void)field, (void)first, (void)count;
    return SM_OK;
}
sm_result sm_cl_read_cluster(const sm_world *world, int32_t cluster) { (void)world, (void)cluster; return SM_OK; }
sm_result sm_cl_push(sm_world *world) { return sm_cl_create(world, NULL); }
sm_result sm_cl_poison_outputs(sm_world *world, sm_pass pass) { (void)pass; return sm_cl_create(world, NULL); }
sm_result sm_cl_run_pass(sm_world *world, sm_pass pass, double h) { (void)pass, (void)h; return sm_cl_create(world, NULL); }
sm_result sm_opencl_device_for(const char *selector, sm_device_info *out)
{
    (void)selector, (void)out;
    return sm_fail(SM_ERROR_UNAVAILABLE, "this build of shapematch has no OpenCL backend (configure with -DSM_OPENCL=ON)");
}

sm_result sm_opencl_devices(sm_device_info *out, int32_t capacity, int32_t *out_count)
{
    (void)out, (void)capacity;
    if (out_count) *out_count = 0;
    return sm_fail(SM_ERROR_UNAVAILABLE, "%s", message);
}
sm_result sm_cl_read_float4(const sm_world *world, sm_particle_field field, int32_t first, int32_t count, float *out,
                           bool *done)
{
    (void)world, (void)field, (void)first, (void)count, (void)out;
    *done = false;
    return SM_OK;
}
sm_result sm_cl_write_object(sm_world *world, int32_t object) { (void)world, (void)object; return SM_OK; }
bool sm_cl_gl_sharing(const sm_world *world, const char **reason)
{
    (void)world;
    if (reason) *reason = message;
    return false;
}
sm_result sm_cl_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer)
{
    (void)field, (void)gl_buffer;
    return sm_cl_create(world, NULL);
}
sm_result sm_cl_copy_to_gl(sm_world *world) { return sm_cl_create(world, NULL); }
void sm_cl_transfer_counts(const sm_world *world, int64_t *out_transfers, int64_t *out_bytes)
{
    (void)world;
    *out_transfers = *out_bytes = 0;
}
int64_t sm_cl_launch_count(const sm_world *world)
{
    (void)world;
    return 0;
}
sm_memory sm_world_get_memory(const sm_world *world)
{
    (void)world;
    return (sm_memory){0};
}
sm_result sm_cl_check_state(sm_world *world, int32_t out_first[3])
{
    (void)world;
    out_first[0] = out_first[1] = out_first[2] = -1;
    return SM_OK;
}
