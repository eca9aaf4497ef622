"""hta_mpi: read and draw hta-mpi's HDF5 results.

    from hta_mpi.results import load, tables
    tb = load("hta-results.h5", "/temporal_breakdown")   # a DataFrame, str columns

results: loading tables and the timeline; views: the data behind each
figure; plots: PNG figures (matplotlib, `hta-mpi-plot`); report: one
self-contained HTML page (`hta-mpi-report`); trace_analysis: HTA's
TraceAnalysis interface over hta-mpi runs (runs.py keeps them); libhta:
one trace analysed in this process through the C library, into the
results file's tables.

    from hta_mpi import TraceAnalysis      # in place of hta.trace_analysis"""


def __getattr__(name):
    # Imported on first use: reading a results file needs none of it.
    if name in ("TraceAnalysis", "TraceDiff"):
        from hta_mpi import trace_analysis
        return getattr(trace_analysis, name)
    raise AttributeError(f"module 'hta_mpi' has no attribute {name!r}")
