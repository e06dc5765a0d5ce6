/* What shapematch-view draws besides the particles and surfaces: the springs and the push
 * sphere, the scissors, the colliders, and the overlay's text with the help. */
#ifndef SM_VIEW_OVERLAY_H
#define SM_VIEW_OVERLAY_H

#include "viewer.h"

/// The overlay's text (figures, counts, modes, the status line; kept in v->overlay for the
/// report) in the top left, and the help (H) below it.
void view_draw_overlay(viewer *v);
/// The springs (a line and a red ball each) and the push sphere.
void view_draw_tools(viewer *v);
/// The scissors under the cursor, translucent over the scene (docs/viewer.md, "The scissors"): two
/// blades from the apex on the plane facing the camera, open 12 degrees each side of the cut's
/// line and outlined, closed (and gold) for a few frames after a click; the ring handles behind
/// the apex; a faint line along the cut and a faint circle of the blades' reach.
void view_draw_blades(viewer *v);
/// Every collider where it is now.
bool view_draw_colliders(viewer *v);
/// Frees the mesh colliders' triangles uploaded for drawing.
void view_free_collider_meshes(viewer *v);

#endif
