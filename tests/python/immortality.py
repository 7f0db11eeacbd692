# SPDX-License-Identifier: Apache-2.0
"""Whether an object is immortal, the one test of it that the tests and
their child interpreters share (cbs_make_immortal, runtime/include/
cubind_compat.h)."""
import sys


def immortal(o, n=100):
    """True when taking n references leaves o's count as it is, False when
    it grows by exactly n (anything else fails). From 3.14 CPython answers
    too (sys._is_immortal), and the two answers must agree."""
    before = sys.getrefcount(o)
    refs = [o] * n
    grew = sys.getrefcount(o) - before
    del refs
    assert grew in (0, n), (o, grew)
    if hasattr(sys, "_is_immortal"):
        assert sys._is_immortal(o) == (grew == 0), (o, grew)
    return grew == 0
