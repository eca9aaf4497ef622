/* run_analyses.c: every analysis of hta_analyses over one rank's view, on
 * this thread or on several (hta_analyse_file decides how many).
 *
 * The analyses only read the view, so they can run side by side as they
 * are.  Each threaded analysis appends to a table set of its own, and the
 * sets are moved into the trace's tables in registry order once all have
 * finished: rows come out in the order of a serial run, so results never
 * depend on the thread count.  Threads take the next analysis as they come
 * free (hta_run_tasks), in the order of hta_analysis_schedule: the longest
 * first, so that one long analysis does not hold back the others.
 * Scratch an analysis frees stays in the heap for the next one (up to
 * TRIM_THRESHOLD in cli/main.c); a large trace hands it back once, after
 * its last analysis (HTA_TRIM_MIN_EVENTS). */
#include "run/run_analyses.h"

#include "analysis/registry.h"
#include "util/clock.h"
#include "util/thread_jobs.h"

#include <stdlib.h>

typedef struct analysis_job {
    const hta_rank_view *view;
    const hta_settings *opt;
    const char *path;
    double deadline;           /* monotonic seconds; 0 = none */
} analysis_job;

/* The --timeout-per-trace budget is checked before each analysis; the
 * reader enforces it while parsing. */
static int run_analysis(const analysis_job *job, size_t i, hta_tableset *out, hta_error *err)
{
    if (job->deadline > 0 && hta_monotonic_seconds() > job->deadline)
        return hta_fail(err, "%s: timed out after %g s (--timeout-per-trace) before %s",
                        job->path, job->opt->run.timeout_per_trace, hta_analyses[i].name);
    return hta_analysis_run(&hta_analyses[i], job->view, &job->opt->analysis, out, err);
}

static int run_serially(const analysis_job *job, hta_tableset *out, hta_error *err)
{
    for (size_t i = 0; i < hta_n_analyses; i++)
        if (run_analysis(job, i, out, err))
            return -1;
    return 0;
}

/* What the threads share: one table set, error and result per analysis. */
typedef struct shared_results {
    const analysis_job *job;
    hta_tableset *outs;        /* owned, hta_n_analyses */
    hta_error *errs;           /* owned, hta_n_analyses */
    int *rcs;                  /* owned, hta_n_analyses */
} shared_results;

static void run_shared(void *shared, int turn)
{
    shared_results *s = shared;
    size_t i = hta_analysis_schedule[turn];
    s->rcs[i] = run_analysis(s->job, i, &s->outs[i], &s->errs[i]);
}

/* The first failure in registry order, as a serial run would report it;
 * else every analysis's rows, in registry order. */
static int collect_results(shared_results *s, hta_tableset *out, hta_error *err)
{
    for (size_t i = 0; i < hta_n_analyses; i++) {
        if (s->rcs[i]) {
            *err = s->errs[i];
            return -1;
        }
        if (hta_tableset_move_rows(out, &s->outs[i]))
            return hta_fail(err, "%s: out of memory collecting %s", s->job->path,
                            hta_analyses[i].name);
    }
    return 0;
}

static int run_threaded(const analysis_job *job, int threads, hta_tableset *out,
                        hta_error *err)
{
    shared_results s = {.job = job,
                        .outs = calloc(hta_n_analyses, sizeof *s.outs),
                        .errs = calloc(hta_n_analyses, sizeof *s.errs),
                        .rcs = calloc(hta_n_analyses, sizeof *s.rcs)};
    int rc = s.outs && s.errs && s.rcs ? 0 : -1;
    if (rc == 0) {
        hta_run_tasks(run_shared, &s, (int)hta_n_analyses, threads);
        rc = collect_results(&s, out, err);
    } else {
        hta_fail(err, "%s: out of memory starting the analyses", job->path);
    }
    for (size_t i = 0; s.outs && i < hta_n_analyses; i++)
        hta_tableset_free(&s.outs[i]);
    free(s.outs);
    free(s.errs);
    free(s.rcs);
    return rc;
}

int hta_run_analyses(const hta_rank_view *view, const hta_settings *opt, int threads,
                     const char *path, double deadline, hta_tableset *out, hta_error *err)
{
    analysis_job job = {view, opt, path, deadline};
    if (threads > (int)hta_n_analyses)
        threads = (int)hta_n_analyses;
    return threads > 1 ? run_threaded(&job, threads, out, err) : run_serially(&job, out, err);
}
