/* JSON scene files (format in scenes/README.md), parsed with cJSON. Strict: an unknown or
 * repeated field is an error, and every bad value names the object index and the field. */
#include "files.h"
#include "mesh.h"
#include "math3.h"
#include "memory.h"
#include "objects.h"
#include "shapes.h"
#include "world.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// What one object of the scene owns besides its def.
typedef struct object_storage {
    char *name;
    sm_vec3 *points;
    double *masses;
    int32_t *fixed;
    int32_t *list_offsets, *list_indices;
    sm_vec3 *mesh_vertices;  ///< a mesh shape's vertices, centred and scaled
    int32_t *mesh_triangles;
} object_storage;

/// A spring of the scene: pulls one particle toward a point between two times.
typedef struct scene_spring {
    int32_t object, particle; ///< particle: index within the object
    sm_vec3 target;           ///< m
    double stiffness;         ///< N/m
    double damping;           ///< N s/m
    double start, stop;       ///< s: active for start <= t < stop
    bool first;               ///< no earlier spring of the file is on the same particle
    int32_t next;             ///< the next spring of the file on the same particle, or -1
} scene_spring;

/// A timed cut of the scene: object `object` (its id: the scene's objects are 0 to N - 1, and
/// each earlier cut's front piece the next id) cut along `plane`.
typedef struct scene_cut {
    double time; ///< s
    int32_t object;
    sm_plane plane;
} scene_cut;

/// A collider of the scene and the keyframes it owns.
typedef struct scene_collider {
    sm_collider_def def;
    double *times;
    sm_vec3 *offsets;
    char *mesh; ///< a mesh collider's file, the scene file's folder prepended to a relative path
} scene_collider;

struct sm_scene {
    sm_world_def world_def;
    sm_scene_info info;
    sm_object_def *objects;
    object_storage *storage;
    scene_collider *colliders;
    int32_t collider_count;
    scene_spring *springs;
    int32_t spring_count;
    scene_cut *cuts;
    int32_t cut_count;
    bool skin_given; ///< collisions.skin, a setting since removed, was given (a notice on sm_scene_create_world())
    sm_file_list files; ///< the scene file and every file read for its meshes (sm_scene_get_files())
};

/// Where the parser is, for error messages: "<origin>: object 3: field "alpha": ...".
typedef struct context {
    const char *origin;
    int object;       ///< -1 outside the objects array (and the other arrays)
    const char *what; ///< what `object` counts: "object" (NULL), "collider", "spring", "cut"
    /// the scene file's folder ending in '/', in front of relative mesh paths; NULL or "": the current directory
    const char *folder;
    sm_file_list *files; ///< the scene's list of the files it read, which each mesh read adds to
} context;

static sm_result field_error(const context *ctx, const char *field, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static sm_result field_error(const context *ctx, const char *field, const char *format, ...)
{
    char detail[768];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    if (ctx->object >= 0)
        return sm_fail(SM_ERROR_SCENE, "%s: %s %d: field \"%s\": %s", ctx->origin, ctx->what ? ctx->what : "object",
                       ctx->object, field, detail);
    return sm_fail(SM_ERROR_SCENE, "%s: field \"%s\": %s", ctx->origin, field, detail);
}

/// Whether `item` is, or holds, a number the reader could not represent (1e999 reads as infinity).
static bool holds_non_finite(const cJSON *item)
{
    if (cJSON_IsNumber(item)) return !isfinite(item->valuedouble);
    for (const cJSON *e = item->child; e; e = e->next)
        if (holds_non_finite(e)) return true;
    return false;
}

/// Replaces every non-finite number under `item` by the text "<out of range>" (the printer would
/// write null for it).
static void mark_non_finite(cJSON *item)
{
    for (cJSON *e = item->child, *next; e; e = next) {
        next = e->next;
        if (cJSON_IsNumber(e) && !isfinite(e->valuedouble)) {
            cJSON *mark = cJSON_CreateRaw("<out of range>");
            if (mark) cJSON_ReplaceItemViaPointer(item, e, mark);
        } else {
            mark_non_finite(e);
        }
    }
}

/// A short rendering of a JSON value for "got ..." in messages. A number too large for a double
/// is "a number out of range" (JSON has no infinity: the printer would write null).
static const char *show(const cJSON *item, char *buffer, size_t size)
{
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble)) return "a number out of range";
    char *text = NULL;
    if (holds_non_finite(item)) {
        cJSON *copy = cJSON_Duplicate(item, true);
        if (copy) {
            mark_non_finite(copy);
            text = cJSON_PrintUnformatted(copy);
            cJSON_Delete(copy);
        }
    } else {
        text = cJSON_PrintUnformatted(item);
    }
    if (!text) return "?";
    snprintf(buffer, size, "%s", text);
    if (strlen(text) >= size && size > 4) strcpy(buffer + size - 4, "...");
    cJSON_free(text);
    return buffer;
}

#define GOT(item) show((item), (char[64]){0}, 64)

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}

/// Rejects any key of `object` not in `known` (NULL-terminated), and any key given twice.
static sm_result check_keys(const context *ctx, const cJSON *object, const char *prefix, const char *const *known)
{
    for (const cJSON *item = object->child; item; item = item->next) {
        char field[160];
        snprintf(field, sizeof field, "%s%s", prefix, item->string);
        bool found = false;
        for (const char *const *k = known; *k; k++) found = found || strcmp(*k, item->string) == 0;
        if (!found) {
            const char *closest = NULL;
            size_t best = 3;
            for (const char *const *k = known; *k; k++) {
                size_t d = edit_distance(item->string, *k);
                if (d < best) best = d, closest = *k;
            }
            if (closest) return field_error(ctx, field, "unknown field; did you mean \"%s%s\"?", prefix, closest);
            return field_error(ctx, field, "unknown field");
        }
        for (const cJSON *other = object->child; other != item; other = other->next)
            if (strcmp(other->string, item->string) == 0) return field_error(ctx, field, "given twice");
    }
    return SM_OK;
}

static sm_result read_number(const context *ctx, const cJSON *item, const char *field, double *out)
{
    if (!cJSON_IsNumber(item)) return field_error(ctx, field, "must be a number, got %s", GOT(item));
    if (!isfinite(item->valuedouble)) return field_error(ctx, field, "must be a finite number, got %s", GOT(item));
    *out = item->valuedouble;
    return SM_OK;
}

/// A number in [lo, hi]; `open_lo` excludes lo itself.
static sm_result read_range(const context *ctx, const cJSON *item, const char *field, double lo, double hi,
                            bool open_lo, const char *unit, double *out)
{
    sm_result r = read_number(ctx, item, field, out);
    if (r != SM_OK) return r;
    bool ok = (open_lo ? *out > lo : *out >= lo) && *out <= hi;
    if (ok) return SM_OK;
    char got[32];
    sm_number_text(*out, got);
    if (isinf(hi)) return field_error(ctx, field, "must be %s %g%s%s, got %s", open_lo ? ">" : ">=", lo, *unit ? " " : "", unit, got);
    return field_error(ctx, field, "must be in %c%g, %g]%s%s, got %s", open_lo ? '(' : '[', lo, hi, *unit ? " " : "", unit, got);
}

static sm_result read_int(const context *ctx, const cJSON *item, const char *field, int64_t lo, int64_t hi, int32_t *out)
{
    if (!cJSON_IsNumber(item) || item->valuedouble != floor(item->valuedouble) || item->valuedouble < (double)lo ||
        item->valuedouble > (double)hi)
        return field_error(ctx, field, "must be an integer in [%lld, %lld], got %s", (long long)lo, (long long)hi, GOT(item));
    *out = (int32_t)item->valuedouble;
    return SM_OK;
}

static sm_result read_bool(const context *ctx, const cJSON *item, const char *field, bool *out)
{
    if (!cJSON_IsBool(item)) return field_error(ctx, field, "must be true or false, got %s", GOT(item));
    *out = cJSON_IsTrue(item);
    return SM_OK;
}

/// volume_preservation: true (the nearest fit of determinant 1), false, "projection" (the same
/// as true) or "scale" (the paper's A / cbrt(det A)).
static sm_result read_volume(const context *ctx, const cJSON *item, const char *field, sm_object_def *def)
{
    if (cJSON_IsBool(item)) {
        def->volume_preservation = cJSON_IsTrue(item), def->volume_by_scaling = false;
        return SM_OK;
    }
    if (cJSON_IsString(item) && (!strcmp(item->valuestring, "projection") || !strcmp(item->valuestring, "scale"))) {
        def->volume_preservation = true, def->volume_by_scaling = !strcmp(item->valuestring, "scale");
        return SM_OK;
    }
    return field_error(ctx, field, "must be true, false, \"projection\" or \"scale\", got %s", GOT(item));
}

static sm_result read_vec3(const context *ctx, const cJSON *item, const char *field, sm_vec3 *out)
{
    double v[3];
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
        return field_error(ctx, field, "must be an array of 3 numbers, got %s", GOT(item));
    int a = 0;
    for (const cJSON *e = item->child; e; e = e->next, a++) {
        if (!cJSON_IsNumber(e)) return field_error(ctx, field, "must be an array of 3 numbers, got %s", GOT(item));
        if (!isfinite(e->valuedouble))
            return field_error(ctx, field, "must be an array of 3 finite numbers, got %s", GOT(item));
        v[a] = e->valuedouble;
    }
    *out = v3(v[0], v[1], v[2]);
    return SM_OK;
}

static sm_result read_int3(const context *ctx, const cJSON *item, const char *field, int32_t lo, int32_t hi, int32_t out[3])
{
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
        return field_error(ctx, field, "must be an array of 3 integers in [%d, %d], got %s", lo, hi, GOT(item));
    int a = 0;
    for (const cJSON *e = item->child; e; e = e->next, a++) {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < lo || e->valuedouble > hi)
            return field_error(ctx, field, "must be an array of 3 integers in [%d, %d], got %s", lo, hi, GOT(item));
        out[a] = (int32_t)e->valuedouble;
    }
    return SM_OK;
}

/// An array of particle indices in [0, count); `count` < 0 defers the range check.
static sm_result read_indices(const context *ctx, const cJSON *item, const char *field, int32_t **out, int32_t *out_count)
{
    if (!cJSON_IsArray(item)) return field_error(ctx, field, "must be an array of particle indices, got %s", GOT(item));
    int n = cJSON_GetArraySize(item);
    int32_t *indices = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    if (!indices) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
    int i = 0;
    for (const cJSON *e = item->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 || e->valuedouble > INT32_MAX) {
            free(indices);
            return field_error(ctx, field, "entry %d must be a particle index (an integer >= 0), got %s", i, GOT(e));
        }
        indices[i] = (int32_t)e->valuedouble;
    }
    *out = indices;
    *out_count = n;
    return SM_OK;
}

static const char *const object_fields[] = {
    "name", "shape", "size", "resolution", "radius", "length", "major_radius", "minor_radius", "spacing",
    "points", "masses", "position", "rotation", "velocity", "angular_velocity", "mass", "mode", "alpha",
    "tau", "beta", "volume_preservation", "clusters", "plasticity", "cap", "strain_limit", "damping", "fixed", "force",
    "collisions",
    "mesh", "scale", "center", "particles", "surface", NULL};

/// The shape-specific fields each shape accepts.
static bool field_applies(sm_shape_type type, const char *field)
{
    static const char *const by_shape[][7] = {
        [SM_SHAPE_POINTS] = {"points", "masses", NULL},
        [SM_SHAPE_BOX] = {"size", "resolution", NULL},
        [SM_SHAPE_SPHERE] = {"radius", "spacing", NULL},
        [SM_SHAPE_CAPSULE] = {"radius", "length", "spacing", NULL},
        [SM_SHAPE_TORUS] = {"major_radius", "minor_radius", "spacing", NULL},
        [SM_SHAPE_MESH] = {"mesh", "scale", "center", "particles", "surface", "spacing", NULL},
    };
    static const char *const shape_fields[] = {"size", "resolution", "radius", "length", "major_radius", "minor_radius",
                                               "spacing", "points", "masses", "mesh", "scale", "center", "particles",
                                               NULL};
    bool shape_specific = false;
    for (const char *const *f = shape_fields; *f; f++) shape_specific = shape_specific || strcmp(*f, field) == 0;
    if (!shape_specific) return true;
    for (const char *const *f = by_shape[type]; *f; f++)
        if (strcmp(*f, field) == 0) return true;
    return false;
}

static sm_result parse_shape_name(const context *ctx, const cJSON *item, sm_shape_type *out)
{
    static const struct { const char *name; sm_shape_type type; } names[] = {
        {"box", SM_SHAPE_BOX},         {"sphere", SM_SHAPE_SPHERE}, {"capsule", SM_SHAPE_CAPSULE},
        {"stick", SM_SHAPE_CAPSULE},   {"torus", SM_SHAPE_TORUS},   {"points", SM_SHAPE_POINTS},
        {"mesh", SM_SHAPE_MESH},
    };
    if (!item) return field_error(ctx, "shape", "is required: one of box, sphere, capsule, stick, torus, points, mesh");
    if (cJSON_IsString(item))
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcmp(item->valuestring, names[i].name) == 0) {
                *out = names[i].type;
                return SM_OK;
            }
    return field_error(ctx, "shape",
                       "must be one of \"box\", \"sphere\", \"capsule\", \"stick\", \"torus\", \"points\", \"mesh\", got %s",
                       GOT(item));
}

static sm_result parse_points(const context *ctx, const cJSON *item, object_storage *store, sm_shape *shape)
{
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) < 1)
        return field_error(ctx, "points", "must be a non-empty array of [x, y, z] positions, got %s", GOT(item));
    int n = cJSON_GetArraySize(item);
    store->points = malloc(sizeof(sm_vec3) * (size_t)n);
    if (!store->points) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
    int i = 0;
    for (const cJSON *e = item->child; e; e = e->next, i++) {
        char field[32];
        snprintf(field, sizeof field, "points[%d]", i);
        sm_result r = read_vec3(ctx, e, field, &store->points[i]);
        if (r != SM_OK) return r;
    }
    shape->points = store->points;
    shape->point_count = n;
    return SM_OK;
}

static sm_result parse_masses(const context *ctx, const cJSON *item, object_storage *store, sm_shape *shape)
{
    if (!cJSON_IsArray(item)) return field_error(ctx, "masses", "must be an array of masses in kg, got %s", GOT(item));
    int n = cJSON_GetArraySize(item);
    store->masses = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!store->masses) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
    int i = 0;
    for (const cJSON *e = item->child; e; e = e->next, i++) {
        char field[32];
        snprintf(field, sizeof field, "masses[%d]", i);
        sm_result r = read_range(ctx, e, field, SM_POINT_MASS_MIN, SM_MASS_MAX, false, "kg", &store->masses[i]);
        if (r != SM_OK) return r;
    }
    if (n != shape->point_count)
        return field_error(ctx, "masses", "has %d entries but \"points\" has %d", n, shape->point_count);
    shape->point_masses = store->masses;
    return SM_OK;
}

/// A mesh's "scale": one number > 0 for every axis, or [x, y, z] each > 0.
static sm_result read_scale(const context *ctx, const cJSON *item, sm_vec3 *out)
{
    if (cJSON_IsNumber(item)) {
        double s = 0.0;
        sm_result r = read_range(ctx, item, "scale", 0.0, INFINITY, true, "", &s);
        if (r == SM_OK) *out = v3(s, s, s);
        return r;
    }
    sm_result r = read_vec3(ctx, item, "scale", out);
    if (r == SM_OK && !(out->x > 0 && out->y > 0 && out->z > 0))
        return field_error(ctx, "scale", "must be a number > 0 or an array of 3 numbers > 0, got %s", GOT(item));
    return r;
}

/// Loads a mesh shape's file (a relative path from ctx->folder), moves its bounding box's centre
/// to the origin when `center`, multiplies the coordinates by `scale`, and points the shape at
/// the result, which `store` owns.
static sm_result load_mesh(const context *ctx, const cJSON *item, sm_vec3 scale, bool center, object_storage *store,
                           sm_shape *shape)
{
    if (!item)
        return field_error(ctx, "mesh", "is required for shape \"mesh\": the path of a mesh file (OBJ, PLY, OFF, STL, Collada or glTF 2)");
    const char *name = item->valuestring;
    const char *folder = name[0] != '/' && ctx->folder ? ctx->folder : "";
    const size_t length = strlen(folder) + strlen(name) + 1;
    char *path = malloc(length);
    if (!path) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
    snprintf(path, length, "%s%s", folder, name);
    sm_mesh mesh = {0};
    sm_result r = sm_mesh_load_file_listed(path, &mesh, ctx->files);
    free(path);
    if (r != SM_OK) return field_error(ctx, "mesh", "%s", sm_last_error());

    store->mesh_vertices = malloc(sizeof(sm_vec3) * (size_t)mesh.vertex_count);
    store->mesh_triangles = malloc(sizeof(int32_t) * 3 * (size_t)mesh.triangle_count);
    if (!store->mesh_vertices || !store->mesh_triangles) {
        sm_mesh_free(&mesh);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory for %d mesh vertices", ctx->origin, mesh.vertex_count);
    }
    sm_vec3 lo = mesh.vertices[0], hi = mesh.vertices[0];
    for (int32_t i = 1; i < mesh.vertex_count; i++) {
        const sm_vec3 p = mesh.vertices[i];
        lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
    }
    const sm_vec3 middle = center ? v3_scale(v3_add(lo, hi), 0.5) : v3(0.0, 0.0, 0.0);
    for (int32_t i = 0; i < mesh.vertex_count; i++) {
        const sm_vec3 p = v3_sub(mesh.vertices[i], middle);
        store->mesh_vertices[i] = v3(p.x * scale.x, p.y * scale.y, p.z * scale.z);
        if (!v3_is_finite(store->mesh_vertices[i])) {
            sm_mesh_free(&mesh);
            return field_error(ctx, "scale", "makes mesh vertex %d non-finite", i);
        }
    }
    memcpy(store->mesh_triangles, mesh.triangles, sizeof(int32_t) * 3 * (size_t)mesh.triangle_count);
    shape->mesh_vertices = store->mesh_vertices;
    shape->mesh_vertex_count = mesh.vertex_count;
    shape->mesh_triangles = store->mesh_triangles;
    shape->mesh_triangle_count = mesh.triangle_count;
    sm_mesh_free(&mesh);
    return SM_OK;
}

/// The "surface" of a shape other than a mesh: {"mesh": path, "scale": s, "center": b}, a mesh
/// file drawn over the object as its skinned surface.
static sm_result parse_surface(const context *ctx, const cJSON *item, object_storage *store, sm_surface *out)
{
    static const char *const known[] = {"mesh", "scale", "center", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "surface", "must be {\"mesh\": path, \"scale\": s, \"center\": true}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "surface.", known);
    if (r != SM_OK) return r;
    const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(item, "mesh");
    if (!cJSON_IsString(mesh) || !*mesh->valuestring)
        return field_error(ctx, "surface.mesh", "is required: the path of a mesh file, got %s", mesh ? GOT(mesh) : "nothing");
    sm_vec3 scale = v3(1.0, 1.0, 1.0);
    bool center = true;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "scale")) && (r = read_scale(ctx, e, &scale)) != SM_OK) return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "center")) && (r = read_bool(ctx, e, "surface.center", &center)) != SM_OK)
        return r;
    sm_shape loaded = {0};
    if ((r = load_mesh(ctx, mesh, scale, center, store, &loaded)) != SM_OK) return r;
    *out = (sm_surface){loaded.mesh_vertices, loaded.mesh_vertex_count, loaded.mesh_triangles, loaded.mesh_triangle_count, true};
    return SM_OK;
}

static sm_result parse_clusters(const context *ctx, const cJSON *item, object_storage *store, sm_cluster_def *out)
{
    static const char *const known[] = {"grid", "overlap", "lists", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "clusters", "must be {\"grid\": [nx, ny, nz], \"overlap\": o} or {\"lists\": [[...], ...]}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "clusters.", known);
    if (r != SM_OK) return r;
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(item, "grid");
    const cJSON *overlap = cJSON_GetObjectItemCaseSensitive(item, "overlap");
    const cJSON *lists = cJSON_GetObjectItemCaseSensitive(item, "lists");
    if (lists && (grid || overlap)) return field_error(ctx, "clusters.lists", "cannot be combined with a grid or an overlap");
    if (grid && (r = read_int3(ctx, grid, "clusters.grid", 1, 1024, out->grid)) != SM_OK) return r;
    if (overlap && (r = read_range(ctx, overlap, "clusters.overlap", 0.0, 10.0, false, "", &out->overlap)) != SM_OK) return r;
    if (!lists) return SM_OK;

    if (!cJSON_IsArray(lists) || cJSON_GetArraySize(lists) < 1)
        return field_error(ctx, "clusters.lists", "must be a non-empty array of particle index lists, got %s", GOT(lists));
    int count = cJSON_GetArraySize(lists);
    int64_t total = 0;
    for (const cJSON *e = lists->child; e; e = e->next) total += cJSON_IsArray(e) ? cJSON_GetArraySize(e) : 0;
    store->list_offsets = malloc(sizeof(int32_t) * (size_t)(count + 1));
    store->list_indices = malloc(sizeof(int32_t) * (size_t)(total > 0 ? total : 1));
    if (!store->list_offsets || !store->list_indices) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
    int k = 0;
    store->list_offsets[0] = 0;
    for (const cJSON *e = lists->child; e; e = e->next, k++) {
        char field[48];
        snprintf(field, sizeof field, "clusters.lists[%d]", k);
        int32_t *indices = NULL, n = 0;
        if ((r = read_indices(ctx, e, field, &indices, &n)) != SM_OK) return r;
        if (n == 0) {
            free(indices);
            return field_error(ctx, field, "is empty; a cluster needs at least one particle");
        }
        memcpy(store->list_indices + store->list_offsets[k], indices, sizeof(int32_t) * (size_t)n);
        store->list_offsets[k + 1] = store->list_offsets[k] + n;
        free(indices);
    }
    out->list_offsets = store->list_offsets;
    out->list_indices = store->list_indices;
    out->list_count = count;
    return SM_OK;
}

static sm_result parse_plasticity(const context *ctx, const cJSON *item, sm_plasticity *out)
{
    static const char *const known[] = {"enabled", "yield", "creep", "max", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "plasticity", "must be {\"yield\": y, \"creep\": c, \"max\": m}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "plasticity.", known);
    if (r != SM_OK) return r;
    out->enabled = true;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "enabled")) && (r = read_bool(ctx, e, "plasticity.enabled", &out->enabled)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "yield")) &&
        (r = read_range(ctx, e, "plasticity.yield", 0.0, INFINITY, false, "", &out->yield)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "creep")) &&
        (r = read_range(ctx, e, "plasticity.creep", 0.0, INFINITY, false, "per second", &out->creep)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "max")) &&
        (r = read_range(ctx, e, "plasticity.max", 0.0, INFINITY, true, "", &out->max)))
        return r;
    return SM_OK;
}

static sm_result parse_cap(const context *ctx, const cJSON *item, sm_cap *out)
{
    static const char *const known[] = {"enabled", "soft", "hard", NULL};
    if (!cJSON_IsObject(item)) return field_error(ctx, "cap", "must be {\"soft\": s, \"hard\": h}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "cap.", known);
    if (r != SM_OK) return r;
    out->enabled = true;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "enabled")) && (r = read_bool(ctx, e, "cap.enabled", &out->enabled)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "soft")) && (r = read_range(ctx, e, "cap.soft", 3.0, INFINITY, false, "", &out->soft)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "hard")) && (r = read_number(ctx, e, "cap.hard", &out->hard))) return r;
    if (!(out->hard > out->soft))
        return field_error(ctx, "cap.hard", "must be greater than cap.soft (%g), got %g", out->soft, out->hard);
    return SM_OK;
}

static sm_result parse_object_collisions(const context *ctx, const cJSON *item, sm_object_collisions *out)
{
    static const char *const known[] = {"enabled", "self", "radius", "radius_scale", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "collisions", "must be {\"enabled\": b, \"self\": b, \"radius\": r, \"radius_scale\": s}, got %s",
                           GOT(item));
    sm_result r = check_keys(ctx, item, "collisions.", known);
    if (r != SM_OK) return r;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "enabled")) && (r = read_bool(ctx, e, "collisions.enabled", &out->enabled)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "self")) && (r = read_bool(ctx, e, "collisions.self", &out->self)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "radius")) &&
        (r = read_range(ctx, e, "collisions.radius", 0.0, INFINITY, true, "m", &out->radius)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "radius_scale")) &&
        (r = read_range(ctx, e, "collisions.radius_scale", 0.0, INFINITY, true, "", &out->radius_scale)))
        return r;
    return SM_OK;
}

static sm_result parse_object(const context *ctx, const cJSON *item, sm_object_def *def, object_storage *store)
{
    if (!cJSON_IsObject(item)) return field_error(ctx, "objects", "each object must be a JSON object, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "", object_fields);
    if (r != SM_OK) return r;
    *def = sm_object_def_default();
    if ((r = parse_shape_name(ctx, cJSON_GetObjectItemCaseSensitive(item, "shape"), &def->shape.type)) != SM_OK) return r;
    sm_shape *shape = &def->shape;
    bool has_alpha = false, has_tau = false, has_mass = false;
    sm_vec3 mesh_scale = v3(1.0, 1.0, 1.0);
    bool mesh_center = true;

    for (const cJSON *e = item->child; e; e = e->next) {
        const char *f = e->string;
        if (!field_applies(shape->type, f))
            return field_error(ctx, f, "does not apply to shape \"%s\"", sm_shape_name(shape->type));
        if (strcmp(f, "shape") == 0) continue;
        else if (strcmp(f, "name") == 0) {
            if (!cJSON_IsString(e)) return field_error(ctx, f, "must be a string, got %s", GOT(e));
            store->name = malloc(strlen(e->valuestring) + 1);
            if (!store->name) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
            strcpy(store->name, e->valuestring);
            def->name = store->name;
        } else if (strcmp(f, "size") == 0) {
            if ((r = read_vec3(ctx, e, f, &shape->size)) != SM_OK) return r;
            if (!(shape->size.x >= 0 && shape->size.y >= 0 && shape->size.z >= 0))
                return field_error(ctx, f, "must be three lengths >= 0 m, got %s", GOT(e));
        } else if (strcmp(f, "resolution") == 0) r = read_int3(ctx, e, f, 1, 4096, shape->resolution);
        else if (strcmp(f, "radius") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &shape->radius);
        else if (strcmp(f, "length") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, false, "m", &shape->length);
        else if (strcmp(f, "major_radius") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &shape->major_radius);
        else if (strcmp(f, "minor_radius") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &shape->minor_radius);
        else if (strcmp(f, "spacing") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &shape->spacing);
        else if (strcmp(f, "points") == 0) r = parse_points(ctx, e, store, shape);
        else if (strcmp(f, "masses") == 0) continue; // after the points, below
        else if (strcmp(f, "mesh") == 0) { // loaded below, with its scale and centring
            if (!cJSON_IsString(e) || !e->valuestring[0])
                return field_error(ctx, f, "must be the path of a mesh file, got %s", GOT(e));
        } else if (strcmp(f, "scale") == 0) r = read_scale(ctx, e, &mesh_scale);
        else if (strcmp(f, "center") == 0) r = read_bool(ctx, e, f, &mesh_center);
        else if (strcmp(f, "surface") == 0 && shape->type == SM_SHAPE_MESH) r = read_bool(ctx, e, f, &def->surface.enabled);
        else if (strcmp(f, "surface") == 0) r = parse_surface(ctx, e, store, &def->surface);
        else if (strcmp(f, "particles") == 0) {
            const char *kind = cJSON_IsString(e) ? e->valuestring : "";
            if (strcmp(kind, "vertices") == 0) shape->mesh_particles = SM_MESH_PARTICLES_VERTICES;
            else if (strcmp(kind, "lattice") == 0) shape->mesh_particles = SM_MESH_PARTICLES_LATTICE;
            else return field_error(ctx, f, "must be \"vertices\" or \"lattice\", got %s", GOT(e));
        }
        else if (strcmp(f, "position") == 0) r = read_vec3(ctx, e, f, &def->position);
        else if (strcmp(f, "rotation") == 0) r = read_vec3(ctx, e, f, &def->rotation);
        else if (strcmp(f, "velocity") == 0) r = read_vec3(ctx, e, f, &def->linear_velocity);
        else if (strcmp(f, "angular_velocity") == 0) r = read_vec3(ctx, e, f, &def->angular_velocity);
        else if (strcmp(f, "force") == 0) r = read_vec3(ctx, e, f, &def->force);
        else if (strcmp(f, "mass") == 0) {
            has_mass = true;
            r = read_range(ctx, e, f, SM_MASS_MIN, SM_MASS_MAX, false, "kg", &def->mass);
        } else if (strcmp(f, "mode") == 0) {
            if (cJSON_IsString(e) && strcmp(e->valuestring, "rigid") == 0) def->mode = SM_MODE_RIGID;
            else if (cJSON_IsString(e) && strcmp(e->valuestring, "linear") == 0) def->mode = SM_MODE_LINEAR;
            else if (cJSON_IsString(e) && strcmp(e->valuestring, "quadratic") == 0) def->mode = SM_MODE_QUADRATIC;
            else return field_error(ctx, f, "must be \"rigid\", \"linear\" or \"quadratic\", got %s", GOT(e));
        } else if (strcmp(f, "alpha") == 0) {
            has_alpha = true;
            r = read_range(ctx, e, f, 0.0, 1.0, false, "", &def->alpha);
        } else if (strcmp(f, "tau") == 0) {
            has_tau = true;
            r = read_range(ctx, e, f, 0.0, INFINITY, true, "s", &def->tau);
        } else if (strcmp(f, "beta") == 0) r = read_range(ctx, e, f, 0.0, 1.0, false, "", &def->beta);
        else if (strcmp(f, "volume_preservation") == 0) r = read_volume(ctx, e, f, def);
        else if (strcmp(f, "damping") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, false, "per second", &def->damping);
        else if (strcmp(f, "clusters") == 0) r = parse_clusters(ctx, e, store, &def->clusters);
        else if (strcmp(f, "plasticity") == 0) r = parse_plasticity(ctx, e, &def->plasticity);
        else if (strcmp(f, "cap") == 0) r = parse_cap(ctx, e, &def->cap);
        else if (strcmp(f, "strain_limit") == 0)
            r = read_range(ctx, e, f, SM_STRAIN_LIMIT_MIN, SM_STRAIN_LIMIT_MAX, false, "", &def->strain_limit);
        else if (strcmp(f, "collisions") == 0) r = parse_object_collisions(ctx, e, &def->collisions);
        else if (strcmp(f, "fixed") == 0) {
            r = read_indices(ctx, e, f, &store->fixed, &def->fixed_count);
            def->fixed = store->fixed;
        }
        if (r != SM_OK) return r;
    }
    const cJSON *masses = cJSON_GetObjectItemCaseSensitive(item, "masses");
    if (shape->type == SM_SHAPE_POINTS && !shape->points) return field_error(ctx, "points", "is required for shape \"points\"");
    if (shape->type == SM_SHAPE_MESH) {
        if (shape->mesh_particles != SM_MESH_PARTICLES_LATTICE && cJSON_GetObjectItemCaseSensitive(item, "spacing"))
            return field_error(ctx, "spacing", "applies to a mesh with \"particles\": \"lattice\" only");
        r = load_mesh(ctx, cJSON_GetObjectItemCaseSensitive(item, "mesh"), mesh_scale, mesh_center, store, shape);
        if (r != SM_OK) return r;
    }
    if (masses) {
        if (has_mass) return field_error(ctx, "masses", "cannot be combined with \"mass\" (the masses add up to it)");
        if ((r = parse_masses(ctx, masses, store, shape)) != SM_OK) return r;
    }
    if (has_alpha && has_tau) return field_error(ctx, "tau", "cannot be combined with \"alpha\" (tau sets alpha = min(1, h / tau))");
    if (def->plasticity.enabled && def->mode == SM_MODE_RIGID)
        return field_error(ctx, "plasticity", "needs mode \"linear\" or \"quadratic\" (a rigid goal has no deformation)");

    // index fields need the particle count: sample the shape once to check them here, with their names
    if (def->fixed_count > 0 || def->clusters.list_offsets) {
        sm_vec3 *points = NULL;
        double *point_masses = NULL;
        int32_t count = 0;
        sm_result sampled = sm_shape_sample(shape, def->mass, &points, &point_masses, &count);
        free(points);
        free(point_masses);
        if (sampled != SM_OK) return field_error(ctx, "shape", "%s", sm_last_error());
        char field[48];
        if (sm_object_check_indices(def, count, field, sizeof field) != SM_OK) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", sm_last_error());
            return field_error(ctx, field, "%s", detail);
        }
    }
    return SM_OK;
}

static sm_result parse_ground(const context *ctx, const cJSON *item, sm_ground *out)
{
    static const char *const known[] = {"height", "restitution", "friction", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "ground", "must be {\"height\": y, \"restitution\": e, \"friction\": mu}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "ground.", known);
    if (r != SM_OK) return r;
    out->enabled = true;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "height")) && (r = read_number(ctx, e, "ground.height", &out->height))) return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "restitution")) &&
        (r = read_range(ctx, e, "ground.restitution", 0.0, 1.0, false, "", &out->restitution)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "friction")) &&
        (r = read_range(ctx, e, "ground.friction", 0.0, 1.0, false, "", &out->friction)))
        return r;
    return SM_OK;
}

/// The world's contact settings into out; *skin_given tells whether the file gave
/// collisions.skin, a setting since removed (its candidates' margin: the contact response never
/// depended on it), which is still checked and then ignored so that older scenes load.
static sm_result parse_collisions(const context *ctx, const cJSON *item, sm_collisions *out, bool *skin_given)
{
    static const char *const known[] = {"enabled",  "iterations", "radius_scale", "restitution",
                                        "friction", "skin",       "relaxation",   "push_speed", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "collisions",
                           "must be {\"iterations\": n, \"radius_scale\": s, \"restitution\": e, \"friction\": mu}, got %s",
                           GOT(item));
    sm_result r = check_keys(ctx, item, "collisions.", known);
    if (r != SM_OK) return r;
    out->enabled = true;
    const cJSON *e;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "enabled")) && (r = read_bool(ctx, e, "collisions.enabled", &out->enabled)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "iterations")) &&
        (r = read_int(ctx, e, "collisions.iterations", 1, 64, &out->iterations)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "radius_scale")) &&
        (r = read_range(ctx, e, "collisions.radius_scale", 0.0, INFINITY, true, "", &out->radius_scale)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "restitution")) &&
        (r = read_range(ctx, e, "collisions.restitution", 0.0, 1.0, false, "", &out->restitution)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "friction")) &&
        (r = read_range(ctx, e, "collisions.friction", 0.0, 1.0, false, "", &out->friction)))
        return r;
    double skin = 0.0;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "skin")) &&
        (r = read_range(ctx, e, "collisions.skin", 0.0, 10.0, false, "", &skin)))
        return r;
    *skin_given = e != NULL;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "relaxation")) &&
        (r = read_range(ctx, e, "collisions.relaxation", 1.0, 2.0, false, "", &out->relaxation)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "push_speed")) &&
        (r = read_range(ctx, e, "collisions.push_speed", 0.0, INFINITY, true, "m/s", &out->push_speed)))
        return r;
    return SM_OK;
}

static sm_result parse_motion(const context *ctx, const cJSON *item, scene_collider *out)
{
    static const char *const known[] = {"type", "times", "offsets", "amplitude", "frequency", "phase", NULL};
    if (!cJSON_IsObject(item))
        return field_error(ctx, "motion", "must be {\"type\": \"linear\", \"times\": [...], \"offsets\": [...]} or "
                                          "{\"type\": \"sinusoidal\", \"amplitude\": [x, y, z], \"frequency\": f}, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "motion.", known);
    if (r != SM_OK) return r;
    sm_motion *m = &out->def.motion;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "static") == 0) m->type = SM_MOTION_STATIC;
    else if (cJSON_IsString(type) && strcmp(type->valuestring, "linear") == 0) m->type = SM_MOTION_LINEAR;
    else if (cJSON_IsString(type) && strcmp(type->valuestring, "sinusoidal") == 0) m->type = SM_MOTION_SINUSOIDAL;
    else return field_error(ctx, "motion.type", "must be \"static\", \"linear\" or \"sinusoidal\", got %s", type ? GOT(type) : "nothing");
    const char *linear_only[] = {"times", "offsets"}, *sinusoidal_only[] = {"amplitude", "frequency", "phase"};
    for (int k = 0; k < 2; k++)
        if (m->type != SM_MOTION_LINEAR && cJSON_GetObjectItemCaseSensitive(item, linear_only[k]))
            return field_error(ctx, "motion", "\"%s\" applies to linear motion only", linear_only[k]);
    for (int k = 0; k < 3; k++)
        if (m->type != SM_MOTION_SINUSOIDAL && cJSON_GetObjectItemCaseSensitive(item, sinusoidal_only[k]))
            return field_error(ctx, "motion", "\"%s\" applies to sinusoidal motion only", sinusoidal_only[k]);
    const cJSON *e;
    if (m->type == SM_MOTION_LINEAR) {
        const cJSON *times = cJSON_GetObjectItemCaseSensitive(item, "times");
        const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(item, "offsets");
        if (!cJSON_IsArray(times) || cJSON_GetArraySize(times) < 1)
            return field_error(ctx, "motion.times", "must be a non-empty array of increasing times in s, got %s",
                               times ? GOT(times) : "nothing");
        const int n = cJSON_GetArraySize(times);
        if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != n)
            return field_error(ctx, "motion.offsets", "must be an array of %d [x, y, z] displacements (one per time), got %s", n,
                               offsets ? GOT(offsets) : "nothing");
        out->times = malloc(sizeof(double) * (size_t)n);
        out->offsets = malloc(sizeof(sm_vec3) * (size_t)n);
        if (!out->times || !out->offsets) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
        // walk both lists side by side: indexing a cJSON array walks it from its start each time
        const cJSON *time = times->child, *offset = offsets->child;
        for (int k = 0; k < n; k++, time = time->next, offset = offset->next) {
            char field[48];
            snprintf(field, sizeof field, "motion.times[%d]", k);
            if ((r = read_number(ctx, time, field, &out->times[k])) != SM_OK) return r;
            if (k > 0 && !(out->times[k] > out->times[k - 1]))
                return field_error(ctx, field, "must be greater than the time before it (%g), got %g", out->times[k - 1], out->times[k]);
            snprintf(field, sizeof field, "motion.offsets[%d]", k);
            if ((r = read_vec3(ctx, offset, field, &out->offsets[k])) != SM_OK) return r;
        }
        m->times = out->times, m->offsets = out->offsets, m->keyframe_count = n;
    } else if (m->type == SM_MOTION_SINUSOIDAL) {
        if ((e = cJSON_GetObjectItemCaseSensitive(item, "amplitude")) && (r = read_vec3(ctx, e, "motion.amplitude", &m->amplitude)))
            return r;
        if ((e = cJSON_GetObjectItemCaseSensitive(item, "frequency")) &&
            (r = read_range(ctx, e, "motion.frequency", 0.0, INFINITY, false, "Hz", &m->frequency)))
            return r;
        if ((e = cJSON_GetObjectItemCaseSensitive(item, "phase")) && (r = read_number(ctx, e, "motion.phase", &m->phase))) return r;
    }
    return SM_OK;
}

static sm_result parse_collider(const context *ctx, const cJSON *item, scene_collider *out)
{
    static const char *const known[] = {"name",     "shape",  "position", "normal", "rotation", "size",
                                        "radius",   "restitution", "friction", "motion", "mesh", "scale",
                                        "center",   "cell",   "thickness", NULL};
    if (!cJSON_IsObject(item)) return field_error(ctx, "colliders", "each collider must be a JSON object, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "", known);
    if (r != SM_OK) return r;
    sm_collider_def *d = &out->def;
    *d = sm_collider_def_default();
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    if (cJSON_IsString(shape) && strcmp(shape->valuestring, "plane") == 0) d->shape = SM_COLLIDER_PLANE;
    else if (cJSON_IsString(shape) && strcmp(shape->valuestring, "box") == 0) d->shape = SM_COLLIDER_BOX;
    else if (cJSON_IsString(shape) && strcmp(shape->valuestring, "sphere") == 0) d->shape = SM_COLLIDER_SPHERE;
    else if (cJSON_IsString(shape) && strcmp(shape->valuestring, "mesh") == 0) d->shape = SM_COLLIDER_MESH;
    else
        return field_error(ctx, "shape", "must be \"plane\", \"box\", \"sphere\" or \"mesh\", got %s",
                           shape ? GOT(shape) : "nothing");
    static const struct { const char *field; sm_collider_shape shape, also; } specific[] = {
        {"normal", SM_COLLIDER_PLANE, SM_COLLIDER_PLANE}, {"rotation", SM_COLLIDER_BOX, SM_COLLIDER_MESH},
        {"size", SM_COLLIDER_BOX, SM_COLLIDER_BOX},       {"radius", SM_COLLIDER_SPHERE, SM_COLLIDER_SPHERE},
        {"mesh", SM_COLLIDER_MESH, SM_COLLIDER_MESH},     {"scale", SM_COLLIDER_MESH, SM_COLLIDER_MESH},
        {"center", SM_COLLIDER_MESH, SM_COLLIDER_MESH},   {"cell", SM_COLLIDER_MESH, SM_COLLIDER_MESH},
        {"thickness", SM_COLLIDER_MESH, SM_COLLIDER_MESH}};
    for (size_t k = 0; k < sizeof specific / sizeof specific[0]; k++)
        if (d->shape != specific[k].shape && d->shape != specific[k].also &&
            cJSON_GetObjectItemCaseSensitive(item, specific[k].field))
            return field_error(ctx, specific[k].field, "does not apply to shape \"%s\"", shape->valuestring);
    if (d->shape == SM_COLLIDER_MESH) {
        const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(item, "mesh");
        if (!cJSON_IsString(mesh))
            return field_error(ctx, "mesh", "is required for shape \"mesh\": the path of a mesh file (OBJ, PLY, OFF, STL, Collada or glTF 2), got %s",
                               mesh ? GOT(mesh) : "nothing");
        const char *folder = mesh->valuestring[0] != '/' && ctx->folder ? ctx->folder : "";
        const size_t length = strlen(folder) + strlen(mesh->valuestring) + 1;
        if (!(out->mesh = malloc(length))) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->origin);
        snprintf(out->mesh, length, "%s%s", folder, mesh->valuestring);
        d->mesh = out->mesh;
        // read now, so that a file that cannot be read is refused with the scene, naming the field
        sm_mesh check = {0};
        r = sm_mesh_load_file_listed(out->mesh, &check, ctx->files);
        const int32_t triangles = check.triangle_count;
        sm_mesh_free(&check);
        if (r != SM_OK) return field_error(ctx, "mesh", "%s", sm_last_error());
        if (triangles < 1) return field_error(ctx, "mesh", "%s has no triangles", out->mesh);
    }
    for (const cJSON *e = item->child; e; e = e->next) {
        const char *f = e->string;
        if (strcmp(f, "shape") == 0) continue;
        if (strcmp(f, "name") == 0) {
            if (!cJSON_IsString(e)) r = field_error(ctx, f, "must be a string, got %s", GOT(e));
        } else if (strcmp(f, "position") == 0) r = read_vec3(ctx, e, f, &d->position);
        else if (strcmp(f, "normal") == 0) {
            sm_vec3 unit; // (any length but zero: v3_direction scales it first)
            if ((r = read_vec3(ctx, e, f, &d->normal)) == SM_OK && !v3_direction(d->normal, &unit))
                r = field_error(ctx, f, "must not be zero");
        } else if (strcmp(f, "rotation") == 0) r = read_vec3(ctx, e, f, &d->rotation);
        else if (strcmp(f, "size") == 0) {
            if ((r = read_vec3(ctx, e, f, &d->size)) == SM_OK && !(d->size.x > 0 && d->size.y > 0 && d->size.z > 0))
                r = field_error(ctx, f, "must be three lengths > 0 m, got %s", GOT(e));
        } else if (strcmp(f, "radius") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &d->radius);
        else if (strcmp(f, "restitution") == 0) r = read_range(ctx, e, f, 0.0, 1.0, false, "", &d->restitution);
        else if (strcmp(f, "friction") == 0) r = read_range(ctx, e, f, 0.0, 1.0, false, "", &d->friction);
        else if (strcmp(f, "motion") == 0) r = parse_motion(ctx, e, out);
        else if (strcmp(f, "scale") == 0) r = read_scale(ctx, e, &d->scale);
        else if (strcmp(f, "center") == 0) {
            if (!cJSON_IsBool(e)) r = field_error(ctx, f, "must be true or false, got %s", GOT(e));
            else d->center = cJSON_IsTrue(e);
        } else if (strcmp(f, "cell") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &d->cell);
        else if (strcmp(f, "thickness") == 0) r = read_range(ctx, e, f, 0.0, INFINITY, true, "m", &d->thickness);
        if (r != SM_OK) return r;
    }
    return SM_OK;
}

static sm_result parse_spring(const context *ctx, const cJSON *item, const sm_scene *scene, scene_spring *out)
{
    static const char *const known[] = {"object", "particle", "target", "stiffness", "damping", "start", "stop", NULL};
    if (!cJSON_IsObject(item)) return field_error(ctx, "springs", "each spring must be a JSON object, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "", known);
    if (r != SM_OK) return r;
    *out = (scene_spring){.stiffness = 10.0, .damping = 0.0, .start = 0.0, .stop = INFINITY};
    const cJSON *e;
    static const char *const required[] = {"object", "particle", "target"};
    for (int k = 0; k < 3; k++)
        if (!cJSON_GetObjectItemCaseSensitive(item, required[k])) return field_error(ctx, required[k], "is required");
    e = cJSON_GetObjectItemCaseSensitive(item, "object");
    if ((r = read_int(ctx, e, "object", 0, scene->info.object_count - 1, &out->object)) != SM_OK) return r;
    e = cJSON_GetObjectItemCaseSensitive(item, "particle");
    if ((r = read_int(ctx, e, "particle", 0, INT32_MAX, &out->particle)) != SM_OK) return r;
    if ((r = read_vec3(ctx, cJSON_GetObjectItemCaseSensitive(item, "target"), "target", &out->target)) != SM_OK) return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "stiffness")) &&
        (r = read_range(ctx, e, "stiffness", 0.0, INFINITY, false, "N/m", &out->stiffness)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "damping")) &&
        (r = read_range(ctx, e, "damping", 0.0, INFINITY, false, "N s/m", &out->damping)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "start")) && (r = read_range(ctx, e, "start", 0.0, INFINITY, false, "s", &out->start)))
        return r;
    if ((e = cJSON_GetObjectItemCaseSensitive(item, "stop")) && (r = read_number(ctx, e, "stop", &out->stop))) return r;
    if (!(out->stop > out->start)) return field_error(ctx, "stop", "must be after start (%g s), got %g", out->start, out->stop);
    return SM_OK;
}

/// Cut `index` of the `cuts` array; `objects` is how many objects the scene has at its time (the
/// scene's own plus one per earlier cut).
static sm_result parse_cut(const context *ctx, const cJSON *item, int32_t objects, double earliest, scene_cut *out)
{
    static const char *const known[] = {"time", "object", "point", "normal", NULL};
    if (!cJSON_IsObject(item)) return field_error(ctx, "cuts", "each cut must be a JSON object, got %s", GOT(item));
    sm_result r = check_keys(ctx, item, "", known);
    if (r != SM_OK) return r;
    static const char *const required[] = {"time", "object", "point", "normal"};
    for (int k = 0; k < 4; k++)
        if (!cJSON_GetObjectItemCaseSensitive(item, required[k])) return field_error(ctx, required[k], "is required");
    if ((r = read_range(ctx, cJSON_GetObjectItemCaseSensitive(item, "time"), "time", earliest, INFINITY, false, "s",
                        &out->time)) != SM_OK)
        return r;
    if ((r = read_int(ctx, cJSON_GetObjectItemCaseSensitive(item, "object"), "object", 0, objects - 1, &out->object)) != SM_OK)
        return r;
    if ((r = read_vec3(ctx, cJSON_GetObjectItemCaseSensitive(item, "point"), "point", &out->plane.point)) != SM_OK) return r;
    if ((r = read_vec3(ctx, cJSON_GetObjectItemCaseSensitive(item, "normal"), "normal", &out->plane.normal)) != SM_OK) return r;
    sm_vec3 unit;
    if (!v3_direction(out->plane.normal, &unit)) return field_error(ctx, "normal", "must not be zero");
    return SM_OK;
}

/// The solver step dt / substeps must lie in [SM_MIN_STEP, SM_MAX_STEP], as sm_world_step()
/// requires: checked here so that such a scene is refused when it is loaded, not at its first step.
static sm_result check_solver_step(const context *ctx, double dt, int32_t substeps)
{
    const double h = dt / substeps;
    if (h >= SM_MIN_STEP && h <= SM_MAX_STEP) return SM_OK;
    // dt alone is in range and substeps >= 1, so the step is too short: say how many substeps fit
    int32_t most = (int32_t)fmin(floor(dt / SM_MIN_STEP), 100000.0);
    while (most > 1 && !(dt / most >= SM_MIN_STEP)) most--;
    return field_error(ctx, "substeps",
                       "the solver step dt / substeps must be in [%g, %g] s, got %g s / %d = %g s (with this dt, at most %d "
                       "substep%s)",
                       SM_MIN_STEP, SM_MAX_STEP, dt, substeps, h, most, most == 1 ? "" : "s");
}

/// A spring's particle and its place in the file, for sorting.
typedef struct spring_key {
    int32_t object, particle, index;
} spring_key;

static int compare_spring_keys(const void *a, const void *b)
{
    const spring_key *s = a, *t = b;
    if (s->object != t->object) return s->object < t->object ? -1 : 1;
    if (s->particle != t->particle) return s->particle < t->particle ? -1 : 1;
    return (s->index > t->index) - (s->index < t->index);
}

/// Links each particle's springs in the file's order (scene_spring.first and .next), so that
/// sm_scene_apply() visits each spring once per step and adds a particle's forces in the file's
/// order.
static sm_result link_springs(const context *ctx, scene_spring *springs, int32_t count)
{
    spring_key *keys = malloc(sizeof *keys * (size_t)(count > 0 ? count : 1));
    if (!keys) return sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory for %d springs", ctx->origin, count);
    for (int32_t i = 0; i < count; i++) keys[i] = (spring_key){springs[i].object, springs[i].particle, i};
    qsort(keys, (size_t)count, sizeof *keys, compare_spring_keys);
    for (int32_t k = 0; k < count; k++) {
        scene_spring *s = &springs[keys[k].index];
        const bool same_before = k > 0 && keys[k - 1].object == keys[k].object && keys[k - 1].particle == keys[k].particle;
        const bool same_after =
            k + 1 < count && keys[k + 1].object == keys[k].object && keys[k + 1].particle == keys[k].particle;
        s->first = !same_before;
        s->next = same_after ? keys[k + 1].index : -1;
    }
    free(keys);
    return SM_OK;
}

/// Line and column of `at` in `text`, for syntax errors.
static void locate(const char *text, const char *at, int *line, int *column)
{
    *line = 1, *column = 1;
    for (const char *c = text; *c && c < at; c++) {
        if (*c == '\n') (*line)++, *column = 1;
        else (*column)++;
    }
}

/// How deeply arrays and objects are nested at `at` in `json` (brackets inside strings do not
/// count): the JSON parser refuses text nested deeper than CJSON_NESTING_LIMIT.
static int nesting_at(const char *json, const char *at)
{
    int depth = 0;
    bool in_string = false;
    for (const char *c = json; c < at && *c; c++) {
        if (in_string) {
            if (*c == '\\' && c[1]) c++;
            else if (*c == '"') in_string = false;
        } else if (*c == '"') in_string = true;
        else if (*c == '[' || *c == '{') depth++;
        else if (*c == ']' || *c == '}') depth--;
    }
    return depth;
}

/// The first \u0000 escape inside a string of `json` (a NUL character, which would end the
/// string early in C: "box\u0000x" would read as "box"), or NULL.
static const char *nul_escape(const char *json)
{
    bool in_string = false;
    for (const char *c = json; *c; c++) {
        if (!in_string) {
            in_string = *c == '"';
        } else if (*c == '"') {
            in_string = false;
        } else if (*c == '\\') {
            if (c[1] == 'u' && c[2] == '0' && c[3] == '0' && c[4] == '0' && c[5] == '0') return c;
            if (c[1]) c++; // the escaped character
        }
    }
    return NULL;
}

/// sm_scene_load_string() with relative mesh paths taken from `folder` (see context.folder); `file`:
/// the scene file read, first in the scene's list of files (NULL: none).
static sm_result load_scene(const char *json, const char *origin, const char *file, const char *folder, sm_scene **out_scene)
{
    if (out_scene) *out_scene = NULL;
    if (!json || !out_scene) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_load_string: json and out_scene must not be NULL");
    *out_scene = NULL;
    context ctx = {origin ? origin : "scene", -1, NULL, folder, NULL};
    const char *end = NULL;
    const char *nul = nul_escape(json);
    if (nul) {
        int line, column;
        locate(json, nul, &line, &column);
        return sm_fail(SM_ERROR_SCENE, "%s:%d:%d: a string holds \\u0000, a NUL character, which no name, path or field "
                       "of a scene may hold", ctx.origin, line, column);
    }
    cJSON *root = cJSON_ParseWithOpts(json, &end, true);
    if (!root) {
        int line, column;
        const char *at = end ? end : cJSON_GetErrorPtr();
        if (!at) at = json;
        locate(json, at, &line, &column);
        char near[24];
        snprintf(near, sizeof near, "%s", at);
        for (char *c = near; *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
        if (nesting_at(json, at) >= CJSON_NESTING_LIMIT)
            return sm_fail(SM_ERROR_SCENE,
                           "%s:%d:%d: arrays and objects are nested more than %d deep here, past the reader's limit (valid JSON, "
                           "but no scene needs more than a few levels)",
                           ctx.origin, line, column, CJSON_NESTING_LIMIT);
        return sm_fail(SM_ERROR_SCENE, "%s:%d:%d: not valid JSON near \"%s\"", ctx.origin, line, column, near);
    }
    sm_scene *scene = calloc(1, sizeof *scene);
    sm_result r = scene && (!file || sm_file_list_add(&scene->files, file))
                      ? SM_OK
                      : sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx.origin);
    if (r != SM_OK) goto done;
    ctx.files = &scene->files;
    scene->world_def = sm_world_def_default();
    scene->info = (sm_scene_info){.dt = 1.0 / 60.0, .substeps = 1, .steps = 600, .object_count = 0};

    static const char *const known[] = {"name", "description", "dt", "substeps", "steps", "gravity", "ground", "collisions",
                                        "colliders", "springs", "cuts", "objects", NULL};
    if (!cJSON_IsObject(root)) {
        r = sm_fail(SM_ERROR_SCENE, "%s: a scene must be a JSON object with an \"objects\" array", ctx.origin);
        goto done;
    }
    if ((r = check_keys(&ctx, root, "", known)) != SM_OK) goto done;
    for (const cJSON *e = root->child; e; e = e->next) {
        const char *f = e->string;
        if (strcmp(f, "name") == 0 || strcmp(f, "description") == 0) {
            if (!cJSON_IsString(e)) r = field_error(&ctx, f, "must be a string, got %s", GOT(e));
        } else if (strcmp(f, "dt") == 0) r = read_range(&ctx, e, f, SM_MIN_STEP, SM_MAX_STEP, false, "s", &scene->info.dt);
        else if (strcmp(f, "substeps") == 0) r = read_int(&ctx, e, f, 1, 100000, &scene->info.substeps);
        else if (strcmp(f, "steps") == 0) r = read_int(&ctx, e, f, 0, INT32_MAX, &scene->info.steps);
        else if (strcmp(f, "gravity") == 0) r = read_vec3(&ctx, e, f, &scene->world_def.gravity);
        else if (strcmp(f, "ground") == 0) r = parse_ground(&ctx, e, &scene->world_def.ground);
        else if (strcmp(f, "collisions") == 0) r = parse_collisions(&ctx, e, &scene->world_def.collisions, &scene->skin_given);
        else if (strcmp(f, "colliders") == 0 && !cJSON_IsArray(e))
            r = field_error(&ctx, f, "must be an array of colliders, got %s", GOT(e));
        else if (strcmp(f, "springs") == 0 && !cJSON_IsArray(e))
            r = field_error(&ctx, f, "must be an array of springs, got %s", GOT(e));
        else if (strcmp(f, "cuts") == 0 && !cJSON_IsArray(e))
            r = field_error(&ctx, f, "must be an array of cuts, got %s", GOT(e));
        if (r != SM_OK) goto done;
    }
    if ((r = check_solver_step(&ctx, scene->info.dt, scene->info.substeps)) != SM_OK) goto done;
    const cJSON *objects = cJSON_GetObjectItemCaseSensitive(root, "objects");
    if (!objects) {
        r = field_error(&ctx, "objects", "is required: an array of objects");
        goto done;
    }
    if (!cJSON_IsArray(objects) || cJSON_GetArraySize(objects) < 1) {
        r = field_error(&ctx, "objects", "must be a non-empty array of objects, got %s", GOT(objects));
        goto done;
    }
    int n = cJSON_GetArraySize(objects);
    scene->objects = calloc((size_t)n, sizeof(sm_object_def));
    scene->storage = calloc((size_t)n, sizeof(object_storage));
    if (!scene->objects || !scene->storage) {
        r = sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory for %d objects", ctx.origin, n);
        goto done;
    }
    int i = 0;
    for (const cJSON *e = objects->child; e; e = e->next, i++) {
        context octx = {ctx.origin, i, NULL, ctx.folder, ctx.files};
        scene->info.object_count = i + 1; // so that a failure frees what this object allocated
        if ((r = parse_object(&octx, e, &scene->objects[i], &scene->storage[i])) != SM_OK) goto done;
    }
    const cJSON *colliders = cJSON_GetObjectItemCaseSensitive(root, "colliders");
    if (colliders && cJSON_GetArraySize(colliders) > 0) {
        const int count = cJSON_GetArraySize(colliders);
        if (count > SM_MAX_COLLIDERS) {
            r = field_error(&ctx, "colliders", "holds %d colliders; a world holds at most %d", count, SM_MAX_COLLIDERS);
            goto done;
        }
        scene->colliders = calloc((size_t)count, sizeof *scene->colliders);
        if (!scene->colliders) {
            r = sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx.origin);
            goto done;
        }
        i = 0;
        for (const cJSON *e = colliders->child; e; e = e->next, i++) {
            context cctx = {ctx.origin, i, "collider", ctx.folder, ctx.files};
            scene->collider_count = i + 1;
            if ((r = parse_collider(&cctx, e, &scene->colliders[i])) != SM_OK) goto done;
        }
    }
    const cJSON *springs = cJSON_GetObjectItemCaseSensitive(root, "springs");
    if (springs && cJSON_GetArraySize(springs) > 0) {
        const int count = cJSON_GetArraySize(springs);
        scene->springs = calloc((size_t)count, sizeof *scene->springs);
        if (!scene->springs) {
            r = sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx.origin);
            goto done;
        }
        i = 0;
        for (const cJSON *e = springs->child; e; e = e->next, i++) {
            context sctx = {ctx.origin, i, "spring", ctx.folder, ctx.files};
            if ((r = parse_spring(&sctx, e, scene, &scene->springs[i])) != SM_OK) goto done;
            scene->spring_count = i + 1;
        }
        if ((r = link_springs(&ctx, scene->springs, scene->spring_count)) != SM_OK) goto done;
    }
    const cJSON *cuts = cJSON_GetObjectItemCaseSensitive(root, "cuts");
    if (cuts && cJSON_GetArraySize(cuts) > 0) {
        const int count = cJSON_GetArraySize(cuts);
        scene->cuts = calloc((size_t)count, sizeof *scene->cuts);
        if (!scene->cuts) {
            r = sm_fail(SM_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx.origin);
            goto done;
        }
        i = 0;
        for (const cJSON *e = cuts->child; e; e = e->next, i++) {
            context cctx = {ctx.origin, i, "cut", ctx.folder, ctx.files};
            const double earliest = i > 0 ? scene->cuts[i - 1].time : 0.0; // in the order they happen
            if ((r = parse_cut(&cctx, e, scene->info.object_count + i, earliest, &scene->cuts[i])) != SM_OK) goto done;
            scene->cut_count = scene->info.cut_count = i + 1;
        }
    }

done:
    cJSON_Delete(root);
    if (r != SM_OK) {
        sm_scene_destroy(scene);
        return r;
    }
    *out_scene = scene;
    return SM_OK;
}

sm_result sm_scene_load_string(const char *json, const char *origin, sm_scene **out_scene)
{
    return load_scene(json, origin, NULL, NULL, out_scene);
}

sm_result sm_scene_load_file(const char *path, sm_scene **out_scene)
{
    if (out_scene) *out_scene = NULL;
    if (!path || !out_scene) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_load_file: path and out_scene must not be NULL");
    *out_scene = NULL;
    char *text = NULL;
    size_t used = 0;
    switch (sm_read_file(path, (size_t)1 << 30, &text, &used)) {
    case SM_READ_OK: break;
    case SM_READ_CANNOT_OPEN: return sm_fail(SM_ERROR_IO, "cannot open scene file %s: %s", path, strerror(errno));
    case SM_READ_FAILED: return sm_fail(SM_ERROR_IO, "cannot read scene file %s: %s", path, strerror(errno));
    case SM_READ_TOO_LARGE: return sm_fail(SM_ERROR_IO, "scene file %s is larger than 1 GiB", path);
    case SM_READ_NO_MEMORY: return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    if (strlen(text) != used) {
        free(text);
        return sm_fail(SM_ERROR_SCENE, "%s: not a text file (it holds a NUL byte)", path);
    }
    // relative mesh paths are relative to the scene file's folder: its path up to the last '/'
    const char *slash = strrchr(path, '/');
    const size_t folder_length = slash ? (size_t)(slash - path) + 1 : 0;
    char *folder = malloc(folder_length + 1);
    if (!folder) {
        free(text);
        return sm_fail(SM_ERROR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    memcpy(folder, path, folder_length);
    folder[folder_length] = '\0';
    sm_result r = load_scene(text, path, path, folder, out_scene);
    free(folder);
    free(text);
    return r;
}

void sm_scene_destroy(sm_scene *scene)
{
    if (!scene) return;
    if (scene->storage)
        for (int32_t i = 0; i < scene->info.object_count; i++) {
            object_storage *s = &scene->storage[i];
            free(s->name), free(s->points), free(s->masses), free(s->fixed), free(s->list_offsets), free(s->list_indices);
            free(s->mesh_vertices), free(s->mesh_triangles);
        }
    free(scene->storage);
    free(scene->objects);
    for (int32_t i = 0; i < scene->collider_count; i++)
        free(scene->colliders[i].times), free(scene->colliders[i].offsets), free(scene->colliders[i].mesh);
    free(scene->colliders);
    free(scene->springs);
    free(scene->cuts);
    sm_file_list_free(&scene->files);
    free(scene);
}

sm_result sm_scene_get_files(const sm_scene *scene, const char *const **out_paths, int32_t *out_count)
{
    if (!scene || !out_paths || !out_count)
        return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_get_files: scene, out_paths and out_count must not be NULL");
    *out_paths = (const char *const *)scene->files.paths;
    *out_count = scene->files.count;
    return SM_OK;
}

sm_scene_info sm_scene_get_info(const sm_scene *scene) { return scene ? scene->info : (sm_scene_info){0}; }

sm_world_def sm_scene_world_def(const sm_scene *scene) { return scene ? scene->world_def : sm_world_def_default(); }

const sm_object_def *sm_scene_object_def(const sm_scene *scene, int32_t index)
{
    if (!scene || index < 0 || index >= scene->info.object_count) return NULL;
    return &scene->objects[index];
}

sm_result sm_scene_create_world(const sm_scene *scene, const sm_world_def *def, sm_world **out_world)
{
    if (out_world) *out_world = NULL;
    if (!scene || !out_world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_create_world: scene and out_world must not be NULL");
    *out_world = NULL; // as sm_world_create: a failed call leaves no world behind
    sm_world_def scene_def = scene->world_def;
    if (!def) def = &scene_def;
    sm_world *world = NULL;
    sm_result r = sm_world_create(def, &world);
    if (r != SM_OK) return r;
    if (scene->skin_given)
        sm_log(world, SM_LOG_NOTICE,
               "the scene's collisions.skin is ignored: contact's candidates are the pairs that overlap at each solver "
               "step's positions, the only ones its response ever used (docs/contact.md)");
    // the whole scene's memory first: a scene too large for the budget is refused before any
    // object is sampled, and one that fits is allocated once
    sm_footprint adds = {0};
    for (int32_t i = 0; i < scene->info.object_count && r == SM_OK; i++) {
        sm_footprint object;
        r = sm_validate_object_def(&scene->objects[i]);
        if (r == SM_OK) r = sm_object_footprint(world, &scene->objects[i], &object);
        if (r != SM_OK) {
            char message[1024];
            snprintf(message, sizeof message, "%s", sm_last_error());
            sm_world_destroy(world);
            return sm_fail(r, "object %d: %s", i, message);
        }
        sm_footprint_add(&adds, &object);
    }
    char what[64];
    snprintf(what, sizeof what, "the scene (%d object%s)", scene->info.object_count, scene->info.object_count == 1 ? "" : "s");
    r = sm_check_memory(world, &adds, what);
    if (r == SM_OK) r = sm_world_reserve(world, adds.particles, adds.clusters, adds.memberships);
    if (r != SM_OK) {
        sm_world_destroy(world);
        return r;
    }
    for (int32_t i = 0; i < scene->info.object_count; i++) {
        r = sm_world_add_object(world, &scene->objects[i], NULL);
        if (r != SM_OK) {
            char message[1024];
            snprintf(message, sizeof message, "%s", sm_last_error());
            sm_world_destroy(world);
            return sm_fail(r, "object %d: %s", i, message);
        }
    }
    for (int32_t i = 0; i < scene->collider_count; i++) {
        r = sm_world_add_collider(world, &scene->colliders[i].def, NULL);
        if (r != SM_OK) {
            char message[1024];
            snprintf(message, sizeof message, "%s", sm_last_error());
            sm_world_destroy(world);
            return sm_fail(r, "collider %d: %s", i, message);
        }
    }
    for (int32_t i = 0; i < scene->spring_count; i++) {
        sm_object_info object;
        if (sm_world_get_object(world, scene->springs[i].object, &object) != SM_OK ||
            scene->springs[i].particle >= object.particle_count) {
            sm_world_destroy(world);
            return sm_fail(SM_ERROR_SCENE, "spring %d: field \"particle\": object %d has %d particles, got index %d", i,
                           scene->springs[i].object, object.particle_count, scene->springs[i].particle);
        }
    }
    *out_world = world;
    return SM_OK;
}

sm_result sm_scene_apply(const sm_scene *scene, sm_world *world)
{
    if (!scene || !world) return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_apply: scene and world must not be NULL");
    const double t = sm_world_get_time(world);
    // cuts: those that fell due since the last step began, t - dt < time <= t (with a margin for the
    // rounding of the time's sum), in the file's order, before the step that starts at t
    const double margin = 1e-6 * scene->info.dt;
    if (world->scene_cut_count < scene->cut_count) { // the world's id of each cut's front piece
        if (!sm_grow((void **)&world->scene_cut_front, sizeof *world->scene_cut_front, (size_t)scene->cut_count))
            return sm_fail(SM_ERROR_OUT_OF_MEMORY, "sm_scene_apply: out of memory");
        for (int32_t i = world->scene_cut_count; i < scene->cut_count; i++) world->scene_cut_front[i] = -2;
        world->scene_cut_count = scene->cut_count;
    }
    for (int32_t i = 0; i < scene->cut_count; i++) {
        const scene_cut *cut = &scene->cuts[i];
        if (!(cut->time < t + margin && cut->time >= t - scene->info.dt + margin)) continue;
        if (world->scene_cut_front[i] != -2) continue; // made already (sm_scene_apply() called again before the step)
        // the file numbers the front pieces of its cuts after its objects, one per cut: the
        // world's ids differ once a cut has cut nothing (its piece does not exist: nothing to cut)
        int32_t object = cut->object;
        const int32_t earlier = object - scene->info.object_count;
        if (earlier >= 0 && earlier < i) object = world->scene_cut_front[earlier];
        world->scene_cut_front[i] = -1;
        if (object < 0) {
            sm_log(world, SM_LOG_NOTICE, "sm_scene_apply: cut %d at %g s: object %d is the front piece of cut %d, which "
                   "cut nothing: nothing to cut", i, cut->time, cut->object, earlier);
            continue;
        }
        sm_cut_info info;
        sm_result r = sm_world_cut(world, object, cut->plane, &info);
        if (r != SM_OK) {
            char message[1024];
            snprintf(message, sizeof message, "%s", sm_last_error());
            return sm_fail(r, "sm_scene_apply: cut %d at %g s: %s", i, cut->time, message);
        }
        if (info.cut) world->scene_cut_front[i] = info.front_object;
    }
    for (int32_t i = 0; i < scene->spring_count; i++) {
        const scene_spring *spring = &scene->springs[i];
        // a particle with springs: its target from every active spring on it, and its force, its
        // object's share plus their damping, set once, at its first spring (load linked each
        // particle's springs in the file's order)
        if (!spring->first) continue;
        // the particle is the spring->particle-th of the object as created, wherever cuts put it
        if (spring->object >= world->object_count)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_apply: spring %d: the world has no object %d", i,
                           spring->object);
        const sm_object *object = &world->objects[spring->object];
        const int32_t particle = object->origin_first + spring->particle;
        if (particle >= world->particle_count ||
            world->objects[world->particle_object[particle]].origin_first != object->origin_first)
            return sm_fail(SM_ERROR_INVALID_ARGUMENT, "sm_scene_apply: spring %d: object %d has no particle %d", i,
                           spring->object, spring->particle);
        double mass = 0.0;
        sm_result r = sm_world_get_masses(world, particle, 1, &mass);
        if (r != SM_OK) return r;
        const sm_object_def *def = &scene->objects[spring->object];
        sm_vec3 force = v3_scale(def->force, mass / object->origin_mass);
        // the active springs on it as one: stiffness k = the sum of theirs, toward the mean of
        // their targets weighted by stiffness (the same pull, the sum of k_j (target_j - x)), and
        // damping c = the sum of theirs (weights over the stiffest, so that no sum overflows)
        double most = 0.0, weight = 0.0, c = 0.0;
        sm_vec3 sum = {0, 0, 0};
        for (int32_t j = i; j >= 0; j = scene->springs[j].next) {
            const scene_spring *s = &scene->springs[j];
            if (t >= s->start && t < s->stop) most = fmax(most, s->stiffness);
        }
        for (int32_t j = i; j >= 0; j = scene->springs[j].next) {
            const scene_spring *s = &scene->springs[j];
            if (!(t >= s->start && t < s->stop)) continue;
            c += s->damping;
            if (most > 0.0) sum = v3_add(sum, v3_scale(s->target, s->stiffness / most)), weight += s->stiffness / most;
        }
        // the pull: the particle's target (step 4d: a spring by backward Euler in every solver
        // step, stable at any stiffness), at most FLT_MAX N/m, which any backend can hold
        const double k = fmin(most * weight, FLT_MAX);
        r = sm_world_set_target(world, particle, k > 0.0 ? v3_scale(sum, 1.0 / weight) : v3(0, 0, 0), k);
        if (r != SM_OK) return r;
        // the damping: -c v by backward Euler over the frame (sm_spring_share), held through its
        // substeps: it takes at most the particle's own velocity
        if (c > 0.0) {
            double v[3];
            if ((r = sm_world_get_velocities(world, particle, 1, v)) != SM_OK) return r;
            const double dt = scene->info.dt, share = sm_spring_share(0.0, c, dt, 1.0 / mass);
            force = v3_sub(force, v3_scale(v3(v[0], v[1], v[2]), share * mass / dt));
        }
        if ((r = sm_world_set_force(world, particle, force)) != SM_OK) return r;
    }
    return SM_OK;
}

sm_result sm_scene_step(const sm_scene *scene, sm_world *world)
{
    sm_result r = sm_scene_apply(scene, world);
    return r == SM_OK ? sm_world_step(world, scene->info.dt, scene->info.substeps) : r;
}
