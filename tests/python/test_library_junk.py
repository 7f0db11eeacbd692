# SPDX-License-Identifier: Apache-2.0
"""The junk sweep over cubind.nvrtc, cubind.rtc and cubind.nvjitlink: every
function called with every combination of junk arguments (up to three, and
one more than each takes), on the real libraries, in a child process (a
crash fails it): each call returns, or raises TypeError, ValueError,
OverflowError or the API's own error. Ints are left out: a handle given
as an int is an address the library dereferences, in cuda.bindings as
here (the hypothesis fuzz of tests/fuzz keeps to the same rule)."""
from conftest import run_python
from nvrtc_common import nvrtc  # noqa: F401

SWEEP = """
import itertools, inspect
import cubind, cubind.nvrtc as n, cubind.rtc as rtc, cubind.nvjitlink as j
JUNK = [None, "junk", b"junk", 1.5, object(), [], [None], (b"a",), bytearray(4), "a\\0b"]
ALLOWED = (TypeError, ValueError, OverflowError, cubind.NVRTCError, cubind.nvJitLinkError)
calls, functions = 0, 0
for mod in (n, rtc, j):
    for name in sorted(dir(mod)):
        f = getattr(mod, name)
        if name.startswith("_") or isinstance(f, type) or not callable(f):
            continue
        functions += 1
        nparams = len(inspect.signature(f).parameters)
        for k in range(nparams + 2):
            combos = (itertools.product(JUNK, repeat=k) if k <= 3
                      else [tuple(JUNK[(i + s) % len(JUNK)] for i in range(k)) for s in range(len(JUNK))])
            for args in combos:
                calls += 1
                try:
                    f(*args)
                except ALLOWED:
                    pass
print(functions, calls)
"""


def test_junk_arguments_give_clean_outcomes(nvrtc):
    r = run_python(SWEEP)
    assert r.returncode == 0, r.stderr[-3000:]
    functions, calls = map(int, r.stdout.split())
    assert functions == 24 + 24 + 14  # both nvrtc faces and nvjitlink
    assert calls > 20000
