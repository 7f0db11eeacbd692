# SPDX-License-Identifier: Apache-2.0
"""The API reference pages: one per module of the built package.

The modules are those with a typing stub in the built package
(build/python/cubind/*.pyi, copied from out/ by ninja: one per face of each
API the build generated) but cubind's private ones. Each page is autodoc of
that module (docs/api/<module>.rst, written at the start of the build,
ignored by git): its entries are the extension's own docstrings, which the
generator renders from templates/driver/docstring.c.tmpl, so the reference
says what help() says and nothing is written twice. The raising faces
share the drop-in face's classes; their pages list their functions only.
"""
import importlib
import os

PACKAGE_DIR_ENV = "CUBIND_DOCS_PACKAGE"   # the built package (build.ninja sets it)

PAGE = """\
.. bindings: {digest}

{title}
{rule}

.. automodule:: {module}
   :members:
   :undoc-members:
"""


def modules(package_dir):
    """The public modules of the package: its stubs' names, sorted, the
    drop-in faces first (driver before cu)."""
    names = sorted(f[:-len(".pyi")] for f in os.listdir(package_dir)
                   if f.endswith(".pyi") and not f.startswith("_"))
    if not names:
        raise RuntimeError("no typing stubs in %s: build the bindings first (ninja)" % package_dir)
    return names


def bindings_digest(package_dir):
    """A digest of the package's extensions and stubs for this interpreter.
    Each page carries it, so that a rebuilt module changes its page and an
    incremental build reads the page (and its docstrings) again."""
    import hashlib
    import sysconfig
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    h = hashlib.sha256()
    for name in sorted(os.listdir(package_dir)):
        if name.endswith((suffix, ".pyi")):
            h.update(name.encode() + b"\0")
            with open(os.path.join(package_dir, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def describe(module):
    """The first line of a module's docstring, as the page's title."""
    m = importlib.import_module("cubind." + module)
    first = (m.__doc__ or "").strip().splitlines()
    return "cubind.%s" % module + (": " + first[0].rstrip(".") if first else "")


def write_pages(app):
    package_dir = os.environ.get(PACKAGE_DIR_ENV)
    if not package_dir:
        raise RuntimeError("%s is not set: build the site with `ninja docs`" % PACKAGE_DIR_ENV)
    out = os.path.join(app.srcdir, "api")
    os.makedirs(out, exist_ok=True)
    names = modules(package_dir)
    wanted = {"index.rst"} | {n + ".rst" for n in names}
    for stale in set(os.listdir(out)) - wanted:
        os.remove(os.path.join(out, stale))
    digest = bindings_digest(package_dir)
    pages = {n + ".rst": PAGE.format(digest=digest, title=describe(n),
                                     rule="=" * len(describe(n)), module="cubind." + n)
             for n in names}
    pages["index.rst"] = ("API reference\n=============\n\n"
                          "Every module, generated from the same model as the bindings: each\n"
                          "entry is the module's own docstring (``help()``).\n\n"
                          ".. toctree::\n   :maxdepth: 1\n\n" +
                          "".join("   %s\n" % n for n in names))
    for name, text in pages.items():
        path = os.path.join(out, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:   # unchanged pages keep their time: Sphinx rebuilds only changed ones
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
