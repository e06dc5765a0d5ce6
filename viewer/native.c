#include "native.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

/* GLFW's native access for X11 and GLX (glfw3native.h), declared here: that header pulls in
 * Xrandr's headers, which only these two functions would need. */
typedef struct _XDisplay Display;
typedef struct __GLXcontextRec *GLXContext;
Display *glfwGetX11Display(void);
GLXContext glfwGetGLXContext(GLFWwindow *window);

bool native_gl_context(struct GLFWwindow *window, sm_gl_context *out, const char **why)
{
    *out = (sm_gl_context){0};
    Display *display = glfwGetX11Display();
    GLXContext context = display ? glfwGetGLXContext(window) : NULL;
    if (!display || !context) {
        *why = "the window's OpenGL context is not a GLX context on X11";
        return false;
    }
    out->context = (void *)context;
    out->display = (void *)display;
    out->egl = false;
    return true;
}
