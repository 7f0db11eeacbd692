# SPDX-License-Identifier: Apache-2.0
"""The files of a generated module, for the tests that read or compile the
generated C (tests/gen, tests/abi, tests/fuzz): `<module>.c`, the main
translation unit, `<module>_part1.c` .. `<module>_part<N-1>.c` when its
rules split it (`parts N`), and `<module>_internal.h`, what they share
(docs/ARCHITECTURE.md, "Translation units")."""
import os
import re


def unit_files(directory, module):
    """The translation units of `module` in `directory`: the main one
    first, then the parts in their order."""
    parts = []
    pattern = re.compile(r"^%s_part(\d+)\.c$" % re.escape(module))
    for name in os.listdir(directory):
        m = pattern.match(name)
        if m:
            parts.append((int(m.group(1)), name))
    return [os.path.join(directory, module + ".c")] + [
        os.path.join(directory, name) for _, name in sorted(parts)]


def module_files(directory, module):
    """The shared header, then every translation unit."""
    return [os.path.join(directory, module + "_internal.h")] + unit_files(directory, module)


def module_source(directory, module):
    """The module's whole C text: its header and units, concatenated in
    module_files' order (what one translation unit held before the split)."""
    text = []
    for path in module_files(directory, module):
        with open(path, encoding="utf-8") as f:
            text.append(f.read())
    return "".join(text)
