#include "errors.h"
#include "world.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char last_error[2048];

const char *sm_last_error(void) { return last_error; }

const char *sm_number_text(double value, char text[32])
{
    static const int digits[] = {6, 9, 12, 15, 17};
    for (size_t k = 0; k < sizeof digits / sizeof digits[0]; k++) {
        snprintf(text, 32, "%.*g", digits[k], value);
        if (strtod(text, NULL) == value) break;
    }
    return text;
}

const char *sm_result_name(sm_result result)
{
    switch (result) {
    case SM_OK: return "SM_OK";
    case SM_ERROR_INVALID_ARGUMENT: return "SM_ERROR_INVALID_ARGUMENT";
    case SM_ERROR_OUT_OF_MEMORY: return "SM_ERROR_OUT_OF_MEMORY";
    case SM_ERROR_IO: return "SM_ERROR_IO";
    case SM_ERROR_SCENE: return "SM_ERROR_SCENE";
    case SM_ERROR_UNAVAILABLE: return "SM_ERROR_UNAVAILABLE";
    case SM_ERROR_NOT_FINITE: return "SM_ERROR_NOT_FINITE";
    case SM_ERROR_DIVERGED: return "SM_ERROR_DIVERGED";
    case SM_ERROR_CANCELLED: return "SM_ERROR_CANCELLED";
    }
    return "SM_ERROR_UNKNOWN";
}

/// The length of the UTF-8 sequence at s that encodes a printable character (1 to 4), or 0 when
/// s does not start one (a stray continuation byte, an overlong or cut sequence, a surrogate, a
/// C1 control character U+0080 to U+009F).
static int printable_utf8(const unsigned char *s)
{
    if (s[0] < 0x80) return 0;
    const int length = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    unsigned code = length == 4 ? s[0] & 0x07u : length == 3 ? s[0] & 0x0Fu : s[0] & 0x1Fu;
    for (int k = 1; k < length; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        code = (code << 6) | (s[k] & 0x3Fu);
    }
    if (length == 0 || (length == 2 && code < 0xA0) || (length == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
        (length == 4 && (code < 0x10000 || code > 0x10FFFF)))
        return 0;
    return length;
}

char *sm_printable(const char *text, char *out, size_t size)
{
    if (!out || size == 0) return out;
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)(text ? text : ""); *s && o + 1 < size;) {
        const int length = printable_utf8(s);
        if ((*s >= 0x20 && *s < 0x7F) || *s == '\n' || *s == '\t') {
            out[o++] = (char)*s++;
        } else if (length > 0) {
            if (o + (size_t)length >= size) break;
            for (int k = 0; k < length; k++) out[o++] = (char)*s++;
        } else {
            if (o + 4 >= size) break;
            snprintf(out + o, 5, "\\x%02x", *s++);
            o += 4;
        }
    }
    out[o] = '\0';
    return out;
}

sm_result sm_fail(sm_result code, const char *format, ...)
{
    char message[sizeof last_error];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    sm_printable(message, last_error, sizeof last_error);
    return code;
}

void sm_log(const sm_world *world, sm_log_level level, const char *format, ...)
{
    if (!world->def.log) return;
    char message[1024], printable[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    world->def.log(level, sm_printable(message, printable, sizeof printable), world->def.log_user);
}
