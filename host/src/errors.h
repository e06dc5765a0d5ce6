/* Errors and the log (errors.c): the message sm_last_error() returns, and the world's log callback. */
#ifndef SM_ERRORS_H
#define SM_ERRORS_H

#include "shapematch/shapematch.h"

/// Records a formatted message for sm_last_error() and returns `code`.
sm_result sm_fail(sm_result code, const char *format, ...) __attribute__((format(printf, 2, 3)));
/// The shortest of %.6g, %.9g, %.12g, %.15g and %.17g that reads back as `value`, in `text`
/// (32 bytes): what a message shows of a number refused for its range, so that 1.0000001 is not
/// shown as 1 beside the bound [0, 1].
const char *sm_number_text(double value, char text[32]);
/// Sends a formatted message to the world's log callback, if any.
void sm_log(const sm_world *world, sm_log_level level, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
