/* crossrank/job_path/scenarios.h: the what-if scenarios the replay runs
 * (--what-if, crossrank/job_path/scenarios.c). */
#ifndef HTA_SCENARIOS_H
#define HTA_SCENARIOS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum hta_scenario_kind {
    HTA_SCENARIO_AS_MEASURED,
    HTA_SCENARIO_MEDIAN,       /* compute kernels at the median over the ranks */
    HTA_SCENARIO_COMPUTE,      /* compute kernels factor times faster */
    HTA_SCENARIO_NETWORK,      /* every transfer factor times faster */
    HTA_SCENARIO_NO_DATA_LOADING,
    HTA_SCENARIO_NO_LAUNCH_DELAY,
} hta_scenario_kind;

/* One scenario: its kind, the ranks it changes (first[i]..last[i]; none
 * listed: every rank), its factor, and its text as the user gave it. */
typedef struct hta_scenario {
    hta_scenario_kind kind;
    int64_t *first, *last;     /* owned */
    size_t n_ranges;
    double factor;
    char *text;                /* owned */
    char *ranks;               /* owned: the RANKS part, "" for network */
} hta_scenario;

/* "as measured", then each spec of specs (separated by ';', NULL or
 * empty: the defaults, median:all) into *out (the caller frees with
 * hta_scenarios_free), *n of them; -1 with err naming the bad spec. */
int hta_scenarios_parse(const char *specs, hta_scenario **out, size_t *n, hta_error *err);
void hta_scenarios_free(hta_scenario *s, size_t n);

/* Whether the scenario changes rank's work. */
int hta_scenario_covers(const hta_scenario *s, int64_t rank);

/* Whether any scenario puts kernels at the median. */
int hta_scenarios_need_medians(const hta_scenario *s, size_t n);

#endif
