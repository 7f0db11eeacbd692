# SPDX-License-Identifier: Apache-2.0
"""Every file or folder of the repository a document names in backticks
(`gen/...`, `runtime/...`, `tests/...`, `scripts/...`) exists, so a new
contributor following the docs never meets a path that moved. Old script
names are allowed only where results/README.md's "Old script names"
table maps them to today's (records quote them). Failed on 3dd668e:
CHANGELOG.md named gen/rules_bind.c and gen/shapes.def after gen/ was
grouped by stage."""
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP = ("gen", "runtime", "tests", "scripts", "templates", "bench", "tools", "docs",
       "packaging", "examples", "results", "out", ".ci")
PATH = re.compile(r"`((?:%s)/[A-Za-z0-9_./-]+)`" % "|".join(re.escape(t) for t in TOP))


def old_names():
    """The first column of results/README.md's table of old script names."""
    with open(os.path.join(REPO, "results", "README.md"), encoding="utf-8") as f:
        text = f.read().split("## Old script names", 1)[1].split("\n## ", 1)[0]
    return {m.group(1).split()[0] for m in re.finditer(r"^\| `([^`]+)` \|", text, re.M)}


def missing_paths(docs, exists, allowed):
    """(doc, line, path) of each named path that does not exist."""
    bad = []
    for doc, text in docs:
        for n, line in enumerate(text.splitlines(), 1):
            for m in PATH.finditer(line):
                path = m.group(1).rstrip(".,:")
                if path not in allowed and not exists(path):
                    bad.append((doc, n, path))
    return bad


def test_paths_named_by_the_docs_exist():
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    docs = []
    for f in files:
        if not f.startswith("results/"):   # records quote the paths of their day
            with open(os.path.join(REPO, f), encoding="utf-8") as fh:
                docs.append((f, fh.read()))
    allowed = old_names()
    assert "bench/run_h200.sh" in allowed, allowed
    assert missing_paths(docs, lambda p: os.path.exists(os.path.join(REPO, p)), allowed) == []


def test_a_moved_path_is_reported():
    docs = [("X.md", "see `gen/classify/shapes.def`\nand `gen/shapes.def`.\n")]
    exists = {"gen/classify/shapes.def"}.__contains__
    assert missing_paths(docs, exists, set()) == [("X.md", 2, "gen/shapes.def")]
