/* Drawing: lit sphere impostors (one camera-facing quad per particle, instanced, with the
 * sphere's depth written per fragment), lit triangle meshes (the skinned surfaces, the colliders),
 * the ground's checkerboard, lines, and the text overlay (stb_easy_font). Everything goes into an
 * offscreen framebuffer first, so screenshots read back exactly what was drawn, then is copied to
 * the window. */
#ifndef SM_VIEW_RENDER_H
#define SM_VIEW_RENDER_H

#include "camera.h"
#include "particles_gl.h"
#include "surfaces_gl.h"

/// How particles are coloured.
typedef enum view_colour { VIEW_COLOUR_OBJECT, VIEW_COLOUR_CLUSTER, VIEW_COLOUR_STRAIN, VIEW_COLOUR_COUNT } view_colour;

/// A static triangle mesh: position and normal (3 floats each) per vertex, GL_UNSIGNED_INT indices.
typedef struct view_mesh {
    GLuint vao, vertices, indices;
    int index_count;
} view_mesh;

typedef struct view_renderer {
    GLuint sphere_program, flat_program, ground_program, text_program, lit_program;
    GLuint particle_vao, extra_vao, line_vao, ground_vao, text_vao, surface_vao;
    view_mesh box, ball, quad; ///< the colliders' shapes: a unit cube, a unit sphere, a unit square in xz (normal +y)
    GLuint extra_position, extra_style, line_buffer, text_buffer;
    GLuint framebuffer, colour_target, depth_target;
    int width, height;
    float view[16], projection[16];
} view_renderer;

/// Compiles the shaders and makes a width x height framebuffer.
bool render_init(view_renderer *r, int width, int height, char *error, size_t error_size);
void render_free(view_renderer *r);
/// Resizes the framebuffer.
void render_resize(view_renderer *r, int width, int height);

/// Starts a frame: binds the framebuffer, clears it, and draws the ground plane when `ground`.
void render_begin(view_renderer *r, const view_camera *camera, bool ground, double ground_height, double extent);
/// Particles [first, first + count), coloured by `colour`; strain colours saturate at |x - g| = strain_scale.
void render_particles(view_renderer *r, const view_particles *p, view_colour colour, double strain_scale, int32_t first,
                      int32_t count);
/// The skinned surfaces, lit, in their objects' colours (back faces darker).
void render_surfaces(view_renderer *r, const view_surfaces *s);
/// The colliders, lit in a steel blue: boxes, spheres and meshes (meshes[i] for collider i: may be
/// NULL, or {0} for the others) opaque, then planes as translucent squares
/// of half side `plane_half` centred where the plane is nearest to `focus`. Draw them after
/// everything else that is opaque.
void render_colliders(view_renderer *r, const sm_collider_info *colliders, const view_mesh *meshes, int count, sm_vec3 focus,
                      double plane_half);
/// A mesh collider's triangles (sm_world_get_collider_mesh()) uploaded for render_colliders(),
/// flat-shaded; {0} when out of memory. render_free_triangles() frees it.
view_mesh render_make_triangles(const sm_vec3 *vertices, const int32_t *triangles, int triangle_count);
void render_free_triangles(view_mesh *m);
/// Extra spheres: centres (4 floats each) and styles (rgb, radius).
void render_spheres(view_renderer *r, const float *centres, const float *styles, int count);
/// Line segments: 2 x (x, y, z, r, g, b) floats each.
void render_lines(view_renderer *r, const float *lines, int count);
/// Flat triangles (3 x (x, y, z, r, g, b) floats each) at opacity `alpha`, then lines (as
/// render_lines()) at twice that opacity, both over everything drawn so far (no depth test).
void render_overlay_shapes(view_renderer *r, const float *triangles, int triangle_count, const float *lines, int line_count,
                           float alpha);
/// Text at pixel (x, y) from the top left, `scale` pixels per font unit, on a dark box (4 pixels
/// of margin), its lines broken at spaces (within a word that has none) to be at most
/// `max_width` pixels wide, the continuations indented. Bytes the font has no glyph for
/// (control characters but newlines, 0x7f and up) are drawn as '?'.
void render_text(view_renderer *r, const char *text, float x, float y, float scale, float max_width);
/// The height in pixels of `text` drawn by render_text() at `scale` and `max_width`, without
/// its box's margin.
float render_text_height(const char *text, float scale, float max_width);
/// Copies the frame to the window's framebuffer of window_width x window_height.
void render_end(view_renderer *r, int window_width, int window_height);

/// Writes the last frame as a PNG.
bool render_screenshot(const view_renderer *r, const char *path, char *error, size_t error_size);

#endif
