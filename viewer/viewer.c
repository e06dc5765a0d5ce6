/* The messages shapematch-view prints (viewer.h). */
#include "viewer.h"

#include <stdarg.h>
#include <stdio.h>

void view_say(const char *format, ...)
{
    // the text it quotes (the scene's path, names from the file) made printable (sm_printable())
    char message[2048], printable[4096];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    printf("shapematch-view: %s\n", sm_printable(message, printable, sizeof printable));
    fflush(stdout);
}

void view_status(viewer *v, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(v->status, sizeof v->status, format, args);
    va_end(args);
    view_say("%s", v->status);
}
