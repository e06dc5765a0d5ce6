/* The OpenCL side that does not depend on a world: error names, the device list and choice,
 * and the program (embedded sources, built once per process per device, cached on disk). */
#ifndef SM_CL_PROGRAM_H
#define SM_CL_PROGRAM_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_gl.h>

#include "../world.h"

/// One kernel source file, embedded at build time (kernels_embedded.c).
typedef struct sm_kernel_file {
    const char *name;
    const char *text;
} sm_kernel_file;
extern const sm_kernel_file sm_kernel_files[];
extern const int sm_kernel_file_count;

/// Name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES".
const char *sm_cl_error_name(cl_int error);

/// Records "CALL failed: CL_..." (with the file and line) and returns SM_ERROR_UNAVAILABLE, or
/// SM_ERROR_OUT_OF_MEMORY for CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES and CL_OUT_OF_HOST_MEMORY.
sm_result sm_cl_fail(const char *call, cl_int error, const char *file, int line);

/// Evaluates an OpenCL call; on failure records it and jumps to the label `cleanup`, with
/// `result` holding the error (the OpenCL-SDK samples' pattern).
#define SM_CL_TRY(call)                                                                                    \
    do {                                                                                                   \
        cl_int sm_cl_status_ = (call);                                                                     \
        if (sm_cl_status_ != CL_SUCCESS) {                                                                 \
            result = sm_cl_fail(#call, sm_cl_status_, __FILE__, __LINE__);                                 \
            goto cleanup;                                                                                  \
        }                                                                                                  \
    } while (0)

/// The kernel files joined in pipeline order as one program source (malloc'd): the embedded
/// copy, or the files of $SM_KERNEL_DIR when it is set.
sm_result sm_cl_program_source(char **out);

/// A device and the context and program it shares with every world on it in this process.
typedef struct sm_cl_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_program program;
    char name[300];    ///< "device name (platform name)"
    bool fp64;         ///< the program computes the plastic rest data in double
    bool gpu;          ///< a GPU (large clusters are then reduced by work-groups)
    size_t max_group;  ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
    bool private_context; ///< a context of one world (shared with GL), freed with it
} sm_cl_device;

/// Picks a device by `selector` (an index into sm_opencl_devices()' list or part of a device
/// name; NULL or "": $SM_DEVICE, else the first GPU, else the first device), then shares or
/// creates its context and program. They stay for the rest of the process, so the next world
/// on the device (compare runs three) starts without a build.
sm_result sm_cl_device_acquire(const char *selector, const sm_world *world, sm_cl_device **out);

/// For a world whose def names a GL context: when the device `selector` picks lists
/// cl_khr_gl_sharing and is that GL context's device, opens a context of the world's own with the
/// GL properties (*out_shared true; sm_cl_device_release() frees it). Otherwise acquires the
/// shared device as sm_cl_device_acquire() does and writes why not into `reason`.
sm_result sm_cl_device_acquire_gl(const char *selector, const sm_world *world, sm_cl_device **out, bool *out_shared,
                                  char *reason, size_t reason_size);

/// For a world on the caller's context: describes `device` (NULL: the context's first device),
/// which must belong to `context`, retains the context and builds the program in it (the binary
/// cache on disk makes that a load after the first time). sm_cl_device_release() frees it.
sm_result sm_cl_device_adopt(cl_context context, cl_device_id device, const sm_world *world, sm_cl_device **out);

/// Frees a world's own (GL-shared) device context; shared devices are kept for the process.
void sm_cl_device_release(sm_cl_device *device);

#endif
