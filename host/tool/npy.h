/* A NumPy .npy writer for trajectories: a float32 or float64 array of shape (frames, rows, 3),
 * or an int32 array of shape (frames, rows) (which object each particle is in). */
#ifndef SM_NPY_H
#define SM_NPY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct npy_writer {
    FILE *file;
    int64_t frames;  ///< frames written so far
    int64_t rows;    ///< particles per frame
    bool single;     ///< float32 on disk (else float64)
    bool ints;       ///< int32, shape (frames, rows)
} npy_writer;

/// Creates `path` for frames of `rows` x 3 values, stored as float32 when `single`, else
/// float64. Returns 0, or -1 with errno set.
int npy_open(npy_writer *writer, const char *path, int64_t rows, bool single);
/// Appends one frame of rows x 3 values (converted to float32 when the file is single
/// precision). Returns 0, or -1 with errno set.
int npy_write_frame(npy_writer *writer, const double *xyz);
/// Creates `path` for frames of `rows` int32 values. Returns 0, or -1 with errno set.
int npy_open_ints(npy_writer *writer, const char *path, int64_t rows);
/// Appends one frame of rows int32 values. Returns 0, or -1 with errno set.
int npy_write_ints(npy_writer *writer, const int32_t *values);
/// Writes the final shape into the header and closes the file. Returns 0, or -1 with errno set.
int npy_close(npy_writer *writer);

#endif
