/* Adding objects (objects.c): their defs checked, their particles and clusters appended, and
 * their parameters changed while the world runs. */
#ifndef SM_OBJECTS_H
#define SM_OBJECTS_H

#include "world.h"

/// Checks an object def's parameters (those that do not depend on its sampled particles).
sm_result sm_validate_object_def(const sm_object_def *d);
/// Checks an object def's explicit cluster lists and fixed indices against its particle count.
/// On failure sm_last_error() holds the problem and `field` the field at fault, as named in
/// scene files ("clusters.lists[2]", "fixed").
sm_result sm_object_check_indices(const sm_object_def *def, int32_t count, char *field, size_t field_size);
/// Appends a cluster of object `object` (space reserved) holding particles first + members[j],
/// in that order, each held by holders[j] of the object's clusters (sm_cluster_holders: its
/// membership's mass is sm_member_mass), with plastic state `plastic`: its rest data computed, its
/// step state the rest state.
void sm_world_append_cluster(sm_world *world, int32_t object, int32_t first, const int32_t *members,
                             const int32_t *holders, int32_t count, sm_mat3 plastic);
/// Logs a notice when cluster `c` (world index) of object `object` supports fewer modes than its
/// mode has; returns whether it does.
bool sm_cluster_note_modes(const sm_world *world, int32_t object, int32_t c);

#endif
