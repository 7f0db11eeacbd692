#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench.py — times the same driver calls through every binding available.

Implementations (each measured in its own child process, so one that crashes
or hangs costs only its own rows):

  python         the baselines: an empty loop, a loop calling ``len(())``,
                 and each case's floor (below)
  cubind.driver  cubind's drop-in face: returns (CUresult, outs...)
  cubind.cu      cubind's raising face: returns outs
  cuda.bindings  NVIDIA's cuda.bindings.driver
  cuda.core      NVIDIA's cuda.core, for the operations it has (launch(),
                 Stream.record, Event.is_done)

Cases carry the names of NVIDIA's own benchmark suite (ctx_get_current,
device_get, ..., launch_512_args); see bench/README.md for what each does.

Method: each case is prepared before timing (handles, arguments, kernel
parameters all made up front), then a generated function runs the call N
times in a tight ``for`` loop whose operands are locals; the loop runs once
short to warm up and then R times, and the best loop gives the ns per call.
Launch cases synchronize the stream once after each loop, inside the timing.
A case an implementation cannot run (function missing, unsupported argument
form, failing call) is reported as "n/a" with the reason; it never stops the
run.

Floors: the "python" implementation also times each case's calls made to
``_bench_floor`` (bench/floor_ext.c, built by scripts/gpu-run bench), extension
functions that do nothing: the same number of calls with the same number of
arguments, each detaching from the interpreter where cubind's function does
(every function but those marked keep-gil in gen/rules.txt). No binding
written as an extension can cost less.

Usage:
  bench.py [--out FILE] [--impl NAME]... [--cases NAME,...] [--n N]
           [--n-launch N] [--reps R] [--rounds K] [--image FILE]... [--no-threads]
           [--quick] [--fake]

--fake points CUBIND_LIBCUDA at the test-only fake driver
(build/fakecuda/libcuda.so.1) and runs the cubind faces on the non-launch
cases only: a smoke test of the harness, not a measurement.
Output: JSON lines (--out, default build/bench/py.jsonl) and a table on
stdout. Environment overrides: BENCH_N, BENCH_N_LAUNCH, BENCH_REPS,
BENCH_ROUNDS.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKE_LIBCUDA = os.path.join(ROOT, "build", "fakecuda", "libcuda.so.1")
DEFAULT_IMAGES = [os.path.join(ROOT, "build", "bench", "kernels.ptx"),
                  os.path.join(ROOT, "build", "bench", "kernels.cubin")]

ALL_IMPLS = ["python", "cubind.driver", "cubind.cu", "cuda.bindings", "cuda.core"]

CALL_CASES = ["ctx_get_current", "ctx_set_current", "device_get", "device_get_attribute",
              "event_record", "event_query", "stream_query", "pointer_get_attribute",
              "mem_alloc_free"]
LAUNCH_CASES = ["launch_empty_kernel", "launch_small_kernel", "launch_16_args",
                "launch_512_args", "launch_2048b"]
BASELINE_CASES = ["loop_pass", "loop_len"]
THREAD_CASES = ["threads_device_get_attribute"]

# The driver functions each case calls, in order, with their number of
# Python arguments: the shape of the case's floor.
CASE_CALLS = {
    "ctx_get_current": [("cuCtxGetCurrent", 0)],
    "ctx_set_current": [("cuCtxSetCurrent", 1)],
    "device_get": [("cuDeviceGet", 1)],
    "device_get_attribute": [("cuDeviceGetAttribute", 2)],
    "event_record": [("cuEventRecord", 2)],
    "event_query": [("cuEventQuery", 1)],
    "stream_query": [("cuStreamQuery", 1)],
    "pointer_get_attribute": [("cuPointerGetAttribute", 2)],
    "mem_alloc_free": [("cuMemAlloc", 1), ("cuMemFree", 1)],
}
CASE_CALLS.update((c, [("cuLaunchKernel", 11)]) for c in LAUNCH_CASES)
RULES = os.path.join(ROOT, "gen", "rules.txt")

# Attribute values, fixed by cuda.h (so no enum lookups are needed to set up).
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
CU_STREAM_NON_BLOCKING = 1
CU_EVENT_DISABLE_TIMING = 2
CUDA_ERROR_NOT_READY = 600


class NA(Exception):
    """The implementation cannot run this case; the message says why."""


def keep_gil_functions(path=RULES):
    """The functions cubind calls without detaching (`keep-gil NAME` in
    the generator's rules); every other one detaches around the call."""
    with open(path) as f:
        return {line.split()[1] for line in f if line.startswith("keep-gil ")}


def floor_spec(case, keep_gil):
    """The case's calls made to `_bench_floor`'s do-nothing functions."""
    import _bench_floor
    env = {"c": _bench_floor.call, "d": _bench_floor.call_detached}
    calls = []
    for name, nargs in CASE_CALLS[case]:
        args = ["a%d" % i for i in range(nargs)]
        env.update((a, 0) for a in args)
        calls.append("%s(%s)" % ("c" if name in keep_gil else "d", ", ".join(args)))
    return Spec("; ".join(calls), env, lambda: None,
                note=" then ".join("%s%s" % (name, "" if name in keep_gil else " (detached)")
                                   for name, _ in CASE_CALLS[case]))


# ---------------------------------------------------------------------------
# Timing

def make_loop(body, names):
    """A function ``loop(n, name0, name1, ...)`` running ``body`` n times,
    with every operand a fast local."""
    params = ", ".join(["_n"] + list(names))
    src = "def loop(%s):\n    for _i in range(_n):\n        %s\n" % (params, body)
    ns = {}
    exec(compile(src, "<bench loop>", "exec"), ns)
    return ns["loop"]


class Spec:
    """One prepared case: ``body`` over the locals in ``env``; ``post`` runs
    once after each loop (inside the timing unless ``post_timed`` is False:
    then right after it); ``check`` makes one call and
    raises NA when the result is not a success."""

    def __init__(self, body, env, check, post=None, n=None, variant="", note="",
                 post_timed=True):
        self.body, self.env, self.check, self.post = body, env, check, post
        self.n, self.variant, self.note = n, variant, note
        self.post_timed = post_timed   # False: post runs right after the timing


def spec_timer(spec):
    """A function timing one loop of n calls of spec: ns per call (the
    spec's post inside the timing or right after it)."""
    names = sorted(spec.env)
    loop = make_loop(spec.body, names)
    args = [spec.env[k] for k in names]
    post = spec.post or (lambda: None)

    def timed(n):
        t0 = time.perf_counter_ns()
        loop(n, *args)
        if spec.post_timed:
            post()
        t1 = time.perf_counter_ns()
        if not spec.post_timed:
            post()
        return (t1 - t0) / n
    return timed


def time_spec(spec, n, reps):
    timed = spec_timer(spec)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        timed(max(1, n // 10))   # warm-up
        results = [timed(n) for _ in range(reps)]
    finally:
        if was_enabled:
            gc.enable()
    return min(results), results


def call_spec(f, args, check_result, kwargs=None, **kw):
    """A Spec calling ``f(*args, **kwargs)``: the body spells out each
    argument as a local (no tuple unpacking in the loop) up to 16 of them,
    and each keyword argument as name=local."""
    kwargs = kwargs or {}
    keywords = ["%s=k_%s" % (k, k) for k in kwargs]
    if len(args) <= 16:
        names = ["a%d" % i for i in range(len(args))]
        env = dict(zip(names, args))
        body = "f(%s)" % ", ".join(names + keywords)
    else:
        env = {"a": tuple(args)}
        body = "f(%s)" % ", ".join(["*a"] + keywords)
    env.update(("k_" + k, v) for k, v in kwargs.items())
    env["f"] = f

    def check():
        check_result(f(*args, **kwargs))

    return Spec(body, env, check, **kw)


# ---------------------------------------------------------------------------
# Kernel parameter sets, shared by the implementations.

def small_values(ptr):
    return [ptr, 1024, 2.0]


def k16_values(ptr):
    # k16(p0, i0, f0, p1, i1, f1, p2, i2, f2, p3, i3, f3, i4, f4, i5, f5)
    vals = []
    for j in range(4):
        vals += [ptr, j + 1, float(j + 1)]
    vals += [5, 5.0, 6, 6.0]
    return vals


K16_KINDS = ["p", "i", "f"] * 4 + ["i", "f", "i", "f"]


def k512_values():
    return list(range(512))


def s2048_struct():
    import ctypes

    class S2048(ctypes.Structure):
        _fields_ = [("v", ctypes.c_int * 512)]

    s = S2048()
    for i in range(512):
        s.v[i] = i
    return s


def ctypes_types(kinds):
    import ctypes
    table = {"p": ctypes.c_void_p, "i": ctypes.c_int, "f": ctypes.c_float}
    return tuple(table[k] for k in kinds)


class Prepacked:
    """A ctypes array of void* pointing at one ctypes object per parameter,
    built once; ``address`` is what kernelParams takes."""

    def __init__(self, values, kinds):
        import ctypes
        table = {"p": ctypes.c_void_p, "i": ctypes.c_int, "f": ctypes.c_float}
        self.storage = []
        for v, k in zip(values, kinds):
            if k == "s":
                self.storage.append(v)
            else:
                self.storage.append(table[k](v))
        self.array = (ctypes.c_void_p * max(1, len(values)))(
            *[ctypes.addressof(o) for o in self.storage])
        self.address = ctypes.addressof(self.array)


def load_images(paths):
    images = []
    for p in paths:
        if os.path.exists(p):
            with open(p, "rb") as f:
                data = f.read()
            if p.endswith(".ptx") and not data.endswith(b"\0"):
                data += b"\0"
            images.append((p, data))
    return images


# ---------------------------------------------------------------------------
# The driver-API implementations: cubind.driver, cubind.cu, cuda.bindings.

def status_code(st):
    v = getattr(st, "value", st)
    return int(v)


class DriverImpl:
    """cubind.driver and cuda.bindings.driver (tuple results) and cubind.cu
    (raising, outputs returned). ``raising`` selects the convention."""

    def __init__(self, name, mod, raising, cubind, cfg):
        self.name, self.d, self.raising, self.cubind, self.cfg = name, mod, raising, cubind, cfg

    # -- calls outside the timing --------------------------------------
    def fn(self, name):
        f = getattr(self.d, name, None)
        if f is None:
            raise NA("%s not in %s" % (name, self.name))
        return f

    def call(self, name, *args):
        """Calls and returns the outputs (None, one value, or a tuple)."""
        f = self.fn(name)
        try:
            res = f(*args)
        except NotImplementedError as e:
            raise NA("%s raises NotImplementedError: %s" % (name, e))
        if self.raising:
            return res
        code = status_code(res[0])
        if code != 0:
            raise NA("%s returned %s" % (name, getattr(res[0], "name", code)))
        outs = res[1:]
        return None if not outs else outs[0] if len(outs) == 1 else outs

    def check_result(self, allow=(0,)):
        if self.raising:
            return lambda res: None

        def check(res):
            st = res[0] if isinstance(res, tuple) else res
            code = status_code(st)
            if code not in allow:
                raise NA("returned %s" % getattr(st, "name", code))
        return check

    # -- state shared by the cases -------------------------------------
    def setup(self):
        self.call("cuInit", 0)
        self.dev = self.call("cuDeviceGet", 0)
        self.ctx = self.call("cuDevicePrimaryCtxRetain", self.dev)
        self.call("cuCtxSetCurrent", self.ctx)
        self.stream = self.call("cuStreamCreate", CU_STREAM_NON_BLOCKING)
        self.event = self.call("cuEventCreate", CU_EVENT_DISABLE_TIMING)
        self.call("cuEventRecord", self.event, self.stream)
        self.call("cuStreamSynchronize", self.stream)
        self.dptr = self.call("cuMemAlloc", 4096)
        self.module = None
        self.module_error = None

    def enum(self, enum_name, member, value):
        """The binding's enum member when it has the type, else the int."""
        e = getattr(self.d, enum_name, None)
        m = getattr(e, member, None) if e is not None else None
        return m if m is not None else value

    def sync(self):
        f = self.fn("cuStreamSynchronize")
        stream = self.stream
        if self.raising:
            return lambda: f(stream)

        def post():
            res = f(stream)
            if status_code(res[0]) != 0:
                raise RuntimeError("cuStreamSynchronize: %r" % (res,))
        return post

    # -- cases ---------------------------------------------------------
    def case(self, name):
        ok = self.check_result()
        if name == "ctx_get_current":
            return call_spec(self.fn("cuCtxGetCurrent"), [], ok)
        if name == "ctx_set_current":
            return call_spec(self.fn("cuCtxSetCurrent"), [self.ctx], ok)
        if name == "device_get":
            return call_spec(self.fn("cuDeviceGet"), [0], ok)
        if name == "device_get_attribute":
            attr = self.enum("CUdevice_attribute", "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
                             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            return call_spec(self.fn("cuDeviceGetAttribute"), [attr, self.dev], ok)
        if name == "event_record":
            return call_spec(self.fn("cuEventRecord"), [self.event, self.stream], ok,
                             post=self.sync())
        if name == "event_query":
            return call_spec(self.fn("cuEventQuery"), [self.event], ok)
        if name == "stream_query":
            return call_spec(self.fn("cuStreamQuery"), [self.stream], ok)
        if name == "pointer_get_attribute":
            attr = self.enum("CUpointer_attribute", "CU_POINTER_ATTRIBUTE_MEMORY_TYPE",
                             CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            return call_spec(self.fn("cuPointerGetAttribute"), [attr, self.dptr], ok)
        if name == "mem_alloc_free":
            alloc, free = self.fn("cuMemAlloc"), self.fn("cuMemFree")
            body = "free(alloc(size))" if self.raising else "free(alloc(size)[1])"
            env = {"alloc": alloc, "free": free, "size": 1024}
            impl = self

            def check():
                p = impl.call("cuMemAlloc", 1024)
                impl.call("cuMemFree", p)
            return Spec(body, env, check, n=self.cfg["n_launch"])
        if name in LAUNCH_CASES:
            return self.launch_specs(name)
        raise NA("unknown case")

    # -- launches ------------------------------------------------------
    def load_module(self):
        if self.module is not None:
            return self.module
        if self.module_error:
            raise NA(self.module_error)
        errors = []
        load = getattr(self.d, "cuModuleLoadData", None)
        if load is None:
            self.module_error = "cuModuleLoadData not in %s" % self.name
            raise NA(self.module_error)
        for path, data in load_images(self.cfg["images"]):
            try:
                self.module = self.call("cuModuleLoadData", data)
                self.module_path = path
                return self.module
            except (NA, Exception) as e:
                errors.append("%s: %s" % (os.path.basename(path), e))
        self.module_error = "no module loaded (%s)" % ("; ".join(errors) or "no image files")
        raise NA(self.module_error)

    def kernel(self, kname):
        mod = self.load_module()
        last = None
        for n in (kname.encode(), kname):
            try:
                return self.call("cuModuleGetFunction", mod, n)
            except (NA, TypeError) as e:
                last = e
        raise NA("cuModuleGetFunction(%s): %s" % (kname, last))

    def launch_specs(self, name):
        """A list of Specs, one per kernelParams form this binding takes."""
        launch = self.fn("cuLaunchKernel")
        kname = {"launch_empty_kernel": "empty", "launch_small_kernel": "small",
                 "launch_16_args": "k16", "launch_512_args": "k512",
                 "launch_2048b": "big_struct"}[name]
        k = self.kernel(kname)
        ptr = self.dptr
        iptr = int(ptr)
        forms = []   # (variant, [candidate kernelParams...], note)
        conveniences = []   # (variant, [candidate argument lists...], keywords, note)
        if name == "launch_empty_kernel":
            forms.append(("none", [None], ""))
        else:
            if name == "launch_small_kernel":
                kinds = ["p", "i", "f"]
                vals_handle, vals_int = small_values(ptr), small_values(iptr)
            elif name == "launch_16_args":
                kinds = K16_KINDS
                vals_handle, vals_int = k16_values(ptr), k16_values(iptr)
            elif name == "launch_512_args":
                kinds = ["i"] * 512
                vals_handle = vals_int = k512_values()
            else:
                kinds = ["s"]
                s = s2048_struct()
                vals_handle, vals_int = [s], [bytes(s)]
            if name == "launch_2048b":
                tuple_form = ((s,), (None,))
                packed = Prepacked([s], ["s"])
            else:
                tuple_form = (tuple(vals_int), ctypes_types(kinds))
                packed = Prepacked(vals_int, kinds)
            if self.cubind:
                forms.append(("plain", [tuple(vals_handle), tuple(vals_int)],
                              "plain Python values typed by the kernel"))
            if self.cubind and self.raising:
                import cubind
                conveniences.append(
                    ("launch", cubind.launch,
                     [[k, 1, 1] + list(vals_handle), [k, 1, 1] + list(vals_int)],
                     {"stream": self.stream},
                     "cubind.launch(f, grid, block, *values, stream=s)"))
            forms.append(("tuple", [tuple_form], "(values, ctypes types)"))
            forms.append(("prepacked", [packed.address], "address of a ctypes void*[] built once"))
            self._keep = getattr(self, "_keep", []) + [packed]
        specs = []
        post = self.sync()
        # cuda.bindings takes `extra` as an int (0 = none); cubind takes
        # None or 0.
        calls = [(variant, launch, [[k, 1, 1, 1, 1, 1, 1, 0, self.stream, params, 0]
                                    for params in candidates], {}, note)
                 for variant, candidates, note in forms] + conveniences
        for variant, f, candidates, kwargs, note in calls:
            spec, errors = None, []
            for args in candidates:
                params = args[9] if f is launch else args[3:]
                s = call_spec(f, args, self.check_result(), kwargs=kwargs, post=post,
                              n=self.launch_n(name), variant=variant, note=note,
                              post_timed=self.cfg["launch_timing"] == "sync")
                try:
                    s.check()
                    post()
                    spec = s
                    if args is not candidates[0]:
                        spec.note += " (fallback form: %s)" % describe(params)
                    break
                except Exception as e:  # unsupported form: try the next one
                    errors.append("%s: %s" % (type(e).__name__, e))
            if spec is None:
                specs.append(NA_Spec(variant, "; ".join(errors)))
            else:
                specs.append(spec)
        return specs

    def launch_n(self, name):
        n = self.cfg["n_launch"]
        return max(1, n // 2) if name in ("launch_512_args", "launch_2048b") else n

    # -- threads -------------------------------------------------------
    def thread_target(self):
        attr = self.enum("CUdevice_attribute", "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
                         CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        f, dev, ctx = self.fn("cuDeviceGetAttribute"), self.dev, self.ctx
        set_current = self.fn("cuCtxSetCurrent")
        return f, (attr, dev), lambda: set_current(ctx)


class NA_Spec:
    def __init__(self, variant, reason):
        self.variant, self.reason = variant, reason


def describe(params):
    if isinstance(params, tuple):
        return "tuple of %s" % ", ".join(sorted({type(v).__name__ for v in params}))
    return type(params).__name__


# ---------------------------------------------------------------------------
# cuda.core

class CoreImpl:
    name = "cuda.core"

    def __init__(self, cfg):
        self.cfg = cfg
        try:
            import cuda.core as core
            self.Device = core.Device
            self.LaunchConfig = core.LaunchConfig
            self.launch = core.launch
            self.ObjectCode = core.ObjectCode
        except (ImportError, AttributeError):
            import cuda.core.experimental as core  # cuda.core < 0.4
            self.Device, self.LaunchConfig = core.Device, core.LaunchConfig
            self.launch, self.ObjectCode = core.launch, core.ObjectCode
        self.core = core
        self.module = None

    def setup(self):
        self.dev = self.Device(0)
        self.dev.set_current()
        self.stream = self.dev.create_stream()
        self.buf, errors = None, []
        for alloc in (lambda: self.dev.allocate(4096, stream=self.stream),
                      lambda: self.dev.allocate(4096)):
            try:
                self.buf = alloc()
                break
            except Exception as e:  # API differences between cuda.core releases
                errors.append("%s: %s" % (type(e).__name__, e))
        self.buf_error = "; ".join(errors)
        self.stream.sync()
        self.config = self.LaunchConfig(grid=1, block=1)
        try:
            import numpy
            self.i32, self.f32 = numpy.int32, numpy.float32
            self.scalar_note = "numpy.int32/float32 scalars"
        except ImportError:
            import ctypes
            self.i32, self.f32 = ctypes.c_int, ctypes.c_float
            self.scalar_note = "ctypes c_int/c_float scalars"

    def case(self, name):
        if name == "event_record":
            ev = self.stream.record()
            rec, stream = self.stream.record, self.stream
            return Spec("rec(ev)", {"rec": rec, "ev": ev}, lambda: rec(ev),
                        post=stream.sync, note="Stream.record(event)")
        if name == "event_query":
            ev = self.stream.record()
            self.stream.sync()
            return Spec("ev.is_done", {"ev": ev}, lambda: ev.is_done,
                        note="Event.is_done")
        if name in LAUNCH_CASES:
            return self.launch_specs(name)
        raise NA("cuda.core has no direct equivalent")

    def load(self):
        if self.module is not None:
            return self.module
        errors = []
        for path, data in load_images(self.cfg["images"]):
            try:
                if path.endswith(".ptx"):
                    obj = self.ObjectCode.from_ptx(data)
                else:
                    obj = self.ObjectCode.from_cubin(data)
                obj.get_kernel("empty")   # loads the module now, not in a case
                self.module = obj
                return obj
            except Exception as e:
                errors.append("%s: %s: %s" % (os.path.basename(path), type(e).__name__, e))
        raise NA("no ObjectCode loaded (%s)" % ("; ".join(errors) or "no image files"))

    def launch_specs(self, name):
        kname = {"launch_empty_kernel": "empty", "launch_small_kernel": "small",
                 "launch_16_args": "k16", "launch_512_args": "k512",
                 "launch_2048b": "big_struct"}[name]
        kernel = self.load().get_kernel(kname)
        i32, f32 = self.i32, self.f32
        if self.buf is None and name in ("launch_small_kernel", "launch_16_args"):
            raise NA("Device.allocate failed: %s" % self.buf_error)
        buf = self.buf
        iptr = int(buf.handle) if buf is not None else 0

        def typed(vals, kinds, ptr):
            out = []
            for v, k in zip(vals, kinds):
                out.append(ptr if k == "p" else i32(v) if k == "i" else f32(v))
            return out

        note = self.scalar_note
        if name == "launch_empty_kernel":
            candidates = [[]]
        elif name == "launch_small_kernel":
            candidates = [typed(small_values(0), ["p", "i", "f"], buf),
                          typed(small_values(0), ["p", "i", "f"], iptr)]
            note += ", pointer as Buffer"
        elif name == "launch_16_args":
            candidates = [typed(k16_values(0), K16_KINDS, buf),
                          typed(k16_values(0), K16_KINDS, iptr)]
            note += ", pointers as Buffer"
        elif name == "launch_512_args":
            candidates = [[i32(v) for v in k512_values()]]
        else:
            s = s2048_struct()
            candidates = [[s]]
            try:
                import numpy
                candidates.append([numpy.frombuffer(bytes(s), dtype=numpy.dtype((numpy.void, 2048)))[0]])
            except ImportError:
                pass
            note = "ctypes Structure (or numpy void scalar) by value"
        launch, stream, config = self.launch, self.stream, self.config
        errors = []
        for args in candidates:
            spec = call_spec(launch, [stream, config, kernel] + list(args), lambda res: None,
                             post=stream.sync, n=self.launch_n(name), variant="args", note=note,
                             post_timed=self.cfg["launch_timing"] == "sync")
            try:
                spec.check()
                stream.sync()
                if args is not candidates[0]:
                    spec.note += " (fallback form: %s)" % describe(tuple(args))
                return [spec]
            except Exception as e:
                errors.append("%s: %s" % (type(e).__name__, e))
        return [NA_Spec("args", "; ".join(errors))]

    def launch_n(self, name):
        n = self.cfg["n_launch"]
        return max(1, n // 2) if name in ("launch_512_args", "launch_2048b") else n


# ---------------------------------------------------------------------------
# Child: one implementation, results as JSON lines on stdout.

def emit(rec):
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


def run_child(impl, cfg):
    cases = cfg["cases"]
    n, reps = cfg["n"], cfg["reps"]
    base = {"impl": impl}
    emit(dict(base, case="meta", python=sys.version.split()[0],
              gil_enabled=getattr(sys, "_is_gil_enabled", lambda: True)(),
              n=n, n_launch=cfg["n_launch"], reps=reps))
    if impl == "python":
        specs = {"loop_pass": Spec("pass", {}, lambda: None),
                 "loop_len": call_spec(len, [()], lambda r: None)}
        for c in BASELINE_CASES:
            best, all_ = time_spec(specs[c], n, reps)
            emit(dict(base, case=c, status="ok", ns=round(best, 2), n=n,
                      reps=[round(x, 2) for x in all_]))
        try:
            keep_gil = keep_gil_functions()
        except OSError as e:
            keep_gil, why = None, "no %s: %s" % (RULES, e)
        for c in (c for c in cases if c in CASE_CALLS):
            rec = dict(base, case=c, variant="floor")
            try:
                if keep_gil is None:
                    raise NA(why)
                spec = floor_spec(c, keep_gil)
            except ImportError as e:
                emit(dict(rec, status="n/a", reason="_bench_floor not built: %s" % e))
                continue
            except NA as e:
                emit(dict(rec, status="n/a", reason=str(e)))
                continue
            best, all_ = time_spec(spec, n, reps)
            emit(dict(rec, status="ok", ns=round(best, 2), n=n, note=spec.note,
                      reps=[round(x, 2) for x in all_]))
        return 0

    try:
        if impl in ("cubind.driver", "cubind.cu"):
            import cubind
            mod = cubind.driver if impl == "cubind.driver" else cubind.cu
            obj = DriverImpl(impl, mod, raising=(impl == "cubind.cu"), cubind=True, cfg=cfg)
        elif impl == "cuda.bindings":
            from cuda.bindings import driver as mod
            obj = DriverImpl(impl, mod, raising=False, cubind=False, cfg=cfg)
        elif impl == "cuda.core":
            obj = CoreImpl(cfg)
        else:
            raise NA("unknown implementation")
        obj.setup()
    except Exception as e:
        reason = "setup failed: %s: %s" % (type(e).__name__, e)
        for c in cases:
            emit(dict(base, case=c, status="n/a", reason=reason))
        return 0

    for c in cases:
        if c in THREAD_CASES:
            run_thread_case(obj, c, cfg)
            continue
        try:
            specs = obj.case(c)
        except (NA, NotImplementedError, AttributeError, TypeError) as e:
            emit(dict(base, case=c, status="n/a", reason="%s" % (e,) if isinstance(e, NA)
                      else "%s: %s" % (type(e).__name__, e)))
            continue
        except Exception as e:
            emit(dict(base, case=c, status="n/a", reason="setup: %s: %s" % (type(e).__name__, e)))
            continue
        if not isinstance(specs, list):
            specs = [specs]
        for spec in specs:
            rec = dict(base, case=c, variant=spec.variant)
            if isinstance(spec, NA_Spec):
                emit(dict(rec, status="n/a", reason=spec.reason))
                continue
            try:
                spec.check()
                count = spec.n or n
                best, all_ = time_spec(spec, count, reps)
            except Exception as e:
                emit(dict(rec, status="n/a", reason="%s: %s" % (type(e).__name__, e)))
                continue
            emit(dict(rec, status="ok", ns=round(best, 2), n=count,
                      reps=[round(x, 2) for x in all_], note=spec.note))
    return 0


def run_thread_case(obj, case, cfg):
    """cuDeviceGetAttribute from 1, 2, 4, 8 Python threads: million calls per
    second over all threads (wall time from the first thread's start to the
    last thread's end)."""
    base = {"impl": obj.name, "case": case}
    if not hasattr(obj, "thread_target"):
        emit(dict(base, status="n/a", reason="no equivalent call"))
        return
    try:
        f, args, per_thread_setup = obj.thread_target()
    except NA as e:
        emit(dict(base, status="n/a", reason=str(e)))
        return
    loop = make_loop("f(a0, a1)", ["f", "a0", "a1"])
    calls = cfg["thread_calls"]
    for t in (1, 2, 4, 8):
        best = 0.0
        for _ in range(cfg["reps"]):
            barrier = threading.Barrier(t)
            stamps = []

            def work():
                per_thread_setup()
                barrier.wait()
                t0 = time.perf_counter_ns()
                loop(calls, f, *args)
                stamps.append((t0, time.perf_counter_ns()))

            threads = [threading.Thread(target=work) for _ in range(t)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            span = max(e for _, e in stamps) - min(s for s, _ in stamps)
            best = max(best, t * calls / (span / 1e9) / 1e6)
        emit(dict(base, status="ok", threads=t, calls_per_thread=calls,
                  mcalls_per_s=round(best, 3)))


# ---------------------------------------------------------------------------
# Parent: children, import time, extension size, the table.

IMPORT_STMT = {"cubind.driver": "import cubind.driver",
               "cuda.bindings": "import cuda.bindings.driver",
               "cuda.core": "import cuda.core"}


def available(impl, env):
    mod = {"python": "sys", "cubind.driver": "cubind", "cubind.cu": "cubind",
           "cuda.bindings": "cuda.bindings.driver", "cuda.core": "cuda.core"}[impl]
    r = subprocess.run([sys.executable, "-c", "import " + mod], env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    return last


def run_children(impls, cfg, env, log, sink, deadline):
    records = []
    for impl in impls:
        left = deadline - time.time()
        if left < 10:
            rec = {"impl": impl, "case": "*", "status": "n/a",
                   "reason": "not run: bench.py's time budget (--budget) was spent"}
            records.append(rec)
            sink([rec])
            log("%s: skipped, out of time" % impl)
            continue
        why = available(impl, env)
        if why:
            rec = {"impl": impl, "case": "*", "status": "n/a", "reason": "not importable: " + why}
            records.append(rec)
            sink([rec])
            log("%s: not importable: %s" % (impl, why))
            continue
        log("%s: running %d cases" % (impl, len(cfg["cases"])))
        cmd = [sys.executable, os.path.abspath(__file__), "--child", impl,
               "--child-config", json.dumps(cfg)]
        t0 = time.time()
        limit = int(max(10, min(cfg["child_timeout"], left)))
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
            out, err, rc = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc = "timeout after %ds" % limit
        got = []
        for line in out.splitlines():
            try:
                got.append(json.loads(line))
            except ValueError:
                log("%s stdout: %s" % (impl, line))
        if err.strip():
            log("%s stderr:\n%s" % (impl, err.rstrip()))
        if rc != 0:
            done = {r_["case"] for r_ in got}
            log("%s: child ended with %s" % (impl, rc))
            for c in cfg["cases"]:
                if c not in done and impl != "python":
                    got.append({"impl": impl, "case": c, "status": "n/a",
                                "reason": "child process ended (%s) before this case" % rc})
        log("%s: %.1f s" % (impl, time.time() - t0))
        records += got
        sink(got)
    return records


def best_of_rounds(rounds):
    """One record per (impl, case, variant, threads) from several rounds of
    run_children: the fastest time (or highest rate) among the rounds that
    measured it, with every round's value kept in `rounds`; a case no round
    measured keeps its first n/a record. Rounds run one implementation after
    another, so a slow minute of the shared machine lands on one round of
    each implementation instead of on all the loops of one of them."""
    best, values, order = {}, {}, []
    for got in rounds:
        for r in got:
            key = (r.get("impl"), r.get("case"), r.get("variant", ""), r.get("threads"))
            if key not in best:
                order.append(key)
                best[key], values[key] = r, []
            value = measured(r)
            if value is None:
                continue
            values[key].append(value)
            kept = measured(best[key])
            if kept is None or (value < kept if "ns" in r else value > kept):
                best[key] = r
    return [dict(best[k], rounds=values[k]) for k in order]


def measured(r):
    """A record's time (ns) or rate (mcalls_per_s); None for an n/a one."""
    if r.get("status", "ok") != "ok":
        return None
    return r.get("ns", r.get("mcalls_per_s"))


def import_times(impls, env, tries=5):
    recs = []
    code = ("import time, sys\nt0 = time.perf_counter()\n%s\n"
            "print(time.perf_counter() - t0)\n")
    for impl, stmt in IMPORT_STMT.items():
        if impl not in impls:
            continue
        times, err = [], None
        for _ in range(tries):
            r = subprocess.run([sys.executable, "-c", code % stmt], env=env,
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                err = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
                break
            times.append(float(r.stdout.strip().splitlines()[-1]) * 1e3)
        if err:
            recs.append({"impl": impl, "case": "import_time", "status": "n/a", "reason": err})
        else:
            recs.append({"impl": impl, "case": "import_time", "status": "ok",
                         "ms": round(min(times), 3), "ns": round(min(times) * 1e6),
                         "runs_ms": [round(t, 3) for t in times], "statement": stmt})
    return recs


def stripped_size(path, tmpdir):
    dst = os.path.join(tmpdir, os.path.basename(path) + ".stripped")
    try:
        subprocess.run(["strip", "-o", dst, path], check=True, capture_output=True)
        return os.path.getsize(dst), True
    except (OSError, subprocess.CalledProcessError):
        return os.path.getsize(path), False


def extension_sizes(impls, env):
    """Stripped sizes. cubind: the driver extension and everything it
    ships (driver + _runtime). cuda.bindings: its driver extension, and the
    driver-related extensions beside it (cydriver, _bindings/cydriver)."""
    finder = ("import importlib.util, sys, os\n"
              "for m in sys.argv[1:]:\n"
              "    try:\n"
              "        s = importlib.util.find_spec(m)\n"
              "        print(m, s.origin if s and s.origin else '')\n"
              "    except Exception as e:\n"
              "        print(m, '')\n")
    groups = []
    if "cubind.driver" in impls:
        groups.append(("cubind.driver", "cubind.driver", ["cubind._runtime"]))
    if "cuda.bindings" in impls:
        groups.append(("cuda.bindings", "cuda.bindings.driver",
                       ["cuda.bindings.cydriver", "cuda.bindings._bindings.cydriver"]))
    recs = []
    with tempfile.TemporaryDirectory() as tmp:
        for impl, main, extra in groups:
            r = subprocess.run([sys.executable, "-c", finder, main] + extra, env=env,
                               capture_output=True, text=True, timeout=120)
            origins = {}
            for line in r.stdout.splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2 and parts[1].endswith(".so"):
                    origins[parts[0]] = parts[1]
            if main not in origins:
                recs.append({"impl": impl, "case": "extension_size", "status": "n/a",
                             "reason": "no extension found for %s" % main})
                continue
            files = []
            for m in [main] + extra:
                if m in origins:
                    size, stripped = stripped_size(origins[m], tmp)
                    files.append({"module": m, "path": origins[m], "bytes": size,
                                  "unstripped": os.path.getsize(origins[m]),
                                  "stripped": stripped})
            recs.append({"impl": impl, "case": "extension_size", "status": "ok",
                         "bytes": files[0]["bytes"],
                         "bytes_all": sum(f["bytes"] for f in files), "files": files})
    return recs


def fmt_ns(rec):
    if rec is None:
        return "-"
    if rec.get("status") != "ok":
        return "n/a"
    if "ns" in rec and rec["case"] != "import_time":
        return "%.1f" % rec["ns"]
    if "ms" in rec:
        return "%.1f ms" % rec["ms"]
    if "bytes" in rec:
        return "%.2f MB" % (rec["bytes"] / 1e6)
    return "?"


def summary(records, impls):
    lines = []
    cols = [i for i in impls if i != "python"]
    if any(r.get("impl") == "c" for r in records):
        cols = ["c"] + cols
    rows = {}
    for r in records:
        if r.get("case") in ("meta", "*") or "threads" in r:
            continue
        key = (r["case"], r.get("variant", ""))
        rows.setdefault(key, {})[r["impl"]] = r
    order = BASELINE_CASES + CALL_CASES + LAUNCH_CASES + ["import_time", "extension_size"]
    keys = sorted(rows, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1]))
    head = "%-34s" % "case (ns/call)" + "".join("%16s" % c for c in cols)
    lines.append(head)
    lines.append("-" * len(head))
    for k in keys:
        label = k[0] + ("[%s]" % k[1] if k[1] else "")
        if k[0] in BASELINE_CASES or set(rows[k]) == {"python"}:
            r = rows[k].get("python")
            lines.append("%-34s%16s" % (label, fmt_ns(r)))
            continue
        lines.append("%-34s" % label + "".join("%16s" % fmt_ns(rows[k].get(c)) for c in cols))
    threads = [r for r in records if "threads" in r]
    if threads:
        lines.append("")
        lines.append("threads (million calls/s): " + ", ".join(
            "%s %s %dT=%.2f" % (r["impl"], r["case"], r["threads"], r["mcalls_per_s"])
            for r in threads))
    nas = [r for r in records if r.get("status") == "n/a"]
    if nas:
        lines.append("")
        lines.append("n/a:")
        for r in nas:
            label = r["case"] + ("[%s]" % r["variant"] if r.get("variant") else "")
            lines.append("  %s %s: %s" % (r["impl"], label, r.get("reason", "")))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "py.jsonl"))
    ap.add_argument("--impl", action="append", choices=ALL_IMPLS,
                    help="an implementation to run (repeatable; default all)")
    ap.add_argument("--cases", help="comma-separated case names (default all)")
    ap.add_argument("--n", type=int, default=int(os.environ.get("BENCH_N", 200000)))
    ap.add_argument("--n-launch", type=int, default=int(os.environ.get("BENCH_N_LAUNCH", 20000)))
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", 3)))
    ap.add_argument("--launch-timing", choices=["sync", "submit"],
                    default=os.environ.get("BENCH_LAUNCH_TIMING", "sync"),
                    help="launch cases: synchronize inside the timing of each loop (sync: "
                         "the loop's throughput, GPU-bound once the driver's queue is full) "
                         "or right after it (submit: the cost of submitting the loop's "
                         "launches; keep --n-launch within the queue)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", 1)),
                    help="run every implementation this many times, interleaved, and "
                         "keep the best of the rounds (default 1)")
    ap.add_argument("--thread-calls", type=int, default=50000)
    ap.add_argument("--image", action="append", help="kernel image (PTX or cubin); repeatable")
    ap.add_argument("--no-threads", action="store_true")
    ap.add_argument("--no-import", action="store_true", help="skip import time and size")
    ap.add_argument("--quick", action="store_true", help="small N, for smoke tests")
    ap.add_argument("--fake", action="store_true",
                    help="test-only fake driver, cubind faces, non-launch cases")
    ap.add_argument("--child-timeout", type=int, default=240,
                    help="seconds one implementation may take (default 240)")
    ap.add_argument("--budget", type=int, default=int(os.environ.get("BENCH_BUDGET", 3600)),
                    help="seconds for the whole run; implementations not started "
                         "by then are reported n/a (default 3600)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-config", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        return run_child(args.child, json.loads(args.child_config))

    env = dict(os.environ)
    impls = args.impl or list(ALL_IMPLS)
    if args.fake:
        if not os.path.exists(FAKE_LIBCUDA):
            sys.exit("bench.py: %s not built (run ninja)" % FAKE_LIBCUDA)
        env["CUBIND_LIBCUDA"] = FAKE_LIBCUDA
        impls = [i for i in impls if i in ("python", "cubind.driver", "cubind.cu")]
    if args.quick:
        args.n = min(args.n, 20000)
        args.n_launch = min(args.n_launch, 2000)
        args.thread_calls = min(args.thread_calls, 5000)
    if args.cases:
        cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    else:
        cases = CALL_CASES + ([] if args.fake else LAUNCH_CASES)
        if not args.no_threads:
            cases += THREAD_CASES
    cfg = {"cases": cases, "n": args.n, "n_launch": args.n_launch, "reps": args.reps,
           "launch_timing": args.launch_timing,
           "thread_calls": args.thread_calls, "child_timeout": args.child_timeout,
           "images": [os.path.abspath(p) for p in (args.image or DEFAULT_IMAGES)]}

    def log(msg):
        sys.stderr.write("bench.py: %s\n" % msg)
        sys.stderr.flush()

    log("python %s, implementations: %s%s" % (sys.version.split()[0], ", ".join(impls),
                                               " (fake driver)" if args.fake else ""))
    deadline = time.time() + args.budget
    # Records go to the file as each step ends, so a run cut short by an
    # outer timeout keeps what it measured.
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    out = open(args.out, "w")

    def sink(recs):
        for r in recs:
            out.write(json.dumps(r) + "\n")
        out.flush()

    records = [{"impl": "bench.py", "case": "meta", "fake": args.fake, "python": sys.version.split()[0],
                "executable": sys.executable, "argv": sys.argv, "n": args.n,
                "n_launch": args.n_launch, "reps": args.reps, "cases": cases,
                "launch_timing": args.launch_timing,
                "images": cfg["images"]}]
    sink(records)
    if not args.no_import:
        # Import time and size first: quick, and needed by two targets.
        got = import_times(impls, env, tries=3 if args.quick else 5)
        got += extension_sizes(impls, env)
        sink(got)
        records += got
    rounds = []
    for k in range(max(1, args.rounds)):
        # Every other round runs the implementations in reverse order, so
        # none always runs in the same place (first after the C run, last
        # before the report) with whatever the machine does there.
        order = impls if k % 2 == 0 else impls[::-1]
        if args.rounds > 1:
            log("round %d of %d: %s" % (k + 1, args.rounds, ", ".join(order)))
        rounds.append(run_children(order, cfg, env, log, sink, deadline))
    best = best_of_rounds(rounds)
    if len(rounds) > 1:
        sink(best)   # after the per-round records: readers keep the last one per key
    records += best
    out.close()
    print(summary(records, impls))
    log("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
