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

/* How a scenario's RANKS names its ranks: listed (and ranges), all,
 * none, the ranks /stragglers flags, or those of one host. */
typedef enum hta_scenario_ranks {
    HTA_RANKS_LISTED,
    HTA_RANKS_ALL,
    HTA_RANKS_NONE,
    HTA_RANKS_STRAGGLERS,
    HTA_RANKS_NODE,
} hta_scenario_ranks;

/* One scenario: its kind, the ranks it changes (by; when listed,
 * first[i]..last[i]), its factor, its text as the user gave it, and the
 * steps it is replayed for (every step when steps is NULL). */
typedef struct hta_scenario {
    hta_scenario_kind kind;
    hta_scenario_ranks by;
    int64_t *first, *last;     /* owned */
    size_t n_ranges;
    double factor;
    char *text;                /* owned */
    char *ranks;               /* owned: the RANKS part ("" for network),
                                  node:HOST's host after its 5 bytes */
    char *steps;               /* owned: its steps as a list, or NULL */
    int64_t *step_first, *step_last; /* owned */
    size_t n_step_ranges;
} hta_scenario;

/* "as measured", then each spec of specs (separated by ';') into *out
 * (the caller frees with hta_scenarios_free), *n of them; -1 with err
 * naming the bad spec. */
int hta_scenarios_parse(const char *specs, hta_scenario **out, size_t *n, hta_error *err);
void hta_scenarios_free(hta_scenario *s, size_t n);

/* The ranks of a scenario named by a word (stragglers, node:HOST) once
 * known: list is RANKS as a list ("4-5,7"), or "none"; -1 when it is
 * neither or out of memory.  Its ranks text becomes list. */
int hta_scenario_set_ranks(hta_scenario *s, const char *list);

/* The steps the scenario is replayed for, as a list ("3-5,9"; see
 * hta_ranks_text); -1 when not one or out of memory. */
int hta_scenario_set_steps(hta_scenario *s, const char *list);

/* Whether the scenario is replayed for step. */
int hta_scenario_at_step(const hta_scenario *s, int64_t step);

/* ranks[0..n), ascending, as a list of ranks and ranges ("4-5,7"), or
 * "none"; NULL when out of memory. */
char *hta_ranks_text(const int64_t *ranks, size_t n);

/* Whether the scenario changes rank's work. */
int hta_scenario_covers(const hta_scenario *s, int64_t rank);

#endif
