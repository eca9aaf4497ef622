/* hta/hta.h: libhta, Holistic Trace Analysis of PyTorch profiler traces.
 *
 *   hta_settings *s = hta_settings_new();
 *   hta_settings_set(s, "round-like-hta", NULL, &err);
 *   hta_tableset *tables = hta_analyse_trace("rank-0.json.gz", s, &err);
 *   const hta_table *k = hta_tableset_get(tables, "kernels");
 *
 * Link with `pkg-config --libs hta` or CMake's find_package(hta) and
 * hta::hta.  Every handle is opaque; docs/design.md ("The library") says
 * what may change between versions. */
#ifndef HTA_PUBLIC_HTA_H
#define HTA_PUBLIC_HTA_H

#include "hta/analyse.h"
#include "hta/error.h"
#include "hta/results.h"
#include "hta/run.h"
#include "hta/settings.h"
#include "hta/table.h"
#include "hta/trace.h"
#include "hta/version.h"

#endif
