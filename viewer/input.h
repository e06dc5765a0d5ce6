/* shapematch-view's input: the mouse buttons, cursor, wheel and keys, from GLFW's callbacks or
 * from the --script events, turned into picking, dragging, locking, pushing, cutting, the
 * camera's moves and the keys' commands (the help's list). */
#ifndef SM_VIEW_INPUT_H
#define SM_VIEW_INPUT_H

#include "viewer.h"

/// GLFW's callbacks for the window (its user pointer is the viewer).
void view_on_cursor(GLFWwindow *window, double x, double y);
void view_on_button(GLFWwindow *window, int button, int action, int mods);
void view_on_scroll(GLFWwindow *window, double dx, double dy);
void view_on_key(GLFWwindow *window, int key, int scancode, int action, int mods);
void view_on_resize(GLFWwindow *window, int width, int height);

/// Applies the script's events that are due by the current simulated time.
void view_run_script(viewer *v);

#endif
