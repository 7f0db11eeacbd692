# SPDX-License-Identifier: Apache-2.0
"""README.md is one screen (issue 43): what cubind is, the install and the
test commands, links to docs/. Its test command is .ci/run's, and every
page it links to exists (the content moved there from the README)."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return f.read()


def ci_command():
    """The one command .ci/run runs (its last line)."""
    lines = [l for l in read(".ci", "run").splitlines() if l and not l.startswith("#")]
    return lines[-1]


def test_readme_is_one_screen():
    assert len(read("README.md").splitlines()) <= 120


def test_readme_test_command_is_what_ci_runs():
    command = ci_command()
    assert command == "./configure && ninja test", command
    assert "\n    %s\n" % command in read("README.md")


def test_readme_has_the_install_commands():
    text = read("README.md")
    assert "\n    ./configure --user && ninja\n" in text
    assert re.search(r"^    pip install dist/cubind_cu13-\*\.whl$", text, re.M)


def test_readme_links_resolve():
    links = re.findall(r"\]\(([^)#]+)\)", read("README.md"))
    missing = [l for l in links if not os.path.exists(os.path.join(REPO, l))]
    assert len(links) >= 8 and not missing, missing
    for page in ("building.md", "releases.md", "thread-safety.md", "c-api.md"):
        assert "docs/" + page in links, page
