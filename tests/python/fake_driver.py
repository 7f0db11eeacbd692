# SPDX-License-Identifier: Apache-2.0
"""The test-only fake driver (tests/fakecuda) through ctypes: its control
functions with their prototypes. The tests' fake fixture (conftest.py) and
the fresh interpreters they start (conftest.run_python puts this directory
on their path) open it here, so every prototype is declared once."""
import ctypes
import os


def open_fake(path=None):
    """The fake driver at `path` (default: CUBIND_LIBCUDA, as tests/run sets
    it) with the prototypes of the control functions the tests call."""
    lib = ctypes.CDLL(path or os.environ["CUBIND_LIBCUDA"])
    lib.fakecuda_call_count.restype = ctypes.c_longlong
    lib.fakecuda_call_count.argtypes = [ctypes.c_char_p]
    lib.fakecuda_last_proc_version.argtypes = [ctypes.c_char_p]
    lib.fakecuda_last_proc_flags.restype = ctypes.c_longlong
    lib.fakecuda_last_proc_flags.argtypes = [ctypes.c_char_p]
    lib.fakecuda_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.fakecuda_live_handles.restype = ctypes.c_longlong
    lib.fakecuda_pending_destructors.restype = ctypes.c_longlong
    # kernels and the bytes their launches received (the packer's tests)
    lib.fakecuda_set_param_layout.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                              ctypes.c_void_p, ctypes.c_void_p]
    lib.fakecuda_last_launch_params.restype = ctypes.c_longlong
    lib.fakecuda_last_launch_params.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.fakecuda_launch_count.restype = ctypes.c_longlong
    lib.fakecuda_launch_count.argtypes = [ctypes.c_char_p]
    # what the copies and graph nodes received (test_host_buffers, test_nested_counts)
    lib.fakecuda_last_copy_box.restype = ctypes.c_longlong
    lib.fakecuda_last_copy_box.argtypes = [ctypes.c_void_p]
    lib.fakecuda_last_ext_sems.restype = ctypes.c_longlong
    lib.fakecuda_last_ext_sems.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib
