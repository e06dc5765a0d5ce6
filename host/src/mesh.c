/* Triangle meshes read through assimp's C API, welded into shared vertices; open edges,
 * generalised winding numbers (Jacobson et al. 2013) and a particle lattice sampled inside. */
#include "mesh.h"
#include "math3.h"
#include "world.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Vertices closer than this fraction of the bounding box's diagonal become one.
#define SM_WELD_TOLERANCE 1e-6

/// The hash of an integer cell of the weld grid, masked to the table.
static uint32_t cell_bucket(int64_t x, int64_t y, int64_t z, uint32_t mask)
{
    uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
    h ^= h >> 29;
    return (uint32_t)h & mask;
}

/// The welding state: a hash grid of cells `tolerance` wide over the welded vertices.
typedef struct sm_welder {
    sm_vec3 origin;      ///< the bounding box's minimum corner
    double tolerance;    ///< m: weld distance and cell size
    uint32_t mask;       ///< buckets - 1 (a power of two)
    int32_t *head;       ///< per bucket: the last welded vertex put there, or -1
    int32_t *next;       ///< per welded vertex: the previous one in its bucket, or -1
    sm_vec3 *vertices;   ///< the welded vertices, in order of first appearance
    int32_t count;
} sm_welder;

static void cell_of(const sm_welder *w, sm_vec3 p, int64_t cell[3])
{
    cell[0] = (int64_t)floor((p.x - w->origin.x) / w->tolerance);
    cell[1] = (int64_t)floor((p.y - w->origin.y) / w->tolerance);
    cell[2] = (int64_t)floor((p.z - w->origin.z) / w->tolerance);
}

/// The welded vertex of position p: the lowest-numbered one within the tolerance (looked up in
/// the 27 cells around p's), else a new one.
static int32_t weld(sm_welder *w, sm_vec3 p)
{
    int64_t c[3];
    cell_of(w, p, c);
    int32_t best = -1;
    const double tolerance2 = w->tolerance * w->tolerance;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                for (int32_t v = w->head[cell_bucket(c[0] + dx, c[1] + dy, c[2] + dz, w->mask)]; v >= 0;
                     v = w->next[v]) {
                    sm_vec3 d = v3_sub(w->vertices[v], p);
                    if (v3_dot(d, d) <= tolerance2 && (best < 0 || v < best)) best = v;
                }
    if (best >= 0) return best;
    const int32_t id = w->count++;
    const uint32_t bucket = cell_bucket(c[0], c[1], c[2], w->mask);
    w->vertices[id] = p;
    w->next[id] = w->head[bucket];
    w->head[bucket] = id;
    return id;
}

/// Builds the welded mesh from the triangles of an imported scene.
static sm_result weld_scene(const char *path, const struct aiScene *scene, sm_mesh *out)
{
    // count the vertices and the triangles (points and lines are dropped)
    int64_t raw_count = 0, triangle_count = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        const struct aiMesh *mesh = scene->mMeshes[m];
        raw_count += mesh->mNumVertices;
        for (unsigned f = 0; f < mesh->mNumFaces; f++) triangle_count += mesh->mFaces[f].mNumIndices == 3;
    }
    if (triangle_count == 0) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": no triangles", path);
    if (raw_count > INT32_MAX || triangle_count > INT32_MAX / 3)
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": too large (%lld vertices, %lld triangles)", path,
                       (long long)raw_count, (long long)triangle_count);

    // the bounding box of the triangles' corners, which must be finite
    sm_vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        const struct aiMesh *mesh = scene->mMeshes[m];
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const struct aiFace *face = &mesh->mFaces[f];
            if (face->mNumIndices != 3) continue;
            for (int c = 0; c < 3; c++) {
                if (face->mIndices[c] >= mesh->mNumVertices)
                    return sm_fail(SM_ERROR_IO, "mesh file \"%s\": mesh %u, face %u: vertex index %u out of range",
                                   path, m, f, face->mIndices[c]);
                const struct aiVector3D a = mesh->mVertices[face->mIndices[c]];
                sm_vec3 p = v3(a.x, a.y, a.z);
                if (!v3_is_finite(p))
                    return sm_fail(SM_ERROR_IO, "mesh file \"%s\": mesh %u, vertex %u is not finite (%g, %g, %g)",
                                   path, m, face->mIndices[c], p.x, p.y, p.z);
                lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
                hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
            }
        }
    }
    const double diagonal = v3_length(v3_sub(hi, lo));
    if (!isfinite(diagonal)) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": coordinates out of range", path);
    if (diagonal == 0.0) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": no triangles (all vertices coincide)", path);

    uint32_t buckets = 1;
    while (buckets < 2 * (uint64_t)raw_count && buckets < (1u << 31)) buckets *= 2;
    sm_welder w = {.origin = lo, .tolerance = SM_WELD_TOLERANCE * diagonal, .mask = buckets - 1};
    w.head = malloc(sizeof(int32_t) * buckets);
    w.next = malloc(sizeof(int32_t) * (size_t)raw_count);
    w.vertices = malloc(sizeof(sm_vec3) * (size_t)raw_count);
    int32_t *welded_of_raw = malloc(sizeof(int32_t) * (size_t)raw_count);
    int32_t *triangles = malloc(sizeof(int32_t) * 3 * (size_t)triangle_count);
    int32_t *compact = malloc(sizeof(int32_t) * (size_t)raw_count);
    sm_vec3 *vertices = NULL;
    sm_result result = SM_OK;
    if (!w.head || !w.next || !w.vertices || !welded_of_raw || !triangles || !compact) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "mesh file \"%s\": out of memory welding %lld vertices", path,
                         (long long)raw_count);
        goto done;
    }
    for (uint32_t b = 0; b < buckets; b++) w.head[b] = -1;
    for (int64_t i = 0; i < raw_count; i++) welded_of_raw[i] = compact[i] = -1;

    // weld in order of first appearance; drop the triangles that collapse
    int32_t kept = 0;
    int64_t base = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        const struct aiMesh *mesh = scene->mMeshes[m];
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const struct aiFace *face = &mesh->mFaces[f];
            if (face->mNumIndices != 3) continue;
            int32_t t[3];
            for (int c = 0; c < 3; c++) {
                const int64_t raw = base + face->mIndices[c];
                if (welded_of_raw[raw] < 0) {
                    const struct aiVector3D a = mesh->mVertices[face->mIndices[c]];
                    welded_of_raw[raw] = weld(&w, v3(a.x, a.y, a.z));
                }
                t[c] = welded_of_raw[raw];
            }
            if (t[0] == t[1] || t[1] == t[2] || t[2] == t[0]) continue;
            memcpy(&triangles[3 * kept++], t, sizeof t);
        }
        base += mesh->mNumVertices;
    }
    if (kept == 0) {
        result = sm_fail(SM_ERROR_IO, "mesh file \"%s\": no triangles (all are degenerate)", path);
        goto done;
    }

    // renumber the vertices of the kept triangles by first appearance (drops those only used by
    // degenerate triangles)
    int32_t vertex_count = 0;
    for (int32_t i = 0; i < 3 * kept; i++) {
        if (compact[triangles[i]] < 0) compact[triangles[i]] = vertex_count++;
        triangles[i] = compact[triangles[i]];
    }
    vertices = malloc(sizeof(sm_vec3) * (size_t)vertex_count);
    if (!vertices) {
        result = sm_fail(SM_ERROR_OUT_OF_MEMORY, "mesh file \"%s\": out of memory for %d vertices", path, vertex_count);
        goto done;
    }
    for (int32_t v = 0; v < w.count; v++)
        if (compact[v] >= 0) vertices[compact[v]] = w.vertices[v];
    int32_t *shrunk = realloc(triangles, sizeof(int32_t) * 3 * (size_t)kept);
    if (shrunk) triangles = shrunk;
    *out = (sm_mesh){.vertices = vertices, .vertex_count = vertex_count, .triangles = triangles,
                     .triangle_count = kept};
    vertices = NULL;
    triangles = NULL;

done:
    free(w.head), free(w.next), free(w.vertices);
    free(welded_of_raw), free(triangles), free(compact), free(vertices);
    return result;
}

sm_result sm_mesh_load_file(const char *path, sm_mesh *out_mesh)
{
    if (!out_mesh) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_load_file: out_mesh is NULL");
    *out_mesh = (sm_mesh){0};
    if (!path) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_load_file: path is NULL");
    // opened here first so that a missing or unreadable file says why in plain words
    FILE *file = fopen(path, "rb");
    if (!file) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %s", path, strerror(errno));
    errno = 0;
    (void)fgetc(file);
    const int saved = errno;
    const bool failed = ferror(file);
    fclose(file);
    if (failed) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": cannot read: %s", path, strerror(saved));

    const unsigned flags = aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType |
                           aiProcess_PreTransformVertices;
    const struct aiScene *scene = aiImportFile(path, flags);
    if (!scene) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": assimp: %s", path, aiGetErrorString());
    sm_result result = weld_scene(path, scene, out_mesh);
    aiReleaseImport(scene);
    return result;
}

void sm_mesh_free(sm_mesh *mesh)
{
    if (!mesh) return;
    free(mesh->vertices);
    free(mesh->triangles);
    *mesh = (sm_mesh){0};
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int32_t sm_mesh_open_edges(const sm_mesh *mesh)
{
    if (!mesh || mesh->triangle_count <= 0) return 0;
    const size_t count = 3 * (size_t)mesh->triangle_count;
    uint64_t *keys = malloc(sizeof(uint64_t) * count);
    if (!keys) {
        sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory counting the open edges of %d triangles", mesh->triangle_count);
        return -1;
    }
    // each undirected edge as (smaller index, larger index), sorted so that equal edges are adjacent
    for (size_t i = 0; i < count; i++) {
        const size_t t = i / 3, c = i % 3;
        uint32_t a = (uint32_t)mesh->triangles[3 * t + c], b = (uint32_t)mesh->triangles[3 * t + (c + 1) % 3];
        keys[i] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    }
    qsort(keys, count, sizeof *keys, compare_u64);
    int32_t open = 0;
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j < count && keys[j] == keys[i]) j++;
        open += j - i != 2;
        i = j;
    }
    free(keys);
    return open;
}

double sm_mesh_winding_number(const sm_mesh *mesh, sm_vec3 p)
{
    if (!mesh) return 0.0;
    double sum = 0.0;
    for (int32_t t = 0; t < mesh->triangle_count; t++) {
        const int32_t *tri = &mesh->triangles[3 * t];
        const sm_vec3 a = v3_sub(mesh->vertices[tri[0]], p), b = v3_sub(mesh->vertices[tri[1]], p),
                      c = v3_sub(mesh->vertices[tri[2]], p);
        const double la = v3_length(a), lb = v3_length(b), lc = v3_length(c);
        // Van Oosterom & Strackee 1983: tan(Omega / 2) = a.(b x c) / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|)
        const double numerator = v3_dot(a, v3_cross(b, c));
        const double denominator = la * lb * lc + v3_dot(a, b) * lc + v3_dot(b, c) * la + v3_dot(c, a) * lb;
        sum += 2.0 * atan2(numerator, denominator);
    }
    return sum / 12.566370614359172953850573533118; // 4 pi
}

sm_result sm_mesh_sample_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates,
                                 sm_vec3 **out_points, int32_t *out_count)
{
    if (!out_points || !out_count) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_sample_lattice: NULL output");
    *out_points = NULL;
    *out_count = 0;
    if (!mesh || mesh->triangle_count <= 0 || mesh->vertex_count <= 0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a lattice needs a mesh with triangles");
    if (!(spacing > 0.0) || !isfinite(spacing))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the lattice spacing must be finite and > 0, got %g", spacing);
    sm_vec3 lo = mesh->vertices[0], hi = lo;
    for (int32_t v = 1; v < mesh->vertex_count; v++) {
        const sm_vec3 p = mesh->vertices[v];
        lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
    }
    // the integer ranges, sized in floating point first so that huge ratios cannot overflow
    double first[3] = {0}, last[3] = {0}, candidates = 1.0;
    for (int a = 0; a < 3; a++) {
        first[a] = ceil(v3_get(lo, a) / spacing - 1e-9);
        last[a] = floor(v3_get(hi, a) / spacing + 1e-9);
        candidates *= fmax(0.0, last[a] - first[a] + 1.0);
    }
    if (!(candidates <= (double)max_candidates))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "a lattice of spacing %g over the mesh's bounding box has %.0f points, over the limit of %d; "
                       "use a larger spacing", spacing, candidates, max_candidates);
    if (candidates == 0.0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no lattice point of spacing %g lies inside the mesh; "
                       "use a smaller spacing", spacing);
    const int64_t i0 = (int64_t)first[0], i1 = (int64_t)last[0], j0 = (int64_t)first[1], j1 = (int64_t)last[1],
                  k0 = (int64_t)first[2], k1 = (int64_t)last[2];
    sm_vec3 *points = malloc(sizeof(sm_vec3) * (size_t)candidates);
    if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for a lattice of %.0f points", candidates);
    int32_t count = 0;
    for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = j0; j <= j1; j++)
            for (int64_t i = i0; i <= i1; i++) {
                const sm_vec3 p = v3((double)i * spacing, (double)j * spacing, (double)k * spacing);
                if (sm_mesh_winding_number(mesh, p) > 0.5) points[count++] = p;
            }
    if (count == 0) {
        free(points);
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no lattice point of spacing %g lies inside the mesh "
                       "(is it closed and oriented outwards?); use a smaller spacing", spacing);
    }
    sm_vec3 *shrunk = realloc(points, sizeof(sm_vec3) * (size_t)count);
    *out_points = shrunk ? shrunk : points;
    *out_count = count;
    return SM_OK;
}
