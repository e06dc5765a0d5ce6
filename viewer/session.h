/* shapematch-view's session: the world made from the scene and where each of its objects came
 * from, the scene's bounds and the camera framing and following them, what lies under the
 * cursor, and the changes made to the world as it runs: cuts taken, objects edited and
 * dropped, the reset. */
#ifndef SM_VIEW_SESSION_H
#define SM_VIEW_SESSION_H

#include "viewer.h"

/// Centre of mass and RMS distance of the particles from it, per object (malloc'd, 2 per object:
/// the centre, then (rms, 0, 0)).
sm_vec3 *view_object_stats(const sm_world *world, int32_t *out_count);
/// Creates the world from the scene and the particle buffers; false with a message on failure.
bool view_open_world(viewer *v, char *error, size_t error_size);
/// The bounding box of the particles now (those with a finite position: one that diverged is
/// left out), else the box of side 2 about the origin.
void view_bounds(viewer *v, sm_vec3 *lo, sm_vec3 *hi);
/// Points the camera at the whole scene: its particles and its boxes and spheres (F).
void view_frame_scene(viewer *v);
/// Turns following off because the user moved the camera (a pan or a zoom, which following
/// would undo).
void view_stop_following(viewer *v);
/// One frame of following the objects (camera_follow()), `seconds` long. Not while a spring is
/// dragged or the push sphere is out: they sit under the cursor, so a moving camera would move
/// them and push the objects on, which the camera would follow again.
void view_follow_objects(viewer *v, double seconds);

/// The ray through the cursor.
view_ray view_cursor_ray(const viewer *v);
/// The particle under the cursor (reads the positions), or -1.
int32_t view_particle_under_cursor(viewer *v);
/// The radius of a spring's target ball: where a click grabs it again, and as drawn.
double view_target_radius(const viewer *v);
/// The push sphere's radius.
double view_push_radius(const viewer *v);
/// The blades' length, and how far from the cursor's ray the particles they cut may lie.
double view_cut_reach(const viewer *v);
/// The blades under the cursor, at the depth of the particle under it, else of the camera's
/// target (reads the positions).
view_blades view_blades_now(viewer *v);

/// Takes the cuts the world made since the viewer last looked (sm_world_get_cuts(): the
/// scissors' and the scene's alike): logs and records each, with the centres of its pieces for
/// the report, notes where each front piece came from, and rebuilds the buffers for the objects
/// as they are now (sizes, colours per object, the surfaces' triangles). Particles keep their
/// indices and objects their ids through a cut, so springs and picks need nothing. False (and
/// the viewer quits) when the buffers cannot be rebuilt.
bool view_take_cuts(viewer *v, bool by_scene);
/// Changes the parameters of the object under the cursor with `key` (1 2 3 Q A W S).
void view_edit_object(viewer *v, const char *key);
/// Drops a copy of one of the scene's objects (in turn) above the point under the cursor.
void view_drop_object(viewer *v);
/// Makes the world anew from the scene (R): the springs, picks and cuts go with the old one.
void view_reset(viewer *v);

#endif
