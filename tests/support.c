#include "support.h"

#include "math3.h"

#include <stdlib.h>

int sm_test_failures = 0;

sm_backend sm_test_backend = SM_BACKEND_CPU;

int sm_test_main(int argc, char **argv, const sm_test_case *tests, int count)
{
    // --backend cpu|opencl: the backend of world_from_json() (the physics suites run on both)
    int names = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--backend") == 0 && a + 1 < argc) {
            const char *b = argv[++a];
            if (strcmp(b, "cpu") != 0 && strcmp(b, "opencl") != 0) {
                fprintf(stderr, "--backend must be cpu or opencl, got '%s'\n", b);
                return 2;
            }
            sm_test_backend = strcmp(b, "opencl") == 0 ? SM_BACKEND_OPENCL : SM_BACKEND_CPU;
            argv[a - 1] = argv[a] = NULL;
        } else {
            names++;
        }
    }
    if (sm_test_backend == SM_BACKEND_OPENCL) printf("(worlds on OpenCL)\n");
    int ran = 0;
    for (int t = 0; t < count; t++) {
        bool selected = names == 0;
        for (int a = 1; a < argc; a++) selected = selected || (argv[a] && strcmp(argv[a], tests[t].name) == 0);
        if (!selected) continue;
        int before = sm_test_failures;
        tests[t].run();
        printf("%-48s %s\n", tests[t].name, sm_test_failures == before ? "ok" : "FAILED");
        fflush(stdout);
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test matched\n");
        return 1;
    }
    return sm_test_failures == 0 ? 0 : 1;
}

static uint64_t next(rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rng_uniform(rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next(r) >> 11) * 0x1.0p-53);
}

sm_vec3 rng_in_ball(rng *r, double radius)
{
    for (;;) {
        sm_vec3 p = v3(rng_uniform(r, -1, 1), rng_uniform(r, -1, 1), rng_uniform(r, -1, 1));
        if (v3_dot(p, p) <= 1.0) return v3_scale(p, radius);
    }
}

sm_mat3 rng_rotation(rng *r)
{
    // a uniformly random unit quaternion (Shoemake)
    double u1 = rng_uniform(r, 0, 1), u2 = rng_uniform(r, 0, 6.283185307179586), u3 = rng_uniform(r, 0, 6.283185307179586);
    double a = sqrt(1 - u1), b = sqrt(u1);
    double w = a * sin(u2), x = a * cos(u2), y = b * sin(u3), z = b * cos(u3);
    return (sm_mat3){{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

sm_mat3 rng_matrix(rng *r, double scale)
{
    sm_mat3 a;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] = rng_uniform(r, -scale, scale);
    return a;
}

sm_mat3 rng_stretch(rng *r, double lo, double hi)
{
    sm_mat3 q = rng_rotation(r), d = m3_zero();
    for (int i = 0; i < 3; i++) d.m[i][i] = rng_uniform(r, lo, hi);
    return m3_mul(q, m3_mul(d, m3_transpose(q)));
}

double metric_distance(sm_mat3 x, sm_mat3 a, sm_mat3 w)
{
    const sm_mat3 d = m3_sub(x, a);
    const sm_mat3 p = m3_mul(m3_mul(d, w), m3_transpose(d));
    return p.m[0][0] + p.m[1][1] + p.m[2][2];
}

sm_result create_world(const sm_scene *scene, sm_backend backend, sm_world **out)
{
    sm_world_def def = sm_scene_world_def(scene);
    def.backend = backend;
    return sm_scene_create_world(scene, &def, out);
}

double tolerance_exact(void) { return sm_test_backend == SM_BACKEND_OPENCL ? 2e-5 : 1e-12; }

double tolerance(double cpu, double opencl) { return sm_test_backend == SM_BACKEND_OPENCL ? opencl : cpu; }

double tolerance_hold(void) { return sm_test_backend == SM_BACKEND_OPENCL ? 1e-12 : 0.0; }

double tolerance_drift(void) { return sm_test_backend == SM_BACKEND_OPENCL ? 2e-3 : 1e-10; }

sm_world *world_from_json(const char *json) { return world_from_json_on(json, sm_test_backend); }

uint64_t state_hash(const sm_world *world)
{
    int32_t n = sm_world_get_counts(world).particles;
    double *x = get_positions(world), *v = get_velocities(world);
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *bytes[2] = {(const unsigned char *)x, (const unsigned char *)v};
    for (int a = 0; a < 2; a++)
        for (size_t i = 0; i < sizeof(double) * 3 * (size_t)n; i++) h = (h ^ bytes[a][i]) * 0x100000001b3ull;
    free(x), free(v);
    return h;
}

sm_world *world_from_json_on(const char *json, sm_backend backend)
{
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    if (sm_scene_load_string(json, "test scene", &scene) != SM_OK || create_world(scene, backend, &world) != SM_OK) {
        fprintf(stderr, "world_from_json: %s\n", sm_last_error());
        sm_test_failures++;
        world = NULL;
    }
    sm_scene_destroy(scene);
    return world;
}

bool write_text_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    if (!file) return false;
    const bool ok = fputs(text, file) >= 0;
    return fclose(file) == 0 && ok;
}

typedef sm_result getter(const sm_world *, int32_t, int32_t, double *);

static double *get_all(const sm_world *world, getter *get, int per_particle)
{
    int32_t n = sm_world_get_counts(world).particles;
    double *out = malloc(sizeof(double) * (size_t)(per_particle * n + 1));
    get(world, 0, n, out);
    return out;
}

double *get_positions(const sm_world *world) { return get_all(world, sm_world_get_positions, 3); }
double *get_velocities(const sm_world *world) { return get_all(world, sm_world_get_velocities, 3); }
double *get_rest_positions(const sm_world *world) { return get_all(world, sm_world_get_rest_positions, 3); }
double *get_masses(const sm_world *world) { return get_all(world, sm_world_get_masses, 1); }

/// An object's particles (sm_world_get_object_particles(): a piece of a cut holds some of its
/// object's, not a range) and its mass.
typedef struct particles {
    const int32_t *at;
    int32_t count;
    double mass;
} particles;

static particles particles_of(const sm_world *world, int32_t object)
{
    particles ps = {NULL, 0, 0.0};
    sm_object_info info;
    if (sm_world_get_object(world, object, &info) != SM_OK ||
        sm_world_get_object_particles(world, object, &ps.at, &ps.count) != SM_OK)
        return (particles){NULL, 0, 0.0};
    ps.mass = info.mass;
    return ps;
}

static sm_vec3 at(const double *xyz, int32_t i) { return v3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]); }

sm_vec3 linear_momentum(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *v = get_velocities(world), *m = get_masses(world);
    sm_vec3 p = {0, 0, 0};
    for (int32_t k = 0; k < ps.count; k++) p = v3_add(p, v3_scale(at(v, ps.at[k]), m[ps.at[k]]));
    free(v), free(m);
    return p;
}

sm_vec3 angular_momentum(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *x = get_positions(world), *v = get_velocities(world), *m = get_masses(world);
    sm_vec3 l = {0, 0, 0};
    for (int32_t k = 0; k < ps.count; k++) {
        const int32_t i = ps.at[k];
        l = v3_add(l, v3_scale(v3_cross(at(x, i), at(v, i)), m[i]));
    }
    free(x), free(v), free(m);
    return l;
}

double momentum_scale(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *v = get_velocities(world), *m = get_masses(world);
    double s = 0.0;
    for (int32_t k = 0; k < ps.count; k++) s += m[ps.at[k]] * v3_length(at(v, ps.at[k]));
    free(v), free(m);
    return s;
}

static sm_vec3 centre_of_mass(const double *x, const double *m, particles ps)
{
    sm_vec3 c = {0, 0, 0};
    double total = 0.0;
    for (int32_t k = 0; k < ps.count; k++) {
        c = v3_add(c, v3_scale(at(x, ps.at[k]), m[ps.at[k]]));
        total += m[ps.at[k]];
    }
    return v3_scale(c, 1.0 / total);
}

double object_radius(const sm_world *world, int32_t object, bool rest)
{
    const particles ps = particles_of(world, object);
    double *x = rest ? get_rest_positions(world) : get_positions(world), *m = get_masses(world);
    sm_vec3 c = centre_of_mass(x, m, ps);
    double r = 0.0;
    for (int32_t k = 0; k < ps.count; k++) r = fmax(r, v3_length(v3_sub(at(x, ps.at[k]), c)));
    free(x), free(m);
    return r;
}

double rigid_fit_rms(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *x = get_positions(world), *x0 = get_rest_positions(world), *m = get_masses(world);
    sm_vec3 c = centre_of_mass(x, m, ps), c0 = centre_of_mass(x0, m, ps);
    sm_mat3 apq = m3_zero();
    for (int32_t k = 0; k < ps.count; k++) {
        const int32_t i = ps.at[k];
        apq = m3_add(apq, m3_scale(m3_outer(v3_sub(at(x, i), c), v3_sub(at(x0, i), c0)), m[i]));
    }
    sm_mat3 r = sm_closest_rotation(apq);
    double sum = 0.0;
    for (int32_t k = 0; k < ps.count; k++) {
        const int32_t i = ps.at[k];
        sm_vec3 fit = v3_add(m3_apply(r, v3_sub(at(x0, i), c0)), c);
        sm_vec3 d = v3_sub(at(x, i), fit);
        sum += m[i] * v3_dot(d, d);
    }
    free(x), free(x0), free(m);
    return sqrt(sum / ps.mass);
}

double max_speed(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *v = get_velocities(world);
    double s = 0.0;
    for (int32_t k = 0; k < ps.count; k++) s = fmax(s, v3_length(at(v, ps.at[k])));
    free(v);
    return s;
}

double object_size(const sm_world *world, int32_t object)
{
    const particles ps = particles_of(world, object);
    double *x0 = get_rest_positions(world);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t k = 0; k < ps.count; k++)
        for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], x0[3 * ps.at[k] + a]), hi[a] = fmax(hi[a], x0[3 * ps.at[k] + a]);
    free(x0);
    return fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
}

void scramble(sm_world *world, int32_t object, double fraction, rng *r)
{
    const particles ps = particles_of(world, object);
    double radius = fraction * object_size(world, object);
    double *x = get_positions(world);
    for (int32_t k = 0; k < ps.count; k++) {
        sm_vec3 d = rng_in_ball(r, radius);
        x[3 * ps.at[k]] += d.x, x[3 * ps.at[k] + 1] += d.y, x[3 * ps.at[k] + 2] += d.z;
    }
    // in runs of consecutive indices, so that no other particle is written
    for (int32_t k = 0, run = 1; k < ps.count; k += run) {
        for (run = 1; k + run < ps.count && ps.at[k + run] == ps.at[k] + run;) run++;
        sm_world_set_positions(world, ps.at[k], run, x + 3 * ps.at[k]);
    }
    free(x);
}

bool world_has_nan(const sm_world *world)
{
    int32_t n = sm_world_get_counts(world).particles;
    double *x = get_positions(world), *v = get_velocities(world);
    bool bad = false;
    for (int32_t i = 0; i < 3 * n && !bad; i++) bad = !isfinite(x[i]) || !isfinite(v[i]);
    free(x), free(v);
    return bad;
}

void random_bodies_inside_each_other(rng *r, bool radius_scales, char *out, size_t size)
{
    static const char *const shapes[] = {"\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [%d, %d, %d]",
                                         "\"shape\": \"sphere\", \"radius\": %.17g, \"spacing\": %.17g",
                                         "\"shape\": \"capsule\", \"radius\": %.17g, \"length\": %.17g, \"spacing\": %.17g",
                                         "\"shape\": \"torus\", \"major_radius\": %.17g, \"minor_radius\": %.17g, \"spacing\": %.17g"};
    static const char *const modes[] = {"rigid", "linear", "quadratic"};
    const int count = 2 + (int)rng_uniform(r, 0.0, 1.999);
    size_t used = 0;
    out[0] = 0;
    for (int o = 0; o < count && used < size; o++) {
        const double extent = rng_uniform(r, 0.3, 1.0);
        char shape[256], scale[64] = "";
        switch ((int)rng_uniform(r, 0.0, 3.999)) {
        case 0:
            snprintf(shape, sizeof shape, shapes[0], extent, extent * rng_uniform(r, 0.5, 1.0), extent * rng_uniform(r, 0.5, 1.0),
                     3 + (int)rng_uniform(r, 0, 3.999), 3 + (int)rng_uniform(r, 0, 3.999), 3 + (int)rng_uniform(r, 0, 3.999));
            break;
        case 1: snprintf(shape, sizeof shape, shapes[1], 0.5 * extent, extent * rng_uniform(r, 0.15, 0.3)); break;
        case 2: snprintf(shape, sizeof shape, shapes[2], 0.25 * extent, extent, extent * rng_uniform(r, 0.1, 0.2)); break;
        default: snprintf(shape, sizeof shape, shapes[3], 0.4 * extent, 0.15 * extent, extent * rng_uniform(r, 0.08, 0.15)); break;
        }
        const sm_vec3 at = rng_in_ball(r, 0.5 * extent), v = rng_in_ball(r, 2.0);
        const double turn[3] = {rng_uniform(r, 0, 360), rng_uniform(r, 0, 360), rng_uniform(r, 0, 360)};
        const double mass = pow(10.0, rng_uniform(r, -1.0, 1.0));
        const char *mode = modes[(int)rng_uniform(r, 0.0, 2.999)];
        if (radius_scales) snprintf(scale, sizeof scale, ", \"collisions\": {\"radius_scale\": %.17g}", rng_uniform(r, 0.5, 1.5));
        used += (size_t)snprintf(out + used, size - used,
                                 "%s{%s, \"position\": [%.17g, %.17g, %.17g], \"rotation\": [%.17g, %.17g, %.17g],"
                                 " \"velocity\": [%.17g, %.17g, %.17g], \"mass\": %.17g, \"mode\": \"%s\"%s}",
                                 o ? ", " : "", shape, at.x, at.y, at.z, turn[0], turn[1], turn[2], v.x, v.y, v.z, mass, mode, scale);
    }
}

const char *const sm_test_solid_names[5] = {"ground", "plane", "box", "sphere", "mesh"};

void write_drawn_body_json(char *json, size_t size, int *o, rng *r, bool sphere, double body_size)
{
    if (sphere) {
        *o += snprintf(json + *o, size - (size_t)*o, "\"shape\": \"sphere\", \"radius\": %.17g, \"spacing\": %.17g, ",
                       0.5 * body_size, body_size / rng_uniform(r, 2.5, 5.0));
    } else {
        const int n = 2 + (int)rng_uniform(r, 0.0, 3.999);
        *o += snprintf(json + *o, size - (size_t)*o,
                       "\"shape\": \"box\", \"size\": [%.17g, %.17g, %.17g], \"resolution\": [%d, %d, %d], ", body_size,
                       body_size, body_size, n, n, n);
    }
}

void write_solid_json(char *json, size_t size, int *o, int kind, sm_vec3 surface, sm_vec3 normal, const char *mesh,
                      double restitution, double friction)
{
    const double half = 10.0; // boxes and meshes 20 m wide, spheres of 10 m radius: deeper than any object
    const sm_vec3 center = v3_sub(surface, v3_scale(normal, half));
    // a box's or a mesh's top face is the surface: turned so that its y axis is the normal
    // (Euler angles of the turn taking y to the normal: about z then about x)
    const double about_z = -atan2(normal.x, normal.y) * 180.0 / SM_PI;
    const double about_x = asin(fmax(-1.0, fmin(1.0, normal.z))) * 180.0 / SM_PI;
    if (kind == 0)
        *o += snprintf(json + *o, size - (size_t)*o, "\"ground\": {\"height\": %.17g, \"restitution\": %.17g, \"friction\": %.17g}, ",
                       surface.y, restitution, friction);
    else if (kind == 1)
        *o += snprintf(json + *o, size - (size_t)*o,
                       "\"colliders\": [{\"shape\": \"plane\", \"position\": [%.17g, %.17g, %.17g], \"normal\": [%.17g, %.17g, %.17g], "
                       "\"restitution\": %.17g, \"friction\": %.17g}], ",
                       surface.x, surface.y, surface.z, normal.x, normal.y, normal.z, restitution, friction);
    else if (kind == 3)
        *o += snprintf(json + *o, size - (size_t)*o,
                       "\"colliders\": [{\"shape\": \"sphere\", \"position\": [%.17g, %.17g, %.17g], \"radius\": %g, "
                       "\"restitution\": %.17g, \"friction\": %.17g}], ",
                       center.x, center.y, center.z, half, restitution, friction);
    else
        *o += snprintf(json + *o, size - (size_t)*o,
                       "\"colliders\": [{\"shape\": \"%s\", %s%s%s\"position\": [%.17g, %.17g, %.17g], "
                       "\"rotation\": [%.17g, 0, %.17g], \"restitution\": %.17g, \"friction\": %.17g}], ",
                       kind == 2 ? "box" : "mesh", kind == 4 ? "\"mesh\": \"" : "", kind == 4 ? mesh : "",
                       kind == 4 ? "\", \"cell\": 0.25, " : "\"size\": [20, 20, 20], ", center.x, center.y, center.z, about_x, about_z, restitution,
                       friction);
}
