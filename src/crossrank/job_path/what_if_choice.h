/* crossrank/job_path/what_if_choice.h: the scenarios the root has the
 * job replayed under (crossrank/job_path/what_if_choice.c). */
#ifndef HTA_WHAT_IF_CHOICE_H
#define HTA_WHAT_IF_CHOICE_H

#include <stddef.h>

#include "crossrank/exchange/hosts.h"
#include "crossrank/job_path/scenarios.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* The scenarios chosen, "as measured" first, each with the note its
 * rows carry ("" or why it covers no rank). */
typedef struct hta_what_if_choice {
    hta_scenario *sc;          /* owned */
    size_t n;
    char **notes;              /* owned, n of them */
} hta_what_if_choice;

/* Root: those of opt->what_if, replayed for every step, or without it
 * the defaults: per step the five costliest rows of "delay_costs" whose
 * cause a change takes away (median:R for compute or a slower GPU,
 * no-data-loading:R, no-launch-delay:R) and, when several are median:R,
 * those ranks together, each replayed for the steps that chose it (its
 * steps set); and median:stragglers, for every step, when "stragglers"
 * flags a rank.  RANKS named by a word are set:
 * stragglers from "stragglers", node:HOST from hosts, the run's map of
 * ranks to hosts (crossrank/exchange/hosts.h; NULL when unknown).  -1
 * with err when a spec cannot be read or out of memory. */
int hta_what_if_choose(const hta_tableset *set, const hta_rank_hosts *hosts,
                       const hta_crossrank_settings *opt, hta_what_if_choice *out,
                       hta_error *err);
void hta_what_if_choice_free(hta_what_if_choice *c);

#endif
