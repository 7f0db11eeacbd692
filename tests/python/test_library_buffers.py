# SPDX-License-Identifier: Apache-2.0
"""Every buffer-and-size pair of the library faces (cubind.nvrtc,
cubind.nvjitlink) is checked before the library reads or writes the
buffer, on the toolkit's real libraries.

The pairs come from the generator's own classification (`cubind classify`
of each API's header and rules), so a pair added to a header is swept
without a change here:
  - a caller's buffer the library reads, with its size as the next
    parameter (C's `const void *buf, size_t size`: nvJitLinkAddData's data,
    size): every such pair must have its size as the buffer's count, and a
    buffer shorter than the size given is a ValueError naming it, whatever
    the other arguments, before the library is called;
  - a caller's buffer the library fills, sized by a size function (the
    buffer-size rules: nvrtcGetPTX's ptx ...): a buffer smaller than that
    size is a ValueError naming it.
On 4ed6c2d nvJitLinkAddData's data had no count: 4 bytes given with
size=2**30 crashed the process inside libnvJitLink."""
import inspect
import json
import pathlib
import subprocess

import pytest

from nvrtc_common import ARCH, AXPY, nvrtc, require  # noqa: F401

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARIES = [("cubind.nvrtc", "nvrtc.h", "nvrtc.rules"),
             ("cubind.nvjitlink", "nvJitLink.h", "nvjitlink.rules")]


def _config(name):
    for line in (ROOT / "build" / "config.ninja").read_text().splitlines():
        if line.startswith(name + " = "):
            return line.split(" = ", 1)[1]
    raise KeyError(name)


def classified(header, rules):
    out = subprocess.run([str(ROOT / "build" / "cubind"), "classify", "--header",
                          str(pathlib.Path(_config("cuda_include")) / header), "--rules",
                          str(ROOT / "gen" / rules)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["functions"]


def python_function(module, cname):
    """The module's function binding C function cname (its docstring says
    which it calls)."""
    for name in dir(module):
        f = getattr(module, name)
        if callable(f) and ("Calls ``%s``" % cname) in (getattr(f, "__doc__", "") or ""):
            return f
    raise AssertionError("%s binds no %s" % (module.__name__, cname))


def python_names(f):
    """The Python names of f's positional arguments, from its signature
    ("add_data(handle, input_type, data, size, name)")."""
    return [p.name for p in inspect.signature(f).parameters.values()
            if p.kind != p.KEYWORD_ONLY]


def inputs(fn):
    """The Python arguments of a classified function, in order."""
    return [p for p in fn["params"] if p["direction"] in ("in", "inout")]


def filler(p):
    """Any valid argument for a parameter that is not under test: the
    buffer check comes before the library is called."""
    if p["shape"] == "in_string":
        return b"x"
    if p["shape"] in ("in_buffer", "out_buffer"):
        return None
    return 0  # ints, enums (0 is a member of each), int handles


def in_pairs(functions):
    """(function, buffer parameter, size parameter) of every buffer the
    library reads with its size beside it."""
    for fn in functions:
        ps = fn["params"]
        for i, p in enumerate(ps):
            if p["shape"] == "in_buffer" and i + 1 < len(ps) and ps[i + 1]["type"] == "size_t":
                yield fn, p, ps[i + 1]


def modules():
    import importlib

    for module, header, rules in LIBRARIES:
        m = importlib.import_module(module)
        require(m)
        yield m, classified(header, rules)


def test_every_read_buffer_has_its_size_as_count():
    pairs = 0
    for m, functions in modules():
        for fn, buf, size in in_pairs(functions):
            assert buf.get("count") == size["name"], (fn["name"], buf)
            pairs += 1
    assert pairs >= 1  # nvJitLinkAddData's data, size at least


def test_short_read_buffers_refused_before_the_call():
    swept = []
    for m, functions in modules():
        for fn, buf, size in in_pairs(functions):
            f = python_function(m, fn["name"])
            args = inputs(fn)
            names = python_names(f)
            assert len(names) == len(args), (fn["name"], names)
            at = {p["name"]: k for k, p in enumerate(args)}
            for given, claimed in ((b"\1\2\3\4", 2**30), (b"\1\2\3\4", 5), (bytearray(0), 1),
                                   (memoryview(bytes(64))[16:48], 33)):
                call = [filler(p) for p in args]
                call[at[buf["name"]]] = given
                call[at[size["name"]]] = claimed
                with pytest.raises(ValueError, match=r"%s\(\): argument '%s' has %d bytes, fewer than "
                                   r"the %d the call reads \('%s'\)" % (
                                       fn["name"], names[at[buf["name"]]], len(bytes(given)),
                                       claimed, names[at[size["name"]]])):
                    f(*call)
            swept.append(fn["name"])
    assert "nvJitLinkAddData" in swept, swept


def test_add_data_takes_exactly_its_buffer():
    """The check lets a buffer of at least `size` bytes through: a link
    from PTX given with its exact length, and from a longer buffer whose
    first `size` bytes are the PTX, both link."""
    import cubind.nvjitlink as j
    import cubind.rtc as rtc

    require(j)
    prog = rtc.nvrtcCreateProgram(AXPY, b"axpy.cu", 0, [], [])
    rtc.nvrtcCompileProgram(prog, 1, [b"-arch=compute_%d" % ARCH])
    ptx = b" " * rtc.nvrtcGetPTXSize(prog)
    rtc.nvrtcGetPTX(prog, ptx)
    rtc.nvrtcDestroyProgram(prog)
    for data in (ptx, ptx + b"\0" * 100):
        h = j.create(1, ["-arch=sm_%d" % ARCH])
        j.add_data(h, j.InputType.PTX, data, len(ptx), "axpy.ptx")
        j.complete(h)
        assert j.get_linked_cubin_size(h) > 0
        j.destroy(h)


def ready_handles():
    """A handle of each library with outputs to fetch: a compiled nvrtc
    program, a completed nvJitLink link."""
    import cubind.nvjitlink as j
    import cubind.nvrtc as n

    err, prog = n.nvrtcCreateProgram(AXPY, b"axpy.cu", 0, [], [])
    assert err == 0
    assert n.nvrtcCompileProgram(prog, 1, [b"-arch=sm_%d" % ARCH])[0] == 0
    err, size = n.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    assert n.nvrtcGetPTX(prog, ptx)[0] == 0
    h = j.create(2, ["-arch=sm_%d" % ARCH, "-verbose"])  # -verbose: an info log
    j.add_data(h, j.InputType.PTX, ptx, len(ptx), "axpy.ptx")
    j.complete(h)
    return {"cubind.nvrtc": prog, "cubind.nvjitlink": h}


def size_of(result):
    """A size function's size, or None when it failed (tuple face: a
    non-zero status first; raising face: an exception)."""
    if isinstance(result, tuple):
        return result[1] if result[0] == 0 else None
    return result


def test_short_filled_buffers_refused_before_the_call():
    handles = ready_handles()
    checked = []
    for m, functions in modules():
        for fn in functions:
            for p in fn["params"]:
                if p["shape"] != "out_buffer" or "size_fn" not in p:
                    continue
                f = python_function(m, fn["name"])
                try:
                    need = size_of(python_function(m, p["size_fn"])(handles[m.__name__]))
                except Exception:  # noqa: BLE001 - the library has no such output here
                    need = None
                if not need:
                    continue
                args = inputs(fn)
                call = [filler(q) for q in args]
                call[0] = handles[m.__name__]
                at = [q["name"] for q in args].index(p["name"])
                for short in (bytearray(0), bytearray(need - 1), memoryview(bytearray(need))[1:]):
                    call[at] = short
                    with pytest.raises(ValueError, match="fewer than the %d" % need):
                        f(*call)
                call[at] = bytearray(need)
                r = f(*call)
                assert r is None or r == (0,) or r[0] == 0, (fn["name"], r)
                checked.append(fn["name"])
    import cubind.nvjitlink as j
    import cubind.nvrtc as n

    assert n.nvrtcDestroyProgram(handles["cubind.nvrtc"]) == (0,)
    j.destroy(handles["cubind.nvjitlink"])
    # (a successful link's error log is empty: nothing to fill)
    assert {"nvrtcGetPTX", "nvrtcGetCUBIN", "nvrtcGetProgramLog", "nvJitLinkGetLinkedCubin",
            "nvJitLinkGetInfoLog"} <= set(checked), checked
