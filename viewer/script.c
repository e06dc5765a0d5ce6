#include "script.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int button_of(const char *name)
{
    if (strcmp(name, "left") == 0) return 0;
    if (strcmp(name, "right") == 0) return 1;
    if (strcmp(name, "middle") == 0) return 2;
    return -1;
}

bool script_load(const char *path, view_script *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(error, error_size, "%s: cannot open (%s)", path, strerror(errno));
        return false;
    }
    char line[512];
    int number = 0, capacity = 0;
    double last_time = 0.0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, file)) {
        number++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char kind[32] = "", a[64] = "", b[64] = "";
        double time = 0.0;
        int fields = sscanf(line, "%lf %31s %63s %63s", &time, kind, a, b);
        if (fields <= 0) continue; // blank or comment
        view_event e = {.time = time};
        ok = fields >= 3 && time >= 0.0;
        if (ok && strcmp(kind, "cursor") == 0) {
            char *end_a = NULL, *end_b = NULL;
            e.type = VIEW_CURSOR;
            e.x = strtod(a, &end_a);
            e.y = fields == 4 ? strtod(b, &end_b) : 0.0;
            ok = fields == 4 && *end_a == '\0' && *end_b == '\0';
        } else if (ok && (strcmp(kind, "press") == 0 || strcmp(kind, "release") == 0)) {
            e.type = kind[0] == 'p' ? VIEW_PRESS : VIEW_RELEASE;
            e.button = button_of(a);
            ok = e.button >= 0 && fields == 3;
        } else if (ok && strcmp(kind, "wheel") == 0) {
            char *end = NULL;
            e.type = VIEW_WHEEL;
            e.x = strtod(a, &end);
            ok = *end == '\0' && fields == 3;
        } else if (ok && strcmp(kind, "key") == 0) {
            e.type = VIEW_KEY;
            snprintf(e.key, sizeof e.key, "%.15s", a); // (longer names are no key)
            for (char *c = e.key; *c; c++) *c = (char)toupper((unsigned char)*c);
            ok = fields == 3;
        } else if (ok && strcmp(kind, "mod") == 0) {
            e.type = VIEW_MOD;
            snprintf(e.key, sizeof e.key, "%.15s", a); // (longer names are no key)
            for (char *c = e.key; *c; c++) *c = (char)toupper((unsigned char)*c);
            e.x = strcmp(b, "on") == 0;
            ok = fields == 4 && strcmp(e.key, "SHIFT") == 0 && (strcmp(b, "on") == 0 || strcmp(b, "off") == 0);
        } else {
            ok = false;
        }
        if (!ok) {
            snprintf(error, error_size,
                     "%s:%d: expected 'TIME cursor X Y', 'TIME press|release left|right|middle', 'TIME wheel N', "
                     "'TIME key NAME' or 'TIME mod shift on|off' with TIME >= 0",
                     path, number);
            break;
        }
        if (time < last_time) {
            snprintf(error, error_size, "%s:%d: events must be in time order (%g after %g)", path, number, time, last_time);
            ok = false;
            break;
        }
        last_time = time;
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 32;
            view_event *grown = realloc(out->events, sizeof *grown * (size_t)capacity);
            if (!grown) {
                snprintf(error, error_size, "%s: out of memory", path);
                ok = false;
                break;
            }
            out->events = grown;
        }
        out->events[out->count++] = e;
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
