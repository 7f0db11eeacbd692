# SPDX-License-Identifier: Apache-2.0
"""What each parameter of a generated function is, and a pool of valid
driver objects on the test-only fake driver: shared by the hypothesis fuzz
(fuzz_bindings.py, main interpreter, ASan) and the junk sweep
(junk_sweep.py, every interpreter). No dependency beyond the standard
library and cubind.

Parameters that take a raw address are found from the C prototype in each
docstring (`void *`, `void **`, function-pointer typedefs of cuda.h) and, as
a safety net, from the generated code (the parameters converted by
cbs_arg_address / cbs_arg_buffer) and gen/rules.txt (kernel-params,
kernel-extra, callback): those are never given an int (nor anything whose
getPtr() or int value the bindings would turn into an address), which the
fake driver would dereference or call.
"""
import ctypes
import inspect
import os
import pathlib
import re
import sys

import cubind
import cubind.driver as drv

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from module_units import module_source  # noqa: E402  (a generated module's C, every unit)
sys.path.pop(0)

# Outcomes a junk call may have besides returning.
# IndexError: a fixed array field set from a sequence of another length
# (as cuda.bindings raises it).
ALLOWED = (TypeError, ValueError, OverflowError, IndexError, cubind.CUDAError,
           cubind.FunctionNotFoundError)
# MemoryError is allowed only when an argument is an int of at least this
# size (a count the bindings must allocate for) or a long sequence.
BIG = 1 << 20


def big(v):
    if isinstance(v, int):
        return abs(v) >= BIG
    if isinstance(v, (list, tuple)):
        return len(v) >= BIG or any(big(x) for x in v)
    return False


def config(name):
    for line in (ROOT / "build" / "config.ninja").read_text().splitlines():
        if line.startswith(name + " = "):
            return line.split(" = ", 1)[1]
    raise KeyError(name)


# ---- what each parameter is -------------------------------------------------

def funcptr_typedefs():
    text = (pathlib.Path(config("cuda_include")) / "cuda.h").read_text(errors="replace")
    return set(re.findall(r"typedef\s+[\w\s\*]+?\(\s*(?:CUDA_CB\s*)?\*\s*(\w+)\s*\)\s*\(", text))


def rules():
    renames, raw = {}, set()
    for line in (ROOT / "gen" / "rules.txt").read_text().splitlines():
        w = line.split("#", 1)[0].split()
        if not w:
            continue
        if w[0] == "rename-param" and len(w) == 3:
            renames[w[2]] = w[1]
        elif w[0] == "rename-param-in" and len(w) == 4:
            renames[(w[1], w[3])] = w[2]  # one function's parameter
        elif w[0] in ("kernel-params", "kernel-extra") and len(w) >= 3:
            raw.add((w[1], w[2]))
        elif w[0] == "callback" and len(w) >= 4:
            raw.add((w[1], w[2]))
            raw.add((w[1], w[3]))
    return renames, raw


def generated_raw():
    """(function, python name) of parameters the generated code converts
    with cbs_arg_address, cbs_arg_buffer or cbs_arg_funcptr (all accept an
    int address)."""
    text = module_source(ROOT / "out", "driver")
    return set(re.findall(
        r'cbs_arg_(?:address|buffer|funcptr)\(args\[\d+\], (?:st->handles\[\w+\], )?(?:\d, )?'
        r'"(\w+)", "(\w+)"', text))


def c_params(fn_name, doc):
    """[(c type, c name)] from the C prototype line of a docstring."""
    m = re.search(r"^\w[\w\s\*]*\b" + re.escape(fn_name) + r"\((.*)\)\s*$", doc or "", re.M)
    if not m:
        return None
    out = []
    for p in m.group(1).split(","):
        p = p.strip()
        if not p or p == "void":
            continue
        pm = re.match(r"^(.*?)(\w+)\s*(\[\s*\d*\s*\])?$", p)
        out.append((pm.group(1).strip() + (" *" if pm.group(3) else ""), pm.group(2)))
    return out


class Kinds:
    def __init__(self):
        self.handles, self.structs, self.enums = {}, {}, {}
        for n in dir(drv):
            o = getattr(drv, n)
            if not isinstance(o, type):
                continue
            if issubclass(o, int) and hasattr(o, "__members__"):
                self.enums[n] = o
            elif hasattr(o, "getPtr"):
                fields = [a for a in dir(o) if not a.startswith("_") and a != "getPtr"]
                (self.structs if fields else self.handles)[n] = o


def classify(kinds, fpt, renames, raw_rules, raw_gen, name, fn):
    """{python param name: kind}; kind is ("raw",), ("handle", cls),
    ("struct", cls), ("enum", cls), ("int",), ("float",), ("str",), ("any",)."""
    sig = inspect.signature(fn)
    cps = c_params(name, fn.__doc__) or []
    by_name = {c: t for t, c in cps}
    kinds_of = {}
    for p in sig.parameters:
        ctype = by_name.get(p) or by_name.get(renames.get((name, p), renames.get(p, "")), None)
        if ctype is None or (name, p) in raw_rules or (name, p) in raw_gen:
            kinds_of[p] = ("raw",)  # unknown is treated as the dangerous kind
            continue
        base = re.sub(r"\bconst\b", "", ctype).replace("*", " ").split()
        base = base[-1] if base else ""
        stars = ctype.count("*")
        if base == "void" or base in fpt or base.startswith("PFN_"):
            kinds_of[p] = ("raw",)
        elif base in kinds.handles and stars == 0:
            kinds_of[p] = ("handle", kinds.handles[base])
        elif base in kinds.structs:
            kinds_of[p] = ("struct", kinds.structs[base])
        elif base in kinds.enums and stars == 0:
            kinds_of[p] = ("enum", kinds.enums[base])
        elif base == "char" and stars == 1:
            kinds_of[p] = ("str",)
        elif base in ("float", "double") and stars == 0:
            kinds_of[p] = ("float",)
        elif stars == 0:
            kinds_of[p] = ("int",)
        else:
            kinds_of[p] = ("any",)  # arrays of values, in/inout pointers
    return sig, kinds_of


# ---- the fake driver and a pool of valid objects ----------------------------

class Pool:
    def __init__(self):
        self.fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
        self.handles = []   # valid handle objects
        self.ctx = None

    def refresh(self):
        """Makes a fresh context, stream, event, module and its function,
        library and kernel, graph (the fuzz may have destroyed the last ones).

        The old ones are left to the fake: fakecuda_reset is never called,
        as it frees objects twice when a library or module it frees owned
        kernels or functions it visits later (tests/fuzz/README.md)."""
        drv.cuInit(0)
        self.handles = []
        r = drv.cuDeviceGet(0)
        self.handles.append(r[1])
        r = drv.cuCtxCreate(None, 0, r[1])
        self.ctx = r[1]
        self.handles.append(self.ctx)
        for call in (lambda: drv.cuStreamCreate(0), lambda: drv.cuEventCreate(0),
                     lambda: drv.cuModuleLoadData(b"fuzz-module\0"),
                     lambda: drv.cuLibraryLoadData(b"fuzz-library\0", None, None, 0, None, None, 0),
                     lambda: drv.cuGraphCreate(0)):
            try:
                r = call()
            except Exception:
                continue
            if r[0] == 0:
                self.handles.append(r[1])
        for h in list(self.handles):
            try:
                if type(h).__name__ == "CUmodule":
                    r = drv.cuModuleGetFunction(h, b"fuzz_kernel")
                elif type(h).__name__ == "CUlibrary":
                    r = drv.cuLibraryGetKernel(h, b"fuzz_kernel")
                else:
                    continue
                if r[0] == 0:
                    self.handles.append(r[1])
            except Exception:
                pass

    def current(self):
        drv.cuCtxSetCurrent(self.ctx)


def is_function(module, n):
    """The generated functions: callables named cu* that are not classes
    (cuuint32_t and friends are types)."""
    o = getattr(module, n)
    return n.startswith("cu") and callable(o) and not isinstance(o, type)


def classifier():
    """(kinds, params): the module's classes by kind, and params(name, fn)
    -> (signature, {parameter: kind}) as classify() gives them."""
    kinds = Kinds()
    fpt = funcptr_typedefs()
    renames, raw_rules = rules()
    raw_gen = generated_raw()

    def params(name, fn):
        return classify(kinds, fpt, renames, raw_rules, raw_gen, name, fn)

    return kinds, params
