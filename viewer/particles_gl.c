#include "particles_gl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void particles_palette(int32_t k, float rgb[3])
{
    const double hue = fmod(0.11 + 0.61803398875 * (double)k, 1.0) * 6.0, s = 0.65, v = 0.95;
    const double f = hue - floor(hue), p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    const double table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
    const int sector = (int)floor(hue) % 6;
    for (int c = 0; c < 3; c++) rgb[c] = (float)table[sector][c];
}

/// Display radius of an object's particles: its contact radius, else half its lattice spacing
/// (a lone particle gets 5 cm).
static double display_radius(const sm_object_info *info)
{
    if (info->particle_radius > 0.0) return info->particle_radius;
    return info->spacing > 0.0 ? 0.5 * info->spacing : 0.05;
}

static void upload(GLuint buffer, size_t bytes, const void *data, GLenum usage)
{
    // an empty buffer gets 16 bytes of storage and no data (DATA may hold fewer than 16 bytes)
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(bytes > 0 ? bytes : 16), bytes > 0 ? data : NULL, usage);
}

bool particles_build(view_particles *p, sm_world *world, bool interop, char *error, size_t error_size)
{
    const sm_counts counts = sm_world_get_counts(world);
    const int32_t n = counts.particles;
    if (!p->position) {
        GLuint buffers[4];
        glGenBuffers(4, buffers);
        p->position = buffers[0], p->goal = buffers[1], p->style = buffers[2], p->cluster = buffers[3];
    }
    free(p->radius), free(p->object);
    p->radius = calloc((size_t)(n > 0 ? n : 1), sizeof *p->radius);
    p->object = calloc((size_t)(n > 0 ? n : 1), sizeof *p->object);
    float *style = calloc((size_t)(n > 0 ? n : 1), 4 * sizeof *style);
    float *cluster = calloc((size_t)(n > 0 ? n : 1), 4 * sizeof *cluster);
    float *initial = calloc((size_t)(n > 0 ? n : 1), 4 * sizeof *initial);
    bool ok = p->radius && p->object && style && cluster && initial;
    if (!ok) snprintf(error, error_size, "out of memory for %d particles", n);
    if (ok && n > 0) {
        ok = sm_world_get_float4(world, SM_FIELD_POSITION, 0, n, initial) == SM_OK;
        if (!ok) snprintf(error, error_size, "%s", sm_last_error());
    }
    p->max_radius = 0.0;
    for (int32_t o = 0; ok && o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        const double r = display_radius(&info);
        p->max_radius = fmax(p->max_radius, r);
        float rgb[3];
        particles_palette(o, rgb);
        const int32_t *list = NULL, *end;
        int32_t count = 0;
        sm_world_get_object_particles(world, o, &list, &count);
        for (end = list + count; list < end; list++) {
            const int32_t i = *list;
            p->radius[i] = (float)r;
            p->object[i] = o;
            style[4 * i] = rgb[0], style[4 * i + 1] = rgb[1], style[4 * i + 2] = rgb[2], style[4 * i + 3] = (float)r;
        }
    }
    // colour by cluster: each particle takes the colour of the last cluster that holds it
    for (int32_t c = 0; ok && c < counts.clusters; c++) {
        const int32_t *members = NULL;
        int32_t count = 0;
        sm_world_get_cluster_members(world, c, &members, &count);
        float rgb[3];
        particles_palette(c * 7 + 3, rgb);
        for (int32_t k = 0; k < count; k++)
            for (int j = 0; j < 3; j++) cluster[4 * members[k] + j] = rgb[j];
    }
    if (ok && p->interop) {
        // OpenCL lets go of the old storage before it is reallocated
        ok = sm_world_share_gl_buffer(world, SM_FIELD_POSITION, 0) == SM_OK && sm_world_share_gl_buffer(world, SM_FIELD_GOAL, 0) == SM_OK;
        if (!ok) snprintf(error, error_size, "%s", sm_last_error());
    }
    if (ok) {
        const size_t bytes = 4 * sizeof(float) * (size_t)n;
        upload(p->position, bytes, initial, GL_STREAM_DRAW);
        upload(p->goal, bytes, initial, GL_STREAM_DRAW);
        upload(p->style, bytes, style, GL_STATIC_DRAW);
        upload(p->cluster, bytes, cluster, GL_STATIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        p->count = n;
        p->interop = interop;
        if (interop) {
            glFinish();
            ok = sm_world_share_gl_buffer(world, SM_FIELD_POSITION, p->position) == SM_OK &&
                 sm_world_share_gl_buffer(world, SM_FIELD_GOAL, p->goal) == SM_OK;
            if (!ok) snprintf(error, error_size, "sharing the particle buffers with OpenCL failed: %s", sm_last_error());
        }
    }
    free(style), free(cluster), free(initial);
    return ok;
}

bool particles_copy_through_host(GLuint buffer, sm_world *world, sm_particle_field field, int32_t n, char *error,
                                 size_t error_size)
{
    const GLsizeiptr bytes = (GLsizeiptr)(4 * sizeof(float) * (size_t)n);
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    float *mapped = glMapBufferRange(GL_ARRAY_BUFFER, 0, bytes, GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
    if (!mapped) {
        snprintf(error, error_size, "glMapBufferRange failed (GL error 0x%x)", glGetError());
        return false;
    }
    const sm_result result = sm_world_get_float4(world, field, 0, n, mapped);
    glUnmapBuffer(GL_ARRAY_BUFFER);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    if (result != SM_OK) snprintf(error, error_size, "%s", sm_last_error());
    return result == SM_OK;
}

bool particles_update(view_particles *p, sm_world *world, bool goals, char *error, size_t error_size)
{
    if (p->count == 0) return true;
    if (p->interop) {
        glFinish(); // GL is done with the buffers before OpenCL acquires them
        if (sm_world_copy_to_gl(world) != SM_OK) {
            snprintf(error, error_size, "%s", sm_last_error());
            return false;
        }
        return true;
    }
    return particles_copy_through_host(p->position, world, SM_FIELD_POSITION, p->count, error, error_size) &&
           (!goals || particles_copy_through_host(p->goal, world, SM_FIELD_GOAL, p->count, error, error_size));
}

void particles_free(view_particles *p)
{
    if (p->position) {
        GLuint buffers[4] = {p->position, p->goal, p->style, p->cluster};
        glDeleteBuffers(4, buffers);
    }
    free(p->radius), free(p->object);
    memset(p, 0, sizeof *p);
}
