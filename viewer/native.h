/* The native handles of the window's GL context, for CL-GL sharing (kept apart from glad,
 * whose gl.h must not meet GL/glx.h in one file). */
#ifndef SM_VIEW_NATIVE_H
#define SM_VIEW_NATIVE_H

#include <shapematch/shapematch.h>

struct GLFWwindow;

/// The window's GLX context and X display; false (with the reason in *why) when it has none.
bool native_gl_context(struct GLFWwindow *window, sm_gl_context *out, const char **why);

#endif
