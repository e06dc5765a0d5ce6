/* Determinism: scenes/paper384.json (384 objects, 55,200 particles, contact between objects on)
 * run for 500 steps of the scene's dt and substeps (objects first touch after about 40 steps,
 * and by 500 the pile has formed), and its state hashed: FNV-1a 64 over the bytes of every
 * position and velocity, as doubles in the world's particle order.
 *
 * The CPU reference matches a golden hash, so that any change of its results shows. The library
 * is built with -ffp-contract=off, so the hash does not depend on whether the compiler fuses
 * multiply-adds. The bytes are hashed as they lie in memory: the golden hash holds on
 * little-endian machines with IEEE doubles (x86-64, aarch64); a big-endian one would hash
 * other bytes.
 *
 * The golden hash changes whenever the definition of the step does (any pass of the CPU
 * reference, the scene file, the order of the particles). After such a change, on purpose,
 * regenerate it with
 *     build/tests/test_determinism print_hashes
 * which runs the reference and prints the line to put in place of GOLDEN_CPU_HASH below; from
 * the source tree, in one command:
 *     sed -i "s/^#define GOLDEN_CPU_HASH .*$/$(build/tests/test_determinism print_hashes)/" \
 *         tests/test_determinism.c
 *
 * The OpenCL path (float) gives the same hash on every run on one device and for every
 * work-group size it supports ($SM_WORK_GROUP_SIZE, a power of two). */
#ifdef SM_TEST_OPENCL
#include "opencl/cl_internal.h"
#else
#include "world.h"
#endif
#include "support.h"

#include <stdlib.h>
#include <time.h>

/// paper384's state after STEPS steps on the CPU reference (see the top of the file). Changed last
/// by the deformation limit as a projection in the cluster's metric, and quadratic goals split into
/// their linear fit and their own part (sm_limit_in_metric, sm_limit_quadratic; it was
/// 0x285145ec1e208f4b); before that by the membership masses (a particle's mass shared by the
/// clusters holding it, sm_member_mass; it was 0xbb9161d0406d9fd7); before that by friction on the
/// ground and the colliders bounded by Coulomb's law (at most friction times the normal speed a
/// contact takes away, sm_friction_share) and restitution returning no more than the approach the
/// particle's body began the solver step with where that is less than its own (sm_rebound;
/// paper384's ground has restitution 0.2 and friction 0.4; it was 0x60f82a594e36f937); before that
/// by restitution returning no more than the particle's own approach then (it was
/// 0x911d09e0a0d84bd4); taken again before when the run was shortened from 1,000 steps to 500, and
/// changed before that by the contact passes of one search a step, the bound on pushing overlaps
/// out and friction on positions (docs/contact.md).
#define GOLDEN_CPU_HASH 0x0257c728518402beull
#define STEPS 500
/// Steps of the runs with the other work-group sizes, to keep the test short (the two runs with
/// the default size are full): objects first touch after about 40 steps, and by step 60 a
/// hundred pairs or so overlap before the contact passes separate them.
#define SHORT_STEPS 60
/// The largest work-group size tried: that of common GPUs. (PoCL 3.1's CPU device reports 4096
/// for every kernel, but at that size the plasticity kernel's private arrays overflow its worker
/// threads' stacks, a crash with plastic objects, which paper384 has none of.)
#define LARGEST_TRIED 1024

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/// One run of paper384 on `backend`: the hash after `steps` steps, and after `early` steps into
/// *out_early (when not NULL); the most overlapping pairs seen (every 100 steps) into
/// *out_pairs; the world's work-group size of a per-particle kernel (OpenCL) into *out_group.
/// Returns 0 (and counts a failure) when the world cannot be made or a step fails.
static uint64_t run_paper384(sm_backend backend, int steps, int early, uint64_t *out_early, int64_t *out_pairs,
                             size_t *out_group)
{
    sm_scene *scene = NULL;
    sm_world *world = NULL;
    ENSURE_OK(sm_scene_load_file(SM_SCENES_DIR "/paper384.json", &scene));
    if (scene) ENSURE_OK(create_world(scene, backend, &world));
    if (!world) {
        sm_scene_destroy(scene);
        return 0;
    }
    ENSURE(sm_world_get_counts(world).particles == 55200);
    ENSURE(world->def.collisions.enabled);
#ifdef SM_TEST_OPENCL
    if (out_group) *out_group = world->cl ? world->cl->group[SM_CLK_BLEND_INTEGRATE] : 0;
#else
    if (out_group) *out_group = 0;
#endif
    int64_t most_pairs = 0;
    uint64_t hash = 0;
    for (int s = 1; s <= steps; s++) {
        sm_result result = sm_scene_step(scene, world);
        if (result != SM_OK) {
            fprintf(stderr, "step %d failed: %s: %s\n", s, sm_result_name(result), sm_last_error());
            sm_test_failures++;
            break;
        }
        sm_contact_stats stats;
        if (s % 100 == 0 && sm_world_get_contact_stats(world, &stats) == SM_OK && stats.pairs > most_pairs)
            most_pairs = stats.pairs;
        if (s == early && out_early) *out_early = state_hash(world);
        if (s == steps) hash = state_hash(world);
    }
    ENSURE(!world_has_nan(world));
    if (out_pairs) *out_pairs = most_pairs;
    sm_world_destroy(world);
    sm_scene_destroy(scene);
    return hash;
}

/// The CPU reference's hash after STEPS steps of paper384 equals GOLDEN_CPU_HASH, and objects
/// came into contact on the way (so the contact passes are part of what is hashed).
static void cpu_reference_matches_the_golden_hash(void)
{
    const double start = seconds();
    int64_t pairs = 0;
    const uint64_t hash = run_paper384(SM_BACKEND_CPU, STEPS, 0, NULL, &pairs, NULL);
    printf("  cpu reference, paper384 after %d steps: hash 0x%016llxull, golden 0x%016llxull "
           "(%.1f s, up to %lld overlapping pairs)\n",
           STEPS, (unsigned long long)hash, (unsigned long long)GOLDEN_CPU_HASH, seconds() - start, (long long)pairs);
    if (hash != GOLDEN_CPU_HASH)
        fprintf(stderr, "  the CPU reference's results changed: if the step's definition changed on purpose, run "
                        "'test_determinism print_hashes' and update GOLDEN_CPU_HASH in tests/test_determinism.c\n");
    ENSURE(hash == GOLDEN_CPU_HASH);
    ENSURE(pairs > 0);
}

#ifdef SM_TEST_OPENCL
/// Sets $SM_WORK_GROUP_SIZE to `size`.
static void set_work_group_size(size_t size)
{
    char text[32];
    snprintf(text, sizeof text, "%zu", size);
    setenv("SM_WORK_GROUP_SIZE", text, 1);
}

/// The largest work-group size every per-item kernel supports on the default device: the
/// smallest of CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES[0] and each
/// kernel's CL_KERNEL_WORK_GROUP_SIZE (0 when there is no device).
static size_t largest_work_group(void)
{
    sm_world_def wd = sm_world_def_default();
    wd.backend = SM_BACKEND_OPENCL;
    sm_world *world = NULL;
    ENSURE_OK(sm_world_create(&wd, &world));
    if (!world) return 0;
    const sm_cl_backend *cl = world->cl;
    size_t items[3] = {0, 0, 0}, largest = cl->device->max_group;
    ENSURE(clGetDeviceInfo(cl->device->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL) == CL_SUCCESS);
    if (items[0] < largest) largest = items[0];
    for (int k = 0; k < SM_CLK_COUNT; k++) {
        size_t group = 0;
        if (k == SM_CLK_CLUSTER_MOMENTS_GROUP) continue; // its size is fixed
        ENSURE(clGetKernelWorkGroupInfo(cl->kernels[k], cl->device->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof group,
                                        &group, NULL) == CL_SUCCESS);
        if (group < largest) largest = group;
    }
    printf("  %s: work-groups of up to %zu work-items for every per-item kernel\n", cl->device->name, largest);
    sm_world_destroy(world);
    return largest;
}

/// paper384 on the default OpenCL device: two runs of STEPS steps with the default work-group
/// size give one hash; so does a run of SHORT_STEPS steps (to keep the test short) with each
/// other power of two from 1 to the largest size the device supports (at most LARGEST_TRIED),
/// against the hash of the first run at that step. A size beyond the device's limit, or not a
/// power of two, is refused with an error that names $SM_WORK_GROUP_SIZE.
static void opencl_runs_are_bit_identical_for_every_work_group_size(void)
{
    if (getenv("SM_WORK_GROUP_SIZE")) printf("  (ignoring SM_WORK_GROUP_SIZE=%s)\n", getenv("SM_WORK_GROUP_SIZE"));
    unsetenv("SM_WORK_GROUP_SIZE"); // the default first
    const size_t largest = largest_work_group();
    if (largest == 0) return;

    // the default, twice, in full
    uint64_t hashes[2] = {0, 0}, early = 0;
    int64_t pairs = 0;
    size_t default_group = 0;
    for (int run = 0; run < 2; run++) {
        const double start = seconds();
        hashes[run] = run_paper384(SM_BACKEND_OPENCL, STEPS, SHORT_STEPS, run == 0 ? &early : NULL, &pairs, &default_group);
        printf("  default work-group size (%zu): hash after %d steps %016llx (%.1f s, up to %lld overlapping pairs)\n",
               default_group, STEPS, (unsigned long long)hashes[run], seconds() - start, (long long)pairs);
        ENSURE(pairs > 0);
    }
    ENSURE(hashes[0] == hashes[1]);
    ENSURE(hashes[0] != 0);

    // every other power of two the device supports, for SHORT_STEPS steps
    int sizes = 1;
    for (size_t size = 1; size <= largest && size <= LARGEST_TRIED; size *= 2) {
        if (size == default_group) continue;
        set_work_group_size(size);
        const double start = seconds();
        size_t used = 0;
        const uint64_t hash = run_paper384(SM_BACKEND_OPENCL, SHORT_STEPS, 0, NULL, NULL, &used);
        printf("  work-group size %4zu: hash after %d steps %016llx (%s the default's; %.1f s)\n", size, SHORT_STEPS,
               (unsigned long long)hash, hash == early ? "equal to" : "DIFFERENT from", seconds() - start);
        ENSURE(used == size);
        ENSURE(hash == early);
        sizes++;
    }
    ENSURE(sizes >= 3);

    // a size the device cannot run, and one that is not a power of two, are refused
    const size_t refused[2] = {2 * largest, 48};
    for (int k = 0; k < 2; k++) {
        set_work_group_size(refused[k]);
        sm_world_def wd = sm_world_def_default();
        wd.backend = SM_BACKEND_OPENCL;
        sm_world *world = NULL;
        const sm_result result = sm_world_create(&wd, &world);
        printf("  SM_WORK_GROUP_SIZE=%zu: %s: %s\n", refused[k], sm_result_name(result), sm_last_error());
        ENSURE(result == (k == 0 ? SM_ERROR_UNAVAILABLE : SM_ERROR_INVALID_ARGUMENT));
        ENSURE(world == NULL);
        ENSURE(strstr(sm_last_error(), "SM_WORK_GROUP_SIZE") != NULL);
        sm_world_destroy(world);
    }
    unsetenv("SM_WORK_GROUP_SIZE");
}
#endif

/// `test_determinism print_hashes`: the CPU reference's hash after STEPS steps, as the line
/// that defines GOLDEN_CPU_HASH (nothing is checked).
static int print_hashes(void)
{
    const double start = seconds();
    const uint64_t hash = run_paper384(SM_BACKEND_CPU, STEPS, 0, NULL, NULL, NULL);
    fprintf(stderr, "paper384, %d steps on the CPU reference in %.1f s\n", STEPS, seconds() - start);
    printf("#define GOLDEN_CPU_HASH 0x%016llxull\n", (unsigned long long)hash);
    return sm_test_failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "print_hashes") == 0) return print_hashes();
    const sm_test_case tests[] = {
        TEST(cpu_reference_matches_the_golden_hash),
#ifdef SM_TEST_OPENCL
        TEST(opencl_runs_are_bit_identical_for_every_work_group_size),
#endif
    };
    return sm_test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
