/* Devices and programs. A device's context and program are shared by every world on it in the
 * process (built once); the program binary is also cached on disk, keyed on the sources, the
 * options and the device and driver, so later processes skip the compiler where the driver
 * returns binaries. */
#include "../files.h"
#include "cl_program.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sm_cl_error_name(cl_int error)
{
    switch (error) {
#define NAME(x) \
    case x: return #x;
        NAME(CL_SUCCESS) NAME(CL_DEVICE_NOT_FOUND) NAME(CL_DEVICE_NOT_AVAILABLE) NAME(CL_COMPILER_NOT_AVAILABLE)
        NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE) NAME(CL_OUT_OF_RESOURCES) NAME(CL_OUT_OF_HOST_MEMORY)
        NAME(CL_PROFILING_INFO_NOT_AVAILABLE) NAME(CL_BUILD_PROGRAM_FAILURE) NAME(CL_INVALID_VALUE)
        NAME(CL_INVALID_DEVICE_TYPE) NAME(CL_INVALID_PLATFORM) NAME(CL_INVALID_DEVICE) NAME(CL_INVALID_CONTEXT)
        NAME(CL_INVALID_COMMAND_QUEUE) NAME(CL_INVALID_MEM_OBJECT) NAME(CL_INVALID_BINARY)
        NAME(CL_INVALID_BUILD_OPTIONS) NAME(CL_INVALID_PROGRAM) NAME(CL_INVALID_PROGRAM_EXECUTABLE)
        NAME(CL_INVALID_KERNEL_NAME) NAME(CL_INVALID_KERNEL) NAME(CL_INVALID_ARG_INDEX) NAME(CL_INVALID_ARG_VALUE)
        NAME(CL_INVALID_ARG_SIZE) NAME(CL_INVALID_KERNEL_ARGS) NAME(CL_INVALID_WORK_DIMENSION)
        NAME(CL_INVALID_WORK_GROUP_SIZE) NAME(CL_INVALID_WORK_ITEM_SIZE) NAME(CL_INVALID_GLOBAL_OFFSET)
        NAME(CL_INVALID_EVENT_WAIT_LIST) NAME(CL_INVALID_EVENT) NAME(CL_INVALID_OPERATION)
        NAME(CL_INVALID_BUFFER_SIZE) NAME(CL_INVALID_GLOBAL_WORK_SIZE) NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "an unknown OpenCL error";
}

sm_result sm_cl_fail(const char *call, cl_int error, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    // the device (or the host for it) ran out of memory: an allocation error, not a missing device
    if (error == CL_MEM_OBJECT_ALLOCATION_FAILURE || error == CL_OUT_OF_RESOURCES || error == CL_OUT_OF_HOST_MEMORY)
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "OpenCL: %s failed: %s (%d) at %s:%d: the device ran out of memory", call,
                       sm_cl_error_name(error), error, base ? base + 1 : file, line);
    return sm_fail(SM_ERROR_UNAVAILABLE, "OpenCL: %s failed: %s (%d) at %s:%d", call, sm_cl_error_name(error), error,
                   base ? base + 1 : file, line);
}

/* ---- The device list ----------------------------------------------------------------- */

#define SM_MAX_DEVICES 64

typedef struct device_entry {
    cl_platform_id platform;
    cl_device_id device;
} device_entry;

static const char *no_platform_message =
    "no OpenCL platform is installed: install an OpenCL driver, e.g. 'apt-get install pocl-opencl-icd' "
    "(any CPU) or your GPU vendor's OpenCL ICD";

/// Every device of every platform, in platform order.
static sm_result list_devices(device_entry *out, int *out_count)
{
    cl_platform_id platforms[16];
    cl_uint platform_count = 0;
    cl_int status = clGetPlatformIDs(16, platforms, &platform_count);
    if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (status == CL_SUCCESS && platform_count == 0))
        return sm_fail(SM_ERROR_UNAVAILABLE, "%s", no_platform_message);
    if (status != CL_SUCCESS) return sm_cl_fail("clGetPlatformIDs", status, __FILE__, __LINE__);
    int count = 0;
    for (cl_uint p = 0; p < platform_count && p < 16; p++) {
        cl_device_id devices[SM_MAX_DEVICES];
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, SM_MAX_DEVICES, devices, &n) != CL_SUCCESS) continue;
        for (cl_uint d = 0; d < n && count < SM_MAX_DEVICES; d++) out[count++] = (device_entry){platforms[p], devices[d]};
    }
    if (count == 0)
        return sm_fail(SM_ERROR_UNAVAILABLE,
                       "the OpenCL platforms list no device (with PoCL, check that its cache directory, "
                       "$POCL_CACHE_DIR or ~/.cache/pocl, can be created)");
    *out_count = count;
    return SM_OK;
}

static void device_string(cl_device_id device, cl_device_info what, char *out, size_t size)
{
    out[0] = '\0';
    if (clGetDeviceInfo(device, what, size, out, NULL) != CL_SUCCESS) snprintf(out, size, "?");
    out[size - 1] = '\0';
}

static void platform_string(cl_platform_id platform, cl_platform_info what, char *out, size_t size)
{
    out[0] = '\0';
    if (clGetPlatformInfo(platform, what, size, out, NULL) != CL_SUCCESS) snprintf(out, size, "?");
    out[size - 1] = '\0';
}

static bool has_extension(cl_device_id device, const char *extension)
{
    char extensions[8192];
    device_string(device, CL_DEVICE_EXTENSIONS, extensions, sizeof extensions);
    size_t length = strlen(extension);
    for (const char *s = strstr(extensions, extension); s; s = strstr(s + 1, extension))
        if ((s == extensions || s[-1] == ' ') && (s[length] == ' ' || s[length] == '\0')) return true;
    return false;
}

static sm_device_info describe(int index, device_entry entry)
{
    sm_device_info info = {.index = index};
    device_string(entry.device, CL_DEVICE_NAME, info.name, sizeof info.name);
    platform_string(entry.platform, CL_PLATFORM_NAME, info.platform, sizeof info.platform);
    device_string(entry.device, CL_DEVICE_VERSION, info.version, sizeof info.version);
    cl_device_type type = 0;
    clGetDeviceInfo(entry.device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    info.gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    info.fp64 = has_extension(entry.device, "cl_khr_fp64");
    return info;
}

sm_result sm_opencl_devices(sm_device_info *out, int32_t capacity, int32_t *out_count)
{
    if (!out_count || capacity < 0 || (capacity > 0 && !out))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_opencl_devices: out_count must not be NULL, out must hold capacity entries");
    *out_count = 0;
    device_entry entries[SM_MAX_DEVICES];
    int count = 0;
    sm_result result = list_devices(entries, &count);
    if (result != SM_OK) return result;
    for (int i = 0; i < count && i < capacity; i++) out[i] = describe(i, entries[i]);
    *out_count = count;
    return SM_OK;
}

/// Chooses among the listed devices: an index, else a case-insensitive part of the name.
static sm_result choose_device(const char *selector, const device_entry *entries, int count, int *out)
{
    if (selector && *selector) {
        char *end = NULL;
        long index = strtol(selector, &end, 10);
        if (end != selector && *end == '\0') {
            if (index < 0 || index >= count)
                return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                               "OpenCL device %ld does not exist (there are %d; 'shapematch devices' lists them)", index, count);
            *out = (int)index;
            return SM_OK;
        }
        for (int i = 0; i < count; i++) {
            sm_device_info info = describe(i, entries[i]);
            char haystack[300];
            snprintf(haystack, sizeof haystack, "%s %s", info.name, info.platform);
            for (char *c = haystack; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
            char needle[128];
            snprintf(needle, sizeof needle, "%s", selector);
            for (char *c = needle; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
            if (strstr(haystack, needle)) {
                *out = i;
                return SM_OK;
            }
        }
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no OpenCL device matches '%s' ('shapematch devices' lists them)", selector);
    }
    for (int i = 0; i < count; i++)
        if (describe(i, entries[i]).gpu) {
            *out = i;
            return SM_OK;
        }
    *out = 0;
    return SM_OK;
}

/* ---- Program sources and build ---------------------------------------------------------- */

/// The kernel files joined in pipeline order with their #include lines blanked; from the
/// embedded copy, or from $SM_KERNEL_DIR when set (to iterate on kernels without rebuilding).
/// Each file opens with a #line directive, so the compiler's log names the file and its line.
sm_result sm_cl_program_source(char **out)
{
    const char *dir = getenv("SM_KERNEL_DIR");
    char **texts = calloc((size_t)sm_kernel_file_count, sizeof *texts);
    if (!texts) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading kernels");
    sm_result result = SM_OK;
    size_t capacity = 1, length = 0;
    for (int f = 0; f < sm_kernel_file_count && result == SM_OK; f++) {
        if (dir && *dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, sm_kernel_files[f].name);
            size_t size = 0;
            sm_read_status status = sm_read_file(path, (size_t)1 << 26, &texts[f], &size);
            if (status == SM_READ_CANNOT_OPEN)
                result = sm_fail(SM_ERROR_IO, "SM_KERNEL_DIR: cannot read %s: %s", path, strerror(errno));
            else if (status != SM_READ_OK)
                result = sm_fail(SM_ERROR_IO, "SM_KERNEL_DIR: cannot read %s", path);
        }
        capacity += strlen(texts[f] ? texts[f] : sm_kernel_files[f].text) + 2 * strlen(sm_kernel_files[f].name) + 64;
    }
    char *source = result == SM_OK ? malloc(capacity) : NULL;
    if (result == SM_OK && !source) result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory joining kernels");
    for (int f = 0; f < sm_kernel_file_count && result == SM_OK; f++) {
        const char *text = texts[f] ? texts[f] : sm_kernel_files[f].text;
        length += (size_t)sprintf(source + length, "// ---- %s\n#line 1 \"%s\"\n", sm_kernel_files[f].name,
                                  sm_kernel_files[f].name);
        for (const char *line = text; *line;) {
            const char *next = strchr(line, '\n');
            size_t n = next ? (size_t)(next - line + 1) : strlen(line);
            // the files are joined here, so their includes of each other are already satisfied
            if (strncmp(line, "#include \"", 10) == 0) {
                memcpy(source + length, "//", 2);
                length += 2;
            }
            memcpy(source + length, line, n);
            length += n;
            line += n;
        }
        source[length++] = '\n';
    }
    if (source) source[length] = '\0';
    for (int f = 0; f < sm_kernel_file_count; f++) free(texts[f]);
    free(texts);
    if (result != SM_OK) {
        free(source);
        return result;
    }
    *out = source;
    return SM_OK;
}

/// FNV-1a, 64 bits: the disk cache key.
static uint64_t hash_text(uint64_t h, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) h = (h ^ *c) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

/// The cache folder: $SM_CACHE_DIR, else $XDG_CACHE_HOME/shapematch, else ~/.cache/shapematch.
static bool cache_dir(char *out, size_t size)
{
    const char *env = getenv("SM_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env) snprintf(out, size, "%s", env);
    else if (xdg && *xdg) snprintf(out, size, "%s/shapematch", xdg);
    else if (home && *home) snprintf(out, size, "%s/.cache/shapematch", home);
    else return false;
    // create each missing level
    for (char *c = out + 1; *c; c++) {
        if (*c != '/') continue;
        *c = '\0';
        mkdir(out, 0755);
        *c = '/';
    }
    return mkdir(out, 0755) == 0 || errno == EEXIST;
}

/// Writes the program's binary to `path` through a temporary file, so readers never see half.
static void save_binary(cl_program program, const char *path, const sm_world *world)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0) return;
    unsigned char *binary = malloc(size);
    if (!binary) return;
    unsigned char *binaries[1] = {binary};
    char temporary[4200];
    snprintf(temporary, sizeof temporary, "%s.%d.tmp", path, (int)getpid());
    FILE *file = NULL;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, NULL) == CL_SUCCESS &&
        (file = fopen(temporary, "wb"))) {
        bool ok = fwrite(binary, 1, size, file) == size;
        ok = fclose(file) == 0 && ok;
        if (ok && rename(temporary, path) == 0)
            sm_log(world, SM_LOG_NOTICE, "OpenCL: cached the program binary in %s", path);
        else
            remove(temporary);
    }
    free(binary);
}

static sm_result build_program(sm_cl_device *d, const sm_world *world)
{
    char *source = NULL;
    sm_result result = sm_cl_program_source(&source);
    if (result != SM_OK) return result;
    char options[128];
    snprintf(options, sizeof options, "-cl-std=CL1.2%s%s", d->fp64 ? " -DSM_K_FP64=1" : "", d->gpu ? "" : " -DSM_K_CPU=1");

    char device_version[128], driver[128], platform_version[128];
    device_string(d->device, CL_DEVICE_VERSION, device_version, sizeof device_version);
    device_string(d->device, CL_DRIVER_VERSION, driver, sizeof driver);
    platform_string(d->platform, CL_PLATFORM_VERSION, platform_version, sizeof platform_version);
    uint64_t key = 0xcbf29ce484222325ull;
    const char *parts[] = {source, options, d->name, device_version, driver, platform_version};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) key = hash_text(key, parts[p]);
    char path[4096] = "";
    char dir[4000];
    if (cache_dir(dir, sizeof dir)) snprintf(path, sizeof path, "%s/kernels-%016llx.bin", dir, (unsigned long long)key);

    cl_int status = CL_SUCCESS;
    cl_program program = NULL;
    size_t binary_size = 0;
    char *binary = NULL;
    if (path[0] && sm_read_file(path, (size_t)1 << 30, &binary, &binary_size) == SM_READ_OK && binary_size > 0) {
        const unsigned char *binaries[1] = {(const unsigned char *)binary};
        cl_int binary_status = CL_SUCCESS;
        program = clCreateProgramWithBinary(d->context, 1, &d->device, &binary_size, binaries, &binary_status, &status);
        if (status != CL_SUCCESS || binary_status != CL_SUCCESS ||
            clBuildProgram(program, 1, &d->device, options, NULL, NULL) != CL_SUCCESS) {
            sm_log(world, SM_LOG_NOTICE, "OpenCL: the cached program %s was not accepted; rebuilding", path);
            if (program) clReleaseProgram(program);
            program = NULL;
        }
    }
    free(binary);
    if (!program) {
        const char *sources[1] = {source};
        program = clCreateProgramWithSource(d->context, 1, sources, NULL, &status);
        if (status != CL_SUCCESS) {
            result = sm_cl_fail("clCreateProgramWithSource", status, __FILE__, __LINE__);
            goto cleanup;
        }
        status = clBuildProgram(program, 1, &d->device, options, NULL, NULL);
        if (status != CL_SUCCESS) {
            // the whole build log: to the world's log callback, and as much as fits into the error
            size_t size = 0;
            clGetProgramBuildInfo(program, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
            char *log = calloc(size + 1, 1);
            if (log && size > 0) clGetProgramBuildInfo(program, d->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
            if (log && world->def.log) {
                const char *intro = "OpenCL: the build log of the kernels for ";
                char *message = malloc(strlen(intro) + strlen(d->name) + strlen(log) + 4);
                if (message) {
                    sprintf(message, "%s%s:\n%s", intro, d->name, log);
                    world->def.log(SM_LOG_ERROR, message, world->def.log_user);
                }
                free(message);
            }
            result = sm_fail(SM_ERROR_UNAVAILABLE,
                             "OpenCL: building the kernels for %s failed (%s); build log (%zu bytes%s):\n%s", d->name,
                             sm_cl_error_name(status), size, world->def.log ? ", all of it sent to the log callback" : "",
                             log ? log : "(out of memory reading it)");
            free(log);
            clReleaseProgram(program);
            program = NULL;
            goto cleanup;
        }
        if (path[0]) save_binary(program, path, world);
    }
    d->program = program;
cleanup:
    free(source);
    return result;
}

/* ---- Shared devices ---------------------------------------------------------------------- */

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static sm_cl_device *devices[SM_MAX_DEVICES];

/// Opens a context with `properties` on the device of `entry` and builds the program in it.
static sm_result open_device(device_entry entry, int index, const cl_context_properties *properties,
                             const sm_world *world, sm_cl_device **out)
{
    sm_result result = SM_OK;
    cl_int status = CL_SUCCESS;
    sm_cl_device *d = calloc(1, sizeof *d);
    if (!d) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory opening an OpenCL device");
    sm_device_info info = describe(index, entry);
    d->platform = entry.platform;
    d->device = entry.device;
    d->fp64 = info.fp64;
    d->gpu = info.gpu;
    snprintf(d->name, sizeof d->name, "%s (%s)", info.name, info.platform);
    SM_CL_TRY(clGetDeviceInfo(d->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_group, &d->max_group, NULL));
    d->context = clCreateContext(properties, 1, &d->device, NULL, NULL, &status);
    SM_CL_TRY(status);
    result = build_program(d, world);
cleanup:
    if (result != SM_OK) {
        if (d->context) clReleaseContext(d->context);
        free(d);
        return result;
    }
    *out = d;
    return SM_OK;
}

/// The listed devices and the one `selector` picks.
static sm_result pick(const char *selector, device_entry *entries, int *out_chosen)
{
    if (!selector || !*selector) selector = getenv("SM_DEVICE");
    int count = 0;
    sm_result result = list_devices(entries, &count);
    if (result == SM_OK) result = choose_device(selector, entries, count, out_chosen);
    return result;
}

sm_result sm_opencl_device_for(const char *selector, sm_device_info *out)
{
    if (!out) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_opencl_device_for: out must not be NULL");
    device_entry entries[SM_MAX_DEVICES];
    int chosen = 0;
    sm_result result = pick(selector, entries, &chosen);
    if (result == SM_OK) *out = describe(chosen, entries[chosen]);
    return result;
}

sm_result sm_cl_device_acquire(const char *selector, const sm_world *world, sm_cl_device **out)
{
    device_entry entries[SM_MAX_DEVICES];
    int chosen = 0;
    sm_result result = pick(selector, entries, &chosen);
    if (result != SM_OK) return result;

    pthread_mutex_lock(&devices_lock);
    sm_cl_device *d = NULL;
    for (int i = 0; i < SM_MAX_DEVICES && !d; i++)
        if (devices[i] && devices[i]->device == entries[chosen].device) d = devices[i];
    if (!d) {
        cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)entries[chosen].platform, 0};
        result = open_device(entries[chosen], chosen, properties, world, &d);
        for (int i = 0; i < SM_MAX_DEVICES && result == SM_OK; i++)
            if (!devices[i]) {
                devices[i] = d;
                break;
            }
    }
    pthread_mutex_unlock(&devices_lock);
    if (result == SM_OK) *out = d;
    return result;
}

/* ---- The caller's context ------------------------------------------------------------------- */

sm_result sm_cl_device_adopt(cl_context context, cl_device_id device, const sm_world *world, sm_cl_device **out)
{
    sm_result result = SM_OK;
    cl_uint device_count = 0;
    cl_device_id devices_of_context[SM_MAX_DEVICES];
    SM_CL_TRY(clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof device_count, &device_count, NULL));
    if (device_count == 0 || device_count > SM_MAX_DEVICES)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: the caller's OpenCL context holds %u devices", device_count);
    SM_CL_TRY(clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof devices_of_context, devices_of_context, NULL));
    if (!device) device = devices_of_context[0];
    bool found = false;
    for (cl_uint i = 0; i < device_count; i++) found |= devices_of_context[i] == device;
    if (!found)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_world_create: the caller's OpenCL device is not a device of its context");
    device_entry entry = {NULL, device};
    SM_CL_TRY(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof entry.platform, &entry.platform, NULL));
    sm_cl_device *d = calloc(1, sizeof *d);
    if (!d) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory adopting an OpenCL context");
    const sm_device_info info = describe(-1, entry);
    d->platform = entry.platform;
    d->device = device;
    d->fp64 = info.fp64;
    d->gpu = info.gpu;
    d->private_context = true;
    snprintf(d->name, sizeof d->name, "%s (%s)", info.name, info.platform);
    cl_int status = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_group, &d->max_group, NULL);
    if (status == CL_SUCCESS) status = clRetainContext(context);
    if (status != CL_SUCCESS) {
        free(d);
        return sm_cl_fail("clRetainContext", status, __FILE__, __LINE__);
    }
    d->context = context; // released with the world (sm_cl_device_release)
    result = build_program(d, world);
    if (result != SM_OK) {
        sm_cl_device_release(d);
        return result;
    }
    *out = d;
cleanup:
    return result;
}

/* ---- Sharing with OpenGL -------------------------------------------------------------------- */

typedef cl_int(CL_API_CALL *gl_context_info_fn)(const cl_context_properties *, cl_gl_context_info, size_t, void *,
                                                 size_t *);

sm_result sm_cl_device_acquire_gl(const char *selector, const sm_world *world, sm_cl_device **out, bool *out_shared,
                                  char *reason, size_t reason_size)
{
    *out_shared = false;
    device_entry entries[SM_MAX_DEVICES];
    int chosen = 0;
    sm_result result = pick(selector, entries, &chosen);
    if (result != SM_OK) return result;
    const device_entry entry = entries[chosen];
    const sm_gl_context gl = world->def.gl;
    // PoCL accepts GL context properties and then ends the process in its interop entry points:
    // only a device that lists the extension is ever asked anything about GL
    if (!has_extension(entry.device, "cl_khr_gl_sharing")) {
        snprintf(reason, reason_size, "the device does not list cl_khr_gl_sharing");
        return sm_cl_device_acquire(selector, world, out);
    }
    cl_context_properties properties[] = {
        CL_GL_CONTEXT_KHR, (cl_context_properties)gl.context,
        gl.egl ? CL_EGL_DISPLAY_KHR : CL_GLX_DISPLAY_KHR, (cl_context_properties)gl.display,
        CL_CONTEXT_PLATFORM, (cl_context_properties)entry.platform, 0};
    gl_context_info_fn context_info =
        (gl_context_info_fn)clGetExtensionFunctionAddressForPlatform(entry.platform, "clGetGLContextInfoKHR");
    cl_device_id gl_device = NULL;
    size_t size = 0;
    cl_int status = context_info ? context_info(properties, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof gl_device,
                                                &gl_device, &size)
                                 : CL_INVALID_OPERATION;
    if (status != CL_SUCCESS || size == 0 || gl_device != entry.device) {
        snprintf(reason, reason_size, "the GL context does not run on this device (clGetGLContextInfoKHR: %s)",
                 status != CL_SUCCESS ? sm_cl_error_name(status) : size == 0 ? "no device" : "another device");
        return sm_cl_device_acquire(selector, world, out);
    }
    result = open_device(entry, chosen, properties, world, out);
    if (result != SM_OK) {
        snprintf(reason, reason_size, "a context shared with GL could not be made (%s)", sm_last_error());
        return sm_cl_device_acquire(selector, world, out);
    }
    (*out)->private_context = true;
    *out_shared = true;
    return SM_OK;
}

void sm_cl_device_release(sm_cl_device *device)
{
    if (!device || !device->private_context) return; // shared devices live for the process
    if (device->program) clReleaseProgram(device->program);
    if (device->context) clReleaseContext(device->context);
    free(device);
}
