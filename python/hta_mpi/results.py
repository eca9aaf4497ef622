"""hta_mpi.results: hta-mpi's HDF5 results file as pandas objects.

Every table hta-mpi writes is a 1-D compound dataset (docs/results-format.md); h5py
returns its strings as UTF-8 bytes, which load() decodes so that string
columns compare with ordinary str.  The timeline is a 3-D array rather than
a table, with its bin edges and category names in attributes: timeline()
returns it with its rank labels.  /critical_path_events names its events by
an id into /critical_path_names: load() puts the names back.  A diff file
(`hta-mpi diff`) holds /diff/... tables: load_diff() returns them all."""
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


# Tables whose events are named by (rank, name_id) rows of another table.
_NAMES_OF = {"critical_path_events": "critical_path_names"}


def _decoded(dataset):
    df = pd.DataFrame(dataset[()])
    for column in df.columns:
        if df[column].dtype == object:
            df[column] = df[column].map(_decode)
    return df


def _with_names(df, names):
    """df with a "name" column after "name_id" ("" where the id is -1)."""
    by_id = dict(zip(zip(names["rank"], names["name_id"]), names["name"]))
    named = [by_id.get((r, i), "") for r, i in zip(df["rank"], df["name_id"])]
    df.insert(df.columns.get_loc("name_id") + 1, "name", named)
    return df


def load(path, table):
    """One table as a DataFrame, one row per record, strings decoded (and a
    name column where the file names events by id)."""
    with h5py.File(path, "r") as f:
        if table not in f:
            raise KeyError(f"{path}: no table '{table}' (tables: {', '.join(tables(path))})")
        df = _decoded(f[table])
        names = _NAMES_OF.get(table.strip("/"))
        if names is not None and names in f:
            df = _with_names(df, _decoded(f[names]))
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


# The tables `hta-mpi diff` writes, by the name load_diff() gives them;
# /diff/collectives only when both compared runs had /collective_summary.
DIFF_TABLES = ("kernels", "kernel_set", "rank_metrics", "tails", "collectives")


def is_diff(path):
    """Whether path is a diff file written by `hta-mpi diff`."""
    with h5py.File(path, "r") as f:
        return _decode(f.attrs.get("file_kind", b"")) == "diff"


def load_diff(path):
    """Every /diff table of a diff file as a DataFrame, by short name
    ("kernels", "kernel_set", "rank_metrics", "tails", and "collectives"
    when the file has it).  ValueError when path is not a diff file."""
    if not is_diff(path):
        raise ValueError(f"{path}: not a diff file (write one with hta-mpi diff BASE.h5 NEW.h5)")
    present = set(tables(path))
    return {name: load(path, f"diff/{name}") for name in DIFF_TABLES
            if f"diff/{name}" in present}
