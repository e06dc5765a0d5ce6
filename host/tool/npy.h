/* A NumPy .npy writer for trajectories: a float64 array of shape (frames, rows, 3). */
#ifndef SM_NPY_H
#define SM_NPY_H

#include <stdint.h>
#include <stdio.h>

typedef struct npy_writer {
    FILE *file;
    int64_t frames;  ///< frames written so far
    int64_t rows;    ///< particles per frame
} npy_writer;

/// Creates `path` with room for frames of `rows` x 3 doubles. Returns 0, or -1 with errno set.
int npy_open(npy_writer *writer, const char *path, int64_t rows);
/// Appends one frame of rows x 3 doubles. Returns 0, or -1 with errno set.
int npy_write_frame(npy_writer *writer, const double *xyz);
/// Writes the final shape into the header and closes the file. Returns 0, or -1 with errno set.
int npy_close(npy_writer *writer);

#endif
