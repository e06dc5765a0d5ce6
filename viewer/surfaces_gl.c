#include "surfaces_gl.h"

#include "particles_gl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void upload(GLuint buffer, size_t bytes, const void *data, GLenum usage)
{
    // through GL_ARRAY_BUFFER even for the element buffer: that binding is no VAO's state; an
    // empty buffer gets 16 bytes of storage and no data (DATA may hold fewer than 16 bytes)
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(bytes > 0 ? bytes : 16), bytes > 0 ? data : NULL, usage);
}

/// Stops the world copying into the surface buffers (before they are reallocated).
static bool unshare(sm_world *world)
{
    return sm_world_share_gl_buffer(world, SM_FIELD_SURFACE_POSITION, 0) == SM_OK &&
           sm_world_share_gl_buffer(world, SM_FIELD_SURFACE_NORMAL, 0) == SM_OK;
}

bool surfaces_build(view_surfaces *s, sm_world *world, bool interop, char *error, size_t error_size)
{
    const sm_counts counts = sm_world_get_counts(world);
    const int32_t nv = sm_world_get_surface_vertex_count(world);
    if (!s->position) {
        GLuint buffers[4];
        glGenBuffers(4, buffers);
        s->position = buffers[0], s->normal = buffers[1], s->colour = buffers[2], s->triangles = buffers[3];
    }
    int64_t nt = 0;
    for (int32_t o = 0; o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        nt += info.surface_triangle_count;
    }
    // the particles of the objects without a surface, as runs of consecutive indices (a piece of a
    // cut holds some of its object's particles, not a range)
    free(s->bare_runs);
    s->bare_runs = calloc(2 * (size_t)counts.particles + 2, sizeof *s->bare_runs);
    s->bare_run_count = 0;
    int32_t *owner = malloc(sizeof *owner * (size_t)(counts.particles > 0 ? counts.particles : 1));
    if (owner && s->bare_runs && sm_world_get_particle_objects(world, 0, counts.particles, owner) == SM_OK) {
        for (int32_t i = 0; i < counts.particles; i++) {
            sm_object_info info;
            if (sm_world_get_object(world, owner[i], &info) != SM_OK || info.surface_triangle_count > 0) continue;
            int32_t *last = s->bare_run_count > 0 ? s->bare_runs + 2 * (s->bare_run_count - 1) : NULL;
            if (last && last[0] + last[1] == i) last[1]++;
            else s->bare_runs[2 * s->bare_run_count++] = i, s->bare_runs[2 * s->bare_run_count - 1] = 1;
        }
    }
    free(owner);
    const size_t vertex_bytes = 4 * sizeof(float) * (size_t)nv;
    float *position = calloc((size_t)(nv > 0 ? nv : 1), 4 * sizeof(float));
    float *normal = calloc((size_t)(nv > 0 ? nv : 1), 4 * sizeof(float));
    float *colour = calloc((size_t)(nv > 0 ? nv : 1), 4 * sizeof(float));
    GLuint *indices = calloc((size_t)(nt > 0 ? 3 * nt : 1), sizeof *indices);
    bool ok = s->bare_runs && position && normal && colour && indices;
    if (!ok) snprintf(error, error_size, "out of memory for %d surface vertices and %lld triangles", nv, (long long)nt);
    if (ok && nv > 0) {
        ok = sm_world_get_float4(world, SM_FIELD_SURFACE_POSITION, 0, nv, position) == SM_OK &&
             sm_world_get_float4(world, SM_FIELD_SURFACE_NORMAL, 0, nv, normal) == SM_OK;
        if (!ok) snprintf(error, error_size, "%s", sm_last_error());
    }
    int64_t written = 0;
    for (int32_t o = 0; ok && o < counts.objects; o++) {
        sm_object_info info;
        sm_world_get_object(world, o, &info);
        if (info.surface_triangle_count == 0) continue;
        const int32_t *triangles = NULL;
        int32_t count = 0;
        if (sm_world_get_surface_triangles(world, o, &triangles, &count) != SM_OK) {
            snprintf(error, error_size, "%s", sm_last_error());
            ok = false;
            break;
        }
        for (int32_t k = 0; k < 3 * count && written < 3 * nt; k++) {
            const int32_t local = triangles[k];
            if (local < 0 || local >= info.surface_vertex_count) {
                snprintf(error, error_size, "object %d: surface triangle %d refers to vertex %d of %d", o, k / 3, local,
                         info.surface_vertex_count);
                ok = false;
                break;
            }
            indices[written++] = (GLuint)(info.first_surface_vertex + local);
        }
        float rgb[3];
        particles_palette(o, rgb);
        const int32_t end = info.first_surface_vertex + info.surface_vertex_count;
        for (int32_t i = info.first_surface_vertex; i < end && i < nv; i++)
            colour[4 * i] = rgb[0], colour[4 * i + 1] = rgb[1], colour[4 * i + 2] = rgb[2], colour[4 * i + 3] = 1.0f;
    }
    if (ok && s->interop) {
        // OpenCL lets go of the old storage before it is reallocated
        ok = unshare(world);
        if (!ok) snprintf(error, error_size, "%s", sm_last_error());
    }
    if (ok) {
        upload(s->position, vertex_bytes, position, GL_STREAM_DRAW);
        upload(s->normal, vertex_bytes, normal, GL_STREAM_DRAW);
        upload(s->colour, vertex_bytes, colour, GL_STATIC_DRAW);
        upload(s->triangles, sizeof(GLuint) * (size_t)written, indices, GL_STATIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        s->vertex_count = nv;
        s->triangle_count = (int32_t)(written / 3);
        s->interop = false;
        s->note[0] = '\0';
        if (interop && nv > 0) {
            glFinish();
            s->interop = sm_world_share_gl_buffer(world, SM_FIELD_SURFACE_POSITION, s->position) == SM_OK &&
                         sm_world_share_gl_buffer(world, SM_FIELD_SURFACE_NORMAL, s->normal) == SM_OK;
            if (!s->interop) {
                snprintf(s->note, sizeof s->note, "%s", sm_last_error());
                unshare(world); // the position may have been shared already; errors are moot here
            }
        }
    }
    free(position), free(normal), free(colour), free(indices);
    return ok;
}

bool surfaces_update(view_surfaces *s, sm_world *world, char *error, size_t error_size)
{
    if (s->vertex_count == 0 || s->interop) return true;
    const int32_t n = s->vertex_count;
    return particles_copy_through_host(s->position, world, SM_FIELD_SURFACE_POSITION, n, error, error_size) &&
           particles_copy_through_host(s->normal, world, SM_FIELD_SURFACE_NORMAL, n, error, error_size);
}

void surfaces_free(view_surfaces *s)
{
    if (s->position) {
        GLuint buffers[4] = {s->position, s->normal, s->colour, s->triangles};
        glDeleteBuffers(4, buffers);
    }
    free(s->bare_runs);
    memset(s, 0, sizeof *s);
}
