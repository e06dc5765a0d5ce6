#include "cpu_passes.h"
#include "../math3.h"

void sm_cpu_cluster_moments(sm_world *world)
{
    for (int32_t c = 0; c < world->cluster_count; c++) {
        sm_cluster *cluster = &world->clusters[c];
        const int32_t begin = cluster->first_member, end = begin + cluster->member_count;
        const bool quadratic = world->objects[cluster->object].mode == SM_MODE_QUADRATIC;

        sm_vec3 sum = {0, 0, 0}, momentum = {0, 0, 0};
        for (int32_t k = begin; k < end; k++) {
            int32_t i = world->member_particle[k];
            sum = v3_add(sum, v3_scale(world->position[i], world->member_mass[k]));
            momentum = v3_add(momentum, v3_scale(world->velocity[i], world->member_mass[k]));
        }
        sm_vec3 center = v3_scale(sum, 1.0 / cluster->mass);
        // (a fixed member holds the cluster where it is: the deviation limit's reference stays)
        cluster->velocity = cluster->anchored ? v3(0, 0, 0) : v3_scale(momentum, 1.0 / cluster->mass);

        sm_mat3 apq = m3_zero();
        double apq9[3][9] = {{0}};
        for (int32_t k = begin; k < end; k++) {
            int32_t i = world->member_particle[k];
            double m = world->member_mass[k];
            sm_vec3 p = v3_sub(world->position[i], center);
            sm_vec3 q = world->member_q[k];
            apq = m3_add(apq, m3_scale(m3_outer(p, q), m));
            if (quadratic) {
                double qt[9];
                sm_quadratic_terms(q, cluster->quad_mean, qt);
                for (int j = 0; j < 9; j++) {
                    apq9[0][j] += m * p.x * qt[j];
                    apq9[1][j] += m * p.y * qt[j];
                    apq9[2][j] += m * p.z * qt[j];
                }
            }
        }
        cluster->center = center;
        cluster->apq = apq;
        if (quadratic)
            for (int r = 0; r < 3; r++)
                for (int j = 0; j < 9; j++) cluster->apq9[r][j] = apq9[r][j];
    }
}
