/* The springs, the push sphere, the scissors, the colliders and the overlay's text (overlay.h). */
#include "overlay.h"
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *help_text =
    "mouse\n"
    "  left drag on a particle   pull it with a spring (wheel: target nearer / farther)\n"
    "  right click while pulling lock the spring in place; left drag on its red ball regrabs it\n"
    "  left drag elsewhere       orbit            right drag      orbit\n"
    "  middle or shift+right     pan              wheel           zoom\n"
    "keys\n"
    "  P      pick / push mode (push: a sphere follows the cursor; wheel: nearer / farther)\n"
    "  X      cut mode: scissors follow the cursor, left click cuts (shift+wheel: turn the blades)\n"
    "  C      remove all springs            O      drop a new object under the cursor\n"
    "  1 2 3  rigid / linear / quadratic mode of the object under the cursor\n"
    "  Q A    alpha +/- 0.05 of the object under the cursor\n"
    "  W S    beta +/- 0.05 of the object under the cursor\n"
    "  K      colour by object / cluster / strain\n"
    "  M      draw surfaces / particles / both (objects with a skinned surface)\n"
    "  T      follow the objects on / off (on at the start; a pan or a zoom turns it off)\n"
    "  SPACE  pause            N  single step (paused)          R  reset the scene\n"
    "  F      frame the scene  H  this help                     ESC  quit";

/// The overlay's text scale, font units to pixels: 2 in windows of 1280 x 720 and up, down to 1
/// at 640 x 360 and below, in half steps (stb_easy_font's strokes stay even at those).
static float text_scale(const viewer *v)
{
    const double fit = fmin(v->renderer.width / 640.0, v->renderer.height / 360.0);
    return (float)fmax(1.0, fmin(2.0, floor(2.0 * fit) / 2.0));
}

void view_draw_overlay(viewer *v)
{
    const sm_counts counts = sm_world_get_counts(v->world);
    static const char *colours[] = {"object", "cluster", "strain"};
    static const char *draws[DRAW_MODE_COUNT] = {"surfaces", "particles", "both"};
    static const char *short_names[SM_PASS_COUNT] = {"moments", "rotation", "goal", "blend", "grid",
                                                     "collide", "ground", "plastic", "skin"};
    const bool surfaces = v->surfaces.triangle_count > 0; // the draw mode and the surface counts only then
    char *text = v->overlay;
    const size_t size = sizeof v->overlay;
    int n = snprintf(text, size,
                     "%.1f fps   sim %.2f ms per step (%d substeps)   t = %.2f s%s\n"
                     "passes ms/step:",
                     v->fps, v->step_ms, v->info.substeps, v->sim_time, v->paused ? "   PAUSED" : "");
    for (int i = 0; i < SM_PASS_COUNT && n < (int)size; i++)
        if (v->pass_ms[i] > 0.0) {
            const char *name = short_names[i] ? short_names[i] : sm_pass_name((sm_pass)i);
            n += snprintf(text + n, size - (size_t)n, " %s %.2f", name, v->pass_ms[i]);
        }
    const char *device = sm_world_device_name(v->world);
    char mode[64], surface_counts[96] = "", draw[48] = "";
    if (v->tools.cut_mode) snprintf(mode, sizeof mode, "cut (blades at %.0f deg)", v->tools.cut_angle * 180.0 / 3.14159265358979323846);
    else snprintf(mode, sizeof mode, "%s", v->tools.push_mode ? "push" : "pick");
    if (surfaces) {
        snprintf(surface_counts, sizeof surface_counts, "   surface vertices %d   triangles %d", v->surfaces.vertex_count,
                 v->surfaces.triangle_count);
        snprintf(draw, sizeof draw, "   draw: %s", draws[v->draw_mode]);
    }
    if (n < (int)size)
        n += snprintf(text + n, size - (size_t)n,
                      "\nobjects %d   particles %d   clusters %d%s   colliders %d\n"
                      "%s%s%s\ninterop: %s\n%s mode   colour: %s%s   camera: %s   springs %d   cuts %d   [H] help",
                      counts.objects, counts.particles, counts.clusters, surface_counts,
                      sm_world_get_collider_count(v->world), sm_world_backend_name(v->world), *device ? ": " : "", device,
                      v->interop_text, mode, colours[v->colour], draw, v->follow.on ? "follow" : "fixed",
                      v->tools.spring_count, v->cut_count);
    if (v->status[0] && n < (int)size) snprintf(text + n, size - (size_t)n, "\n%s", v->status);
    // the text fits the window's width (render_text() breaks longer lines), 12 pixels from its
    // edges; the help sits on the bottom edge, below the overlay where there is room
    const float scale = text_scale(v), margin = 12.0f, width = (float)v->renderer.width - 2.0f * margin;
    render_text(&v->renderer, text, margin, margin, scale, width);
    if (v->help) {
        const float below = margin + render_text_height(text, scale, width) + 2.0f * margin;
        const float y = (float)v->renderer.height - render_text_height(help_text, scale, width) - margin;
        render_text(&v->renderer, help_text, margin, y > below ? y : below, scale, width);
    }
}

void view_draw_tools(viewer *v)
{
    float centres[4 * (VIEW_MAX_SPRINGS + 1)], styles[4 * (VIEW_MAX_SPRINGS + 1)], lines[12 * VIEW_MAX_SPRINGS];
    int spheres = 0, segments = 0;
    for (int s = 0; s < v->tools.spring_count; s++) {
        const view_spring *spring = &v->tools.springs[s];
        double x[3];
        if (sm_world_get_positions(v->world, spring->particle, 1, x) != SM_OK) continue;
        const float g = spring->locked ? 0.55f : 0.15f;
        const float line[12] = {(float)x[0], (float)x[1], (float)x[2], 1.0f, g, 0.1f,
                                (float)spring->target.x, (float)spring->target.y, (float)spring->target.z, 1.0f, g, 0.1f};
        memcpy(lines + 12 * segments++, line, sizeof line);
        const float c[4] = {(float)spring->target.x, (float)spring->target.y, (float)spring->target.z, 0.0f};
        const float st[4] = {0.95f, g, 0.1f, (float)view_target_radius(v)};
        memcpy(centres + 4 * spheres, c, sizeof c), memcpy(styles + 4 * spheres++, st, sizeof st);
    }
    if (v->tools.push_mode && v->tools.pusher.enabled) {
        const sm_pusher *p = &v->tools.pusher;
        const float c[4] = {(float)p->center.x, (float)p->center.y, (float)p->center.z, 0.0f};
        const float st[4] = {0.75f, 0.78f, 0.85f, (float)p->radius};
        memcpy(centres + 4 * spheres, c, sizeof c), memcpy(styles + 4 * spheres++, st, sizeof st);
    }
    render_lines(&v->renderer, lines, segments);
    render_spheres(&v->renderer, centres, styles, spheres);
}

/// Appends the flat triangle (a, b, c) in colour rgb to `out` (18 floats).
static float *put_triangle(float *out, sm_vec3 a, sm_vec3 b, sm_vec3 c, const float rgb[3])
{
    const sm_vec3 p[3] = {a, b, c};
    for (int k = 0; k < 3; k++, out += 6)
        out[0] = (float)p[k].x, out[1] = (float)p[k].y, out[2] = (float)p[k].z, out[3] = rgb[0], out[4] = rgb[1], out[5] = rgb[2];
    return out;
}

/// Appends the segment (a, b) in colour rgb to `out` (12 floats).
static float *put_line(float *out, sm_vec3 a, sm_vec3 b, const float rgb[3])
{
    const sm_vec3 p[2] = {a, b};
    for (int k = 0; k < 2; k++, out += 6)
        out[0] = (float)p[k].x, out[1] = (float)p[k].y, out[2] = (float)p[k].z, out[3] = rgb[0], out[4] = rgb[1], out[5] = rgb[2];
    return out;
}

static sm_vec3 along(sm_vec3 p, sm_vec3 d, double s) { return (sm_vec3){p.x + s * d.x, p.y + s * d.y, p.z + s * d.z}; }

void view_draw_blades(viewer *v)
{
    enum { RING = 16, CIRCLE = 48, LINES = 2 * (4 + 1 + RING) + 1 + CIRCLE };
    float triangles[18 * 4], lines[12 * LINES];
    const view_blades b = view_blades_now(v);
    const double pi = 3.14159265358979323846, reach = view_cut_reach(v), width = 0.12 * reach;
    const bool closed = v->cut_closed > 0;
    const double half = closed ? 0.0 : 12.0 * pi / 180.0;
    static const float steel[3] = {0.82f, 0.86f, 0.94f}, gold[3] = {1.0f, 0.82f, 0.25f}, edge[3] = {0.12f, 0.13f, 0.17f},
                       faint[3] = {0.78f, 0.80f, 0.86f};
    const float *colour = closed ? gold : steel;
    const sm_vec3 zero = {0, 0, 0};
    float *t = triangles, *l = lines;
    for (int sign = -1; sign <= 1; sign += 2) {
        // the blade's direction, and its back (away from the other blade) in the plane facing the camera
        const sm_vec3 u = along(along(zero, b.direction, cos(half)), b.side, sign * sin(half));
        const sm_vec3 out = along(along(zero, b.direction, -sin(half)), b.side, sign * cos(half));
        const sm_vec3 tip = along(b.apex, u, reach), heel = along(b.apex, u, 0.25 * reach);
        const sm_vec3 back = along(heel, out, width), front = along(heel, out, -0.15 * width);
        t = put_triangle(t, b.apex, back, tip, colour); // the back of the blade
        t = put_triangle(t, b.apex, tip, front, colour); // its edge
        l = put_line(l, b.apex, back, edge), l = put_line(l, back, tip, edge);
        l = put_line(l, tip, front, edge), l = put_line(l, front, b.apex, edge);
        // the handle: straight on through the apex, to a ring
        const sm_vec3 ring = along(b.apex, u, -0.55 * reach);
        l = put_line(l, b.apex, along(ring, u, 0.15 * reach), edge);
        for (int k = 0; k < RING; k++) {
            const double a0 = 2.0 * pi * k / RING, a1 = 2.0 * pi * (k + 1) / RING, r = 0.15 * reach;
            l = put_line(l, along(along(ring, u, r * cos(a0)), out, r * sin(a0)),
                         along(along(ring, u, r * cos(a1)), out, r * sin(a1)), edge);
        }
    }
    l = put_line(l, along(b.apex, b.direction, -reach), along(b.apex, b.direction, reach), faint); // the cut's line
    for (int k = 0; k < CIRCLE; k++) {
        const double a0 = 2.0 * pi * k / CIRCLE, a1 = 2.0 * pi * (k + 1) / CIRCLE;
        l = put_line(l, along(along(b.apex, b.direction, reach * cos(a0)), b.side, reach * sin(a0)),
                     along(along(b.apex, b.direction, reach * cos(a1)), b.side, reach * sin(a1)), faint);
    }
    render_overlay_shapes(&v->renderer, triangles, (int)((t - triangles) / 18), lines, (int)((l - lines) / 12), 0.6f);
    if (v->cut_closed > 0) v->cut_closed--;
}

void view_free_collider_meshes(viewer *v)
{
    for (int32_t i = 0; i < v->collider_mesh_count; i++) render_free_triangles(&v->collider_meshes[i]);
    free(v->collider_meshes);
    v->collider_meshes = NULL, v->collider_mesh_count = 0, v->collider_meshes_world = NULL;
}

/// Uploads the mesh colliders' triangles once per world (count colliders).
static void make_collider_meshes(viewer *v, const sm_collider_info *colliders, int32_t count)
{
    if (v->collider_meshes_world == v->world && v->collider_mesh_count == count) return;
    view_free_collider_meshes(v);
    v->collider_meshes = calloc((size_t)count, sizeof *v->collider_meshes);
    if (!v->collider_meshes) return;
    v->collider_mesh_count = count, v->collider_meshes_world = v->world;
    for (int32_t i = 0; i < count; i++) {
        const sm_vec3 *vertices;
        const int32_t *triangles;
        int32_t vertex_count, triangle_count;
        if (colliders[i].shape == SM_COLLIDER_MESH &&
            sm_world_get_collider_mesh(v->world, i, &vertices, &vertex_count, &triangles, &triangle_count) == SM_OK)
            v->collider_meshes[i] = render_make_triangles(vertices, triangles, triangle_count);
    }
}

bool view_draw_colliders(viewer *v)
{
    const int32_t count = sm_world_get_collider_count(v->world);
    if (count == 0) return true;
    sm_collider_info *colliders = malloc(sizeof *colliders * (size_t)count);
    bool ok = colliders != NULL;
    for (int32_t i = 0; ok && i < count; i++) ok = sm_world_get_collider(v->world, i, &colliders[i]) == SM_OK;
    if (ok) make_collider_meshes(v, colliders, count);
    if (ok)
        render_colliders(&v->renderer, colliders, v->collider_meshes, count, v->camera.target, 20.0 * fmax(v->extent, 1.0));
    else view_say("error: %s", colliders ? sm_last_error() : "out of memory for the colliders");
    free(colliders);
    return ok;
}
