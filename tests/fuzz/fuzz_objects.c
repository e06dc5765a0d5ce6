/* Fuzzes object creation and the calls on a world through the public API, on the CPU reference.
 * The bytes are a world def followed by a sequence of calls, each with its arguments and def
 * fields drawn from the bytes (fuzz_common.h: doubles include NaN, infinities, negative, tiny
 * and huge values; indices and counts are mostly small but may be any int32).
 *
 * What it asserts is what the API documents:
 *   - every call that fails returns an sm_result error code and sets a message of its own;
 *   - with the state check on (sm_world_def.check_interval), a step that the check covers either
 *     returns SM_OK with every position and velocity finite, or SM_ERROR_NOT_FINITE, and no other
 *     step returns SM_ERROR_NOT_FINITE;
 *   - what the queries return lies where the header says: cluster members and cut particle maps
 *     are particle indices of the world, surface triangles index their object's surface
 *     vertices, a cut keeps every particle and adds one object exactly when it cuts.
 * Crashes, memory errors, leaks and undefined behaviour are reported by the sanitizers. */
#include "fuzz_common.h"

/// The calls the bytes choose from.
enum {
    OP_ADD_OBJECT,
    OP_STEP,
    OP_SET_POSITIONS,
    OP_SET_VELOCITIES,
    OP_SET_FORCE,
    OP_SET_TARGET,
    OP_SET_PARAMS,
    OP_RESET_OBJECT,
    OP_SET_PUSHER,
    OP_ADD_COLLIDER,
    OP_CUT,
    OP_QUERY,
    OP_COUNT
};

/// Calls one input may make: enough for a few objects, colliders, edits, cuts and steps.
#define MAX_CALLS 48

typedef struct harness {
    fuzz_input in;
    sm_world *world;
    sm_world_def def;
    int64_t checked_calls; ///< sm_world_step() calls that passed their argument checks
    double work;           ///< the bounds on the work of the calls made (fuzz_common.h), summed
} harness;

/// Whether a call of `work` (fuzz_common.h's estimates) fits the bounds on one call and on the
/// input; when it does, it is counted.
static bool take_work(harness *h, double work)
{
    if (!(work <= FUZZ_MAX_STEP_WORK) || h->work + work > FUZZ_MAX_INPUT_WORK) return false;
    h->work += work;
    return true;
}

static void log_message(sm_log_level level, const char *message, void *user)
{
    (void)user;
    FUZZ_CHECK(level >= SM_LOG_ERROR && level <= SM_LOG_NOTICE, "log level %d", (int)level);
    FUZZ_CHECK(message && strlen(message) < 4096, "a log message is missing or unterminated");
}

/// A particle or object index: mostly near the valid range [0, n), sometimes any int32.
static int32_t pick_index(fuzz_input *in, int32_t n)
{
    const uint8_t b = fuzz_u8(in);
    if (b >= 0xf0) return fuzz_i32(in);
    if (b >= 0xe0) return n + (b & 15) - 8; // around the end
    return n > 0 ? (int32_t)(b % (uint32_t)n) : (int32_t)(b & 3) - 1;
}

/// Allocates `count` vec3 from the bytes (NULL when count is 0).
static sm_vec3 *take_vec3s(fuzz_input *in, int32_t count)
{
    if (count <= 0) return NULL;
    sm_vec3 *v = malloc(sizeof *v * (size_t)count);
    FUZZ_CHECK(v, "out of memory");
    for (int32_t i = 0; i < count; i++) v[i] = fuzz_vec3(in);
    return v;
}

/// Allocates `count` indices: mostly in [-1, limit], sometimes any int32.
static int32_t *take_indices(fuzz_input *in, int32_t count, int32_t limit)
{
    if (count <= 0) return NULL;
    int32_t *v = malloc(sizeof *v * (size_t)count);
    FUZZ_CHECK(v, "out of memory");
    for (int32_t i = 0; i < count; i++) {
        const uint8_t b = fuzz_u8(in);
        v[i] = b >= 0xf8 ? fuzz_i32(in) : (int32_t)(b % (uint32_t)(limit + 2)) - 1;
    }
    return v;
}

/// What an object def points at, freed after the call (the library copies it).
typedef struct def_storage {
    char name[16];
    sm_vec3 *points, *mesh_vertices, *surface_vertices;
    double *point_masses;
    int32_t *mesh_triangles, *surface_triangles, *list_offsets, *list_indices, *fixed;
} def_storage;

static void free_storage(def_storage *s)
{
    free(s->points), free(s->mesh_vertices), free(s->surface_vertices), free(s->point_masses);
    free(s->mesh_triangles), free(s->surface_triangles), free(s->list_offsets), free(s->list_indices), free(s->fixed);
}

static void fill_shape(fuzz_input *in, sm_shape *shape, def_storage *s)
{
    const uint8_t kind = fuzz_u8(in);
    shape->type = (sm_shape_type)(kind % 7); // 6: not a shape type
    if (kind >= 0xf8) shape->type = (sm_shape_type)fuzz_i32(in);
    const uint8_t fields = fuzz_u8(in);
    switch (shape->type) {
    case SM_SHAPE_BOX:
        if (fields & 1) shape->size = fuzz_vec3(in);
        if (fields & 2)
            for (int a = 0; a < 3; a++) shape->resolution[a] = fuzz_int(in, -1);
        break;
    case SM_SHAPE_SPHERE:
    case SM_SHAPE_CAPSULE:
    case SM_SHAPE_TORUS:
        if (fields & 1) shape->radius = fuzz_double(in);
        if (fields & 2) shape->length = fuzz_double(in);
        if (fields & 4) shape->major_radius = fuzz_double(in);
        if (fields & 8) shape->minor_radius = fuzz_double(in);
        if (fields & 16) shape->spacing = fuzz_double(in);
        break;
    case SM_SHAPE_POINTS: {
        const int32_t n = fuzz_u8(in) % 40;
        s->points = take_vec3s(in, n);
        shape->points = s->points;
        shape->point_count = (fields & 1) ? fuzz_int(in, -1) : n; // a count that disagrees: only below n
        if (shape->point_count > n) shape->point_count = n;
        if (fields & 2 && n > 0) {
            s->point_masses = malloc(sizeof(double) * (size_t)n);
            FUZZ_CHECK(s->point_masses, "out of memory");
            for (int32_t i = 0; i < n; i++) s->point_masses[i] = (fields & 4) ? fuzz_double(in) : 1.0 + i;
            shape->point_masses = s->point_masses;
        }
        break;
    }
    case SM_SHAPE_MESH: {
        const int32_t nv = fuzz_u8(in) % 64, nt = fuzz_u8(in) % 64;
        s->mesh_vertices = take_vec3s(in, nv);
        s->mesh_triangles = take_indices(in, 3 * nt, nv);
        shape->mesh_vertices = s->mesh_vertices;
        shape->mesh_vertex_count = nv;
        shape->mesh_triangles = s->mesh_triangles;
        shape->mesh_triangle_count = nt;
        if (fields & 1) shape->mesh_triangle_count = -(fields >> 4);
        shape->mesh_particles = (sm_mesh_particles)((fields >> 1) % 3); // 2: unknown
        if (fields & 8) shape->spacing = fuzz_double(in);
        break;
    }
    default: break;
    }
}

static void fill_clusters(fuzz_input *in, sm_cluster_def *c, def_storage *s)
{
    const uint8_t kind = fuzz_u8(in);
    if (!(kind & 1)) {
        if (kind & 2)
            for (int a = 0; a < 3; a++) c->grid[a] = fuzz_int(in, 0);
        if (kind & 4) c->overlap = fuzz_double(in);
        return;
    }
    // explicit lists in CSR form; the offsets stay within the index array (the API's contract)
    // but may start elsewhere than 0, go backwards or leave lists empty
    const int32_t lists = fuzz_u8(in) % 6, total = fuzz_u8(in) % 40;
    s->list_indices = take_indices(in, total, 64);
    if (!s->list_indices) {
        s->list_indices = malloc(sizeof(int32_t));
        FUZZ_CHECK(s->list_indices, "out of memory");
        s->list_indices[0] = 0;
    }
    s->list_offsets = malloc(sizeof(int32_t) * (size_t)(lists + 1));
    FUZZ_CHECK(s->list_offsets, "out of memory");
    s->list_offsets[0] = (kind & 2) ? fuzz_u8(in) % (total + 1) : 0;
    for (int32_t k = 1; k <= lists; k++) {
        const uint8_t b = fuzz_u8(in);
        int32_t next = (b & 0x80) ? (b & 0x7f) % (total + 1) : s->list_offsets[k - 1] + (b & 7);
        s->list_offsets[k] = next > total ? total : next;
    }
    if ((kind & 4) && lists > 0) s->list_offsets[lists] = total; // every index used
    c->list_offsets = s->list_offsets;
    c->list_indices = s->list_indices;
    c->list_count = (kind & 8) ? (int32_t)(fuzz_u8(in) % (lists + 1)) : lists;
    if (kind & 16) c->list_count = -c->list_count;
}

static void fill_object_def(fuzz_input *in, sm_object_def *d, def_storage *s)
{
    fill_shape(in, &d->shape, s);
    const uint32_t fields = fuzz_u32(in);
    if (fields & (1u << 0)) d->position = fuzz_vec3(in);
    if (fields & (1u << 1)) d->rotation = fuzz_vec3(in);
    if (fields & (1u << 2)) d->linear_velocity = fuzz_vec3(in);
    if (fields & (1u << 3)) d->angular_velocity = fuzz_vec3(in);
    if (fields & (1u << 4)) d->mass = fuzz_double(in);
    if (fields & (1u << 5)) {
        const uint8_t mode = fuzz_u8(in);
        d->mode = mode < 0xf0 ? (sm_mode)(mode % 4) : (sm_mode)fuzz_i32(in); // 3: not a mode
    }
    if (fields & (1u << 6)) d->alpha = fuzz_double(in);
    if (fields & (1u << 7)) d->tau = fuzz_double(in);
    if (fields & (1u << 8)) d->beta = fuzz_double(in);
    if (fields & (1u << 9)) d->volume_preservation = !d->volume_preservation;
    if (fields & (1u << 10)) fill_clusters(in, &d->clusters, s);
    if (fields & (1u << 11)) {
        d->plasticity.enabled = fuzz_bool(in);
        d->plasticity.yield = fuzz_double(in);
        d->plasticity.creep = fuzz_double(in);
        d->plasticity.max = fuzz_double(in);
    }
    if (fields & (1u << 12)) {
        d->cap.enabled = fuzz_bool(in);
        d->cap.soft = fuzz_double(in);
        d->cap.hard = fuzz_double(in);
    }
    if (fields & (1u << 13)) d->damping = fuzz_double(in);
    if (fields & (1u << 14)) {
        const int32_t n = fuzz_u8(in) % 10;
        s->fixed = take_indices(in, n, 64);
        d->fixed = s->fixed;
        d->fixed_count = n;
        if (n == 0 && (fields & (1u << 15))) d->fixed_count = 1; // a count without indices
    }
    if (fields & (1u << 16)) d->force = fuzz_vec3(in);
    if (fields & (1u << 17)) {
        d->collisions.enabled = fuzz_bool(in);
        d->collisions.self = fuzz_bool(in);
        d->collisions.radius = fuzz_double(in);
        d->collisions.radius_scale = fuzz_double(in);
    }
    if (fields & (1u << 18)) {
        const int32_t nv = fuzz_u8(in) % 64, nt = fuzz_u8(in) % 64;
        s->surface_vertices = take_vec3s(in, nv);
        s->surface_triangles = take_indices(in, 3 * nt, nv);
        d->surface = (sm_surface){s->surface_vertices, nv, s->surface_triangles, nt, fuzz_bool(in)};
        if (fields & (1u << 19)) d->surface.vertex_count = -nv; // counts that disagree with the arrays
        if (fields & (1u << 20)) d->surface.triangle_count = -nt;
    }
    if (fields & (1u << 21)) {
        const size_t n = fuzz_u8(in) % sizeof s->name;
        for (size_t i = 0; i < n; i++) s->name[i] = (char)(fuzz_u8(in) | 1);
        d->name = s->name;
    }
    if ((fields & (1u << 22)) && (fields & (1u << 23))) d->internal_value = 0; // not from the default constructor
}

static void add_object(harness *h)
{
    sm_object_def def = sm_object_def_default();
    def_storage storage;
    memset(&storage, 0, sizeof storage);
    fill_object_def(&h->in, &def, &storage);
    const sm_counts before = sm_world_get_counts(h->world);
    if (take_work(h, fuzz_object_work(&def, before.particles))) {
        int32_t index = -2;
        fuzz_mark_error();
        const sm_result r = sm_world_add_object(h->world, &def, fuzz_bool(&h->in) ? &index : NULL);
        fuzz_check_result(r, "sm_world_add_object");
        const sm_counts after = sm_world_get_counts(h->world);
        if (r == SM_OK) {
            FUZZ_CHECK(after.objects == before.objects + 1 && after.particles > before.particles,
                       "an added object changed the counts from %d objects, %d particles to %d, %d", before.objects,
                       before.particles, after.objects, after.particles);
            FUZZ_CHECK(index == -2 || index == before.objects, "the new object's index is %d of %d", index, after.objects);
        }
    }
    free_storage(&storage);
}

/// Whether the state check covers the sm_world_step() call that just passed its argument checks.
static bool check_covers(harness *h)
{
    const int32_t interval = h->def.check_interval;
    return interval > 0 && ++h->checked_calls % interval == 0;
}

static void step(harness *h)
{
    fuzz_input *in = &h->in;
    const double dt = fuzz_double(in);
    const uint8_t b = fuzz_u8(in);
    int32_t substeps = b < 0xf0 ? (int32_t)(b % 11) - 2 : fuzz_i32(in);
    // many substeps only where the library must refuse them (dt / substeps under its shortest step)
    if (substeps > 8 && !(dt / substeps < 1e-9)) substeps = 8;
    if (substeps > 0) {
        if (!take_work(h, fuzz_step_work(h->world, &h->def.collisions, substeps))) return;
    }
    fuzz_mark_error();
    const sm_result r = sm_world_step(h->world, dt, substeps);
    fuzz_check_result(r, "sm_world_step");
    const bool passed_checks = r == SM_OK || r == SM_ERROR_NOT_FINITE;
    const bool covered = passed_checks && check_covers(h);
    if (r == SM_ERROR_NOT_FINITE) FUZZ_CHECK(covered, "SM_ERROR_NOT_FINITE from a step the state check does not cover");
    if (r != SM_OK || !covered) return;
    // the check passed: every position and velocity is finite
    const int32_t n = sm_world_get_counts(h->world).particles;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
    FUZZ_CHECK(xyz, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        const sm_result read = pass == 0 ? sm_world_get_positions(h->world, 0, n, xyz) : sm_world_get_velocities(h->world, 0, n, xyz);
        FUZZ_CHECK(read == SM_OK, "reading the particles back failed: %s", sm_last_error());
        for (int64_t i = 0; i < 3 * (int64_t)n; i++)
            FUZZ_CHECK(isfinite(xyz[i]), "particle %lld has a non-finite %s after a checked step that returned SM_OK",
                       (long long)(i / 3), pass == 0 ? "position" : "velocity");
    }
    free(xyz);
}

/// A range [first, first + count) and a buffer of `width` doubles per element for it: the
/// buffer holds at least `count` elements whenever the range can be valid (particles never
/// exceed FUZZ_MAX_PARTICLES); for larger counts it is small and the call must refuse the range.
/// `fill`: the values come from the bytes (the first 12, the rest follow from them).
static double *take_range(fuzz_input *in, int32_t limit, int width, bool fill, int32_t *first, int32_t *count)
{
    *first = pick_index(in, limit);
    const uint8_t b = fuzz_u8(in);
    *count = b >= 0xf0 ? fuzz_i32(in) : b < 0x80 ? limit - (*first > 0 ? *first : 0) - (b & 1) : (int32_t)(b & 15) - 1;
    const int64_t n = *count > 0 && *count <= FUZZ_MAX_PARTICLES ? *count : 1;
    double *buffer = malloc(sizeof(double) * (size_t)(width * n));
    FUZZ_CHECK(buffer, "out of memory");
    for (int64_t i = 0; i < width * n; i++) buffer[i] = !fill ? 0.0 : i < 12 ? fuzz_double(in) : buffer[i - 12] + 0.25;
    return buffer;
}

static void set_state(harness *h, bool positions)
{
    int32_t first, count;
    double *xyz = take_range(&h->in, sm_world_get_counts(h->world).particles, 3, true, &first, &count);
    fuzz_mark_error();
    const sm_result r = positions ? sm_world_set_positions(h->world, first, count, xyz)
                                  : sm_world_set_velocities(h->world, first, count, xyz);
    fuzz_check_result(r, positions ? "sm_world_set_positions" : "sm_world_set_velocities");
    free(xyz);
}

static void set_params(harness *h)
{
    fuzz_input *in = &h->in;
    const int32_t object = pick_index(in, sm_world_get_counts(h->world).objects);
    sm_object_params p;
    memset(&p, 0, sizeof p);
    fuzz_mark_error();
    sm_result r = sm_world_get_object_params(h->world, object, &p);
    fuzz_check_result(r, "sm_world_get_object_params");
    const uint8_t fields = fuzz_u8(in);
    if (fields & 1) {
        const uint8_t mode = fuzz_u8(in);
        p.mode = mode < 0xf0 ? (sm_mode)(mode % 4) : (sm_mode)fuzz_i32(in);
    }
    if (fields & 2) p.alpha = fuzz_double(in);
    if (fields & 4) p.tau = fuzz_double(in);
    if (fields & 8) p.beta = fuzz_double(in);
    if (fields & 16) p.damping = fuzz_double(in);
    if (fields & 32) p.volume_preservation = !p.volume_preservation;
    if (fields & 64) p.plasticity.enabled = !p.plasticity.enabled;
    if (fields & 128) {
        p.plasticity.yield = fuzz_double(in);
        p.plasticity.creep = fuzz_double(in);
        p.plasticity.max = fuzz_double(in);
    }
    // a new mode recomputes the object's rest data
    if ((fields & 1) && !take_work(h, fuzz_object_rest_work(h->world, object))) return;
    fuzz_mark_error();
    r = sm_world_set_object_params(h->world, object, &p);
    fuzz_check_result(r, "sm_world_set_object_params");
}

static void add_collider(harness *h)
{
    fuzz_input *in = &h->in;
    sm_collider_def d = sm_collider_def_default();
    const uint8_t kind = fuzz_u8(in);
    d.shape = (sm_collider_shape)(kind % 4); // 3: not a shape
    const uint8_t fields = fuzz_u8(in);
    if (fields & 1) d.position = fuzz_vec3(in);
    if (fields & 2) d.normal = fuzz_vec3(in);
    if (fields & 4) d.rotation = fuzz_vec3(in);
    if (fields & 8) d.size = fuzz_vec3(in);
    if (fields & 16) d.radius = fuzz_double(in);
    if (fields & 32) d.restitution = fuzz_double(in), d.friction = fuzz_double(in);
    double times[8];
    sm_vec3 offsets[8];
    if (fields & 64) {
        const uint8_t motion = fuzz_u8(in);
        d.motion.type = (sm_motion_type)(motion % 4); // 3: not a motion
        const int32_t n = (motion >> 2) % 9;
        for (int32_t k = 0; k < n; k++) times[k] = fuzz_double(in), offsets[k] = fuzz_vec3(in);
        d.motion.times = n > 0 ? times : NULL;
        d.motion.offsets = n > 0 ? offsets : NULL;
        d.motion.keyframe_count = (motion & 0x80) && n > 0 ? -n : n;
        d.motion.amplitude = fuzz_vec3(in);
        d.motion.frequency = fuzz_double(in);
        d.motion.phase = fuzz_double(in);
    }
    if ((fields & 128) && (kind & 128)) d.internal_value = 0;
    int32_t index = -2;
    const int32_t before = sm_world_get_collider_count(h->world);
    fuzz_mark_error();
    const sm_result r = sm_world_add_collider(h->world, &d, &index);
    fuzz_check_result(r, "sm_world_add_collider");
    if (r == SM_OK)
        FUZZ_CHECK(index == before && sm_world_get_collider_count(h->world) == before + 1, "the new collider's index is %d of %d",
                   index, before + 1);
}

static void cut(harness *h)
{
    fuzz_input *in = &h->in;
    const sm_counts before = sm_world_get_counts(h->world);
    const int32_t object = pick_index(in, before.objects);
    sm_plane plane;
    plane.point = fuzz_vec3(in);
    plane.normal = fuzz_vec3(in);
    const uint8_t b = fuzz_u8(in);
    if (b & 1) { // through an object's centre of mass, along the particles' current positions
        sm_object_info info;
        if (object >= 0 && object < before.objects && sm_world_get_object(h->world, object, &info) == SM_OK && info.particle_count > 0) {
            double x[3];
            const int32_t *list = NULL;
            int32_t count = 0;
            if (sm_world_get_object_particles(h->world, object, &list, &count) == SM_OK && count > 0) {
                const int32_t p = list[(b >> 1) % (uint32_t)count];
                if (sm_world_get_positions(h->world, p, 1, x) == SM_OK) plane.point = (sm_vec3){x[0], x[1], x[2]};
            }
        }
    }
    if (!take_work(h, fuzz_object_rest_work(h->world, object))) return;
    // a cut moves no particle: every rest position stays at its index
    const int32_t n = before.particles;
    double *rest = (b & 2) && n > 0 ? malloc(sizeof(double) * 3 * (size_t)n) : NULL;
    if (rest && sm_world_get_rest_positions(h->world, 0, n, rest) != SM_OK) free(rest), rest = NULL;
    sm_cut_info out;
    fuzz_mark_error();
    const sm_result r = sm_world_cut(h->world, object, plane, (b & 4) ? NULL : &out);
    fuzz_check_result(r, "sm_world_cut");
    if (r == SM_OK) {
        const sm_counts after = sm_world_get_counts(h->world);
        FUZZ_CHECK(after.particles == before.particles, "a cut changed the particles from %d to %d", before.particles, after.particles);
        if (!(b & 4))
            FUZZ_CHECK(after.objects == before.objects + (out.cut ? 1 : 0) && (!out.cut || out.front_object == before.objects),
                       "a cut (%s) took the objects from %d to %d", out.cut ? "done" : "not done", before.objects,
                       after.objects);
        double *now = rest ? malloc(sizeof(double) * 3 * (size_t)n) : NULL;
        if (now && sm_world_get_rest_positions(h->world, 0, n, now) == SM_OK)
            FUZZ_CHECK(memcmp(now, rest, sizeof(double) * 3 * (size_t)n) == 0, "a cut moved particles to other indices");
        free(now);
    }
    free(rest);
}

/// The pusher's sphere (the bytes in a fixed order: initialisers are not sequenced in C).
static void take_pusher(fuzz_input *in, sm_pusher *pusher)
{
    pusher->center = fuzz_vec3(in);
    pusher->radius = fuzz_double(in);
    pusher->velocity = fuzz_vec3(in);
}

static void query(harness *h)
{
    fuzz_input *in = &h->in;
    sm_world *w = h->world;
    const sm_counts n = sm_world_get_counts(w);
    const uint8_t which = fuzz_u8(in);
    sm_result r = SM_OK;
    fuzz_mark_error();
    switch (which % 11) {
    case 0: {
        sm_object_info info;
        r = sm_world_get_object(w, pick_index(in, n.objects), &info);
        fuzz_check_result(r, "sm_world_get_object");
        if (r == SM_OK)
            FUZZ_CHECK(info.first_particle >= 0 && info.first_particle + info.particle_count <= n.particles &&
                           info.first_cluster >= 0 && info.first_cluster + info.cluster_count <= n.clusters,
                       "object ranges outside the world");
        break;
    }
    case 1: {
        sm_cluster_info info;
        r = sm_world_get_cluster(w, pick_index(in, n.clusters), &info);
        fuzz_check_result(r, "sm_world_get_cluster");
        break;
    }
    case 2: {
        const int32_t *members = NULL;
        int32_t count = 0;
        r = sm_world_get_cluster_members(w, pick_index(in, n.clusters), &members, &count);
        fuzz_check_result(r, "sm_world_get_cluster_members");
        for (int32_t j = 0; r == SM_OK && j < count; j++)
            FUZZ_CHECK(members[j] >= 0 && members[j] < n.particles, "a cluster member is particle %d of %d", members[j], n.particles);
        break;
    }
    case 3: {
        sm_contact_stats stats;
        if (8.0 * n.particles * n.particles > FUZZ_MAX_STEP_WORK) break; // (the same bound as a sweep)
        r = sm_world_get_contact_stats(w, &stats);
        fuzz_check_result(r, "sm_world_get_contact_stats");
        break;
    }
    case 4: {
        const uint8_t f = fuzz_u8(in);
        const sm_particle_field field = (sm_particle_field)(f % 6); // 5: not a field
        const bool surface = field == SM_FIELD_SURFACE_POSITION || field == SM_FIELD_SURFACE_NORMAL;
        int32_t first, count;
        double *buffer = take_range(in, surface ? sm_world_get_surface_vertex_count(w) : n.particles, 2, false, &first, &count);
        r = sm_world_get_float4(w, field, first, count, (float *)buffer);
        fuzz_check_result(r, "sm_world_get_float4");
        free(buffer);
        break;
    }
    case 5: {
        const int32_t object = pick_index(in, n.objects);
        const int32_t *triangles = NULL;
        int32_t count = 0;
        r = sm_world_get_surface_triangles(w, object, &triangles, &count);
        fuzz_check_result(r, "sm_world_get_surface_triangles");
        sm_object_info info;
        if (r == SM_OK && sm_world_get_object(w, object, &info) == SM_OK) {
            FUZZ_CHECK(count == info.surface_triangle_count, "%d surface triangles, the object says %d", count,
                       info.surface_triangle_count);
            for (int32_t t = 0; t < 3 * count; t++)
                FUZZ_CHECK(triangles[t] >= 0 && triangles[t] < info.surface_vertex_count,
                           "a surface triangle names vertex %d of %d", triangles[t], info.surface_vertex_count);
        }
        break;
    }
    case 6: {
        sm_collider_info info;
        r = sm_world_get_collider(w, pick_index(in, sm_world_get_collider_count(w)), &info);
        fuzz_check_result(r, "sm_world_get_collider");
        break;
    }
    case 7: {
        int32_t first, count;
        const uint8_t what = fuzz_u8(in) % 7;
        double *buffer = take_range(in, n.particles, what == 6 ? 4 : 3, false, &first, &count);
        static const char *const names[] = {"sm_world_get_positions", "sm_world_get_velocities", "sm_world_get_rest_positions",
                                            "sm_world_get_goals", "sm_world_get_masses", "sm_world_get_forces",
                                            "sm_world_get_targets"};
        switch (what) {
        case 0: r = sm_world_get_positions(w, first, count, buffer); break;
        case 1: r = sm_world_get_velocities(w, first, count, buffer); break;
        case 2: r = sm_world_get_rest_positions(w, first, count, buffer); break;
        case 3: r = sm_world_get_goals(w, first, count, buffer); break;
        case 4: r = sm_world_get_masses(w, first, count, buffer); break;
        case 5: r = sm_world_get_forces(w, first, count, buffer); break;
        default: r = sm_world_get_targets(w, first, count, buffer); break;
        }
        fuzz_check_result(r, names[what]);
        free(buffer);
        break;
    }
    case 8: {
        sm_pusher pusher;
        pusher.enabled = fuzz_bool(in);
        take_pusher(in, &pusher);
        r = sm_world_set_pusher(w, &pusher);
        fuzz_check_result(r, "sm_world_set_pusher");
        break;
    }
    case 9: { // the mesh functions, on a mesh of the bytes (its indices valid, as sm_mesh promises)
        sm_mesh mesh = {0};
        mesh.vertex_count = 1 + fuzz_u8(in) % 32;
        mesh.triangle_count = fuzz_u8(in) % 32;
        mesh.vertices = take_vec3s(in, mesh.vertex_count);
        mesh.triangles = malloc(sizeof(int32_t) * 3 * (size_t)(mesh.triangle_count + 1));
        FUZZ_CHECK(mesh.triangles, "out of memory");
        for (int32_t t = 0; t < 3 * mesh.triangle_count; t++) mesh.triangles[t] = fuzz_u8(in) % mesh.vertex_count;
        const int32_t open = sm_mesh_open_edges(&mesh);
        FUZZ_CHECK(open >= 0 && open <= 3 * mesh.triangle_count, "%d open edges of %d triangles", open, mesh.triangle_count);
        (void)sm_mesh_winding_number(&mesh, fuzz_vec3(in));
        sm_mesh_free(&mesh);
        FUZZ_CHECK(!mesh.vertices && !mesh.triangles && !mesh.vertex_count, "sm_mesh_free left the mesh set");
        break;
    }
    default: {
        const sm_profile profile = sm_world_get_profile(w);
        const sm_memory memory = sm_world_get_memory(w);
        FUZZ_CHECK(profile.steps >= 0 && memory.device_bytes == 0, "profile or memory of a CPU world");
        FUZZ_CHECK(strcmp(sm_world_backend_name(w), "cpu") == 0, "the backend is %s", sm_world_backend_name(w));
        (void)sm_world_get_time(w);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness h = {.in = {data, size, 0}};
    fuzz_input *in = &h.in;
    sm_world_def *wd = &h.def;
    *wd = sm_world_def_default();
    wd->backend = SM_BACKEND_CPU;
    wd->check_interval = 1;
    wd->log = log_message;
    const uint8_t flags = fuzz_u8(in);
    if (flags & 1) wd->gravity = fuzz_vec3(in);
    if (flags & 2) {
        wd->ground.enabled = true;
        wd->ground.height = fuzz_double(in);
        wd->ground.restitution = fuzz_double(in);
        wd->ground.friction = fuzz_double(in);
    }
    if (flags & 4) {
        wd->collisions.enabled = true;
        wd->collisions.iterations = fuzz_int(in, -1);
        wd->collisions.radius_scale = fuzz_double(in);
        wd->collisions.restitution = fuzz_double(in);
        wd->collisions.friction = fuzz_double(in);
        (void)fuzz_double(in); // (the skin, a setting since removed: read so that the seeds keep their meaning)
    }
    if (flags & 8) wd->check_interval = fuzz_int(in, -1);
    if (flags & 16) { // a backend that is not one (the OpenCL ones are not fuzzed here)
        const int32_t backend = fuzz_i32(in);
        if (backend != SM_BACKEND_DEFAULT && backend != SM_BACKEND_OPENCL) wd->backend = (sm_backend)backend;
    }
    if ((flags & 32) && (flags & 64)) wd->internal_value = 0;
    if (flags & 128) wd->log = NULL;

    fuzz_mark_error();
    sm_result r = sm_world_create(wd, &h.world);
    fuzz_check_result(r, "sm_world_create");
    if (r != SM_OK) {
        FUZZ_CHECK(h.world == NULL, "a failed sm_world_create left a world");
        return 0;
    }
    for (int calls = 0; calls < MAX_CALLS && !fuzz_done(in); calls++) {
        switch (fuzz_u8(in) % OP_COUNT) {
        case OP_ADD_OBJECT: add_object(&h); break;
        case OP_STEP: step(&h); break;
        case OP_SET_POSITIONS: set_state(&h, true); break;
        case OP_SET_VELOCITIES: set_state(&h, false); break;
        case OP_SET_FORCE: {
            const int32_t particle = pick_index(in, sm_world_get_counts(h.world).particles);
            const sm_vec3 force = fuzz_vec3(in);
            fuzz_mark_error();
            fuzz_check_result(sm_world_set_force(h.world, particle, force), "sm_world_set_force");
            break;
        }
        case OP_SET_TARGET: {
            const int32_t particle = pick_index(in, sm_world_get_counts(h.world).particles);
            const sm_vec3 target = fuzz_vec3(in);
            const double stiffness = fuzz_double(in);
            fuzz_mark_error();
            fuzz_check_result(sm_world_set_target(h.world, particle, target, stiffness), "sm_world_set_target");
            break;
        }
        case OP_SET_PARAMS: set_params(&h); break;
        case OP_RESET_OBJECT: {
            const int32_t object = pick_index(in, sm_world_get_counts(h.world).objects);
            if (!take_work(&h, fuzz_object_rest_work(h.world, object))) break;
            fuzz_mark_error();
            fuzz_check_result(sm_world_reset_object(h.world, object), "sm_world_reset_object");
            break;
        }
        case OP_SET_PUSHER: {
            sm_pusher pusher = {.enabled = true};
            take_pusher(in, &pusher);
            fuzz_mark_error();
            fuzz_check_result(sm_world_set_pusher(h.world, &pusher), "sm_world_set_pusher");
            break;
        }
        case OP_ADD_COLLIDER: add_collider(&h); break;
        case OP_CUT: cut(&h); break;
        default: query(&h); break;
        }
    }
    sm_world_destroy(h.world);
    return 0;
}
