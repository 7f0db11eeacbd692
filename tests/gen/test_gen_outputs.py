# SPDX-License-Identifier: Apache-2.0
"""out/ is what the generator writes now, generated files carry a checksum
that catches hand edits, the generator's C holds no emitted code, and every
template is used."""
import filecmp
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "out")
TEMPLATES = os.path.join(REPO, "templates")
GEN = os.path.join(REPO, "gen")


def gen_sources(*suffixes):
    """Every file of gen/ ending in one of suffixes, in every stage's folder
    (gen/README.md), relative to gen/: "render/render.c"."""
    found = []
    for root, _dirs, files in os.walk(GEN):
        for name in files:
            if name.endswith(suffixes):
                found.append(os.path.relpath(os.path.join(root, name), GEN))
    return sorted(found)


def stage_folders():
    return sorted(n for n in os.listdir(GEN) if os.path.isdir(os.path.join(GEN, n)))


def test_out_is_current(generated):
    fresh = sorted(os.listdir(generated))
    committed = sorted(f for f in os.listdir(OUT) if not f.startswith("."))
    assert fresh, "cubind generate wrote nothing"
    assert fresh == committed, (
        "out/ is stale: run ninja and commit out/ (generated %s, out/ has %s)"
        % (fresh, committed))
    stale = [f for f in fresh
             if not filecmp.cmp(os.path.join(generated, f), os.path.join(OUT, f), shallow=False)]
    assert not stale, "out/ is stale: run ninja and commit out/ (differs: %s)" % ", ".join(stale)


def test_generate_leaves_no_temporaries(generated):
    left = [f for f in os.listdir(generated) if ".tmp" in f or f.startswith(".")]
    assert not left, "temporary files left in the output directory: %s" % left


def test_verify_accepts_out(run_cubind):
    # every generated file is stamped, the stubs and unsupported.txt too
    # (05a670f: `cubind verify out/*` exited 1 on those)
    names = sorted(os.listdir(OUT))
    assert {"driver.pyi", "cu.pyi", "unsupported.txt", "nvrtc.pyi", "rtc.pyi",
            "nvjitlink.pyi", "nvvm.pyi"} <= set(names)
    p = run_cubind("verify", *[os.path.join(OUT, n) for n in names])
    assert p.returncode == 0, p.stderr


def body_start(data):
    """Offset of the first byte after the generated header: its C comment,
    or its "#" line holding the stamp."""
    tag = data.find(b"cubind-checksum: ")
    assert tag >= 0, "no checksum stamp"
    line = data.rfind(b"\n", 0, tag) + 1
    if data[line:line + 1] == b"#":
        return data.find(b"\n", tag) + 1
    end = data.find(b"*/\n", tag)
    assert end >= 0
    return end + 3


@pytest.mark.parametrize("name", ["driver.c", "driver_part1.c", "driver_internal.h",
                                  "struct_layout_check.c", "driver.pyi", "unsupported.txt", "rtc.pyi"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_verify_rejects_a_hand_edit(run_cubind, tmp_path, name, where):
    with open(os.path.join(OUT, name), "rb") as f:
        data = bytearray(f.read())
    start = body_start(bytes(data))
    assert start < len(data)
    i = {"first": start, "middle": (start + len(data)) // 2, "last": len(data) - 1}[where]
    data[i] = ord("x") if data[i] != ord("x") else ord("y")
    edited = tmp_path / name
    edited.write_bytes(bytes(data))
    p = run_cubind("verify", str(edited))
    assert p.returncode == 1, "verify accepted an edited %s (rc %d)" % (name, p.returncode)
    assert "edited by hand" in p.stderr
    assert str(edited) in p.stderr


def test_verify_rejects_a_file_without_stamp(run_cubind, tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("# no stamp here\n")
    p = run_cubind("verify", str(plain))
    assert p.returncode == 1 and "no checksum stamp" in p.stderr


# ---- the generator's C holds no emitted code --------------------------------

FORBIDDEN = ["PyObject", "Py_BEGIN_ALLOW_THREADS", "Py_END_ALLOW_THREADS", "#include <Python.h>",
             "Python.h", "PyMethodDef", "static PyObject", "PyModuleDef", "PyArg_",
             "PyErr_", "PyLong_", "Py_RETURN", "METH_VARARGS", "METH_FASTCALL"]


def test_generator_c_has_no_emitted_code():
    sources = gen_sources(".c", ".h")
    assert "render/render.c" in sources and "cli/main.c" in sources
    # every stage's folder is scanned, not only gen/'s top
    assert sorted(set(n.split(os.sep)[0] for n in sources)) == stage_folders()
    found = []
    for name in sources:
        with open(os.path.join(GEN, name), errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                for s in FORBIDDEN:
                    if s in line:
                        found.append("gen/%s:%d: %s" % (name, lineno, s))
    assert not found, ("code the bindings emit belongs in templates/, not in gen/:\n"
                       + "\n".join(found))


# What the string literals of the files building template values (tv_set,
# tv_push: the render stage) must not spell: emitted text the templates
# write around the values. Names and numbers are data; the locals' names,
# casts, declarators, joined lists and docstring words are text.
STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
EMITTED_TEXT = [
    (re.compile(r"^(%s)?_(v|out|f|n|p|a|k|in|obj|seq|b|s|o|mem|buf|reg)$"), "a local's name suffix"),
    (re.compile(r"\((u?int\w*_t|void \*|const char \*|size_t|unsigned long long|long long)\)"),
     "a cast"),
    (re.compile(r"\(\*(%s|\w)"), "a function pointer declarator"),
    (re.compile(r"^void$"), "an empty parameter list"),
    (re.compile(r"_ptr=|\*\*fields|--\\n|Returns: |Note: |See also: |Deprecated: |argtypes=|=0$"),
     "docstring text"),
    (re.compile(r"^[A-Z][A-Z0-9]*_%s"), "a macro name spelled from parts"),
    (re.compile(r"^, $|^%s, $|^%s%s, "), "a list joined with commas (a template joins with @last)"),
]


def render_stage_sources():
    out = []
    for name in gen_sources(".c"):
        with open(os.path.join(GEN, name), errors="replace") as f:
            text = f.read()
        if "tv_set" in text or "tv_push" in text:
            out.append((name, text))
    return out


def emitted_text_in(name, text):
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(("#include", "/*", "*", "//")):
            continue
        for m in STRING_LITERAL.finditer(line):
            for rx, why in EMITTED_TEXT:
                if rx.search(m.group(1)):
                    found.append("gen/%s:%d: %s: %r" % (name, lineno, why, m.group(1)))
    return found


def test_render_stage_spells_no_emitted_text():
    sources = render_stage_sources()
    names = [n for n, _ in sources]
    assert {"render/render.c", "render/render_structs.c", "render/doc_rst.c"} <= set(names), names
    found = [f for name, text in sources for f in emitted_text_in(name, text)]
    assert not found, ("text the bindings emit belongs in templates/, not in gen/:\n"
                       + "\n".join(found))


def test_emitted_text_check_can_fail():
    # what render.c wrote before the templates did
    before = '    tv_set_strf(v, key, "(uintptr_t)%s%s", name, out ? "_out" : "_v");\n' \
             '    sb_printf(&sig, "%s%s%s", nin ? ", " : "", pyname, opt ? "=0" : "");\n'
    found = emitted_text_in("render.c", before)
    assert any("a cast" in f for f in found) and any("suffix" in f for f in found), found
    assert any("docstring" in f for f in found) and any("joined" in f for f in found), found


# ---- every template is used -----------------------------------------------------

def template_names():
    names, other = {}, []
    for d, _, files in os.walk(TEMPLATES):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), TEMPLATES)
            if rel.endswith(".tmpl"):
                names[rel[:-len(".tmpl")]] = os.path.join(d, f)
            else:
                other.append(rel)
    return names, other


def root_templates():
    """Templates gen/render/render.c renders itself (not through a partial)."""
    with open(os.path.join(GEN, "render", "render.c")) as f:
        text = f.read()
    roots = set()
    # render_one / render_template(out, ts, m, "TEMPLATE", file, ...): its
    # fourth argument, or both templates of a `COND ? "A" : "B"` there
    for a, b in re.findall(r"render_(?:one|template)\(\s*\w+\s*,\s*\w+\s*,\s*\w+\s*,\s*"
                           r"(?:[^,\"]*\?\s*)?\"([^\"]+)\"(?:\s*:\s*\"([^\"]+)\")?", text):
        roots |= {a, b} - {""}
    roots |= set(re.findall(r"tmpl_render\(\s*\w+\s*,\s*\"([^\"]+)\"", text))
    return roots


PARTIAL = re.compile(r"\{\{>\s*([^\s}]+)\s*\}\}")
COMMENT = re.compile(r"\{\{!.*?\}\}", re.S)
SHAPES_DEF = os.path.join(GEN, "classify", "shapes.def")


def shapes_table():
    """(ID, name) of every line of gen/classify/shapes.def, and its phases."""
    with open(SHAPES_DEF) as f:
        text = f.read()
    shapes = re.findall(r"^SHAPE\((SH_\w+),\s*(\w+),", text, re.M)
    phases = re.findall(r"^SHAPE_PHASE\((\w+)\)", text, re.M)
    return shapes, phases


def dynamic_partials(name):
    """The templates {{>*name}} can name: render.c sets shape_template to
    "shapes/<name>" of a shapes.def line; no other dynamic partial exists."""
    assert name == "shape_template", "a dynamic partial this test does not know: *%s" % name
    return ["shapes/%s" % n for _, n in shapes_table()[0]]


def test_every_template_is_used():
    names, other = template_names()
    assert not other, "files under templates/ the engine never loads (no .tmpl): %s" % other
    roots = root_templates()
    # The roots render_all() renders today; a parse of render.c that finds
    # none of them would make this test vacuous.
    assert {"driver/module.c", "checks/struct_layout.c", "report.txt",
            "generated_header"} <= roots, roots
    unknown_roots = roots - set(names)
    assert not unknown_roots, "gen/render/render.c renders missing templates: %s" % unknown_roots
    used, todo, dangling = set(), sorted(roots), []
    while todo:
        t = todo.pop()
        if t in used:
            continue
        used.add(t)
        with open(names[t]) as f:
            text = COMMENT.sub("", f.read())
        for p in PARTIAL.findall(text):
            for q in dynamic_partials(p[1:]) if p.startswith("*") else [p]:
                if q not in names:
                    dangling.append("%s -> %s" % (t, q))
                else:
                    todo.append(q)
    assert not dangling, "partials naming no template: %s" % dangling
    unused = sorted(set(names) - used)
    assert not unused, ("templates no default generation renders (dead): %s"
                        % ", ".join("templates/%s.tmpl" % u for u in unused))


# ---- one table line and one template per parameter shape -------------------

SECTION = re.compile(r"\{\{([#^/])\s*([^\s}]+)\s*\}\}")


def test_every_shape_has_one_template_and_every_template_one_shape():
    shapes, phases = shapes_table()
    assert len(shapes) >= 28 and {"decl", "in", "call", "out", "cleanup"} <= set(phases)
    ids = [i for i, _ in shapes]
    names = [n for _, n in shapes]
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names), "a shape twice"
    for sid, name in shapes:
        assert sid == "SH_" + name.upper(), "%s: its name is not %s" % (sid, name)
    files = sorted(f[:-len(".tmpl")] for f in os.listdir(os.path.join(TEMPLATES, "shapes")))
    assert files == sorted(names), (
        "templates/shapes/ and gen/classify/shapes.def differ: no template for %s, no line for %s"
        % (sorted(set(names) - set(files)), sorted(set(files) - set(names))))


@pytest.mark.parametrize("name", [n for _, n in shapes_table()[0]])
def test_shape_template_is_phase_sections(name):
    """A shape's template is phase sections, in shapes.def's order, each
    once; nothing outside them (it would be emitted in every phase) and no
    phase of another name."""
    shapes, phases = shapes_table()
    with open(os.path.join(TEMPLATES, "shapes", name + ".tmpl")) as f:
        text = COMMENT.sub("", f.read())
    seen, depth, outside = [], 0, []
    pos = 0
    for m in SECTION.finditer(text):
        if depth == 0 and text[pos:m.start()].strip():
            outside.append(text[pos:m.start()].strip()[:40])
        sigil, key = m.groups()
        if depth == 0:
            assert sigil == "#" and key.startswith("phase_"), "%s: {{%s%s}} outside a phase" % (name, sigil, key)
            seen.append(key[len("phase_"):])
        depth += -1 if sigil == "/" else 1
        pos = m.end()
    if text[pos:].strip():
        outside.append(text[pos:].strip()[:40])
    assert not outside, "%s: text outside the phase sections: %s" % (name, outside)
    assert seen, "%s: no phase" % name
    assert set(seen) <= set(phases), "%s: unknown phases %s" % (name, set(seen) - set(phases))
    assert seen == [p for p in phases if p in seen], "%s: phases out of order or twice: %s" % (name, seen)
    # an input converts (in) and is passed (call); every shape is passed
    assert "call" in seen, name
