# SPDX-License-Identifier: Apache-2.0
"""gen/ has one folder per stage (gen/README.md), and a stage includes only
its own headers and those of the stages before it: parse/ and classify/
never a header of render/, nothing but parse/ the parser's internals. The
generator is compiled with -Igen alone, so every include names its folder
("model/model.h"); this test says which line goes against the order.

Checked on the `#include "..."` lines of every file under gen/, in every
folder."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(REPO, "gen")

# The include order, earliest first (gen/README.md): a file may include
# from its own folder and those listed before it. model/ (the data every
# stage shares) comes before parse/, which fills it.
STAGES = ["util", "tmpl", "model", "parse", "rules", "classify", "abi", "render", "cli"]
# Folders whose headers no other folder includes.
PRIVATE = {"parse"}
# What gen/ holds outside the folders: the rules files (data) and the map.
TOP_LEVEL = re.compile(r"^(rules\.txt|[a-z0-9_]+\.rules|README\.md)$")

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def gen_files():
    """Every C source, header and table (.def) under gen/, relative to it."""
    out = []
    for root, _dirs, files in os.walk(GEN):
        for name in files:
            if name.endswith((".c", ".h", ".def")):
                out.append(os.path.relpath(os.path.join(root, name), GEN))
    return sorted(out)


def stage_of(rel):
    parts = rel.split("/")
    return parts[0] if len(parts) == 2 and parts[0] in STAGES else None


def wrong_includes(rel, text, gen=GEN):
    """The quoted includes of gen/`rel` (its text) that break the order:
    each as (rel, header, why)."""
    bad = []
    mine = stage_of(rel)
    for header in _INCLUDE.findall(text):
        theirs = stage_of(header)
        if theirs is None:
            bad.append((rel, header, "not STAGE/FILE (compiled with -Igen only)"))
        elif not os.path.isfile(os.path.join(gen, header)):
            bad.append((rel, header, "no such file under gen/"))
        elif STAGES.index(theirs) > STAGES.index(mine):
            bad.append((rel, header, "%s/ comes after %s/" % (theirs, mine)))
        elif theirs in PRIVATE and theirs != mine:
            bad.append((rel, header, "%s/ is included only by itself" % theirs))
    return bad


def test_every_generator_file_is_in_a_stage_folder():
    files = gen_files()
    loose = [f for f in files if stage_of(f) is None]
    assert not loose, "files of gen/ outside its stage folders (gen/README.md): %r" % loose
    folders = sorted(n for n in os.listdir(GEN) if os.path.isdir(os.path.join(GEN, n)))
    assert folders == sorted(STAGES)
    assert sorted(set(stage_of(f) for f in files)) == sorted(STAGES)  # none empty
    other = [n for n in os.listdir(GEN)
             if not os.path.isdir(os.path.join(GEN, n)) and not TOP_LEVEL.match(n)]
    assert not other, "unexpected files at gen/'s top: %r" % other
    with open(os.path.join(GEN, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    missing = [s for s in STAGES if "`%s/`" % s not in readme]
    assert not missing, "gen/README.md does not describe %r" % missing


def test_stages_include_only_earlier_stages():
    bad = []
    checked = 0
    for rel in gen_files():
        with open(os.path.join(GEN, rel), encoding="utf-8") as f:
            text = f.read()
        checked += len(_INCLUDE.findall(text))
        bad += wrong_includes(rel, text)
    assert checked > 80  # the scan sees the generator's includes
    assert not bad, ("includes against gen/'s stage order (gen/README.md): %r" % bad)


def test_a_wrong_include_is_reported():
    """The check fails on the includes it exists to refuse."""
    assert wrong_includes("parse/records.c",
                          '#include "parse/parse_internal.h"\n#include "util/strbuf.h"\n') == []
    assert wrong_includes("parse/records.c", '#include "render/render.h"\n') == [
        ("parse/records.c", "render/render.h", "render/ comes after parse/")]
    assert wrong_includes("classify/shapes.c", '  #  include "render/render_names.h" /* no */\n')
    assert wrong_includes("render/render.c", '#include "parse/parse_internal.h"\n') == [
        ("render/render.c", "parse/parse_internal.h", "parse/ is included only by itself")]
    assert wrong_includes("model/model.c", '#include "arena.h"\n') == [
        ("model/model.c", "arena.h", "not STAGE/FILE (compiled with -Igen only)")]
    assert wrong_includes("cli/main.c", '#include "model/no_such.h"\n') == [
        ("cli/main.c", "model/no_such.h", "no such file under gen/")]
    # a mention in a comment is no include
    assert wrong_includes("parse/records.c", ' *     #include "render/render.h"\n') == []
