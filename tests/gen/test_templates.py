# SPDX-License-Identifier: Apache-2.0
"""templates/ stay readable in a terminal and a diff: no line over 160
characters. A long line of output is written over several template lines,
each but the last ending inside a comment ("{{!" then a newline and "}}"
on the next line): the engine drops a comment with the newline and the
indent it holds (tests/c/test_tmpl.c checks that), so out/ does not change.
Failed on 3dd668e (returns.pyi.tmpl had a line of 586 characters,
header_doc.c.tmpl one of 368)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 160


def long_lines(root):
    """(path, line number, length) of each template line over LIMIT."""
    out = []
    for folder, _dirs, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(".tmpl"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if len(line.rstrip("\n")) > LIMIT:
                            out.append((os.path.relpath(path, REPO), n, len(line.rstrip("\n"))))
    return out


def test_template_lines_are_at_most_160_characters():
    assert long_lines(os.path.join(REPO, "templates")) == []


def test_a_long_line_is_reported(tmp_path):
    (tmp_path / "x.tmpl").write_text("short\n" + "y" * (LIMIT + 1) + "\n")
    assert [(n, k) for _p, n, k in long_lines(str(tmp_path))] == [(2, LIMIT + 1)]
