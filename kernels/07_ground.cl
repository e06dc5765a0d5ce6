/* Pass 7, ground and pusher (README steps 9 and 9b): particles below y = height are put back on
 * the plane, their downward speed reflected with restitution and their tangential velocity
 * reduced by friction; then particles inside the pusher sphere are put on its surface and lose
 * the inward part of their velocity relative to it. */
#include "sm_shared.h"

/// Ground contact, then the pusher, of every free particle. ground = (height, restitution,
/// friction, height's remainder), the height being a double-float pair like the positions;
/// pusher = (centre, radius) and pusher_lo = (the centre's remainder, 0), a double-float pair
/// like the positions; pusher_velocity = (velocity, 0); `flags` holds SM_K_GROUND and
/// SM_K_PUSHER for the parts that are on.
__kernel void sm_ground(const int particle_count, const int flags, const float4 ground, const float4 pusher,
                        const float4 pusher_lo, const float4 pusher_velocity, __global const float4 *force,
                        __global float4 *position,
                        __global float4 *position_lo, __global float4 *velocity)
{
    const int i = get_global_id(0);
    if (i >= particle_count || force[i].w == 0.0f) return; // padding, or fixed
    float4 x = position[i];
    float4 x_lo = position_lo[i];
    float4 v = velocity[i];
    bool moved = false;
    if ((flags & SM_K_GROUND) && (x.y - ground.x) + (x_lo.y - ground.w) < 0.0f) {
        x.y = ground.x;
        x_lo.y = ground.w;
        if (v.y < 0.0f) v.y = -ground.y * v.y;
        v.x *= 1.0f - ground.z;
        v.z *= 1.0f - ground.z;
        moved = true;
    }
    if (flags & SM_K_PUSHER) {
        const float3 d = (x.xyz - pusher.xyz) + (x_lo.xyz - pusher_lo.xyz);
        const float distance = length(d);
        if (distance < pusher.w) {
            const float3 n = distance > 0.0f ? d / distance : (float3)(0.0f, 1.0f, 0.0f);
            // x = c + r n in double-float: TwoSum keeps the rounding of the float sum
            const float3 step = pusher.w * n;
            const float3 s = pusher.xyz + step;
            const float3 b = s - pusher.xyz;
            const float3 e = (pusher.xyz - (s - b)) + (step - b) + pusher_lo.xyz;
            x.xyz = s + e;
            x_lo.xyz = e - (x.xyz - s);
            const float approach = dot(v.xyz - pusher_velocity.xyz, n);
            if (approach < 0.0f) v.xyz -= approach * n;
            moved = true;
        }
    }
    if (!moved) return;
    position[i] = x;
    position_lo[i] = x_lo;
    velocity[i] = v;
}
