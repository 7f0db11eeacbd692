# SPDX-License-Identifier: Apache-2.0
"""The snake_case library modules' targets of tools/compare_conversions.py:
cuda.bindings.nvvm / cubind.nvvm and cuda.bindings.nvfatbin /
cubind.nvfatbin (no driver, no device: they run wherever the library
loads). Their parameters are typed C ints, intptr_t and size_t in
cuda.bindings (Cython's conversions), an enum parameter a C int
(cubind's `enum-args-int` rule), a name a str.

A program or handle probed is always one the probe made, or a value that
converts to 0 (NULL: the library refuses it) or none at all; a size given
with a buffer never exceeds the buffer.
"""
import compare_conversions as cc

OPTION = "-arch=compute_90"


def usable(mod):
    """Whether the module's library loads (its version() answers)."""
    try:
        mod.version()
        return True
    except Exception:
        return False


def nvvm_ir(nv):
    """A module of NVVM IR text with one empty function and the IR
    version libnvvm reports."""
    major, minor, dbg_major, dbg_minor = nv.ir_version()
    return (b'target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-'
            b'i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"\n'
            b'target triple = "nvptx64-nvidia-cuda"\n\n'
            b"define void @cubind_probe_empty() {\nentry:\n  ret void\n}\n"
            b"!nvvmir.version = !{!0}\n!0 = !{i32 %d, i32 %d, i32 %d, i32 %d}\n"
            % (major, minor, dbg_major, dbg_minor))


def small_size(limit):
    """A size no larger than the buffer it goes with (or refused)."""
    def filt(label, fac):
        got = cc._conversions_of(fac)
        return got is not None and all(0 <= g <= limit for g in got)
    return filt


def option_lists(option):
    return [("list [str]", lambda: [option]), ("list [bytes]", lambda: [option.encode()]),
            ("tuple (str,)", lambda: (option,)), ("list [int]", lambda: [1]),
            ("list [None]", lambda: [None]), ("None", lambda: None), ("list []", lambda: [])]


def nvvm_targets(nv, values):
    """[(target, kind, setup, [(label, factory)], thunk)]."""
    ir = nvvm_ir(nv)

    def program(add=True):
        prog = nv.create_program()
        if add:
            nv.add_module_to_program(prog, ir, len(ir), "probe.ll")
        return prog

    def error_string(ctx, v):
        return nv.get_error_string(v)

    def add(which):  # then compiled: whether what arrived was the module
        def thunk(ctx, v):
            prog = program(add=False)
            try:
                args = [prog, ir, len(ir), "probe.ll"]
                args[which] = v
                nv.add_module_to_program(*args)
                try:
                    nv.compile_program(prog, 1, [OPTION])
                    return ["compiled", nv.get_compiled_result_size(prog) > 0]
                except Exception as e:
                    return ["added", cc.outcome_of(e)]
            finally:
                nv.destroy_program(prog)
        return thunk

    def ir_buffers():
        vals = [("bytes IR", lambda: ir), ("bytearray IR", lambda: bytearray(ir)),
                ("memoryview IR", lambda: memoryview(ir)), ("str IR", lambda: ir.decode()),
                ("None", lambda: None), ("int 0", lambda: 0), ("list [1]", lambda: [1])]
        try:
            import numpy as np
            vals.append(("np.ndarray uint8 IR", lambda: np.frombuffer(ir, dtype=np.uint8)))
        except ImportError:
            pass
        return vals

    def compile_(which):
        def thunk(ctx, v):
            prog = program()
            try:
                args = [prog, 1, [OPTION]]
                args[which] = v
                nv.compile_program(*args)
                return [nv.get_compiled_result_size(prog) > 0]
            finally:
                nv.destroy_program(prog)
        return thunk

    null = cc.null_handle
    return [
        ("nvvm:get_error_string.result", "enum", None, values, error_string),
        ("nvvm:add_module_to_program.prog", "handle", None,
         [(l, f) for l, f in values if null(l, f)], add(0)),
        ("nvvm:add_module_to_program.buffer", "buffer", None, ir_buffers(), add(1)),
        ("nvvm:add_module_to_program.size", "integer", None,
         [(l, f) for l, f in values if small_size(len(ir))(l, f)], add(2)),
        ("nvvm:add_module_to_program.name", "string", None, values, add(3)),
        ("nvvm:compile_program.num_options", "integer", None, values, compile_(1)),
        ("nvvm:compile_program.options", "list", None, option_lists(OPTION), compile_(2)),
    ]


def nvfatbin_targets(fb, values):
    """[(target, kind, setup, [(label, factory)], thunk)]: the handle's
    creation (its options and their count) and adding PTX to it."""
    ptx = cc.PTX + b"\0"

    def create(which):
        def thunk(ctx, v):
            args = [[], 0]
            if which == 1:
                args = [["-64"], v]
            else:
                args[0] = v
                args[1] = 1 if isinstance(v, (list, tuple)) and v else 0
            h = fb.create(*args)
            fb.destroy(h)
            return ["created"]
        return thunk

    def add_ptx(which):
        def thunk(ctx, v):
            h = fb.create([], 0)
            try:
                args = [h, ptx, len(ptx), "70", "probe", ""]  # the PTX targets sm_70
                args[which] = v
                fb.add_ptx(*args)
                return [fb.size(h) > 0]
            finally:
                fb.destroy(h)
        return thunk

    return [
        ("nvfatbin:create.options", "list", None, option_lists("-64"), create(0)),
        ("nvfatbin:create.options_count", "integer", None,
         [(l, f) for l, f in values if small_size(1)(l, f) or cc.conversions_refused(f)],
         create(1)),
        ("nvfatbin:add_ptx.size", "integer", None,
         [(l, f) for l, f in values if small_size(len(ptx))(l, f)], add_ptx(2)),
        ("nvfatbin:add_ptx.arch", "string", None, values, add_ptx(3)),
    ]
