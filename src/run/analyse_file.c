/* analyse_file.c: one trace file through parse -> step filter -> view ->
 * every analysis, on the process that owns it.  Whatever goes wrong with
 * the input ends up in the file's row of the "ranks" table, never as an
 * abort, so every other rank's results survive. */
#include "run/analyse_file.h"

#include "analysis/fr_rows.h"
#include "analysis/registry.h"
#include "analysis/ranks_table.h"
#include "model/hta_rounding.h"
#include "model/rank_view.h"
#include "model/step_filter.h"
#include "written_trace/trace_writer.h"
#include "parse/rank_name.h"
#include "parse/device_entry.h"
#include "parse/read_input.h"
#include "run/run_analyses.h"
#include "util/clock.h"

#include <math.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

/* The host a trace was recorded on: as its export says (Nsight), else as
 * PyTorch's tensorboard_trace_handler names its files; "" when neither
 * does. */
static void find_host(const char *path, const hta_trace *t, char *host, size_t size)
{
    size_t len = 0;
    const char *named = t && t->host[0] ? t->host : hta_host_from_file_name(path, &len);
    if (t && t->host[0])
        len = strlen(named);
    if (!named || len >= size)
        len = 0;
    memcpy(host, named ? named : "", len);
    host[len] = '\0';
}

/* The trace's GPU events and time span, in one pass over its events (the
 * other thread of a large trace waits for the passes before the view). */
static void describe_events(const hta_trace *t, hta_trace_report *r)
{
    if (t->n_events == 0)
        return;
    uint64_t gpu = 0;
    int64_t first = t->events[0].ts_ns, last = hta_event_end(&t->events[0]);
    for (size_t i = 0; i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        gpu += hta_event_is_gpu(e) != 0;
        first = e->ts_ns < first ? e->ts_ns : first;
        last = hta_event_end(e) > last ? hta_event_end(e) : last;
    }
    r->gpu_events = gpu;
    r->first_ts_us = hta_ns_to_us(first);
    r->last_ts_us = hta_ns_to_us(last);
}

/* Threads for the view and the analyses: --threads, for a large trace. */
static int trace_threads(const hta_trace *t, const hta_settings *opt)
{
    uint64_t min_events = opt->run.threaded_min_events ? opt->run.threaded_min_events
                                                       : HTA_THREADED_MIN_EVENTS;
    return t->n_events >= min_events ? opt->run.threads : 1;
}

/* A Flight Recorder dump: its rows for the hang diagnosis
 * (analysis/fr_rows.h) and its row of /ranks, whose events are its
 * entries. */
static int analyse_dump(const char *path, uint64_t bytes, int64_t file_index, int process,
                        const hta_settings *opt, hta_tableset *out)
{
    hta_trace_report r = {.bytes = bytes, .claimed_rank = -1, .rank_source = "fallback",
                          .status = "failed", .error = "", .world_size = -1,
                          .first_ts_us = NAN, .last_ts_us = NAN, .input_notes = "",
                          .host = "", .input_format = HTA_FR_INPUT_FORMAT};
    hta_error err = {{0}};
    double t0 = hta_monotonic_seconds();
    hta_fr_dump dump;
    int parsed = hta_fr_dump_read(path, &dump, &err) == 0;
    r.claimed_rank = hta_fr_claimed_rank(parsed ? &dump : NULL, path);
    if (r.claimed_rank >= 0)
        r.rank_source = parsed && dump.rank >= 0 ? "recorded" : "file_name";
    r.parse_seconds = hta_monotonic_seconds() - t0;
    if (parsed) {
        r.events = dump.n_entries;
        r.status = "ok";
        if (hta_fr_put_rows(&dump, path, file_index, r.claimed_rank, out)) {
            r.status = "failed";
            r.error = "out of memory keeping the dump's entries";
        }
        hta_fr_dump_free(&dump);
    } else
        r.error = err.text;
    return hta_put_ranks_row(out, file_index, process, opt->run.threads, path, &r);
}

int hta_analyse_file(const char *path, uint64_t bytes, int64_t file_index,
                     int process, const hta_settings *opt, hta_tableset *out)
{
    if (opt->read.input_format == HTA_INPUT_AUTO && hta_fr_dump_file_sniff(path))
        return analyse_dump(path, bytes, file_index, process, opt, out);

    hta_trace_report r = {.bytes = bytes, .claimed_rank = -1, .rank_source = "fallback",
                     .status = "failed", .error = "", .world_size = -1,
                     .first_ts_us = NAN, .last_ts_us = NAN};
    hta_error err = {{0}};
    double t0 = hta_monotonic_seconds();
    hta_trace trace;
    hta_read_options reading = {.timeout_seconds = opt->run.timeout_per_trace,
                                .inflater = (hta_inflater)opt->read.inflater,
                                .threads = opt->run.threads};
    hta_input_format format;
    hta_error notes;
    int parsed = hta_read_input(path, (hta_input_format)opt->read.input_format, &reading,
                                opt->read.step_regex, &trace, &format, &notes, &err) == 0;
    r.input_format = hta_input_format_name(format);
    r.input_notes = notes.text;
    char host[sizeof trace.host];
    find_host(path, parsed ? &trace : NULL, host, sizeof host);
    r.host = host;
    r.parse_seconds = hta_monotonic_seconds() - t0;
    /* The devices of one export share its name: not a rank of each. */
    char export_path[4096];
    long long device;
    int64_t name_rank = hta_device_entry_parse(path, export_path, sizeof export_path, &device)
                            ? -1 : hta_rank_from_file_name(path);
    if (name_rank >= 0) {
        r.claimed_rank = name_rank;
        r.rank_source = "file_name";
    }
    if (!parsed) {
        r.error = err.text;
        return hta_put_ranks_row(out, file_index, process, opt->run.threads, path, &r);
    }
    if (trace.rank >= 0) {
        r.claimed_rank = trace.rank;
        r.rank_source = format == HTA_INPUT_KINETO ? "distributedInfo" : "recorded";
    }
    r.json_bytes = trace.json_bytes;
    r.events = trace.n_events;
    r.skipped_events = trace.skipped_events;
    r.world_size = trace.world_size;
    describe_events(&trace, &r);

    double t1 = hta_monotonic_seconds();
    if (opt->analysis.round_like_hta)
        hta_round_like_hta(&trace);
    hta_step_filter_stats filter;
    hta_rank_view view;
    hta_corrmap launches;
    int ok = hta_step_filter(&trace, opt->analysis.include_last_step, &filter, &launches,
                             &err) == 0;
    hta_trace_shrink(&trace);
    int threads = trace_threads(&trace, opt);
    if (ok && hta_rank_view_build(&view, &trace, &launches, file_index, threads)) {
        hta_fail(&err, "%s: out of memory building the event index", path);
        ok = 0;
    }
    if (ok) {
        r.step_filter_applied = filter.applied;
        r.filtered_gpu_events = filter.dropped_gpu_events;
        /* The filter drops them and counts them; else they are in the view. */
        r.unlaunched_gpu_events =
            filter.applied ? filter.unlaunched_gpu_events : hta_rank_view_unlaunched(&view);
        /* On failure the tables may hold some of this file's rows, which
         * the root discards with the failed rank. */
        double deadline = opt->run.timeout_per_trace > 0 ? t0 + opt->run.timeout_per_trace : 0;
        ok = hta_run_analyses(&view, opt, threads, path, deadline, out, &err) == 0;
        if (ok)
            hta_analyses_note(out, view.rank_key, &notes);
        hta_stream_clips_note(&view.clips, &notes);
        if (ok && opt->output.write_traces)
            ok = hta_write_trace(path, &view, opt->output.write_traces, &err) == 0;
        hta_rank_view_free(&view);
    }
    r.analysis_seconds = hta_monotonic_seconds() - t1;
    if (ok) {
        r.status = r.gpu_events ? "ok" : "no_gpu_events";
    } else {
        r.error = err.text;
    }
    int rc = hta_put_ranks_row(out, file_index, process, opt->run.threads, path, &r);
    int large = trace.n_events >= HTA_TRIM_MIN_EVENTS;
    hta_trace_free(&trace);
    if (large)
        malloc_trim(0);
    return rc;
}

int hta_analysed_file_failed(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_ranks_table.name);
    return t && t->n_rows > 0 &&
           strcmp(hta_table_row(t, t->n_rows - 1)[HTA_RANKS_STATUS].s, "failed") == 0;
}
