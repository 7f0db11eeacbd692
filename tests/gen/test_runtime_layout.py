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


# A generated file's module: driver_part3.c, driver_internal.h -> driver.
_MODULE_FILE = re.compile(r"^(\w+?)(?:_part\d+)?\.c$|^(\w+)_internal\.h$")


def test_generated_includes_stay_within_their_binary():
    """Each unit of a generated module includes its own module's shared
    header beside it (out/<module>_internal.h) and otherwise, as that
    header does, only the runtime folders of the binary it is linked into."""
    out = os.path.join(REPO, "out")
    files = sorted(n for n in os.listdir(out) if _MODULE_FILE.match(n))
    assert {"driver.c", "driver_internal.h", "nvrtc.c", "nvrtc_internal.h"} <= set(files)
    bad = []
    own_headers = 0
    for name in files:
        m = _MODULE_FILE.match(name)
        module = m.group(1) or m.group(2)
        allowed = GENERATED_DRIVER if module in ("driver", "struct_layout_check") \
            else GENERATED_LIBRARY
        text = read(os.path.join(out, name))
        own = '#include "%s_internal.h"\n' % module
        own_headers += own in text
        bad += crossings(os.path.join(out, name), text.replace(own, ""), allowed)
    assert not bad, bad
    # every unit (all but the headers and the layout check) includes its own
    assert own_headers == len([n for n in files if n.endswith(".c")]) - 1


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
