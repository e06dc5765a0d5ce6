#include "world.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[2048];

const char *sm_last_error(void) { return last_error; }

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
    }
    return "SM_ERROR_UNKNOWN";
}

sm_result sm_fail(sm_result code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return code;
}

void sm_log(const sm_world *world, sm_log_level level, const char *format, ...)
{
    if (!world->def.log) return;
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    world->def.log(level, message, world->def.log_user);
}
