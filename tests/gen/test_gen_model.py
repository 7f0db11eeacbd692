# SPDX-License-Identifier: Apache-2.0
"""The model `cubind dump` prints, checked against independent sources:
clang's AST of cuda.h, programs gcc compiles against cuda.h, and the text of
cudaTypedefs.h."""
import json
import os
import re
import subprocess

import pytest
from conftest import module_source

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def by_name(items):
    out = {}
    for it in items:
        assert it["name"] not in out, "duplicate name in the dump: %s" % it["name"]
        out[it["name"]] = it
    return out


# ---- functions ---------------------------------------------------------------

def test_function_count_matches_clang(dump, clang_facts):
    n = len(dump["functions"])
    assert n == clang_facts.function_decls, (
        "cubind dump has %d functions; clang's AST of cuda.h has %d FunctionDecl nodes"
        % (n, clang_facts.function_decls))
    if dump["cuda_version"] == 13000:
        # cuda.h's 449 and the interop headers' 31 (cudaProfiler.h 3, cudaGL.h 12
        # with the deprecated ones, cudaEGL.h 12, cudaVDPAU.h 4)
        assert sum(not f.get("interop") for f in dump["functions"]) == 449
        assert n == 480


def test_abi_names_equal_clang_function_names(dump, clang_facts):
    abis = [f["abi"] for f in dump["functions"]]
    assert len(set(abis)) == len(abis), "an ABI symbol appears twice in the dump"
    clang = set(clang_facts.functions)
    missing = sorted(clang - set(abis))
    extra = sorted(set(abis) - clang)
    assert not missing and not extra, (
        "declared in cuda.h but not in the dump: %s\nin the dump but not declared: %s"
        % (missing[:20], extra[:20]))


def test_public_names_are_unique(dump):
    by_name(dump["functions"])


@pytest.mark.parametrize("name,abi,proc_name,proc_version", [
    ("cuMemAlloc", "cuMemAlloc_v2", "cuMemAlloc", None),
    ("cuGraphInstantiate", "cuGraphInstantiateWithFlags", None, None),
    ("cuCtxGetDevice", "cuCtxGetDevice", "cuCtxGetDevice", 2000),
    ("cuCtxGetDevice_v2", "cuCtxGetDevice_v2", "cuCtxGetDevice", 13000),
    ("cuCtxCreate", "cuCtxCreate_v4", "cuCtxCreate", 12050),
    ("cuEventElapsedTime", None, "cuEventElapsedTime", 12080),
    ("cuInit", "cuInit", "cuInit", 2000),
])
def test_versioned_names(dump, name, abi, proc_name, proc_version):
    if dump["cuda_version"] != 13000:
        pytest.fail("these expectations are for CUDA 13.0's cuda.h, not %d" % dump["cuda_version"])
    f = by_name(dump["functions"]).get(name)
    assert f is not None, "%s is not in the dump" % name
    if abi is not None:
        assert f["abi"] == abi
    if proc_name is not None:
        assert f["proc_name"] == proc_name
    if proc_version is not None:
        assert f["proc_version"] == proc_version


def test_cuCtxGetDevice_variants_are_distinct(dump):
    fs = by_name(dump["functions"])
    a, b = fs["cuCtxGetDevice"], fs["cuCtxGetDevice_v2"]
    assert a["abi"] != b["abi"]
    assert a["proc_name"] == b["proc_name"] == "cuCtxGetDevice"
    assert a["proc_version"] != b["proc_version"]
    assert (len(a["params"]), len(b["params"])) == (1, 2)


PFN_RE = re.compile(
    r"typedef\s+[^;()]*?\(\s*CUDAAPI\s*\*\s*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)\s*\(([^;]*?)\)\s*;",
    re.S)


def count_params(text):
    """Parameters of a C parameter list's text (top-level commas)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S).strip()
    if text in ("", "void"):
        return 0
    depth, n = 0, 1
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


@pytest.fixture(scope="session")
def pfn_typedefs(cuda_include, interop):
    text = ""
    for name in ["cudaTypedefs.h"] + [h for h in interop["includes"] if h.endswith("Typedefs.h")]:
        with open(os.path.join(cuda_include, name)) as f:
            text += f.read()
    pfns = {}
    for m in PFN_RE.finditer(text):
        if m.group(3):
            continue  # per-thread-stream variants
        pfns[(m.group(1), int(m.group(2)))] = count_params(m.group(4))
    assert len(pfns) > 100, "found only %d PFN typedefs in cudaTypedefs.h" % len(pfns)
    return pfns


def test_every_function_has_a_pfn_typedef(dump, pfn_typedefs):
    bad = []
    for f in dump["functions"]:
        key = (f["proc_name"], f["proc_version"])
        if f["proc_version"] <= 0:
            bad.append("%s: proc_version %d" % (f["name"], f["proc_version"]))
        elif key not in pfn_typedefs:
            bad.append("%s: no PFN_%s_v%d in cudaTypedefs.h" % ((f["name"],) + key))
        elif pfn_typedefs[key] != len(f["params"]):
            bad.append("%s: %d parameters, PFN_%s_v%d has %d"
                       % (f["name"], len(f["params"]), key[0], key[1], pfn_typedefs[key]))
    assert not bad, "\n".join(bad)


def test_pfn_type_is_the_abi_symbols_type(dump, cuda_include, interop, tmp_path):
    """gcc checks that PFN_<proc_name>_v<proc_version> is exactly the type of
    the ABI symbol: the version passed to cuGetProcAddress returns the
    function the binding calls (same parameter and return types)."""
    lines = ["#include <cuda.h>", "#include <cudaTypedefs.h>"]
    lines += ["#include <%s>" % h for h in interop["includes"]]
    for f in dump["functions"]:
        lines.append("_Static_assert(__builtin_types_compatible_p(PFN_%s_v%d, __typeof__(&%s)), "
                     "\"%s: PFN_%s_v%d\");" % (f["proc_name"], f["proc_version"], f["abi"],
                                               f["name"], f["proc_name"], f["proc_version"]))
    src = tmp_path / "pfn_check.c"
    src.write_text("\n".join(lines) + "\n")
    p = subprocess.run(["gcc", "-std=gnu11", "-fsyntax-only", "-I" + cuda_include, *interop["flags"],
                        str(src)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 0, p.stderr[-6000:]


def test_deprecated_flags_match_clang(dump, clang_facts):
    fs = by_name(dump["functions"])
    assert fs["cuDeviceGetProperties"]["deprecated"] is True
    assert fs["cuInit"]["deprecated"] is False
    ours = {f["abi"] for f in dump["functions"] if f["deprecated"]}
    clangs = {n for n, e in clang_facts.functions.items() if e["deprecated"]}
    assert ours == clangs, ("deprecated only in the dump: %s\ndeprecated only per clang: %s"
                            % (sorted(ours - clangs), sorted(clangs - ours)))


def test_doc_comments(dump, clang_facts):
    fs = by_name(dump["functions"])
    assert "Initialize" in fs["cuInit"]["doc"]
    missing = sorted(f["name"] for f in dump["functions"]
                     if clang_facts.functions[f["abi"]]["has_doc"] and not f["doc"].strip())
    assert not missing, "clang sees a doc comment, the dump has none: %s" % missing


# A doc comment (never `/**<`, which documents what precedes it) separated
# only by white space from a function declaration; the comment may not span
# another comment's end.
DOC_BEFORE_DECL = re.compile(
    r"/\*\*(?!<)((?:[^*]|\*(?!/))*)\*/\s*(?:\w+\s+)*?CUDAAPI\s+(\w+)\s*\(")


def header_function_docs(cuda_h):
    """{name as the declaration spells it: comment text}, read from the text
    of cuda.h (neither libclang nor clang decides which comment is whose)."""
    with open(cuda_h) as f:
        text = f.read()
    docs = {}
    for m in DOC_BEFORE_DECL.finditer(text):
        docs.setdefault(m.group(2), m.group(1))
    return docs


def comment_words(text):
    """A comment's words, without the leading `*` of its lines."""
    lines = [re.sub(r"^\s*\*?", "", line) for line in text.splitlines()]
    return " ".join(" ".join(lines).split())


def test_doc_comments_match_header_text(dump, cuda_h):
    """Every function documented in cuda.h has that documentation in the
    dump, the ones whose name is a macro (`#define cuMemAlloc cuMemAlloc_v2`,
    `__CUDA_API_PTSZ(cuX)`) included: libclang attaches no comment to those."""
    docs = header_function_docs(cuda_h)
    assert len(docs) >= 400, "found only %d documented declarations in cuda.h" % len(docs)
    fs = by_name(dump["functions"])
    unknown = sorted(set(docs) - set(fs))
    assert not unknown, "documented in cuda.h, not in the dump: %s" % unknown[:20]
    wrong = sorted(n for n, text in docs.items()
                   if " ".join(fs[n]["doc"].split()) != comment_words(text))
    assert not wrong, "%d functions' docs differ from cuda.h's comment: %s" % (len(wrong), wrong[:20])
    assert fs["cuMemAlloc"]["abi"] == "cuMemAlloc_v2"
    assert fs["cuMemAlloc"]["doc"].startswith("\\brief Allocates device memory\n")


# ---- enums ---------------------------------------------------------------------

def test_cuResult_values(dump):
    e = by_name(dump["enums"]).get("CUresult")
    assert e is not None, "CUresult is not among the enums"
    values = {v["name"]: v["value"] for v in e["values"]}
    assert values["CUDA_SUCCESS"] == 0
    assert values["CUDA_ERROR_INVALID_VALUE"] == 1


def test_enum_constants_match_clang(dump, clang_facts):
    ours = {}
    for e in dump["enums"]:
        for v in e["values"]:
            assert v["name"] not in ours, "enumerator %s appears twice" % v["name"]
            ours[v["name"]] = v["value"]
    assert set(ours) == set(clang_facts.enum_constants), (
        "only in the dump: %s\nonly per clang: %s"
        % (sorted(set(ours) - set(clang_facts.enum_constants))[:20],
           sorted(set(clang_facts.enum_constants) - set(ours))[:20]))
    wrong = ["%s: dump %d, clang %d" % (n, ours[n], v)
             for n, v in clang_facts.enum_constants.items() if v is not None and ours[n] != v]
    assert not wrong, "\n".join(wrong)


def test_enum_typedef_names_match_clang(dump, clang_facts):
    # Every typedef naming a tagged enum (`typedef CUlaunchAttributeID
    # CUstreamAttrID;` as well as `typedef enum X_enum {...} X;`): the first
    # is the enum's name, the others its aliases, in header order.
    tagged = {e["tag"]: e for e in dump["enums"] if e["tag"]}
    assert set(clang_facts.enum_typedefs) <= set(tagged)
    for tag, e in tagged.items():
        names = clang_facts.enum_typedefs.get(tag, [tag])
        assert [e["name"]] + e["aliases"] == names, tag
    assert any(e["aliases"] for e in tagged.values()), \
        "cuda.h has typedefs of enum typedefs (CUstreamAttrID); the dump lists none"


def test_enum_values_match_compiled_program(dump, compile_and_run):
    names = [v["name"] for e in dump["enums"] for v in e["values"]]
    src = ["#include <stdio.h>", "#include <cuda.h>", "int main(void) {"]
    for n in names:
        src.append('    printf("%%s %%lld\\n", "%s", (long long)(%s));' % (n, n))
    src += ["    return 0;", "}"]
    printed = dict(line.split() for line in compile_and_run("\n".join(src), "enums").splitlines())
    ours = {v["name"]: v["value"] for e in dump["enums"] for v in e["values"]}
    wrong = ["%s: dump %d, C %s" % (n, ours[n], printed[n])
             for n in names if int(printed[n]) != ours[n]]
    assert len(printed) == len(names)
    assert not wrong, "\n".join(wrong)


# ---- records -------------------------------------------------------------------

def expected_offset_asserts(dump):
    """Named, non-bit-field members of every top-level record, counted from
    the dump, following members whose record is defined in place."""
    records = {r["name"]: r for r in dump["records"]}

    def count(rec):
        n = 0
        for fl in rec["fields"]:
            if "bit_width" in fl or fl["offset"] < 0:
                continue
            if fl["name"]:
                n += 1
            if fl.get("record") and fl["type"]["kind"] == "record":
                n += count(records[fl["record"]])
        return n

    top = [r for r in dump["records"] if not r["nested"] and r["size"] > 0]
    return len(top), sum(count(r) for r in top), sum(
        1 for r in top for fl in r["fields"] if fl["name"] and "bit_width" not in fl)


def test_struct_layout_check_compiles(cuda_include, dump, interop):
    path = os.path.join(REPO, "out", "struct_layout_check.c")
    with open(path) as f:
        text = f.read()
    nrecords, nfields, ndirect = expected_offset_asserts(dump)
    assert nrecords > 50 and ndirect > 100, "the dump has too few records/fields"
    n_sizeof = len(re.findall(r"_Static_assert\(sizeof\(", text))
    n_align = len(re.findall(r"_Static_assert\(_Alignof\(", text))
    n_offset = len(re.findall(r"_Static_assert\(offsetof\(", text))
    assert n_sizeof >= nrecords and n_align >= nrecords, (
        "%d sizeof / %d _Alignof asserts for %d records" % (n_sizeof, n_align, nrecords))
    assert n_offset >= nfields >= ndirect, (
        "out/struct_layout_check.c has %d offsetof asserts; the dump has %d named fields"
        % (n_offset, nfields))
    p = subprocess.run(["gcc", "-std=c11", "-fsyntax-only", "-I" + cuda_include, *interop["flags"], path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, "the model's layouts differ from gcc's:\n" + p.stderr[-6000:]


# ---- macros, handles, callbacks ----------------------------------------------

def test_macro_samples(dump):
    ms = by_name(dump["macros"])
    assert ms["CU_IPC_HANDLE_SIZE"]["value"] == 64
    assert ms["CU_LAUNCH_PARAM_END"]["value"] == 0
    assert ms["CU_DEVICE_CPU"]["value"] == -1


def test_macro_values_match_compiled_program(dump, compile_and_run):
    ms = dump["macros"]
    assert len(ms) >= 10
    src = ["#include <stdint.h>", "#include <stdio.h>", "#include <cuda.h>", "int main(void) {"]
    for m in ms:
        n = m["name"]
        if m.get("unsigned"):
            expr, fmt = "(unsigned long long)(uintptr_t)(%s)" % n, "%llu"
        else:
            expr, fmt = "(long long)(intptr_t)(%s)" % n, "%lld"
        src.append('    printf("%%s %s\\n", "%s", %s);' % (fmt, n, expr))
    src += ["    return 0;", "}"]
    printed = dict(line.split() for line in compile_and_run("\n".join(src), "macros").splitlines())
    wrong = ["%s: dump %d, C %s" % (m["name"], m["value"], printed[m["name"]])
             for m in ms if int(printed[m["name"]]) != m["value"]]
    assert not wrong, "\n".join(wrong)


def test_macros_naming_enum_constants(dump, clang_facts, cuda_h):
    """`#define X ENUM_CONSTANT` (CU_STREAM_ATTRIBUTE_PRIORITY names
    CU_LAUNCH_ATTRIBUTE_PRIORITY) is a constant of the enum constant's value;
    the set comes from the header's text and clang's enum constants."""
    with open(cuda_h) as f:
        defines = re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\w+)[ \t]*$", f.read(), re.M)
    consts = clang_facts.enum_constants
    expected = {name: body for name, body in defines if body in consts}
    assert "CU_STREAM_ATTRIBUTE_PRIORITY" in expected
    ms = by_name(dump["macros"])
    missing = sorted(set(expected) - set(ms))
    assert not missing, "macros naming an enum constant missing from the dump: %s" % missing
    values = {v["name"]: v["value"] for e in dump["enums"] for v in e["values"]}
    wrong = sorted(n for n, body in expected.items() if ms[n]["value"] != values[body])
    assert not wrong, wrong
    assert ms["CU_STREAM_ATTRIBUTE_PRIORITY"]["enum"] == "CUlaunchAttributeID"
    assert ms["CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE"]["value"] == values["CU_LAUNCH_ATTRIBUTE_COOPERATIVE"]
    assert "enum" not in ms["CU_IPC_HANDLE_SIZE"]


def test_handles(dump):
    hs = by_name(dump["handles"])
    assert hs["CUstream"]["tag"] == "CUstream_st"
    assert hs["CUcontext"]["tag"] == "CUctx_st"


def test_callbacks(dump):
    cbs = by_name(dump["callbacks"])
    host = cbs.get("CUhostFn")
    assert host is not None, "CUhostFn is not among the callbacks"
    assert [p["name"] for p in host["params"]] == ["userData"]
    assert host["params"][0]["type"]["kind"] == "pointer"


# ---- declarations repeated -----------------------------------------------------

# C11 lets a header declare a typedef or a function again and redefine a
# macro after #undef; C code after the header sees one typedef, one
# function and the last definition of each macro. Appended inside cuda.h's
# include guard, after everything else.
REDECLARATIONS = """
typedef struct CUctx_st *CUcontext;
typedef struct CUfunc_st *CUfunction;
CUresult CUDAAPI cuInit(unsigned int);
CUresult CUDAAPI cuCtxSynchronize(void);
#define CU_MEMHOSTALLOC_PORTABLE        0x01
#undef CU_MEMHOSTALLOC_DEVICEMAP
#define CU_MEMHOSTALLOC_DEVICEMAP 0x40
#define CU_TEST_PENDING_THEN_REDEFINED CU_TEST_DEFINED_LATER
#undef CU_TEST_PENDING_THEN_REDEFINED
#define CU_TEST_PENDING_THEN_REDEFINED 7
#define CU_TEST_NO_LONGER_CONSTANT 3
#undef CU_TEST_NO_LONGER_CONSTANT
#define CU_TEST_NO_LONGER_CONSTANT (cuTestUnknownFunction())
#define CU_TEST_DEFINED_LATER 5
"""


@pytest.fixture(scope="module")
def redeclared_include(cuda_include, tmp_path_factory):
    """A copy of the include directory (links, but for cuda.h) whose cuda.h
    ends with REDECLARATIONS."""
    d = tmp_path_factory.mktemp("redeclared")
    for n in os.listdir(cuda_include):
        if n != "cuda.h":
            os.symlink(os.path.join(cuda_include, n), str(d / n))
    with open(os.path.join(cuda_include, "cuda.h")) as f:
        text = f.read()
    guard_end = text.rindex("#endif")
    (d / "cuda.h").write_text(text[:guard_end] + REDECLARATIONS + text[guard_end:])
    return str(d)


def test_repeated_declarations_are_modelled_once(run_cubind, dump, cuda_include,
                                                 redeclared_include):
    p = run_cubind("dump", "--header", os.path.join(redeclared_include, "cuda.h"))
    assert p.returncode == 0, p.stderr
    again = json.loads(p.stdout.replace(redeclared_include, cuda_include))
    for key in ("functions", "handles", "typedefs", "macros"):
        names = [x["name"] for x in again[key]]
        assert len(names) == len(set(names)), "%s listed twice: %s" % (
            key, sorted({n for n in names if names.count(n) > 1}))
    # Everything but the macros is the model of the header as it was, in its
    # order (each repeat keeps its first declaration's place and line).
    for key in ("functions", "enums", "records", "typedefs", "handles", "callbacks"):
        assert again[key] == dump[key], key
    expected = [dict(m, value=0x40) if m["name"] == "CU_MEMHOSTALLOC_DEVICEMAP" else m
                for m in dump["macros"]]
    expected += [{"name": "CU_TEST_DEFINED_LATER", "value": 5},
                 {"name": "CU_TEST_PENDING_THEN_REDEFINED", "value": 7}]
    assert sorted(again["macros"], key=lambda m: m["name"]) == \
        sorted(expected, key=lambda m: m["name"])
    # A redefined macro keeps its first definition's place.
    before = [m["name"] for m in dump["macros"]]
    assert [m["name"] for m in again["macros"] if m["name"] in before] == before


def test_repeated_declarations_generate_what_c_sees(run_cubind, redeclared_include, tmp_path):
    """The generated module defines each handle class and function once and
    holds the macros' last values, which gcc computes from the same header."""
    out = tmp_path / "out"
    out.mkdir()
    p = run_cubind("generate", "--header", os.path.join(redeclared_include, "cuda.h"),
                   "--out", str(out))
    assert p.returncode == 0, p.stderr
    committed = module_source(os.path.join(REPO, "out"), "driver")
    text = module_source(out, "driver")
    for needle in ('"cubind.driver.CUcontext",', '"cubind.driver.CUfunction",',
                   'HANDLE_CUcontext =', '"cuInit"', '"cuCtxSynchronize"'):
        assert text.count(needle) == committed.count(needle) > 0, needle
    src = out / "values.c"
    src.write_text('#include <stdio.h>\n#include <cuda.h>\nint main(void) {\n'
                   '    printf("%d %d\\n", CU_MEMHOSTALLOC_DEVICEMAP, '
                   'CU_TEST_PENDING_THEN_REDEFINED);\n    return 0;\n}\n')
    exe = str(out / "values")
    subprocess.run(["gcc", "-std=gnu11", "-w", "-I" + redeclared_include, str(src), "-o", exe],
                   check=True)
    devicemap, redefined = subprocess.run([exe], stdout=subprocess.PIPE, check=True,
                                          universal_newlines=True).stdout.split()
    assert '{"CU_MEMHOSTALLOC_DEVICEMAP", %sLL, 0}' % devicemap in text, \
        "CU_MEMHOSTALLOC_DEVICEMAP is not gcc's %s" % devicemap
    assert '{"CU_TEST_PENDING_THEN_REDEFINED", %sLL, 0}' % redefined in text
    assert "CU_TEST_NO_LONGER_CONSTANT" not in text


# Constants whose value depends on C's integer types (32-bit unsigned
# arithmetic, a cast to a narrower type): the model must hold what C gives.
TYPED_MACROS = {
    "CU_TEST_NOT_ZERO_U": "(~0u)",
    "CU_TEST_TOP_BIT_U": "(1u << 31)",
    "CU_TEST_MINUS_ONE_U": "(-1u)",
    "CU_TEST_WRAPS_U": "(0xFFFFFFFFu + 1u)",
    "CU_TEST_NARROWED": "((unsigned short)70000)",
    "CU_TEST_NOT_ZERO_ULL": "(~0ull)",
    "CU_TEST_INT_MIN": "(-2147483647 - 1)",
}


def test_macro_values_follow_c_integer_types(run_cubind, cuda_include, tmp_path):
    inc = tmp_path / "include"
    inc.mkdir()
    for n in os.listdir(cuda_include):
        if n != "cuda.h":
            os.symlink(os.path.join(cuda_include, n), str(inc / n))
    with open(os.path.join(cuda_include, "cuda.h")) as f:
        text = f.read()
    defs = "".join("#define %s %s\n" % kv for kv in TYPED_MACROS.items())
    end = text.rindex("#endif")
    (inc / "cuda.h").write_text(text[:end] + defs + text[end:])
    p = run_cubind("dump", "--header", str(inc / "cuda.h"))
    assert p.returncode == 0, p.stderr
    got = {m["name"]: m for m in json.loads(p.stdout)["macros"] if m["name"] in TYPED_MACROS}
    assert set(got) == set(TYPED_MACROS)
    src = tmp_path / "values.c"
    src.write_text("#include <stdio.h>\n#include <cuda.h>\nint main(void) {\n" + "".join(
        '    printf("%%s %%lld %%llu\\n", "%s", (long long)(%s), (unsigned long long)(%s));\n'
        % (n, n, n) for n in TYPED_MACROS) + "    return 0;\n}\n")
    exe = str(tmp_path / "values")
    subprocess.run(["gcc", "-std=gnu11", "-w", "-I" + str(inc), str(src), "-o", exe], check=True)
    out = subprocess.run([exe], stdout=subprocess.PIPE, check=True, universal_newlines=True)
    wrong = []
    for line in out.stdout.splitlines():
        name, signed, unsigned = line.split()
        want = int(unsigned) if got[name].get("unsigned") else int(signed)
        if got[name]["value"] != want:
            wrong.append("%s: dump %d, C %d" % (name, got[name]["value"], want))
    assert not wrong, "\n".join(wrong)
