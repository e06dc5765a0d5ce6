/* An OpenGL 3.3 core context with no window system, through EGL (a GPU's EGL device where
 * there is one, else Mesa's software device or surfaceless platform): what --headless draws
 * into, on machines without X. Kept apart from glad, whose gl.h must not meet EGL's headers. */
#ifndef SM_VIEW_HEADLESS_H
#define SM_VIEW_HEADLESS_H

#include <shapematch/shapematch.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct headless_gl {
    void *display; ///< EGLDisplay
    void *context; ///< EGLContext
    void *surface; ///< EGLSurface: a pbuffer, or NULL (surfaceless)
    char detail[160];
} headless_gl;

typedef void (*headless_proc)(void);

/// Makes a context current on this thread; false with the reason in error.
bool headless_open(headless_gl *h, int width, int height, char *error, size_t error_size);
/// The GL entry points, for gladLoadGL.
headless_proc headless_get_proc(const char *name);
/// The context and display for CL-GL sharing (CL_EGL_DISPLAY_KHR).
sm_gl_context headless_gl_context(const headless_gl *h);
void headless_close(headless_gl *h);

#endif
