"""The per-rank metrics are declared once (HTA_METRICS in
src/analysis/metrics.h) and the declaration is the contract: the list
equals docs/definitions.md's "Per-rank metrics" table both ways (name,
unit, producer, outlier use, reliability); each producer named exists
and emits its metrics by id; no metric name is spelt in src/ outside
metrics.h (a column of the same name, and comments, aside); and every metric a real run
records in /rank_metrics, and every metric of its /outliers, is
declared."""
import os
import re

from common import analyse, generated, main, table

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "src")
SEARCH = {"SEARCHED": "searched", "OWN_TEST": "own test"}
RELIABILITY = {"MEASURED": "measured", "IDLE_BOUND": "idle bound"}


def declared():
    """{name: (id, unit, producer, outlier use, reliability)} from HTA_METRICS."""
    with open(os.path.join(SRC, "analysis", "metrics.h"), encoding="utf-8") as f:
        text = f.read()
    body = text[text.index("#define HTA_METRICS(X)"):text.index("typedef enum hta_metric_id")]
    body = body.replace("\\\n", " ")
    rows = re.findall(r'X\((\w+),\s*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)",\s*(\w+),\s*(\w+)\)',
                      body)
    assert len(rows) == body.count("X("), "an HTA_METRICS entry the test cannot read"
    out = {}
    for ident, name, unit, producer, search, reliability in rows:
        assert name not in out, f"{name} declared twice"
        out[name.replace("%s", "<kind>")] = (ident, unit, producer, SEARCH[search],
                                             RELIABILITY[reliability])
    return out


def documented():
    """{name: (unit, producer, outlier use, reliability)} from definitions.md."""
    with open(os.path.join(REPO, "docs", "definitions.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### Per-rank metrics"):]
    section = section[:section.index("\n### ", 1)]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| `([^`]+)` \| ([^|]+) \| ([^|]+) \|$",
                      section, re.M)
    out = {}
    for name, unit, producer, search, reliability in rows:
        assert name not in out, f"{name} documented twice"
        out[name] = (unit.strip(), producer, search.strip(), reliability.strip())
    return out


def test_list_equals_definitions():
    ours, docs = declared(), documented()
    assert len(ours) > 30, sorted(ours)
    assert sorted(ours) == sorted(docs), (
        f"only declared: {sorted(set(ours) - set(docs))}, "
        f"only documented: {sorted(set(docs) - set(ours))}")
    for name, (_, *fields) in ours.items():
        assert tuple(fields) == docs[name], f"{name}: {fields} declared, {docs[name]} documented"


def test_producers_emit_by_id():
    for name, (ident, _, producer, search, _) in declared().items():
        path = os.path.join(SRC, producer)
        assert os.path.exists(path), f"{name}: no producer {producer}"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert f"HTA_METRIC_{ident}" in text, f"{name}: {producer} does not name HTA_METRIC_{ident}"


def test_names_only_in_the_list():
    names = [n for n in declared() if "<kind>" not in n]
    column = re.compile(r'\{"([a-z0-9_]+)", HTA_COL_|/\*.*?\*/', re.S)  # columns, comments
    found = []
    for root, _, files in os.walk(SRC):
        for file in files:
            path = os.path.join(root, file)
            if not file.endswith((".c", ".h")) or path.endswith(os.path.join("analysis", "metrics.h")):
                continue
            with open(path, encoding="utf-8") as f:
                text = column.sub("", f.read())
            found += [f"{os.path.relpath(path, SRC)}: {n}" for n in names if f'"{n}"' in text]
    assert not found, "metric names spelt outside HTA_METRICS:\n  " + "\n  ".join(found)


def is_declared(name, names):
    """Whether name is a declared metric or a member of a declared family."""
    return any(re.fullmatch(re.escape(n).replace(re.escape("<kind>"), "[a-z0-9_]+"), name)
               for n in names)


def test_a_run_records_only_declared_metrics():
    names = set(declared())
    for inputs, extra in ((generated(ranks=4, straggler=2), ["--critical-path"]),
                          (os.path.join(REPO, "examples", "traces"), [])):
        path, _ = analyse(inputs, extra=extra)
        metrics = set(table(path, "rank_metrics")["metric"])
        outliers = set(table(path, "outliers")["metric"])
        assert metrics, f"{inputs}: no metrics recorded"
        undeclared = sorted(m for m in metrics | outliers if not is_declared(m, names))
        assert not undeclared, f"{inputs}: undeclared metrics {undeclared}"


if __name__ == "__main__":
    main([test_list_equals_definitions, test_producers_emit_by_id, test_names_only_in_the_list,
          test_a_run_records_only_declared_metrics])
