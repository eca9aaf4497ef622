"""hta_mpi.trace_analysis: HTA 0.6.1's notebook interface on top of hta-mpi.

    from hta_mpi import TraceAnalysis        # instead of hta.trace_analysis
    analyzer = TraceAnalysis(trace_dir="/traces/run42")
    tb = analyzer.get_temporal_breakdown(visualize=False)

The methods keep HTA's names, arguments and return types and give HTA's
columns, units (microseconds), index and row order (hta_frames.py does the
reshaping).  Nothing is parsed here: the first call runs hta-mpi once on
the directory with the options it needs (a single trace: libhta in this
process; runs.py keeps the results file, keyed on the traces and options),
later calls read that file.  Where
hta-mpi deliberately differs from HTA the methods say so in their
docstrings (docs/coming-from-hta.md lists every method):

- times are nanosecond-exact by default; HTA rounds each fractional
  timestamp to whole microseconds (start up, end down).  round_like_hta=True
  (on the constructor or any method) reproduces that (--round-like-hta);
- where HTA raises on a real trace (docs/definitions.md), these return an
  answer;
- visualize=True draws with matplotlib, not plotly.

Beyond HTA, the same object gives hta-mpi's own tables under plain names
(get_outliers, get_stragglers, get_collectives, ...), and TraceDiff
compares two runs (HTA's compare_traces and ops_diff, and `hta-mpi
diff`)."""
import os
import re
import shutil
import subprocess
import tempfile

import pandas as pd

from hta_mpi import hta_frames, results, runs

CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024
_KERNEL_TYPES = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
# The per-event tables: HTA's queue and bandwidth time series, launches,
# GPU events with their annotation, op calls with their kernels.
_DETAIL = ["--detail"]


class TimeSeriesTypes:
    """HTA's flag for generate_trace_with_counters; hta-mpi always writes
    both series."""
    QUEUE_LENGTH = 1
    MEMCPY_BANDWIDTH = 2


class CriticalPath:
    """What a notebook uses of HTA's CPGraph: summary() (% of the path bound
    by each category) and get_critical_path_breakdown() (the path's longest
    segments: name, type, bound_by, start and duration in us)."""

    def __init__(self, steps, events):
        self.steps = steps
        self.events = events

    def summary(self):
        """HTA's CPGraph.summary(): bound_by -> % of the critical path's
        duration, with HTA's "" row (edges bound by nothing, 0.0), which
        HTA lists only when its path has such an edge (most do)."""
        cats = ["cpu_bound", "data_loading", "gpu_compute_bound", "gpu_communication_bound",
                "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead"]
        us = {c: float(self.steps[c + "_us"].sum()) for c in cats}
        total = sum(us.values())
        s = pd.Series({"": 0.0}, dtype=float)
        for c in cats:
            if us[c] > 0:
                s[c] = 100.0 * us[c] / total
        s.index.name = "bound_by"
        s.name = "duration"
        return s

    def get_critical_path_breakdown(self):
        """The path's 10 longest segments per step (hta-mpi keeps those, not
        every edge): name, type, bound_by, ts and duration in us."""
        e = self.events
        return pd.DataFrame({"step": e.step.values, "name": e.name.values, "type": e.type.values,
                             "bound_by": e.bound_by.values, "ts": e.ts_us.values,
                             "duration": e.time_us.values})


class TraceAnalysis:
    """HTA's TraceAnalysis on hta-mpi.  trace_files (rank -> path or a
    list of paths, as HTA takes; the ranks come from the traces, as
    hta-mpi finds them, not from the keys) or trace_dir;
    include_last_profiler_step as HTA's; round_like_hta=True rounds like
    HTA (see the module); cache_dir: where results files are kept
    (default: .hta-mpi beside the traces, or the user's cache when that is
    read-only); options: more hta-mpi arguments for every run (e.g.
    ["--step-regex", "^iteration"]); in_process: None analyses a single
    trace in this process through libhta when it loads,
    False always runs hta-mpi; processes: mpirun's process count (default:
    one below 64 MB of traces, else min(traces, CPUs); runs.py)."""

    def __init__(self, trace_files=None, trace_dir="", include_last_profiler_step=False,
                 round_like_hta=False, cache_dir=None, options=(), in_process=None,
                 processes=None):
        self.trace_dir = trace_dir
        self.trace_files = trace_files
        self.round_like_hta = round_like_hta
        self.cache_dir = cache_dir
        self.in_process = in_process
        self.processes = processes
        self.base_options = list(options)
        if include_last_profiler_step:
            self.base_options.append("--include-last-step")

    # -- the run behind the calls -------------------------------------------

    def results_file(self, extra=(), round_like_hta=None, complete=False):
        """Path of the results file holding what a call with these hta-mpi
        arguments needs (analysing the traces if none is kept); complete:
        one written by hta-mpi itself (with /timeline and the run's
        attributes), not libhta's tables."""
        rounding = self.round_like_hta if round_like_hta is None else round_like_hta
        options = self.base_options + list(extra) + (["--round-like-hta"] if rounding else [])
        return runs.results_for(self.trace_dir, options, self.trace_files, self.cache_dir,
                                in_process=False if complete else self.in_process,
                                processes=self.processes)

    def _table(self, name, extra=(), round_like_hta=None):
        """A table of the run as a DataFrame; None when the run has none
        (no rank had what it counts)."""
        path = self.results_file(extra, round_like_hta)
        try:
            return results.load(path, name)
        except KeyError:
            return None

    def _ranks(self, ranks):
        """HTA's default: rank 0 when ranks is None or empty."""
        return [0] if not ranks else list(ranks)

    def _all_ranks(self):
        r = self._table("ranks")
        return sorted(r.loc[r.status == "ok", "rank"].tolist())

    # -- HTA's methods -------------------------------------------------------

    def get_temporal_breakdown(self, visualize=True, round_like_hta=None):
        """Idle, compute and non-compute time per rank (us) and their
        percentages of the GPU span (HTA's columns).  Nanosecond-exact
        unless round_like_hta=True."""
        tb = self._table("temporal_breakdown", round_like_hta=round_like_hta)
        if tb is None:
            tb = pd.DataFrame(columns=["rank", "idle_time_us", "compute_time_us",
                                       "non_compute_time_us", "kernel_time_us", "idle_time_pctg",
                                       "compute_time_pctg", "non_compute_time_pctg"])
        df = hta_frames.temporal_breakdown(tb)
        if visualize:
            _bars(df.set_index("rank")[["idle_time_pctg", "compute_time_pctg",
                                        "non_compute_time_pctg"]],
                  "Temporal breakdown across ranks", "% of the GPU span", stacked=True)
        return df

    def get_comm_comp_overlap(self, visualize=True, round_like_hta=None):
        """Share of each rank's communication time overlapped by
        computation, in % (comp_comm_overlap_pctg)."""
        df = self._table("comm_comp_overlap", round_like_hta=round_like_hta)
        if df is None:
            df = pd.DataFrame(columns=["rank", "comp_comm_overlap_pctg"])
        df = df[["rank", "comp_comm_overlap_pctg"]].reset_index(drop=True)
        if visualize:
            _bars(df.set_index("rank"), "Computation-communication overlap", "%")
        return df

    def get_gpu_kernel_breakdown(self, visualize=True, duration_ratio=0.8, num_kernels=10,
                                 include_memory_kernels=True, image_renderer="",
                                 round_like_hta=None):
        """(kernel types, kernels) as HTA: the time of each combination of
        kernel types over all ranks, and per rank and type the kernels with
        the most time, the rest folded into "others" (HTA's rule).  Kernels
        of type OTHER (syncs) are left out as HTA does;
        include_memory_kernels=False leaves MEMORY out of both frames."""
        kernels = self._table("kernels", round_like_hta=round_like_hta)
        types = [t for t in _KERNEL_TYPES if include_memory_kernels or t != "MEMORY"]
        if kernels is None:
            kernels = pd.DataFrame(columns=["rank", "name", "kernel_type"] +
                                   list(hta_frames.HTA_STATS))
        breakdown = hta_frames.kernel_breakdown(kernels, types, num_kernels, duration_ratio)
        by_type = self._table("kernel_type_breakdown", round_like_hta=round_like_hta)
        if by_type is None:
            by_type = pd.DataFrame(columns=["kernel_type", "sum_us"])
        type_df = hta_frames.kernel_type_breakdown(by_type, include_memory_kernels)
        if visualize:
            _pie(type_df.set_index("kernel_type")["percentage"],
                 "Kernel type percentage across all ranks")
        return type_df, breakdown

    def get_idle_time_breakdown(self, ranks=None, streams=None, visualize=True,
                                visualize_pctg=True, show_idle_interval_stats=False,
                                consecutive_kernel_delay=30, round_like_hta=None):
        """(breakdown, interval statistics or None) as HTA: per rank and
        stream, host_wait / kernel_wait / other idle time (us) and its share
        of the stream's idle time; rows in stream order (HTA lists streams
        in the order of their first kernel).  consecutive_kernel_delay is in
        us (HTA's docstring says ns; its code compares us)."""
        extra = ([] if consecutive_kernel_delay == 30
                 else ["--consecutive-kernel-delay", str(consecutive_kernel_delay)])
        idle = self._table("idle_time", extra, round_like_hta)
        if idle is None:
            idle = pd.DataFrame(columns=["rank", "stream", "idle_category", "idle_time_us",
                                         "idle_time_ratio", "count"] +
                                [c + "_us" for c, _ in hta_frames.DESCRIBE[1:]])
        df, stats = hta_frames.idle_time(idle, self._ranks(ranks), streams)
        if visualize:
            col = "idle_time_ratio" if visualize_pctg else "idle_time"
            for rank, g in df.groupby("rank"):
                _bars(g.pivot(index="stream", columns="idle_category", values=col),
                      f"Idle time breakdown on rank {rank} per CUDA stream", col, stacked=True)
        return df, (stats if show_idle_interval_stats else None)

    def get_cuda_kernel_launch_stats(self, ranks=None, runtime_cutoff=50, launch_delay_cutoff=100,
                                     include_memory_events=True, visualize=True,
                                     launch_apis_like_hta=False, round_like_hta=None):
        """rank -> one row per launch (correlation, cpu_duration,
        gpu_duration, launch_delay in us), as HTA.  hta-mpi also counts
        cuLaunchKernel (Triton) and hipLaunchKernel (ROCm) launches, which
        HTA ignores; launch_apis_like_hta=True keeps HTA's four CUDA APIs
        only.  The cutoffs only shape the figure (visualize=True)."""
        detail = self._table("detail/launches", _DETAIL, round_like_hta)
        if detail is None:
            detail = pd.DataFrame(columns=["rank", "correlation", "launch_name", "cpu_start_us",
                                           "cpu_duration_us", "gpu_duration_us",
                                           "launch_delay_us"])
        out = hta_frames.launches(detail, self._ranks(ranks), include_memory_events,
                                  launch_apis_like_hta)
        if visualize:
            for rank, df in out.items():
                _scatter(df, rank, runtime_cutoff, launch_delay_cutoff)
        return out

    def get_queue_length_time_series(self, ranks=None, round_like_hta=None):
        """rank -> the queue length of each stream at every change (ts in
        us, stream, queue_length).  HTA's frames also carry pid and tid and
        the events' trace indices as index; these have a plain index."""
        q = self._table("detail/queue_length", _DETAIL, round_like_hta)
        out = {}
        for rank in self._ranks(ranks):
            g = q[q["rank"] == rank] if q is not None else pd.DataFrame()
            if len(g):
                out[int(rank)] = pd.DataFrame({"ts": g.ts_us.values, "stream": g.stream.values,
                                               "queue_length": g.queue_length.values})
        return out

    def get_queue_length_summary(self, ranks=None, round_like_hta=None):
        """HTA's describe() of the queue length per (rank, stream)."""
        q = self._table("queue_length", round_like_hta=round_like_hta)
        if q is None or q[q["rank"].isin(self._ranks(ranks))].empty:
            return None
        return hta_frames.described(q, "stream", "stream", "queue_length", "",
                                    self._ranks(ranks))

    def get_queue_length_summary_from_time_series(self, queue_length_dict):
        """HTA's summary of a get_queue_length_time_series() result."""
        parts = [df.assign(rank=rank)[["rank", "stream", "queue_length"]]
                 .groupby(["rank", "stream"]).describe()
                 for rank, df in queue_length_dict.items()]
        return pd.concat(parts) if parts else None

    def get_time_spent_blocked_on_full_queue(self, queue_length_dict=None,
                                             max_queue_length=CUDA_MAX_LAUNCH_QUEUE_PER_STREAM,
                                             round_like_hta=None):
        """Per rank, time a stream's queue was at max_queue_length (us) and
        its share of the trace.  HTA keeps one stream per rank (the last one
        found full); so does this.  queue_length_dict is accepted for HTA's
        signature; the durations come from the run (every rank analysed)."""
        rows = []
        if max_queue_length == CUDA_MAX_LAUNCH_QUEUE_PER_STREAM:
            q = self._table("queue_length", round_like_hta=round_like_hta)
            full = q[q.time_at_max_us > 0] if q is not None else pd.DataFrame()
            for rank, g in full.groupby("rank"):
                last = g.iloc[-1]
                rows.append((int(rank), int(last.stream), last.time_at_max_us,
                             last.time_at_max_ratio))
        else:
            series = queue_length_dict or self.get_queue_length_time_series(
                self._all_ranks(), round_like_hta)
            span = self._table("ranks").set_index("rank")
            for rank, ql in series.items():
                for stream in ql.stream.unique():
                    df = ql.loc[ql.stream == stream].copy()
                    df["dur"] = df.ts.shift(-1) - df.ts
                    df = df.loc[df.queue_length >= max_queue_length]
                    if df.empty:
                        continue
                    total = span.loc[rank, "last_ts_us"] - span.loc[rank, "first_ts_us"]
                    rows = [r for r in rows if r[0] != rank]
                    rows.append((rank, stream, df.dur.sum(), df.dur.sum() / total))
        return pd.DataFrame(rows, columns=["rank", "stream", "duration_at_max_queue_length",
                                           "relative_duration_at_max_queue_length"])

    def get_memory_bw_time_series(self, ranks=None, round_like_hta=None):
        """rank -> the bandwidth (GB/s) of each copy kind at every change
        (ts in us, name, memory_bw_gbps); HTA's also carry pid."""
        bw = self._table("detail/memory_bw", _DETAIL, round_like_hta)
        out = {}
        for rank in self._ranks(ranks):
            g = bw[bw["rank"] == rank] if bw is not None else pd.DataFrame()
            if len(g):
                out[int(rank)] = pd.DataFrame({"ts": g.ts_us.values, "name": g.kind.values,
                                               "memory_bw_gbps": g.bandwidth_gbps.values})
        return out

    def get_memory_bw_summary(self, ranks=None, round_like_hta=None):
        """HTA's describe() of the bandwidth per (rank, copy kind), over the
        time series' points with a positive bandwidth."""
        bw = self._table("memory_bw", round_like_hta=round_like_hta)
        if bw is None or bw[bw["rank"].isin(self._ranks(ranks))].empty:
            return None
        # A kind whose copies all moved nothing has no positive point: HTA
        # leaves it out (an empty frame when no kind is left).
        return hta_frames.described(bw[bw["count"] > 0], "kind", "name", "memory_bw_gbps",
                                    "_gbps", self._ranks(ranks))

    def get_profiler_steps(self):
        """The ProfilerStep numbers analysed (the last one dropped unless
        include_last_profiler_step)."""
        steps = self._table("steps")
        return sorted(int(s) for s in steps.step.unique()) if steps is not None else []

    def get_potential_stragglers(self, profiler_steps=None, num_candidates=2, visualize=False,
                                 straggler_identification_impl=None):
        """The num_candidates ranks that made the others wait longest at
        collectives (hta-mpi's /stragglers score: share of all the wait
        caused), largest first.  HTA ranks them by the start of the
        communication kernel whose duration varies most across ranks;
        profiler_steps and straggler_identification_impl are not used."""
        s = self._table("stragglers")
        if s is None:
            return []
        s = s.sort_values(["score", "rank"], ascending=[False, True], kind="stable")
        return [int(r) for r in s["rank"].head(max(1, num_candidates))]

    def get_gpu_user_annotation_breakdown(self, use_gpu_annotation=True, visualize=True,
                                          duration_ratio=0.8, num_kernels=1000,
                                          allowlist_patterns=None, image_renderer=None,
                                          round_like_hta=None):
        """Time per user annotation and rank (HTA's columns), folded like
        the kernel breakdown: GPU annotations (gpu_user_annotation) or,
        with use_gpu_annotation=False, the CPU ranges (user_annotation).
        None when the trace has none, as HTA.  The CPU ranges include the
        ProfilerStep#N steps, as HTA's; HTA's GPU annotations include them
        too where the GPU trace has them, these do not."""
        a = self._table("annotations", round_like_hta=round_like_hta)
        if a is None:
            return None
        if not use_gpu_annotation:
            a = hta_frames.with_steps(a, self._table("steps", round_like_hta=round_like_hta))
        df = hta_frames.annotation_breakdown(a, use_gpu_annotation, num_kernels, duration_ratio,
                                             allowlist_patterns)
        if visualize and df is not None:
            for rank, g in df.groupby("rank"):
                _pie(g.set_index("name")["sum (us)"], f"User annotations on rank {rank}")
        return df

    def get_gpu_kernels_with_user_annotations(self, rank, expand_names=True, shorten_names=True,
                                              round_like_hta=None):
        """Every GPU event of the rank (kernels, copies, sets) with the
        GPU user annotation it belongs to (the shortest overlapping it on
        its stream, as HTA; NaN for none): ts and dur in us, stream,
        correlation, s_name (shortened like HTA's unless shorten_names is
        False), s_user_annotation.  HTA's frames also carry every trace
        column, and its ts count from the trace's first kept event; these
        are the trace's own times.  HTA's ProfilerStep#N GPU ranges are
        not annotations here.  None when the rank has no GPU annotation."""
        a = self._table("annotations", round_like_hta=round_like_hta)
        if a is None or a[(a["rank"] == rank) & (a["count"] > 0)].empty:
            return None
        events = self._table("detail/gpu_events", _DETAIL, round_like_hta)
        return hta_frames.annotated_gpu_events(events, rank, shorten_names)

    def get_aten_op_kernels_and_delay(self, ranks=None, sort_by=None, round_like_hta=None):
        """rank -> per (aten op, sequence of the kernels its call launched):
        the calls (occurrence_count) and the mean delay from the op's start
        to its first launch and from that launch to its kernel's start (us,
        3 decimals), as HTA.  A launch belongs to the innermost op around it
        on its own thread (HTA: the latest-starting aten op around it on any
        thread), and counts only there (HTA skips non-aten ops).  HTA raises
        KeyError 'thread_id' on traces without thread ids (AMD, Triton) and
        fails on CUPTI-profiler traces; this answers."""
        calls = self._table("detail/op_kernels", _DETAIL, round_like_hta)
        if calls is None:
            calls = pd.DataFrame(columns=["rank", "name", "ts_us", "kernels", "op_to_launch_us",
                                          "launch_to_kernel_us"])
        sort_by = sort_by or ["occurrence_count"]
        return {int(rank): hta_frames.aten_ops(calls, rank, sort_by)
                for rank in self._ranks(ranks)}

    def get_frequent_cuda_kernel_sequences(self, operator_name, output_dir=None, min_pattern_len=3,
                                           rank=0, top_k=5, visualize=False,
                                           compress_other_kernels=True, round_like_hta=None):
        """Every sequence of GPU events launched under the shallowest ops
        whose name contains operator_name, with its count and GPU / CPU
        time (us), most frequent first, as HTA.  HTA also writes the trace
        with the top_k patterns overlaid into output_dir; hta-mpi does not
        (output_dir and top_k are accepted and unused).  HTA raises
        "Unexpected case" on traces with fractional timestamps; this
        answers."""
        extra = ["--sequence-op", re.escape(operator_name),
                 "--min-pattern-len", str(min_pattern_len), "--sequence-top", "1000000000"]
        seq = self._table("kernel_sequences", extra, round_like_hta)
        if seq is None:
            seq = pd.DataFrame(columns=["rank", "name", "count", "gpu_time_us", "cpu_time_us"])
        return hta_frames.kernel_sequences(seq, rank)

    def get_cupti_counter_data_with_operators(self, ranks=None, round_like_hta=None):
        """One DataFrame per rank: each CUPTI profiler range (kernel) with
        its op stack, top and bottom op and a column per counter.  HTA's
        frames carry every trace column besides; these carry name, ts, dur,
        op_stack, top_level_op, bottom_level_op and the counters."""
        ranges = self._table("cupti_counters", round_like_hta=round_like_hta)
        values = self._table("cupti_counter_values", round_like_hta=round_like_hta)
        out = []
        for rank in self._ranks(ranks):
            if ranges is None:
                out.append(pd.DataFrame())
            else:
                out.append(hta_frames.cupti_counters(ranges, values, rank))
        return out

    def critical_path_analysis(self, rank, annotation="ProfilerStep", instance_id=0,
                               data_load_events=None, round_like_hta=None):
        """(CriticalPath, success) for the instance_id-th profiler step
        (0-based, as HTA; a (first, last) tuple for a range of steps; the
        whole trace when the rank has no step).  Only ProfilerStep
        annotations delimit steps (hta-mpi's --step-regex names others);
        data_load_events is not used.  HTA finds no path (returns None or
        raises) on several real traces; hta-mpi answers."""
        cp = self._table("critical_path", ["--critical-path"], round_like_hta)
        events = self._table("critical_path_events", ["--critical-path"], round_like_hta)
        if cp is None:
            return None
        mine = cp[cp["rank"] == rank].sort_values("step")
        if mine.empty:
            return None
        steps = list(mine.step)
        if steps == [-1]:
            chosen = [-1]
        else:
            first, last = instance_id if isinstance(instance_id, tuple) else (instance_id or 0,) * 2
            chosen = steps[first:last + 1]
        rows = mine[mine.step.isin(chosen)]
        ev = events[(events["rank"] == rank) & events.step.isin(chosen)] if events is not None \
            else pd.DataFrame(columns=["step", "name", "type", "bound_by", "ts_us", "time_us"])
        return CriticalPath(rows, ev), bool(rows.graph_ok.all())

    def generate_trace_with_counters(self, time_series=None, ranks=None,
                                     output_suffix="_with_counters"):
        """Writes each requested rank's trace beside the original, named
        with output_suffix before .json as HTA does, with counter tracks:
        queue length per stream and bandwidth per copy kind (both always),
        and hta-mpi's additions (critical path marks, timeline shares,
        collective waits; docs/definitions.md).  Returns the paths."""
        suffix = output_suffix or "_with_counters"
        return list(self._write_traces(
            ranks, lambda trace: trace.replace(".json", f"{suffix}.json")).values())

    def overlay_critical_path_analysis(self, rank, critical_path_graph=None, output_dir=".",
                                       only_show_critical_events=True, show_all_edges=False):
        """Writes the rank's trace into output_dir as
        overlaid_critical_path_<name>, HTA's name, with every event on a
        step's critical path marked ("critical": 1 in its args) and flow
        arrows along the path; returns its path.  Every event is kept
        (HTA's only_show_critical_events drops the others) and
        critical_path_graph is not needed (hta-mpi marks every step's
        path)."""
        os.makedirs(output_dir, exist_ok=True)
        written = self._write_traces([rank], lambda trace: os.path.join(
            output_dir, "overlaid_critical_path_" + os.path.basename(trace)))
        return written.get(rank)

    def _write_traces(self, ranks, target_of):
        """hta-mpi --write-traces for every trace; each requested rank's
        written trace moved to target_of(its original path).  {rank: path}."""
        ranks = self._ranks(ranks)
        out_dir = tempfile.mkdtemp(prefix="hta-mpi-traces-")
        try:
            rounding = ["--round-like-hta"] if self.round_like_hta else []
            path = runs.write_traces(self.trace_dir, self.trace_files, out_dir,
                                     self.base_options + rounding, self.processes)
            written = {}
            for _, r in results.load(path, "ranks").iterrows():
                if r["rank"] in ranks and r.status not in ("failed", "missing"):
                    written[int(r["rank"])] = shutil.move(
                        os.path.join(out_dir, os.path.basename(r.file)), target_of(r.file))
            return written
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)

    # -- what HTA does not have --------------------------------------------

    def _plain(self, name, extra=()):
        df = self._table(name, extra)
        return df if df is not None else pd.DataFrame()

    def get_outliers(self):
        """Flagged (metric, rank) pairs: value, mean, z, robust z, class."""
        return self._plain("outliers")

    def get_stragglers(self):
        """Ranks by the wait they caused the others at collectives, with
        the cause and the reasons in words."""
        return self._plain("stragglers")

    def get_collectives(self):
        """Every collective instance matched across ranks: bytes, arrival
        skew, transfer time, algbw and busbw."""
        return self._plain("collectives")

    def get_collective_summary(self):
        """Collectives by (group, collective, dtype, size bucket)."""
        return self._plain("collective_summary")

    def get_steps(self):
        """Per (rank, ProfilerStep): step time, GPU busy, compute,
        communication, exposed communication, idle, wait for peers (us)."""
        return self._plain("steps")

    def get_gpu_gaps(self):
        """GPU idle gaps of at least 1 ms with their cause."""
        return self._plain("gpu_gaps")

    def get_rank_metrics(self):
        """Every per-rank scalar the outlier search compares."""
        return self._plain("rank_metrics")

    def get_timeline(self):
        """The rank x time-bin compute / communicate / overlap / empty
        timeline, long form: rank, bin_start_us, bin_end_us, category, us."""
        t = results.timeline(self.results_file(complete=True))
        if t is None:
            return pd.DataFrame(columns=["rank", "bin_start_us", "bin_end_us", "category", "us"])
        rows = [(int(rank), t.edges_us[b], t.edges_us[b + 1], cat, t.us[i, b, c])
                for i, rank in enumerate(t.ranks) for b in range(t.us.shape[1])
                for c, cat in enumerate(t.categories)]
        return pd.DataFrame(rows, columns=["rank", "bin_start_us", "bin_end_us", "category", "us"])

    def report(self, path="hta-report.html"):
        """Writes hta-mpi-report's self-contained HTML page; returns path."""
        from hta_mpi import report
        report.main([self.results_file(complete=True), "-o", path])
        return path


class TraceDiff:
    """Two runs compared: HTA's compare_traces and ops_diff (class methods,
    as HTA's), and `hta-mpi diff`'s tables for TraceDiff(base, new), where
    base and new are TraceAnalysis objects or trace directories."""

    @classmethod
    def compare_traces(cls, control, test, control_rank=None, test_rank=None,
                       control_iteration=None, test_iteration=None, device_type="ALL",
                       use_short_name=False):
        """HTA's comparison of op and kernel counts and total durations (us)
        of one rank of each run (the first by default): index name (or
        short_name), Control_/Test_counts and _total_duration, diff_counts,
        diff_duration, counts_change_categories (+, -, =).  HTA compares
        one iteration (the first by default); hta-mpi's tables hold every
        analysed step, so these compare all of them (control_iteration and
        test_iteration are not used).  CPU side: CPU ops, user annotations
        and ProfilerStep#N ranges (HTA also counts runtime calls);
        device_type "CPU", "GPU" or "ALL" (or HTA's DeviceType)."""
        device = getattr(device_type, "name", device_type)
        column = "short_name" if use_short_name else "name"
        parts = [_op_summary(_analyzer(t), rank, device, use_short_name).rename(
                     columns=lambda c: f"{label}_{c}")
                 for t, rank, label in ((control, control_rank, "Control"),
                                        (test, test_rank, "Test"))]
        comp = pd.concat(parts, axis=1, join="outer").fillna(0)
        comp.index.name = column
        comp["diff_counts"] = comp["Test_counts"] - comp["Control_counts"]
        comp["diff_duration"] = comp["Test_total_duration"] - comp["Control_total_duration"]
        comp["counts_change_categories"] = comp["diff_counts"].apply(
            lambda c: "+" if c > 0 else "-" if c < 0 else "=")
        return comp

    @classmethod
    def ops_diff(cls, control, test, control_rank=None, test_rank=None, control_iteration=None,
                 test_iteration=None, device_type="ALL"):
        """HTA's ops_diff: names added, deleted, increased, decreased and
        unchanged in count, from compare_traces."""
        df = cls.compare_traces(control, test, control_rank, test_rank, control_iteration,
                                test_iteration, device_type)
        c, t, d = df["Control_counts"], df["Test_counts"], df["diff_counts"]
        return {"added": df.index[c.eq(0) & t.gt(0)].tolist(),
                "deleted": df.index[c.gt(0) & t.eq(0)].tolist(),
                "increased": df.index[c.gt(0) & d.gt(0)].tolist(),
                "decreased": df.index[t.gt(0) & d.lt(0)].tolist(),
                "unchanged": df.index[t.gt(0) & d.eq(0)].tolist()}

    def __init__(self, base, new, cache_dir=None):
        self.base = base if isinstance(base, TraceAnalysis) else TraceAnalysis(trace_dir=base)
        self.new = new if isinstance(new, TraceAnalysis) else TraceAnalysis(trace_dir=new)
        self.cache_dir = cache_dir
        self._path = None

    def diff_file(self):
        """Path of the diff file (kept beside the new run's results)."""
        if self._path is None:
            a, b = self.base.results_file(complete=True), self.new.results_file(complete=True)
            directory = self.cache_dir or os.path.dirname(b)
            name = os.path.basename(a)[:-3] + "-vs-" + os.path.basename(b)
            path = os.path.join(directory, "diff-" + name)
            if not os.path.exists(path):
                cmd = [runs.find_binary(), "diff", a, b, "-o", path + ".partial", "--force"]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    raise runs.RunError(
                        f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr.strip()}")
                os.replace(path + ".partial", path)
            self._path = path
        return self._path

    def _diff(self, name):
        return results.load_diff(self.diff_file()).get(name, pd.DataFrame())

    def get_kernels_diff(self):
        """Kernels over all ranks (rank -1) and per rank: time before and
        after, change, verdict (slower, faster, unchanged)."""
        return self._diff("kernels")

    def get_kernel_set_diff(self):
        """Kernels only one run has."""
        return self._diff("kernel_set")

    def get_rank_metrics_diff(self):
        return self._diff("rank_metrics")

    def get_tails_diff(self):
        return self._diff("tails")

    def get_collectives_diff(self):
        return self._diff("collectives")


def _analyzer(t):
    return t if isinstance(t, TraceAnalysis) else TraceAnalysis(trace_dir=t)


def _op_summary(analyzer, rank, device, use_short_name):
    """counts and total_duration (us) per op or kernel name of one rank
    (the first when rank is None)."""
    rank = analyzer._all_ranks()[0] if rank is None else rank
    rows = []
    if device in ("ALL", "CPU"):
        ops = analyzer._table("ops")
        if ops is not None:
            o = ops[ops["rank"] == rank]
            rows.append(pd.DataFrame({"name": o.name, "counts": o.calls,
                                      "total_duration": o.cpu_time_us}))
        a = analyzer._table("annotations")
        if a is not None:
            a = hta_frames.with_steps(a, analyzer._table("steps"))
            a = a[(a["rank"] == rank) & (a.cpu_count > 0)]
            rows.append(pd.DataFrame({"name": a.name, "counts": a.cpu_count,
                                      "total_duration": a.cpu_sum_us}))
    if device in ("ALL", "GPU"):
        k = analyzer._table("kernels")
        if k is not None:
            k = k[k["rank"] == rank]
            rows.append(pd.DataFrame({"name": k.name, "counts": k["count"],
                                      "total_duration": k.sum_us}))
    df = pd.concat(rows) if rows else pd.DataFrame(columns=["name", "counts", "total_duration"])
    if use_short_name:
        df = df.assign(name=df.name.map(hta_frames.shorten_name))
    return df.groupby("name")[["counts", "total_duration"]].sum()


# -- matplotlib figures for visualize=True ------------------------------------

def _pyplot():
    import matplotlib.pyplot as plt
    return plt


def _bars(df, title, ylabel, stacked=False):
    plt = _pyplot()
    _, ax = plt.subplots(figsize=(8, 4))
    df.plot.bar(stacked=stacked, title=title, ax=ax)
    ax.set_ylabel(ylabel)
    plt.tight_layout()
    plt.show()


def _pie(series, title):
    plt = _pyplot()
    series = series[series > 0]
    if series.empty:
        return
    _, ax = plt.subplots(figsize=(6, 6))
    series.plot.pie(title=title, ax=ax, autopct="%.1f%%")
    ax.set_ylabel("")
    plt.tight_layout()
    plt.show()


def _scatter(df, rank, runtime_cutoff, launch_delay_cutoff):
    plt = _pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.scatter(df.cpu_duration, df.gpu_duration, s=4)
    a.axvline(runtime_cutoff, color="red")
    a.set(xlabel="CPU duration (us)", ylabel="GPU duration (us)", title=f"Rank {rank} launches")
    b.hist(df.launch_delay, bins=50)
    b.axvline(launch_delay_cutoff, color="red")
    b.set(xlabel="launch delay (us)", title=f"Rank {rank} launch delay")
    fig.tight_layout()
    plt.show()
