/* Reading whole files: scene files, kernel sources from $SM_KERNEL_DIR and cached program
 * binaries. */
#include "files.h"
#include "world.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sm_read_status sm_read_file(const char *path, size_t limit, char **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    FILE *file = fopen(path, "rb");
    if (!file) return SM_READ_CANNOT_OPEN;
    // grown as it fills, so pipes and files that change size read the same way
    size_t capacity = 1 << 16, used = 0;
    char *text = malloc(capacity);
    while (text) {
        used += fread(text + used, 1, capacity - used - 1, file);
        if (used < capacity - 1) break;
        if (capacity >= limit) {
            free(text), fclose(file);
            return SM_READ_TOO_LARGE;
        }
        char *grown = realloc(text, capacity * 2);
        if (!grown) free(text);
        text = grown;
        capacity *= 2;
    }
    const int saved = errno;
    bool failed = text && ferror(file);
    fclose(file);
    if (!text) return SM_READ_NO_MEMORY;
    if (failed) {
        free(text);
        errno = saved;
        return SM_READ_FAILED;
    }
    text[used] = '\0';
    *out = text;
    *out_size = used;
    return SM_READ_OK;
}

FILE *sm_open_regular(const char *path, const char **why)
{
    const char *reason = NULL;
    FILE *file = NULL;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat info;
    if (fd < 0) {
        reason = strerror(errno);
    } else if (fstat(fd, &info) != 0) {
        reason = strerror(errno);
    } else if (!S_ISREG(info.st_mode)) {
        reason = S_ISDIR(info.st_mode) ? "is a directory" : "not a regular file";
    } else {
        const int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || !(file = fdopen(fd, "rb"))) reason = strerror(errno);
    }
    if (!file && fd >= 0) close(fd);
    if (why) *why = reason;
    return file;
}

bool sm_file_list_add(sm_file_list *list, const char *path)
{
    for (int32_t i = 0; i < list->count; i++)
        if (strcmp(list->paths[i], path) == 0) return true;
    if (list->count == list->capacity) {
        const int32_t capacity = list->capacity ? 2 * list->capacity : 8;
        char **grown = realloc(list->paths, sizeof *grown * (size_t)capacity);
        if (!grown) return false;
        list->paths = grown, list->capacity = capacity;
    }
    char *copy = strdup(path);
    if (!copy) return false;
    list->paths[list->count++] = copy;
    return true;
}

void sm_file_list_free(sm_file_list *list)
{
    for (int32_t i = 0; i < list->count; i++) free(list->paths[i]);
    free(list->paths);
    *list = (sm_file_list){0};
}
