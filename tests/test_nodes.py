"""A slow node named as a node (crossrank/compare/nodes.c, docs/crossrank.md).

Answers known by construction: hta-tracegen's DDP jobs of 32 ranks placed
8 to a node (--ranks-per-node 8 names the files as PyTorch's
tensorboard_trace_handler does, HOST_PID.TIME.pt.trace.json), with every
rank of one node computing 1.2x as long, or four slow ranks on four
different nodes.
"""
from common import *

RANKS, PER_NODE = 32, 8


def node_job(*extra):
    d = tmpdir()
    subprocess.run([TRACEGEN, "-o", d, "--ranks", str(RANKS), "--ranks-per-node", str(PER_NODE),
                    "--size-mb", "0.3"] + list(extra), check=True)
    return d


def test_a_slow_node_is_named_and_no_other():
    """Node 2's eight ranks at 1.2x: P < 1e-6 after Bonferroni over the
    four nodes, named in /nodes and on stdout; no other node is named."""
    out, p = analyse(node_job("--slow-node", "2:1.2"), processes=2)
    nodes = table(out, "/nodes")
    assert list(nodes.host) == [f"node{k}" for k in range(4)], nodes
    assert list(nodes.ranks) == [PER_NODE] * 4, nodes
    assert list(nodes[nodes.named == 1].host) == ["node2"], nodes
    two = nodes[nodes.host == "node2"].iloc[0]
    assert two.flagged_ranks == PER_NODE and two.p_bonferroni < 1e-6, two
    assert "Node node2: 8 of its 8 ranks flagged" in p.stdout, p.stdout
    assert p.stdout.count("\nNode ") == 1, p.stdout
    metrics = table(out, "/node_metrics")
    compute = metrics[metrics.metric == "compute_time_us"].set_index("host")
    others = compute.drop("node2")
    assert compute.loc["node2", "value"] > 1.15 * others.value.max(), compute
    assert compute.loc["node2", "robust_z"] >= 3.5 > others.robust_z.abs().max(), compute


def test_slow_ranks_spread_over_nodes_name_no_node():
    """Four slow ranks, one on each node: each node holds one flagged rank,
    as chance would put them, so none is named."""
    out, p = analyse(node_job(*sum((["--straggler", f"{r}:1.2"] for r in (1, 9, 17, 25)), [])))
    nodes = table(out, "/nodes")
    assert list(nodes.flagged_ranks) == [1, 1, 1, 1], nodes
    assert (nodes.named == 0).all() and (nodes.p_bonferroni == 1).all(), nodes
    assert "\nNode " not in p.stdout, p.stdout


def test_gpus_per_node_places_ranks_whatever_the_file_names():
    """The same traces under other names: no node is known, unless
    --gpus-per-node 8 says where the ranks ran, which gives the same
    tables as the host names did."""
    d = node_job("--slow-node", "1:1.2")
    renamed = tmpdir()
    for i, name in enumerate(sorted(os.listdir(d))):
        os.symlink(os.path.join(d, name), os.path.join(renamed, f"trace-{i}.json"))
    by_host, _ = analyse(d)
    unknown, _ = analyse(renamed)
    with h5py.File(unknown) as f:
        assert "nodes" not in f and "node_metrics" not in f
    placed, _ = analyse(renamed, extra=["--gpus-per-node", str(PER_NODE)])
    for name in ("/nodes", "/node_metrics"):
        a, b = table(by_host, name), table(placed, name)
        assert a.equals(b), (name, a, b)
    assert list(table(placed, "/nodes").named) == [0, 1, 0, 0]
    hostfile = os.path.join(tmpdir(), "hosts")
    with open(hostfile, "w") as f:
        f.write("# the job's nodes\n" + "".join(f"gpu-{k}.example slots=8\n" for k in range(4)))
    listed, _ = analyse(renamed, extra=["--hostfile", hostfile])
    nodes = table(listed, "/nodes")
    assert list(nodes.host) == [f"gpu-{k}.example" for k in range(4)], nodes
    a, b = table(placed, "/nodes").drop(columns="host"), nodes.drop(columns="host")
    assert a.equals(b), (a, b)


def test_hosts_recorded_in_the_traces():
    """/ranks.host: the HOSTNAME an Nsight export records, the host of a
    tensorboard_trace_handler file name, else empty."""
    require_traces()
    out, _ = analyse(os.path.join(TRACES, "nsys", "nvfuser_report1", "report1.sqlite"))
    assert list(table(out, "/ranks").host) == ["e9ce1d13d1dc"], table(out, "/ranks")
    out, _ = analyse(node_job())
    assert list(table(out, "/ranks").host) == [f"node{r // PER_NODE}" for r in range(RANKS)]
    out, _ = analyse(trace_dir("negative_queue"))  # rank 0 of 16: the others missing
    ranks = table(out, "/ranks")
    assert list(ranks.host) == [""] * 16 and list(ranks.status[1:]) == ["missing"] * 15, ranks


def test_a_hostfile_that_cannot_be_read_is_a_usage_error():
    """One line naming the file and the line, before any trace is read."""
    bad = os.path.join(tmpdir(), "hosts")
    with open(bad, "w") as f:
        f.write("node0 slots=8\nnode1 slots=eight\n")
    _, p = analyse(node_job(), extra=["--hostfile", bad], expect=2)
    assert f"--hostfile {bad}: line 2 is not HOST [slots=N]" in p.stderr, p.stderr


def test_collective_summary_splits_within_and_across_nodes():
    """A 4 x 2 tensor x data parallel job, 4 GPUs per node: each tensor-
    parallel group is one node, each data-parallel group spans two, so
    every instance of the one is within a node and of the other across
    nodes, with the row's busbw; on 1 and 3 processes alike.  On one node
    of 8 everything is within it, and without nodes nothing is split."""
    d = tmpdir()
    subprocess.run([TRACEGEN, "--tp", "4", "--dp", "2", "--steps", "3", "-o", d], check=True,
                   stdout=subprocess.DEVNULL)
    rows = []
    for processes in (1, 3):
        out, _ = analyse(d, processes=processes, extra=["--gpus-per-node", "4"])
        rows.append(table(out, "/collective_summary"))
    assert rows[0].equals(rows[1]), rows
    s = rows[0]
    tp, dp = s[s.group_desc == "tensor_parallel"], s[s.group_desc == "data_parallel"]
    assert len(tp) and len(dp), s
    assert (tp.within_node_count == tp["count"]).all() and (tp.across_nodes_count == 0).all(), s
    assert (dp.across_nodes_count == dp["count"]).all() and (dp.within_node_count == 0).all(), s
    assert (tp.within_node_busbw_p50_gbps == tp.busbw_p50_gbps).all(), s
    assert (dp.across_nodes_busbw_p50_gbps == dp.busbw_p50_gbps).all(), s
    assert tp.across_nodes_busbw_p50_gbps.isna().all(), s
    out, _ = analyse(d, extra=["--gpus-per-node", "8"])
    one = table(out, "/collective_summary")
    assert (one.within_node_count == one["count"]).all(), one
    out, _ = analyse(d)
    none = table(out, "/collective_summary")
    assert (none.within_node_count == 0).all() and (none.across_nodes_count == 0).all(), none


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])
