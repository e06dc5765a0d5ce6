/* Scene files: every kind of bad input gives its documented error, naming the object index
 * and the field, and nothing crashes (scenes/README.md, "Rules"). */
#include "support.h"

#include <stdlib.h>

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
    {NULL, "{\"dt\": 1e400, \"objects\": [{\"shape\": \"box\"}]}", {"field \"dt\"", "must be a number"}},
    {NULL, "{\"substeps\": 1.5, \"objects\": [{\"shape\": \"box\"}]}", {"field \"substeps\"", "integer"}},
    {NULL, "{\"substeps\": 0, \"objects\": [{\"shape\": \"box\"}]}", {"field \"substeps\"", "[1, 100000]"}},
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
    {"\"mass\": 0", NULL, {"object 1", "field \"mass\"", "> 0"}},
    {"\"mass\": null", NULL, {"object 1", "field \"mass\"", "must be a number"}},
    {"\"damping\": -1", NULL, {"object 1", "field \"damping\""}},
    {"\"mode\": \"soft\"", NULL, {"object 1", "field \"mode\"", "\"rigid\", \"linear\" or \"quadratic\""}},
    {"\"volume_preservation\": 1", NULL, {"object 1", "field \"volume_preservation\"", "true or false"}},
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
    {NULL, "{\"objects\": [{\"shape\": \"box\"}, {\"shape\": \"points\", \"points\": [[0, 0, 0]], \"masses\": [0]}]}", {"object 1", "field \"masses[0]\"", "> 0"}},
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
        {"{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0]], \"masses\": [1e308, 1e308]}]}", "not finite"},
        {"{\"objects\": [{\"shape\": \"box\", \"mass\": 1e-320}]}", "too small"},
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
    ENSURE(sm_world_create(&def, &world) == SM_ERROR_UNAVAILABLE);
    ENSURE(contains(sm_last_error(), "no such device") || contains(sm_last_error(), "not part of this build"));
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

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(each_bad_input_names_its_field),
        TEST(world_errors_name_the_object),
        TEST(file_errors_name_the_file),
        TEST(truncated_and_mutated_scenes_fail_cleanly),
        TEST(valid_scene_loads_its_values),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
