/* The OpenCL backend's hooks for the tests: one pass at a time on the current host state, and
 * its outputs poisoned first. */
#include "cl_internal.h"

#include <math.h>

sm_result sm_cl_poison_outputs(sm_world *world, sm_pass pass)
{
    sm_cl_backend *cl = world->cl;
    sm_result result = SM_OK;
    const float nan = NAN;
    sm_cl_buffers *b = &cl->buffers;
    cl_mem outputs[5] = {NULL, NULL, NULL, NULL, NULL};
    switch (pass) {
    case SM_PASS_CLUSTER_MOMENTS:
        outputs[0] = b->center, outputs[1] = b->center_offset, outputs[2] = b->apq;
        outputs[3] = cl->any_quadratic ? b->fit9 : NULL, outputs[4] = b->cluster_velocity;
        break;
    case SM_PASS_ROTATION: outputs[0] = b->rotation, outputs[1] = b->quat, outputs[2] = b->cluster_motion; break;
    case SM_PASS_GOAL_TRANSFORM: outputs[0] = b->linear_fit, outputs[1] = b->transform, outputs[2] = b->object_motion; break;
    case SM_PASS_BLEND_INTEGRATE: outputs[0] = b->goal; break;
    case SM_PASS_COLLISION_GRID: outputs[0] = b->particle_bucket, outputs[1] = b->buckets, outputs[2] = b->slots, outputs[3] = b->members; break;
    case SM_PASS_SKIN: // (unbound vertices keep their position: it is not an output)
        outputs[0] = b->skin_center, outputs[1] = b->skin_center_offset, outputs[2] = b->surface_normal;
        break;
    default: break; // collide, ground and plasticity update their inputs in place
    }
    for (int i = 0; i < 5; i++) {
        if (!outputs[i]) continue;
        size_t size = 0;
        SM_CL_TRY(clGetMemObjectInfo(outputs[i], CL_MEM_SIZE, sizeof size, &size, NULL));
        SM_CL_TRY(clEnqueueFillBuffer(cl->queue, outputs[i], &nan, sizeof nan, 0, size, 0, NULL, NULL));
    }
    SM_CL_TRY(clFinish(cl->queue));
cleanup:
    return result;
}

sm_result sm_cl_run_pass(sm_world *world, sm_pass pass, double h)
{
    sm_cl_backend *cl = world->cl;
    cl->substep = 0;
    sm_result result = sm_cl_upload_colliders(world);
    if (result == SM_OK && pass == SM_PASS_GROUND) result = sm_cl_write_collider_states(world, h, 1);
    cl->contacts_pending = false;
    if (result == SM_OK) result = sm_cl_enqueue_pass(world, pass, (float)h);
    if (result == SM_OK && pass == SM_PASS_COLLIDE) result = sm_cl_enqueue_contact_corrections(world, (float)h);
    if (result == SM_OK) SM_CL_TRY(clFinish(cl->queue));
    cl->device_ahead = true;
cleanup:
    sm_cl_collect_events(world, false);
    return result;
}
