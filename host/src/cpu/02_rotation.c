#include "cpu_passes.h"
#include "../math3.h"

void sm_cpu_rotation(sm_world *world)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        cluster->rotation = sm_closest_rotation(cluster->apq);
        cluster->warm_start_set = false; // (a device warm start read back earlier is stale now)
    }
}
