/* Whole files read into memory (files.c), with a size limit. */
#ifndef SM_FILES_H
#define SM_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum sm_read_status {
    SM_READ_OK,
    SM_READ_CANNOT_OPEN, ///< fopen failed; errno says why
    SM_READ_FAILED,      ///< a read failed (a directory, an I/O error)
    SM_READ_TOO_LARGE,   ///< the file is larger than the limit
    SM_READ_NO_MEMORY,
} sm_read_status;
/// Reads a whole file into *out (malloc'd, with a NUL appended; *out_size excludes it). Files
/// of `limit` bytes or more are refused.
sm_read_status sm_read_file(const char *path, size_t limit, char **out, size_t *out_size);

/// Opens `path` for reading if it is a regular file. A FIFO, a device or a directory is refused
/// without blocking (a FIFO with no writer would hold open() forever): it is opened with
/// O_NONBLOCK, checked with fstat() and only then made blocking. NULL on failure, *why (may be
/// NULL) saying why in a few words ("is a directory", "not a regular file", strerror()).
FILE *sm_open_regular(const char *path, const char **why);

/// The files something read, each once, in the order first opened (malloc'd copies).
typedef struct sm_file_list {
    char **paths;
    int32_t count, capacity;
} sm_file_list;
/// Adds `path` unless it is there already; false when out of memory.
bool sm_file_list_add(sm_file_list *list, const char *path);
void sm_file_list_free(sm_file_list *list);

#endif
