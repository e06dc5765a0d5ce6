/* Cutting a triangle surface by a plane (the geometry of Henriques & Wuensche's cutting tool):
 * the triangles that straddle the plane are clipped so that each side gets a clean edge along
 * it, and each side's cross-section is sealed with cap triangles (nested loops, holes bridged,
 * ear clipping), so that a closed surface gives two closed surfaces. No world, no OpenCL. */
#ifndef SM_CUT_SURFACE_H
#define SM_CUT_SURFACE_H

#include "shapematch/shapematch.h"

/// A triangle surface to cut: current positions (where the plane is tested), rest positions
/// (carried along: every new vertex gets the same interpolation of them; NULL: the positions),
/// triangles CCW from outside.
typedef struct sm_cut_input {
    const sm_vec3 *position;
    const sm_vec3 *rest;
    int32_t vertex_count;
    const int32_t *triangles; ///< 3 vertex indices per triangle
    int32_t triangle_count;
    sm_vec3 point, normal; ///< the plane: dot(x - point, normal) = 0; normal need not be unit
} sm_cut_input;

/// One side's surface: its own vertex arrays (malloc'd), triangles (3 indices each) and how many
/// of them (the last ones) seal the cross-section.
typedef struct sm_cut_piece {
    sm_vec3 *position, *rest;
    int32_t vertex_count;
    int32_t *triangles;
    int32_t triangle_count;
    int32_t cap_triangle_count; ///< the last cap_triangle_count triangles lie on the plane
    int32_t *source_vertex;     ///< per vertex: the input vertex it copies, or -1 for a vertex made on the plane
} sm_cut_piece;

/// Splits the surface by the plane into the back piece (vertices with dot(x - point, normal) <= 0:
/// a vertex on the plane is back) and the front piece (dot > 0). Straddling triangles are clipped
/// at one point per input edge, at t = d0 / (d0 - d1) from its lower-numbered vertex, position and
/// rest alike; each piece has its own copy of those points. Each piece's cross-section is then
/// sealed with triangles over the points alone, facing +normal on the back piece and -normal on
/// the front one, so that a closed, consistently oriented input gives closed, consistently
/// oriented pieces. Chains along the plane that do not close (an open input) stay open: their
/// number (each piece has the same ones, counted once) goes to *out_open_loops (may be NULL).
/// Vertices of no triangle (a surface of points, or strays) go to the piece of their side as
/// well, after those of its triangles. A side with no vertex gives an empty piece (0 vertices,
/// 0 triangles, NULL arrays).
/// Fails with SM_ERROR_INVALID_ARGUMENT on a surface without vertices, an index out of range, a
/// non-finite position, rest position or plane, or a zero normal; SM_ERROR_OUT_OF_MEMORY when
/// an allocation fails. On failure both pieces are empty. Free the pieces with sm_cut_piece_free().
sm_result sm_cut_surface(const sm_cut_input *in, sm_cut_piece *back, sm_cut_piece *front, int32_t *out_open_loops);

/// Frees a piece's arrays and empties it (safe on an empty or zeroed piece).
void sm_cut_piece_free(sm_cut_piece *piece);

#endif
