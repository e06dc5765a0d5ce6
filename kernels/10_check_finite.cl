/* Pass 10, the state check (sm_world_def.check_interval): the lowest index of a particle whose
 * position or velocity is not finite, or INT_MAX. An atomic minimum on an int gives the same
 * answer in any order. */
#include "sm_shared.h"

/// first_bad (INT_MAX before the pass) becomes the lowest index of a non-finite particle.
__kernel void sm_check_finite(const int particle_count, __global const float4 *position, __global const float4 *position_lo,
                              __global const float4 *velocity, __global int *first_bad)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    const float3 x = position[i].xyz, lo = position_lo[i].xyz, v = velocity[i].xyz;
    const bool finite = isfinite(x.x) && isfinite(x.y) && isfinite(x.z) && isfinite(lo.x) && isfinite(lo.y) &&
                        isfinite(lo.z) && isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
    if (!finite) atomic_min(first_bad, i);
}
