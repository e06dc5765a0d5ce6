/* What the shapematch command's subcommands share: number parsing and error lines. */
#ifndef SM_TOOL_PARSE_H
#define SM_TOOL_PARSE_H

#include <shapematch/shapematch.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Parses a whole decimal integer in [lo, hi]: digits, after a '-' for a negative one (no
/// spaces, no '+'); false when `text` is anything else.
static inline bool parse_int(const char *text, long long lo, long long hi, long long *out)
{
    if (!((text[0] >= '0' && text[0] <= '9') || (text[0] == '-' && text[1] >= '0' && text[1] <= '9'))) return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/// Whether option `name` was given before; notes it in `seen` (the names so far, each between
/// spaces, in `size` bytes, which starts as " ").
static inline bool option_repeated(char *seen, size_t size, const char *name)
{
    char key[48];
    snprintf(key, sizeof key, " %s ", name);
    if (strstr(seen, key)) return true;
    if (strlen(seen) + strlen(name) + 2 < size) strcat(strcat(seen, name), " ");
    return false;
}

static inline void error_line(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// Prints "shapematch: " and the message on standard error, the text it quotes (paths,
/// arguments, the library's messages) made printable (sm_printable()).
static inline void error_line(const char *format, ...)
{
    char message[4096], printable[4096];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    fprintf(stderr, "shapematch: %s\n", sm_printable(message, printable, sizeof printable));
}

#endif
