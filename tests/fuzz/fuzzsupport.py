# SPDX-License-Identifier: Apache-2.0
"""Helpers of tests/fuzz (imported by its tests and conftest.py): the sanitizer builds (tests/fuzz/build_asan.py,
built by `ninja fuzz`) and how to run things under them."""
import os
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
ASAN_PY = BUILD / "asan" / "python"
ASAN_CUBIND = BUILD / "asan" / "cubind"

# What a sanitizer prints when it found something (never a WARNING line:
# allocator_may_return_null=1 prints one per refused huge allocation).
REPORT = re.compile(r"ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|"
                    r"SUMMARY: \w+Sanitizer|AddressSanitizer: CHECK failed")


def config(name):
    for line in (BUILD / "config.ninja").read_text().splitlines():
        if line.startswith(name + " = "):
            return line.split(" = ", 1)[1]
    raise KeyError(name)


def libasan():
    """The ASan runtime the sanitized extensions were linked against."""
    cc = config("cc")
    path = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert os.path.isabs(path) and os.path.exists(path), "%s has no libasan.so" % cc
    return path


def asan_python_env(**extra):
    """Environment for a Python process running the sanitized extensions
    against the fake driver."""
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=libasan(),
        # Python leaks at exit; huge allocations the fuzz asks for must fail
        # with NULL (MemoryError / CUDA_ERROR_OUT_OF_MEMORY), not abort.
        ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=0",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        PYTHONMALLOC="malloc",  # every object allocation seen by ASan
        PYTHONPATH=str(ASAN_PY),
        CUBIND_LIBCUDA=str(BUILD / "fakecuda" / "libcuda.so.1"),
        PYTHONDONTWRITEBYTECODE="1",
        CUBIND_UNDER_ASAN="1",  # tests/python/conftest.py: no memory counts
    )
    env.update(extra)
    return env


def sanitizer_report(text):
    m = REPORT.search(text)
    return text[max(0, m.start() - 200):m.start() + 4000] if m else None
