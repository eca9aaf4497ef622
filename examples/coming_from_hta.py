#!/usr/bin/python3
"""Coming from HTA: the notebook code of HTA's tutorial, with one changed
import.  Run as `python3 examples/coming_from_hta.py [TRACE_DIR [CACHE_DIR]]`
(default: examples/traces, the 8 generated ranks); hta-mpi is found on PATH,
in ./build, or through $HTA_MPI.  tests/test_trace_analysis.py runs it."""
import os
import sys

import pandas as pd

from hta_mpi import TraceAnalysis          # was: from hta.trace_analysis import TraceAnalysis

here = os.path.dirname(os.path.abspath(__file__))
trace_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "traces")
cache_dir = sys.argv[2] if len(sys.argv) > 2 else None
pd.set_option("display.width", 200)

analyzer = TraceAnalysis(trace_dir=trace_dir, cache_dir=cache_dir)
print(analyzer.get_temporal_breakdown(visualize=False))
kernel_types, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False, num_kernels=5)
print(kernel_types)
print(kernels[["name", "sum (us)", "kernel_type", "rank"]].head(10))
idle, stats = analyzer.get_idle_time_breakdown(ranks=[0], visualize=False,
                                               show_idle_interval_stats=True)
print(idle)
print("potential stragglers:", analyzer.get_potential_stragglers())
# What HTA does not have: the ranks that made the others wait, and why.
print(analyzer.get_stragglers()[["rank", "score", "cause", "reasons"]])
