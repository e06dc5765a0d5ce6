/* The step (step.c): the one scheduler of the passes, which every backend's step runs, the
 * step's checks and the state check. */
#ifndef SM_STEP_H
#define SM_STEP_H

#include "world.h"

/// The one scheduler of the passes: whether pass `pass` runs in this world (the grid and collide
/// with colliding particles, the ground with a ground, a pusher or colliders, plasticity with a
/// plastic object, the skin with surfaces; the others always).
bool sm_pass_runs(const sm_world *world, sm_pass pass);
/// How a backend runs the passes the scheduler picks: `run` runs (or enqueues) pass `pass` of
/// solver step `substep` (the skin: after the last), `substep_done` (may be NULL) follows each
/// solver step and the skin, told whether they went well.
typedef struct sm_pass_runner {
    sm_result (*run)(sm_world *world, sm_pass pass, double h, int32_t substep);
    void (*substep_done)(sm_world *world, bool ok);
} sm_pass_runner;
/// Runs `substeps` solver steps of length h, each the passes that run in pipeline order, then
/// the skin once, through `runner`; advances the world's time and step count. Both backends'
/// steps are this loop.
sm_result sm_world_run_passes(sm_world *world, double h, int32_t substeps, const sm_pass_runner *runner);
/// Checks a step's arguments for `call`, brings the membership map and the grid up to date and
/// sets *out_h = dt / substeps.
sm_result sm_world_step_check(sm_world *world, double dt, int32_t substeps, const char *call, double *out_h);

#endif
