# SPDX-License-Identifier: Apache-2.0
"""runtime/ has one folder per binary (runtime/README.md), and each folder's
files include only what their binary may include: runtime/process/ (built
into cubind._runtime) never a header of runtime/module/ or
runtime/library/ (the generated modules' side), those never one of
runtime/process/ (they reach it only through the capsule of
runtime/include/cubind_rt.h), runtime/include/ none of either. configure
compiles each folder with only its own include path, so the compiler
refuses a crossing too; this test says which line crosses, and covers the
generated C (out/) as well.

Checked on the `#include "..."` lines (a quoted include is looked up beside
the including file first, then in the folders its binary's include path
holds, as the compiler does)."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME = os.path.join(REPO, "runtime")

# The folders a file of each folder may include from, in include-path
# order (configure's *_includes): the line the test enforces.
MAY_INCLUDE = {
    "process": ("process", "include"),
    "module": ("module", "include"),
    "library": ("library", "module", "include"),
    "include": ("include",),
    "interop": ("interop",),
}
# The generated C: the driver module links runtime/module/ and reads the
# interop shims; a library API's module links runtime/library/ as well.
GENERATED_DRIVER = ("module", "include", "interop")
GENERATED_LIBRARY = ("library", "module", "include")

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def quoted_includes(text):
    return _INCLUDE.findall(text)


def crossings(path, text, allowed, runtime=RUNTIME):
    """The quoted includes of `path` (its text) that resolve to no file of
    the `allowed` folders of `runtime`: each as (path, header, where it
    was found instead, or None when nowhere under runtime/)."""
    bad = []
    for header in quoted_includes(text):
        beside = os.path.normpath(os.path.join(os.path.dirname(path), header))
        candidates = [beside] + [os.path.join(runtime, d, header) for d in allowed]
        ok = [c for c in candidates if os.path.isfile(c)
              and os.path.relpath(c, runtime).split(os.sep)[0] in allowed]
        if ok:
            continue
        elsewhere = sorted(os.path.relpath(os.path.join(root, n), runtime)
                           for root, _dirs, files in os.walk(runtime) for n in files
                           if os.path.relpath(os.path.join(root, n), runtime)
                           .endswith(os.sep + header))
        bad.append((os.path.relpath(path, REPO), header, elsewhere or None))
    return bad


def runtime_files():
    for root, _dirs, files in sorted(os.walk(RUNTIME)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(root, name)


def folder_of(path):
    return os.path.relpath(path, RUNTIME).split(os.sep)[0]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_every_runtime_file_is_in_a_folder_of_a_binary():
    loose = [os.path.relpath(p, REPO) for p in runtime_files() if folder_of(p) not in MAY_INCLUDE]
    assert not loose, "files outside runtime/'s folders (runtime/README.md): %r" % loose
    assert sorted(n for n in os.listdir(RUNTIME)
                  if os.path.isdir(os.path.join(RUNTIME, n))) == sorted(MAY_INCLUDE)
    for folder in MAY_INCLUDE:
        assert os.path.isfile(os.path.join(RUNTIME, folder, "README.md")), folder


def test_runtime_includes_stay_within_their_binary():
    bad = []
    checked = 0
    for path in runtime_files():
        text = read(path)
        checked += len(quoted_includes(text))
        bad += crossings(path, text, MAY_INCLUDE[folder_of(path)])
    assert checked > 30  # the scan sees the runtime's includes
    assert not bad, ("includes across runtime/'s folders (runtime/README.md says who may "
                     "include what): %r" % bad)


def test_generated_includes_stay_within_their_binary():
    out = os.path.join(REPO, "out")
    sources = sorted(n for n in os.listdir(out) if n.endswith(".c"))
    assert "driver.c" in sources and "nvrtc.c" in sources
    bad = []
    for name in sources:
        allowed = GENERATED_DRIVER if name in ("driver.c", "struct_layout_check.c") \
            else GENERATED_LIBRARY
        bad += crossings(os.path.join(out, name), read(os.path.join(out, name)), allowed)
    assert not bad, bad


def test_a_crossing_is_reported(tmp_path):
    """The check fails on the includes it exists to refuse."""
    process = os.path.join(RUNTIME, "process", "rt_example.c")
    assert crossings(process, '#include "rt_queue.h"\n#include "cubind_rt.h"\n',
                     MAY_INCLUDE["process"]) == []
    assert crossings(process, '#include "bind_packer.h"\n', MAY_INCLUDE["process"]) == [
        ("runtime/process/rt_example.c", "bind_packer.h", ["module/bind_packer.h"])]
    module = os.path.join(RUNTIME, "module", "bind_example.c")
    assert crossings(module, '  #  include "rt_registry.h" /* no */\n',
                     MAY_INCLUDE["module"]) == [
        ("runtime/module/bind_example.c", "rt_registry.h", ["process/rt_registry.h"])]
    assert crossings(module, '#include "bind_library.h"\n', MAY_INCLUDE["module"])
    assert crossings(module, '#include "no_such_header.h"\n', MAY_INCLUDE["module"]) == [
        ("runtime/module/bind_example.c", "no_such_header.h", None)]
    # a mention in a comment is no include
    assert crossings(module, ' *     #include "rt_loader.h"\n', MAY_INCLUDE["module"]) == []
