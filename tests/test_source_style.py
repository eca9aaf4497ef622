"""Two rules of the sources' shape that a compiler does not check: no
line of a C source or header over 100 columns (.clang-format's limit),
and analysis/registry.h included only by a file that uses what it
declares (the registry, its function types, the analysis ids); a file
that needs the view, the settings, the tables or errors includes those
headers itself.  The files are the repository's tracked .c and .h."""
import os
import re
import subprocess
import sys

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LIMIT = 100
REGISTRY = '#include "analysis/registry.h"'
REGISTRY_NAMES = re.compile(
    r"\b(hta_analyses|hta_n_analyses|hta_analysis_schedule|hta_analysis_run|hta_analyses_note"
    r"|hta_analysis|hta_analysis_fn|hta_fixed_analysis_fn|hta_analysis_note_fn"
    r"|hta_analysis_id|HTA_ANALYSIS_\w+|HTA_N_ANALYSES)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def tracked_sources():
    try:
        out = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=SOURCE, check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(root, name), SOURCE)
               for top in ("src", "include", "tests", "tools", "fuzz", "bench")
               for root, _, files in os.walk(os.path.join(SOURCE, top))
               for name in files if name.endswith((".c", ".h"))]
    return sorted(out)


def main():
    problems = []
    files = tracked_sources()
    for path in files:
        with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
            text = f.read()
        long_lines = [(number, len(line)) for number, line in enumerate(text.split("\n"), 1)
                      if len(line) > LIMIT]
        problems += [f"{path}:{number}: {width} columns (at most {LIMIT})"
                     for number, width in long_lines]
        if REGISTRY in text and path != "src/analysis/registry.h":
            code = COMMENT.sub("", text.replace(REGISTRY, ""))
            if not REGISTRY_NAMES.search(code):
                problems.append(f"{path}: includes analysis/registry.h but uses nothing it "
                                "declares")
    for p in problems:
        print(p)
    print(f"{len(files)} files read, {len(problems)} problems")
    return 1 if problems or not files else 0


if __name__ == "__main__":
    sys.exit(main())
