/* Mesh import through assimp: every format of the assimp test models loads, triangulated and
 * welded; open edges, winding numbers and the lattice sampled inside a mesh are exact on a cube
 * written here and agree with the divergence theorem's volume on closed models; bad input
 * fails with a message naming the file. */
#include "support.h"

#include "mesh.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <stdlib.h>

#define MODELS SM_ASSIMP_MODELS "/"

static bool contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static double dot(sm_vec3 a, sm_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static sm_vec3 cross(sm_vec3 a, sm_vec3 b)
{
    return (sm_vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

/// The mesh's signed volume by the divergence theorem: sum over triangles of a.(b x c) / 6.
static double signed_volume(const sm_mesh *mesh)
{
    double volume = 0.0;
    for (int32_t t = 0; t < mesh->triangle_count; t++) {
        const int32_t *v = &mesh->triangles[3 * t];
        volume += dot(mesh->vertices[v[0]], cross(mesh->vertices[v[1]], mesh->vertices[v[2]])) / 6.0;
    }
    return volume;
}

static bool all_finite(const sm_mesh *mesh)
{
    for (int32_t v = 0; v < mesh->vertex_count; v++)
        if (!isfinite(mesh->vertices[v].x) || !isfinite(mesh->vertices[v].y) || !isfinite(mesh->vertices[v].z))
            return false;
    return true;
}

/// Every triangle index is a vertex, no triangle repeats a vertex, every vertex is used.
static bool well_formed(const sm_mesh *mesh)
{
    bool ok = mesh->vertex_count > 0 && mesh->triangle_count > 0;
    char *used = calloc((size_t)mesh->vertex_count + 1, 1);
    for (int32_t t = 0; ok && t < mesh->triangle_count; t++) {
        const int32_t *v = &mesh->triangles[3 * t];
        for (int c = 0; c < 3; c++) ok = ok && v[c] >= 0 && v[c] < mesh->vertex_count;
        ok = ok && v[0] != v[1] && v[1] != v[2] && v[2] != v[0];
        for (int c = 0; ok && c < 3; c++) used[v[c]] = 1;
    }
    for (int32_t v = 0; ok && v < mesh->vertex_count; v++) ok = used[v];
    free(used);
    return ok;
}

static void bounds(const sm_mesh *mesh, sm_vec3 *lo, sm_vec3 *hi)
{
    *lo = *hi = mesh->vertices[0];
    for (int32_t v = 1; v < mesh->vertex_count; v++) {
        const sm_vec3 p = mesh->vertices[v];
        *lo = (sm_vec3){fmin(lo->x, p.x), fmin(lo->y, p.y), fmin(lo->z, p.z)};
        *hi = (sm_vec3){fmax(hi->x, p.x), fmax(hi->y, p.y), fmax(hi->z, p.z)};
    }
}

/// Writes an ASCII PLY cube of side 2 * half centred on the origin, split per face the way
/// exporters write flat-shaded meshes: 24 vertices with face normals, 12 triangles counter-
/// clockwise seen from outside (clockwise when `flip`), without triangle `skip` (-1: none).
/// Copy c of a corner is moved by jitter * (c % 3 - 1) along x.
static void write_cube(const char *path, double half, bool flip, int skip, double jitter)
{
    FILE *file = fopen(path, "w");
    ENSURE(file != NULL);
    if (!file) return;
    fprintf(file, "ply\nformat ascii 1.0\nelement vertex 24\nproperty float x\nproperty float y\nproperty float z\n"
                  "property float nx\nproperty float ny\nproperty float nz\nelement face %d\n"
                  "property list uchar int vertex_indices\nend_header\n", skip >= 0 ? 11 : 12);
    static const double corner_u[4] = {-1, 1, 1, -1}, corner_v[4] = {-1, -1, 1, 1};
    int copy = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int sign = -1; sign <= 1; sign += 2)
            for (int c = 0; c < 4; c++) {
                // u x v = the face's axis: corners in this order turn counter-clockwise about +axis
                const int corner = sign > 0 ? c : 3 - c;
                double p[3], n[3] = {0, 0, 0};
                p[axis] = sign * half;
                p[(axis + 1) % 3] = corner_u[corner] * half;
                p[(axis + 2) % 3] = corner_v[corner] * half;
                n[axis] = sign;
                p[0] += jitter * (copy++ % 3 - 1);
                fprintf(file, "%.9g %.9g %.9g %g %g %g\n", p[0], p[1], p[2], n[0], n[1], n[2]);
            }
    for (int t = 0; t < 12; t++) {
        if (t == skip) continue;
        const int f = 4 * (t / 2), a = f, b = f + (t % 2 ? 2 : 1), c = f + (t % 2 ? 3 : 2);
        fprintf(file, "3 %d %d %d\n", a, flip ? c : b, flip ? b : c);
    }
    fclose(file);
}

static const char *tmp_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", SM_TEST_TMP, name);
    return path;
}

/// Every file format's models load triangulated, finite and well formed.
static void models_of_each_format_load(void)
{
    static const char *const files[] = {
        "Collada/duck.dae", "STL/Wuson.stl", "OBJ/WusonOBJ.obj", "OBJ/spider.obj", "PLY/Wuson.ply",
        "OFF/Wuson.off", "glTF2/BoxTextured-glTF/BoxTextured.gltf", "Collada/sphere.dae",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, MODELS "%s", files[i]);
        sm_mesh mesh;
        ENSURE_OK(sm_mesh_load_file(path, &mesh));
        ENSURE(mesh.triangle_count > 0 && all_finite(&mesh) && well_formed(&mesh));
        sm_mesh_free(&mesh);
        ENSURE(mesh.vertices == NULL && mesh.triangles == NULL && mesh.vertex_count == 0 && mesh.triangle_count == 0);
    }
    sm_mesh_free(NULL);
}

/// The same model stored as STL, OBJ, PLY and OFF welds to the same vertices and triangles.
static void one_model_in_four_formats_welds_the_same(void)
{
    static const char *const files[] = {"STL/Wuson.stl", "OBJ/WusonOBJ.obj", "PLY/Wuson.ply", "OFF/Wuson.off"};
    sm_mesh first = {0};
    sm_vec3 lo0 = {0, 0, 0}, hi0 = {0, 0, 0};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, MODELS "%s", files[i]);
        sm_mesh mesh;
        ENSURE_OK(sm_mesh_load_file(path, &mesh));
        if (mesh.vertex_count == 0) continue;
        sm_vec3 lo, hi;
        bounds(&mesh, &lo, &hi);
        if (i == 0) {
            first = mesh;
            lo0 = lo, hi0 = hi;
            continue;
        }
        ENSURE(mesh.vertex_count == first.vertex_count && mesh.triangle_count == first.triangle_count);
        ENSURE(sm_mesh_open_edges(&mesh) == sm_mesh_open_edges(&first));
        ENSURE_SMALL(lo.x - lo0.x, 1e-6);
        ENSURE_SMALL(lo.y - lo0.y, 1e-6);
        ENSURE_SMALL(lo.z - lo0.z, 1e-6);
        ENSURE_SMALL(hi.x - hi0.x, 1e-6);
        ENSURE_SMALL(hi.y - hi0.y, 1e-6);
        ENSURE_SMALL(hi.z - hi0.z, 1e-6);
        // the OFF file lists its faces clockwise: the same volume, negated
        ENSURE_SMALL(fabs(signed_volume(&mesh)) - fabs(signed_volume(&first)), 1e-6);
        sm_mesh_free(&mesh);
    }
    // the Wuson is not closed (its files leave seams open), but it does enclose a volume
    ENSURE(sm_mesh_open_edges(&first) > 0);
    ENSURE_RANGE(signed_volume(&first), 1.0, 1.3);
    sm_mesh_free(&first);
}

static int compare_positions(const void *a, const void *b)
{
    const float *p = a, *q = b;
    for (int i = 0; i < 3; i++)
        if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
    return 0;
}

/// The duck's vertices are split at texture seams; welding merges them into a closed surface
/// (counted independently here: the distinct positions assimp itself returns).
static void duck_welds_into_a_closed_surface(void)
{
    sm_mesh mesh;
    ENSURE_OK(sm_mesh_load_file(MODELS "Collada/duck.dae", &mesh));
    const struct aiScene *scene = aiImportFile(MODELS "Collada/duck.dae", aiProcess_Triangulate |
                                               aiProcess_JoinIdenticalVertices | aiProcess_SortByPType |
                                               aiProcess_PreTransformVertices);
    ENSURE(scene != NULL);
    if (!scene || mesh.vertex_count == 0) {
        aiReleaseImport(scene);
        sm_mesh_free(&mesh);
        return;
    }
    size_t raw = 0, triangles = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; m++) {
        raw += scene->mMeshes[m]->mNumVertices;
        for (unsigned f = 0; f < scene->mMeshes[m]->mNumFaces; f++)
            triangles += scene->mMeshes[m]->mFaces[f].mNumIndices == 3;
    }
    float *positions = malloc(sizeof(float) * 3 * raw);
    size_t n = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; m++)
        for (unsigned v = 0; v < scene->mMeshes[m]->mNumVertices; v++, n++) {
            positions[3 * n + 0] = scene->mMeshes[m]->mVertices[v].x;
            positions[3 * n + 1] = scene->mMeshes[m]->mVertices[v].y;
            positions[3 * n + 2] = scene->mMeshes[m]->mVertices[v].z;
        }
    qsort(positions, raw, sizeof(float) * 3, compare_positions);
    size_t distinct = raw > 0;
    for (size_t i = 1; i < raw; i++) distinct += compare_positions(&positions[3 * (i - 1)], &positions[3 * i]) != 0;
    free(positions);
    aiReleaseImport(scene);

    ENSURE(mesh.vertex_count < (int32_t)raw);
    ENSURE(mesh.vertex_count == (int32_t)distinct);
    ENSURE(mesh.triangle_count == (int32_t)triangles);
    ENSURE(well_formed(&mesh) && all_finite(&mesh));
    ENSURE(sm_mesh_open_edges(&mesh) == 0);
    sm_vec3 lo, hi;
    bounds(&mesh, &lo, &hi);
    const sm_vec3 centre = {0.5 * (lo.x + hi.x), 0.5 * (lo.y + hi.y), 0.5 * (lo.z + hi.z)};
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, centre) - 1.0, 1e-9);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){hi.x + 0.1, centre.y, centre.z}), 1e-9);
    // a second load gives the very same arrays
    sm_mesh again;
    ENSURE_OK(sm_mesh_load_file(MODELS "Collada/duck.dae", &again));
    ENSURE(again.vertex_count == mesh.vertex_count && again.triangle_count == mesh.triangle_count);
    if (again.vertex_count == mesh.vertex_count && again.triangle_count == mesh.triangle_count) {
        ENSURE(memcmp(again.vertices, mesh.vertices, sizeof(sm_vec3) * (size_t)mesh.vertex_count) == 0);
        ENSURE(memcmp(again.triangles, mesh.triangles, sizeof(int32_t) * 3 * (size_t)mesh.triangle_count) == 0);
    }
    sm_mesh_free(&again);
    sm_mesh_free(&mesh);
}

/// A flat-shaded cube (24 split vertices, some moved by less than the weld tolerance) welds to
/// 8 vertices and 12 closed triangles; its winding number is 1 inside, 0 outside, -1 inside
/// the reversed cube; one triangle less leaves 3 open edges.
static void split_cube_welds_and_winds(void)
{
    const char *path = tmp_path("mesh_cube.ply");
    // tolerance: 1e-6 of the diagonal, 1.9e-6; copies lie up to 6e-7 apart
    write_cube(path, 0.55, false, -1, 3e-7);
    sm_mesh mesh;
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    ENSURE(mesh.vertex_count == 8 && mesh.triangle_count == 12 && well_formed(&mesh));
    ENSURE(sm_mesh_open_edges(&mesh) == 0);
    // vertices numbered by first appearance
    ENSURE(mesh.triangles[0] == 0 && mesh.triangles[1] == 1 && mesh.triangles[2] == 2);
    ENSURE_SMALL(signed_volume(&mesh) - 1.331, 1e-5);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){0, 0, 0}) - 1.0, 1e-9);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){0.54, -0.5, 0.3}) - 1.0, 1e-9);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){2.0, 0.3, -0.1}), 1e-9);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){0.56, 0, 0}), 1e-9);
    sm_mesh_free(&mesh);

    write_cube(path, 0.55, true, -1, 0.0);
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    ENSURE(mesh.vertex_count == 8 && mesh.triangle_count == 12 && sm_mesh_open_edges(&mesh) == 0);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){0, 0, 0}) + 1.0, 1e-9);
    ENSURE_SMALL(sm_mesh_winding_number(&mesh, (sm_vec3){0, 3, 0}), 1e-9);
    sm_mesh_free(&mesh);

    write_cube(path, 0.55, false, 5, 0.0);
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    ENSURE(mesh.vertex_count == 8 && mesh.triangle_count == 11 && sm_mesh_open_edges(&mesh) == 3);
    sm_mesh_free(&mesh);

    // copies 1e-3 apart are distinct vertices: the faces no longer share edges
    write_cube(path, 0.55, false, -1, 1e-3);
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    ENSURE(mesh.vertex_count > 8 && mesh.triangle_count == 12 && sm_mesh_open_edges(&mesh) > 0);
    sm_mesh_free(&mesh);
}

/// The cube of side 1.1 holds the 5 x 5 x 5 lattice points of spacing 0.25, all strictly inside.
static void cube_lattice_is_exact(void)
{
    const char *path = tmp_path("mesh_lattice_cube.ply");
    write_cube(path, 0.55, false, -1, 0.0);
    sm_mesh mesh;
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    sm_vec3 *points = NULL;
    int32_t count = 0;
    ENSURE_OK(sm_mesh_sample_lattice(&mesh, 0.25, 125, &points, &count));
    ENSURE(count == 125 && points != NULL);
    for (int32_t i = 0; i < count; i++) {
        const double c[3] = {points[i].x, points[i].y, points[i].z};
        for (int a = 0; a < 3; a++) {
            ENSURE(fabs(c[a]) <= 0.5 + 1e-12);
            ENSURE_SMALL(c[a] / 0.25 - round(c[a] / 0.25), 1e-12);
        }
        ENSURE_SMALL(sm_mesh_winding_number(&mesh, points[i]) - 1.0, 1e-9);
    }
    free(points);

    // one candidate too many for the limit
    ENSURE(sm_mesh_sample_lattice(&mesh, 0.25, 124, &points, &count) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(contains(sm_last_error(), "125") && contains(sm_last_error(), "124") && points == NULL && count == 0);
    static const double bad_spacings[] = {0.0, -0.25, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_spacings / sizeof bad_spacings[0]; i++) {
        ENSURE(sm_mesh_sample_lattice(&mesh, bad_spacings[i], 1000, &points, &count) == SM_ERROR_INVALID_ARGUMENT);
        ENSURE(contains(sm_last_error(), "spacing"));
    }
    sm_mesh_free(&mesh);

    // inside out: no point has a winding number above 0.5
    write_cube(path, 0.55, true, -1, 0.0);
    ENSURE_OK(sm_mesh_load_file(path, &mesh));
    ENSURE(sm_mesh_sample_lattice(&mesh, 0.25, 1000, &points, &count) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(contains(sm_last_error(), "no lattice point") && points == NULL);
    sm_mesh_free(&mesh);
}

/// Lattice volume (count * spacing^3) against the divergence theorem on closed models.
static void lattice_volume_matches_closed_models(void)
{
    static const struct {
        const char *path;
        double spacing, tolerance;
    } cases[] = {
        {MODELS "Collada/sphere.dae", 0.02 / 30, 0.02}, // radius 0.01, 30 points across
        {MODELS "Collada/duck.dae", 1.65 / 20, 0.05},   // 20 points across
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sm_mesh mesh;
        ENSURE_OK(sm_mesh_load_file(cases[i].path, &mesh));
        if (mesh.vertex_count == 0) continue;
        ENSURE(sm_mesh_open_edges(&mesh) == 0);
        const double volume = signed_volume(&mesh);
        sm_vec3 *points = NULL;
        int32_t count = 0;
        ENSURE_OK(sm_mesh_sample_lattice(&mesh, cases[i].spacing, 1 << 20, &points, &count));
        const double h = cases[i].spacing;
        ENSURE_SMALL(count * h * h * h / volume - 1.0, cases[i].tolerance);
        sm_vec3 lo, hi;
        bounds(&mesh, &lo, &hi);
        for (int32_t p = 0; p < count; p++) {
            ENSURE(points[p].x >= lo.x && points[p].y >= lo.y && points[p].z >= lo.z);
            ENSURE(points[p].x <= hi.x && points[p].y <= hi.y && points[p].z <= hi.z);
        }
        if (i == 0)
            for (int32_t p = 0; p < count; p++) ENSURE(sqrt(dot(points[p], points[p])) <= 0.01);
        free(points);
        sm_mesh_free(&mesh);
    }
}

/// Missing, unreadable, garbage and degenerate files fail with SM_ERROR_IO naming the file.
static void bad_files_fail_naming_the_file(void)
{
    sm_mesh mesh = {.vertex_count = 1, .triangle_count = 1}; // a failed load zeroes it
    ENSURE(sm_mesh_load_file("/nonexistent/mesh.obj", &mesh) == SM_ERROR_IO);
    ENSURE(contains(sm_last_error(), "/nonexistent/mesh.obj") && contains(sm_last_error(), "No such file"));
    ENSURE(mesh.vertices == NULL && mesh.triangles == NULL && mesh.vertex_count == 0 && mesh.triangle_count == 0);
    ENSURE(sm_mesh_load_file(SM_TEST_TMP, &mesh) == SM_ERROR_IO); // a directory
    ENSURE(contains(sm_last_error(), SM_TEST_TMP));

    // bytes of no format: the PLY and STL readers refuse them; the lenient OBJ reader takes what
    // looks like statements (these bytes hold a face with a bad index)
    rng r = {42};
    unsigned char garbage[4096];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)rng_uniform(&r, 0, 256);
    static const char *const names[] = {"mesh_garbage.ply", "mesh_garbage.stl", "mesh_garbage.obj", "mesh_empty.ply"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", tmp_path(names[i]));
        FILE *file = fopen(path, "wb");
        ENSURE(file != NULL);
        if (!file) continue;
        if (i < 3) fwrite(garbage, 1, sizeof garbage, file);
        fclose(file);
        ENSURE(sm_mesh_load_file(path, &mesh) == SM_ERROR_IO);
        ENSURE(contains(sm_last_error(), path));
        ENSURE(contains(sm_last_error(), "assimp: "));
        ENSURE(mesh.vertices == NULL && mesh.triangle_count == 0);
    }

    // assimp's own bad inputs: an OFF file whose face is degenerate, a face index out of range,
    // infinite coordinates, lines alone, points alone
    static const struct {
        const char *path, *expect;
    } cases[] = {
        {MODELS "OFF/invalid.off", "no triangles"},
        {MODELS "invalid/malformed.obj", "assimp: "},
        {MODELS "invalid/empty.obj", "assimp: "},
        {MODELS "glTF2/BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb", "not finite"},
        {MODELS "OBJ/testline.obj", "no triangles"},
        {MODELS "OBJ/point_cloud.obj", "assimp: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ENSURE(sm_mesh_load_file(cases[i].path, &mesh) == SM_ERROR_IO);
        ENSURE(contains(sm_last_error(), cases[i].path) && contains(sm_last_error(), cases[i].expect));
        ENSURE(mesh.vertices == NULL && mesh.triangle_count == 0);
    }
    ENSURE(sm_mesh_load_file(NULL, &mesh) == SM_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(models_of_each_format_load),
        TEST(one_model_in_four_formats_welds_the_same),
        TEST(duck_welds_into_a_closed_surface),
        TEST(split_cube_welds_and_winds),
        TEST(cube_lattice_is_exact),
        TEST(lattice_volume_matches_closed_models),
        TEST(bad_files_fail_naming_the_file),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
