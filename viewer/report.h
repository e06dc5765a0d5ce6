/* shapematch-view --report: the JSON written at the end of a run. */
#ifndef SM_VIEW_REPORT_H
#define SM_VIEW_REPORT_H

#include "viewer.h"

/// Writes the report to `path`: the run's figures, the camera, the picks, springs and cuts, and
/// each object's centre, size and strain at the start and the end; false (said) when it cannot.
bool view_write_report(viewer *v, const char *path);

#endif
