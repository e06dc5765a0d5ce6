#include "npy.h"

#include <errno.h>
#include <string.h>

/// The header has a fixed size so the frame count can be rewritten in place on close.
#define NPY_HEADER_BYTES 128

static int write_header(npy_writer *writer)
{
    const uint16_t probe = 1;
    const bool little = *(const uint8_t *)&probe == 1;
    const char *descr = writer->ints     ? (little ? "<i4" : ">i4")
                        : writer->single ? (little ? "<f4" : ">f4")
                                         : (little ? "<f8" : ">f8");
    char header[NPY_HEADER_BYTES];
    memset(header, ' ', sizeof header);
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    const uint16_t length = NPY_HEADER_BYTES - 10;
    header[8] = (char)(length & 0xff);
    header[9] = (char)(length >> 8);
    char dict[NPY_HEADER_BYTES];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld%s), }", descr,
                     (long long)writer->frames, (long long)writer->rows, writer->ints ? "" : ", 3");
    if (n < 0 || n > NPY_HEADER_BYTES - 11) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy(header + 10, dict, (size_t)n);
    header[NPY_HEADER_BYTES - 1] = '\n';
    if (fseek(writer->file, 0, SEEK_SET) != 0) return -1;
    return fwrite(header, 1, sizeof header, writer->file) == sizeof header ? 0 : -1;
}

/// Creates `path` with the header of an empty array of the writer's kind.
static int open_file(npy_writer *writer, const char *path, int64_t rows, bool single, bool ints)
{
    writer->frames = 0;
    writer->rows = rows;
    writer->single = single;
    writer->ints = ints;
    writer->file = fopen(path, "wb");
    if (!writer->file) return -1;
    if (write_header(writer) != 0) {
        fclose(writer->file);
        writer->file = NULL;
        return -1;
    }
    return 0;
}

int npy_write_frame(npy_writer *writer, const double *xyz)
{
    size_t count = (size_t)writer->rows * 3;
    if (writer->single) {
        // in blocks, so a frame of any size needs no allocation
        float block[3 * 1024];
        for (size_t done = 0; done < count;) {
            size_t n = count - done < sizeof block / sizeof block[0] ? count - done : sizeof block / sizeof block[0];
            for (size_t i = 0; i < n; i++) block[i] = (float)xyz[done + i];
            if (fwrite(block, sizeof(float), n, writer->file) != n) return -1;
            done += n;
        }
    } else if (fwrite(xyz, sizeof(double), count, writer->file) != count) {
        return -1;
    }
    writer->frames++;
    return 0;
}

int npy_open(npy_writer *writer, const char *path, int64_t rows, bool single)
{
    return open_file(writer, path, rows, single, false);
}

int npy_open_ints(npy_writer *writer, const char *path, int64_t rows) { return open_file(writer, path, rows, false, true); }

int npy_write_ints(npy_writer *writer, const int32_t *values)
{
    if (fwrite(values, sizeof(int32_t), (size_t)writer->rows, writer->file) != (size_t)writer->rows) return -1;
    writer->frames++;
    return 0;
}

int npy_close(npy_writer *writer)
{
    if (!writer->file) return 0;
    int status = write_header(writer);
    if (fclose(writer->file) != 0) status = -1;
    writer->file = NULL;
    return status;
}
