#include "script.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The longest line read, in bytes without its newline.
#define MAX_LINE 1000
/// The most notches a wheel event may turn (a zoom of 0.9^100 already makes the scene vanish).
#define MAX_NOTCHES 100.0
/// The most events a script may hold (far more than a run needs; it keeps the count an int).
#define MAX_EVENTS 10000000
/// At most this many bytes of a token are quoted in an error.
#define QUOTE_LIMIT 40

void script_printable(const char *text, size_t limit, char *out, size_t out_size)
{
    if (out_size == 0) return;
    size_t n = 0, i = 0;
    for (; text[i] && (limit == 0 || i < limit); i++) {
        const unsigned char c = (unsigned char)text[i];
        char piece[5] = {(char)c, '\0'};
        if (c < 0x20 || c > 0x7e) snprintf(piece, sizeof piece, "\\x%02x", c);
        const size_t length = strlen(piece);
        if (n + length + 4 > out_size) break; // room for "..." and the terminator
        memcpy(out + n, piece, length);
        n += length;
    }
    if (text[i]) {
        const size_t room = out_size - 1 - n;
        memcpy(out + n, "...", room < 3 ? room : 3);
        n += room < 3 ? room : 3;
    }
    out[n] = '\0';
}

/// What script_load() keeps while it reads: the file's name (printable) and the line number,
/// for the messages.
typedef struct reader {
    char path[256];
    int line;
    char *error;
    size_t error_size;
} reader;

/// Writes "FILE:LINE: message" into the error; returns false.
static bool fail(reader *r, const char *format, ...)
{
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    snprintf(r->error, r->error_size, "%s:%d: %s", r->path, r->line, message);
    return false;
}

/// `token` quoted in an error: printable, and cut after QUOTE_LIMIT bytes.
static const char *quote(const char *token, char *buffer, size_t size)
{
    script_printable(token, QUOTE_LIMIT, buffer, size);
    return buffer;
}

/// Reads one line into `line` (without its newline): 1 read, 0 end of file, -1 an error
/// already reported (over MAX_LINE bytes, or a NUL byte, which would hide the rest of the line).
static int read_line(FILE *file, reader *r, char line[MAX_LINE + 1])
{
    int c, n = 0;
    bool nul = false, any = false;
    while ((c = getc(file)) != EOF && c != '\n') {
        any = true;
        if (c == '\0') nul = true;
        if (n == MAX_LINE) {
            r->line++;
            fail(r, "the line is longer than %d bytes", MAX_LINE);
            return -1;
        }
        line[n++] = (char)c;
    }
    line[n] = '\0';
    if (c == EOF && !any) return 0;
    r->line++;
    if (nul) {
        fail(r, "the line holds a NUL byte");
        return -1;
    }
    return 1;
}

/// Parses a whole token as a finite number (not "nan" or "inf", nor one beyond a double's range).
static bool number(const char *token, double *out)
{
    char *end = NULL;
    *out = strtod(token, &end);
    return end != token && *end == '\0' && isfinite(*out);
}

static int button_of(const char *name)
{
    if (strcmp(name, "left") == 0) return 0;
    if (strcmp(name, "right") == 0) return 1;
    if (strcmp(name, "middle") == 0) return 2;
    return -1;
}

/// Whether `name` (upper case) is a key the viewer knows.
static bool known_key(const char *name)
{
    if (strlen(name) == 1) return isupper((unsigned char)name[0]) || isdigit((unsigned char)name[0]);
    return strcmp(name, "SPACE") == 0 || strcmp(name, "ESCAPE") == 0 || strcmp(name, "PERIOD") == 0;
}

/// Parses the event of a line already split into `count` tokens (the time first); false with
/// the error reported.
static bool parse_event(reader *r, char **token, int count, double last_time, view_event *e)
{
    static const char *forms = "expected 'TIME cursor X Y', 'TIME press|release left|right|middle', 'TIME wheel N', "
                               "'TIME key NAME' or 'TIME mod shift on|off'";
    char q[4 * QUOTE_LIMIT + 8];
    double time = 0.0;
    if (!number(token[0], &time))
        return fail(r, "the time '%s' is not a number (%s)", quote(token[0], q, sizeof q), forms);
    if (time < 0.0) return fail(r, "the time %g is negative", time);
    if (time < last_time)
        return fail(r, "the time %g is before %g, that of the event above: events must be in time order", time, last_time);
    *e = (view_event){.time = time};
    if (count < 2) return fail(r, "no event after the time (%s)", forms);
    const char *kind = token[1];
    int wanted = 0; // arguments
    if (strcmp(kind, "cursor") == 0) wanted = 2, e->type = VIEW_CURSOR;
    else if (strcmp(kind, "press") == 0) wanted = 1, e->type = VIEW_PRESS;
    else if (strcmp(kind, "release") == 0) wanted = 1, e->type = VIEW_RELEASE;
    else if (strcmp(kind, "wheel") == 0) wanted = 1, e->type = VIEW_WHEEL;
    else if (strcmp(kind, "key") == 0) wanted = 1, e->type = VIEW_KEY;
    else if (strcmp(kind, "mod") == 0) wanted = 2, e->type = VIEW_MOD;
    else return fail(r, "unknown event '%s' (%s)", quote(kind, q, sizeof q), forms);
    if (count - 2 < wanted)
        return fail(r, "%s needs %d argument%s, got %d (%s)", kind, wanted, wanted == 1 ? "" : "s", count - 2, forms);
    if (count - 2 > wanted) return fail(r, "unexpected '%s' after the %s event's arguments", quote(token[2 + wanted], q, sizeof q), kind);
    const char *a = token[2], *b = wanted == 2 ? token[3] : "";
    switch (e->type) {
    case VIEW_CURSOR:
        if (!number(a, &e->x)) return fail(r, "cursor: '%s' is not a number", quote(a, q, sizeof q));
        if (!number(b, &e->y)) return fail(r, "cursor: '%s' is not a number", quote(b, q, sizeof q));
        if (e->x < 0.0 || e->x > 1.0 || e->y < 0.0 || e->y > 1.0)
            return fail(r, "cursor: %g %g lies outside the window (fractions of its width and height in [0, 1])", e->x, e->y);
        return true;
    case VIEW_PRESS:
    case VIEW_RELEASE:
        e->button = button_of(a);
        if (e->button < 0) return fail(r, "%s: unknown button '%s' (left, right or middle)", kind, quote(a, q, sizeof q));
        return true;
    case VIEW_WHEEL:
        if (!number(a, &e->x)) return fail(r, "wheel: '%s' is not a number", quote(a, q, sizeof q));
        if (fabs(e->x) > MAX_NOTCHES) return fail(r, "wheel: %g notches, at most %g either way", e->x, MAX_NOTCHES);
        return true;
    case VIEW_KEY:
    case VIEW_MOD:
        if (strlen(a) >= sizeof e->key) return fail(r, "%s: unknown %s '%s'", kind, kind[0] == 'k' ? "key" : "modifier", quote(a, q, sizeof q));
        for (size_t i = 0; a[i]; i++) e->key[i] = (char)toupper((unsigned char)a[i]);
        if (e->type == VIEW_KEY) {
            if (!known_key(e->key))
                return fail(r, "key: unknown key '%s' (a letter, a digit, space, escape or period)", quote(a, q, sizeof q));
            return true;
        }
        if (strcmp(e->key, "SHIFT") != 0) return fail(r, "mod: unknown modifier '%s' (shift)", quote(a, q, sizeof q));
        if (strcmp(b, "on") != 0 && strcmp(b, "off") != 0) return fail(r, "mod: '%s' is neither on nor off", quote(b, q, sizeof q));
        e->x = strcmp(b, "on") == 0;
        return true;
    }
    return fail(r, "%s", forms);
}

bool script_load(const char *path, view_script *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    reader r = {.error = error, .error_size = error_size};
    script_printable(path, 0, r.path, sizeof r.path);
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(error, error_size, "%s: cannot open (%s)", r.path, strerror(errno));
        return false;
    }
    char line[MAX_LINE + 1];
    int capacity = 0, got;
    double last_time = 0.0;
    bool ok = true;
    while (ok && (got = read_line(file, &r, line)) != 0) {
        if (got < 0) {
            ok = false;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        // the tokens: the time, the event, its arguments (one more than any event takes, to
        // catch extra ones)
        char *token[5];
        int count = 0;
        for (char *t = strtok(line, " \t\r\v\f"); t && count < 5; t = strtok(NULL, " \t\r\v\f")) token[count++] = t;
        if (count == 0) continue; // blank or comment
        view_event e;
        if (!parse_event(&r, token, count, last_time, &e)) {
            ok = false;
            break;
        }
        last_time = e.time;
        if (out->count == MAX_EVENTS) {
            fail(&r, "more than %d events", MAX_EVENTS);
            ok = false;
            break;
        }
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 32;
            view_event *grown = realloc(out->events, sizeof *grown * (size_t)capacity);
            if (!grown) {
                snprintf(error, error_size, "%s: out of memory", r.path);
                ok = false;
                break;
            }
            out->events = grown;
        }
        out->events[out->count++] = e;
    }
    if (ok && ferror(file)) {
        snprintf(error, error_size, "%s: cannot read (%s)", r.path, strerror(errno));
        ok = false;
    }
    fclose(file);
    if (!ok) script_free(out);
    return ok;
}

void script_free(view_script *script)
{
    free(script->events);
    memset(script, 0, sizeof *script);
}
