/* analyse.c: hta_analyse_trace, a run of one process without MPI.
 *
 * The same steps as the run, in the order the run takes them, so that the
 * tables equal a results file's: the input listed as the run lists it
 * (an Nsight export of several GPUs is a rank per GPU), each entry through
 * hta_analyse_file, the timeline binned over its own range (the whole run
 * is this one process), then the root's rank resolution and cross-rank
 * statistics.  Only tables the results file holds as tables are kept. */
#include "hta/analyse.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/ranks_table.h"
#include "run/analyse_file.h"
#include "run/discover.h"
#include "run/pipeline.h"
#include "run/threads.h"
#include "analysis/timeline_bins.h"

/* The ranks row of a failed file names why: that is the caller's error. */
static int first_failure(const hta_tableset *set, hta_error *err)
{
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    for (size_t r = 0; ranks && r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[HTA_RANKS_STATUS].s, "failed") == 0)
            return hta_fail(err, "%s", row[HTA_RANKS_ERROR].s);
    }
    return 0;
}

static int analyse_listed(const hta_file_list *list, const hta_settings *opt, hta_tableset *set,
                          hta_error *err)
{
    for (size_t i = 0; i < list->count; i++)
        if (hta_analyse_file(list->paths[i], list->bytes[i], (int64_t)i, 0, opt, set))
            return hta_fail(err, "%s: out of memory", list->paths[i]);
    return first_failure(set, err);
}

static int bin_timeline(hta_tableset *set, int bins, hta_error *err)
{
    int64_t start, end;
    if (!hta_timeline_local_range(set, &start, &end))
        return 0;
    return hta_timeline_bin(set, bins, start, end, err);
}

/* Scratch tables and the timeline, which the file holds as an array, are
 * not tables of the results file. */
static void keep_written_tables(hta_tableset *set)
{
    for (size_t i = set->n_tables; i-- > 0;) {
        hta_table_spec spec = hta_table_spec_of(set->tables[i]);
        if (!hta_table_spec_is_written(&spec))
            hta_tableset_remove(set, set->tables[i]->name);
    }
}

static int analyse_into(const char *path, hta_settings *opt, hta_tableset *set, hta_error *err)
{
    char *inputs[] = {(char *)path};
    opt->run.inputs = inputs;
    opt->run.n_inputs = 1;
    if (opt->run.threads == 0)
        opt->run.threads = hta_threads_alone();
    hta_file_list list = {0};
    hta_rank_map map = {0};
    int rc = hta_discover(opt, &list, err) || analyse_listed(&list, opt, set, err) ||
             bin_timeline(set, opt->analysis.bins, err) || hta_crossrank_alone(set, opt, &map, err);
    hta_rank_map_free(&map);
    hta_file_list_free(&list);
    opt->run.inputs = NULL;
    if (rc == 0)
        keep_written_tables(set);
    return rc ? -1 : 0;
}

hta_tableset *hta_analyse_trace(const char *path, const hta_settings *s, hta_error *err)
{
    hta_settings defaults;
    hta_settings opt = *hta_settings_or_defaults(s, &defaults);
    hta_tableset *set = calloc(1, sizeof *set);
    if (!set) {
        hta_fail(err, "%s: out of memory", path);
        return NULL;
    }
    if (analyse_into(path, &opt, set, err)) {
        hta_tableset_destroy(set);
        return NULL;
    }
    return set;
}
