/* The messages shapematch-view prints (viewer.h). */
#include "viewer.h"

#include <stdarg.h>
#include <stdio.h>

void view_say(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("shapematch-view: ");
    vprintf(format, args);
    printf("\n");
    fflush(stdout);
    va_end(args);
}

void view_status(viewer *v, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(v->status, sizeof v->status, format, args);
    va_end(args);
    view_say("%s", v->status);
}
