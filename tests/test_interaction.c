/* The viewer's interaction tools (Henriques & Wuensche 2007, section 3) without a window:
 * picking by ray, the spring that drags a particle, locking, clearing, and the push sphere. */
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

int main(int argc, char **argv)
{
    static const sm_test_case tests[] = {
        TEST(ray_picks_the_nearest_particle),
        TEST(spring_drags_the_object_at_any_step),
        TEST(lock_regrab_and_clear),
        TEST(push_sphere_follows_and_pushes),
    };
    return sm_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
