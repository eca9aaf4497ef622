"""hta_mpi.results: hta-mpi's HDF5 results file as pandas objects.

Every table hta-mpi writes is a 1-D compound dataset (docs/results-format.md); h5py
returns its strings as UTF-8 bytes, which load() decodes so that string
columns compare with ordinary str.  The timeline is a 3-D array rather than
a table, with its bin edges and category names in attributes: timeline()
returns it with its rank labels."""
from collections import namedtuple

import h5py
import numpy as np
import pandas as pd

Timeline = namedtuple("Timeline", "ranks edges_us categories us")
Timeline.__doc__ = """ranks[i] is the rank of us[i]; us[i, b, c] is the time in
microseconds rank i spent in category c during bin b, whose bounds are
edges_us[b] and edges_us[b + 1]."""


def _decode(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def tables(path):
    """Names of every table (compound dataset) in the file, sorted, as
    load() accepts them, e.g. "temporal_breakdown", "cross_rank/kernels"."""
    names = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.names:
            names.append(name)

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return sorted(names)


def load(path, table):
    """One table as a DataFrame, one row per record, strings decoded."""
    with h5py.File(path, "r") as f:
        if table not in f:
            raise KeyError(f"{path}: no table '{table}' (tables: {', '.join(tables(path))})")
        df = pd.DataFrame(f[table][()])
    for column in df.columns:
        if df[column].dtype == object:
            df[column] = df[column].map(_decode)
    return df


def attributes(path):
    """The file's root attributes (run options, versions, counts), decoded."""
    with h5py.File(path, "r") as f:
        return {k: _decode(v.item() if isinstance(v, np.generic) else v)
                for k, v in f.attrs.items()}


def timeline(path):
    """The rank x time-bin timeline; None when no rank had GPU events."""
    with h5py.File(path, "r") as f:
        if "timeline" not in f:
            return None
        data = f["timeline"]
        return Timeline(ranks=f["timeline_ranks"][()], edges_us=data.attrs["bin_edges_us"][()],
                        categories=[_decode(c) for c in data.attrs["categories"]],
                        us=data[()])
