/* shapematch-view --report (report.h): the run, the camera, the picks, springs and cuts, and the
 * objects, as JSON. */
#include "report.h"
#include "session.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *vec_json(sm_vec3 p)
{
    const double values[3] = {p.x, p.y, p.z};
    return cJSON_CreateDoubleArray(values, 3);
}

bool view_write_report(viewer *v, const char *path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scene", v->opt.scene);
    cJSON_AddNumberToObject(root, "frames", (double)v->frame);
    cJSON_AddNumberToObject(root, "steps", (double)v->steps);
    cJSON_AddNumberToObject(root, "time", v->sim_time);
    cJSON_AddStringToObject(root, "backend", sm_world_backend_name(v->world));
    cJSON_AddStringToObject(root, "device", sm_world_device_name(v->world));
    cJSON_AddStringToObject(root, "interop", v->interop ? "shared" : "fallback");
    cJSON_AddStringToObject(root, "interop_detail", v->interop_text);
    cJSON_AddStringToObject(root, "gl_renderer", (const char *)glGetString(GL_RENDERER));
    cJSON_AddBoolToObject(root, "headless", v->opt.headless);
    cJSON_AddNumberToObject(root, "frames_per_second", v->run_seconds > 0.0 ? (double)v->frame / v->run_seconds : 0.0);
    cJSON_AddStringToObject(root, "overlay", v->overlay);
    cJSON *camera = cJSON_AddObjectToObject(root, "camera"); // where it ended: following moves it
    cJSON_AddItemToObject(camera, "target", vec_json(v->camera.target));
    cJSON_AddNumberToObject(camera, "distance", v->camera.distance);
    cJSON_AddNumberToObject(camera, "yaw", v->camera.yaw);
    cJSON_AddNumberToObject(camera, "pitch", v->camera.pitch);
    cJSON_AddBoolToObject(camera, "follow", v->follow.on);
    cJSON *picks = cJSON_AddArrayToObject(root, "picks");
    for (int p = 0; p < v->pick_count; p++) {
        cJSON *pick = cJSON_CreateObject();
        cJSON_AddNumberToObject(pick, "frame", (double)v->picks[p].frame);
        cJSON_AddNumberToObject(pick, "particle", v->picks[p].particle);
        cJSON_AddNumberToObject(pick, "object", v->picks[p].object);
        cJSON_AddItemToObject(pick, "position", vec_json(v->picks[p].position));
        double x[3] = {0, 0, 0};
        if (v->picks[p].particle < sm_world_get_counts(v->world).particles)
            sm_world_get_positions(v->world, v->picks[p].particle, 1, x);
        cJSON_AddItemToObject(pick, "position_end", vec_json((sm_vec3){x[0], x[1], x[2]}));
        if (v->picks[p].particle < sm_world_get_counts(v->world).particles)
            sm_world_get_rest_positions(v->world, v->picks[p].particle, 1, x);
        cJSON_AddItemToObject(pick, "rest_position", vec_json((sm_vec3){x[0], x[1], x[2]}));
        cJSON_AddItemToArray(picks, pick);
    }
    cJSON *springs = cJSON_AddArrayToObject(root, "springs");
    for (int s = 0; s < v->tools.spring_count; s++) {
        const view_spring *spring = &v->tools.springs[s];
        double x[3] = {0, 0, 0};
        sm_world_get_positions(v->world, spring->particle, 1, x);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "particle", spring->particle);
        cJSON_AddBoolToObject(item, "locked", spring->locked);
        cJSON_AddItemToObject(item, "target", vec_json(spring->target));
        cJSON_AddItemToObject(item, "position", vec_json((sm_vec3){x[0], x[1], x[2]}));
        cJSON_AddItemToArray(springs, item);
    }
    cJSON *cuts = cJSON_AddArrayToObject(root, "cuts");
    for (int c = 0; c < v->cut_count; c++) {
        const cut_record *cut = &v->cuts[c];
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "frame", (double)cut->frame);
        cJSON_AddNumberToObject(item, "time", cut->info.time);
        cJSON_AddStringToObject(item, "by", cut->scene ? "scene" : "scissors");
        cJSON_AddNumberToObject(item, "object", cut->info.back_object);
        const int pieces[2] = {cut->info.back_object, cut->info.front_object};
        const int counts[2] = {cut->info.back_particles, cut->info.front_particles};
        cJSON_AddItemToObject(item, "pieces", cJSON_CreateIntArray(pieces, 2));
        cJSON_AddItemToObject(item, "particles", cJSON_CreateIntArray(counts, 2));
        cJSON_AddItemToObject(item, "back_centre", vec_json(cut->back_centre));
        cJSON_AddItemToObject(item, "front_centre", vec_json(cut->front_centre));
        cJSON_AddNumberToObject(item, "cap_triangles", cut->info.cap_triangles);
        cJSON_AddItemToArray(cuts, item);
    }
    // each object: centre of mass and RMS radius at the start and now, mean distance of its
    // particles to their goals
    int32_t count = 0;
    sm_vec3 *stats = view_object_stats(v->world, &count);
    const int32_t n = sm_world_get_counts(v->world).particles;
    double *x = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1)), *g = malloc(sizeof(double) * 3 * (size_t)(n > 0 ? n : 1));
    cJSON *objects = cJSON_AddArrayToObject(root, "objects");
    const bool ok = stats && x && g && sm_world_get_positions(v->world, 0, n, x) == SM_OK &&
                    sm_world_get_goals(v->world, 0, n, g) == SM_OK;
    for (int32_t o = 0; ok && o < count; o++) {
        sm_object_info info;
        sm_world_get_object(v->world, o, &info);
        double strain = 0.0;
        const int32_t *list = NULL;
        int32_t listed = 0;
        sm_world_get_object_particles(v->world, o, &list, &listed);
        for (int32_t k = 0; k < listed; k++) {
            const int32_t i = list[k];
            strain += sqrt((x[3 * i] - g[3 * i]) * (x[3 * i] - g[3 * i]) + (x[3 * i + 1] - g[3 * i + 1]) * (x[3 * i + 1] - g[3 * i + 1]) +
                           (x[3 * i + 2] - g[3 * i + 2]) * (x[3 * i + 2] - g[3 * i + 2]));
        }
        cJSON *item = cJSON_CreateObject();
        const object_origin origin = o < v->origin_count ? v->origins[o] : (object_origin){-1, false};
        cJSON_AddNumberToObject(item, "particles", info.particle_count);
        if (info.surface_triangle_count > 0) cJSON_AddNumberToObject(item, "surface_triangles", info.surface_triangle_count);
        if (origin.piece) cJSON_AddNumberToObject(item, "piece_of", origin.start); // -1: of a dropped object
        else if (v->start_stats && origin.start >= 0 && origin.start < v->start_objects) {
            cJSON_AddItemToObject(item, "centre_start", vec_json(v->start_stats[2 * origin.start]));
            cJSON_AddNumberToObject(item, "rms_radius_start", v->start_stats[2 * origin.start + 1].x);
        }
        cJSON_AddItemToObject(item, "centre_end", vec_json(stats[2 * o]));
        cJSON_AddNumberToObject(item, "rms_radius_end", stats[2 * o + 1].x);
        cJSON_AddNumberToObject(item, "mean_goal_distance", info.particle_count > 0 ? strain / info.particle_count : 0.0);
        cJSON_AddItemToArray(objects, item);
    }
    free(stats), free(x), free(g);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *file = text && ok ? fopen(path, "w") : NULL;
    bool written = file && fputs(text, file) >= 0;
    if (file) written &= fclose(file) == 0;
    free(text);
    if (!written) view_say("error: cannot write the report %s (%s)", path, ok ? strerror(errno) : sm_last_error());
    return written;
}
