/* The viewer's interaction tools (Henriques & Wuensche 2007, section 3) without a window:
 * picking by ray, the spring that drags a particle, locking, clearing, the push sphere, and the
 * scissors (the cut plane from the cursor's ray and the blades' angle, which objects they
 * reach, and the cut itself with the springs following their particles). */
#include "math3.h"
#include "support.h"
#include "tools.h"

#include <stdlib.h>

static const char *box_scene = "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4],"
                               " \"mode\": \"linear\", \"alpha\": 0.3, \"damping\": 1}]}";
/// The same box with a constant force of its own, which springs must give back when they go.
static const char *pushed_box_scene = "{\"gravity\": [0, 0, 0], \"objects\": [{\"shape\": \"box\", \"resolution\": [4, 4, 4],"
                                      " \"mode\": \"linear\", \"alpha\": 0.3, \"damping\": 1, \"force\": [0.5, 0, 0]}]}";

/// A ray picks the first particle it meets, not one behind it, and nothing when it misses.
static void ray_picks_the_nearest_particle(void)
{
    const float xyzw[12] = {0, 0, 0, 1, 0, 0, -2, 1, 3, 0, 0, 1};
    const float radius[3] = {0.1f, 0.1f, 0.1f};
    view_ray ray = {{0, 0, 5}, {0, 0, -1}};
    double t = 0.0;
    ENSURE(tools_pick_particle(xyzw, radius, 3, 0.0, ray, &t) == 0);
    ENSURE_SMALL(t - 4.9, 1e-6);
    ray.origin = (sm_vec3){0, 0, -5}, ray.direction = (sm_vec3){0, 0, 1};
    ENSURE(tools_pick_particle(xyzw, radius, 3, 0.0, ray, NULL) == 1);
    ray.origin = (sm_vec3){0.5, 0, 5}, ray.direction = (sm_vec3){0, 0, -1};
    ENSURE(tools_pick_particle(xyzw, radius, 3, 0.0, ray, NULL) == -1);
    ENSURE(tools_pick_particle(xyzw, radius, 3, 0.6, ray, NULL) == 0); // a pick tolerance widens the spheres
}

/// A dragged spring pulls its particle to the target and the object follows; the pull is
/// stable at any step length (a fraction of the distance per step, like alpha): at 1/10 s and
/// at 1/1000 s the particle ends near the target without blowing up, and the object has
/// followed it up by at least 40% of the target's rise, within 8 s. (The pull fades as the
/// particle nears the target, so the rest of the object catches up slowly, more so at long
/// steps, whose pull per second is weaker.) Letting go restores the particle's own force.
static void spring_drags_the_object_at_any_step(void)
{
    const double steps[2] = {1.0 / 10.0, 1.0 / 1000.0};
    for (int k = 0; k < 2; k++) {
        sm_world *world = world_from_json(box_scene);
        if (!world) return;
        view_tools tools;
        tools_init(&tools);
        const int32_t particle = 5;
        double x0[3], base[3];
        ENSURE_OK(sm_world_get_positions(world, particle, 1, x0));
        ENSURE_OK(sm_world_get_forces(world, particle, 1, base));
        const sm_vec3 target = {x0[0], x0[1] + 1.0, x0[2]};
        ENSURE_OK(tools_grab(&tools, world, particle, target, 1.0));
        const double dt = steps[k], duration = 8.0;
        double rise = 0.0;
        for (int s = 0; s < (int)(duration / dt + 0.5); s++) {
            ENSURE_OK(tools_apply(&tools, world, dt));
            ENSURE_OK(sm_world_step(world, dt, 1));
        }
        double x[3];
        ENSURE_OK(sm_world_get_positions(world, particle, 1, x));
        const double miss = sqrt((x[0] - target.x) * (x[0] - target.x) + (x[1] - target.y) * (x[1] - target.y) +
                                 (x[2] - target.z) * (x[2] - target.z));
        double *all = get_positions(world);
        for (int32_t i = 0; i < 64; i++) rise += all[3 * i + 1] / 64.0;
        free(all);
        printf("  dt %.4f s: particle %.3f m from the target, object risen %.3f m\n", dt, miss, rise);
        ENSURE(!world_has_nan(world));
        ENSURE_RANGE(miss, 0.0, 0.1);
        ENSURE_RANGE(rise, 0.4, 1.1); // the object followed the particle up (measured 0.51 and 0.80 of the way)
        ENSURE_OK(tools_release(&tools, world));
        ENSURE(tools.spring_count == 0 && tools.dragging == -1);
        double after[3];
        ENSURE_OK(sm_world_get_forces(world, particle, 1, after));
        ENSURE(after[0] == base[0] && after[1] == base[1] && after[2] == base[2]);
        sm_world_destroy(world);
    }
}

/// A locked spring stays when the mouse lets go, can be grabbed again (then letting go removes
/// it), and clearing removes every spring, restoring each particle's own force, also when two
/// springs held one particle and the older went first.
static void lock_regrab_and_clear(void)
{
    sm_world *world = world_from_json(pushed_box_scene);
    if (!world) return;
    view_tools tools;
    tools_init(&tools);
    double base[3];
    ENSURE_OK(sm_world_get_forces(world, 0, 1, base));
    ENSURE(base[0] > 0.0); // the object's constant force, shared among its particles
    ENSURE_OK(tools_grab(&tools, world, 0, v3(0, 2, 0), 1.0));
    tools_lock(&tools);
    ENSURE_OK(tools_release(&tools, world)); // nothing dragged: the locked spring stays
    ENSURE(tools.spring_count == 1 && tools.springs[0].locked);
    // the ray through its target grabs it again
    const view_ray ray = {{0, 2, 5}, {0, 0, -1}};
    ENSURE(tools_pick_target(&tools, ray, 0.1) == 0);
    tools_regrab(&tools, 0, 5.0);
    ENSURE(tools.dragging == 0 && !tools.springs[0].locked);
    tools_lock(&tools);
    // the first spring pulls for a step, then a second one grabs the same particle: its own
    // force is still the particle's, not the pull of the first
    ENSURE_OK(tools_apply(&tools, world, 1.0 / 60.0));
    ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    ENSURE_OK(tools_grab(&tools, world, 0, v3(0, -2, 0), 1.0));
    tools_lock(&tools);
    // the first is grabbed again and let go: the second keeps pulling alone
    tools_regrab(&tools, 0, 5.0);
    ENSURE_OK(tools_release(&tools, world));
    ENSURE(tools.spring_count == 1 && tools.springs[0].particle == 0);
    ENSURE_OK(tools_grab(&tools, world, 9, v3(3, 0, 0), 1.0));
    for (int s = 0; s < 10; s++) {
        ENSURE_OK(tools_apply(&tools, world, 1.0 / 60.0));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    }
    double held[3];
    ENSURE_OK(sm_world_get_forces(world, 0, 1, held));
    ENSURE(held[0] != base[0] || held[1] != base[1]);
    ENSURE_OK(tools_clear(&tools, world));
    ENSURE(tools.spring_count == 0 && tools.dragging == -1);
    double after[3], other[3], base9[3];
    ENSURE_OK(sm_world_get_forces(world, 0, 1, after));
    ENSURE_OK(sm_world_get_forces(world, 9, 1, other));
    ENSURE_OK(sm_world_get_forces(world, 10, 1, base9)); // an untouched particle of the same mass
    ENSURE(after[0] == base[0] && after[1] == base[1] && after[2] == base[2]);
    ENSURE(other[0] == base9[0] && other[1] == base9[1] && other[2] == base9[2]);
    sm_world_destroy(world);
}

/// The push sphere given by the tools moves with the cursor: its velocity is the last move over
/// the step, and a sphere placed inside the box leaves no particle inside after a step.
static void push_sphere_follows_and_pushes(void)
{
    sm_world *world = world_from_json(box_scene);
    if (!world) return;
    view_tools tools;
    tools_init(&tools);
    tools.push_mode = true;
    tools_place_pusher(&tools, true, v3(0.85, 0.1, 0.1), 0.3);
    ENSURE_OK(tools_apply(&tools, world, 0.1));
    ENSURE(tools.pusher.enabled);
    tools_place_pusher(&tools, true, v3(0.75, 0.1, 0.1), 0.3);
    ENSURE_OK(tools_apply(&tools, world, 0.1));
    ENSURE_OK(sm_world_step(world, 0.1, 1));
    double *x = get_positions(world);
    for (int32_t i = 0; i < 64; i++) {
        const double d = sqrt((x[3 * i] - 0.75) * (x[3 * i] - 0.75) + (x[3 * i + 1] - 0.1) * (x[3 * i + 1] - 0.1) +
                              (x[3 * i + 2] - 0.1) * (x[3 * i + 2] - 0.1));
        ENSURE(d >= 0.3 - 1e-12);
    }
    free(x);
    // the sphere moved by -0.1 m in 0.1 s into the box's +x face: the box is pushed toward -x
    const sm_vec3 p = linear_momentum(world, 0);
    printf("  momentum after the push: (%.3f, %.3f, %.3f) kg m/s\n", p.x, p.y, p.z);
    ENSURE(p.x < 0.0);
    tools_place_pusher(&tools, false, v3(0, 0, 0), 0.3);
    ENSURE_OK(tools_apply(&tools, world, 0.1));
    ENSURE(!tools.pusher.enabled);
    sm_world_destroy(world);
}

/// The blades' plane holds the cursor's ray (its origin, the eye, and its direction) and the
/// blades' direction, which turns on the screen with the angle: at 90 degrees it points up the
/// screen and, through the centre of the picture, the plane's normal is the screen's right; at
/// 0 degrees the plane is the one of the screen's right and the view, with normal up. The apex
/// lies on the ray at the depth asked for. Off the centre it still holds the ray.
static void blades_plane_holds_the_ray(void)
{
    const double pi = 3.14159265358979323846;
    const view_camera camera = camera_frame(v3(-1, 0, -1), v3(1, 1, 1), 1280, 720);
    sm_vec3 forward, right, up;
    camera_basis(&camera, &forward, &right, &up);
    const view_ray centre = camera_ray(&camera, 640, 360);
    const double depth = camera_depth(&camera, camera.target);
    view_blades b = tools_blades(&camera, centre, 0.5 * pi, depth);
    ENSURE_SMALL(v3_length(b.plane.normal) - 1.0, 1e-12);
    ENSURE_SMALL(v3_dot(b.direction, up) - 1.0, 1e-9);
    ENSURE_SMALL(fabs(v3_dot(b.plane.normal, right)) - 1.0, 1e-6);
    ENSURE_SMALL(camera_depth(&camera, b.apex) - depth, 1e-9);
    ENSURE_SMALL(v3_length(v3_sub(b.apex, camera.target)), 1e-6); // the centre ray meets the target
    b = tools_blades(&camera, centre, 0.0, depth);
    ENSURE_SMALL(v3_dot(b.direction, right) - 1.0, 1e-9);
    ENSURE_SMALL(fabs(v3_dot(b.plane.normal, up)) - 1.0, 1e-6);
    for (int k = 0; k < 24; k++) { // every 15 degrees, through a corner of the picture
        const view_ray ray = camera_ray(&camera, 100, 650);
        b = tools_blades(&camera, ray, k * pi / 12.0, 0.5 * depth);
        ENSURE_SMALL(v3_dot(v3_sub(ray.origin, b.plane.point), b.plane.normal), 1e-9);
        ENSURE_SMALL(v3_dot(ray.direction, b.plane.normal), 1e-9);
        ENSURE_SMALL(v3_dot(b.direction, b.plane.normal), 1e-9);
        ENSURE_SMALL(v3_dot(b.direction, forward), 1e-12); // the blades lie in the plane facing the camera
        ENSURE_SMALL(v3_dot(b.side, forward), 1e-12);
        ENSURE_SMALL(v3_dot(b.side, b.direction), 1e-12);
        ENSURE_SMALL(v3_dot(b.direction, right) - cos(k * pi / 12.0), 1e-9);
    }
}

/// The blades cross an object when its particles within their reach of the ray lie on both
/// sides of the plane: not when the particles near the ray are all on one side, nor when the
/// ones on the other side are out of reach, nor behind the eye.
static void blades_reach_only_near_the_ray(void)
{
    // the ray runs down -z through the origin; the plane is x = 0
    const view_ray ray = {{0, 0, 10}, {0, 0, -1}};
    const sm_plane plane = {{0, 0, 0}, {1, 0, 0}};
    const int32_t both[2] = {0, 1};
    const float straddling[8] = {-0.1f, 0, 0, 1, 0.1f, 0, 0, 1};
    const float one_side[8] = {0.1f, 0, 0, 1, 0.2f, 0.3f, 0, 1};
    const float far_side[8] = {0.1f, 0, 0, 1, -2.0f, 0, 0, 1}; // the one behind the plane is 2 m off the ray
    const float behind_eye[8] = {0.1f, 0, 0, 1, -0.1f, 0, 12.0f, 1};
    ENSURE(tools_blades_cross(straddling, both, 2, plane, ray, 0.5));
    ENSURE(!tools_blades_cross(straddling, both, 1, plane, ray, 0.5));
    ENSURE(!tools_blades_cross(one_side, both, 2, plane, ray, 0.5));
    ENSURE(!tools_blades_cross(far_side, both, 2, plane, ray, 0.5));
    ENSURE(tools_blades_cross(far_side, both, 2, plane, ray, 2.5));
    ENSURE(!tools_blades_cross(behind_eye, both, 2, plane, ray, 0.5));
    // a particle on the plane counts as behind it, as sm_world_cut() decides
    const float on_plane[8] = {0.0f, 0, 0, 1, 0.1f, 0, 0, 1};
    ENSURE(tools_blades_cross(on_plane, both, 2, plane, ray, 0.5));
}

/// Two boxes 3 m apart; the cursor's ray passes through the first, seen from +z with the blades
/// up the screen: the click cuts the first box (only it: the plane x = 0 misses the other) into
/// two pieces of 32 particles, the front piece becomes object 2, the second box keeps its id 1
/// and its particles, and a spring on a particle of the first box still holds the same particle
/// (same index, same position) after the cut.
static void scissors_cut_what_they_reach(void)
{
    sm_world *world = world_from_json("{\"gravity\": [0, 0, 0], \"objects\": ["
                                      "{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"mode\": \"linear\"},"
                                      "{\"shape\": \"box\", \"resolution\": [4, 4, 4], \"position\": [3, 0, 0]}]}");
    if (!world) return;
    const sm_counts before = sm_world_get_counts(world);
    ENSURE(before.objects == 2 && before.particles == 128);
    view_tools tools;
    tools_init(&tools);
    const int32_t held = 5; // x < 0: the back piece of a plane with normal -x or the front of one with +x
    double x0[3];
    ENSURE_OK(sm_world_get_positions(world, held, 1, x0));
    ENSURE_OK(tools_grab(&tools, world, held, v3(x0[0], x0[1] + 1.0, x0[2]), 1.0));
    tools_lock(&tools);
    // a camera on +z looking at the first box: yaw 0, pitch 0
    view_camera camera = camera_frame(v3(-0.5, -0.5, -0.5), v3(0.5, 0.5, 0.5), 800, 600);
    camera.yaw = 0.0, camera.pitch = 0.0;
    const view_ray ray = camera_ray(&camera, 400, 300);
    const view_blades blades = tools_blades(&camera, ray, 0.5 * 3.14159265358979323846, camera_depth(&camera, camera.target));
    float *xyzw = malloc(sizeof(float) * 4 * 128);
    ENSURE_OK(sm_world_get_float4(world, SM_FIELD_POSITION, 0, 128, xyzw));
    sm_cut_info cuts[4];
    int count = 0;
    ENSURE_OK(tools_cut(world, xyzw, &blades, ray, 0.3, cuts, 4, &count));
    free(xyzw);
    ENSURE(count == 1);
    if (count != 1) {
        sm_world_destroy(world);
        return;
    }
    ENSURE(cuts[0].cut && cuts[0].back_object == 0 && cuts[0].front_object == 2);
    ENSURE(cuts[0].back_particles == 32 && cuts[0].front_particles == 32);
    const sm_counts after = sm_world_get_counts(world);
    ENSURE(after.objects == 3 && after.particles == 128);
    sm_object_info second;
    ENSURE_OK(sm_world_get_object(world, 1, &second));
    ENSURE(second.first_particle == 64 && second.particle_count == 64 && second.contiguous);
    double x1[3];
    ENSURE(tools.spring_count == 1 && tools.springs[0].particle == held);
    ENSURE_OK(sm_world_get_positions(world, tools.springs[0].particle, 1, x1));
    ENSURE(x1[0] == x0[0] && x1[1] == x0[1] && x1[2] == x0[2]);
    // the pieces still step
    for (int s = 0; s < 10; s++) {
        ENSURE_OK(tools_apply(&tools, world, 1.0 / 60.0));
        ENSURE_OK(sm_world_step(world, 1.0 / 60.0, 1));
    }
    ENSURE(!world_has_nan(world));
    sm_world_destroy(world);
}

/// A scene's scripted cut (which the viewer learns of only from sm_world_get_cuts()) leaves
/// every particle at its index: each spring's particle is where it was, bit for bit, some of them
/// are now in the front piece, and the world's record of the cut names both pieces.
static void springs_keep_their_particles_through_a_cut(void)
{
    sm_world *world = world_from_json(box_scene);
    if (!world) return;
    view_tools tools;
    tools_init(&tools);
    double before[8][3];
    for (int s = 0; s < 8; s++) {
        const int32_t particle = 8 * s + s % 4; // every column of x
        ENSURE_OK(sm_world_get_positions(world, particle, 1, before[s]));
        ENSURE_OK(tools_grab(&tools, world, particle, v3(0, 2, 0), 1.0));
        tools_lock(&tools);
    }
    sm_cut_info info;
    ENSURE_OK(sm_world_cut(world, 0, (sm_plane){{0.05, 0, 0}, {-1, 0.2, 0.1}}, &info));
    ENSURE(info.cut && sm_world_get_counts(world).objects == 2);
    const sm_cut_info *cuts = NULL;
    int32_t cut_count = 0;
    ENSURE_OK(sm_world_get_cuts(world, &cuts, &cut_count));
    ENSURE(cut_count == 1 && cuts[0].back_object == 0 && cuts[0].front_object == 1 &&
           cuts[0].back_particles + cuts[0].front_particles == 64);
    int in_front = 0;
    for (int s = 0; s < 8; s++) {
        double x[3];
        int32_t object = -1;
        ENSURE(tools.springs[s].particle == 8 * s + s % 4);
        ENSURE_OK(sm_world_get_positions(world, tools.springs[s].particle, 1, x));
        ENSURE_OK(sm_world_get_particle_objects(world, tools.springs[s].particle, 1, &object));
        ENSURE(x[0] == before[s][0] && x[1] == before[s][1] && x[2] == before[s][2]);
        in_front += object == 1;
    }
    printf("  %d of 8 springs hold particles of the front piece\n", in_front);
    ENSURE(in_front > 0 && in_front < 8);
    sm_world_destroy(world);
}

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(ray_picks_the_nearest_particle),
        TEST(spring_drags_the_object_at_any_step),
        TEST(lock_regrab_and_clear),
        TEST(push_sphere_follows_and_pushes),
        TEST(blades_plane_holds_the_ray),
        TEST(blades_reach_only_near_the_ray),
        TEST(scissors_cut_what_they_reach),
        TEST(springs_keep_their_particles_through_a_cut),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
