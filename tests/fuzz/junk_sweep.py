#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The junk sweep (issue 27): every exported callable of a group of
generated modules (functions, classes, the public methods of an instance
of each class, the settable attributes of each struct) called with junk, by
whatever interpreter runs this script; needs only the standard library (no
hypothesis). The groups (--modules, table GROUPS below):

- driver (the default): cubind.driver and cubind.cu on the test-only fake
  driver; run by tests/fuzz/test_junk_sweep.py once per interpreter
  ./configure found, each in a process of its own. Junk by what each
  parameter is (ByKind): ints of every edge size, floats (nan, inf), str
  (empty, NUL, non ASCII), bytes, bytearray, non-contiguous and cast
  memoryviews, None, lists, tuples, dicts, callables, classes, handles of
  every class (fresh and from the pool of live driver objects), default
  struct instances, enum members; calls with too few and too many
  arguments, keywords (known, unknown, duplicated, with an embedded NUL);
  --calls random calls per callable and face, seeded (--seed). Parameters
  that take a raw address get no int, handle or struct
  (fuzz_params.classify); struct constructors' positional argument is such
  an address; struct attributes get no int either (an int pointer field
  would be read by repr).
- fetched: cubind.nvfatbin and cubind.cufile on CUDA 12.4's libraries
  (scripts/fetch-cuda-libs.sh), run by tests/python/test_library_junk.py;
- nvml: cubind.nvml on the 550 driver's libnvidia-ml.so.1 without a
  driver (scripts/fetch-cuda-libs.sh 12.4-driver), run by
  tests/python/test_library_junk.py;
- libraries: cubind.nvrtc, cubind.rtc, cubind.nvjitlink and cubind.nvvm
  on the real libnvrtc, libnvJitLink and libnvvm; run by tests/python/test_library_junk.py, so
  on every interpreter tests/python runs on, ASan's included. A fixed junk
  list given in every combination (no int: a handle given as an int is an
  address the library follows), then junk per parameter by its C type
  (ByParam: edge ints for integers and enums, read from the C prototype of
  each docstring), with --leaks.
- runtime: cubind.runtime and cubind.cudart on the bundled CUDA runtime
  with no driver installed (the runtime answers for want of one); run by
  tests/python/test_runtime.py, with the libraries' junk and --leaks.

With --leaks, each function's first calls (--leak-calls) are made three
times more; the memory blocks alive (sys.getallocatedblocks) must not grow
over both of the last two (Sweep.check_leaks).

Every outcome must be a return or one of the group's allowed exceptions
(MemoryError only for a big int or a long sequence). Before each call the
callable's qualified name and the call's number are written (unbuffered) to
the file given with --log: when the process dies, the last line names the
call that killed it (crashed_in), and the sweep is deterministic, so that
call is reproducible.

After the sweep, valid calls (the group's `usable`, from a clean start)
must succeed: a failed call leaves the process usable.

Prints "callables N calls M", per module "module NAME callables N swept S",
"swept functions F classes C methods M", counts per outcome, "usable
afterwards: CALLS", and FAILURE blocks; exits 1 if there was one.
"""
import argparse
import builtins
import collections
import ctypes
import faulthandler
import gc
import importlib
import inspect
import itertools
import os
import random
import re
import sys
import time
import traceback

# Given as the junk of a group: values chosen per parameter (ByKind).
BY_KIND = "by parameter kind"

Group = collections.namedtuple("Group", "modules allowed junk usable")


def driver_usable():
    """Valid calls after the sweep, each from a clean start (the sweep may
    have destroyed or unset whatever it could reach): the process must still
    be usable. Returns what was called; raises on a failure."""
    import cubind.cu as cu
    cu.cuInit(0)
    ctx = cu.cuDevicePrimaryCtxRetain(cu.cuDeviceGet(0))
    cu.cuCtxSetCurrent(ctx)
    cu.cuMemFree(cu.cuMemAlloc(64))
    cu.cuStreamDestroy(cu.cuStreamCreate(0))
    return "cuInit cuDeviceGet cuDevicePrimaryCtxRetain cuCtxSetCurrent cuMemAlloc " \
        "cuMemFree cuStreamCreate cuStreamDestroy"


def libraries_usable():
    """As driver_usable, for the library modules."""
    import cubind.nvjitlink as nvjitlink
    import cubind.nvvm as nvvm
    import cubind.rtc as rtc
    major, minor = rtc.nvrtcVersion()
    assert major >= 11, (major, minor)
    assert nvjitlink.version() >= (12, 0), nvjitlink.version()
    assert nvvm.ir_version() >= (1, 0, 0, 0), nvvm.ir_version()
    return "nvrtcVersion version ir_version"


def fetched_usable():
    """As driver_usable, for the modules of the fetched CUDA 12.4 libraries
    (tests/python/conftest.py names them in CUBIND_LIBNVFATBIN and
    CUBIND_LIBCUFILE)."""
    import cubind.cufile as cufile
    import cubind.nvfatbin as nvfatbin
    assert nvfatbin.version() >= (12, 4), nvfatbin.version()
    assert cufile.get_version() >= 1000, cufile.get_version()
    return "version get_version"


def nvml_usable():
    """As driver_usable, for cubind.nvml on the fetched 550 driver's NVML
    (tests/python/conftest.py names it in CUBIND_LIBNVML): its version,
    which it gives without a driver."""
    import cubind.nvml as nvml
    assert nvml.system_get_nvml_version().startswith("12."), nvml.system_get_nvml_version()
    return "system_get_nvml_version"


def runtime_usable():
    """As driver_usable, for cubind.runtime and cubind.cudart on a machine
    without a driver (the only place the group runs): the runtime's own
    release, and the runtime's answer for want of a driver."""
    import cubind.cudart as cudart
    import cubind.runtime as runtime
    assert cudart.cudaRuntimeGetVersion() >= 13000
    err, count = runtime.cudaGetDeviceCount()
    assert err in (runtime.cudaError_t.cudaErrorInsufficientDriver,
                   runtime.cudaError_t.cudaErrorNoDevice) and count is None, (err, count)
    return "cudaRuntimeGetVersion cudaGetDeviceCount"


# modules: swept in this order. allowed: what a call may raise besides
# returning, as names (builtins, or module.name: a tuple there counts
# member by member), imported when the group runs. junk: BY_KIND, or a list
# given to every parameter (EveryCombination).
GROUPS = {
    "driver": Group(modules=("cubind.driver", "cubind.cu"),
                    allowed=("fuzz_params.ALLOWED",),  # shared with the hypothesis fuzz
                    junk=BY_KIND, usable=driver_usable),
    # No int, nor a float that converts to one (1.5 is handle 1): a handle
    # given as a number is an address the library dereferences, in
    # cuda.bindings as here (the hypothesis fuzz keeps to the same rule).
    # nan converts to nothing (ValueError).
    "libraries": Group(modules=("cubind.nvrtc", "cubind.rtc", "cubind.nvjitlink", "cubind.nvvm"),
                       allowed=("TypeError", "ValueError", "OverflowError", "cubind.NVRTCError",
                                "cubind.nvJitLinkError", "cubind.nvvmError"),
                       junk=[None, "junk", b"junk", float("nan"), object(), [], [None], (b"a",),
                             bytearray(4), "a\0b"],
                       usable=libraries_usable),
    # nvFatbin and cuFile (no GDS) on CUDA 12.4's libraries, the same junk.
    "fetched": Group(modules=("cubind.nvfatbin", "cubind.cufile"),
                     allowed=("TypeError", "ValueError", "OverflowError", "OSError",
                              "cubind.nvFatbinError", "cubind.cuFileError"),
                     junk=[None, "junk", b"junk", float("nan"), object(), [], [None], (b"a",),
                           bytearray(4), "a\0b"],
                     usable=fetched_usable),
    # NVML without a driver (the fetched 550 driver's libnvidia-ml.so.1):
    # the same junk; every query raises NvmlError before nvmlInit.
    "nvml": Group(modules=("cubind.nvml",),
                  allowed=("TypeError", "ValueError", "OverflowError", "cubind.NvmlError"),
                  junk=[None, "junk", b"junk", float("nan"), object(), [], [None], (b"a",),
                        bytearray(4), "a\0b"],
                  usable=nvml_usable),
    # The CUDA runtime without a driver (tests/python/test_runtime.py): the
    # same junk, no ints (a raw address the runtime would dereference).
    "runtime": Group(modules=("cubind.runtime", "cubind.cudart"),
                     allowed=("TypeError", "ValueError", "OverflowError",
                              "cubind.CUDARuntimeError"),
                     junk=[None, "junk", b"junk", float("nan"), object(), [], [None], (b"a",),
                           bytearray(4), "a\0b"],
                     usable=runtime_usable),
}


def crashed_in(log):
    """The call a process that died in the sweep was making: the name on
    the last line of its log, without the call's number."""
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError:
        return "(no log)"
    return lines[-1].rsplit(" #", 1)[0] if lines else "(before the first call)"


def resolve(names):
    """The exception classes `names` (GROUPS' allowed) name."""
    found = []
    for name in names:
        module, _, attr = name.rpartition(".")
        obj = getattr(importlib.import_module(module) if module else builtins, attr)
        found.extend(obj if isinstance(obj, tuple) else (obj,))
    return tuple(found)


class Opaque:
    pass


def callback(*a):
    return None


def fresh(cls, *args):
    try:
        return cls(*args)
    except Exception:
        return None


def instance_of(cls):
    """The instance whose methods are swept: an enum's first member, else
    what the class makes of no argument, or None."""
    members = getattr(cls, "__members__", None)
    return next(iter(members.values())) if members else fresh(cls)


SHAPES = ["exact"] * 6 + ["fewer", "more", "kw", "kw_all", "kw_unknown", "kw_dup", "kw_nul",
                          "empty"]


def build_call(rnd, names, cands, extra):
    """(args, kwargs) of one call: a value per parameter from its
    candidates, in one of SHAPES."""
    values = [rnd.choice(c) for c in cands]
    shape = rnd.choice(SHAPES)
    k = rnd.randrange(1 << 16)
    if shape == "exact" or not names and shape in ("kw", "kw_all", "kw_dup", "kw_nul"):
        return values, {}
    if shape == "fewer":
        return values[:max(0, len(values) - 1 - k % max(1, len(values)))], {}
    if shape == "more":
        return values + [rnd.choice(extra) for _ in range(1 + k % 3)], {}
    if shape == "empty":
        return [], {}
    if shape == "kw":
        cut = k % (len(names) + 1)
        return values[:cut], dict(zip(names[cut:], values[cut:]))
    if shape == "kw_all":
        return [], dict(zip(names, values))
    if shape == "kw_unknown":
        return values, {"junk_no_such_param": rnd.choice(extra)}
    if shape == "kw_dup":
        return values, {names[k % len(names)]: rnd.choice(extra)}
    # kw_nul: a keyword naming a parameter followed by a NUL and more: no
    # parameter's name, whatever its prefix (the value suits the prefix's)
    i = k % len(names)
    return values[:i], {names[i] + "\0junk": values[i]}


# The junk of a group: what its callables are called with. Each method
# returns the (args, kwargs) of the calls of one callable, made in that
# order (a generator: a call's values are chosen after the calls before it
# returned).

class ByKind:
    """The driver group's junk: values by what each parameter may be given
    (fuzz_params.classify), `per` calls of each callable in random SHAPES,
    seeded by the callable's name."""

    def __init__(self, seed, per):
        import cubind.driver
        from fuzz_params import Pool, big, classifier

        self.drv = cubind.driver
        self.seed = seed
        self.per = per
        self.big = big
        self.kinds, self.params = classifier()
        self.pool = Pool()
        self.pool.refresh()
        kinds = self.kinds
        self.ints = [0, 1, -1, 2, 7, 255, 4096, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1,
                     2**63, -2**63 - 1, 2**64, 2**200, True, False]
        self.floats = [0.0, -1.5, 1e300, float("nan"), float("inf")]
        self.texts = ["", "x", "\0", "a\0b", "\u00e9t\u00e9", "k" * 40]
        self.blobs = [b"", b"\0", b"abcd", bytearray(8), memoryview(b"abcdefgh")[::2],
                      memoryview(bytearray(16)).cast("i"), (ctypes.c_char * 8)()]
        self.misc = [None, Opaque(), callback, {}, {"a": 1}, (), [], [None], [0, 1], object, 1j,
                     Ellipsis, (1.5, None), ([1, 2], [ctypes.c_int] * 2)]
        self.handles = [h for c in sorted(kinds.handles.values(), key=lambda c: c.__name__)
                        for h in (fresh(c), fresh(c, 0)) if h is not None]
        self.structs = [s for s in (fresh(c) for c in sorted(kinds.structs.values(),
                                                                key=lambda c: c.__name__))
                        if s is not None]
        self.enums = [m for e in sorted(kinds.enums.values(), key=lambda c: c.__name__)
                      for m in list(e.__members__.values())[:2]]
        # Never a number (an int, bool, float but nan, enum member, handle or
        # struct): a void * takes it as an address (void-ptr-numbers: 1.5 is
        # address 1). nan converts to no int: refused.
        self.raw = [None, Opaque(), callback, {}, (), [], [None], [None, None], "", "x", 1j,
                    float("nan"), object, [None, 1j, b"x"], ([1j], [None])] + self.blobs
        # For struct attributes: no int (an int in a pointer field is an address).
        self.attr = self.floats + self.texts + self.blobs + [
            None, Opaque(), callback, {}, (), [], [None], [1.5, "x"], object, 1j]
        self.anything = (self.ints + self.floats + self.texts + self.blobs + self.misc
                         + self.handles + self.structs + self.enums)

    def refresh(self):
        """Before each callable: the pool of live driver objects renewed."""
        self.pool.refresh()
        self.pool.current()

    def is_struct(self, cls):
        return cls in self.kinds.structs.values()

    def for_kind(self, kind):
        k = kind[0]
        if k == "raw":
            return self.raw
        if k == "handle":
            right = [h for h in (fresh(kind[1]), fresh(kind[1], 0)) if h is not None]
            return right * 4 + self.ints + self.handles + self.pool.handles + self.anything
        if k == "struct":
            return [fresh(kind[1])] * 4 + [None] + self.structs + self.anything
        if k == "enum":
            return list(kind[1].__members__.values())[:4] * 2 + self.ints + self.anything
        if k == "str":
            return self.texts + self.blobs + self.anything
        if k == "float":
            return self.floats + self.ints + self.anything
        if k == "int":
            return self.ints * 2 + self.anything
        return self.anything

    def calls(self, what, names, cands, extra):
        rnd = random.Random("%d %s" % (self.seed, what))
        for _ in range(self.per):
            yield build_call(rnd, names, cands, extra)

    def function(self, what, name, f):
        # both faces are classified by the drop-in face's docstring (its C
        # prototype); a function only cubind.cu has (launch) has none:
        # every parameter is then taken as a raw address
        sig, kinds_of = self.params(name, getattr(self.drv, name, f))
        names = list(sig.parameters)
        cands = [self.for_kind(kinds_of[n]) for n in names]
        return self.calls(what, names, cands, self.anything)

    def constructor(self, what, cls, public):
        if self.is_struct(cls):
            # The positional argument is the address of the struct's
            # storage; keywords set fields.
            return self.calls(what, public[:3] or ["x"], [self.raw] + [self.attr] * 2, self.attr)
        return self.calls(what, ["value"], [self.anything], self.anything)

    def attribute(self, what, attr):
        """Values a struct's attribute is set to."""
        rnd = random.Random("%d %s.%s" % (self.seed, what, attr))
        for _ in range(max(1, self.per // 8)):
            yield rnd.choice(self.attr)

    def method(self, what, on_struct):
        cands = [self.attr if on_struct else self.anything] * 2
        return self.calls(what, ["a", "b"], cands, self.attr)


class EveryCombination:
    """A fixed junk list given to every parameter: every combination of up
    to three arguments, then each rotation of the list for each count up to
    one more argument than the callable takes."""

    def __init__(self, values):
        self.values = values

    def refresh(self):
        pass

    @staticmethod
    def big(value):
        return False  # nothing of the list is: MemoryError is a failure

    @staticmethod
    def is_struct(cls):
        return False

    def calls(self, nparams):
        v = self.values
        for k in range(nparams + 2):
            if k <= 3:
                combos = itertools.product(v, repeat=k)
            else:
                combos = [tuple(v[(i + s) % len(v)] for i in range(k)) for s in range(len(v))]
            for args in combos:
                yield args, {}

    def function(self, what, name, f):
        return self.calls(len(inspect.signature(f).parameters))

    def constructor(self, what, cls, public):
        return self.calls(1)

    def method(self, what, on_struct):
        return self.calls(1)


# C integer types a library parameter may have by value: such a parameter
# takes ints (ByParam); any other by-value type is a handle, struct or
# pointer typedef, which gets no int.
C_INTS = {"int", "unsigned", "size_t", "uint32_t", "uint64_t", "int32_t", "int64_t", "long",
          "short", "char", "unsigned char", "unsigned short", "unsigned int", "unsigned long",
          "long long", "unsigned long long", "uint8_t", "uint16_t", "int8_t", "int16_t"}


def c_parameters(fn):
    """{python name: C type} of a generated function, from its docstring:
    the C prototype and each parameter's "The C parameter ``name``"."""
    doc = fn.__doc__ or ""
    m = re.search(r"C prototype::\s*\n\s*\n\s*(.+)", doc)
    if not m or "(" not in m.group(1):
        return {}
    proto = m.group(1)
    inner = proto[proto.index("(") + 1:proto.rindex(")")]
    types = {}
    for part in re.split(r",(?![^()]*\))", inner):
        words = part.strip()
        name = re.search(r"(\w+)\s*(\[\d*\])?$", words)
        if name:
            types[name.group(1)] = words[:name.start()].strip()
    mapping = re.findall(r"^(\w+) : .*\n\s+The C parameter ``(\w+)``", doc, re.M)
    return {py: types.get(c, "?") for py, c in mapping}


class ByParam(EveryCombination):
    """The library modules' junk, per parameter (issue 42 item 9): first
    every combination of the group's fixed list (EveryCombination, no int
    anywhere), then `per` random calls (seeded by the callable's name, in
    SHAPES) whose values suit each parameter's C type: edge ints, floats and
    the fixed list for an integer by value, members and ints for an enum,
    the fixed list (never an int: an address the library would follow) and
    a NULL handle of the annotation's class for anything else."""

    def __init__(self, values, seed, per):
        super().__init__(values)
        self.seed = seed
        self.per = per
        self.params = {}  # callable -> (parameter names, each one's candidates)
        self.ints = [0, 1, -1, 2, 255, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1, 2**63,
                     2**64, -2**63 - 1, True]

    @staticmethod
    def big(value):
        # a count of 2**31 or more may be refused for want of memory
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**20

    def kind_values(self, fn, name):
        ctype = c_parameters(fn).get(name, "?")
        base = re.sub(r"\b(const|struct|enum)\b", "", ctype).strip()
        ann = re.search(r"^%s : (.*)$" % re.escape(name), fn.__doc__ or "", re.M)
        ann = ann.group(1) if ann else ""
        mod = sys.modules[fn.__module__] if fn.__module__ in sys.modules else None
        # interned: CPython's attribute cache keeps the last name looked up,
        # which a fresh str per pass would count as a block leaked
        cls = getattr(mod, sys.intern(ann.split(" | ")[0].strip()), None) if mod else None
        if "*" not in base and base in C_INTS:
            return self.ints * 2 + [0.5, float("nan")] + self.values
        if "*" not in base and isinstance(cls, type) and hasattr(cls, "__members__"):
            return list(cls.__members__.values())[:4] + self.ints + self.values
        extra = [fresh(cls)] if isinstance(cls, type) else []
        return [v for v in extra if v is not None] + self.values

    def function(self, what, name, f):
        # worked out once per callable: inspect.signature of a builtin with
        # defaults looks names up as fresh strs (kept by the type attribute
        # cache), which the leak check's repeats would count
        if what not in self.params:
            names = list(inspect.signature(f).parameters)
            self.params[what] = names, [self.kind_values(f, n) for n in names]
        names, cands = self.params[what]
        yield from self.calls(len(names))
        rnd = random.Random("%d %s" % (self.seed, what))
        for _ in range(self.per):
            yield build_call(rnd, names, cands, self.values)


def blocks_grown(run):
    """How many more memory blocks are alive after run() than before it,
    each count after a collection (run's frame and its locals gone)."""
    gc.collect()
    before = sys.getallocatedblocks()
    run()
    gc.collect()
    return sys.getallocatedblocks() - before


class Sweep:
    def __init__(self, logfd, allowed, junk, crash_at, hang_at=None):
        self.logfd = logfd
        self.allowed = allowed
        self.junk = junk
        self.crash_at = crash_at
        self.hang_at = hang_at
        self.calls = 0
        self.outcomes = collections.Counter()
        self.failures = []
        self.swept = collections.Counter()  # callables per module
        self.kinds = collections.Counter()  # functions, classes, methods
        self.leak_checked = 0  # callables whose calls were repeated for leaks

    def call(self, what, f, args, kwargs):
        """One call of f, logged first; its outcome counted or recorded."""
        self.calls += 1
        os.write(self.logfd, ("%s #%d\n" % (what, self.calls)).encode())
        if what == self.crash_at:
            # SIGABRT, not a wild read: under ASan (tests/fuzz/test_python_asan.py)
            # a SIGSEGV becomes exit status 1, an abort stays a signal
            os.abort()
        if what == self.hang_at:
            while True:  # until the harness kills it
                time.sleep(60)
        try:
            f(*args, **kwargs)
        except self.allowed as e:
            self.outcomes[type(e).__name__] += 1
        except MemoryError:
            if any(self.junk.big(v) for v in list(args) + list(kwargs.values())):
                self.outcomes["MemoryError"] += 1
            else:
                self.failures.append((what, args, kwargs, traceback.format_exc()))
        except BaseException:
            self.failures.append((what, args, kwargs, traceback.format_exc()))
        else:
            self.outcomes["returned"] += 1

    leaks = False
    LEAK_CALLS = 400  # calls of a callable repeated by the leak check

    def check_leaks(self, what, f, calls):
        """The callable's first LEAK_CALLS calls again, three times (the
        junk is deterministic): the memory blocks alive
        (sys.getallocatedblocks, after a collection, less what measuring
        nothing gives) must not grow over both of the last two repeats, the
        first warming whatever caches them. A growth is a failure naming
        the callable."""
        def repeat():
            for args, kwargs in itertools.islice(calls(), self.LEAK_CALLS):
                self.call(what, f, args, kwargs)

        growth = [blocks_grown(repeat) - blocks_grown(lambda: None) for _ in range(3)]
        self.leak_checked += 1
        if growth[1] > 0 and growth[2] > 0:
            self.failures.append((what + " (leak check)", (), {},
                                  "memory blocks grew by %d and %d over two repeats of its "
                                  "first %d calls\n" % (growth[1], growth[2], self.LEAK_CALLS)))

    def each(self, what, f, calls):
        for args, kwargs in calls:
            self.call(what, f, args, kwargs)

    def module(self, modname, mod):
        """Every exported callable of mod; their names."""
        names = sorted(n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n)))
        for name in names:
            obj = getattr(mod, name)
            what = "%s.%s" % (modname, name)
            self.junk.refresh()
            if isinstance(obj, type):
                self.cls(what, obj)
            else:
                self.kinds["functions"] += 1
                self.each(what, obj, self.junk.function(what, name, obj))
                if self.leaks:
                    self.check_leaks(what, obj, lambda: self.junk.function(what, name, obj))
            self.swept[modname] += 1
            if len(self.failures) > 50:
                break
        return names

    def cls(self, what, cls):
        self.kinds["classes"] += 1
        junk = self.junk
        public = sorted(a for a in dir(cls) if not a.startswith("_"))
        self.each(what, cls, junk.constructor(what, cls, public))
        instance = instance_of(cls)
        on_struct = junk.is_struct(cls)
        if on_struct:
            for a in public:
                if callable(getattr(instance, a, None)):
                    continue
                for v in junk.attribute(what, a):
                    self.call("%s.%s=" % (what, a), setattr, (instance, a, v), {})
                self.call("%s repr" % what, repr, (instance,), {})
        for a in public:
            m = getattr(instance, a, None) if instance is not None else None
            if callable(m) and not isinstance(m, type):
                self.kinds["methods"] += 1
                mwhat = "%s().%s" % (what, a)
                self.each(mwhat, m, junk.method(mwhat, on_struct))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", choices=sorted(GROUPS), default="driver",
                    help="the group of modules to sweep (default: driver)")
    ap.add_argument("--log", required=True, help="each call is written here before it is made")
    ap.add_argument("--calls", type=int, default=60, help="driver: calls per callable and face")
    ap.add_argument("--seed", type=int, default=27, help="driver: the seed of the random calls")
    ap.add_argument("--leaks", action="store_true",
                    help="repeat each function's first calls and fail when the memory blocks "
                    "alive keep growing (Sweep.check_leaks)")
    ap.add_argument("--leak-calls", type=int, default=Sweep.LEAK_CALLS,
                    help="calls of each function the leak check repeats (default %(default)s)")
    ap.add_argument("--crash-at", metavar="NAME",
                    help="abort at the first call of NAME (as logged, without its number): "
                    "the harness's own test")
    ap.add_argument("--hang-at", metavar="NAME",
                    help="never return from the first call of NAME: the harness's own test "
                    "of a call that hangs")
    a = ap.parse_args()
    faulthandler.enable()
    logfd = os.open(a.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)

    group = GROUPS[a.modules]
    modules = [(name, importlib.import_module(name)) for name in group.modules]
    if group.junk is BY_KIND:
        junk = ByKind(a.seed, a.calls)
    else:
        junk = ByParam(group.junk, a.seed, a.calls)
    sw = Sweep(logfd, resolve(group.allowed), junk, a.crash_at, a.hang_at)
    sw.leaks = a.leaks
    sw.LEAK_CALLS = a.leak_calls
    exported = {modname: sw.module(modname, mod) for modname, mod in modules}

    try:
        usable = group.usable()
    except Exception:
        usable = None
        sw.failures.append(("the valid calls after the sweep", (), {}, traceback.format_exc()))

    total = sum(len(v) for v in exported.values())
    print("callables %d calls %d" % (total, sw.calls))
    for modname, names in exported.items():
        print("module %s callables %d swept %d" % (modname, len(names), sw.swept[modname]))
    print("swept functions %d classes %d methods %d"
          % (sw.kinds["functions"], sw.kinds["classes"], sw.kinds["methods"]))
    if sw.leaks:
        print("leak-checked functions %d" % sw.leak_checked)
    for k, v in sorted(sw.outcomes.items()):
        print("outcome %s %d" % (k, v))
    if usable:
        print("usable afterwards: " + usable)
    for what, args, kwargs, tb in sw.failures[:20]:
        print("FAILURE %s(*%.300s, **%.300s):\n%s" % (what, repr(args), repr(kwargs), tb))
    sys.stdout.flush()
    sys.stderr.flush()
    # The fake's stream workers may still hold Python callbacks: leave
    # without finalizing the interpreter under them.
    os._exit(1 if sw.failures else 0)


if __name__ == "__main__":
    main()
