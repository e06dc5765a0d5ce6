/* Whole files read into memory (files.c), with a size limit. */
#ifndef SM_FILES_H
#define SM_FILES_H

#include <stddef.h>

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

#endif
