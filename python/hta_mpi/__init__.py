"""hta_mpi: read and draw hta-mpi's HDF5 results.

    from hta_mpi.results import load, tables
    tb = load("hta-results.h5", "/temporal_breakdown")   # a DataFrame, str columns

results: loading tables and the timeline; views: the data behind each
figure; plots: PNG figures (matplotlib, `hta-mpi-plot`); report: one
self-contained HTML page (`hta-mpi-report`); libhta: one trace analysed
in this process through the C library, into the results file's tables."""
