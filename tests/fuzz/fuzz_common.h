/* What the fuzz harnesses share: the check that fails an input, a reader of the fuzzer's bytes,
 * and bounds on the work one input may ask for.
 *
 * The harnesses look for crashes, memory errors, undefined behaviour, leaks and broken promises
 * of the API, not for slow inputs: a scene or object def that legitimately asks for millions of
 * particles, memberships or contact pairs would only make the fuzzer report a timeout or an
 * out-of-memory. So before an object is created the harness estimates, from its def alone, the
 * lattice the library would scan and the cluster memberships it would build, and skips defs over
 * the bounds below; before stepping, resetting, cutting or changing an object's mode it bounds
 * that call's work the same way. Defs the library refuses before any work (non-finite or
 * out-of-range fields, shapes over its own particle limits) are always passed on, so that their
 * checks are fuzzed too. */
#ifndef SM_FUZZ_COMMON_H
#define SM_FUZZ_COMMON_H

#include "shapematch/shapematch.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Particles of one world the harnesses create and step.
#define FUZZ_MAX_PARTICLES 20000
/// Lattice points the sampling of one object may scan.
#define FUZZ_MAX_CANDIDATES 200000.0
/// Cluster memberships of one object's grid (an upper bound from the cells a particle can fall in).
#define FUZZ_MAX_MEMBERSHIPS 400000.0
/// Work of one call (a step, an object's creation, reset or cut), in membership updates (about
/// 50 ns each in the instrumented build): about 1 s.
#define FUZZ_MAX_STEP_WORK 2e7
/// The same summed over the calls of one input.
#define FUZZ_MAX_INPUT_WORK 6e7
/// Work of computing one cluster's rest data beyond its memberships (sm_cluster_update_rest():
/// the moment matrices' eigen decompositions, 9 x 9 for a quadratic cluster), in membership
/// updates: up to about 5,000 measured in the instrumented build (1,000 quadratic clusters of 60
/// members each, 0.3 s a reset), with room for a slower machine.
#define FUZZ_CLUSTER_REST_WORK 8000.0
/// Work of one cluster's shape matching in a substep beyond its memberships (the polar
/// decomposition, the quadratic fit): up to about 600 measured.
#define FUZZ_CLUSTER_STEP_WORK 1000.0
/// The library's own limits, beyond which it refuses a shape before sampling it (shapes.c).
#define FUZZ_LIBRARY_MAX_PARTICLES 67108864.0 /* 1 << 26 */

/// Fails the input: the message and the call's result go to stderr, then abort() (libFuzzer
/// reports the crash and keeps the input; the replay test fails).
#define FUZZ_CHECK(condition, ...)                                                                                     \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #condition);                              \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/// A failed call must say why: a known error code and a message of its own. Before each call
/// the harness makes a call that fails with a known message (fuzz_mark_error()); a failure that
/// left that message in place did not set its own.
/// (the harnesses never pass sm_scene_load_string() a NULL json themselves)
static const char fuzz_marker_message_start[] = "sm_scene_load_string: json and out_scene must not be NULL";

static inline void fuzz_mark_error(void)
{
    sm_scene *scene = NULL;
    (void)sm_scene_load_string(NULL, "marker", &scene);
}

/// $SM_FUZZ_VERBOSE set: every call's result goes to stderr (to see what an input does).
static inline bool fuzz_verbose(void)
{
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("SM_FUZZ_VERBOSE") != NULL;
    return verbose;
}

static inline void fuzz_check_result(sm_result result, const char *call)
{
    if (fuzz_verbose()) fprintf(stderr, "%s: %s%s%s\n", call, sm_result_name(result), result ? ": " : "", result ? sm_last_error() : "");
    if (result == SM_OK) return;
    FUZZ_CHECK(result > SM_OK && result <= SM_ERROR_DIVERGED, "%s returned %d, not an sm_result", call, (int)result);
    const char *message = sm_last_error();
    FUZZ_CHECK(message && message[0], "%s failed with %s and an empty message", call, sm_result_name(result));
    FUZZ_CHECK(strncmp(message, fuzz_marker_message_start, sizeof fuzz_marker_message_start - 1) != 0,
               "%s failed with %s without a message of its own", call, sm_result_name(result));
}

/* ---- Reading the fuzzer's bytes ----------------------------------------------------------- */

/// The input, consumed from the front; past its end every read gives zeros.
typedef struct fuzz_input {
    const uint8_t *data;
    size_t size, at;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in) { return in->at < in->size ? in->data[in->at++] : 0; }

static inline bool fuzz_done(const fuzz_input *in) { return in->at >= in->size; }

static inline bool fuzz_bool(fuzz_input *in) { return fuzz_u8(in) & 1; }

static inline uint32_t fuzz_u32(fuzz_input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

/// A raw 32-bit integer: any value, negative ones included.
static inline int32_t fuzz_i32(fuzz_input *in)
{
    const uint32_t u = fuzz_u32(in);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/// An integer that is mostly small: in [lo, lo + 15] for most selectors, sometimes any int32.
static inline int32_t fuzz_int(fuzz_input *in, int32_t lo)
{
    const uint8_t b = fuzz_u8(in);
    if (b >= 0xf0) return fuzz_i32(in);
    return lo + (int32_t)(b & 15);
}

/// A double: a selector byte picks a value the library's checks care about (0, -0, 1, the ends
/// of its ranges, tiny, huge, infinite, NaN), a small multiple of 1/16, or 8 raw bytes.
static inline double fuzz_double(fuzz_input *in)
{
    static const double special[] = {0.0,     -0.0,    1.0,      -1.0,    0.5,       0.25,   2.0,     3.0,
                                     4.0,     6.0,     10.0,     0.1,     1e-9,      1e-12,  1e-300,  5e-324,
                                     1e6,     1e12,    1e300,    -1e300,  1.7976931348623157e308, INFINITY, -INFINITY, NAN,
                                     -NAN,    0.016666666666666666, 1.0 / 3.0, 100.0, -0.5, 1024.0, 4096.0, 65536.0};
    const uint8_t b = fuzz_u8(in);
    if (b < 64) return special[b % (sizeof special / sizeof special[0])];
    if (b < 224) return (double)((int)b - 144) / 16.0; // -5 to 5
    double v;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) bits |= (uint64_t)fuzz_u8(in) << (8 * i);
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline sm_vec3 fuzz_vec3(fuzz_input *in)
{
    sm_vec3 v;
    v.x = fuzz_double(in);
    v.y = fuzz_double(in);
    v.z = fuzz_double(in);
    return v;
}

/* ---- Bounds on the work ----------------------------------------------------------------- */

/// The lattice points a shape's sampling scans (an upper bound on its particles), as shapes.c
/// and mesh.c size them; NAN when the shape is invalid (the library refuses it before sampling).
static inline double fuzz_shape_candidates(const sm_shape *s)
{
    switch (s->type) {
    case SM_SHAPE_POINTS: return s->point_count;
    case SM_SHAPE_BOX: {
        for (int a = 0; a < 3; a++)
            if (s->resolution[a] < 1) return NAN;
        const double total = (double)s->resolution[0] * s->resolution[1] * s->resolution[2];
        // the library refuses boxes over its limit before allocating them
        return total > FUZZ_LIBRARY_MAX_PARTICLES ? INFINITY : total;
    }
    case SM_SHAPE_SPHERE:
    case SM_SHAPE_CAPSULE:
    case SM_SHAPE_TORUS: {
        const double h = s->spacing;
        double half[3];
        if (s->type == SM_SHAPE_SPHERE) half[0] = half[1] = half[2] = s->radius;
        else if (s->type == SM_SHAPE_CAPSULE) half[0] = 0.5 * s->length + s->radius, half[1] = half[2] = s->radius;
        else half[0] = half[2] = s->major_radius + s->minor_radius, half[1] = s->minor_radius;
        double candidates = 1.0;
        for (int a = 0; a < 3; a++) candidates *= 2.0 * floor(half[a] / h + 1e-9) + 1.0;
        if (!(candidates >= 1.0)) return NAN; // a radius or spacing the library refuses
        // over 8 times its particle limit the library refuses the lattice without scanning it
        return candidates > 8.0 * FUZZ_LIBRARY_MAX_PARTICLES ? INFINITY : candidates;
    }
    case SM_SHAPE_MESH: {
        if (s->mesh_particles != SM_MESH_PARTICLES_LATTICE) return s->mesh_vertex_count;
        if (s->mesh_vertex_count < 1 || !s->mesh_vertices) return NAN;
        sm_vec3 lo = s->mesh_vertices[0], hi = lo;
        for (int32_t v = 1; v < s->mesh_vertex_count; v++) {
            const sm_vec3 p = s->mesh_vertices[v];
            lo.x = fmin(lo.x, p.x), lo.y = fmin(lo.y, p.y), lo.z = fmin(lo.z, p.z);
            hi.x = fmax(hi.x, p.x), hi.y = fmax(hi.y, p.y), hi.z = fmax(hi.z, p.z);
        }
        const double l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
        double candidates = 1.0;
        for (int a = 0; a < 3; a++)
            candidates *= fmax(0.0, floor(u[a] / s->spacing + 1e-9) - ceil(l[a] / s->spacing - 1e-9) + 1.0);
        // each candidate costs a winding number over every triangle
        candidates *= fmax(1.0, s->mesh_triangle_count / 16.0);
        return candidates > 8.0 * FUZZ_LIBRARY_MAX_PARTICLES ? INFINITY : candidates;
    }
    }
    return NAN;
}

/// The work of computing the rest data of `clusters` clusters with `memberships` memberships in
/// all (an object's creation or reset, the pieces of a cut, a change of mode).
static inline double fuzz_rest_work(double clusters, double memberships)
{
    return clusters * FUZZ_CLUSTER_REST_WORK + memberships * 9.0;
}

/// The work of adding an object of `def` to a world of `particles` particles: the lattice it
/// scans and the rest data of its clusters; INFINITY over the bounds on particles, lattice points
/// or memberships; 0 for a def whose estimate is not finite (invalid, or refused by the library's
/// own limits), which is always tried.
static inline double fuzz_object_work(const sm_object_def *def, double particles)
{
    const double candidates = fuzz_shape_candidates(&def->shape);
    if (!isfinite(candidates)) return 0.0;
    if (candidates > FUZZ_MAX_CANDIDATES || particles + candidates > FUZZ_MAX_PARTICLES) return INFINITY;
    const sm_cluster_def *c = &def->clusters;
    if (c->list_offsets) // memberships: the lists' own length, which the input holds
        return candidates + fuzz_rest_work(c->list_count > 0 ? c->list_count : 0, 0.0);
    // along an axis a particle lies in at most 2 overlap + 2 grown cells of the grid
    double per_particle = 1.0, cells = 1.0;
    for (int a = 0; a < 3; a++) {
        const double along = c->grid[a] >= 1 ? c->grid[a] : 1;
        const double reach = isfinite(c->overlap) && c->overlap >= 0.0 ? 2.0 * c->overlap + 3.0 : 1.0;
        per_particle *= fmin(along, reach);
        cells *= along;
    }
    const double memberships = candidates * per_particle;
    if (memberships > FUZZ_MAX_MEMBERSHIPS) return INFINITY;
    // every cluster is a cell of the grid holding at least one membership
    return candidates + fuzz_rest_work(fmin(cells, memberships), memberships);
}

/// Whether adding an object of `def` to a world of `particles` particles stays within the bounds
/// on one call (fuzz_object_work()).
static inline bool fuzz_object_fits(const sm_object_def *def, double particles)
{
    return fuzz_object_work(def, particles) <= FUZZ_MAX_STEP_WORK;
}

/// An upper bound on the work of one sm_world_step() of `substeps` substeps, in membership
/// updates: the memberships and the clusters' shape matching, the rest data of every cluster of a
/// plastic object (its plastic update may recompute them each substep), the particles against
/// every collider, and with contact every pair of particles in every sweep (the worst case: all
/// of them in a few cells of the grid, as when one object's radius is far larger than another's
/// spacing), a pair test costing about 8 updates.
static inline double fuzz_step_work(const sm_world *world, const sm_collisions *collisions, int32_t substeps)
{
    const sm_counts n = sm_world_get_counts(world);
    double per_substep = (double)n.memberships * 9.0 + (double)n.clusters * FUZZ_CLUSTER_STEP_WORK +
                         (double)n.particles * (1.0 + sm_world_get_collider_count(world));
    for (int32_t o = 0; o < n.objects; o++) {
        sm_object_info info;
        sm_object_params params;
        if (sm_world_get_object(world, o, &info) == SM_OK && sm_world_get_object_params(world, o, &params) == SM_OK &&
            params.plasticity.enabled)
            per_substep += fuzz_rest_work(info.cluster_count, info.membership_count);
    }
    if (collisions->enabled) {
        const double sweeps = collisions->iterations >= 1 ? collisions->iterations : 1;
        per_substep += 8.0 * n.particles * n.particles * sweeps;
    }
    return per_substep * (substeps > 0 ? substeps : 1);
}

/// The work of a call that recomputes the rest data of `object`'s clusters (a reset, a cut, which
/// builds its pieces' clusters anew, or a change of mode); 0 for an index that is not an object's.
static inline double fuzz_object_rest_work(const sm_world *world, int32_t object)
{
    sm_object_info info;
    if (sm_world_get_object(world, object, &info) != SM_OK) return 0.0;
    return 2.0 * fuzz_rest_work(info.cluster_count, info.membership_count) + 9.0 * info.particle_count;
}

#endif
