#include "render.h"

#include <stb_easy_font.h>
#include <stb_image_write.h>

#include <shapematch/shapematch.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- Shaders ----------------------------------------------------------------------------- */

static const char *sphere_vertex =
    "#version 330 core\n"
    "layout(location = 0) in vec4 a_position; // centre, w: mass\n"
    "layout(location = 1) in vec4 a_goal;     // blended goal\n"
    "layout(location = 2) in vec4 a_style;    // object colour, w: radius\n"
    "layout(location = 3) in vec4 a_cluster;  // cluster colour\n"
    "uniform mat4 u_view, u_projection;\n"
    "uniform int u_colour;          // 0 object, 1 cluster, 2 strain\n"
    "uniform float u_strain_scale;  // m: |x - g| drawn fully red\n"
    "out vec2 v_corner;\n"
    "flat out vec3 v_centre, v_colour;\n"
    "flat out float v_radius;\n"
    "void main() {\n"
    "    const vec2 corners[4] = vec2[4](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));\n"
    "    v_corner = corners[gl_VertexID];\n"
    "    vec4 centre = u_view * vec4(a_position.xyz, 1.0);\n"
    "    v_centre = centre.xyz;\n"
    "    v_radius = a_style.w;\n"
    "    v_colour = a_style.rgb;\n"
    "    if (u_colour == 1) v_colour = a_cluster.rgb;\n"
    "    if (u_colour == 2) {\n"
    "        float s = clamp(length(a_position.xyz - a_goal.xyz) / u_strain_scale, 0.0, 1.0);\n"
    "        v_colour = s < 0.5 ? mix(vec3(0.15, 0.35, 0.95), vec3(0.2, 0.85, 0.3), 2.0 * s)\n"
    "                           : mix(vec3(0.2, 0.85, 0.3), vec3(0.95, 0.2, 0.1), 2.0 * s - 1.0);\n"
    "    }\n"
    "    gl_Position = u_projection * vec4(centre.xyz + vec3(v_corner * v_radius, 0.0), 1.0);\n"
    "}\n";

static const char *sphere_fragment =
    "#version 330 core\n"
    "in vec2 v_corner;\n"
    "flat in vec3 v_centre, v_colour;\n"
    "flat in float v_radius;\n"
    "uniform mat4 u_projection;\n"
    "out vec4 o_colour;\n"
    "void main() {\n"
    "    float d2 = dot(v_corner, v_corner);\n"
    "    if (d2 > 1.0) discard;\n"
    "    vec3 n = vec3(v_corner, sqrt(1.0 - d2));\n"
    "    vec4 clip = u_projection * vec4(v_centre + n * v_radius, 1.0);\n"
    "    gl_FragDepth = 0.5 * clip.z / clip.w + 0.5;\n"
    "    vec3 l = normalize(vec3(0.4, 0.7, 0.6));\n"
    "    float diffuse = max(dot(n, l), 0.0);\n"
    "    float highlight = pow(max(dot(reflect(-l, n), vec3(0.0, 0.0, 1.0)), 0.0), 24.0);\n"
    "    o_colour = vec4(v_colour * (0.28 + 0.72 * diffuse) + 0.25 * highlight, 1.0);\n"
    "}\n";

static const char *flat_vertex =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_position;\n"
    "layout(location = 1) in vec3 a_colour;\n"
    "uniform mat4 u_view, u_projection;\n"
    "out vec3 v_colour;\n"
    "void main() { v_colour = a_colour; gl_Position = u_projection * u_view * vec4(a_position, 1.0); }\n";

static const char *flat_fragment =
    "#version 330 core\n"
    "in vec3 v_colour;\n"
    "uniform float u_alpha;\n"
    "out vec4 o_colour;\n"
    "void main() { o_colour = vec4(v_colour, u_alpha); }\n";

static const char *ground_vertex =
    "#version 330 core\n"
    "uniform mat4 u_view, u_projection;\n"
    "uniform vec4 u_plane; // centre x, height, centre z, half extent\n"
    "out vec2 v_xz;\n"
    "void main() {\n"
    "    const vec2 corners[4] = vec2[4](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));\n"
    "    v_xz = u_plane.xz + corners[gl_VertexID] * u_plane.w;\n"
    "    gl_Position = u_projection * u_view * vec4(v_xz.x, u_plane.y, v_xz.y, 1.0);\n"
    "}\n";

static const char *ground_fragment =
    "#version 330 core\n"
    "in vec2 v_xz;\n"
    "uniform float u_cell;\n"
    "out vec4 o_colour;\n"
    "void main() {\n"
    "    vec2 c = floor(v_xz / u_cell);\n"
    "    float checker = mod(c.x + c.y, 2.0);\n"
    "    o_colour = vec4(vec3(0.36, 0.37, 0.39) + 0.06 * checker, 1.0);\n"
    "}\n";

static const char *lit_vertex =
    "#version 330 core\n"
    "layout(location = 0) in vec4 a_position;\n"
    "layout(location = 1) in vec4 a_normal;\n"
    "layout(location = 2) in vec4 a_colour;\n"
    "uniform mat4 u_view, u_projection, u_model;\n"
    "uniform mat3 u_normal_matrix;  // the model's rotation\n"
    "uniform vec4 u_colour;\n"
    "uniform int u_vertex_colour;   // 1: a_colour, 0: u_colour\n"
    "out vec3 v_normal;             // in view space\n"
    "out vec4 v_colour;\n"
    "void main() {\n"
    "    v_normal = mat3(u_view) * (u_normal_matrix * a_normal.xyz);\n"
    "    v_colour = u_vertex_colour == 1 ? a_colour : u_colour;\n"
    "    gl_Position = u_projection * u_view * u_model * vec4(a_position.xyz, 1.0);\n"
    "}\n";

// Lambert and ambient under the spheres' light; a back face is lit from its own side, darker
static const char *lit_fragment =
    "#version 330 core\n"
    "in vec3 v_normal;\n"
    "in vec4 v_colour;\n"
    "out vec4 o_colour;\n"
    "void main() {\n"
    "    vec3 n = dot(v_normal, v_normal) > 0.0 ? normalize(v_normal) : vec3(0.0, 0.0, 1.0);\n"
    "    float side = 1.0;\n"
    "    if (!gl_FrontFacing) {\n"
    "        n = -n;\n"
    "        side = 0.6;\n"
    "    }\n"
    "    float diffuse = max(dot(n, normalize(vec3(0.4, 0.7, 0.6))), 0.0);\n"
    "    o_colour = vec4(v_colour.rgb * side * (0.28 + 0.72 * diffuse), v_colour.a);\n"
    "}\n";

static const char *text_vertex =
    "#version 330 core\n"
    "layout(location = 0) in vec2 a_position; // pixels from the top left\n"
    "uniform vec2 u_viewport;\n"
    "void main() { gl_Position = vec4(2.0 * a_position.x / u_viewport.x - 1.0, 1.0 - 2.0 * a_position.y / u_viewport.y, 0.0, 1.0); }\n";

static const char *text_fragment =
    "#version 330 core\n"
    "uniform vec4 u_colour;\n"
    "out vec4 o_colour;\n"
    "void main() { o_colour = u_colour; }\n";

static GLuint compile(GLenum type, const char *source, const char *name, char *error, size_t error_size)
{
    GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(shader, sizeof log, NULL, log);
        snprintf(error, error_size, "the %s shader does not compile: %s", name, log);
        glDeleteShader(shader);
        return 0;
    }
    return shader;
}

static GLuint program(const char *vertex, const char *fragment, const char *name, char *error, size_t error_size)
{
    GLuint v = compile(GL_VERTEX_SHADER, vertex, name, error, error_size);
    GLuint f = v ? compile(GL_FRAGMENT_SHADER, fragment, name, error, error_size) : 0;
    if (!f) {
        if (v) glDeleteShader(v);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        snprintf(error, error_size, "the %s program does not link: %s", name, log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

/* ---- Set-up ------------------------------------------------------------------------------- */

/// Binds float4 attribute `location` of the bound VAO to `buffer` from item `first` on, one value per instance.
static void instance_attribute_from(GLuint location, GLuint buffer, int32_t first)
{
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glEnableVertexAttribArray(location);
    const size_t offset = 4 * sizeof(float) * (size_t)first;
    glVertexAttribPointer(location, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (const void *)offset);
    glVertexAttribDivisor(location, 1);
}

static void instance_attribute(GLuint location, GLuint buffer) { instance_attribute_from(location, buffer, 0); }

/// Binds float4 attribute `location` of the bound VAO to `buffer`, one value per vertex.
static void vertex_attribute(GLuint location, GLuint buffer)
{
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glEnableVertexAttribArray(location);
    glVertexAttribPointer(location, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float), NULL);
}

/// Uploads a mesh of `vertex_count` (position, normal) pairs and `index_count` indices.
static view_mesh make_mesh(const float *vertices, int vertex_count, const GLuint *indices, int index_count)
{
    view_mesh m = {.index_count = index_count};
    glGenVertexArrays(1, &m.vao);
    GLuint buffers[2];
    glGenBuffers(2, buffers);
    m.vertices = buffers[0], m.indices = buffers[1];
    glBindVertexArray(m.vao);
    glBindBuffer(GL_ARRAY_BUFFER, m.vertices);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(6 * sizeof(float) * (size_t)vertex_count), vertices, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), NULL);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m.indices);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(sizeof(GLuint) * (size_t)index_count), indices, GL_STATIC_DRAW);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return m;
}

view_mesh render_make_triangles(const sm_vec3 *vertices, const int32_t *triangles, int triangle_count)
{
    // each triangle's corners with its face normal (flat shading: the colliders are solids)
    float *data = malloc(sizeof(float) * 18 * (size_t)(triangle_count > 0 ? triangle_count : 1));
    GLuint *indices = malloc(sizeof(GLuint) * 3 * (size_t)(triangle_count > 0 ? triangle_count : 1));
    if (!data || !indices) {
        free(data), free(indices);
        return (view_mesh){0};
    }
    for (int t = 0; t < triangle_count; t++) {
        const sm_vec3 a = vertices[triangles[3 * t]], b = vertices[triangles[3 * t + 1]], c = vertices[triangles[3 * t + 2]];
        const double u[3] = {b.x - a.x, b.y - a.y, b.z - a.z}, w[3] = {c.x - a.x, c.y - a.y, c.z - a.z};
        double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        const double length = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++) n[k] = length > 0.0 ? n[k] / length : (k == 1);
        const sm_vec3 corners[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            float *out = data + 6 * (3 * t + k);
            out[0] = (float)corners[k].x, out[1] = (float)corners[k].y, out[2] = (float)corners[k].z;
            out[3] = (float)n[0], out[4] = (float)n[1], out[5] = (float)n[2];
            indices[3 * t + k] = (GLuint)(3 * t + k);
        }
    }
    view_mesh m = make_mesh(data, 3 * triangle_count, indices, 3 * triangle_count);
    free(data), free(indices);
    return m;
}

static void free_mesh(view_mesh *m)
{
    GLuint buffers[2] = {m->vertices, m->indices};
    glDeleteBuffers(2, buffers);
    glDeleteVertexArrays(1, &m->vao);
}

/// The cube [-0.5, 0.5]^3: 4 vertices per face with the face's normal, counter-clockwise from outside.
static view_mesh make_box(void)
{
    float vertices[24 * 6];
    GLuint indices[36];
    for (int face = 0; face < 6; face++) {
        const int axis = face / 2;
        const float sign = face % 2 ? -1.0f : 1.0f;
        float n[3] = {0, 0, 0}, u[3] = {0, 0, 0}, v[3] = {0, 0, 0};
        n[axis] = sign, u[(axis + 1) % 3] = 1.0f, v[(axis + 2) % 3] = 1.0f;
        // (-u, -v), (u, -v), (u, v), (-u, v) runs counter-clockwise about u x v = +axis
        const float corners[4][2] = {{-0.5f, -0.5f}, {0.5f, -0.5f}, {0.5f, 0.5f}, {-0.5f, 0.5f}};
        for (int k = 0; k < 4; k++) {
            float *out = vertices + 6 * (4 * face + k);
            for (int c = 0; c < 3; c++) {
                out[c] = 0.5f * n[c] + corners[k][0] * u[c] + corners[k][1] * v[c];
                out[3 + c] = n[c];
            }
        }
        const GLuint base = (GLuint)(4 * face);
        const GLuint forward[6] = {0, 1, 2, 0, 2, 3}, backward[6] = {0, 2, 1, 0, 3, 2};
        for (int k = 0; k < 6; k++) indices[6 * face + k] = base + (sign > 0 ? forward[k] : backward[k]);
    }
    return make_mesh(vertices, 24, indices, 36);
}

/// The unit sphere: STACKS x SLICES quads of latitude and longitude, counter-clockwise from outside.
static view_mesh make_ball(void)
{
    enum { STACKS = 16, SLICES = 32 };
    static float vertices[(STACKS + 1) * (SLICES + 1) * 6];
    static GLuint indices[STACKS * SLICES * 6];
    const double pi = 3.14159265358979323846;
    for (int i = 0; i <= STACKS; i++)
        for (int j = 0; j <= SLICES; j++) {
            const double theta = pi * i / STACKS, phi = 2.0 * pi * j / SLICES;
            const float p[3] = {(float)(sin(theta) * cos(phi)), (float)cos(theta), (float)(sin(theta) * sin(phi))};
            float *out = vertices + 6 * (i * (SLICES + 1) + j);
            for (int c = 0; c < 3; c++) out[c] = out[3 + c] = p[c];
        }
    int n = 0;
    for (int i = 0; i < STACKS; i++)
        for (int j = 0; j < SLICES; j++) {
            const GLuint a = (GLuint)(i * (SLICES + 1) + j), b = a + SLICES + 1, c = b + 1, d = a + 1;
            const GLuint quad[6] = {a, c, b, a, d, c};
            for (int k = 0; k < 6; k++) indices[n++] = quad[k];
        }
    return make_mesh(vertices, (STACKS + 1) * (SLICES + 1), indices, n);
}

/// The square [-1, 1]^2 in the xz plane, normal +y.
static view_mesh make_quad(void)
{
    const float vertices[4 * 6] = {-1, 0, -1, 0, 1, 0, -1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, -1, 0, 1, 0};
    const GLuint indices[6] = {0, 1, 2, 0, 2, 3};
    return make_mesh(vertices, 4, indices, 6);
}

bool render_init(view_renderer *r, int width, int height, char *error, size_t error_size)
{
    memset(r, 0, sizeof *r);
    r->sphere_program = program(sphere_vertex, sphere_fragment, "sphere", error, error_size);
    r->flat_program = r->sphere_program ? program(flat_vertex, flat_fragment, "line", error, error_size) : 0;
    r->ground_program = r->flat_program ? program(ground_vertex, ground_fragment, "ground", error, error_size) : 0;
    r->text_program = r->ground_program ? program(text_vertex, text_fragment, "text", error, error_size) : 0;
    r->lit_program = r->text_program ? program(lit_vertex, lit_fragment, "lit", error, error_size) : 0;
    if (!r->lit_program) return false;
    GLuint vaos[6], buffers[4];
    glGenVertexArrays(6, vaos);
    glGenBuffers(4, buffers);
    r->particle_vao = vaos[0], r->extra_vao = vaos[1], r->line_vao = vaos[2], r->ground_vao = vaos[3], r->text_vao = vaos[4];
    r->surface_vao = vaos[5];
    r->box = make_box(), r->ball = make_ball(), r->quad = make_quad();
    r->extra_position = buffers[0], r->extra_style = buffers[1], r->line_buffer = buffers[2], r->text_buffer = buffers[3];

    // extra spheres: their centre is also their goal, and their colour also their cluster colour
    glBindVertexArray(r->extra_vao);
    instance_attribute(0, r->extra_position);
    instance_attribute(1, r->extra_position);
    instance_attribute(2, r->extra_style);
    instance_attribute(3, r->extra_style);
    glBindVertexArray(r->line_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->line_buffer);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), NULL);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glBindVertexArray(r->text_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->text_buffer);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof(float), NULL);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    glGenFramebuffers(1, &r->framebuffer);
    glGenRenderbuffers(1, &r->colour_target);
    glGenRenderbuffers(1, &r->depth_target);
    render_resize(r, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, r->framebuffer);
    const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(error, error_size, "the offscreen framebuffer is incomplete (status 0x%x)", status);
        return false;
    }
    return true;
}

void render_resize(view_renderer *r, int width, int height)
{
    r->width = width > 0 ? width : 1;
    r->height = height > 0 ? height : 1;
    glBindRenderbuffer(GL_RENDERBUFFER, r->colour_target);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, r->width, r->height);
    glBindRenderbuffer(GL_RENDERBUFFER, r->depth_target);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, r->width, r->height);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    glBindFramebuffer(GL_FRAMEBUFFER, r->framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, r->colour_target);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, r->depth_target);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

void render_free(view_renderer *r)
{
    if (!r->sphere_program) return;
    GLuint programs[5] = {r->sphere_program, r->flat_program, r->ground_program, r->text_program, r->lit_program};
    for (int i = 0; i < 5; i++)
        if (programs[i]) glDeleteProgram(programs[i]);
    if (r->surface_vao) {
        GLuint vaos[6] = {r->particle_vao, r->extra_vao, r->line_vao, r->ground_vao, r->text_vao, r->surface_vao};
        glDeleteVertexArrays(6, vaos);
        free_mesh(&r->box), free_mesh(&r->ball), free_mesh(&r->quad);
    }
    GLuint buffers[4] = {r->extra_position, r->extra_style, r->line_buffer, r->text_buffer};
    glDeleteBuffers(4, buffers);
    glDeleteFramebuffers(1, &r->framebuffer);
    GLuint targets[2] = {r->colour_target, r->depth_target};
    glDeleteRenderbuffers(2, targets);
    memset(r, 0, sizeof *r);
}

/* ---- Drawing ------------------------------------------------------------------------------ */

static void set_camera(const view_renderer *r, GLuint p)
{
    glUseProgram(p);
    glUniformMatrix4fv(glGetUniformLocation(p, "u_view"), 1, GL_FALSE, r->view);
    glUniformMatrix4fv(glGetUniformLocation(p, "u_projection"), 1, GL_FALSE, r->projection);
}

void render_begin(view_renderer *r, const view_camera *camera, bool ground, double ground_height, double extent)
{
    camera_matrices(camera, r->view, r->projection);
    glBindFramebuffer(GL_FRAMEBUFFER, r->framebuffer);
    glViewport(0, 0, r->width, r->height);
    glClearColor(0.14f, 0.15f, 0.18f, 1.0f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    if (!ground) return;
    set_camera(r, r->ground_program);
    const double cell = pow(10.0, floor(log10(fmax(extent, 1e-3) / 4.0)));
    glUniform4f(glGetUniformLocation(r->ground_program, "u_plane"), (float)camera->target.x, (float)ground_height,
                (float)camera->target.z, (float)(20.0 * fmax(extent, 1.0)));
    glUniform1f(glGetUniformLocation(r->ground_program, "u_cell"), (float)cell);
    glBindVertexArray(r->ground_vao);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

void render_particles(view_renderer *r, const view_particles *p, view_colour colour, double strain_scale, int32_t first,
                      int32_t count)
{
    if (first < 0 || count <= 0 || first + count > p->count) return;
    set_camera(r, r->sphere_program);
    glUniform1i(glGetUniformLocation(r->sphere_program, "u_colour"), (int)colour);
    glUniform1f(glGetUniformLocation(r->sphere_program, "u_strain_scale"), (float)fmax(strain_scale, 1e-9));
    glBindVertexArray(r->particle_vao);
    // GL 3.3 has no base instance: the attributes start at `first` instead
    instance_attribute_from(0, p->position, first);
    instance_attribute_from(1, p->goal, first);
    instance_attribute_from(2, p->style, first);
    instance_attribute_from(3, p->cluster, first);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
    glBindVertexArray(0);
}

/// Selects the lit program with model matrix `model` (column-major 4x4), rotation `normal_matrix`
/// (column-major 3x3) and colour `rgba` (NULL: each vertex's own).
static void set_lit(const view_renderer *r, const float model[16], const float normal_matrix[9], const float *rgba)
{
    const GLuint p = r->lit_program;
    set_camera(r, p);
    glUniformMatrix4fv(glGetUniformLocation(p, "u_model"), 1, GL_FALSE, model);
    glUniformMatrix3fv(glGetUniformLocation(p, "u_normal_matrix"), 1, GL_FALSE, normal_matrix);
    glUniform1i(glGetUniformLocation(p, "u_vertex_colour"), rgba ? 0 : 1);
    if (rgba) glUniform4f(glGetUniformLocation(p, "u_colour"), rgba[0], rgba[1], rgba[2], rgba[3]);
}

void render_surfaces(view_renderer *r, const view_surfaces *s)
{
    if (s->triangle_count == 0) return;
    static const float identity4[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    static const float identity3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    set_lit(r, identity4, identity3, NULL);
    glBindVertexArray(r->surface_vao);
    vertex_attribute(0, s->position);
    vertex_attribute(1, s->normal);
    vertex_attribute(2, s->colour);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, s->triangles);
    glDrawElements(GL_TRIANGLES, 3 * s->triangle_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

static void draw_mesh(const view_mesh *m)
{
    glBindVertexArray(m->vao);
    glDrawElements(GL_TRIANGLES, m->index_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
}

/// Model matrix with columns a, b, c (scaled by sa, sb, sc) and translation t; normal matrix with columns a, b, c.
static void frame_matrices(sm_vec3 a, sm_vec3 b, sm_vec3 c, sm_vec3 scale, sm_vec3 t, float model[16], float normal[9])
{
    const sm_vec3 columns[3] = {a, b, c};
    const double scales[3] = {scale.x, scale.y, scale.z};
    for (int k = 0; k < 3; k++) {
        const double v[3] = {columns[k].x, columns[k].y, columns[k].z};
        for (int row = 0; row < 3; row++) {
            model[4 * k + row] = (float)(scales[k] * v[row]);
            normal[3 * k + row] = (float)v[row];
        }
        model[4 * k + 3] = 0.0f;
    }
    model[12] = (float)t.x, model[13] = (float)t.y, model[14] = (float)t.z, model[15] = 1.0f;
}

static sm_vec3 column(const sm_mat3 *m, int k) { return (sm_vec3){m->m[0][k], m->m[1][k], m->m[2][k]}; }

void render_free_triangles(view_mesh *m)
{
    if (m->vao) free_mesh(m);
    *m = (view_mesh){0};
}

void render_colliders(view_renderer *r, const sm_collider_info *colliders, const view_mesh *meshes, int count, sm_vec3 focus,
                      double plane_half)
{
    static const float steel[4] = {0.48f, 0.58f, 0.74f, 1.0f}, glass[4] = {0.48f, 0.58f, 0.74f, 0.35f};
    float model[16], normal[9];
    for (int i = 0; i < count; i++) {
        const sm_collider_info *c = &colliders[i];
        if (c->shape == SM_COLLIDER_MESH && meshes && meshes[i].vao) { // (its vertices placed and turned: moved only)
            frame_matrices((sm_vec3){1, 0, 0}, (sm_vec3){0, 1, 0}, (sm_vec3){0, 0, 1}, (sm_vec3){1, 1, 1}, c->center, model, normal);
            set_lit(r, model, normal, steel);
            draw_mesh(&meshes[i]);
        } else if (c->shape == SM_COLLIDER_BOX) {
            frame_matrices(column(&c->axes, 0), column(&c->axes, 1), column(&c->axes, 2), c->size, c->center, model,
                           normal);
            set_lit(r, model, normal, steel);
            draw_mesh(&r->box);
        } else if (c->shape == SM_COLLIDER_SPHERE) {
            const sm_vec3 radius = {c->radius, c->radius, c->radius};
            frame_matrices((sm_vec3){1, 0, 0}, (sm_vec3){0, 1, 0}, (sm_vec3){0, 0, 1}, radius, c->center, model, normal);
            set_lit(r, model, normal, steel);
            draw_mesh(&r->ball);
        }
    }
    // the planes last, translucent, over what they cover (and over a ground at their height)
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDepthMask(GL_FALSE);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(-1.0f, -1.0f);
    for (int i = 0; i < count; i++) {
        const sm_collider_info *c = &colliders[i];
        if (c->shape != SM_COLLIDER_PLANE) continue;
        // the plane's right-handed frame (its axes: column 1 the normal n), centred where the plane
        // is nearest the focus
        const sm_vec3 t = column(&c->axes, 0), n = column(&c->axes, 1), b = column(&c->axes, 2);
        const double d = (focus.x - c->center.x) * n.x + (focus.y - c->center.y) * n.y + (focus.z - c->center.z) * n.z;
        const sm_vec3 centre = {focus.x - d * n.x, focus.y - d * n.y, focus.z - d * n.z};
        frame_matrices(t, n, b, (sm_vec3){plane_half, 1.0, plane_half}, centre, model, normal);
        set_lit(r, model, normal, glass);
        draw_mesh(&r->quad);
    }
    glDisable(GL_POLYGON_OFFSET_FILL);
    glDepthMask(GL_TRUE);
    glDisable(GL_BLEND);
}

void render_spheres(view_renderer *r, const float *centres, const float *styles, int count)
{
    if (count <= 0) return;
    glBindBuffer(GL_ARRAY_BUFFER, r->extra_position);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(4 * sizeof(float) * (size_t)count), centres, GL_STREAM_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, r->extra_style);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(4 * sizeof(float) * (size_t)count), styles, GL_STREAM_DRAW);
    set_camera(r, r->sphere_program);
    glUniform1i(glGetUniformLocation(r->sphere_program, "u_colour"), 0);
    glBindVertexArray(r->extra_vao);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
    glBindVertexArray(0);
}

void render_lines(view_renderer *r, const float *lines, int count)
{
    if (count <= 0) return;
    glBindBuffer(GL_ARRAY_BUFFER, r->line_buffer);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(12 * sizeof(float) * (size_t)count), lines, GL_STREAM_DRAW);
    set_camera(r, r->flat_program);
    glUniform1f(glGetUniformLocation(r->flat_program, "u_alpha"), 1.0f);
    glBindVertexArray(r->line_vao);
    glDrawArrays(GL_LINES, 0, 2 * count);
    glBindVertexArray(0);
}

void render_overlay_shapes(view_renderer *r, const float *triangles, int triangle_count, const float *lines, int line_count,
                           float alpha)
{
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    set_camera(r, r->flat_program);
    glBindVertexArray(r->line_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->line_buffer);
    if (triangle_count > 0) {
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(18 * sizeof(float) * (size_t)triangle_count), triangles, GL_STREAM_DRAW);
        glUniform1f(glGetUniformLocation(r->flat_program, "u_alpha"), alpha);
        glDrawArrays(GL_TRIANGLES, 0, 3 * triangle_count);
    }
    if (line_count > 0) {
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(12 * sizeof(float) * (size_t)line_count), lines, GL_STREAM_DRAW);
        glUniform1f(glGetUniformLocation(r->flat_program, "u_alpha"), fminf(1.0f, 2.0f * alpha));
        glDrawArrays(GL_LINES, 0, 2 * line_count);
    }
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}

/// The byte as drawn: stb_easy_font has glyphs for printable ASCII only (and reads outside its
/// table for anything else).
static char printable(char c) { return c >= 0x20 && c <= 0x7e ? c : '?'; }

/// The width of a printable character, font units.
static float glyph_units(char c)
{
    char one[2] = {c, '\0'};
    return (float)stb_easy_font_width(one);
}

static void put(char *out, size_t size, size_t *n, char c)
{
    if (*n + 1 < size) out[(*n)++] = c;
}

/// `text` as render_text() draws it into `out` (always terminated; cut short where full): every
/// byte printable() and every line broken to be at most `max_units` font units wide: at the last
/// space that fits (the spaces at the break dropped), within a word where none does, at least one
/// character a line; the continuations indented by two spaces, so that they read as such.
static char *layout_text(const char *text, float max_units, char *out, size_t size)
{
    const float indent = 2.0f * glyph_units(' ');
    size_t n = 0;
    const char *p = text;
    while (*p) {
        const char *end = p;
        while (*end && *end != '\n') end++;
        bool first = true;
        do {
            float width = 0.0f;
            if (!first) {
                put(out, size, &n, ' '), put(out, size, &n, ' ');
                width = indent;
            }
            // the longest run that fits, and the end of its last whole word
            const char *q = p, *cut = NULL;
            while (q < end) {
                const float w = glyph_units(printable(*q));
                if (width + w > max_units && q > p) break;
                width += w;
                q++;
                if (q[-1] != ' ' && (q == end || *q == ' ')) cut = q;
            }
            if (q == end || !cut) cut = q;
            for (const char *c = p; c < cut; c++) put(out, size, &n, printable(*c));
            p = cut;
            while (p < end && *p == ' ') p++;
            if (p < end) put(out, size, &n, '\n');
            first = false;
        } while (p < end);
        if (*p == '\n') put(out, size, &n, '\n'), p++;
    }
    out[n] = '\0';
    return out;
}

void render_text(view_renderer *r, const char *raw, float x, float y, float scale, float max_width)
{
    // stb_easy_font writes 4 vertices of 16 bytes per quad, a few quads per character
    enum { MAX_QUADS = 16384 };
    static char quads[MAX_QUADS * 4 * 16];
    static float triangles[MAX_QUADS * 6 * 2];
    static char text[16384];
    layout_text(raw, max_width / scale, text, sizeof text);
    const int quad_count = stb_easy_font_print(0.0f, 0.0f, text, NULL, quads, sizeof quads);
    const float width = (float)stb_easy_font_width(text), height = (float)stb_easy_font_height(text);
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int q = 0; q < quad_count; q++)
        for (int k = 0; k < 6; k++) {
            const float *v = (const float *)(quads + 16 * (4 * q + order[k]));
            triangles[12 * q + 2 * k] = x + scale * v[0];
            triangles[12 * q + 2 * k + 1] = y + scale * v[1];
        }
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(r->text_program);
    glUniform2f(glGetUniformLocation(r->text_program, "u_viewport"), (float)r->width, (float)r->height);
    glBindVertexArray(r->text_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->text_buffer);
    // the dark box behind the text, then the text
    const float m = 4.0f, x0 = x - m, y0 = y - m, x1 = x + scale * width + m, y1 = y + scale * height + m;
    const float box[12] = {x0, y0, x1, y0, x1, y1, x0, y0, x1, y1, x0, y1};
    glBufferData(GL_ARRAY_BUFFER, sizeof box, box, GL_STREAM_DRAW);
    glUniform4f(glGetUniformLocation(r->text_program, "u_colour"), 0.0f, 0.0f, 0.0f, 0.55f);
    glDrawArrays(GL_TRIANGLES, 0, 6);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof(float) * 12 * (size_t)quad_count), triangles, GL_STREAM_DRAW);
    glUniform4f(glGetUniformLocation(r->text_program, "u_colour"), 0.95f, 0.95f, 0.92f, 1.0f);
    glDrawArrays(GL_TRIANGLES, 0, 6 * quad_count);
    glBindVertexArray(0);
    glDisable(GL_BLEND);
    glEnable(GL_DEPTH_TEST);
}

float render_text_height(const char *raw, float scale, float max_width)
{
    static char text[16384];
    return scale * (float)stb_easy_font_height(layout_text(raw, max_width / scale, text, sizeof text));
}

void render_end(view_renderer *r, int window_width, int window_height)
{
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->framebuffer);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glBlitFramebuffer(0, 0, r->width, r->height, 0, 0, window_width, window_height, GL_COLOR_BUFFER_BIT, GL_LINEAR);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

/// Where a screenshot's PNG goes: its file and the first write error (an errno, 0 while none).
typedef struct png_sink {
    FILE *file;
    int error;
} png_sink;

static void png_write(void *context, void *data, int size)
{
    png_sink *sink = context;
    errno = 0;
    if (!sink->error && fwrite(data, 1, (size_t)size, sink->file) != (size_t)size) sink->error = errno ? errno : EIO;
}

bool render_screenshot(const view_renderer *r, const char *path, char *error, size_t error_size)
{
    unsigned char *pixels = malloc((size_t)r->width * (size_t)r->height * 3);
    if (!pixels) {
        snprintf(error, error_size, "out of memory for a %dx%d screenshot", r->width, r->height);
        return false;
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->framebuffer);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, r->width, r->height, GL_RGB, GL_UNSIGNED_BYTE, pixels);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    char shown[1024];
    sm_printable(path, shown, sizeof shown);
    FILE *file = fopen(path, "wb");
    if (!file) {
        snprintf(error, error_size, "cannot write %s: %s", shown, strerror(errno));
        free(pixels);
        return false;
    }
    png_sink sink = {file, 0};
    struct stat status;
    const bool regular = fstat(fileno(file), &status) == 0 && S_ISREG(status.st_mode);
    stbi_flip_vertically_on_write(1);
    const bool encoded = stbi_write_png_to_func(png_write, &sink, r->width, r->height, 3, pixels, 3 * r->width) != 0;
    free(pixels);
    if (fclose(file) != 0 && !sink.error) sink.error = errno ? errno : EIO;
    if (encoded && !sink.error) return true;
    snprintf(error, error_size, "cannot write %s: %s", shown, encoded ? strerror(sink.error) : "out of memory encoding the PNG");
    if (regular) remove(path); // not left half written (a device or a pipe is left alone)
    return false;
}
