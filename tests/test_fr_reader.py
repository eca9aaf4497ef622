"""The Flight Recorder dump reader against Python's own pickle.load.

hta-tracegen --flight-recorder writes a hung job's dumps in torch's byte
form, Python's pickle at protocols 2 to 5 and JSON; the same dumps are
also re-pickled here by Python's pickler at every protocol.  Every field
the reader returns (tests/fr_dump_print.c prints them) must equal what
pickle.load (or json.load) gives for the same bytes.  Bad dumps (truncated,
an unknown opcode, a wrong version, not a dump at all) must each fail with
one line naming the file, and for a parse error the byte and the opcode."""
import json
import math
import os
import pickle
import subprocess

from common import BUILD, TRACEGEN, libhta_env, main, tmpdir

PRINT = os.path.join(BUILD, "tests", "fr_dump_print")
ENCODINGS = ["torch", "pickle2", "pickle3", "pickle4", "pickle5", "json"]


def read_with_reader(path):
    p = subprocess.run([PRINT, path], capture_output=True, text=True,
                       env=libhta_env(dict(os.environ)))
    assert p.returncode == 0, f"{path}: {p.stderr}"
    return json.loads(p.stdout)


def read_failure(path):
    p = subprocess.run([PRINT, path], capture_output=True, text=True,
                       env=libhta_env(dict(os.environ)))
    assert p.returncode == 1, f"{path}: exit {p.returncode}, stdout {p.stdout[:200]}"
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, f"{path}: not one line: {p.stderr!r}"
    assert lines[0].startswith(path + ":"), lines[0]
    return lines[0]


def generate(encoding, extra=()):
    d = os.path.join(tmpdir(), "fr")
    subprocess.run([TRACEGEN, "--flight-recorder", "-o", d, "--encoding", encoding] +
                   list(extra), check=True)
    return d


def dump_files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d))


def load_python(path, is_json):
    with open(path, "rb") as f:
        return json.load(f) if is_json else pickle.load(f)


def time_or_none(v):
    """A discovery time as the reader gives it: none is -1 (None in a
    pickle, 0 in JSON)."""
    return -1 if v in (None, 0) else v


def expected_entry(e):
    name, desc = e["process_group"]
    duration = e.get("duration_ms")
    return {
        "record_id": e["record_id"], "pg_id": e["pg_id"],
        "collective_seq_id": e["collective_seq_id"], "p2p_seq_id": e["p2p_seq_id"],
        "op_id": e["op_id"], "pg_name": name, "pg_desc": desc,
        "profiling_name": e["profiling_name"], "time_created_ns": e["time_created_ns"],
        "time_started_ns": time_or_none(e["time_discovered_started_ns"]),
        "time_completed_ns": time_or_none(e["time_discovered_completed_ns"]),
        "timeout_ms": e["timeout_ms"], "duration_ms": duration,
        "input_sizes": e["input_sizes"], "output_sizes": e["output_sizes"],
        "input_dtypes": ",".join(e["input_dtypes"]),
        "output_dtypes": ",".join(e["output_dtypes"]),
        "state": e["state"], "is_p2p": e["is_p2p"], "retired": e["retired"],
        "thread_name": e.get("thread_name", ""), "thread_id": e.get("thread_id", ""),
        "frames": [{"name": f["name"], "filename": f["filename"], "line": f["line"]}
                   for f in e.get("frames", [])],
    }


def expected_dump(d):
    return {
        "version": d["version"], "comm_lib_version": d.get("comm_lib_version", ""),
        "rank": d.get("rank", -1),
        "groups": [{"name": g["name"], "desc": g["desc"],
                    "ranks": json.loads(g["ranks"]) if isinstance(g["ranks"], str)
                    else list(g["ranks"])}
                   for g in d["pg_config"].values()],
        "status": [{"pg_id": int(k), "last_enqueued": int(s["last_enqueued_collective"]),
                    "last_started": int(s["last_started_collective"]),
                    "last_completed": int(s["last_completed_collective"])}
                   for k, s in d["pg_status"].items()],
        "entries": [expected_entry(e) for e in d.get("entries", [])],
    }


def assert_same(path, is_json, protocol):
    got = read_with_reader(path)
    want = expected_dump(load_python(path, is_json))
    assert got["sniffed"] == 1, f"{path}: not recognised by content"
    assert got["encoding"] == ("json" if is_json else "pickle"), got["encoding"]
    assert got["protocol"] == protocol, (path, got["protocol"], protocol)
    for key in want:
        if key != "entries":
            assert got[key] == want[key], f"{path}: {key}: {got[key]} != {want[key]}"
    assert len(got["entries"]) == len(want["entries"]), path
    for i, (g, w) in enumerate(zip(got["entries"], want["entries"])):
        for key in w:
            same = (g[key] == w[key] if not isinstance(w[key], float)
                    else math.isclose(g[key], w[key], rel_tol=0, abs_tol=0))
            assert same, f"{path}: entry {i}: {key}: {g[key]!r} != {w[key]!r}"
    return len(want["entries"])


def test_every_encoding_equals_pickle_load():
    """Each encoding hta-tracegen writes, every field against Python."""
    checked = 0
    for encoding in ENCODINGS:
        protocol = 0 if encoding == "json" else 2 if encoding == "torch" else int(encoding[-1])
        for path in dump_files(generate(encoding, ["--ring", "10"])):
            checked += assert_same(path, encoding == "json", protocol)
    assert checked > 0


def test_python_pickler_at_every_protocol():
    """The torch-form dumps re-pickled by Python's own pickler."""
    d = generate("torch", ["--missing", "7"])
    out = tmpdir()
    for path in dump_files(d):
        obj = load_python(path, False)
        obj["rank"] = int(path.rsplit("_", 1)[1])   # a writer's rank key wins
        for protocol in (2, 3, 4, 5):
            target = os.path.join(out, f"p{protocol}_{os.path.basename(path)}")
            with open(target, "wb") as f:
                pickle.dump(obj, f, protocol=protocol)
            got = read_with_reader(target)
            assert got["rank"] == obj["rank"], (target, got["rank"])
            assert_same(target, False, protocol)


def test_large_and_negative_integers():
    """LONG1 of every width, negative BININT, escaped JSON text."""
    out = tmpdir()
    base = load_python(dump_files(generate("torch"))[0], False)
    e = base["entries"][0]
    for value in (2**63 - 1, -(2**63), -1, -129, 2**31, 2**40 + 7, 255, 256, 65535, 65536):
        e["time_created_ns"] = value
        for protocol in (2, 5):
            path = os.path.join(out, f"int_{protocol}_{value & 0xffffffff}")
            with open(path, "wb") as f:
                pickle.dump(base, f, protocol=protocol)
            assert read_with_reader(path)["entries"][0]["time_created_ns"] == value, (path, value)
    e["profiling_name"] = "nccl:all_reduce \"quoted\" \u00e9\U0001f600"
    path = os.path.join(out, "escaped.json")
    with open(path, "w") as f:
        json.dump(base, f)
    assert read_with_reader(path)["entries"][0]["profiling_name"] == e["profiling_name"]


def test_bad_dumps_fail_alone_with_one_line():
    d = generate("torch")
    good = dump_files(d)[0]
    with open(good, "rb") as f:
        data = f.read()
    out = tmpdir()

    def write(name, content):
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(content)
        return path

    for cut in (1, 2, 3, len(data) // 2, len(data) - 1):
        line = read_failure(write(f"truncated_{cut}", data[:cut]))
        assert "byte" in line and "truncated" in line, line
    # an opcode the subset does not take (GLOBAL) where the first value starts
    line = read_failure(write("unknown_opcode", data[:2] + b"c" + data[3:]))
    assert "byte 2:" in line and "0x63" in line and "unsupported opcode" in line, line
    wrong = pickle.loads(data)
    wrong["version"] = "3.0"
    line = read_failure(write("wrong_version", pickle.dumps(wrong, protocol=2)))
    assert "unsupported Flight Recorder dump version '3.0'" in line, line
    line = read_failure(write("not_a_dump", pickle.dumps({"hello": [1, 2]}, protocol=2)))
    assert "not a Flight Recorder dump" in line, line
    line = read_failure(write("text", b"hello world\n"))
    assert "not a Flight Recorder dump" in line, line
    line = read_failure(write("bad_json", b'{"version": "2.10", "entries": [1, }'))
    assert "byte" in line, line
    # the good dump beside them still reads
    assert read_with_reader(good)["entries"]


if __name__ == "__main__":
    main([test_every_encoding_equals_pickle_load, test_python_pickler_at_every_protocol,
          test_large_and_negative_integers, test_bad_dumps_fail_alone_with_one_line])
