# SPDX-License-Identifier: Apache-2.0
"""Interned handles (the `intern` rules of gen/rules.txt; runtime/module/
bind_intern.h): on a free-threaded build, in the main interpreter, every
output of a CUdevice, CUfunction or CUkernel holding one value is one shared
immortal object, which __init__ refuses; the table is bounded. On a GIL build
every output is a new object, as before."""
import re
import sys
import sysconfig
import threading

import pytest

from conftest import ROOT, fake_function, run_python
from immortality import immortal

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
ft_only = pytest.mark.skipif(not FREE_THREADED, reason="interning is for free-threaded builds")


def intern_max():
    """CBS_INTERN_MAX, read from the one place that defines it."""
    text = (ROOT / "runtime" / "module" / "bind_intern.h").read_text()
    slots = int(re.search(r"#define CBS_INTERN_SLOTS (\d+)u", text).group(1))
    assert "#define CBS_INTERN_MAX (CBS_INTERN_SLOTS / 2)" in text
    return slots // 2


def test_device_kernel_and_function_outputs(ctx, drv):
    import cubind.cu as cu
    dev = [drv.cuDeviceGet(0)[1], drv.cuDeviceGet(0)[1], cu.cuDeviceGet(0), cu.cuCtxGetDevice()]
    f = fake_function(drv, b"interned_fn")
    mod = cu.cuFuncGetModule(f)
    funcs = [f, cu.cuModuleGetFunction(mod, b"interned_fn"), drv.cuModuleGetFunction(mod, b"interned_fn")[1]]
    lib = cu.cuLibraryLoadData(b"library with interned_k\0", None, None, 0, None, None, 0)
    kerns = [cu.cuLibraryGetKernel(lib, b"interned_k"), drv.cuLibraryGetKernel(lib, b"interned_k")[1]]
    ctxs = [cu.cuCtxGetCurrent(), cu.cuCtxGetCurrent()]  # not an interned class
    for group in (dev, funcs, kerns):
        assert len({int(o) for o in group}) == 1
        if FREE_THREADED:
            assert all(o is group[0] for o in group), group
            assert immortal(group[0])
        else:
            assert len({id(o) for o in group}) == len(group), group
            assert not immortal(group[0])
    assert ctxs[0] is not ctxs[1] and not immortal(ctxs[0])
    cu.cuLibraryUnload(lib)


def test_init_refuses_an_interned_handle_only(drv):
    import cubind.cu as cu
    dev = cu.cuDeviceGet(0)
    if FREE_THREADED:
        with pytest.raises(TypeError, match=r"CUdevice.__init__\(\): this object is shared"):
            dev.__init__(1)
        assert int(dev) == 0 and int(cu.cuDeviceGet(0)) == 0
    own = cu.CUdevice(dev)  # the constructor always makes the caller's own object
    assert own is not dev and not immortal(own)
    own.__init__(1)
    assert int(own) == 1 and int(dev) == 0


@pytest.mark.tsan
@ft_only
def test_threads_racing_to_intern_get_one_object_per_value(ctx, drv):
    import cubind.cu as cu
    mod = cu.cuFuncGetModule(fake_function(drv, b"race_base"))
    names = [b"race_%d" % i for i in range(16)]
    n = 8
    got = [None] * n
    barrier = threading.Barrier(n)

    def body(i):
        cu.cuCtxSetCurrent(ctx)
        barrier.wait()
        got[i] = ([cu.cuDeviceGet(0) for _ in range(20)] +
                  [cu.cuModuleGetFunction(mod, name) for name in names])

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for k in range(len(got[0])):
        assert all(g[k] is got[0][k] for g in got), k
    assert all(immortal(o) for o in got[0])


@ft_only
def test_the_table_is_bounded_and_later_outputs_are_mortal():
    """Past CBS_INTERN_MAX objects an output is a new, mortal object each
    time (freed when dropped); modules loaded and unloaded again and again
    add nothing to the table (a fresh process: the table fills up)."""
    limit = intern_max()
    proc = run_python(
        "import sys, cubind.cu as cu\n"
        "from immortality import immortal\n"
        "cu.cuInit(0); dev = cu.cuDeviceGet(0)\n"
        "cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(dev))\n"
        "mod = cu.cuModuleLoadData(b'many functions\\0')\n"
        "fs = [cu.cuModuleGetFunction(mod, b'f%%d' %% i) for i in range(%d)]\n"
        "assert len({int(f) for f in fs}) == len(fs)\n"
        "kept = [f for f in fs if immortal(f)]\n"
        "assert len(kept) == %d - 1, len(kept)  # device 0 holds a slot\n"
        "assert kept == fs[:len(kept)]\n"
        "late = fs[-1]\n"
        "again = cu.cuModuleGetFunction(mod, b'f%%d' %% (len(fs) - 1))\n"
        "assert again is not late and int(again) == int(late) and not immortal(late)\n"
        "assert sys.getrefcount(again) == 2  # only `again` and the call's argument\n"
        "assert cu.cuModuleGetFunction(mod, b'f0') is fs[0]\n"
        "for i in range(50):  # churn: nothing more is interned\n"
        "    m = cu.cuModuleLoadData(b'churn\\0')\n"
        "    g = cu.cuModuleGetFunction(m, b'k')\n"
        "    assert not immortal(g)\n"
        "    cu.cuModuleUnload(m)\n"
        "print('ok')\n" % (limit + 100, limit))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@ft_only
def test_a_subinterpreter_interns_nothing():
    proc = run_python(
        "import _interpreters as I\n"
        "i = I.create()\n"
        "I.run_string(i, 'import sys, cubind.cu as cu\\n'\n"
        "  'cu.cuInit(0); a = cu.cuDeviceGet(0); b = cu.cuDeviceGet(0)\\n'\n"
        "  'assert a is not b and int(a) == int(b) == 0\\n'\n"
        "  'a.__init__(1)\\n'\n"
        "  'assert int(a) == 1 and int(b) == 0')\n"
        "I.destroy(i)\n"
        "print('ok')\n")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
