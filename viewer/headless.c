#include "headless.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <stdio.h>
#include <string.h>

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

static bool has_extension(const char *list, const char *name)
{
    const size_t length = strlen(name);
    for (const char *at = list; at && (at = strstr(at, name)) != NULL; at += length)
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0')) return true;
    return false;
}

/// A display on a GPU: the first EGL device that is not a software renderer, else the first
/// device, else the default display; each must initialise.
static EGLDisplay open_display(EGLint *major, EGLint *minor, char *detail, size_t detail_size)
{
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLQUERYDEVICESEXTPROC query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC device_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (has_extension(client, "EGL_EXT_platform_device") && query_devices && device_string && platform_display &&
        query_devices(16, devices, &count) && count > 0) {
        for (int pass = 0; pass < 2; pass++) {
            for (EGLint i = 0; i < count; i++) {
                const char *extensions = device_string(devices[i], EGL_EXTENSIONS);
                const bool software = has_extension(extensions, "EGL_MESA_device_software");
                if (pass == 0 && software) continue; // a GPU first
                if (pass == 1 && !software) continue;
                EGLDisplay display = platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
                if (display != EGL_NO_DISPLAY && eglInitialize(display, major, minor)) {
                    snprintf(detail, detail_size, "EGL device %d of %d%s", (int)i, (int)count,
                             software ? " (software)" : "");
                    return display;
                }
            }
        }
    }
    if (has_extension(client, "EGL_MESA_platform_surfaceless") && platform_display) {
        EGLDisplay display = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        if (display != EGL_NO_DISPLAY && eglInitialize(display, major, minor)) {
            snprintf(detail, detail_size, "EGL surfaceless platform");
            return display;
        }
    }
    EGLDisplay display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display != EGL_NO_DISPLAY && eglInitialize(display, major, minor)) {
        snprintf(detail, detail_size, "EGL default display");
        return display;
    }
    return EGL_NO_DISPLAY;
}

bool headless_open(headless_gl *h, int width, int height, char *error, size_t error_size)
{
    *h = (headless_gl){0};
    EGLint major = 0, minor = 0;
    EGLDisplay display = open_display(&major, &minor, h->detail, sizeof h->detail);
    if (display == EGL_NO_DISPLAY) {
        snprintf(error, error_size, "--headless: no EGL display could be initialised (install an EGL driver: "
                                    "libegl1 with Mesa's libegl-mesa0, or the GPU vendor's)");
        return false;
    }
    h->display = display;
    if (!eglBindAPI(EGL_OPENGL_API)) {
        snprintf(error, error_size, "--headless: the EGL display does not offer desktop OpenGL");
        headless_close(h);
        return false;
    }
    // a small pbuffer where the display offers one (the frames are drawn into the renderer's
    // own framebuffer); else no surface at all (EGL_KHR_surfaceless_context)
    const EGLint config_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                        EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    const EGLint surfaceless_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = NULL;
    EGLint configs = 0;
    if (!eglChooseConfig(display, config_attributes, &config, 1, &configs) || configs == 0) {
        if (!has_extension(eglQueryString(display, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context") ||
            !eglChooseConfig(display, surfaceless_attributes, &config, 1, &configs) || configs == 0) {
            snprintf(error, error_size, "--headless: the EGL display has no OpenGL configuration");
            headless_close(h);
            return false;
        }
    } else {
        const EGLint pbuffer_attributes[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
        h->surface = eglCreatePbufferSurface(display, config, pbuffer_attributes);
    }
    const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                         EGL_NONE};
    h->context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attributes);
    EGLSurface surface = h->surface ? (EGLSurface)h->surface : EGL_NO_SURFACE;
    if (h->context == EGL_NO_CONTEXT || !eglMakeCurrent(display, surface, surface, h->context)) {
        snprintf(error, error_size, "--headless: cannot make an OpenGL 3.3 core context current (EGL error 0x%x)",
                 (unsigned)eglGetError());
        headless_close(h);
        return false;
    }
    snprintf(h->detail + strlen(h->detail), sizeof h->detail - strlen(h->detail), ", EGL %d.%d, %s", (int)major,
             (int)minor, h->surface ? "pbuffer" : "no surface");
    return true;
}

headless_proc headless_get_proc(const char *name) { return (headless_proc)eglGetProcAddress(name); }

sm_gl_context headless_gl_context(const headless_gl *h)
{
    return (sm_gl_context){.context = h->context, .display = h->display, .egl = true};
}

void headless_close(headless_gl *h)
{
    if (!h->display) return;
    eglMakeCurrent(h->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (h->context) eglDestroyContext(h->display, h->context);
    if (h->surface) eglDestroySurface(h->display, h->surface);
    eglTerminate(h->display);
    eglReleaseThread();
    *h = (headless_gl){0};
}
