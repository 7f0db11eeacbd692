# SPDX-License-Identifier: Apache-2.0
"""Free-threading rule 3 of docs/design.md, checked on the built extensions: no
state duplicated across extension modules. The shared runtime (loader,
registry, deferred queue, callbacks: runtime/process/) is compiled into
cubind._runtime alone and reached through its capsule; a second copy in
the driver extension would be a second registry, queue, loader and set of
runners. The symbol tables (`nm --defined-only`, which lists static
functions and variables too: the modules are built with -g and not
stripped) show what each object file put into each module."""
import shutil
import subprocess

import pytest

import cubind._runtime
import cubind.driver
from conftest import symbols_file

# The runtime's own names: every global function and variable of
# runtime/process/ starts with one of these (or is static with one of them).
RUNTIME_PREFIXES = ("rt_registry_", "rt_queue_", "rt_cb_", "rt_h_", "rt_loader", "rt_drv",
                    "rt_interps", "rt_api", "cubind_rt_", "pc_")

# What the toolchain (crt files) puts into every shared object.
TOOLCHAIN = {"_DYNAMIC", "_GLOBAL_OFFSET_TABLE_", "__FRAME_END__", "__GNU_EH_FRAME_HDR",
             "__TMC_END__", "__do_global_dtors_aux", "__do_global_dtors_aux_fini_array_entry",
             "__dso_handle", "__frame_dummy_init_array_entry", "_fini", "_init", "completed.0",
             "deregister_tm_clones", "frame_dummy", "register_tm_clones", "__bss_start",
             "_edata", "_end"}
# ... and, in the sanitizer builds, their per-object constructors.
TOOLCHAIN_PREFIXES = ("_sub_I_", "_sub_D_", "_GLOBAL__sub_", "__asan", "__ubsan", "__tsan",
                      "tsan.module_", "asan.module_", "__odr_asan.",
                      "__sanitizer")
# Defined in both modules by design: in the fault-injection builds
# (-DCUBIND_FAULT_INJECTION, tests/fuzz) each module's pointer to the one
# allocation-fault state, which lives in _runtime (runtime/include/rt_alloc.h).
PER_MODULE_POINTERS = {"rt_alloc_state"}

pytestmark = pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")


def defined(path):
    out = subprocess.run(["nm", "--defined-only", symbols_file(path)], check=True,
                         capture_output=True,
                         text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2].split("@", 1)[0])
    return names


def runtime_names(names):
    return {n for n in names if n.startswith(RUNTIME_PREFIXES)}


def test_the_runtime_is_defined_in_runtime_alone():
    rt = defined(cubind._runtime.__file__)
    drv = defined(cubind.driver.__file__)
    # the check sees the runtime's symbols where they belong
    assert {"rt_registry_register", "rt_queue_push", "rt_queue_drain", "rt_cb_new",
            "rt_h_register", "cubind_rt_load", "rt_api"} <= rt
    assert not runtime_names(drv), sorted(runtime_names(drv))
    # and nothing else of _runtime's objects either (the driver module's
    # own helpers are cbs_* and its generated functions)
    # (CPython's static inline functions compiled out of line in each
    # module, e.g. "Py_DECREF.part.0", are code, not state)
    shared = {n for n in (rt & drv) - TOOLCHAIN - PER_MODULE_POINTERS
              if not n.startswith(("Py", "_Py") + TOOLCHAIN_PREFIXES)}
    assert not shared, sorted(shared)


@pytest.mark.parametrize("module", ["cubind.nvrtc", "cubind.nvjitlink", "cubind.nvvm",
                                    "cubind.nvfatbin", "cubind.cufile", "cubind.nvml"])
def test_library_modules_hold_no_runtime_state(module):
    """The library APIs' modules reach the runtime through its capsule too;
    their own loader state (runtime/library/) is per module: one
    library each."""
    import importlib

    rt = defined(cubind._runtime.__file__)
    lib = defined(importlib.import_module(module).__file__)
    assert "cbs_library_resolve" in lib  # the check sees the module's own code
    assert not runtime_names(lib), sorted(runtime_names(lib))
    shared = {n for n in (rt & lib) - TOOLCHAIN - PER_MODULE_POINTERS
              if not n.startswith(("Py", "_Py") + TOOLCHAIN_PREFIXES)}
    assert not shared, sorted(shared)
