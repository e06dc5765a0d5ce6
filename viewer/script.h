/* Scripted interaction for shapematch-view --script FILE: timed mouse and key events, so that
 * picking, dragging and the keys can be tested without a person. One event per line:
 *
 *   # time (s of simulated time)  event  arguments
 *   0.25  cursor  0.50 0.45     cursor at this fraction of the window's width and height (from the top left), each in [0, 1]
 *   0.25  press   left          mouse button down: left, right or middle
 *   1.00  release left          mouse button up
 *   1.20  wheel   -2            mouse wheel notches (positive: away from the viewer), at most 100 either way
 *   2.00  key     C             a key press: a letter, a digit, space, escape, period (case does not matter)
 *   2.10  mod     shift on      hold shift (on) or let it go (off) for the events after it
 *
 * Times are finite numbers >= 0 that never decrease down the file; events are applied before
 * the first frame whose simulated time reaches theirs, in file order. '#' starts a comment;
 * blank lines are skipped. Anything else is an error that names the file and the line: a time
 * that is not a number, an unknown event, key, button or modifier, missing, extra or
 * non-numeric arguments, values out of range, a time before the one above it, a line over 1000
 * bytes or with a NUL byte. */
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
    char key[16];         ///< key: its name, upper case (A, 7, SPACE, ESCAPE, PERIOD); mod: the modifier's name (SHIFT)
} view_event;

typedef struct view_script {
    view_event *events;
    int count;
    int next; ///< the first event not yet applied
} view_script;

/// Reads a script; on failure returns false with "FILE:LINE: what is wrong" in `error` (the
/// file's name and any text of the file quoted there made printable by script_printable()).
bool script_load(const char *path, view_script *out, char *error, size_t error_size);
void script_free(view_script *script);

/// Copies `text` into `out` (always terminated) with every byte that is not printable ASCII
/// (control characters, DEL, bytes of 0x80 and up) written as \xNN, so that text from a file or
/// the command line cannot send escape sequences to the terminal it is echoed on; at most
/// `limit` bytes of `text` are copied (0: all that fit), "..." marking the cut.
void script_printable(const char *text, size_t limit, char *out, size_t out_size);

#endif
