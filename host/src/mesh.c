/* Triangle meshes read through assimp's C API, welded into shared vertices; open edges,
 * generalised winding numbers (Jacobson et al. 2013) and a particle lattice sampled inside. */
#include "mesh.h"
#include "files.h"
#include "math3.h"
#include "world.h"

#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/importerdesc.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/// The post-processing steps, run only on a file whose scene passed assimp's validation and
/// check_scene(): they index vertex arrays with the faces' indices without checking them (a PLY
/// face naming vertex 99999 crashed JoinIdenticalVertices) and sort vertices by position (NaN
/// breaks the sort). They run in a second import of the file, after validation again, and not
/// through aiApplyPostProcessing() on the first: when a step fails there (PreTransformVertices
/// throws on a file whose meshes no node uses, AC/nosurfaces.ac), assimp 5.2 frees the scene
/// twice. The cost is reading the file twice (about 1.5 times the time of one import).
#define SM_MESH_STEPS                                                                                             \
    (aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType | aiProcess_PreTransformVertices)

/// The bytes read from the start of a file to find a PLY or OFF header.
#define SM_MESH_HEADER_BYTES 65536

/// "mesh 2 \"name\", " naming mesh m at the start of a message when the scene has several, else "".
static const char *mesh_label(const struct aiScene *scene, unsigned m, char *buffer, size_t size)
{
    buffer[0] = '\0';
    if (scene->mNumMeshes <= 1) return buffer;
    const struct aiMesh *mesh = scene->mMeshes[m];
    if (mesh && mesh->mName.length > 0 && mesh->mName.length < sizeof mesh->mName.data)
        snprintf(buffer, size, "mesh %u \"%s\", ", m, mesh->mName.data);
    else
        snprintf(buffer, size, "mesh %u, ", m);
    return buffer;
}

/// " (-7 as a signed integer)" for an index that a file most likely wrote negative, else "".
static const char *signed_note(unsigned index, char *buffer, size_t size)
{
    buffer[0] = '\0';
    if (index > INT32_MAX) snprintf(buffer, size, " (%lld as a signed integer)", (long long)index - 4294967296LL);
    return buffer;
}

/// Our own checks of the scene as the file's reader built it, once assimp's validation passed
/// it and before any post-processing step reads it: at least one mesh; in every mesh, vertices
/// and faces; in every face, at least one index, each below the mesh's vertex count, each vertex
/// finite; then every vertex finite (the faces' first, so that the message names the face: OBJ's
/// reader numbers vertices per face corner, not as the file does). assimp's validation checks the
/// meshes, faces and indices first (and much that we do not use: nodes, bones, materials; a file
/// that fails it fails with assimp's message, which names the face, not the mesh nor the index:
/// a scene that failed it is never read again, see sm_mesh_load_file_listed()); what we read is
/// checked again all the same, and validation does not check that coordinates are finite. Faces
/// and meshes are numbered from 0, as assimp stores them: for a PLY or OFF file, in the file's
/// order.
static sm_result check_scene(const char *path, const struct aiScene *scene)
{
    if (scene->mNumMeshes == 0 || !scene->mMeshes)
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": no meshes (no triangles)", path);
    char label[1100], note[64];
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        const struct aiMesh *mesh = scene->mMeshes[m];
        if (!mesh) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": mesh %u is missing", path, m);
        mesh_label(scene, m, label, sizeof label);
        if (mesh->mNumVertices == 0 || !mesh->mVertices)
            return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %sno vertices", path, label);
        if (mesh->mNumFaces == 0 || !mesh->mFaces)
            return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %sno faces", path, label);
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const struct aiFace *face = &mesh->mFaces[f];
            if (face->mNumIndices == 0 || !face->mIndices)
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %sface %u has no vertex indices", path, label, f);
            for (unsigned c = 0; c < face->mNumIndices; c++) {
                const unsigned v = face->mIndices[c];
                if (v >= mesh->mNumVertices)
                    return sm_fail(SM_ERROR_IO,
                                   "mesh file \"%s\": %sface %u: vertex index %u%s is out of range (the mesh has %u "
                                   "vertices, 0 to %u)", path, label, f, v, signed_note(v, note, sizeof note),
                                   mesh->mNumVertices, mesh->mNumVertices - 1);
                const struct aiVector3D a = mesh->mVertices[v];
                if (!isfinite(a.x) || !isfinite(a.y) || !isfinite(a.z))
                    return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %sface %u: vertex %u is not finite (%g, %g, %g)",
                                   path, label, f, v, (double)a.x, (double)a.y, (double)a.z);
            }
        }
        for (unsigned v = 0; v < mesh->mNumVertices; v++) {
            const struct aiVector3D a = mesh->mVertices[v];
            if (!isfinite(a.x) || !isfinite(a.y) || !isfinite(a.z))
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %svertex %u is not finite (%g, %g, %g)", path, label, v,
                               (double)a.x, (double)a.y, (double)a.z);
        }
    }
    return SM_OK;
}

/// Builds the welded mesh from the triangles of an imported, checked and post-processed scene.
/// Every index is checked again (the steps renumber meshes, faces and vertices; a step that
/// broke an index must not make us read out of bounds), and after triangulation a face has 1
/// (a point), 2 (a line: both are dropped) or 3 indices.
static sm_result weld_scene(const char *path, const struct aiScene *scene, sm_mesh *out)
{
    // count the vertices and the triangles (points and lines are dropped)
    int64_t raw_count = 0, triangle_count = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        const struct aiMesh *mesh = scene->mMeshes[m];
        if (!mesh || (mesh->mNumFaces > 0 && (!mesh->mFaces || !mesh->mVertices)))
            return sm_fail(SM_ERROR_IO, "mesh file \"%s\": after assimp's post-processing, mesh %u is incomplete",
                           path, m);
        raw_count += mesh->mNumVertices;
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const struct aiFace *face = &mesh->mFaces[f];
            if (face->mNumIndices == 0 || face->mNumIndices > 3 || !face->mIndices)
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": after triangulation, mesh %u, face %u has %u vertex "
                               "indices", path, m, f, face->mNumIndices);
            for (unsigned c = 0; c < face->mNumIndices; c++)
                if (face->mIndices[c] >= mesh->mNumVertices)
                    return sm_fail(SM_ERROR_IO, "mesh file \"%s\": after assimp's post-processing, mesh %u, face %u: "
                                   "vertex index %u out of range (%u vertices)", path, m, f, face->mIndices[c],
                                   mesh->mNumVertices);
            triangle_count += face->mNumIndices == 3;
        }
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

/// A cursor over the first bytes of a file.
typedef struct sm_text {
    const char *at, *end;
} sm_text;

/// What assimp's tokenizer takes for a blank and for the end of a line (IsSpace, IsLineEnd): its
/// PLY reader splits lines at any of the four.
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static bool is_line_end(char c) { return c == '\n' || c == '\r' || c == '\0' || c == '\f'; }

/// The next word of the current line, blanks skipped; its length (0 at the end of the line).
static size_t next_word(sm_text *t, const char **word)
{
    while (t->at < t->end && is_blank(*t->at)) t->at++;
    *word = t->at;
    while (t->at < t->end && !is_blank(*t->at) && !is_line_end(*t->at)) t->at++;
    return (size_t)(t->at - *word);
}

/// Moves to the start of the next line (past one line end, or "\r\n").
static void next_line(sm_text *t)
{
    while (t->at < t->end && !is_line_end(*t->at)) t->at++;
    if (t->end - t->at >= 2 && t->at[0] == '\r' && t->at[1] == '\n') t->at++;
    if (t->at < t->end) t->at++;
}

static bool word_is(const char *word, size_t length, const char *literal)
{
    return length == strlen(literal) && memcmp(word, literal, length) == 0;
}

/// The leading decimal digits at *at, as assimp's strtoul10 reads a count (0 without digits), and
/// moves past them. Saturates at 1e15 where strtoul10 wraps at 2^32: either way a count that
/// large is refused below.
static double read_count(const char **at, const char *end)
{
    double value = 0.0;
    for (; *at < end && **at >= '0' && **at <= '9'; (*at)++) value = fmin(value * 10.0 + (**at - '0'), 1e15);
    return value;
}

/// The bytes of a PLY scalar type in a binary file; 0 for a name assimp does not know (it skips
/// such a property).
static int ply_type_bytes(const char *word, size_t length)
{
    static const struct {
        const char *name;
        int bytes;
    } types[] = {{"char", 1},  {"int8", 1},   {"uchar", 1},   {"uint8", 1},   {"short", 2},  {"int16", 2},
                 {"ushort", 2}, {"uint16", 2}, {"int", 4},     {"int32", 4},   {"uint", 4},   {"uint32", 4},
                 {"float", 4},  {"float32", 4}, {"double", 8}, {"float64", 8}, {"double64", 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (word_is(word, length, types[i].name)) return types[i].bytes;
    return 0;
}

/// The extension of path after its last dot, or "" (the dot must follow the last slash).
static const char *extension_of(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

static bool same_letters(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) return false;
    return *a == *b;
}

/// Refuses a PLY file that assimp 5.2's PLY reader would not survive, or whose header declares
/// more elements than the bytes after it can hold. That reader takes a lot on trust (found by
/// fuzzing): it never returns from a header without "end_header" or with a NUL byte, crashes on
/// some files with NUL bytes before "ply", and allocates each element's arrays from the header's
/// count before it reads a byte of data (a 220-byte binary file declaring 400 million vertices
/// made it allocate 4.7 GB and run for 15 s; 4 billion faces end in std::bad_alloc or the OOM
/// killer). So a .ply file (the only files assimp's PLY reader gets: check_format()) must
/// start with "ply", have a format line (ascii, binary_little_endian or binary_big_endian), a number for each element's count, no NUL byte
/// in its header, and an "end_header" line; other lines are ignored, as assimp ignores them
/// (Blender 2.47 wrote a comment without "comment"). Lines end in "\n", "\r\n", "\r" or a form
/// feed, as assimp reads them. Then an element takes at least the bytes of its scalar
/// properties in a binary file (a list property: its count), and at least 2 bytes per property
/// in an ASCII file (a digit and a separator; the file's last value needs none).
static sm_result check_ply_header(const char *path, const char *head, size_t length, long long size)
{
    if (!same_letters(extension_of(path), "ply")) return SM_OK;
    if (length < 3 || (head[0] | 0x20) != 'p' || (head[1] | 0x20) != 'l' || (head[2] | 0x20) != 'y')
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": a PLY file must start with \"ply\"", path);
    sm_text t = {head, head + length};
    const char *word;
    size_t n;
    next_line(&t);

    // first pass: the format, the counts are numbers, no NUL byte, where the header ends
    enum { FORMAT_NONE, FORMAT_ASCII, FORMAT_BINARY } format = FORMAT_NONE;
    const char *body = NULL;
    for (sm_text s = t; !body;) {
        if (s.at >= s.end)
            return (long long)length < size
                       ? sm_fail(SM_ERROR_IO, "mesh file \"%s\": its PLY header does not end (no \"end_header\" "
                                 "line) within its first %zu bytes", path, length)
                       : sm_fail(SM_ERROR_IO, "mesh file \"%s\": its PLY header does not end (no \"end_header\" "
                                 "line)", path);
        const char *line = s.at;
        n = next_word(&s, &word);
        const bool end = word_is(word, n, "end_header");
        if (word_is(word, n, "format")) {
            n = next_word(&s, &word);
            format = word_is(word, n, "ascii") ? FORMAT_ASCII
                     : word_is(word, n, "binary_little_endian") || word_is(word, n, "binary_big_endian")
                         ? FORMAT_BINARY
                         : FORMAT_NONE;
            if (format == FORMAT_NONE)
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": PLY format \"%.*s\" is none of ascii, "
                               "binary_little_endian and binary_big_endian", path, (int)(n < 64 ? n : 64), word);
        } else if (word_is(word, n, "element")) {
            const char *count;
            bool number = next_word(&s, &word) > 0 && (n = next_word(&s, &count)) > 0;
            for (size_t i = 0; number && i < n; i++) number = count[i] >= '0' && count[i] <= '9';
            if (!number)
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": PLY header line \"%.*s\": an element needs a name "
                               "and a count", path, (int)(s.at - line < 64 ? s.at - line : 64), line);
        }
        while (s.at < s.end && !is_line_end(*s.at)) s.at++;
        if (s.at < s.end && *s.at == '\0')
            return sm_fail(SM_ERROR_IO, "mesh file \"%s\": its PLY header holds a NUL byte", path);
        next_line(&s);
        if (end) body = s.at;
    }
    if (format == FORMAT_NONE)
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": its PLY header has no format line", path);
    const double available = (double)(size - (long long)(body - head)) + (format == FORMAT_BINARY ? 0.0 : 1.0);

    // second pass: the least bytes of the elements, in order, against what follows the header
    double needed = 0.0, count = 0.0, bytes = 0.0;
    const char *name = NULL;
    size_t name_length = 0;
    for (sm_text s = t;; next_line(&s)) {
        n = s.at < body ? next_word(&s, &word) : 0;
        const bool element = word_is(word, n, "element"), end = s.at >= body;
        if ((element || end) && name) {
            needed += count * fmax(bytes, 1.0);
            if (needed > available)
                return sm_fail(SM_ERROR_IO, "mesh file \"%s\": its PLY header declares %.0f \"%.*s\" elements, more "
                               "than the %lld bytes after the header can hold (at least %.0f bytes): the file is "
                               "truncated or its header is wrong", path, count, (int)fmin(name_length, 64), name,
                               size - (long long)(body - head), needed);
            name = NULL;
        }
        if (end) break;
        if (element) {
            name_length = next_word(&s, &name);
            const char *digits;
            const size_t digit_count = next_word(&s, &digits);
            count = read_count(&digits, digits + digit_count);
            bytes = 0.0;
        } else if (word_is(word, n, "property") && name) {
            n = next_word(&s, &word);
            if (word_is(word, n, "list")) n = next_word(&s, &word); // the list's count comes first
            bytes += format == FORMAT_ASCII ? 2.0 : ply_type_bytes(word, n);
        }
    }
    return SM_OK;
}

/// Skips blanks, line ends and comment lines, as assimp's OFF reader does between its tokens.
static void off_next_token(const char **at, const char *end)
{
    for (;;) {
        while (*at < end && (is_blank(**at) || is_line_end(**at))) (*at)++;
        if (*at >= end || **at != '#') return;
        while (*at < end && !is_line_end(**at)) (*at)++;
    }
}

/// Refuses an OFF file whose header declares more vertices and faces than the file can hold.
/// assimp's OFF reader allocates both arrays from the header's counts before it reads them (a
/// 30-byte file declaring 4 billion of each ends in std::bad_alloc or the OOM killer); each
/// vertex and each face takes a line, at least 2 bytes. The header is read as assimp reads it:
/// an optional keyword [ST][C][N][4][n]OFF (with the dimension after "nOFF"), then the counts.
/// Only .off files get to assimp's OFF reader (check_format()).
static sm_result check_off_header(const char *path, const char *head, size_t length, long long size)
{
    if (!same_letters(extension_of(path), "off")) return SM_OK;
    const char *at = head, *end = head + length;
    off_next_token(&at, end);
    const char *keyword = at;
    if (end - at >= 2 && at[0] == 'S' && at[1] == 'T') at += 2;
    if (at < end && at[0] == 'C') at++;
    if (at < end && at[0] == 'N') at++;
    if (at < end && at[0] == '4') at++;
    const bool dimension = at < end && at[0] == 'n';
    if (dimension) at++;
    if (end - at >= 3 && at[0] == 'O' && at[1] == 'F' && at[2] == 'F') {
        at += 3;
        off_next_token(&at, end);
        if (dimension) {
            read_count(&at, end);
            off_next_token(&at, end);
        }
    } else {
        at = keyword;
    }
    const double vertices = read_count(&at, end);
    off_next_token(&at, end);
    const double faces = read_count(&at, end);
    if (2.0 * (vertices + faces) - 1.0 > (double)size)
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": its OFF header declares %.0f vertices and %.0f faces, more than "
                       "its %lld bytes can hold: the file is truncated or its header is wrong", path, vertices, faces,
                       size);
    return SM_OK;
}

/* ---- The formats read ----------------------------------------------------------------------------
 * assimp 5.2 has some 50 readers, and fuzzing crashed many of those we do not need (Half-Life
 * MDL, ASE, OpenGEX, 3MF, MD5, LWS, LWO, 3DS: segfaults, failed assertions that abort, gigabytes
 * allocated for a few bytes, loops without end). So a file is read only when its extension
 * (in any case) names one of the formats below, and assimp must hand it to that format's reader.
 * assimp picks a reader by the end of the path: when one reader claims the extension it reads the
 * file whatever it holds; when several do (glTF 1 and glTF 2 both claim .gltf and .glb), each is
 * asked whether the content is its own, and when none says yes, or no reader claims the extension
 * (or the path has none), every reader is asked: the first whose signature test passes reads it
 * (a .gltf holding a Half-Life model reached the MDL reader and crashed it). So:
 * - formats_claimed() checks, in the assimp linked, that the extension's readers are the expected
 *   ones (a later assimp adding a second reader for .obj would reopen that search: refused);
 * - a .gltf or .glb file must be one that the glTF 2 reader's own test accepts (check_gltf()). */

/// The extensions read (lower case), each with the name of the assimp reader it must go to and
/// how many readers may claim it (assimp 5.2: glTF 1 and glTF 2 claim .gltf and .glb).
static const struct {
    const char *extension, *reader;
    int readers;
} sm_mesh_formats[] = {{"obj", "Wavefront Object", 1}, {"ply", "Stanford Polygon Library", 1},
                       {"off", "OFF Importer", 1},     {"stl", "Stereolithography", 1},
                       {"dae", "Collada", 1},          {"gltf", "glTF", 2},
                       {"glb", "glTF", 2}};

/// Whether, in the assimp linked, 1 to `readers` readers claim `extension` (lower case), each
/// with `reader` in its name: so that the file goes to that reader (glTF: to one of the glTF
/// readers, and check_gltf() makes it the glTF 2 one), never to a search across all readers.
static bool formats_claimed(const char *extension, const char *reader, int readers)
{
    const size_t length = strlen(extension);
    int claimed = 0;
    for (size_t i = 0; i < aiGetImportFormatCount(); i++) {
        const struct aiImporterDesc *desc = aiGetImportFormatDescription(i);
        if (!desc || !desc->mFileExtensions) continue;
        for (const char *at = desc->mFileExtensions; *at;) { // space-separated, lower case
            while (*at == ' ') at++;
            const char *start = at;
            while (*at && *at != ' ') at++;
            // assimp compares the end of the path with "." + each extension: "mesh.xml" claims
            // "a.mesh.xml"; only an extension equal to ours, or ending in "." + ours, claims ours
            const size_t n = (size_t)(at - start);
            if (n >= length && strncmp(at - length, extension, length) == 0 &&
                (n == length || at[-(ptrdiff_t)length - 1] == '.')) {
                if (!desc->mName || !strstr(desc->mName, reader)) return false;
                claimed++;
                break;
            }
        }
    }
    return claimed >= 1 && claimed <= readers;
}

/// Refuses a file whose extension is none of sm_mesh_formats (or that has none), or whose
/// readers in the assimp linked are not the expected ones.
static sm_result check_format(const char *path)
{
    const char *extension = extension_of(path);
    char lower[8] = "";
    const size_t length = strlen(extension);
    for (size_t i = 0; i < length && length < sizeof lower; i++)
        lower[i] = (char)(extension[i] >= 'A' && extension[i] <= 'Z' ? extension[i] | 0x20 : extension[i]);
    if (length < sizeof lower) lower[length] = '\0';
    for (size_t f = 0; f < sizeof sm_mesh_formats / sizeof sm_mesh_formats[0]; f++) {
        if (length >= sizeof lower || strcmp(lower, sm_mesh_formats[f].extension) != 0) continue;
        if (formats_claimed(sm_mesh_formats[f].extension, sm_mesh_formats[f].reader, sm_mesh_formats[f].readers))
            return SM_OK;
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": the assimp linked does not read .%s files with its %s reader "
                       "alone, and no other reader is trusted", path, sm_mesh_formats[f].extension,
                       sm_mesh_formats[f].reader);
    }
    if (!*extension)
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": the file name has no extension (refused before assimp reads "
                       "it): the format is known by its extension, one of " SM_MESH_FORMATS, path);
    return sm_fail(SM_ERROR_IO, "mesh file \"%s\": the format \".%.*s\" is not read (refused before assimp reads "
                   "it): the mesh formats read are " SM_MESH_FORMATS, path, length > 32 ? 32 : (int)length, extension);
}

/* ---- glTF: the JSON that the glTF 2 reader accepts -----------------------------------------------
 * assimp's glTF 2 reader says a file is its own (Asset::CanRead) when rapidjson parses its JSON
 * (the whole .gltf file; a .glb file's JSON chunk, after a header of magic "glTF", version 2),
 * the root is an object, its first "asset" member is an object, and that object's first
 * "version" is a string starting with '2' and its first "profile", if any, an object. A file that
 * fails the test is offered to every reader. So a .gltf or .glb file is read only when it passes
 * a stricter test of our own: strict JSON (RFC 8259: UTF-8 checked, no NUL byte, numbers of at
 * most 64 characters, finite, exponents up to 300, nesting up to 64 deep, where rapidjson is
 * more lenient) and member names "asset", "version" and "profile" written without escapes. A
 * .glb file's chunks must also fit in the file (assimp allocates each chunk's declared length
 * before it reads a byte of it). */

/// The start of the message refusing a .gltf or .glb file (its path follows).
#define GLTF_REFUSED "mesh file \"%s\": not glTF 2 as assimp's glTF 2 reader takes it: "

/// JSON larger than this is refused (glTF keeps its data in buffers: its JSON is small).
#define SM_GLTF_JSON_MAX (256u << 20)
/// The deepest nesting of arrays and objects read (rapidjson's parser recurses).
#define SM_GLTF_JSON_DEPTH 64

typedef struct sm_json {
    const unsigned char *at, *end;
} sm_json;

static void json_blank(sm_json *j)
{
    while (j->at < j->end && (*j->at == ' ' || *j->at == '\t' || *j->at == '\n' || *j->at == '\r')) j->at++;
}

static int hex_digit(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/// The 4 hex digits after "\u" at j->at (moved past them), or -1.
static long json_hex4(sm_json *j)
{
    if (j->end - j->at < 4) return -1;
    long value = 0;
    for (int k = 0; k < 4; k++) {
        const int d = hex_digit(*j->at++);
        if (d < 0) return -1;
        value = value * 16 + d;
    }
    return value;
}

/// The length of the well-formed UTF-8 sequence (RFC 3629: shortest form, no surrogates, at most
/// U+10FFFF) at p, a byte >= 0x80; 0 if there is none.
static size_t utf8_length(const unsigned char *p, const unsigned char *end)
{
    const unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; // the second byte's range
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if (p[k] < 0x80 || p[k] > 0xbf) return 0;
    return n;
}

/// A string, from its opening quote at j->at; moves past it. *escaped (may be NULL): whether it
/// holds a backslash. False if malformed.
static bool json_string(sm_json *j, bool *escaped)
{
    if (escaped) *escaped = false;
    if (j->at >= j->end || *j->at != '"') return false;
    j->at++;
    while (j->at < j->end && *j->at != '"') {
        const unsigned char c = *j->at;
        if (c < 0x20) return false;
        if (c >= 0x80) {
            const size_t n = utf8_length(j->at, j->end);
            if (n == 0) return false;
            j->at += n;
            continue;
        }
        j->at++;
        if (c != '\\') continue;
        if (escaped) *escaped = true;
        if (j->at >= j->end) return false;
        const unsigned char e = *j->at++;
        if (e == 'u') {
            const long unit = json_hex4(j);
            if (unit < 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return false; // a lone low surrogate
            if (unit >= 0xd800 && unit <= 0xdbff) { // a high one: a low one must follow
                if (j->end - j->at < 2 || j->at[0] != '\\' || j->at[1] != 'u') return false;
                j->at += 2;
                const long low = json_hex4(j);
                if (low < 0xdc00 || low > 0xdfff) return false;
            }
        } else if (!(e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't')) {
            return false;
        }
    }
    if (j->at >= j->end) return false;
    j->at++;
    return true;
}

static bool json_digits(sm_json *j)
{
    const unsigned char *start = j->at;
    while (j->at < j->end && *j->at >= '0' && *j->at <= '9') j->at++;
    return j->at > start;
}

/// A number (RFC 8259's grammar), at most 64 characters, finite, its exponent at most 300.
static bool json_number(sm_json *j)
{
    const unsigned char *start = j->at;
    if (j->at < j->end && *j->at == '-') j->at++;
    if (j->at < j->end && *j->at == '0') j->at++;
    else if (j->at >= j->end || *j->at < '1' || *j->at > '9' || !json_digits(j)) return false;
    if (j->at < j->end && *j->at == '.') {
        j->at++;
        if (!json_digits(j)) return false;
    }
    if (j->at < j->end && (*j->at == 'e' || *j->at == 'E')) {
        j->at++;
        if (j->at < j->end && (*j->at == '+' || *j->at == '-')) j->at++;
        const unsigned char *exponent = j->at;
        if (!json_digits(j) || j->at - exponent > 3) return false;
        long value = 0;
        for (const unsigned char *d = exponent; d < j->at; d++) value = value * 10 + (*d - '0');
        if (value > 300) return false;
    }
    const size_t length = (size_t)(j->at - start);
    if (length > 64) return false;
    char text[65];
    memcpy(text, start, length);
    text[length] = '\0';
    return isfinite(strtod(text, NULL));
}

static bool json_value(sm_json *j, int depth);

/// An object or an array, from its opening bracket at j->at.
static bool json_container(sm_json *j, int depth)
{
    if (depth >= SM_GLTF_JSON_DEPTH) return false;
    const unsigned char close = *j->at == '{' ? '}' : ']';
    j->at++;
    json_blank(j);
    if (j->at < j->end && *j->at == close) {
        j->at++;
        return true;
    }
    for (;;) {
        if (close == '}') {
            if (!json_string(j, NULL)) return false;
            json_blank(j);
            if (j->at >= j->end || *j->at++ != ':') return false;
        }
        if (!json_value(j, depth + 1)) return false;
        if (j->at >= j->end) return false;
        const unsigned char c = *j->at++;
        if (c == close) return true;
        if (c != ',') return false;
        json_blank(j);
    }
}

/// A value, blanks before and after it skipped.
static bool json_value(sm_json *j, int depth)
{
    json_blank(j);
    if (j->at >= j->end) return false;
    bool ok;
    const size_t left = (size_t)(j->end - j->at);
    switch (*j->at) {
    case '{':
    case '[': ok = json_container(j, depth); break;
    case '"': ok = json_string(j, NULL); break;
    case 't': ok = left >= 4 && memcmp(j->at, "true", 4) == 0, j->at += ok ? 4 : 0; break;
    case 'f': ok = left >= 5 && memcmp(j->at, "false", 5) == 0, j->at += ok ? 5 : 0; break;
    case 'n': ok = left >= 4 && memcmp(j->at, "null", 4) == 0, j->at += ok ? 4 : 0; break;
    default: ok = json_number(j); break;
    }
    json_blank(j);
    return ok;
}

/// In the (well-formed) object at j.at: the value of its first member named `name`, in *value
/// (NULL if none). False when a member before it has an escaped name (it might be `name`).
static bool json_member(sm_json j, const char *name, const unsigned char **value)
{
    *value = NULL;
    const size_t length = strlen(name);
    j.at++; // '{'
    json_blank(&j);
    while (j.at < j.end && *j.at == '"') {
        const unsigned char *key = j.at + 1;
        bool escaped;
        json_string(&j, &escaped);
        if (escaped) return false;
        const bool match = (size_t)(j.at - 1 - key) == length && memcmp(key, name, length) == 0;
        json_blank(&j);
        j.at++; // ':'
        json_blank(&j);
        if (match) {
            *value = j.at;
            return true;
        }
        json_value(&j, 0);
        if (j.at < j.end && *j.at == ',') j.at++;
        json_blank(&j);
    }
    return true;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/// Reads `length` bytes at `offset` of an open file into *out (malloc'd).
static sm_result read_at(const char *path, FILE *file, long long offset, size_t length, unsigned char **out)
{
    *out = malloc(length ? length : 1);
    if (!*out) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "mesh file \"%s\": out of memory reading %zu bytes", path, length);
    errno = 0;
    if (fseek(file, (long)offset, SEEK_SET) != 0 || fread(*out, 1, length, file) != length) {
        const int saved = errno;
        free(*out);
        *out = NULL;
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": cannot read: %s", path, saved ? strerror(saved) : "it is shorter "
                       "than its size");
    }
    return SM_OK;
}

/// The JSON of a glTF file: strict JSON, an object whose "asset" is an object whose "version"
/// starts with '2' and whose "profile", if any, is an object (see above).
static sm_result check_gltf_json(const char *path, const unsigned char *json, size_t length)
{
    sm_json j = {json, json + length};
    json_blank(&j);
    const unsigned char *root = j.at;
    if (j.at >= j.end || *j.at != '{')
        return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON is not an object", path);
    if (!json_value(&j, 0) || j.at != j.end)
        return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON is malformed, or nested more than %d deep, near byte "
                       "%zu of the JSON", path, SM_GLTF_JSON_DEPTH, (size_t)(j.at - json));
    const unsigned char *asset, *version = NULL, *profile = NULL;
    if (!json_member((sm_json){root, j.end}, "asset", &asset) ||
        (asset && *asset == '{' &&
         (!json_member((sm_json){asset, j.end}, "version", &version) ||
          !json_member((sm_json){asset, j.end}, "profile", &profile))))
        return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON writes with escapes a member name where \"asset\", "
                       "\"version\" or \"profile\" is looked for", path);
    if (!asset || *asset != '{' || !version || version[0] != '"' || version[1] != '2' || (profile && *profile != '{'))
        return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON has no \"asset\" object whose \"version\" is \"2.x\" "
                       "(glTF 1 is not read)", path);
    return SM_OK;
}

/// Refuses a .gltf or .glb file that assimp's glTF 2 reader would not take for its own (which
/// would make assimp offer it to every reader), and a .glb file whose chunks do not fit in it.
static sm_result check_gltf(const char *path, FILE *file, const char *head, size_t length, long long size)
{
    long long offset = 0, json_length = size;
    if (same_letters(extension_of(path), "glb")) {
        // a 12-byte header (magic, version, length), then chunks: length, type, data padded to 4 bytes
        const unsigned char *h = (const unsigned char *)head;
        if (length < 20 || memcmp(h, "glTF", 4) != 0)
            return sm_fail(SM_ERROR_IO, GLTF_REFUSED "no binary glTF header (\"glTF\", version, length, JSON chunk)", path);
        if (le32(h + 4) != 2)
            return sm_fail(SM_ERROR_IO, GLTF_REFUSED "binary glTF version %u (only version 2 is read)", path,
                           le32(h + 4));
        if (le32(h + 16) != 0x4E4F534Au) // "JSON"
            return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its first chunk is not its JSON", path);
        offset = 20;
        json_length = le32(h + 12);
        if (json_length > size - 20)
            return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON chunk declares %lld bytes, more than "
                           "the %lld after its header: the file is truncated or its header is wrong", path, json_length,
                           size - 20);
        if (json_length <= SM_GLTF_JSON_MAX) {
            // assimp reads a BIN chunk's header when the file's declared length reaches past it
            const long long bin = 20 + ((json_length + 3) & ~3LL), body = bin + 8;
            if ((long long)le32(h + 8) >= body) {
                unsigned char *chunk = NULL;
                if (bin + 8 > size)
                    return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its header declares a BIN chunk past the end of "
                                   "the file", path);
                sm_result result = read_at(path, file, bin, 8, &chunk);
                if (result != SM_OK) return result;
                const uint32_t bin_length = le32(chunk), type = le32(chunk + 4);
                free(chunk);
                if (type != 0x004E4942u) // "BIN\0"
                    return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its second chunk is not BIN", path);
                if ((long long)bin_length > size - body)
                    return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its BIN chunk declares %u bytes, more "
                                   "than the %lld after its header: the file is truncated or its header is wrong", path,
                                   bin_length, size - body);
            }
        }
    }
    if (json_length > SM_GLTF_JSON_MAX)
        return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON is %lld bytes, over the limit of %u", path,
                       json_length, SM_GLTF_JSON_MAX);
    if (json_length < 2) return sm_fail(SM_ERROR_IO, GLTF_REFUSED "its JSON is empty", path);
    unsigned char *json;
    sm_result result = read_at(path, file, offset, (size_t)json_length, &json);
    if (result != SM_OK) return result;
    result = check_gltf_json(path, json, (size_t)json_length);
    free(json);
    return result;
}

/* ---- The files assimp reads ---------------------------------------------------------------------
 * Every file assimp opens, the mesh file and those it names (an OBJ's materials, a glTF's
 * buffers), goes through sm_open_regular(): a FIFO, a device or a directory is refused instead
 * of blocking or reading forever, nothing is opened for writing, and each file opened is listed
 * (the command and the viewer keep their outputs off them). */

static size_t io_read(struct aiFile *f, char *buffer, size_t size, size_t count)
{
    return fread(buffer, size, count, (FILE *)f->UserData);
}

static size_t io_write(struct aiFile *f, const char *buffer, size_t size, size_t count)
{
    (void)f, (void)buffer, (void)size, (void)count;
    return 0;
}

static size_t io_tell(struct aiFile *f)
{
    const long at = ftell((FILE *)f->UserData);
    return at < 0 ? 0 : (size_t)at;
}

static size_t io_size(struct aiFile *f)
{
    struct stat info;
    return fstat(fileno((FILE *)f->UserData), &info) == 0 ? (size_t)info.st_size : 0;
}

static enum aiReturn io_seek(struct aiFile *f, size_t offset, enum aiOrigin origin)
{
    const int whence = origin == aiOrigin_SET ? SEEK_SET : origin == aiOrigin_CUR ? SEEK_CUR : SEEK_END;
    // (an offset back from the current position or the end comes as a wrapped size_t)
    return fseek((FILE *)f->UserData, (long)offset, whence) == 0 ? aiReturn_SUCCESS : aiReturn_FAILURE;
}

static void io_flush(struct aiFile *f) { (void)f; }

static struct aiFile *io_open(struct aiFileIO *io, const char *path, const char *mode)
{
    if (!path || !mode || strpbrk(mode, "wa+")) return NULL;
    FILE *file = sm_open_regular(path, NULL);
    if (!file) return NULL;
    struct aiFile *f = malloc(sizeof *f);
    sm_file_list *read = (sm_file_list *)(void *)io->UserData;
    if (!f || (read && !sm_file_list_add(read, path))) {
        free(f);
        fclose(file);
        return NULL;
    }
    *f = (struct aiFile){io_read, io_write, io_tell, io_size, io_seek, io_flush, (aiUserData)(void *)file};
    return f;
}

static void io_close(struct aiFileIO *io, struct aiFile *f)
{
    (void)io;
    if (!f) return;
    fclose((FILE *)f->UserData);
    free(f);
}

/// Reads a mesh file in four checked stages, so that no malformed file crashes assimp or makes
/// us read out of bounds: (1) the file itself: a regular, non-empty file of a format read (by its
/// extension, check_format()), whose PLY or OFF header's counts fit in its size (before assimp
/// allocates from them), and a glTF file that only the glTF 2 reader will read (check_gltf());
/// (2) assimp's reader with only its validation (aiProcess_ValidateDataStructure: every index of
/// every face, node, bone and material) and no other step, then check_scene(), our own checks
/// of the raw scene; (3) the file read again, validated again, then post-processed
/// (SM_MESH_STEPS); (4) weld_scene(), which checks every index again. Every file assimp opens is
/// a regular file (io_open()). assimp never reads a scene without validating it: even with no
/// step asked, its scene preprocessor walks the scene on import, and a scene that failed
/// validation crashed it (an OFF file of 25 bytes, found by fuzzing): a file that fails
/// validation fails with assimp's message.
sm_result sm_mesh_load_file_listed(const char *path, sm_mesh *out_mesh, sm_file_list *read)
{
    if (!out_mesh) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_load_file: out_mesh is NULL");
    *out_mesh = (sm_mesh){0};
    if (!path) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_load_file: path is NULL");
    // opened here first so that a missing or unreadable file says why in plain words; a
    // directory, a FIFO or a device (/dev/zero never ends) is refused before assimp reads it
    const char *why = NULL;
    FILE *file = sm_open_regular(path, &why);
    if (!file) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": %s", path, why ? why : "cannot be opened");
    sm_result result = check_format(path);
    if (result != SM_OK) {
        fclose(file);
        return result;
    }
    struct stat info;
    if (fstat(fileno(file), &info) != 0) {
        const int saved = errno;
        fclose(file);
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": cannot read: %s", path, strerror(saved));
    }
    const long long size = (long long)info.st_size;
    if (size == 0) {
        fclose(file);
        return sm_fail(SM_ERROR_IO, "mesh file \"%s\": the file is empty", path);
    }
    char *head = malloc(SM_MESH_HEADER_BYTES);
    if (!head) {
        fclose(file);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "mesh file \"%s\": out of memory", path);
    }
    errno = 0;
    const size_t length = fread(head, 1, SM_MESH_HEADER_BYTES, file);
    const int saved = errno;
    result = ferror(file) ? sm_fail(SM_ERROR_IO, "mesh file \"%s\": cannot read: %s", path, strerror(saved))
                          : check_ply_header(path, head, length, size);
    if (result == SM_OK) result = check_off_header(path, head, length, size);
    const char *extension = extension_of(path);
    if (result == SM_OK && (same_letters(extension, "gltf") || same_letters(extension, "glb")))
        result = check_gltf(path, file, head, length, size);
    fclose(file);
    free(head);
    if (result != SM_OK) return result;

    struct aiFileIO io = {io_open, io_close, (aiUserData)(void *)read};
    const struct aiScene *scene = aiImportFileEx(path, aiProcess_ValidateDataStructure, &io);
    if (!scene) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": assimp: %s", path, aiGetErrorString());
    result = check_scene(path, scene);
    aiReleaseImport(scene);
    if (result != SM_OK) return result;

    // validation runs first on import, before every step
    scene = aiImportFileEx(path, aiProcess_ValidateDataStructure | SM_MESH_STEPS, &io);
    if (!scene) return sm_fail(SM_ERROR_IO, "mesh file \"%s\": assimp: %s", path, aiGetErrorString());
    result = weld_scene(path, scene, out_mesh);
    aiReleaseImport(scene);
    return result;
}

sm_result sm_mesh_load_file(const char *path, sm_mesh *out_mesh) { return sm_mesh_load_file_listed(path, out_mesh, NULL); }

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
    // each undirected edge of a triangle with an area as (smaller index, larger index), sorted so
    // that equal edges are adjacent; a triangle of no area (a sliver on a line, or repeated
    // corners) bounds nothing, and its edges do not open a closed mesh
    size_t used = 0;
    for (int32_t t = 0; t < mesh->triangle_count; t++) {
        const int32_t *tri = &mesh->triangles[3 * (size_t)t];
        bool valid = mesh->vertices != NULL;
        for (int c = 0; c < 3; c++) valid = valid && tri[c] >= 0 && tri[c] < mesh->vertex_count;
        if (valid) { // (a triangle naming no vertex of the mesh keeps its edges)
            const sm_vec3 p = mesh->vertices[tri[0]], e1 = v3_sub(mesh->vertices[tri[1]], p),
                          e2 = v3_sub(mesh->vertices[tri[2]], p);
            if (!(v3_length(v3_cross(e1, e2)) > 1e-12 * v3_length(e1) * v3_length(e2))) continue;
        }
        for (int c = 0; c < 3; c++) {
            const uint32_t a = (uint32_t)tri[c], b = (uint32_t)tri[(c + 1) % 3];
            keys[used++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
        }
    }
    qsort(keys, used, sizeof *keys, compare_u64);
    int32_t open = 0;
    for (size_t i = 0; i < used;) {
        size_t j = i;
        while (j < used && keys[j] == keys[i]) j++;
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

/// The integer lattice ranges of spacing `spacing` over the mesh's bounding box, and how many
/// points they hold (in floating point, so that huge ratios cannot overflow).
static double lattice_range(const sm_mesh *mesh, double spacing, double first[3], double last[3])
{
    sm_vec3 lo = mesh->vertices[0], hi = lo;
    for (int32_t v = 1; v < mesh->vertex_count; v++) {
        const sm_vec3 p = mesh->vertices[v];
        lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
    }
    double candidates = 1.0;
    for (int a = 0; a < 3; a++) {
        first[a] = ceil(v3_get(lo, a) / spacing - 1e-9);
        last[a] = floor(v3_get(hi, a) / spacing + 1e-9);
        candidates *= fmax(0.0, last[a] - first[a] + 1.0);
    }
    return candidates;
}

sm_result sm_mesh_check_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates)
{
    if (!mesh || mesh->triangle_count <= 0 || mesh->vertex_count <= 0 || !mesh->vertices || !mesh->triangles)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "a lattice needs a mesh with triangles");
    if (!(spacing > 0.0) || !isfinite(spacing))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "the lattice spacing must be finite and > 0, got %g", spacing);
    double first[3], last[3];
    const double candidates = lattice_range(mesh, spacing, first, last);
    if (!(candidates <= (double)max_candidates))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "a lattice of spacing %g over the mesh's bounding box has %.0f points, over the limit of %d; "
                       "use a larger spacing", spacing, candidates, max_candidates);
    if (candidates == 0.0)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "no lattice point of spacing %g lies inside the mesh; "
                       "use a smaller spacing", spacing);
    const double work = candidates * (double)mesh->triangle_count;
    if (!(work <= SM_MESH_LATTICE_MAX_WORK))
        return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                       "a lattice of spacing %g over the mesh's bounding box has %.0f points, and each is tested "
                       "against the mesh's %d triangles: %.3g tests, over the limit of %.3g (about half a minute); use "
                       "a larger spacing or a mesh of fewer triangles", spacing, candidates, mesh->triangle_count, work,
                       SM_MESH_LATTICE_MAX_WORK);
    return SM_OK;
}

sm_result sm_mesh_sample_lattice(const sm_mesh *mesh, double spacing, int32_t max_candidates, int32_t max_points,
                                 sm_vec3 **out_points, int32_t *out_count)
{
    if (!out_points || !out_count) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_mesh_sample_lattice: NULL output");
    *out_points = NULL;
    *out_count = 0;
    sm_result result = sm_mesh_check_lattice(mesh, spacing, max_candidates);
    if (result != SM_OK) return result;
    double first[3], last[3];
    const double candidates = lattice_range(mesh, spacing, first, last);
    const int64_t i0 = (int64_t)first[0], i1 = (int64_t)last[0], j0 = (int64_t)first[1], j1 = (int64_t)last[1],
                  k0 = (int64_t)first[2], k1 = (int64_t)last[2];
    // grown as points are found: a lattice holds far fewer points than its bounding box at times
    size_t capacity = candidates < 4096.0 ? (size_t)candidates : 4096;
    sm_vec3 *points = malloc(sizeof(sm_vec3) * capacity);
    if (!points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for a lattice of %zu points", capacity);
    int32_t count = 0;
    for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = j0; j <= j1; j++)
            for (int64_t i = i0; i <= i1; i++) {
                const sm_vec3 p = v3((double)i * spacing, (double)j * spacing, (double)k * spacing);
                if (!(sm_mesh_winding_number(mesh, p) > 0.5)) continue;
                if (count >= max_points) {
                    free(points);
                    return sm_fail(SM_ERROR_INVALID_ARGUMENT,
                                   "a lattice of spacing %g inside the mesh has over %d points; use a larger spacing",
                                   spacing, max_points);
                }
                if ((size_t)count == capacity) {
                    const size_t grown_capacity = 2 * capacity < (size_t)candidates ? 2 * capacity : (size_t)candidates;
                    sm_vec3 *grown = realloc(points, sizeof(sm_vec3) * grown_capacity);
                    if (!grown) {
                        free(points);
                        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory for a lattice of %zu points",
                                       grown_capacity);
                    }
                    points = grown, capacity = grown_capacity;
                }
                points[count++] = p;
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
