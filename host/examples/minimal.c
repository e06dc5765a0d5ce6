/* The README's minimal program: a world, a soft box dropped on the ground, 60 steps, positions. */
#include <shapematch/shapematch.h>
#include <stdio.h>

int main(void)
{
    sm_world_def world_def = sm_world_def_default();
    world_def.ground.enabled = true;
    sm_world *world = NULL;
    if (sm_world_create(&world_def, &world) != SM_OK) {
        fprintf(stderr, "%s\n", sm_last_error());
        return 1;
    }
    sm_object_def box = sm_object_def_default(); // a 1 m box of 4 x 4 x 4 particles, 1 kg
    box.position = (sm_vec3){0.0, 2.0, 0.0};
    sm_world_add_object(world, &box, NULL);

    for (int step = 0; step < 60; step++) sm_world_step(world, 1.0 / 60.0, 1); // one second

    double corner[3];
    sm_world_get_positions(world, 0, 1, corner); // waits for the device, if there is one
    printf("after 1 s on %s: particle 0 at (%.3f, %.3f, %.3f) m\n", sm_world_backend_name(world), corner[0],
           corner[1], corner[2]);
    sm_world_destroy(world);
    return corner[1] < 1.5 ? 0 : 1; // it fell
}
