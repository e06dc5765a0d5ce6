/* Scripted interaction for shapematch-view --script FILE: timed mouse and key events, so that
 * picking, dragging and the keys can be tested without a person. One event per line:
 *
 *   # time (s of simulated time)  event  arguments
 *   0.25  cursor  0.50 0.45     cursor at this fraction of the window's width and height (from the top left)
 *   0.25  press   left          mouse button down: left, right or middle
 *   1.00  release left          mouse button up
 *   1.20  wheel   -2            mouse wheel notches (positive: away from the viewer)
 *   2.00  key     C             a key press: a letter, a digit, space, escape, period
 *   2.10  mod     shift on      hold shift (on) or let it go (off) for the events after it
 *
 * Events are applied before the first frame whose simulated time reaches theirs, in file order. */
#ifndef SM_VIEW_SCRIPT_H
#define SM_VIEW_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum view_event_type { VIEW_CURSOR, VIEW_PRESS, VIEW_RELEASE, VIEW_WHEEL, VIEW_KEY, VIEW_MOD } view_event_type;

typedef struct view_event {
    double time;          ///< s of simulated time
    view_event_type type;
    double x, y;          ///< cursor: fractions of the window; wheel: x holds the notches; mod: x is 1 (on) or 0 (off)
    int button;           ///< press and release: 0 left, 1 right, 2 middle
    char key[16];         ///< key: its name, upper case; mod: the modifier's name (SHIFT)
} view_event;

typedef struct view_script {
    view_event *events;
    int count;
    int next; ///< the first event not yet applied
} view_script;

/// Reads a script; on failure returns false with "FILE:LINE: what is wrong" in `error`.
bool script_load(const char *path, view_script *out, char *error, size_t error_size);
void script_free(view_script *script);

#endif
