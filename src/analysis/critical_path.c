/* critical_path.c: HTA's critical path of every ProfilerStep (see
 * analysis/critical_path.h and docs/definitions.md, Critical path): the
 * entry points, the rank's state and the names the graph cares about; the
 * stages are in the files analysis/critical_path_internal.h lists.
 *
 * The rank's events are dealt out to the steps once: a CPU event by its
 * start, a GPU event by its launch's start (HTA's clipping).  Each step
 * then builds its graph in HTA's order of insertion (runtime lock edges,
 * the call stack of each CPU thread, then kernels and syncs in time
 * order), because ties between equally long paths are broken by that
 * order as networkx does: the first predecessor with the longest
 * distance, the first node in topological order (Kahn's, generation by
 * generation) with the longest distance.  The queue length of each
 * stream, which decides between a launch edge and a kernel -> kernel
 * edge, is counted over the whole trace as HTA does. */
#include "analysis/critical_path_internal.h"

#include "analysis/metrics.h"

#include <stdlib.h>
#include <string.h>

const char *const hta_cp_bound_names[HTA_CP_N_BOUNDS] = {
    "cpu_bound",          "data_loading",
    "gpu_compute_bound",  "gpu_communication_bound",
    "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead",
};

static uint32_t find_id(const hta_strtab *tab, const char *s)
{
    return hta_strtab_find(tab, s, strlen(s));
}

static int classify_names(rank_state *r)
{
    const hta_strtab *names = &r->t->names;
    r->name_flags = calloc(names->count + 1, 1);
    if (!r->name_flags)
        return -1;
    static const char *const LOCK[] = {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"};
    static const char *const BLOCKING[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                           "cudaEventQuery", "cudaEventSynchronize",
                                           "cudaMemcpy", "cudaMemcpyAsync"};
    for (uint32_t id = 0; id < names->count; id++) {
        const char *s = hta_strtab_get(names, id);
        uint8_t f = 0;
        for (size_t k = 0; k < sizeof LOCK / sizeof *LOCK; k++)
            f |= strcmp(s, LOCK[k]) == 0 ? N_LOCK : 0;
        for (size_t k = 0; k < sizeof BLOCKING / sizeof *BLOCKING; k++)
            f |= strcmp(s, BLOCKING[k]) == 0 ? N_BLOCKING : 0;
        f |= strstr(s, "forward") ? N_FORWARD : 0;
        f |= strstr(s, "autograd") ? N_AUTOGRAD : 0;
        f |= strstr(s, "DataLoader") ? N_DATA_LOADING : 0;
        f |= strncmp(s, "ProfilerStep#", 13) == 0 ? N_STEP : 0;
        r->name_flags[id] = f;
    }
    const hta_strtab *cats = &r->t->categories;
    r->cat_cpu_op = find_id(cats, "cpu_op");
    r->cat_runtime = find_id(cats, "cuda_runtime");
    r->cat_driver = find_id(cats, "cuda_driver");
    r->cat_user_annotation = find_id(cats, "user_annotation");
    r->cat_sync = find_id(cats, "cuda_sync");
    r->name_context_sync = find_id(names, "Context Sync");
    r->name_stream_sync = find_id(names, "Stream Sync");
    r->name_event_sync = find_id(names, "Event Sync");
    r->name_stream_wait = find_id(names, "Stream Wait Event");
    return 0;
}


static int run_step(rank_state *r, size_t s, path *p, hta_tableset *out)
{
    int rc = cp_build_graph(r, s) || cp_longest_path(r, p) ||
             (r->path_fn ? cp_hand_path(r, &r->steps[s], p)
                         : cp_put_intervals(r, s, p, out) ||
                               cp_emit_step(r, &r->steps[s], p, out) ||
                               (r->replay && cp_put_replay_graph(r, s, out)));
    return rc ? -1 : 0;
}

static void rank_state_free(rank_state *r)
{
    hta_cpu_contexts_free(&r->contexts);
    free(r->name_flags);
    free(r->ql_runtime);
    free(r->ql_kernel);
    free(r->gpu_runtime);
    free(r->launches);
    free(r->steps);
    free(r->members);
    free(r->step_first);
    free(r->member_of);
    free(r->g.nodes);
    free(r->g.edges);
    free(r->g.start_of);
    free(r->g.end_of);
    free(r->segment_of);
    free(r->listed_id);
    free(r->piece_of);
    free(r->path_name_id);
    free(r->name_time);
    free(r->place_step);
    free(r->place_next);
    free(r->replay_name_step);
    free(r->replay_name_next);
    for (int i = 0; i < S_N; i++)
        free(r->scratch[i]);
}

/* Sets the rank's state up and runs every step; -1 when out of memory or
 * a path callback stopped. */
static int run_steps(rank_state *r, hta_tableset *out)
{
    path p = {0};
    int rc = hta_cpu_contexts_build(&r->contexts, r->t) || classify_names(r) ||
             cp_count_queues(r) || cp_find_steps(r) || cp_deal_members(r);
    for (size_t s = 0; s < r->n_steps && !rc; s++)
        rc = run_step(r, s, &p, out);
    free(p.edges);
    return rc ? -1 : 0;
}

int hta_critical_path_each(const hta_rank_view *view, hta_cp_path_fn fn, void *ctx)
{
    rank_state r = {.v = view, .t = view->trace, .path_fn = fn, .path_ctx = ctx};
    int rc = run_steps(&r, NULL);
    rank_state_free(&r);
    return r.path_rc ? r.path_rc : rc;
}

int hta_critical_path(const hta_rank_view *view, const hta_analysis_settings *opt,
                      hta_tableset *out, hta_error *err)
{
    if (!opt->critical_path && !opt->replay)
        return 0;
    rank_state r = {.v = view, .t = view->trace, .replay = opt->replay};
    int rc = -1;
    if (run_steps(&r, out) || cp_put_name_times(&r, out))
        goto done;
    double all = 0;
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        all += r.total[b];
    if (r.n_steps && all > 0 &&
        (hta_emit_metric(out, view->rank_key, HTA_METRIC_CRITICAL_PATH_CPU_BOUND_PCT, NULL,
                         100.0 * r.total[HTA_CP_CPU] / all) ||
         hta_emit_metric(out, view->rank_key, HTA_METRIC_CRITICAL_PATH_COMM_BOUND_PCT, NULL,
                         100.0 * r.total[HTA_CP_GPU_COMMUNICATION] / all)))
        goto done;
    rc = 0;
done:
    rank_state_free(&r);
    return rc ? hta_fail(err, "out of memory in the critical path") : 0;
}
