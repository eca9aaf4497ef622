"""The table specs (src/schema/table_list.c) are the contract's source:
every table the results and diff files hold is in docs/results-format.md
with the same columns, both ways, and no table or column name is spelt
anywhere in src/ but by the file that declares its spec (consumers use the
spec's name and the column constants of the producer's header).

The specs come from build/tests/list_table_specs: name, flags, then
"column:type" per column, tab-separated."""
import itertools
import os
import re
import subprocess

from common import BUILD, main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PER_RANK, GATHERED, IN_PLACE, SCRATCH, EXCHANGED, BINNED = (1 << i for i in range(6))


def load_specs():
    out = subprocess.run([os.path.join(BUILD, "tests", "list_table_specs")],
                         check=True, capture_output=True, text=True).stdout
    specs = {}
    for line in out.splitlines():
        name, flags, *columns = line.split("\t")
        assert name not in specs, f"{name} listed twice"
        specs[name] = (int(flags), [c.split(":") for c in columns])
    return specs


def check_specs_themselves(specs):
    for name, (flags, columns) in specs.items():
        names = [c for c, _ in columns]
        assert "(null)" not in names, f"{name}: a column index without a column"
        assert len(set(names)) == len(names), f"{name}: a column twice"
        assert name.startswith("_") == bool(flags & SCRATCH), \
            f"{name}: scratch tables, and only they, are named with a leading _"
        if flags & PER_RANK:
            assert columns[:1] == [["rank", "i64"]], f"{name}: per rank without a rank column"
        where = [bool(flags & f) for f in (GATHERED, IN_PLACE, EXCHANGED)]
        assert sum(where) <= 1, f"{name}: gathered, written in place or exchanged: one"


def expand(token):
    """`top{1,5,10}_share` -> top1_share, top5_share, top10_share."""
    parts = re.split(r"\{([^}]*)\}", token)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def top_level_names(cell):
    """The backticked names of a columns cell outside parentheses (those
    inside list a column's values) and before any "; " (prose follows)."""
    depth, flat = 0, []
    for ch in cell:
        depth += ch == "("
        if depth == 0:
            flat.append(ch)
        depth -= ch == ")" and depth > 0
    return re.findall(r"`([^`]+)`", "".join(flat).split("; ")[0])


def documented_tables():
    """{dataset: set of columns, or None when the row gives none}."""
    text = open(os.path.join(REPO, "docs", "results-format.md"), encoding="utf-8").read()
    tables = {}
    for line in text.splitlines():
        cells = [c.strip().replace("\\|", "|")
                 for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if not line.startswith("| `/") or len(cells) < 2:
            continue
        names = [n.lstrip("/") for n in re.findall(r"`(/[^`]+)`", cells[0])]
        columns = None
        if len(cells) >= 3:
            refer = re.match(r"the columns of `/([^`]+)`", cells[2])
            if refer:
                columns = tables[refer.group(1)]
            elif not cells[2].startswith(("float64", "int64", "the four keys")):
                tokens = top_level_names(cells[2])
                # "`{a,b}_us` and `..._pct`": the same names ending in _pct
                for i, t in enumerate(tokens):
                    if t.startswith("..."):
                        stem = tokens[i - 1].rsplit("_", 1)[0]
                        tokens[i] = stem + t[3:].lstrip("_").join(["_", ""])
                columns = {c for t in tokens for c in expand(t)}
        for n in names:
            tables[n] = columns
    return tables


def check_documentation(specs):
    documented = documented_tables()
    written = {n: s for n, s in specs.items() if not s[0] & SCRATCH}
    binned = {n for n, (f, _) in written.items() if f & BINNED}
    for name in documented:
        companion = name.endswith("_ranks") and name[:-len("_ranks")] in binned
        assert name in written or companion, f"/{name} is documented but has no spec"
    for name, (flags, columns) in written.items():
        assert name in documented, f"/{name} has a spec but is not in docs/results-format.md"
        doc = documented[name]
        if flags & BINNED or not columns:
            continue           # an array, or columns known only at run time
        have = {c for c, _ in columns}
        assert doc is not None, f"/{name}: docs/results-format.md lists no columns"
        assert have - doc == set(), f"/{name}: undocumented columns {sorted(have - doc)}"
        assert doc - have == set(), f"/{name}: documented columns missing {sorted(doc - have)}"


LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
# Where a column's name is used to look a column up, declare one or read
# one from a file: the uses the constants replace.
COLUMN_USE = re.compile(r'hta_table_column\([^,]+, "([^"]+)"\)|\{"([^"]+)", HTA_COL_')


def producers():
    """{file: names of the specs it declares}."""
    declared = {}
    declaration = re.compile(r'const hta_table_spec \w+ = \{\s*"([^"]+)"')
    for path in source_files():
        for name in declaration.findall(open(path, encoding="utf-8").read()):
            declared.setdefault(path, set()).add(name)
    return declared


def source_files():
    for root, _, files in os.walk(os.path.join(REPO, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


# Where a literal equal to a table's name is not the table: a column of
# that name, an analysis of that name (analysis/registry.c), an option,
# a key of the trace's JSON, or a value put into a cell.
NOT_A_TABLE = re.compile(r'"\s*,\s*(?:HTA_COL_|hta_\w+\s*\}|\.run\w*\s*=|\w+_argument)')
OPTION_ENTRY = re.compile(r'\b[A-Z]+\(\w+,\s*\w+,\s*$')  # settings/settings.h
JSON_KEY = re.compile(r'(?:cJSON_\w+|hta_pdict_get)\([^,()]+,\s*$')  # a key of an input


def table_name_uses(text, table_names):
    """The literals of text that name a table: every literal equal to a
    name with a '/' or a leading '_', the others where they are not one of
    NOT_A_TABLE's."""
    for m in LITERAL.finditer(text):
        literal = m.group(1)
        if literal not in table_names:
            continue
        if "/" in literal or literal.startswith("_"):
            yield literal
            continue
        after = text[m.end() - 1:m.end() + 100]
        before = text[max(0, m.start() - 80):m.start()]
        if NOT_A_TABLE.match(after):
            continue
        statement = re.split(r"[;{}]", before)[-1]
        if JSON_KEY.search(before) or OPTION_ENTRY.search(before) or \
                "hta_row_put_str(" in statement:
            continue
        yield literal


def check_no_names_outside_producers(specs):
    declared = producers()
    table_names = set(specs)
    problems = []
    for path in source_files():
        text = strip_comments(open(path, encoding="utf-8").read())
        own = declared.get(path, set()) | declared.get(path[:-2] + ".c", set())
        own_columns = {c for n in own for c, _ in specs.get(n, (0, []))[1]}
        # a table whose columns are planned at run time names them itself
        runtime = any(not specs.get(n, (0, [1]))[1] for n in own)
        rel = os.path.relpath(path, REPO)
        for literal in table_name_uses(text, table_names):
            if literal not in own:
                problems.append(f"{rel}: table name \"{literal}\"")
        for m in COLUMN_USE.finditer(text):
            column = m.group(1) or m.group(2)
            if column not in own_columns and not runtime:
                problems.append(f"{rel}: column name \"{column}\"")
    assert not problems, "names outside their producer:\n  " + "\n  ".join(problems)


SPECS = {}


def load():
    SPECS.update(load_specs())


def test_specs_consistent():
    check_specs_themselves(SPECS)


def test_specs_match_documentation():
    check_documentation(SPECS)


def test_no_names_outside_producers():
    check_no_names_outside_producers(SPECS)


if __name__ == "__main__":
    main([test_specs_consistent, test_specs_match_documentation,
          test_no_names_outside_producers], setup=load)
