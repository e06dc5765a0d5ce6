/* Pass 7, ground and pusher (README steps 9 and 9b): particles below y = height are put back on
 * the plane, their downward speed reflected with restitution and their tangential velocity
 * reduced by friction; then particles inside the pusher sphere are put on its surface and lose
 * the inward part of their velocity relative to it. */
#include "sm_shared.h"

/// Ground contact, then the pusher, of every free particle. ground = (height, restitution,
/// friction, height's remainder), the height being a double-float pair like the positions;
/// pusher = (centre, radius), pusher_velocity = (velocity, 0); `flags` holds SM_K_GROUND and
/// SM_K_PUSHER for the parts that are on.
__kernel void sm_ground(const int particle_count, const int flags, const float4 ground, const float4 pusher,
                        const float4 pusher_velocity, __global const float4 *force, __global float4 *position,
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
        const float3 d = (x.xyz - pusher.xyz) + x_lo.xyz;
        const float distance = length(d);
        if (distance < pusher.w) {
            const float3 n = distance > 0.0f ? d / distance : (float3)(0.0f, 1.0f, 0.0f);
            x.xyz = pusher.xyz + pusher.w * n;
            x_lo.xyz = (float3)(0.0f);
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
