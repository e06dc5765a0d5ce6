/* Fuzzes the scene loader: the bytes are a scene file, loaded with sm_scene_load_string(); a
 * scene that loads is made into a world on the CPU reference (state check on every step), and
 * run for up to 3 steps through sm_scene_apply() (its cuts and springs) and sm_world_step(),
 * then its objects and clusters are read back and everything is freed.
 *
 * Asserted: a failed call returns an error code with a message of its own; a checked step that
 * returns SM_OK leaves every position and velocity finite. Scenes that name mesh files are not
 * loaded (the fuzzer would only be testing assimp on whatever files it can name; the API harness
 * fuzz_objects feeds meshes through sm_shape instead), nor scenes whose shapes would exceed the
 * bounds of fuzz_common.h. */
#include "fuzz_common.h"

#include <cjson/cJSON.h>

/// Steps run per scene, and solver steps per step at most.
#define SCENE_STEPS 3
#define SCENE_SUBSTEPS 8

static void log_message(sm_log_level level, const char *message, void *user)
{
    (void)user;
    FUZZ_CHECK(level >= SM_LOG_ERROR && level <= SM_LOG_NOTICE, "log level %d", (int)level);
    FUZZ_CHECK(message && strlen(message) < 4096, "a log message is missing or unterminated");
}

static bool names_a_mesh(const cJSON *item)
{
    for (const cJSON *e = item ? item->child : NULL; e; e = e->next)
        if ((e->string && strcmp(e->string, "mesh") == 0) || names_a_mesh(e)) return true;
    return false;
}

static void read_number(const cJSON *object, const char *key, double *out)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(object, key);
    if (cJSON_IsNumber(e)) *out = e->valuedouble;
}

/// A triple of integers of the file; fields that are not numbers within int32 are left (the
/// loader refuses them before sampling anything).
static void read_int3(const cJSON *object, const char *key, int32_t out[3])
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(object, key);
    for (int a = 0; cJSON_IsArray(e) && a < 3 && a < cJSON_GetArraySize(e); a++) {
        const cJSON *v = cJSON_GetArrayItem(e, a);
        if (cJSON_IsNumber(v) && v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX) out[a] = (int32_t)v->valuedouble;
    }
}

/// Whether the scene can be loaded within the bounds: the loader samples a shape to check its
/// `fixed` and `clusters.lists` indices, so the shapes are bounded from the file, before loading.
static bool scene_fits(const char *json)
{
    cJSON *root = cJSON_Parse(json);
    if (!root) return true; // the loader refuses it
    bool fits = !names_a_mesh(root);
    const cJSON *objects = cJSON_GetObjectItemCaseSensitive(root, "objects");
    double particles = 0.0;
    for (const cJSON *o = cJSON_IsArray(objects) ? objects->child : NULL; o && fits; o = o->next) {
        sm_object_def def = sm_object_def_default();
        sm_shape *s = &def.shape;
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
        const char *name = cJSON_IsString(shape) ? shape->valuestring : "box";
        s->type = strcmp(name, "sphere") == 0                                   ? SM_SHAPE_SPHERE
                  : strcmp(name, "capsule") == 0 || strcmp(name, "stick") == 0 ? SM_SHAPE_CAPSULE
                  : strcmp(name, "torus") == 0                                  ? SM_SHAPE_TORUS
                  : strcmp(name, "points") == 0                                 ? SM_SHAPE_POINTS
                                                                                 : SM_SHAPE_BOX;
        read_int3(o, "resolution", s->resolution);
        read_number(o, "radius", &s->radius);
        read_number(o, "length", &s->length);
        read_number(o, "major_radius", &s->major_radius);
        read_number(o, "minor_radius", &s->minor_radius);
        read_number(o, "spacing", &s->spacing);
        const cJSON *points = cJSON_GetObjectItemCaseSensitive(o, "points");
        s->point_count = cJSON_IsArray(points) ? cJSON_GetArraySize(points) : 0;
        const cJSON *clusters = cJSON_GetObjectItemCaseSensitive(o, "clusters");
        read_int3(clusters, "grid", def.clusters.grid);
        read_number(clusters, "overlap", &def.clusters.overlap);
        const double candidates = fuzz_shape_candidates(s);
        fits = fuzz_object_fits(&def, particles);
        if (isfinite(candidates)) particles += candidates;
    }
    cJSON_Delete(root);
    return fits;
}

/// Creates the scene's world, steps it and reads it back.
static void run_scene(const sm_scene *scene)
{
    const sm_scene_info info = sm_scene_get_info(scene);
    FUZZ_CHECK(info.object_count >= 1 && info.dt > 0.0 && info.substeps >= 1 && info.steps >= 0, "scene info");
    double particles = 0.0, work = 0.0; // the work of creating the objects (fuzz_common.h), summed
    for (int32_t i = 0; i < info.object_count; i++) {
        const sm_object_def *def = sm_scene_object_def(scene, i);
        FUZZ_CHECK(def, "object %d of %d has no def", i, info.object_count);
        const double object_work = fuzz_object_work(def, particles);
        if (!(object_work <= FUZZ_MAX_STEP_WORK) || (work += object_work) > FUZZ_MAX_INPUT_WORK) return;
        const double candidates = fuzz_shape_candidates(&def->shape);
        if (isfinite(candidates)) particles += candidates;
    }
    FUZZ_CHECK(sm_scene_object_def(scene, info.object_count) == NULL && sm_scene_object_def(scene, -1) == NULL,
               "a def out of range");

    sm_world_def def = sm_scene_world_def(scene);
    def.backend = SM_BACKEND_CPU;
    def.check_interval = 1;
    def.log = log_message;
    sm_world *world = NULL;
    fuzz_mark_error();
    sm_result r = sm_scene_create_world(scene, &def, &world);
    fuzz_check_result(r, "sm_scene_create_world");
    if (r != SM_OK) {
        FUZZ_CHECK(world == NULL, "a failed sm_scene_create_world left a world");
        return;
    }
    const sm_counts counts = sm_world_get_counts(world);
    FUZZ_CHECK(counts.objects == info.object_count, "the world has %d objects, the scene %d", counts.objects, info.object_count);
    const int32_t substeps = info.substeps < SCENE_SUBSTEPS ? info.substeps : SCENE_SUBSTEPS;
    const int32_t steps = info.steps < SCENE_STEPS ? info.steps : SCENE_STEPS;
    // the steps, and the timed cuts, each of which may rebuild the clusters of the whole world
    const double step_work = fuzz_step_work(world, &def.collisions, substeps);
    const double cut_work = 2.0 * fuzz_rest_work(counts.clusters, counts.memberships) + 9.0 * counts.particles;
    const bool small = counts.particles <= FUZZ_MAX_PARTICLES && step_work <= FUZZ_MAX_STEP_WORK &&
                       cut_work <= FUZZ_MAX_STEP_WORK &&
                       work + step_work * steps + cut_work * info.cut_count <= FUZZ_MAX_INPUT_WORK;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)(counts.particles > 0 ? counts.particles : 1));
    FUZZ_CHECK(xyz, "out of memory");
    for (int32_t s = 0; small && s < steps; s++) {
        fuzz_mark_error();
        r = sm_scene_apply(scene, world);
        fuzz_check_result(r, "sm_scene_apply");
        if (r != SM_OK) break;
        fuzz_mark_error();
        r = sm_world_step(world, info.dt, substeps);
        fuzz_check_result(r, "sm_world_step");
        if (r != SM_OK) break;
        const int32_t n = sm_world_get_counts(world).particles;
        FUZZ_CHECK(n == counts.particles, "the particles went from %d to %d", counts.particles, n);
        for (int pass = 0; pass < 2; pass++) {
            r = pass == 0 ? sm_world_get_positions(world, 0, n, xyz) : sm_world_get_velocities(world, 0, n, xyz);
            FUZZ_CHECK(r == SM_OK, "reading the particles back failed: %s", sm_last_error());
            for (int64_t i = 0; i < 3 * (int64_t)n; i++)
                FUZZ_CHECK(isfinite(xyz[i]), "particle %lld has a non-finite %s after a checked step that returned SM_OK",
                           (long long)(i / 3), pass == 0 ? "position" : "velocity");
        }
    }
    free(xyz);
    // the objects and clusters as the world describes them
    const sm_counts now = sm_world_get_counts(world);
    for (int32_t o = 0; o < now.objects; o++) {
        sm_object_info object;
        r = sm_world_get_object(world, o, &object);
        FUZZ_CHECK(r == SM_OK && object.first_particle >= 0 && object.first_particle + object.particle_count <= now.particles,
                   "object %d: %s", o, sm_last_error());
    }
    for (int32_t c = 0; c < now.clusters && c < 256; c++) {
        sm_cluster_info cluster;
        r = sm_world_get_cluster(world, c, &cluster);
        FUZZ_CHECK(r == SM_OK && cluster.object >= 0 && cluster.object < now.objects, "cluster %d: %s", c, sm_last_error());
    }
    sm_world_destroy(world);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *json = malloc(size + 1);
    FUZZ_CHECK(json, "out of memory");
    memcpy(json, data, size);
    json[size] = '\0';
    if (scene_fits(json)) {
        sm_scene *scene = NULL;
        fuzz_mark_error();
        const sm_result r = sm_scene_load_string(json, "fuzz.json", &scene);
        fuzz_check_result(r, "sm_scene_load_string");
        if (r == SM_OK) {
            run_scene(scene);
            sm_scene_destroy(scene);
        } else {
            FUZZ_CHECK(scene == NULL, "a failed sm_scene_load_string left a scene");
        }
    }
    free(json);
    return 0;
}
