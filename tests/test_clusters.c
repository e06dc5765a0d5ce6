/* Clusters from a grid and from lists (paper section 4.4; docs/algorithm.md "Clusters from a grid"). */
#include "support.h"

#include <stdlib.h>

static int32_t cluster_count(const sm_world *world) { return sm_world_get_counts(world).clusters; }

/// Member list of cluster c as a string "0 1 2 ...", for exact comparisons.
static const char *members(const sm_world *world, int32_t c)
{
    static char text[4096];
    const int32_t *list = NULL;
    int32_t n = 0;
    text[0] = '\0';
    if (sm_world_get_cluster_members(world, c, &list, &n) != SM_OK) return "?";
    size_t o = 0;
    for (int32_t k = 0; k < n && o < sizeof text - 16; k++) o += (size_t)snprintf(text + o, sizeof text - o, "%s%d", k ? " " : "", list[k]);
    return text;
}

/// On a 4x4x4 lattice a 2x2x2 grid with overlap 0.25 gives 8 disjoint clusters of 8 (the grown
/// cells reach 0.125 past the centre, short of the next layer at 1/6 past it); on a 3x3x3
/// lattice the middle layers are shared, and a cell boundary that falls exactly on a layer
/// (overlap 0) counts as inside for both cells.
static void grid_regions_and_inclusive_boundaries(void)
{
    const char *scenes[] = {
        "{\"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"clusters\": {\"grid\": [2, 2, 2]}}]}",
        "{\"objects\": [{\"shape\": \"box\", \"resolution\": [3, 3, 3], \"clusters\": {\"grid\": [2, 2, 2]}}]}",
        "{\"objects\": [{\"shape\": \"box\", \"resolution\": [3, 3, 3], \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0}}]}",
        "{\"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0.5}}]}",
    };
    const int32_t expected_size[] = {8, 8, 8, 27};
    for (int s = 0; s < 4; s++) {
        sm_world *world = world_from_json(scenes[s]);
        if (!world) continue;
        ENSURE(cluster_count(world) == 8);
        ENSURE(sm_world_get_counts(world).memberships == 8 * expected_size[s]);
        for (int32_t c = 0; c < cluster_count(world); c++) {
            sm_cluster_info info;
            sm_world_get_cluster(world, c, &info);
            ENSURE(info.member_count == expected_size[s]);
            ENSURE(info.modes == 3);
        }
        sm_world_destroy(world);
    }
    // boundaries inclusive up to round-off: with 7 particles over 0.7 m and 3 cells, the points
    // at x indices 2 and 4 lie on cell edges; in floating point the one at index 4 sits 1.4e-17 m
    // below cell 2's lower edge, and still belongs to cells 1 and 2
    sm_world *edge = world_from_json("{\"objects\": [{\"shape\": \"box\", \"size\": [0.7, 0.1, 0.1], \"resolution\": [7, 2, 2],"
                                     " \"clusters\": {\"grid\": [3, 1, 1], \"overlap\": 0}}]}");
    if (edge) {
        ENSURE(cluster_count(edge) == 3);
        ENSURE(sm_world_get_counts(edge).memberships == 36);
        ENSURE(strcmp(members(edge, 1), "2 3 4 9 10 11 16 17 18 23 24 25") == 0);
        ENSURE(strcmp(members(edge, 2), "4 5 6 11 12 13 18 19 20 25 26 27") == 0);
        sm_world_destroy(edge);
    }
    // cell 0 of the 3x3x3 lattice holds the 2x2x2 corner block: x, y, z in {0, 1}
    sm_world *world = world_from_json(scenes[2]);
    if (world) ENSURE(strcmp(members(world, 0), "0 1 3 4 9 10 12 13") == 0);
    // cells are numbered x fastest: cell 1 is the block at x in {1, 2}
    if (world) ENSURE(strcmp(members(world, 1), "1 2 4 5 10 11 13 14") == 0);
    sm_world_destroy(world);
}

/// A region with fewer than 4 particles is dropped, and a particle left in no cluster joins the
/// kept cluster whose region centre is nearest, a tie going to the lower number.
static void sparse_regions_drop_and_orphans_join_the_nearest(void)
{
    // along x only (y and z have no extent, so one cell each): 4 points in cell 0, one point at
    // the centre of cell 1 (dropped, equidistant from cells 0 and 2), 4 points in cell 2
    sm_world *world = world_from_json(
        "{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [0.2, 0, 0], [0.4, 0, 0], [0.6, 0, 0],"
        " [1.5, 0, 0], [2.4, 0, 0], [2.6, 0, 0], [2.8, 0, 0], [3, 0, 0]], \"clusters\": {\"grid\": [3, 2, 2], \"overlap\": 0}}]}");
    if (world) {
        ENSURE(cluster_count(world) == 2);
        ENSURE(strcmp(members(world, 0), "0 1 2 3 4") == 0);
        ENSURE(strcmp(members(world, 1), "5 6 7 8") == 0);
        sm_world_destroy(world);
    }
    // a far outlier's region is dropped; it joins the only kept cluster
    world = world_from_json(
        "{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],"
        " [1, 0, 1], [0, 1, 1], [1, 1, 1], [10, 10, 10]], \"clusters\": {\"grid\": [2, 2, 2], \"overlap\": 0}}]}");
    if (world) {
        ENSURE(cluster_count(world) == 1);
        ENSURE(strcmp(members(world, 0), "0 1 2 3 4 5 6 7 8") == 0);
        sm_world_destroy(world);
    }
    // every region dropped: one cluster of the whole object
    world = world_from_json(
        "{\"objects\": [{\"shape\": \"points\", \"points\": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], \"clusters\": {\"grid\": [2, 2, 2]}}]}");
    if (world) {
        ENSURE(cluster_count(world) == 1);
        ENSURE(strcmp(members(world, 0), "0 1 2") == 0);
        sm_world_destroy(world);
    }
}

static int notices = 0;
static void count_notices(sm_log_level level, const char *message, void *user)
{
    (void)user;
    if (level == SM_LOG_NOTICE && strstr(message, "modes")) notices++;
}

/// A flat object gets one cell along its flat axis; its clusters support 2 of 3 linear modes
/// and the library says so through the log callback.
static void flat_objects_degrade_and_say_so(void)
{
    sm_scene *scene = NULL;
    ENSURE_OK(sm_scene_load_string("{\"objects\": [{\"shape\": \"box\", \"size\": [1, 1, 0], \"resolution\": [4, 4, 1],"
                                   " \"clusters\": {\"grid\": [2, 2, 2]}}]}",
                                   "flat", &scene));
    sm_world_def def = sm_scene_world_def(scene);
    def.log = count_notices;
    def.backend = SM_BACKEND_CPU;
    sm_world *world = NULL;
    notices = 0;
    ENSURE_OK(sm_scene_create_world(scene, &def, &world));
    ENSURE(cluster_count(world) == 4);
    ENSURE(notices == 4);
    for (int32_t c = 0; c < cluster_count(world); c++) {
        sm_cluster_info info;
        sm_world_get_cluster(world, c, &info);
        ENSURE(info.modes == 2);
    }
    // it still steps without NaN
    for (int s = 0; s < 100; s++) ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    ENSURE(!world_has_nan(world));
    sm_world_destroy(world);
    sm_scene_destroy(scene);
}

/// Explicit lists are kept as given, and a second object's clusters refer to its own particles
/// (offset by the particles before it); clusters of a rotated object come from its own frame.
static void explicit_lists_and_object_offsets(void)
{
    sm_world *world = world_from_json(
        "{\"objects\": [{\"shape\": \"box\", \"resolution\": [2, 2, 2]},"
        " {\"shape\": \"box\", \"resolution\": [2, 2, 2], \"clusters\": {\"lists\": [[7, 0, 3], [1, 2, 4, 5, 6, 7]]}},"
        " {\"shape\": \"box\", \"resolution\": [4, 4, 4], \"rotation\": [0, 45, 0], \"clusters\": {\"grid\": [2, 2, 2]}}]}");
    if (!world) return;
    ENSURE(cluster_count(world) == 1 + 2 + 8);
    ENSURE(strcmp(members(world, 1), "15 8 11") == 0);
    ENSURE(strcmp(members(world, 2), "9 10 12 13 14 15") == 0);
    sm_object_info info;
    sm_world_get_object(world, 1, &info);
    ENSURE(info.first_cluster == 1 && info.cluster_count == 2 && info.membership_count == 9);
    // the rotated cube keeps the unrotated cube's 8 disjoint clusters of 8
    for (int32_t c = 3; c < 11; c++) {
        sm_cluster_info ci;
        sm_world_get_cluster(world, c, &ci);
        ENSURE(ci.member_count == 8 && ci.object == 2);
    }
    ENSURE(sm_world_get_cluster(world, 11, &(sm_cluster_info){0}) == SM_ERROR_INVALID_ARGUMENT);
    sm_world_destroy(world);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(grid_regions_and_inclusive_boundaries),
        TEST(sparse_regions_drop_and_orphans_join_the_nearest),
        TEST(flat_objects_degrade_and_say_so),
        TEST(explicit_lists_and_object_offsets),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
