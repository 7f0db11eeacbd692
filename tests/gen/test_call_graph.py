# SPDX-License-Identifier: Apache-2.0
"""The files of runtime/module/, of runtime/process/ and of gen/parse/ call
one way: a file calls only files below it, never one that calls it back,
directly or around a longer circle (where a lower file must reach a higher
one, the higher registers a callback at init). runtime/module/README.md,
runtime/process/README.md and gen/parse/parse_internal.h say which file
sits where.

The call graph is read from the compiled objects, as the linker sees it:
`nm` lists what each object defines and what it leaves undefined; file A
calls file B when A's object needs a symbol B's object defines. (Static
functions and the static inline helpers of headers are inside their file
and make no edge.) The objects are those `ninja` built: a missing one fails
the test, it never skips."""
import glob
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OBJ = os.path.join(REPO, "build", "obj")

# Each group: its source folder, and where ninja puts its objects (the
# runtime's once per interpreter: any one interpreter's serve).
GROUPS = {
    "runtime/module": "py*",
    "runtime/process": "py*",
    "gen/parse": "gen/parse",
}


def defined_and_needed(obj):
    """The global symbols the object defines and the ones it needs."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            needed.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
    return defined, needed


def call_graph(objects):
    """{file: {callee file: sorted symbols}} between the given objects (a
    dict file name -> object path)."""
    symbols = {name: defined_and_needed(path) for name, path in objects.items()}
    owner = {}
    for name, (defined, _) in symbols.items():
        for sym in defined:
            owner[sym] = name
    graph = {name: {} for name in symbols}
    for name, (_, needed) in symbols.items():
        for sym in needed:
            callee = owner.get(sym)
            if callee and callee != name:
                graph[name].setdefault(callee, []).append(sym)
    return {a: {b: sorted(s) for b, s in calls.items()} for a, calls in graph.items()}


def circles(graph):
    """The sets of two or more files that call each other, directly or
    around a circle (the strongly connected components), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe(graph, comp):
    """Each call between the files of one circle, for the message."""
    return ["%s -> %s (%s)" % (a, b, ", ".join(graph[a][b][:4]))
            for a in comp for b in comp if b in graph[a]]


def group_objects(folder, obj_root=OBJ):
    """{source file name: its object} for every *.c of folder."""
    pattern = GROUPS[folder]
    dirs = sorted(glob.glob(os.path.join(obj_root, pattern)))
    dirs = [d for d in dirs if os.path.isdir(d)]
    assert dirs, "no objects under %s: build first (ninja)" % os.path.join(obj_root, pattern)
    objects = {}
    for src in sorted(glob.glob(os.path.join(REPO, folder, "*.c"))):
        name = os.path.basename(src)
        obj = os.path.join(dirs[0], name[:-2] + ".o")
        assert os.path.isfile(obj), "%s has no object %s: build first (ninja)" % (name, obj)
        objects[name] = obj
    return objects


@pytest.mark.parametrize("folder", sorted(GROUPS))
def test_files_call_one_way(folder):
    objects = group_objects(folder)
    assert len(objects) >= 5  # the scan sees the folder's files
    graph = call_graph(objects)
    assert any(graph.values())  # and the calls between them
    bad = circles(graph)
    assert not bad, "files of %s that call each other:\n%s" % (
        folder, "\n".join("; ".join(describe(graph, comp)) for comp in bad))


def test_a_circle_is_found(tmp_path):
    """Objects that call each other, directly or around three files, are
    reported; a chain that only goes down is not."""
    sources = {
        "a.c": "int b1(void); int a1(void) { return b1(); }",
        "b.c": "int a1(void); int c1(void); int b1(void) { return a1() + c1(); }",
        "c.c": "int c1(void) { return 1; }",
        "d.c": "int e1(void); int d1(void) { return e1(); }",
        "e.c": "int f1(void); int e1(void) { return f1(); }",
        "f.c": "int d1(void); int f1(void) { return d1(); }",
    }
    objects = {}
    for name, text in sources.items():
        (tmp_path / name).write_text(text + "\n")
        obj = str(tmp_path / (name[:-2] + ".o"))
        subprocess.run(["cc", "-c", str(tmp_path / name), "-o", obj], check=True)
        objects[name] = obj
    graph = call_graph(objects)
    assert graph["a.c"] == {"b.c": ["b1"]} and graph["c.c"] == {}
    assert circles(graph) == [["a.c", "b.c"], ["d.c", "e.c", "f.c"]]
    assert circles({"x": {"y": ["s"]}, "y": {"z": ["t"]}, "z": {}}) == []
