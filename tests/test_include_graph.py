"""The folders of src/ form no include cycle, and each includes only the
folders listed above it in docs/design.md's table of rooms, so each can
be read, tested and changed knowing only those.  The graph is read from
the sources (`#include "folder/file.h"` lines); a cycle is printed as the
folders and, for each step, one file that makes it."""
import os
import re
import sys

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(SOURCE, "src")

DESIGN = os.path.join(SOURCE, "docs", "design.md")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def folder_graph():
    """{folder: {included folder: a file of folder that includes it}}."""
    folders = sorted(d for d in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, d)))
    graph = {f: {} for f in folders}
    for folder in folders:
        for root, _, files in os.walk(os.path.join(SRC, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    for target in INCLUDE.findall(f.read()):
                        if target != folder and target in graph:
                            graph[folder].setdefault(target, os.path.relpath(path, SRC))
    return graph


def find_cycle(graph):
    """One cycle as a list of folders (first = last), or None."""
    state = {}                 # folder: 1 on the current path, 2 done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def describe(cycle, graph):
    return " -> ".join(cycle) + "\n" + "\n".join(
        f"  {a} -> {b}: {graph[a][b]}" for a, b in zip(cycle, cycle[1:]))


def documented_order():
    """The folders of docs/design.md's table of rooms, bottom up."""
    with open(DESIGN, encoding="utf-8") as f:
        return re.findall(r"^\| `src/([a-z_]+)/`", f.read(), re.M)


def upward_edges(graph, order):
    """One line for each folder edge to a folder listed after the includer."""
    place = {folder: i for i, folder in enumerate(order)}
    return [f"  {a} -> {b}: {file}" for a in sorted(graph) for b, file in sorted(graph[a].items())
            if place[b] > place[a]]


def main():
    graph = folder_graph()
    assert len(graph) >= 10, sorted(graph)
    edges = sum(len(v) for v in graph.values())
    cycle = find_cycle(graph)
    if cycle:
        print("FAIL the folders of src/ include each other in a cycle:\n" + describe(cycle, graph))
        sys.exit(1)
    order = documented_order()
    missing = sorted(set(graph) - set(order))
    if missing:
        print(f"FAIL folders of src/ not in docs/design.md's table of rooms: {missing}")
        sys.exit(1)
    upward = upward_edges(graph, order)
    if upward:
        print("FAIL folders include folders listed after them in docs/design.md:\n" +
              "\n".join(upward))
        sys.exit(1)
    print(f"{len(graph)} folders, {edges} folder edges, no cycle, in docs/design.md's order")


if __name__ == "__main__":
    main()
