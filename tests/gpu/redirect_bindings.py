# SPDX-License-Identifier: Apache-2.0
"""cuda.bindings modules replaced by cubind's, for runs of other projects'
code on the GPU machine (cuda-python's own tests, client libraries such as
numba-cuda): the one place that knows how the redirect is done.

redirect(names, keep) imports cuda.bindings' modules named in `keep` first
(so that they, and whatever imports them, keep the real modules they were
built against), then for every name in `names` puts cubind's module of that
name in sys.modules["cuda.bindings.<name>"] and on the `cuda.bindings`
package (what `import cuda.bindings.driver as cuda` and `from cuda.bindings
import driver` read). Code imported after the redirect sees cubind; code
imported before keeps what it already holds.

As a pytest plugin (`-p redirect_bindings`), it redirects when
CUBIND_UPSTREAM_IMPL is "cubind" (any other value leaves cuda.bindings
alone), the modules named in CUBIND_REDIRECT (comma-separated, default
"driver"), keeping those in CUBIND_REDIRECT_KEEP (comma-separated module
paths, default none), and names them in pytest's report header."""
import importlib
import os
import sys

import cuda.bindings


def redirect(names, keep=()):
    """Redirects cuda.bindings.<name> to cubind.<name> for each of `names`,
    after importing every module path in `keep`."""
    for path in keep:
        importlib.import_module(path)
    for name in names:
        module = importlib.import_module("cubind." + name)
        sys.modules["cuda.bindings." + name] = module
        setattr(cuda.bindings, name, module)


def describe(names):
    """One line: which module each cuda.bindings.<name> is now."""
    return ", ".join("cuda.bindings.%s = %s (%s)" % (
        n, sys.modules["cuda.bindings." + n].__name__,
        getattr(sys.modules["cuda.bindings." + n], "__file__", "?")) for n in names)


def _env_list(variable, default):
    return [s for s in os.environ.get(variable, default).split(",") if s]


PLUGIN_NAMES = _env_list("CUBIND_REDIRECT", "driver")


def pytest_configure(config):
    if os.environ.get("CUBIND_UPSTREAM_IMPL") == "cubind":
        redirect(PLUGIN_NAMES, _env_list("CUBIND_REDIRECT_KEEP", ""))


def pytest_report_header(config):
    for name in PLUGIN_NAMES:
        importlib.import_module("cuda.bindings." + name)
    return describe(PLUGIN_NAMES)
