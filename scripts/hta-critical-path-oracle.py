#!/usr/bin/python3
"""HTA's critical path per ProfilerStep, as an oracle for hta-mpi's (not a
test: HTA is not a dependency).  Prints, per (rank, step), HTA's bound
shares, its graph's nodes and edges, and how many GPU events lie on the
path; tests/test_graphs.py pins the numbers this gave for HTA with PR #291
(graph replays, commit 17d09fc) on negative_queue and on
`hta-tracegen --graphs 1:16 --graph-sync`.

    git -C HTA_REPO archive 17d09fc hta | tar -x -C DIR
    HTA_SRC=DIR scripts/hta-critical-path-oracle.py TRACE_DIR

Needs Debian's python3-pandas and python3-networkx."""
import logging
import os
import sys
import warnings

sys.path.insert(0, os.environ["HTA_SRC"])
warnings.filterwarnings("ignore")
import pandas as pd  # noqa: E402
from hta.configs.config import logger  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

logger.setLevel(logging.ERROR)
analysis = TraceAnalysis(trace_dir=os.path.abspath(sys.argv[1]))
steps = analysis.get_profiler_steps()
rows = []
for rank in sorted(analysis.t.traces):
    trace = analysis.t.get_trace(rank)
    for i, step in enumerate(steps or [None]):
        res = analysis.critical_path_analysis(
            rank=rank, annotation="ProfilerStep" if step is not None else "",
            instance_id=i if step is not None else None)
        if res is None:
            continue
        graph, ok = res
        on_path = trace.loc[sorted(e for e in graph.critical_path_events_set if e in trace.index)]
        for bound, pct in graph.summary().items():
            rows.append({"rank": rank, "step": step, "bound_by": bound, "pct": pct,
                         "graph_ok": ok, "nodes": graph.number_of_nodes(),
                         "edges": graph.number_of_edges(),
                         "gpu_events_on_path": int((on_path.stream != -1).sum())})
print(pd.DataFrame(rows).to_string(index=False))
