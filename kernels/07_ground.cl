/* Pass 7, ground (algorithm.md step 9): particles below y = height are put back on the plane;
 * their downward speed is reflected with restitution and their tangential velocity reduced by
 * friction. */
#include "sm_shared.h"

/// Ground contact of every free particle; ground = (height, restitution, friction, height's
/// remainder), the height being a double-float pair like the positions.
__kernel void sm_ground(const int particle_count, const float4 ground, __global const float4 *force,
                        __global float4 *position, __global float4 *position_lo, __global float4 *velocity)
{
    const int i = get_global_id(0);
    if (i >= particle_count) return;
    float4 x = position[i];
    float4 x_lo = position_lo[i];
    const bool below = (x.y - ground.x) + (x_lo.y - ground.w) < 0.0f;
    if (force[i].w == 0.0f || !below) return; // fixed, or above the plane
    float4 v = velocity[i];
    x.y = ground.x;
    x_lo.y = ground.w;
    position_lo[i] = x_lo;
    if (v.y < 0.0f) v.y = -ground.y * v.y;
    v.x *= 1.0f - ground.z;
    v.z *= 1.0f - ground.z;
    position[i] = x;
    velocity[i] = v;
}
