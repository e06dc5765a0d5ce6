/* The OpenCL backend's sharing with OpenGL: the GL buffers a world copies its particle and
 * surface fields into. */
#include "cl_internal.h"

bool sm_cl_gl_sharing(const sm_world *world, const char **reason)
{
    const sm_cl_backend *cl = world->cl;
    if (reason)
        *reason = !world->def.gl.context ? "the world def names no GL context"
                  : cl->gl_sharing        ? ""
                                          : cl->gl_reason;
    return cl->gl_sharing;
}

sm_result sm_cl_share_gl_buffer(sm_world *world, sm_particle_field field, uint32_t gl_buffer)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = SM_OK;
    if (cl->gl_buffers[field]) clReleaseMemObject(cl->gl_buffers[field]);
    cl->gl_buffers[field] = NULL;
    if (gl_buffer == 0) return SM_OK;
    cl_int status = CL_SUCCESS;
    cl->gl_buffers[field] = clCreateFromGLBuffer(cl->device->context, CL_MEM_WRITE_ONLY, gl_buffer, &status);
    SM_CL_TRY(status);
cleanup:
    return result;
}

sm_result sm_cl_copy_to_gl(sm_world *world)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = sm_cl_prepare(world);
    if (result != SM_OK) return result;
    size_t bytes[SM_CL_GL_FIELDS];
    cl_mem shared[SM_CL_GL_FIELDS];
    cl_uint count = 0;
    bool acquired = false;
    for (int f = 0; f < SM_CL_GL_FIELDS; f++) {
        const bool surface = f == SM_FIELD_SURFACE_POSITION || f == SM_FIELD_SURFACE_NORMAL;
        const int32_t items = surface ? world->surface_vertex_count : world->particle_count;
        bytes[f] = sizeof(cl_float4) * (size_t)items;
        if (!cl->gl_buffers[f] || bytes[f] == 0) continue;
        size_t size = 0;
        SM_CL_TRY(clGetMemObjectInfo(cl->gl_buffers[f], CL_MEM_SIZE, sizeof size, &size, NULL));
        if (size < bytes[f])
            return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                           "sm_world_copy_to_gl: GL buffer of field %d holds %zu bytes, the world's %d %s need %zu "
                           "(share a larger one after adding objects)",
                           f, size, items, surface ? "surface vertices" : "particles", bytes[f]);
        shared[count++] = cl->gl_buffers[f];
    }
    if (count == 0) return SM_OK;
    SM_CL_TRY(clEnqueueAcquireGLObjects(cl->queue, count, shared, 0, NULL, NULL));
    acquired = true;
    for (int f = 0; f < SM_CL_GL_FIELDS; f++)
        if (cl->gl_buffers[f] && bytes[f] > 0)
            SM_CL_TRY(clEnqueueCopyBuffer(cl->queue, sm_cl_particle_field_buffer(cl, (sm_particle_field)f), cl->gl_buffers[f], 0, 0,
                                          bytes[f], 0, NULL, NULL));
cleanup:
    // once acquired, the buffers go back to GL whatever happened
    if (acquired) {
        cl_int status = clEnqueueReleaseGLObjects(cl->queue, count, shared, 0, NULL, NULL);
        if (status != CL_SUCCESS && result == SM_OK) result = sm_cl_fail("clEnqueueReleaseGLObjects", status, __FILE__, __LINE__);
        // without cl_khr_gl_event the release is synchronised with GL by finishing the queue
        status = clFinish(cl->queue);
        if (status != CL_SUCCESS && result == SM_OK) result = sm_cl_fail("clFinish", status, __FILE__, __LINE__);
    }
    return result;
}
