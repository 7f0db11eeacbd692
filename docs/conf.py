# SPDX-License-Identifier: Apache-2.0
# conf.py — the documentation site (`ninja docs`: build/docs/html).
#
# The pages are docs/*.md as they are (MyST), the index and the benchmark
# page. The API reference is not written here: docs/_ext/cubind_api.py
# writes one page per module of the built package (build/python/cubind,
# every typing stub there: the modules out/ holds) whose body is autodoc of
# that module, so every entry is the docstring the generator emitted from
# templates/ (parameters, returns, raises, C prototype). The benchmark
# page's plot is drawn from the committed raw results
# (docs/_ext/cubind_benchplot.py). Warnings are errors (build.ninja: -W).
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(here, "_ext"))

with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
    release = version = re.search(r'^version = "(.*)"', f.read(), re.M).group(1)

project = "cubind"
copyright = "the cubind authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon",
              "cubind_api", "cubind_benchplot"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_ext", "compare-reference.txt"]
root_doc = "index"
html_theme = "alabaster"
html_title = "cubind %s" % release
html_theme_options = {"description": "CUDA bindings generated in plain C",
                      "page_width": "1100px", "sidebar_width": "250px"}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
html_show_sourcelink = False

# Headings get anchors, so that `page.md#section` links resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The docstrings are reST with numpydoc sections.
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
autodoc_default_options = {"members": True, "undoc-members": True}
# The extensions' signatures (__text_signature__) are what autodoc shows.
autodoc_typehints = "none"

# Files of the repository's root that a page includes, as the page that
# shows them: a link to the file (README.md's to BENCHMARKS.md) goes there.
ROOT_FILES = {"BENCHMARKS.md": "benchmarks"}


def root_file_link(app, env, node, contnode):
    from sphinx.util.nodes import make_refnode
    target = node.get("reftarget", "")
    page = ROOT_FILES.get(os.path.basename(target.split("#")[0]))
    if page is None or os.path.normpath(os.path.join(root, target.split("#")[0])) != \
            os.path.join(root, os.path.basename(target.split("#")[0])):
        return None
    return make_refnode(app.builder, node["refdoc"], page, "", contnode)


def setup(app):
    app.connect("missing-reference", root_file_link)
    # The raising faces share the drop-in face's classes, and the runtime
    # declares a few of the driver's struct names (CUuuid_st): a type named
    # in a raising face's docstring is then found in two modules, which
    # the Python domain reports (and links the first). Only that report is
    # silenced: a missing page, include or toctree entry still fails -W.
    app.config.suppress_warnings = ["ref.python"]
