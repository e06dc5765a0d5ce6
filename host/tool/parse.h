/* The number parsing the shapematch command's subcommands share. */
#ifndef SM_TOOL_PARSE_H
#define SM_TOOL_PARSE_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/// Parses a whole decimal integer in [lo, hi]; false when `text` is anything else.
static inline bool parse_int(const char *text, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

#endif
