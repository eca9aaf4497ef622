"""The folders of src/ form no include cycle, and each includes only the
folders listed above it in docs/design.md's table of rooms, so each can
be read, tested and changed knowing only those; the rooms inside a folder
(crossrank/'s exchange/, compare/, job_path/, in the order its row names
them) the same, the folder's own files above them.  The public headers
(include/hta/) are the umbrella over all: they include only each other,
so a room that includes one takes no edge back up into src/.  The graph
is read from the sources (`#include "folder/file.h"` lines); a cycle is
printed as the folders and, for each step, one file that makes it."""
import os
import re
import sys

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(SOURCE, "src")

PUBLIC = os.path.join(SOURCE, "include", "hta")
DESIGN = os.path.join(SOURCE, "docs", "design.md")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
INCLUDE_PATH = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


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


def public_header_edges():
    """One line for each include of a public header that is not another
    public header (a path into src/, or a relative one)."""
    bad = []
    for name in sorted(os.listdir(PUBLIC)):
        if not name.endswith((".h", ".h.in")):
            continue
        with open(os.path.join(PUBLIC, name), encoding="utf-8") as f:
            for target in INCLUDE_PATH.findall(f.read()):
                if not target.startswith("hta/") or ".." in target:
                    bad.append(f"  include/hta/{name} -> {target}")
    return bad


def documented_rooms(folder):
    """The rooms of src/folder/ in the order its row of the table names them."""
    with open(DESIGN, encoding="utf-8") as f:
        row = re.search(rf"^\| `src/{folder}/` \|(.*)$", f.read(), re.M)
    return re.findall(r"`([a-z_]+)/`", row.group(1)) if row else []


def room_edges(folder):
    """{room: {included room: a file}} inside src/folder/, its own files
    being the room ''."""
    base = os.path.join(SRC, folder)
    rooms = [""] + sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
    graph = {r: {} for r in rooms}
    pattern = re.compile(rf'^\s*#\s*include\s+"{folder}/(?:([a-z_]+)/)?[^/"]+"', re.M)
    for room in rooms:
        here = os.path.join(base, room)
        names = [n for n in sorted(os.listdir(here)) if n.endswith((".c", ".h"))]
        for name in names:
            with open(os.path.join(here, name), encoding="utf-8") as f:
                for target in pattern.findall(f.read()):
                    if target != room:
                        graph[room].setdefault(target, os.path.join(folder, room, name))
    return graph


def upward_room_edges(folder):
    """One line per include of a room listed after the includer (the
    folder's own files, above its rooms, may include any)."""
    graph = room_edges(folder)
    order = documented_rooms(folder)
    missing = sorted(set(graph) - set(order) - {""})
    if missing:
        return [f"  src/{folder}/: rooms {missing} not named in its row of docs/design.md"]
    place = {room: i for i, room in enumerate(order)}
    place[""] = len(order)
    return [f"  {folder}/{a or '.'} -> {folder}/{b or '.'}: {file}" for a in sorted(graph)
            for b, file in sorted(graph[a].items()) if place[b] >= place[a]]


def main():
    public = public_header_edges()
    if public:
        print("FAIL public headers include more than each other:\n" + "\n".join(public))
        sys.exit(1)
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
    nested = [f for f in sorted(graph)
              if any(os.path.isdir(os.path.join(SRC, f, d)) for d in os.listdir(os.path.join(SRC, f)))]
    for folder in nested:
        upward = upward_room_edges(folder)
        if upward:
            print(f"FAIL the rooms of src/{folder}/ include rooms after them:\n" + "\n".join(upward))
            sys.exit(1)
    print(f"{len(graph)} folders, {edges} folder edges, no cycle, in docs/design.md's order; "
          f"rooms of {nested} in order; include/hta/ includes only itself")


if __name__ == "__main__":
    main()
