# SPDX-License-Identifier: Apache-2.0
"""The documentation site (issue 43): `ninja docs` builds it with warnings
as errors (build.ninja's sphinx rule; `ninja test` builds it first), and
here it is opened in headless Chromium (Debian's): the index and an API
page render, the search (JavaScript) finds cuMemAlloc, every function and
class of every module has its entry, no internal link is broken, and the
benchmark plot is drawn from the committed results."""
import gzip
import html
import importlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "docs" / "html"
PACKAGE = ROOT / "build" / "python" / "cubind"
sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import cubind_api  # noqa: E402
import cubind_benchplot  # noqa: E402
import linkcheck  # noqa: E402


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        pytest.fail("no site in %s: build it with `ninja docs`" % SITE)
    return SITE


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no Chromium (./configure installs Debian's chromium)")


def dom(page, query=""):
    """The DOM of a page after its scripts ran (headless Chromium)."""
    url = (SITE / page).as_uri() + query
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=20000", "--dump-dom", url],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_index_renders(site):
    d = dom("index.html")
    assert "<title>cubind" in d
    assert "binding generator" in d    # README's first paragraph, included
    for page in ("getting-started.html", "migrating.html", "api/index.html",
                 "benchmarks.html", "thread-safety.html", "c-api.html", "releases.html"):
        assert 'href="%s' % page in d, page


def test_api_page_renders(site):
    d = dom("api/driver.html")
    entry = d[d.index('id="cubind.driver.cuMemAlloc"'):][:8000]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", entry)).split())
    assert "C prototype" in text
    assert "CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)" in text
    for section in ("Parameters", "Returns", "Raises"):
        assert section in text, section
    assert "cubind.DriverNotFoundError" in text


def test_search_finds_cuMemAlloc(site):
    d = dom("search.html", "?q=cuMemAlloc")
    assert 'href="api/driver.html#cubind.driver.cuMemAlloc"' in d
    assert 'href="api/cu.html#cubind.cu.cuMemAlloc"' in d


def public(module):
    """The functions and classes a module defines itself (its raising
    face's classes are the drop-in face's)."""
    m = importlib.import_module("cubind." + module)
    return sorted(n for n, v in vars(m).items() if not n.startswith("_") and
                  getattr(v, "__module__", None) == m.__name__ and
                  (callable(v) or isinstance(v, type)))


def test_every_function_and_class_has_an_entry(site):
    modules = cubind_api.modules(str(PACKAGE))
    assert {"driver", "cu", "runtime", "cudart", "nvrtc", "rtc", "nvjitlink", "nvvm"} <= set(modules)
    for module in modules:
        page = (site / "api" / (module + ".html")).read_text(encoding="utf-8")
        ids = set(re.findall(r'id="cubind\.%s\.(\w+)"' % module, page))
        names = public(module)
        assert len(names) > 10, module
        missing = [n for n in names if n not in ids]
        assert not missing, "%s: %d without an entry: %s" % (module, len(missing), missing[:10])


def test_no_internal_link_is_broken(site):
    broken = linkcheck.broken_links(str(site))
    assert not broken, "%d broken: %s" % (len(broken), broken[:20])


def test_link_checker_finds_broken_links(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a><a href="sub/page.html#gone">no anchor</a>'
        '<a href="missing.html">no file</a><img src="sub/x.png"><a href="https://x.org/y">ext</a>')
    (tmp_path / "sub" / "page.html").write_text('<h1 id="here">x</h1><a href="../index.html">up</a>')
    broken = linkcheck.broken_links(str(tmp_path))
    assert broken == ["index.html: sub/page.html#gone (no such anchor)",
                      "index.html: missing.html (no such file)",
                      "index.html: sub/x.png (no such file)"]


def median_table(report):
    """{case: {impl: ns}} of a paired report's "Median ns per call" table."""
    text = report.split("Median ns per call", 1)[1]
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in rows[0]]
    return {r[0].strip(): {h: float(c) for h, c in zip(head[1:], r[1:]) if c.strip() != "n/a"}
            for r in rows[1:]}


def test_benchmark_plot_is_drawn_from_the_summarys_run(site):
    run = cubind_benchplot.summary_run(str(ROOT / "BENCHMARKS.md"))
    assert os.path.isfile(run), run
    data, _, _ = cubind_benchplot.medians(str(ROOT), run)
    table = median_table((pathlib.Path(run[:-len(".jsonl.gz")] + ".md")).read_text())
    assert data and set(data) <= set(table)
    for case, impls in data.items():
        for impl, ns in impls.items():
            assert abs(ns - table[case][impl]) < 0.051, (case, impl, ns, table[case][impl])
    page = (site / "benchmarks.html").read_text(encoding="utf-8")
    assert 'src="_images/benchmarks.png"' in page
    assert (site / "_images" / "benchmarks.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with gzip.open(run, "rt") as f:
        assert f.readline()   # the raw results are committed, not a pointer


def sphinx_args():
    """build.ninja's sphinx command after `-m sphinx`, as a list."""
    text = (ROOT / "build.ninja").read_text()
    command = re.search(r"^rule sphinx\n  command = (.*)$", text, re.M).group(1)
    return command.split(" -m sphinx ", 1)[1].split()


def small_site(tmp_path, page_text):
    """A copy of the site's sources with one module's API page and one page
    replaced, laid out as in the repository, built by build.ninja's own
    sphinx command: (exit status, output)."""
    for name in ("README.md", "BENCHMARKS.md", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("bench", "results"):
        (tmp_path / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs",
                    ignore=shutil.ignore_patterns("api", "_generated", "__pycache__"))
    (tmp_path / "docs" / "migrating.md").write_text(page_text)
    package = tmp_path / "package"
    package.mkdir()
    shutil.copy(PACKAGE / "nvvm.pyi", package / "nvvm.pyi")
    args = sphinx_args()
    args[args.index("-d") + 1] = str(tmp_path / "doctrees")
    assert args[-2:] == ["docs", "build/docs/html"], args
    args[-2:] = [str(tmp_path / "docs"), str(tmp_path / "html")]
    env = dict(os.environ, CUBIND_DOCS_PACKAGE=str(package), PYTHONPATH=str(PACKAGE.parent))
    p = subprocess.run([sys.executable, "-m", "sphinx", *args], capture_output=True, text=True,
                       env=env, timeout=600)
    return p.returncode, p.stdout + p.stderr


def test_a_warning_fails_the_build(tmp_path):
    """`ninja docs` treats warnings as errors: the site's sources build
    clean, and the same with a link to a page that does not exist fail."""
    page = (ROOT / "docs" / "migrating.md").read_text()
    (tmp_path / "clean").mkdir()
    rc, out = small_site(tmp_path / "clean", page)
    assert rc == 0, out[-3000:]
    broken = page + "\nSee [a page that is not there](no-such-page.md).\n"
    (tmp_path / "broken").mkdir()
    rc, out = small_site(tmp_path / "broken", broken)
    assert rc != 0 and "no-such-page.md" in out, out[-3000:]


def test_a_rebuilt_module_changes_its_page(tmp_path, monkeypatch):
    """The API pages carry a digest of the built extensions and stubs:
    a rebuilt module rewrites its page (so an incremental build reads its
    new docstrings), an unchanged one leaves the page as it was."""
    package = tmp_path / "package"
    package.mkdir()
    shutil.copy(PACKAGE / "nvvm.pyi", package / "nvvm.pyi")
    monkeypatch.setenv(cubind_api.PACKAGE_DIR_ENV, str(package))

    class App:
        srcdir = str(tmp_path / "src")
    cubind_api.write_pages(App)
    page = tmp_path / "src" / "api" / "nvvm.rst"
    first, stamp = page.read_text(), page.stat().st_mtime_ns
    assert ".. automodule:: cubind.nvvm" in first
    cubind_api.write_pages(App)
    assert page.stat().st_mtime_ns == stamp
    with open(package / "nvvm.pyi", "a") as f:
        f.write("\n# rebuilt\n")
    cubind_api.write_pages(App)
    assert page.read_text() != first
