#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Probes how a drop-in module family converts the arguments it is given,
and compares two such records.

    # record (cuda.bindings on the GPU machine; cubind anywhere, the fake
    # driver included: CUBIND_LIBCUDA=build/fakecuda/libcuda.so.1)
    python3 tools/compare_conversions.py --impl cuda.bindings --out theirs.json
    PYTHONPATH=build/python python3 tools/compare_conversions.py --impl cubind --out ours.json
    # compare two records: a table by parameter kind, -v every difference
    python3 tools/compare_conversions.py --compare theirs.json ours.json [-v]
    # the same judged by docs/compatibility.md's table of explained
    # differences, by module and kind (exit 1 when one is unexplained)
    python3 tools/compare_conversions.py --compare theirs.json ours.json \
        --explain docs/compatibility.md [-v]

--impl cuda.bindings probes cuda.bindings.driver / .runtime / .nvrtc /
.nvjitlink / .nvvm / .nvfatbin, --impl cubind the same modules of cubind (a
module that cannot be imported, or whose library cannot load, is left out;
the record says which were, in "missing" and "skipped"; where the runtime
cannot start, as on the fake driver, "skipped" says why and its functions
are probed without a device: what each parameter takes or refuses, every
call then failing with the runtime's status).

A probe is one value given to one target. Targets:

- every field of every struct and union class of the driver module: set on a
  fresh instance, then read back (no driver call);
- every handle class constructor (int() of the result) and every enum class
  constructor (int() of the member);
- an allowlist of functions, one or more per parameter kind, whose result
  shows what arrived (cuDeviceGet, cuDeviceGetAttribute, cuMemAlloc then
  cuPointerGetAttribute of its size then cuMemFree, cuStreamCreate then
  cuStreamGetFlags, cuMemsetD8 then a read back, cuLaunchKernel of an empty
  kernel loaded from PTX text with the module's own cuModuleLoadData, ...),
  and nvrtc / nvjitlink program and linker creation;
- the runtime's fields and constructors the same way ("runtime:..."), its
  makers and dim3, and its allowlist of functions
  (tools/conversions_runtime.py); nvvm's and nvfatbin's functions
  (tools/conversions_libraries.py).

Safety on a real GPU: a probe value given as a handle is one whose every
plausible conversion (int(), __index__, __int__) is 0, 1 or 2 (the NULL,
legacy and per-thread streams); host memory only as Python buffers, None or
0; sizes that the driver writes through are fixed; only what a probe made is
freed or destroyed. Each group of probes runs in a forked child (before any
driver call of the parent): a crash is recorded as that probe's outcome
("crash:SIGSEGV"; "crash:SIGALRM" for a probe that ran past 20 s) and the
group resumes after it.

The record (JSON): {"impl", "modules", "numpy", "skipped", "targets":
[{"target", "kind", "call" (a function's parameter: true, else absent),
"results": {value label: [outcome, value]}}]}. outcome is "ok" or
the exception's type name; value is what arrived, normalized to JSON (an
address taken from a Python object reads "<address>"). A probe's id is
"target=value label". Value labels do not depend on the implementation
probed (handles of both families are labelled by their module).
"""
import argparse
import ctypes
import enum
import gzip
import importlib
import json
import math
import os
import signal
import sys
import warnings

KINDS = ("integer", "float", "enum", "handle", "pointer", "buffer", "struct", "callable",
         "list", "string", "bool", "other")

# module key -> the module of each family (the key names the targets:
# "runtime:cudaExtent.width")
FAMILIES = {
    "cuda.bindings": {key: "cuda.bindings." + key
                      for key in ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin")},
    "cubind": {key: "cubind." + key
               for key in ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin")},
}


# ---- probe values -----------------------------------------------------------

class IntSub(int):
    """An int subclass."""


class Colour(enum.IntEnum):
    ONE = 1


class OnlyInt:
    """Has __int__ only."""

    def __int__(self):
        return 1


class OnlyIndex:
    """Has __index__ only."""

    def __index__(self):
        return 1


class OnlyFloat:
    """Has __float__ only."""

    def __float__(self):
        return 1.0


class IntReturnsFloat:
    """__int__ returns a float (a broken __int__)."""

    def __int__(self):
        return 1.5


def _noop(*args):
    return None


def base_values():
    """[(label, factory)] of every probe value that needs no module."""
    vals = []
    for v, label in ((0, "0"), (1, "1"), (2, "2"), (7, "7"), (-1, "-1"), (255, "255"), (256, "256"),
                     (2**31 - 1, "2**31-1"), (2**31, "2**31"), (2**32 - 1, "2**32-1"),
                     (2**32, "2**32"), (2**63 - 1, "2**63-1"), (2**63, "2**63"),
                     (2**64 - 1, "2**64-1"), (2**64, "2**64"), (-2**31 - 1, "-2**31-1"),
                     (-2**63 - 1, "-2**63-1")):
        vals.append(("int " + label, (lambda v=v: v)))
    vals += [("bool True", lambda: True), ("bool False", lambda: False)]
    for v, label in ((0.0, "0.0"), (1.0, "1.0"), (2.0, "2.0"), (0.7, "0.7"), (2.5, "2.5"),
                     (3.7, "3.7"), (-0.5, "-0.5"), (-1.0, "-1.0"), (1e30, "1e30"),
                     (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf")):
        vals.append(("float " + label, (lambda v=v: v)))
    vals += [("complex 1+0j", lambda: complex(1, 0)),
             ("int-subclass 1", lambda: IntSub(1)), ("IntEnum 1", lambda: Colour.ONE),
             ("object __int__ 1", OnlyInt), ("object __index__ 1", OnlyIndex),
             ("object __float__ 1.0", OnlyFloat), ("object __int__ -> float", IntReturnsFloat),
             ("None", lambda: None), ("str '1'", lambda: "1"), ("str ''", lambda: ""),
             ("bytes b'1'", lambda: b"1"), ("bytearray b'1'", lambda: bytearray(b"1")),
             ("memoryview b'1'", lambda: memoryview(b"1")),
             ("list [1]", lambda: [1]), ("list []", lambda: []), ("tuple (1,)", lambda: (1,)),
             ("object()", object), ("function", lambda: _noop)]
    return vals


def numpy_values():
    try:
        import numpy as np
    except ImportError:
        return []
    vals = []
    names = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "longdouble", "complex64", "complex128")
    for n in names:
        t = getattr(np, n)
        vals.append(("np.%s 1" % n, (lambda t=t: t(1))))
    for n in ("float32", "float64"):
        t = getattr(np, n)
        vals.append(("np.%s 2.5" % n, (lambda t=t: t(2.5))))
        vals.append(("np.%s nan" % n, (lambda t=t: t("nan"))))
    vals += [("np.int64 -1", lambda: np.int64(-1)), ("np.uint64 2**64-1", lambda: np.uint64(2**64 - 1)),
             ("np.str_ '1'", lambda: np.str_("1")), ("np.bytes_ b'1'", lambda: np.bytes_(b"1")),
             ("np.timedelta64 1", lambda: np.timedelta64(1)),
             ("np.ndarray int64 [1]", lambda: np.array([1], dtype=np.int64)),
             ("np.ndarray int64 scalar 1", lambda: np.array(1, dtype=np.int64))]
    return vals


def handle_classes(mod):
    """Names of the handle classes of a driver module (int() and getPtr())."""
    out = []
    for name in sorted(dir(mod)):
        cls = getattr(mod, name)
        if (isinstance(cls, type) and not name.startswith("_") and hasattr(cls, "getPtr")
                and (hasattr(cls, "__int__") or hasattr(cls, "__index__"))
                and not is_enum_class(cls)):
            out.append(name)
    return out


def struct_classes(mod):
    out = []
    for name in sorted(dir(mod)):
        cls = getattr(mod, name)
        if (isinstance(cls, type) and not name.startswith("_") and hasattr(cls, "getPtr")
                and not hasattr(cls, "__int__") and not hasattr(cls, "__index__")):
            out.append(name)
    return out


def is_enum_class(cls):
    """An enum class of either family: enum.Enum, or cubind's int enums
    (an int subclass with __members__)."""
    return isinstance(cls, type) and (issubclass(cls, enum.Enum) or hasattr(cls, "__members__"))


def is_enum_member(v):
    return is_enum_class(type(v)) and hasattr(v, "name")


def enum_classes(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_") and is_enum_class(getattr(mod, n)))


def family_modules(key="driver"):
    """The module `key` of every family where it imports: {family: module}."""
    out = {}
    for fam, mods in FAMILIES.items():
        try:
            out[fam] = importlib.import_module(mods[key])
        except Exception:  # not installed, or its library cannot load
            pass
    return out


def handle_values(drivers, names=None, key="driver"):
    """Handle objects (value 1) of the classes `names` (all when None) of
    each family's module `key` (labelled "handle cubind.CUstream 1" for the
    driver's, "handle cubind.runtime.cudaStream_t 1" for another module's)."""
    vals = []
    prefix = "" if key == "driver" else key + "."
    for fam in sorted(drivers):
        mod = drivers[fam]
        for n in handle_classes(mod):
            if names is not None and n not in names:
                continue
            vals.append(("handle %s.%s%s 1" % (fam, prefix, n), (lambda c=getattr(mod, n): c(1))))
    return vals


def struct_values(drivers):
    """A struct of a class no field or parameter probed here has (a large
    one, so that a binding copying its target's size reads inside it)."""
    vals = []
    for fam in sorted(drivers):
        cls = getattr(drivers[fam], "CUgraphNodeParams", None)
        if cls is not None:
            vals.append(("struct %s.CUgraphNodeParams" % fam, cls))
    return vals


# ---- normalizing what arrived ----------------------------------------------

def norm(v, depth=0):
    if v is None or isinstance(v, bool):
        return v
    if is_enum_member(v):
        return enum_int(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, (bytes, bytearray)):
        return "b:" + bytes(v[:64]).hex()
    if isinstance(v, str):
        return "s:" + v[:64]
    if isinstance(v, (list, tuple)):
        if depth > 2:
            return "<%s of %d>" % (type(v).__name__, len(v))
        return [norm(x, depth + 1) for x in v[:16]]
    if hasattr(v, "getPtr") and (hasattr(v, "__int__") or hasattr(v, "__index__")):
        return int(v)
    if hasattr(v, "getPtr") and type(v).__name__ == "dim3":  # the runtime's, read back
        return [v.x, v.y, v.z]
    if hasattr(v, "getPtr"):
        return "<struct %s>" % type(v).__name__
    return "<%s>" % type(v).__name__


def norm_arrived(probe, v):
    """norm(v), with an address the binding took from an object (a buffer's,
    a struct's, what getPtr() gives) written "<address>": it differs run to
    run. An address is an int of 2**16 or more that no integer conversion
    of the probe value gives."""
    own = _candidates(probe)

    def fix(x):
        if isinstance(x, list):
            return [fix(y) for y in x]
        if isinstance(x, int) and not isinstance(x, bool) and x >= 2**16 and x not in own:
            return "<address>"
        return x
    return fix(norm(v))


def _candidates(probe):
    got = conversions(probe)
    if got is None:
        got = set()
    try:
        got |= {int(x) for x in probe}  # a list's or a buffer's items
    except Exception:
        pass
    return got


def kind_of_value(v):
    """A field's kind from what a fresh instance reads back."""
    if isinstance(v, bool):
        return "bool"
    if is_enum_member(v):
        return "enum"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, (bytes, bytearray, str)):
        return "buffer"
    if isinstance(v, (list, tuple)):
        return "list"
    if hasattr(v, "getPtr"):
        return "handle" if (hasattr(v, "__int__") or hasattr(v, "__index__")) else "struct"
    if v is None:
        return "pointer"
    return "other"


def outcome_of(e):
    return type(e).__name__


# ---- running groups of probes in forked children -----------------------------

def run_group(setup, probes):
    """probes: [(target, label, factory, thunk(ctx, value) -> arrived)].
    Returns {(target, label): [outcome, value]}. Runs in forked children:
    setup() -> ctx first; a child that dies marks the probe it was running
    "crash:SIG" and the next child resumes after it."""
    results = {}
    start = 0
    while start < len(probes):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(r)
            out = os.fdopen(w, "w", buffering=1)
            code = 0
            try:
                ctx = setup() if setup else None
                for i in range(start, len(probes)):
                    _, label, factory, thunk = probes[i]
                    out.write(json.dumps([i] + probe_one(ctx, factory, thunk, label)) + "\n")
                if ctx is not None and "teardown" in ctx:
                    ctx["teardown"]()
            except BaseException as e:  # setup failed: every probe left says so
                for i in range(start, len(probes)):
                    out.write(json.dumps([i, "setup:" + outcome_of(e), str(e)[:200]]) + "\n")
                code = 0
            out.flush()
            os._exit(code)
        os.close(w)
        last = start - 1
        with os.fdopen(r) as f:
            for line in f:
                try:
                    i, outcome, value = json.loads(line)
                except ValueError:
                    break  # a line cut by the crash
                results[probes[i][:2]] = [outcome, value]
                last = i
        _, status = os.waitpid(pid, 0)
        if last + 1 < len(probes):
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            name = signal.Signals(sig).name if sig else "exit%d" % os.WEXITSTATUS(status)
            results[probes[last + 1][:2]] = ["crash:" + name, None]
            start = last + 2
        else:
            start = len(probes)
    return results


PROBE_SECONDS = 20  # a probe running longer is killed (SIGALRM) and recorded as a crash


def probe_one(ctx, factory, thunk, label):
    signal.alarm(PROBE_SECONDS)
    try:
        return _probe_one(ctx, factory, thunk, label)
    finally:
        signal.alarm(0)


def _probe_one(ctx, factory, thunk, label):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            v = factory()
        except Exception as e:
            return ["value:" + outcome_of(e), None]
        try:
            arrived = thunk(ctx, v)
        except Exception as e:
            return [outcome_of(e), None]
        try:
            return ["ok", norm_arrived(v, arrived)]
        except Exception as e:
            return ["ok", "<unreadable: %s>" % outcome_of(e)]


# ---- targets without a driver -----------------------------------------------

def field_names(cls):
    return sorted(n for n in dir(cls) if not n.startswith("_") and n != "getPtr"
                  and not callable(getattr(cls, n, None)))


def struct_groups(mod, values, handles_all, kinds, key="driver", extras=lambda fresh: []):
    """One group per struct class: every field set to every value on a
    fresh instance and read back. kinds[target] = the field's kind;
    extras(value a fresh field reads) -> more [(label, factory)] for it."""
    groups = []
    for sname in struct_classes(mod):
        cls = getattr(mod, sname)
        try:
            fresh = cls()
        except Exception:
            continue
        probes = []
        for f in field_names(cls):
            more = []
            try:
                kind = kind_of_value(getattr(fresh, f))
                more = extras(getattr(fresh, f))
            except Exception:
                kind = "other"
            target = "%s:%s.%s" % (key, sname, f)
            kinds[target] = kind

            def thunk(ctx, v, cls=cls, f=f):
                obj = cls()
                setattr(obj, f, v)
                return getattr(obj, f)
            for label, fac in values + (handles_all if kind == "handle" else []) + more:
                probes.append((target, label, fac, thunk))
        groups.append((None, probes))
    return groups


def enum_int(member):
    return int(member) if isinstance(member, int) else int(member.value)  # enum.Enum members


def ctor_groups(mod, values, handles_all, kinds, key="driver"):
    probes = []
    for hname in handle_classes(mod):
        cls = getattr(mod, hname)
        target = "%s:%s()" % (key, hname)
        kinds[target] = "handle"
        probes += [(target, label, fac, (lambda ctx, v, cls=cls: int(cls(v))))
                   for label, fac in values + handles_all]
    for ename in enum_classes(mod):
        cls = getattr(mod, ename)
        target = "%s:%s()" % (key, ename)
        kinds[target] = "enum"
        probes += [(target, label, fac, (lambda ctx, v, cls=cls: enum_int(cls(v))))
                   for label, fac in values]
    return [(None, probes)]


# ---- function targets (they call the driver) ---------------------------------

def conversions(v):
    """Every integer a binding could plausibly make of v (for the safety
    filter); None when some conversion cannot be predicted."""
    got = set()
    if isinstance(v, (bytes, bytearray, memoryview, list, tuple, str)) or hasattr(v, "getPtr") \
            and not (hasattr(v, "__int__") or hasattr(v, "__index__")):
        return None  # a buffer or a struct: a binding might take its address
    for conv in (int, lambda x: x.__index__(), lambda x: x.__int__()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got.add(int(conv(v)))
        except Exception:
            pass
    return got


def safe_as_handle(label, factory):
    got = _conversions_of(factory)
    return got is not None and bool(got) and got <= {0, 1, 2}


PTX = b"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry cubind_probe_empty()
{
    ret;
}
"""


def driver_setup(drv):
    """ctx: the primary context of device 0 current, an allocation of 1 KiB,
    a module with an empty kernel."""
    def setup():
        ctx = {"drv": drv}
        check(drv.cuInit(0))
        dev = check(drv.cuDeviceGet(0))
        pctx = check(drv.cuDevicePrimaryCtxRetain(dev))
        check(drv.cuCtxSetCurrent(pctx))
        ctx["dev"] = dev
        ctx["dptr"] = check(drv.cuMemAlloc(1024))
        ctx["mod"] = check(drv.cuModuleLoadData(PTX + b"\0"))
        ctx["func"] = check(drv.cuModuleGetFunction(ctx["mod"], b"cubind_probe_empty"))

        def teardown():
            drv.cuCtxSynchronize()
            drv.cuMemFree(ctx["dptr"])
            drv.cuModuleUnload(ctx["mod"])
            drv.cuDevicePrimaryCtxRelease(dev)
        ctx["teardown"] = teardown
        return ctx
    return setup


def check(result):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError("setup call failed: %r" % (err,))
    return result[1] if len(result) == 2 else result[1:]


def status(result):
    """The status of a drop-in result tuple, by name."""
    err = result[0]
    return getattr(err, "name", str(err))


def driver_functions(drv):
    """(target, kind, filter, thunk) of the allowlisted driver functions."""
    A = drv.CUdevice_attribute
    P = drv.CUpointer_attribute
    F = drv.CUfunction_attribute

    def device_get(ctx, v):
        r = drv.cuDeviceGet(v)
        return [status(r), int(r[1]) if int(r[0]) == 0 else None]

    def attr_attrib(ctx, v):
        r = drv.cuDeviceGetAttribute(v, ctx["dev"])
        return [status(r), r[1] if int(r[0]) == 0 else None]

    def attr_dev(ctx, v):
        r = drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, v)
        return [status(r), r[1] if int(r[0]) == 0 else None]

    def mem_alloc(ctx, v):
        r = drv.cuMemAlloc(v)
        if int(r[0]) != 0:
            return [status(r), None]
        try:
            s = drv.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_SIZE, r[1])
            return [status(r), s[1] if int(s[0]) == 0 else status(s)]
        finally:
            drv.cuMemFree(r[1])

    def stream_create(ctx, v):
        r = drv.cuStreamCreate(v)
        if int(r[0]) != 0:
            return [status(r), None]
        try:
            f = drv.cuStreamGetFlags(r[1])
            return [status(r), f[1] if int(f[0]) == 0 else status(f)]
        finally:
            drv.cuStreamDestroy(r[1])

    def event_create(ctx, v):
        r = drv.cuEventCreate(v)
        if int(r[0]) == 0:
            drv.cuEventDestroy(r[1])
        return [status(r)]

    def stream_query(ctx, v):
        return [status(drv.cuStreamQuery(v))]

    def pointer_attribute(ctx, v):
        r = drv.cuPointerGetAttribute(v, ctx["dptr"])
        return [status(r), norm(r[1]) if int(r[0]) == 0 else None]

    def pointer_ptr(ctx, v):
        r = drv.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_SIZE, v)
        return [status(r), r[1] if int(r[0]) == 0 else None]

    def memset_uc(ctx, v):
        drv.cuMemsetD8(ctx["dptr"], 0, 16)
        r = drv.cuMemsetD8(ctx["dptr"], v, 16)
        back = bytearray(1)
        drv.cuMemcpyDtoH(back, ctx["dptr"], 1)
        return [status(r), back[0]]

    def memcpy_src(ctx, v):
        drv.cuMemsetD8(ctx["dptr"], 0, 16)
        r = drv.cuMemcpyHtoD(ctx["dptr"], v, 1)
        back = bytearray(1)
        drv.cuMemcpyDtoH(back, ctx["dptr"], 1)
        return [status(r), back[0]]

    def launch(which):
        def thunk(ctx, v):
            args = [ctx["func"], 1, 1, 1, 1, 1, 1, 0, 0, None, 0]  # extra: 0 (a void **)
            args[which] = v
            r = drv.cuLaunchKernel(*args)
            drv.cuCtxSynchronize()
            return [status(r)]
        return thunk

    def func_attribute(ctx, v):
        r = drv.cuFuncGetAttribute(v, ctx["func"])
        return [status(r), r[1] if int(r[0]) == 0 else None]

    def func_attribute_f(ctx, v):
        r = drv.cuFuncGetAttribute(F.CU_FUNC_ATTRIBUTE_NUM_REGS, v)
        return [status(r)]

    def stream_dev_ptr(ctx, v):  # a device pointer as a value (CUdeviceptr)
        r = drv.cuMemsetD8(v, 0, 0)
        return [status(r)]

    anything, safe, null, buffers = None, safe_handle, null_handle, host_buffer
    return [
        ("driver:cuDeviceGet.ordinal", "integer", anything, device_get),
        ("driver:cuDeviceGetAttribute.attrib", "enum", anything, attr_attrib),
        ("driver:cuDeviceGetAttribute.dev", "handle", anything, attr_dev),
        ("driver:cuMemAlloc.bytesize", "integer", anything, mem_alloc),
        ("driver:cuStreamCreate.Flags", "integer", anything, stream_create),
        ("driver:cuEventCreate.Flags", "integer", anything, event_create),
        ("driver:cuStreamQuery.hStream", "handle", safe, stream_query),
        ("driver:cuPointerGetAttribute.attribute", "enum", anything, pointer_attribute),
        ("driver:cuPointerGetAttribute.ptr", "pointer", anything, pointer_ptr),
        ("driver:cuMemsetD8.uc", "integer", anything, memset_uc),
        ("driver:cuMemsetD8.dstDevice", "pointer", safe, stream_dev_ptr),
        ("driver:cuMemcpyHtoD.srcHost", "buffer", buffers, memcpy_src),
        ("driver:cuLaunchKernel.gridDimX", "integer", anything, launch(1)),
        ("driver:cuLaunchKernel.blockDimY", "integer", anything, launch(5)),
        ("driver:cuLaunchKernel.sharedMemBytes", "integer", anything, launch(7)),
        ("driver:cuLaunchKernel.hStream", "handle", safe, launch(8)),
        ("driver:cuLaunchKernel.kernelParams", "list",
         lambda label, fac: label.startswith(("list []", "tuple", "None", "int 0")), launch(9)),
        ("driver:cuFuncGetAttribute.attrib", "enum", anything, func_attribute),
        ("driver:cuFuncGetAttribute.hfunc", "handle", null, func_attribute_f),
    ]


def safe_handle(label, fac):
    """A handle the driver can be given: 0, 1, 2 (the NULL, legacy and
    per-thread streams) or refused."""
    return safe_as_handle(label, fac) or conversions_refused(fac)


def null_handle(label, fac):
    """A handle of an object the driver dereferences: NULL or refused."""
    got = _conversions_of(fac)
    return got is not None and got <= {0}


def host_buffer(label, fac):
    """Host memory: Python buffers, None or 0, never an address."""
    return label.startswith(("bytes", "bytearray", "memoryview", "np.ndarray", "None", "int 0",
                             "str"))


def _conversions_of(fac):
    try:
        v = fac()
    except Exception:
        return set()
    return conversions(v)


def conversions_refused(fac):
    """True when no plausible conversion gives an integer (str, None, ...)."""
    got = _conversions_of(fac)
    return got is not None and not got


def callable_values(drivers, fn_class="CUhostFn"):
    """Callables for a host function (a no-op on a stream): a Python
    function, a ctypes function pointer, its address and each family's
    fn_class (CUhostFn, cudaHostFn_t) of it."""
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    cb = proto(lambda data: None)
    addr = ctypes.cast(cb, ctypes.c_void_p).value
    vals = [("callable python function", lambda: (lambda data: None)),
            ("callable ctypes CFUNCTYPE", lambda: cb), ("callable int address", lambda: addr),
            ("None", lambda: None), ("int 0", lambda: 0)]
    for fam in sorted(drivers):
        h = getattr(drivers[fam], fn_class, None)
        if h is not None:
            vals.append(("callable %s.%s" % (fam, fn_class), (lambda h=h: h(addr))))
    return vals, cb


def host_func_target(drv, drivers):
    vals, keep = callable_values(drivers)

    def thunk(ctx, v, keep=keep):
        r = drv.cuLaunchHostFunc(0, v, 0)
        drv.cuCtxSynchronize()
        return [status(r)]
    return ("driver:cuLaunchHostFunc.fn", "callable", vals, thunk)


def nvrtc_targets(nv, values):
    def create(which):
        def thunk(ctx, v):
            args = [b"extern \"C\" __global__ void k() {}", b"probe.cu", 0, [], []]
            args[which] = v
            r = nv.nvrtcCreateProgram(*args)
            if int(r[0]) == 0:
                nv.nvrtcDestroyProgram(r[1])
            return [status(r)]
        return thunk

    def compile_(which):
        def thunk(ctx, v):
            r = nv.nvrtcCreateProgram(b"extern \"C\" __global__ void k() {}", b"probe.cu", 0, [], [])
            prog = r[1]
            try:
                args = [prog, 1, [b"-default-device"]]
                args[which] = v
                return [status(nv.nvrtcCompileProgram(*args))]
            finally:
                nv.nvrtcDestroyProgram(prog)
        return thunk
    opt_lists = [("list [bytes]", lambda: [b"-default-device"]), ("list [str]", lambda: ["-default-device"]),
                 ("tuple (bytes,)", lambda: (b"-default-device",)), ("list [int]", lambda: [1]),
                 ("list [None]", lambda: [None]), ("list [bytearray]", lambda: [bytearray(b"-default-device")]),
                 ("None", lambda: None), ("list []", lambda: [])]
    return [
        ("nvrtc:nvrtcCreateProgram.src", "string", None, values, create(0)),
        ("nvrtc:nvrtcCreateProgram.name", "string", None, values, create(1)),
        ("nvrtc:nvrtcCreateProgram.numHeaders", "integer", None, values, create(2)),
        ("nvrtc:nvrtcCompileProgram.numOptions", "integer", None, values, compile_(1)),
        ("nvrtc:nvrtcCompileProgram.options", "list", None, opt_lists, compile_(2)),
    ]


def nvjitlink_targets(nj, values):
    def create(which):
        def thunk(ctx, v):
            args = [1, ["-arch=sm_90"]]
            args[which] = v
            h = nj.create(*args)
            nj.destroy(h)
            return ["created"]
        return thunk
    opt_lists = [("list [str]", lambda: ["-arch=sm_90"]), ("list [bytes]", lambda: [b"-arch=sm_90"]),
                 ("tuple (str,)", lambda: ("-arch=sm_90",)), ("list [int]", lambda: [1]),
                 ("None", lambda: None), ("list []", lambda: [])]
    return [
        ("nvjitlink:create.num_options", "integer", None, values, create(0)),
        ("nvjitlink:create.options", "list", None, opt_lists, create(1)),
    ]


# ---- recording ---------------------------------------------------------------

def import_family(impl):
    mods, missing = {}, {}
    for key, name in FAMILIES[impl].items():
        try:
            mods[key] = importlib.import_module(name)
        except Exception as e:
            missing[key] = "%s: %s" % (type(e).__name__, str(e)[:200])
    return mods, missing


def record(impl, with_functions=True, only=None):
    mods, missing = import_family(impl)
    drivers = family_modules()
    runtimes = family_modules("runtime")
    values = base_values() + numpy_values()
    common = _unique(values + handle_values(drivers, {"CUstream", "CUdeviceptr"})
                     + struct_values(drivers))
    labels = {l for l, _ in common}
    extra_handles = [h for h in handle_values(drivers) if h[0] not in labels]
    kinds, groups = {}, []  # groups: (setup, [(target, label, factory, thunk)])
    functions = []  # (target, kind, setup, [(label, factory)], thunk)
    skipped = {}  # what was not probed, and why
    if "driver" in mods:
        drv = mods["driver"]
        groups += struct_groups(drv, common, extra_handles, kinds)
        groups += ctor_groups(drv, common, extra_handles, kinds)
        if with_functions:
            setup = driver_setup(drv)
            for target, kind, filt, thunk in driver_functions(drv):
                vals = common + extra_handles if kind in ("handle", "pointer") else common
                if filt is not None:
                    vals = [(l, f) for l, f in vals if filt(l, f)]
                functions.append((target, kind, setup, vals, thunk))
            target, kind, vals, thunk = host_func_target(drv, drivers)
            functions.append((target, kind, setup, vals, thunk))
    if "runtime" in mods:
        import conversions_runtime as cr
        rt = mods["runtime"]
        # the runtime's values: the driver's, with the runtime's stream of
        # both families; its handles: both modules' of both families
        rt_common = _unique(common + handle_values(runtimes, {"cudaStream_t"}, "runtime"))
        rt_labels = {l for l, _ in rt_common}
        rt_handles = [h for h in handle_values(runtimes, None, "runtime") + extra_handles
                      if h[0] not in rt_labels]
        dims = cr.dim3_values(runtimes)
        groups += struct_groups(rt, rt_common, rt_handles, kinds, "runtime",
                                lambda fresh: dims if type(fresh).__name__ == "dim3" else [])
        groups += ctor_groups(rt, rt_common, rt_handles, kinds, "runtime")
        groups += cr.maker_groups(rt, rt_common, kinds)
        if with_functions and "driver" in mods:
            fns = [f for f in cr.function_targets(rt, mods["driver"], rt_common, rt_handles)
                   if _selected(only, f[0])]
            why = setup_error(fns[0][2]) if fns else None
            if why is not None:  # no device (the fake driver): outcomes only
                skipped["runtime device"] = why + "; its functions probed without one (outcomes only)"
                fns = [f for f in cr.function_targets(rt, mods["driver"], rt_common, rt_handles,
                                                      device=False) if _selected(only, f[0])]
            functions += fns
    if with_functions and "nvrtc" in mods:
        functions += nvrtc_targets(mods["nvrtc"], common)
    if with_functions and "nvjitlink" in mods:
        functions += nvjitlink_targets(mods["nvjitlink"], common)
    if with_functions:
        import conversions_libraries as cl
        for key, targets_of in (("nvvm", cl.nvvm_targets), ("nvfatbin", cl.nvfatbin_targets)):
            if key in mods and _selected(only, key + ":", prefix=True):
                if cl.usable(mods[key]):
                    functions += targets_of(mods[key], common)
                else:
                    skipped[key] = "its library did not load"
    calls = set()
    for target, kind, setup, vals, thunk in functions:
        kinds[target] = kind
        calls.add(target)
        groups.append((setup, [(target, l, f, thunk) for l, f in vals]))
    results = {}
    for setup, probes in groups:
        if only:
            probes = [p for p in probes if any(o in p[0] for o in only)]
        if probes:
            results.update(run_group(setup, probes))
    targets = {}
    for (target, label), res in results.items():
        targets.setdefault(target, {})[label] = res
    try:
        import numpy
        np_version = numpy.__version__
    except ImportError:
        np_version = None
    return {"impl": impl, "modules": sorted(mods), "missing": missing, "numpy": np_version,
            "families_importable": sorted(drivers), "python": sys.version.split()[0],
            "skipped": skipped,
            "targets": [dict({"target": t, "kind": kinds[t], "results": targets[t]},
                             **({"call": True} if t in calls else {}))
                        for t in sorted(targets)]}


def _selected(only, target, prefix=False):
    """Whether --only (texts, or None for all) selects target (with
    prefix: any target that starts with it)."""
    if not only:
        return True
    return any(o in target or (prefix and o.startswith(target)) for o in only)


def setup_error(setup):
    """Runs setup() and its teardown in a forked child (the parent makes no
    driver call): None when it worked, else the error's text."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        msg = ""
        try:
            ctx = setup()
            ctx["teardown"]()
        except BaseException as e:
            msg = "%s: %s" % (outcome_of(e), str(e)[:200])
        os.write(w, msg.encode() or b"-")
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    _, status = os.waitpid(pid, 0)
    if not msg:
        return "setup died (status %d)" % status
    return None if msg == "-" else msg


def is_call(target):
    """A target entry of a record (or a probe id's target, as a str) that
    is a function's parameter: its value is the device's or the library's
    answer, so a replay on the fake driver compares its outcome only.
    Records carry the flag; the first record (driver, nvrtc, nvjitlink)
    did not: there a driver target is a call when its name starts "cu"."""
    if isinstance(target, dict):
        if "call" in target:
            return target["call"]
        target = target["target"]
    family, name = target.split(":", 1)
    if family == "driver":
        return name.startswith("cu")
    return family != "runtime"


def _unique(vals):
    seen, out = set(), []
    for l, f in vals:
        if l not in seen:
            seen.add(l)
            out.append((l, f))
    return out


# ---- comparing ---------------------------------------------------------------

def compact(rec):
    """The record as written: value labels and outcomes listed once, each
    target's results [[label index, outcome index, value], ...]."""
    labels = sorted({l for t in rec["targets"] for l in t["results"]})
    outcomes = sorted({o for t in rec["targets"] for o, _ in t["results"].values()})
    li = {l: i for i, l in enumerate(labels)}
    oi = {o: i for i, o in enumerate(outcomes)}
    out = dict(rec, labels=labels, outcomes=outcomes)
    out["targets"] = [dict(t, results=[[li[l], oi[o], v]
                                       for l, (o, v) in sorted(t["results"].items())])
                      for t in rec["targets"]]
    return out


def expand(rec):
    """The inverse of compact (a record read from a file)."""
    if "labels" not in rec:
        return rec
    labels, outcomes = rec["labels"], rec["outcomes"]
    out = {k: v for k, v in rec.items() if k not in ("labels", "outcomes")}
    out["targets"] = [dict(t, results={labels[l]: [outcomes[o], v] for l, o, v in t["results"]})
                      for t in rec["targets"]]
    return out


def load(path):
    """A record, plain JSON or gzipped (a name ending in .gz)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return expand(json.load(f))


def probes_of(rec):
    """{probe id: (kind, outcome, value)}."""
    out = {}
    for t in rec["targets"]:
        for label, (outcome, value) in t["results"].items():
            out["%s=%s" % (t["target"], label)] = (t["kind"], outcome, value)
    return out


def compare(theirs, ours, values_of=lambda pid: True):
    """Per kind: probes in both, same outcome, same value, and the
    differences [(probe id, kind, theirs, ours)]. values_of(pid): whether a
    probe's value is compared (not only its outcome)."""
    a, b = probes_of(theirs), probes_of(ours)
    counts, diffs = {}, []
    for pid in sorted(set(a) & set(b)):
        kind = a[pid][0]
        c = counts.setdefault(kind, {"probes": 0, "same": 0})
        c["probes"] += 1
        (_, oa, va), (_, ob, vb) = a[pid], b[pid]
        same = oa == ob and (oa != "ok" or not values_of(pid) or va == vb)
        if same:
            c["same"] += 1
        else:
            diffs.append((pid, kind, [oa, va], [ob, vb]))
    only = {"theirs": sorted(set(a) - set(b)), "ours": sorted(set(b) - set(a))}
    return counts, diffs, only


def print_table(counts, diffs, only, verbose):
    print("%-10s %8s %8s %8s" % ("kind", "probes", "same", "differ"))
    tot = [0, 0]
    for kind in KINDS:
        if kind in counts:
            c = counts[kind]
            tot[0] += c["probes"]
            tot[1] += c["same"]
            print("%-10s %8d %8d %8d" % (kind, c["probes"], c["same"], c["probes"] - c["same"]))
    print("%-10s %8d %8d %8d" % ("all", tot[0], tot[1], tot[0] - tot[1]))
    print("probes only in the first record: %d, only in the second: %d"
          % (len(only["theirs"]), len(only["ours"])))
    if verbose:
        for pid, kind, a, b in diffs:
            print("%s [%s]: %s, other %s" % (pid, kind, a, b))


def print_summary(rec):
    counts = {}
    for t in rec["targets"]:
        c = counts.setdefault(t["kind"], {"targets": 0, "probes": 0, "ok": 0, "crash": 0})
        c["targets"] += 1
        for outcome, _ in t["results"].values():
            c["probes"] += 1
            c["ok"] += outcome == "ok"
            c["crash"] += outcome.startswith("crash")
    print("%s (%s); missing: %s" % (rec["impl"], ", ".join(rec["modules"]), rec["missing"] or "none"))
    for what, why in sorted(rec.get("skipped", {}).items()):
        print("skipped: %s: %s" % (what, why))
    print("%-10s %8s %8s %8s %8s" % ("kind", "targets", "probes", "accepted", "crashed"))
    for kind in KINDS:
        if kind in counts:
            c = counts[kind]
            print("%-10s %8d %8d %8d %8d" % (kind, c["targets"], c["probes"], c["ok"], c["crash"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", choices=sorted(FAMILIES))
    ap.add_argument("--out", help="write the record here (JSON)")
    ap.add_argument("--no-functions", action="store_true", help="fields and constructors only")
    ap.add_argument("--only", action="append", help="targets containing this text")
    ap.add_argument("--compare", nargs=2, metavar=("FIRST", "SECOND"))
    ap.add_argument("--explain", metavar="DOC",
                    help="with --compare: judge each difference by DOC's table "
                         "(docs/compatibility.md), by module and kind; exit 1 when one "
                         "is unexplained")
    ap.add_argument("--outcomes-only-for-calls", action="store_true",
                    help="with --compare: a function's probes compare outcomes only "
                         "(a replay on the fake driver)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.compare:
        recs = [load(p) for p in args.compare]
        calls = {t["target"] for rec in recs for t in rec["targets"] if is_call(t)} \
            if args.outcomes_only_for_calls else frozenset()

        def values_of(pid):
            return pid.split("=", 1)[0] not in calls
        if not args.explain:
            print_table(*compare(*recs, values_of), args.verbose)
            return 0
        import conversions_explain as ce
        with open(args.explain) as f:
            rows = ce.explanations(f.read())
        counts, unexplained = ce.judge(*recs, rows, values_of)
        ce.print_judged(counts, unexplained, args.verbose)
        return 1 if unexplained else 0
    if not args.impl:
        ap.error("--impl or --compare")
    rec = record(args.impl, not args.no_functions, args.only)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(compact(rec), f, sort_keys=True, separators=(",", ":"))
            f.write("\n")
    print_summary(rec)
    return 0


if __name__ == "__main__":
    # the target modules (conversions_runtime, ...) import this one by name
    sys.modules.setdefault("compare_conversions", sys.modules[__name__])
    sys.exit(main())
