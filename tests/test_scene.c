/* Scene files: every kind of bad input gives its documented error, naming the object index
 * and the field, and nothing crashes (scenes/README.md, "Rules"). */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DUCK SM_ASSIMP_MODELS "/Collada/duck.dae"

/// Two valid objects; cases replace "@" in the second one with their own fields.
static const char *const base = "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"box\", @}]}";

typedef struct bad_case {
    const char *object_fields; ///< spliced into object 1, or NULL to use `scene`
    const char *scene;         ///< a whole scene, when object_fields is NULL
    const char *expect[3];     ///< substrings the message must contain
} bad_case;

static const bad_case cases[] = {
    // JSON itself
    {NULL, "{\"objects\": [}", {"test:1:14", "not valid JSON"}},
    {NULL, "{\n  \"dt\": 0.1,\n  \"objects\": [ {\"shape\": \"box\",, } ]\n}", {"test:3:", "not valid JSON"}},
    {NULL, "", {"not valid JSON"}},
    {NULL, "[1, 2]", {"must be a JSON object"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}]} trailing", {"not valid JSON"}},
    // top level
    {NULL, "{}", {"field \"objects\"", "is required"}},
    {NULL, "{\"objects\": []}", {"field \"objects\"", "non-empty"}},
    {NULL, "{\"objects\": {}}", {"field \"objects\"", "non-empty array"}},
    {NULL, "{\"dtt\": 0.1, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dtt\"", "did you mean \"dt\"?"}},
    {NULL, "{\"dt\": 0, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dt\"", "[1e-09, 10]"}},
    {NULL, "{\"dt\": 1e-320, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dt\"", "[1e-09, 10]"}},
    {NULL, "{\"dt\": 1e400, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dt\"", "must be a finite number, got a number out of range"}},
    {NULL, "{\"substeps\": 1.5, \"objects\": [{\"shape\": \"box\"}]}", {"field \"substeps\"", "integer"}},
    {NULL, "{\"substeps\": 0, \"objects\": [{\"shape\": \"box\"}]}", {"field \"substeps\"", "[1, 100000]"}},
    // the solver step dt / substeps is checked at load, as sm_world_step() checks it
    {NULL, "{\"dt\": 1e-9, \"substeps\": 100000, \"objects\": [{\"shape\": \"box\"}]}",
     {"field \"substeps\"", "dt / substeps must be in [1e-09, 10] s", "got 1e-09 s / 100000 = 1e-14 s"}},
    {NULL, "{\"substeps\": 40000, \"dt\": 2e-5, \"objects\": [{\"shape\": \"box\"}]}",
     {"field \"substeps\"", "dt / substeps", "at most 20000 substeps"}},
    {NULL, "{\"steps\": -1, \"objects\": [{\"shape\": \"box\"}]}", {"field \"steps\""}},
    {NULL, "{\"gravity\": [0, \"down\", 0], \"objects\": [{\"shape\": \"box\"}]}", {"field \"gravity\"", "3 numbers"}},
    {NULL, "{\"name\": 3, \"objects\": [{\"shape\": \"box\"}]}", {"field \"name\"", "string"}},
    {NULL, "{\"dt\": 0.1, \"dt\": 0.2, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dt\"", "given twice"}},
    {NULL, "{\"ground\": {\"heigth\": 1}, \"objects\": [{\"shape\": \"box\"}]}", {"field \"ground.heigth\"", "did you mean \"ground.height\"?"}},
    {NULL, "{\"ground\": {\"restitution\": 2}, \"objects\": [{\"shape\": \"box\"}]}", {"field \"ground.restitution\"", "[0, 1]", "got 2"}},
    {NULL, "{\"ground\": true, \"objects\": [{\"shape\": \"box\"}]}", {"field \"ground\""}},
    {NULL, "{\"objects\": [42]}", {"object 0", "must be a JSON object"}},
    // object fields
    {"\"alpah\": 0.5", NULL, {"object 1", "field \"alpah\"", "did you mean \"alpha\"?"}},
    {"\"zzzzzzzz\": 1", NULL, {"object 1", "field \"zzzzzzzz\"", "unknown field"}},
    {"\"alpha\": 0.5, \"alpha\": 0.6", NULL, {"object 1", "field \"alpha\"", "given twice"}},
    {"\"alpha\": \"0.5\"", NULL, {"object 1", "field \"alpha\"", "must be a number"}},
    {"\"alpha\": 1.5", NULL, {"object 1", "field \"alpha\"", "got 1.5"}},
    {"\"beta\": -0.1", NULL, {"object 1", "field \"beta\"", "[0, 1]"}},
    {"\"alpha\": 0.5, \"tau\": 0.1", NULL, {"object 1", "field \"tau\"", "cannot be combined"}},
    {"\"tau\": 0", NULL, {"object 1", "field \"tau\"", "> 0"}},
    {"\"mass\": 0", NULL, {"object 1", "field \"mass\"", "[1e-12, 1e+12]"}},
    {"\"mass\": null", NULL, {"object 1", "field \"mass\"", "must be a number"}},
    {"\"damping\": -1", NULL, {"object 1", "field \"damping\""}},
    {"\"mode\": \"soft\"", NULL, {"object 1", "field \"mode\"", "\"rigid\", \"linear\" or \"quadratic\""}},
    {"\"volume_preservation\": 1", NULL, {"object 1", "field \"volume_preservation\"", "true, false, \"projection\" or \"scale\""}},
    {"\"position\": [1, 2]", NULL, {"object 1", "field \"position\"", "3 numbers"}},
    {"\"rotation\": \"x\"", NULL, {"object 1", "field \"rotation\""}},
    {"\"name\": [\"a\"]", NULL, {"object 1", "field \"name\"", "string"}},
    // shapes
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"mass\": 2}]}", {"object 1", "field \"shape\"", "is required"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"cube\"}]}", {"object 1", "field \"shape\"", "must be one of"}},
    {"\"radius\": 0.5", NULL, {"object 1", "field \"radius\"", "does not apply to shape \"box\""}},
    {"\"resolution\": [4, 0, 4]", NULL, {"object 1", "field \"resolution\"", "[1, 4096]"}},
    {"\"resolution\": [4, 2.5, 4]", NULL, {"object 1", "field \"resolution\"", "integers"}},
    {"\"size\": [1, -1, 1]", NULL, {"object 1", "field \"size\"", ">= 0"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"sphere\", \"spacing\": 0}]}", {"object 1", "field \"spacing\""}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"torus\", \"size\": [1, 1, 1]}]}", {"object 1", "field \"size\"", "\"torus\""}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\"}]}", {"object 1", "field \"points\"", "required"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": []}]}", {"object 1", "field \"points\"", "non-empty"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 1]]}]}", {"object 1", "field \"points[1]\""}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"masses\": [1, 2]}]}", {"object 1", "field \"masses\"", "has 2 entries"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"masses\": [0]}]}", {"object 1", "field \"masses[0]\"", "[1e-30, 1e+12]"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"masses\": [1], \"mass\": 1}]}", {"object 1", "field \"masses\"", "cannot be combined"}},
    // clusters
    {"\"clusters\": {\"grd\": [2, 2, 2]}", NULL, {"object 1", "field \"clusters.grd\"", "did you mean \"clusters.grid\"?"}},
    {"\"clusters\": {\"grid\": [2, 2]}", NULL, {"object 1", "field \"clusters.grid\""}},
    {"\"clusters\": {\"grid\": [0, 1, 1]}", NULL, {"object 1", "field \"clusters.grid\"", "[1, 1024]"}},
    {"\"clusters\": {\"overlap\": -0.5}", NULL, {"object 1", "field \"clusters.overlap\""}},
    {"\"clusters\": [2, 2, 2]", NULL, {"object 1", "field \"clusters\""}},
    {"\"clusters\": {\"grid\": [2, 2, 2], \"lists\": [[0, 1, 2, 3]]}", NULL, {"object 1", "field \"clusters.lists\"", "cannot be combined"}},
    {"\"clusters\": {\"lists\": [[0, 1, 999]]}", NULL, {"object 1", "field \"clusters.lists[0]\"", "999 is outside [0, 64)"}},
    {"\"clusters\": {\"lists\": [[0, 1], [2, 2]]}", NULL, {"object 1", "field \"clusters.lists[1]\"", "twice"}},
    {"\"clusters\": {\"lists\": [[0, 1], []]}", NULL, {"object 1", "field \"clusters.lists[1]\"", "empty"}},
    {"\"clusters\": {\"lists\": [[0, -1]]}", NULL, {"object 1", "field \"clusters.lists[0]\"", "particle index"}},
    {"\"clusters\": {\"lists\": []}", NULL, {"object 1", "field \"clusters.lists\"", "non-empty"}},
    // fixed, plasticity, cap
    {"\"fixed\": [0, 64]", NULL, {"object 1", "field \"fixed\"", "64 is outside [0, 64)"}},
    {"\"fixed\": [0.5]", NULL, {"object 1", "field \"fixed\"", "particle index"}},
    {"\"fixed\": 3", NULL, {"object 1", "field \"fixed\"", "array"}},
    {"\"mode\": \"rigid\", \"plasticity\": {}", NULL, {"object 1", "field \"plasticity\"", "\"linear\" or \"quadratic\""}},
    {"\"plasticity\": {\"max\": 0}", NULL, {"object 1", "field \"plasticity.max\"", "> 0"}},
    {"\"plasticity\": {\"yeild\": 0.1}", NULL, {"object 1", "field \"plasticity.yeild\"", "did you mean \"plasticity.yield\"?"}},
    {"\"plasticity\": {\"creep\": -1}", NULL, {"object 1", "field \"plasticity.creep\""}},
    {"\"plasticity\": {\"enabled\": \"yes\"}", NULL, {"object 1", "field \"plasticity.enabled\"", "true or false"}},
    {"\"cap\": {\"soft\": 2}", NULL, {"object 1", "field \"cap.soft\"", ">= 3"}},
    {"\"cap\": {\"soft\": 5, \"hard\": 5}", NULL, {"object 1", "field \"cap.hard\"", "greater than cap.soft"}},
    {"\"cap\": 4", NULL, {"object 1", "field \"cap\""}},
    // meshes
    {"\"mesh\": \"" DUCK "\"", NULL, {"object 1", "field \"mesh\"", "does not apply to shape \"box\""}},
    {"\"scale\": 2", NULL, {"object 1", "field \"scale\"", "does not apply to shape \"box\""}},
    {"\"surface\": false", NULL, {"object 1", "field \"surface\"", "must be {\"mesh\": path"}},
    {"\"surface\": {\"mesh\": 3}", NULL, {"object 1", "field \"surface.mesh\"", "is required"}},
    {"\"surface\": {\"mesh\": \"/nonexistent.obj\"}", NULL, {"object 1", "field \"mesh\"", "/nonexistent.obj"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\"}]}", {"object 1", "field \"mesh\"", "is required"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": 3}]}", {"object 1", "field \"mesh\"", "path"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"/nonexistent/duck.obj\"}]}",
     {"object 1", "field \"mesh\"", "/nonexistent/duck.obj"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"size\": [1, 1, 1]}]}",
     {"object 1", "field \"size\"", "does not apply to shape \"mesh\""}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"particles\": \"bogus\"}]}",
     {"object 1", "field \"particles\"", "\"vertices\" or \"lattice\", got \"bogus\""}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"scale\": 0}]}",
     {"object 1", "field \"scale\"", "> 0"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"scale\": [1, -1, 1]}]}",
     {"object 1", "field \"scale\"", "3 numbers > 0"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"scale\": 1.5e308, \"center\": false}]}",
     {"object 1", "field \"scale\"", "non-finite"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"center\": \"yes\"}]}",
     {"object 1", "field \"center\"", "true or false"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"spacing\": 0.1}]}",
     {"object 1", "field \"spacing\"", "\"lattice\" only"}},
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"fixed\": [2108]}]}",
     {"object 1", "field \"fixed\"", "2108 is outside [0, 2108)"}},
};

static bool contains(const char *text, const char *part) { return part == NULL || strstr(text, part) != NULL; }

static void each_bad_input_names_its_field(void)
{
    const int count = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < count; c++) {
        char json[2048];
        if (cases[c].object_fields) {
            const char *at = strchr(base, '@');
            snprintf(json, sizeof json, "%.*s%s%s", (int)(at - base), base, cases[c].object_fields, at + 1);
        } else {
            snprintf(json, sizeof json, "%s", cases[c].scene);
        }
        sm_scene *scene = (sm_scene *)&json; // poisoned: a failed load must set it to NULL
        sm_result r = sm_scene_load_string(json, "test", &scene);
        bool ok = r == SM_ERROR_SCENE && scene == NULL && contains(sm_last_error(), "test");
        for (int k = 0; k < 3; k++) ok = ok && contains(sm_last_error(), cases[c].expect[k]);
        if (!ok) {
            fprintf(stderr, "case %d: %s\n  got %s: %s\n", c, json, sm_result_name(r), sm_last_error());
            sm_test_failures++;
        }
        if (r == SM_OK) sm_scene_destroy(scene);
    }
}

/// Problems that only appear when the shape is sampled are reported by sm_scene_create_world
/// with the object index.
static void world_errors_name_the_object(void)
{
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"torus\", \"major_radius\": 1,"
                                   " \"minor_radius\": 0.1, \"spacing\": 0.6}]}",
                                   "test", &scene));
    sm_world *world = NULL;
    ENSURE(create_world(scene, SM_BACKEND_CPU, &world) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(world == NULL);
    ENSURE(contains(sm_last_error(), "object 1") && contains(sm_last_error(), "no lattice point"));
    sm_scene_destroy(scene);

    // inputs whose sizes or sums leave the doubles: refused with a sentence, without hanging
    const char *extreme[][2] = {
        {"{\"objects\": [{\"shape\": \"sphere\", \"radius\": 1e300, \"spacing\": 1e-10}]}", "too fine"},
        {"{\"objects\": [{\"shape\": \"sphere\", \"radius\": 1.1e6, \"spacing\": 1}]}", "too fine"},
        {"{\"objects\": [{\"shape\": \"points\", \"points\": [[-1e308, 0, 0], [1e308, 0, 0]], \"clusters\": {\"grid\": [2, 1, 1]}}]}",
         "extent is not finite"},
        {"{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0]], \"masses\": [1e308, 1e308]}]}", "[1e-30, 1e+12]"},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": 1e-320}]}", "[1e-12, 1e+12]"},
        {"{\"objects\": [{\"shape\": \"box\", \"resolution\": [79, 79, 79], \"clusters\": {\"grid\": [24, 24, 24], \"overlap\": 10}}]}",
         "cluster memberships"},
    };
    for (size_t k = 0; k < sizeof extreme / sizeof extreme[0]; k++) {
        scene = NULL;
        world = NULL;
        sm_result r = sm_scene_load_string(extreme[k][0], "test", &scene);
        if (r == SM_OK) r = create_world(scene, SM_BACKEND_CPU, &world);
        if (r == SM_OK || !contains(sm_last_error(), extreme[k][1])) {
            fprintf(stderr, "extreme case %zu: %s\n  got %s: %s\n", k, extreme[k][0], sm_result_name(r), sm_last_error());
            sm_test_failures++;
        }
        sm_world_destroy(world);
        sm_scene_destroy(scene);
    }

    // a def not made by its constructor is refused
    sm_world_def zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    ENSURE(sm_world_create(&zeroed, &world) == SM_ERROR_INVALID_ARGUMENT);
    ENSURE(contains(sm_last_error(), "sm_world_def_default"));
    // a device that does not exist is named in the error
    sm_world_def def = sm_world_def_default();
    def.backend = SM_BACKEND_OPENCL;
    def.device = "no such device";
    const sm_result r = sm_world_create(&def, &world);
    ENSURE((r == SM_ERROR_INVALID_ARGUMENT && contains(sm_last_error(), "no such device")) ||
           (r == SM_ERROR_UNAVAILABLE && contains(sm_last_error(), "not part of this build")));
}

static void file_errors_name_the_file(void)
{
    sm_scene *scene = NULL;
    ENSURE(sm_scene_load_file("/nonexistent/scene.json", &scene) == SM_ERROR_IO);
    ENSURE(contains(sm_last_error(), "/nonexistent/scene.json") && contains(sm_last_error(), "No such file"));
    ENSURE(sm_scene_load_file("/", &scene) == SM_ERROR_IO); // a directory: fopen or fread fails
    ENSURE(contains(sm_last_error(), "cannot read") || contains(sm_last_error(), "cannot open"));
    ENSURE(scene == NULL);
}

static const char *const valid =
    "{\"name\": \"fuzz\", \"dt\": 0.02, \"substeps\": 2, \"gravity\": [0, -9.81, 0],"
    " \"ground\": {\"height\": 0, \"restitution\": 0.3, \"friction\": 0.2}, \"objects\": ["
    " {\"name\": \"a\", \"shape\": \"box\", \"resolution\": [3, 3, 3], \"position\": [0, 1, 0], \"mode\": \"quadratic\","
    "  \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.3}, \"plasticity\": {\"yield\": 0.1, \"creep\": 2, \"max\": 0.3},"
    "  \"cap\": {\"soft\": 4, \"hard\": 6}, \"fixed\": [0, 1]},"
    " {\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], \"masses\": [1, 2, 3, 4],"
    "  \"clusters\": {\"lists\": [[0, 1, 2, 3], [1, 2]]}, \"tau\": 0.1}]}";

/// Loads `text` and, if that works, builds and steps its world; returns whether it loaded.
static bool load_and_step(const char *text)
{
    sm_scene *scene = NULL;
    if (sm_scene_load_string(text, "fuzz", &scene) != SM_OK) {
        ENSURE(scene == NULL && sm_last_error()[0] != '\0');
        return false;
    }
    sm_world *world = NULL;
    if (create_world(scene, SM_BACKEND_CPU, &world) == SM_OK) {
        sm_world_step(world, 0.01, 1);
        sm_world_destroy(world);
    }
    sm_scene_destroy(scene);
    return true;
}

/// Every truncation and thousands of byte mutations of a valid scene either load or fail with a
/// message; none crashes (run under a sanitizer or valgrind to check memory too).
static void truncated_and_mutated_scenes_fail_cleanly(void)
{
    const size_t n = strlen(valid);
    char *text = malloc(n + 1);
    ENSURE(load_and_step(valid));
    for (size_t cut = 0; cut < n; cut++) {
        memcpy(text, valid, cut);
        text[cut] = '\0';
        ENSURE(!load_and_step(text));
    }
    rng r = {99};
    const char alphabet[] = "{}[]\",:0123456789.-eE abcxyz\\ntrufalsenul";
    int loaded = 0;
    for (int trial = 0; trial < 5000; trial++) {
        memcpy(text, valid, n + 1);
        int edits = 1 + (int)rng_uniform(&r, 0, 3);
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)rng_uniform(&r, 0, (double)n);
            text[at] = alphabet[(size_t)rng_uniform(&r, 0, (double)(sizeof alphabet - 1))];
        }
        loaded += load_and_step(text);
    }
    ENSURE(loaded > 0 && loaded < 5000); // both outcomes were exercised
    free(text);
}

/// A valid scene round-trips its settings and object parameters.
static void valid_scene_loads_its_values(void)
{
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(valid, "valid", &scene));
    if (!scene) return;
    sm_scene_info info = sm_scene_get_info(scene);
    ENSURE(info.dt == 0.02 && info.substeps == 2 && info.object_count == 2 && info.steps == 600);
    sm_world_def wd = sm_scene_world_def(scene);
    ENSURE(wd.ground.enabled && wd.ground.restitution == 0.3 && wd.gravity.y == -9.81);
    const sm_object_def *a = sm_scene_object_def(scene, 0), *b = sm_scene_object_def(scene, 1);
    ENSURE(a && b && sm_scene_object_def(scene, 2) == NULL);
    ENSURE(a->mode == SM_MODE_QUADRATIC && a->clusters.grid[1] == 2 && a->clusters.overlap == 0.3);
    ENSURE(a->plasticity.enabled && a->plasticity.creep == 2 && a->cap.enabled && a->cap.hard == 6 && a->fixed_count == 2);
    ENSURE(b->shape.type == SM_SHAPE_POINTS && b->shape.point_count == 4 && b->shape.point_masses[3] == 4);
    ENSURE(b->clusters.list_count == 2 && b->clusters.list_offsets[2] == 6 && b->tau == 0.1);
    sm_world *world = NULL;
    ENSURE_OK(create_world(scene, SM_BACKEND_CPU, &world));
    sm_counts counts = sm_world_get_counts(world);
    ENSURE(counts.objects == 2 && counts.particles == 31 && counts.clusters == 10);
    sm_object_info oi;
    ENSURE_OK(sm_world_get_object(world, 1, &oi));
    ENSURE(oi.mass == 10.0 && oi.first_particle == 27 && strcmp(oi.name, "") == 0);
    ENSURE(sm_world_get_object(world, 2, &oi) == SM_ERROR_INVALID_ARGUMENT);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// Bounding box of n points (3 doubles each).
static void bounds(const double *xyz, int32_t n, sm_vec3 *lo, sm_vec3 *hi)
{
    *lo = (sm_vec3){INFINITY, INFINITY, INFINITY};
    *hi = (sm_vec3){-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < n; i++) {
        *lo = (sm_vec3){fmin(lo->x, xyz[3 * i]), fmin(lo->y, xyz[3 * i + 1]), fmin(lo->z, xyz[3 * i + 2])};
        *hi = (sm_vec3){fmax(hi->x, xyz[3 * i]), fmax(hi->y, xyz[3 * i + 1]), fmax(hi->z, xyz[3 * i + 2])};
    }
}

/// Loads a one-object scene from JSON and builds its world on the CPU reference (NULL and a
/// counted failure when either fails).
static sm_world *mesh_world(const char *json, sm_scene **out_scene)
{
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    ENSURE_OK(sm_scene_load_string(json, "mesh", &scene));
    if (scene) ENSURE_OK(create_world(scene, SM_BACKEND_CPU, &world));
    if (!world) {
        sm_scene_destroy(scene);
        scene = NULL;
    }
    *out_scene = scene;
    return world;
}

/// The duck as its welded vertices, as a lattice inside it and without its surface.
static void mesh_objects_load_the_duck(void)
{
    sm_scene *scene = NULL;
    sm_world *world = mesh_world("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" DUCK "\"}]}", &scene);
    if (!world) return;
    sm_object_info oi;
    ENSURE_OK(sm_world_get_object(world, 0, &oi));
    ENSURE(oi.shape == SM_SHAPE_MESH && oi.particle_count == 2108);
    ENSURE(oi.first_surface_vertex == 0 && oi.surface_vertex_count == 2108 && oi.surface_triangle_count == 4212);
    ENSURE(sm_world_get_surface_vertex_count(world) == 2108);
    const int32_t *triangles = NULL;
    int32_t triangle_count = 0;
    ENSURE_OK(sm_world_get_surface_triangles(world, 0, &triangles, &triangle_count));
    ENSURE(triangles != NULL && triangle_count == 4212);
    const sm_object_def *def = sm_scene_object_def(scene, 0);
    ENSURE(def->shape.mesh_particles == SM_MESH_PARTICLES_VERTICES && def->surface.enabled);
    ENSURE(def->shape.mesh_vertex_count == 2108 && def->shape.mesh_triangle_count == 4212);
    sm_world_destroy(world);
    sm_scene_destroy(scene);

    // a lattice inside: every particle within the mesh's bounding box; the surface is the mesh
    world = mesh_world("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"particles\": \"lattice\","
                       " \"spacing\": 0.1, \"position\": [0, 1, 0], \"clusters\": {\"grid\": [2, 2, 2]}}]}",
                       &scene);
    if (!world) return;
    ENSURE_OK(sm_world_get_object(world, 0, &oi));
    ENSURE(oi.particle_count > 100 && oi.particle_count < 2108 && oi.spacing == 0.1);
    ENSURE(oi.surface_vertex_count == 2108 && oi.surface_triangle_count == 4212);
    def = sm_scene_object_def(scene, 0);
    ENSURE(def->shape.mesh_particles == SM_MESH_PARTICLES_LATTICE && def->shape.spacing == 0.1);
    double *vertices = malloc(sizeof(double) * 3 * 2108);
    for (int32_t i = 0; i < def->shape.mesh_vertex_count && i < 2108; i++) {
        vertices[3 * i] = def->shape.mesh_vertices[i].x;
        vertices[3 * i + 1] = def->shape.mesh_vertices[i].y + 1.0;
        vertices[3 * i + 2] = def->shape.mesh_vertices[i].z;
    }
    sm_vec3 lo, hi;
    bounds(vertices, 2108, &lo, &hi);
    double *rest = get_rest_positions(world);
    for (int32_t p = 0; p < oi.particle_count; p++) {
        ENSURE(rest[3 * p] >= lo.x && rest[3 * p + 1] >= lo.y && rest[3 * p + 2] >= lo.z);
        ENSURE(rest[3 * p] <= hi.x && rest[3 * p + 1] <= hi.y && rest[3 * p + 2] <= hi.z);
    }
    free(rest);
    free(vertices);
    sm_world_destroy(world);
    sm_scene_destroy(scene);

    // "surface": false: the particles alone
    world = mesh_world("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"surface\": false}]}", &scene);
    if (!world) return;
    ENSURE_OK(sm_world_get_object(world, 0, &oi));
    ENSURE(oi.particle_count == 2108 && oi.surface_vertex_count == 0 && sm_world_get_surface_vertex_count(world) == 0);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// "scale" multiplies the file's coordinates; "center" puts the bounding box's centre on
/// "position" (false: the file's origin goes there).
static void mesh_scale_and_center_act(void)
{
    sm_mesh mesh;
    ENSURE_OK(sm_mesh_load_file(DUCK, &mesh));
    if (mesh.vertex_count == 0) return;
    double *file = malloc(sizeof(double) * 3 * (size_t)mesh.vertex_count);
    for (int32_t i = 0; i < mesh.vertex_count; i++)
        file[3 * i] = mesh.vertices[i].x, file[3 * i + 1] = mesh.vertices[i].y, file[3 * i + 2] = mesh.vertices[i].z;
    sm_vec3 file_lo, file_hi;
    bounds(file, mesh.vertex_count, &file_lo, &file_hi);
    free(file);
    const int32_t count = mesh.vertex_count;
    sm_mesh_free(&mesh);

    sm_scene *scene = NULL;
    sm_world *world = mesh_world("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"scale\": [2, 1, 0.5],"
                                 " \"position\": [1, 2, 3]}]}", &scene);
    if (!world) return;
    ENSURE(sm_world_get_counts(world).particles == count);
    double *rest = get_rest_positions(world);
    sm_vec3 lo, hi;
    bounds(rest, count, &lo, &hi);
    ENSURE_SMALL(0.5 * (lo.x + hi.x) - 1.0, 1e-9);
    ENSURE_SMALL(0.5 * (lo.y + hi.y) - 2.0, 1e-9);
    ENSURE_SMALL(0.5 * (lo.z + hi.z) - 3.0, 1e-9);
    ENSURE_SMALL((hi.x - lo.x) - 2.0 * (file_hi.x - file_lo.x), 1e-9);
    ENSURE_SMALL((hi.y - lo.y) - 1.0 * (file_hi.y - file_lo.y), 1e-9);
    ENSURE_SMALL((hi.z - lo.z) - 0.5 * (file_hi.z - file_lo.z), 1e-9);
    free(rest);
    sm_world_destroy(world);
    sm_scene_destroy(scene);

    world = mesh_world("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" DUCK "\", \"scale\": 3, \"center\": false,"
                       " \"position\": [1, 2, 3]}]}", &scene);
    if (!world) return;
    rest = get_rest_positions(world);
    bounds(rest, count, &lo, &hi);
    ENSURE_SMALL(lo.x - (1.0 + 3.0 * file_lo.x), 1e-9);
    ENSURE_SMALL(lo.y - (2.0 + 3.0 * file_lo.y), 1e-9);
    ENSURE_SMALL(hi.z - (3.0 + 3.0 * file_hi.z), 1e-9);
    ENSURE_SMALL((hi.x - lo.x) - 3.0 * (file_hi.x - file_lo.x), 1e-9);
    free(rest);
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// A relative "mesh" path is taken from the scene file's folder when the scene is a file (by an
/// absolute or a relative path, from any working directory), and from the working directory
/// for a scene given as a string.
static void mesh_paths_are_relative_to_the_scene_file(void)
{
    static const char cube[] = "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n"
                               "property float z\nelement face 12\nproperty list uchar int vertex_indices\nend_header\n"
                               "-1 -1 -1\n1 -1 -1\n1 1 -1\n-1 1 -1\n-1 -1 1\n1 -1 1\n1 1 1\n-1 1 1\n"
                               "3 0 2 1\n3 0 3 2\n3 4 5 6\n3 4 6 7\n3 0 1 5\n3 0 5 4\n"
                               "3 2 3 7\n3 2 7 6\n3 1 2 6\n3 1 6 5\n3 0 4 7\n3 0 7 3\n";
    static const char json[] = "{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"cube.ply\", \"scale\": 0.5}]}";
    const char *folder = SM_TEST_TMP "/scene_mesh";
    mkdir(folder, 0755);
    ENSURE(write_text_file(SM_TEST_TMP "/scene_mesh/cube.ply", cube));
    ENSURE(write_text_file(SM_TEST_TMP "/scene_mesh/scene.json", json));
    char cwd[4096];
    ENSURE(getcwd(cwd, sizeof cwd) != NULL);

    const char *paths[] = {SM_TEST_TMP "/scene_mesh/scene.json", "scene_mesh/scene.json"};
    const char *cwds[] = {"/", SM_TEST_TMP};
    for (int k = 0; k < 2; k++) {
        ENSURE(chdir(cwds[k]) == 0);
        sm_scene *scene = NULL;
        ENSURE_OK(sm_scene_load_file(paths[k], &scene));
        const sm_object_def *def = scene ? sm_scene_object_def(scene, 0) : NULL;
        ENSURE(def && def->shape.mesh_vertex_count == 8 && def->shape.mesh_triangle_count == 12);
        ENSURE(def && def->shape.mesh_vertices[6].x == 0.5 && def->shape.mesh_vertices[0].y == -0.5);
        sm_scene_destroy(scene);
    }
    // a string: from the working directory
    ENSURE(chdir("/") == 0);
    sm_scene *scene = NULL;
    ENSURE(sm_scene_load_string(json, "string", &scene) == SM_ERROR_SCENE && scene == NULL);
    ENSURE(contains(sm_last_error(), "string: object 0: field \"mesh\"") && contains(sm_last_error(), "cube.ply"));
    ENSURE(chdir(folder) == 0);
    ENSURE_OK(sm_scene_load_string(json, "string", &scene));
    sm_scene_destroy(scene);
    ENSURE(chdir(cwd) == 0);
}

/// A file assimp cannot read fails with assimp's reason, the object and the field.
static void non_mesh_files_fail_with_assimps_reason(void)
{
    ENSURE(write_text_file(SM_TEST_TMP "/not_a_mesh.txt", "this is not a mesh\n"));
    sm_scene *scene = NULL;
    ENSURE(sm_scene_load_string("{\"objects\": [{\"shape\": \"mesh\", \"mesh\": \"" SM_TEST_TMP "/not_a_mesh.txt\"}]}",
                                "test", &scene) == SM_ERROR_SCENE);
    ENSURE(scene == NULL);
    ENSURE(contains(sm_last_error(), "test: object 0: field \"mesh\"") && contains(sm_last_error(), "not_a_mesh.txt") &&
           contains(sm_last_error(), "assimp"));
}

/// The solver step dt / substeps is checked when the scene loads, with the bound sm_world_step()
/// checks: a scene at the bound loads and steps, one just past it is refused naming the fields.
static void solver_step_is_checked_at_load(void)
{
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"dt\": 1e-8, \"substeps\": 10, \"objects\": [{\"shape\": \"box\"}]}", "test", &scene));
    sm_world *world = NULL;
    if (scene && create_world(scene, SM_BACKEND_CPU, &world) == SM_OK) {
        ENSURE_OK(sm_scene_step(scene, world));
        sm_world_destroy(world);
    }
    sm_scene_destroy(scene);
    scene = NULL;
    ENSURE(sm_scene_load_string("{\"dt\": 1e-8, \"substeps\": 11, \"objects\": [{\"shape\": \"box\"}]}", "test", &scene) ==
           SM_ERROR_SCENE);
    ENSURE(scene == NULL);
    ENSURE(contains(sm_last_error(), "test: field \"substeps\": the solver step dt / substeps must be in [1e-09, 10] s") &&
           contains(sm_last_error(), "at most 10 substeps"));
}

/// Collects the notices a world logs.
static void collect_notices(sm_log_level level, const char *message, void *user)
{
    if (level != SM_LOG_NOTICE) return;
    char *notices = user;
    const size_t used = strlen(notices);
    snprintf(notices + used, 1024 - used, "%s\n", message);
}

/// collisions.skin, a setting since removed, still loads (in its old range, [0, 10]) and is
/// ignored with a notice when the world is made: the world steps exactly as without it.
static void removed_skin_loads_with_a_notice(void)
{
    static char notices[1024];
    const char *with = "{\"collisions\": {\"skin\": 2}, \"objects\": [{\"shape\": \"box\"},"
                       " {\"shape\": \"box\", \"position\": [0.2, 0.9, 0]}]}";
    const char *without = "{\"collisions\": {}, \"objects\": [{\"shape\": \"box\"},"
                          " {\"shape\": \"box\", \"position\": [0.2, 0.9, 0]}]}";
    double x[2][3 * 128];
    for (int k = 0; k < 2; k++) {
        sm_scene *scene = NULL;
        ENSURE_OK(sm_scene_load_string(k == 0 ? with : without, "test", &scene));
        if (!scene) return;
        sm_world_def def = sm_scene_world_def(scene);
        def.backend = SM_BACKEND_CPU;
        def.log = collect_notices, def.log_user = notices;
        notices[0] = '\0';
        sm_world *world = NULL;
        ENSURE_OK(sm_scene_create_world(scene, &def, &world));
        ENSURE(contains(notices, "collisions.skin is ignored") == (k == 0));
        if (world) {
            ENSURE(sm_world_get_counts(world).particles == 128);
            ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 30));
            ENSURE_OK(sm_world_get_positions(world, 0, 128, x[k]));
            sm_world_destroy(world);
        }
        sm_scene_destroy(scene);
    }
    ENSURE(memcmp(x[0], x[1], sizeof x[0]) == 0);
    sm_scene *scene = NULL;
    ENSURE(sm_scene_load_string("{\"collisions\": {\"skin\": 11}, \"objects\": [{\"shape\": \"box\"}]}", "test", &scene) ==
           SM_ERROR_SCENE);
    ENSURE(scene == NULL && contains(sm_last_error(), "collisions.skin"));
}

/// A linear motion with tens of thousands of keyframes loads (in time linear in their number)
/// and the collider follows them: each time pairs with its own offset.
static void many_keyframes_load_and_move(void)
{
    enum { keyframes = 20000 };
    const size_t size = 64 * (size_t)keyframes + 512;
    char *json = malloc(size);
    size_t used = (size_t)snprintf(json, size, "{\"gravity\": [0, 0, 0], \"colliders\": [{\"shape\": \"sphere\", "
                                               "\"position\": [0, -5, 0], \"motion\": {\"type\": \"linear\", \"times\": [");
    for (int k = 0; k < keyframes; k++) used += (size_t)snprintf(json + used, size - used, "%s%.17g", k ? ", " : "", k * 1e-4);
    used += (size_t)snprintf(json + used, size - used, "], \"offsets\": [");
    for (int k = 0; k < keyframes; k++)
        used += (size_t)snprintf(json + used, size - used, "%s[%.17g, %d, %d]", k ? ", " : "", k * 1e-3, k % 2, -k);
    snprintf(json + used, size - used, "]}}], \"objects\": [{\"shape\": \"box\"}]}");
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "keyframes", &scene));
    free(json);
    sm_world *world = NULL;
    if (!scene || create_world(scene, SM_BACKEND_CPU, &world) != SM_OK) {
        ENSURE(false);
        sm_scene_destroy(scene);
        return;
    }
    sm_collider_info c;
    ENSURE_OK(sm_world_get_collider(world, 0, &c));
    ENSURE(c.center.x == 0.0 && c.center.y == -5.0 && c.center.z == 0.0);
    // halfway between keyframes 5000 (t = 0.5 s) and 5001: the mean of their offsets
    ENSURE_OK(sm_world_step(world, 0.50005, 1));
    ENSURE_OK(sm_world_get_collider(world, 0, &c));
    ENSURE_SMALL(c.center.x - 5.0005, 1e-9);
    ENSURE_SMALL(c.center.y - (-5.0 + 0.5), 1e-9);
    ENSURE_SMALL(c.center.z - (-5000.5), 1e-6);
    // after the last keyframe (t = 1.9999 s) it rests at the last offset
    ENSURE_OK(sm_world_step(world, 5.0, 1));
    ENSURE_OK(sm_world_get_collider(world, 0, &c));
    ENSURE_SMALL(c.center.x - (keyframes - 1) * 1e-3, 1e-9);
    ENSURE_SMALL(c.center.y - (-5.0 + (keyframes - 1) % 2), 1e-9);
    ENSURE(c.center.z == -(keyframes - 1));
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// sm_scene_apply() sets, on each particle with springs, a target of every active spring on it as
/// one (the sum of their stiffnesses, toward the mean of their targets weighted by stiffness: the
/// same pull, the sum of k (target - x)) and a force of its object's share of "force" plus their
/// damping, -c v by backward Euler over the frame (c the sum of theirs): with thousands of springs
/// spread over two objects' particles in random order, with windows that open and close, the
/// targets and forces are those, summed independently here, within 1e-12, at every step, and a
/// particle none of whose springs acts has no target.
static void springs_sum_in_file_order(void)
{
    enum { springs = 3000, particles = 8, steps = 40 };
    typedef struct {
        int object, particle;
        double target[3], stiffness, damping, start, stop;
    } spring;
    spring *list = malloc(sizeof *list * springs);
    const size_t size = 256 * (size_t)springs + 512;
    char *json = malloc(size);
    size_t used = (size_t)snprintf(json, size, "{\"dt\": 0.01, \"springs\": [");
    rng r = {7};
    for (int i = 0; i < springs; i++) {
        spring *s = &list[i];
        s->object = (int)rng_uniform(&r, 0, 2);
        s->particle = (int)rng_uniform(&r, 0, particles);
        for (int a = 0; a < 3; a++) s->target[a] = rng_uniform(&r, -2, 2);
        s->stiffness = rng_uniform(&r, 0, 50);
        s->damping = rng_uniform(&r, 0, 0.5);
        s->start = rng_uniform(&r, 0, 0.3);
        s->stop = s->start + rng_uniform(&r, 0.01, 0.3);
        used += (size_t)snprintf(json + used, size - used,
                                 "%s{\"object\": %d, \"particle\": %d, \"target\": [%.17g, %.17g, %.17g], \"stiffness\": %.17g, "
                                 "\"damping\": %.17g, \"start\": %.17g, \"stop\": %.17g}",
                                 i ? ", " : "", s->object, s->particle, s->target[0], s->target[1], s->target[2], s->stiffness,
                                 s->damping, s->start, s->stop);
    }
    snprintf(json + used, size - used,
             "], \"objects\": [{\"shape\": \"box\", \"force\": [1, 2, 3], \"velocity\": [0.5, 0, -1]},"
             " {\"shape\": \"box\", \"position\": [3, 0, 0], \"mass\": 2, \"angular_velocity\": [0, 90, 0]}]}");
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string(json, "springs", &scene));
    free(json);
    sm_world *world = NULL;
    if (!scene || create_world(scene, SM_BACKEND_CPU, &world) != SM_OK) {
        ENSURE(false);
        sm_scene_destroy(scene), free(list);
        return;
    }
    int mismatches = 0, active = 0;
    const double dt = sm_scene_get_info(scene).dt;
    for (int step = 0; step < steps; step++) {
        ENSURE_OK(sm_scene_apply(scene, world));
        const double t = sm_world_get_time(world);
        for (int object = 0; object < 2; object++) {
            sm_object_info info;
            ENSURE_OK(sm_world_get_object(world, object, &info));
            const sm_vec3 share = sm_scene_object_def(scene, object)->force;
            for (int p = 0; p < particles; p++) {
                const int32_t index = info.first_particle + p;
                double mass = 0, v[3], f[3], target[4];
                ENSURE_OK(sm_world_get_masses(world, index, 1, &mass));
                ENSURE_OK(sm_world_get_velocities(world, index, 1, v));
                ENSURE_OK(sm_world_get_forces(world, index, 1, f));
                ENSURE_OK(sm_world_get_targets(world, index, 1, target));
                double k = 0.0, c = 0.0, kp[3] = {0, 0, 0};
                for (int i = 0; i < springs; i++) {
                    const spring *s = &list[i];
                    if (s->object != object || s->particle != p || !(t >= s->start && t < s->stop)) continue;
                    active++;
                    k += s->stiffness, c += s->damping;
                    for (int a = 0; a < 3; a++) kp[a] += s->stiffness * s->target[a];
                }
                // the damping's backward Euler: -c v / (1 + dt c / m)
                const double fraction = mass / info.mass, damp = c / (1.0 + dt * c / mass);
                const double expect[3] = {share.x * fraction - damp * v[0], share.y * fraction - damp * v[1],
                                          share.z * fraction - damp * v[2]};
                bool same = fabs(target[3] - k) <= 1e-12 * k;
                for (int a = 0; a < 3; a++) {
                    same = same && fabs(f[a] - expect[a]) <= 1e-12 * (fabs(expect[a]) + 1.0);
                    if (k > 0.0) same = same && fabs(target[a] - kp[a] / k) <= 1e-12;
                }
                mismatches += !same;
            }
        }
        ENSURE_OK(sm_world_step(world, sm_scene_get_info(scene).dt, sm_scene_get_info(scene).substeps));
    }
    ENSURE(mismatches == 0);
    ENSURE(active > springs); // the windows opened: most springs acted at some step
    sm_world_destroy(world);
    sm_scene_destroy(scene);
    free(list);
}

/// A number too large for a double (JSON has no infinity; 1e999 reads as one) is called out of
/// range wherever the scene takes a number, never printed as null.
static void overflowing_numbers_say_out_of_range(void)
{
    static const char *const cases[][2] = {
        {"{\"dt\": 1e400, \"objects\": [{\"shape\": \"box\"}]}", "field \"dt\": must be a finite number, got a number out of range"},
        {"{\"substeps\": 1e999, \"objects\": [{\"shape\": \"box\"}]}", "field \"substeps\": must be an integer in [1, 100000], got a number out of range"},
        {"{\"gravity\": [0, -1e999, 0], \"objects\": [{\"shape\": \"box\"}]}", "field \"gravity\": must be an array of 3 finite numbers, got [0,<out of range>,0]"},
        {"{\"ground\": {\"height\": -1e999}, \"objects\": [{\"shape\": \"box\"}]}", "field \"ground.height\": must be a finite number, got a number out of range"},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": 1e999}]}", "object 0: field \"mass\": must be a finite number, got a number out of range"},
        {"{\"objects\": [{\"shape\": \"box\", \"resolution\": [4, 1e999, 4]}]}", "field \"resolution\": must be an array of 3 integers in [1, 4096], got [4,<out of range>,4]"},
        {"{\"objects\": [{\"shape\": \"box\", \"fixed\": [0, -1e999]}]}", "field \"fixed\": entry 1 must be a particle index (an integer >= 0), got a number out of range"},
        {"{\"objects\": [{\"shape\": \"box\", \"clusters\": {\"grid\": [[1e999], 1, 1]}}]}", "got [[<out of range>],1,1]"},
        {"{\"colliders\": [{\"shape\": \"sphere\", \"motion\": {\"type\": \"linear\", \"times\": [0, 1e999], \"offsets\": [[0, 0, 0], [1, 0, 0]]}}],"
         " \"objects\": [{\"shape\": \"box\"}]}", "collider 0: field \"motion.times[1]\": must be a finite number, got a number out of range"},
        {"{\"springs\": [{\"object\": 0, \"particle\": 0, \"target\": [0, 0, 0], \"stiffness\": 1e999}], \"objects\": [{\"shape\": \"box\"}]}",
         "spring 0: field \"stiffness\": must be a finite number, got a number out of range"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sm_scene *scene = NULL;
        const sm_result r = sm_scene_load_string(cases[k][0], "test", &scene);
        if (r != SM_ERROR_SCENE || scene || !contains(sm_last_error(), cases[k][1]) || contains(sm_last_error(), "null")) {
            fprintf(stderr, "out-of-range case %zu: %s\n  got %s: %s\n", k, cases[k][0], sm_result_name(r), sm_last_error());
            sm_test_failures++;
        }
        sm_scene_destroy(scene);
    }
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(each_bad_input_names_its_field),
        TEST(world_errors_name_the_object),
        TEST(file_errors_name_the_file),
        TEST(truncated_and_mutated_scenes_fail_cleanly),
        TEST(valid_scene_loads_its_values),
        TEST(mesh_objects_load_the_duck),
        TEST(mesh_scale_and_center_act),
        TEST(mesh_paths_are_relative_to_the_scene_file),
        TEST(non_mesh_files_fail_with_assimps_reason),
        TEST(solver_step_is_checked_at_load),
        TEST(removed_skin_loads_with_a_notice),
        TEST(many_keyframes_load_and_move),
        TEST(springs_sum_in_file_order),
        TEST(overflowing_numbers_say_out_of_range),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
