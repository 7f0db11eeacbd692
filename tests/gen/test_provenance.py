# SPDX-License-Identifier: Apache-2.0
"""License and provenance (issue 28): Apache-2.0, an SPDX line in every
source file, and committed out/ free of the prose of cuda.h's documentation
comments, which only `generate --header-docs` (the user's own header, at
build time) puts into docstrings. The prose test fails on 05a670f, whose
out/ copied every function's comment into its docstring; so does the SPDX
test (no file had one)."""
import os
import re
import subprocess

from conftest import OUT, REPO, module_source

# What carries no SPDX line: data, generated output (its header template
# writes one), fuzzing inputs, recorded results, the empty py.typed marker.
NOT_SOURCE = re.compile(r"^out/|/corpus/|/regressions/|^results/|\.(md|txt|json|log)$|"
                        r"^LICENSE$|^\.gitignore$|py\.typed$|^tests/data/")


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    return [f for f in out.stdout.decode().split("\0") if f]


def test_license_is_apache_2():
    with open(os.path.join(REPO, "LICENSE")) as f:
        text = f.read()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_every_source_file_has_an_spdx_line():
    missing = []
    for f in tracked_files():
        path = os.path.join(REPO, f)
        if NOT_SOURCE.search(f) or not os.path.isfile(path):
            continue
        with open(path, errors="replace") as fh:
            head = "".join(fh.readline() for _ in range(3))
        if "SPDX-License-Identifier: Apache-2.0" not in head:
            missing.append(f)
    assert missing == [], missing


def prose_lines(dump):
    """Lines of cuda.h's documentation comments long enough to be prose
    (names, prototypes and values are shorter or not sentences)."""
    docs = [f["doc"] for f in dump["functions"]]
    lines = set()
    for doc in docs:
        for line in doc.splitlines():
            line = line.strip()
            if len(line) >= 50 and " " in line and not line.startswith(("\\", "CUresult")):
                lines.add(line)
    return lines


def test_committed_out_holds_no_header_prose(dump):
    lines = prose_lines(dump)
    assert len(lines) > 1000   # the header does document its functions
    for name in sorted(os.listdir(OUT)):
        with open(os.path.join(OUT, name), errors="replace") as f:
            text = f.read()
        found = [line for line in lines if line in text]
        assert found == [], (name, found[:3])


def test_header_docs_only_on_request(run_cubind, cuda_h, tmp_path, dump):
    out = tmp_path / "out"
    out.mkdir()
    p = run_cubind("generate", "--header", cuda_h, "--out", str(out), "--header-docs")
    assert p.returncode == 0, p.stderr
    text = module_source(out, "driver")
    start = text.index("const char cuMemAlloc_cu_doc[] = PyDoc_STR(")
    doc = text[start:text.index(");\n", start)]
    assert "Notes\\n-----\\n" in doc
    # as reST: no Doxygen markers left, ::names as literals
    assert "\\\\brief" not in doc and "\\\\p " not in doc and "``" in doc
    assert any(line[:40] in text for line in prose_lines(dump))


def test_results_stay_a_readable_record():
    # Issue 44: results/ holds summaries a reader can use; raw runs are
    # compressed (history keeps the rest), so its text is at most a tenth of
    # the tracked lines. Fails on 4ed6c2d, where raw .jsonl made it 15 %.
    total = in_results = 0
    for f in tracked_files():
        path = os.path.join(REPO, f)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            lines = fh.read().count(b"\n")
        total += lines
        in_results += lines if f.startswith("results/") else 0
    assert in_results <= total // 10, (in_results, total)
