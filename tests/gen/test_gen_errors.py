# SPDX-License-Identifier: Apache-2.0
"""Generator errors: a non-zero exit (2 for a header refused as not a driver
header, 1 otherwise), "path:LINE: message" on stderr naming the offending
file, and the output directory exactly as it was before."""
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "out")
TEMPLATES = os.path.join(REPO, "templates")
RULES = os.path.join(REPO, "gen", "rules.txt")
# A generated module's C, every unit (tests/module_units.py); imported from
# tests/ itself, as tests/fuzz/test_gen_asan.py runs this module with its own conftest.
sys.path.insert(0, os.path.join(REPO, "tests"))
from module_units import module_source  # noqa: E402
sys.path.pop(0)
SENTINEL = b"\n/* tests/gen sentinel: the generator must not replace this file */\n"

# A cudaTypedefs.h that parses, for headers made up by the tests.
TYPEDEFS_H = """#include "cuda.h"
typedef int (*PFN_cuInit_v2000)(unsigned int Flags);
"""


def snapshot(path):
    """Everything under path a failed run could change: names, kinds, inode
    numbers (a rename replaces them), sizes, modes and contents."""
    snap = {}
    for d, dirs, files in os.walk(path):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            data = None
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    data = f.read()
            snap[os.path.relpath(p, path)] = (stat.S_IFMT(st.st_mode), st.st_ino,
                                              st.st_mode, st.st_mtime_ns, data)
    return snap


def sentinel_out(tmp_path):
    """An output directory holding a marked copy of out/'s files."""
    d = tmp_path / "outdir"
    d.mkdir()
    names = sorted(n for n in os.listdir(OUT) if not n.startswith("."))
    assert names, "out/ is empty"
    for n in names:
        with open(os.path.join(OUT, n), "rb") as f:
            (d / n).write_bytes(f.read() + SENTINEL)
    return d


def assert_error(p, path, line=None, inside=False, status=1):
    """inside: the message may name a file in directory `path` instead.
    status: the exit status expected (2: a refused header)."""
    assert p.returncode != 0, "the generator succeeded (stderr: %s)" % p.stderr
    assert p.returncode == status, "exit status %d, expected %d:\n%s" % (
        p.returncode, status, p.stderr)
    want = (re.escape(str(path)) + (r"(/[^:\s]+)?" if inside else "")
            + (r":%d:" % line if line is not None else r":\d+:"))
    assert re.search(want, p.stderr), (
        "stderr does not name %s as path:LINE: (expected /%s/):\n%s" % (path, want, p.stderr))
    assert not p.stdout.strip(), "unexpected stdout: %s" % p.stdout


def run_generate(run_cubind, header, out, *extra, prefix=()):
    """prefix: a command the generator runs under (unprivileged_prefix)."""
    return run_cubind("generate", "--header", str(header), "--out", str(out), *extra,
                      prefix=prefix)


def generate_fails(run_cubind, tmp_path, header, path, line=None, *extra, status=1, prefix=()):
    """Runs generate into a sentinel directory; checks the error and that the
    directory did not change."""
    out = sentinel_out(tmp_path)
    before = snapshot(str(out))
    p = run_generate(run_cubind, header, out, *extra, prefix=prefix)
    assert_error(p, path, line, status=status)
    assert snapshot(str(out)) == before, "the failed run changed the output directory"
    return p


def rule_refused(run_cubind, tmp_path, header, rule):
    """generate_fails with the repository's rules plus `rule` (lines, no
    final newline) last: the error must name the rules file and its last
    line."""
    with open(RULES) as f:
        lines = f.read().splitlines(True)
    lines += [line + "\n" for line in rule.split("\n")]
    rules = tmp_path / "rules.txt"
    rules.write_text("".join(lines))
    return generate_fails(run_cubind, tmp_path, header, rules, len(lines), "--rules", str(rules))


def made_up_header(tmp_path, cuda_h_text, typedefs=TYPEDEFS_H):
    d = tmp_path / "hdr"
    d.mkdir()
    (d / "cuda.h").write_text(cuda_h_text)
    if typedefs is not None:
        (d / "cudaTypedefs.h").write_text(typedefs)
    return d / "cuda.h"


# ---- the header ------------------------------------------------------------------

def test_missing_header(run_cubind, tmp_path):
    h = tmp_path / "nowhere" / "cuda.h"
    generate_fails(run_cubind, tmp_path, h, h)


def test_header_that_does_not_parse(run_cubind, tmp_path):
    h = made_up_header(tmp_path, "typedef int CUresult;\n#define CUDAAPI\nint x = ;\nstruct {\n")
    generate_fails(run_cubind, tmp_path, h, h, 3)


def test_header_without_driver_declarations(run_cubind, tmp_path):
    h = made_up_header(tmp_path, "int x;\n")
    p = generate_fails(run_cubind, tmp_path, h, h, status=2)
    assert "cuInit" in p.stderr


# Headers that parse and declare part of what a driver header has: the
# generator names what is missing (line 0: the file as a whole, for a
# declaration that is absent) or where it is wrong (the line of cuInit,
# whose return type CUresult is not an enum).
PARTIAL_HEADERS = {
    "cuInit only": ("#ifndef T_CUDA_H\n#define T_CUDA_H\n"
                    "typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;\n"
                    "CUresult cuInit(unsigned int Flags);\n#endif\n",
                    "no declaration of cuGetErrorName", 0),
    "CUresult not an enum": ("#ifndef T_CUDA_H\n#define T_CUDA_H\ntypedef int CUresult;\n"
                             "CUresult cuInit(unsigned int Flags);\n"
                             "CUresult cuGetErrorName(CUresult error, const char **pStr);\n"
                             "CUresult cuDriverGetVersion(int *driverVersion);\n#endif\n",
                             "no CUresult enum (the return type of cuInit, declared here)", 4),
}


@pytest.mark.parametrize("case", sorted(PARTIAL_HEADERS))
def test_header_with_part_of_the_declarations(run_cubind, tmp_path, case):
    """Exit status 2 (a header refused as not a driver header) naming what
    is missing or wrong: fails on 05a670f, which exited 1 for these (the
    status of a generator error, not of a refused header)."""
    text, message, line = PARTIAL_HEADERS[case]
    h = made_up_header(tmp_path, text)
    p = generate_fails(run_cubind, tmp_path, h, h, line, status=2)
    assert "not a CUDA driver header: " + message in p.stderr, p.stderr


def copy_of_cuda_h(tmp_path, cuda_h, edit):
    """cuda.h and cudaTypedefs.h copied into tmp_path/hdr, cuda.h's text
    passed through edit(text) -> text."""
    d = tmp_path / "hdr"
    d.mkdir()
    with open(cuda_h) as f:
        text = f.read()
    new = edit(text)
    assert new != text, "the edit changed nothing"
    (d / "cuda.h").write_text(new)
    shutil.copy(os.path.join(os.path.dirname(cuda_h), "cudaTypedefs.h"), str(d))
    return d / "cuda.h"


CUDA_VERSION_LINE = re.compile(r"^#define CUDA_VERSION .*$", re.M)


# A header without CUDA_VERSION would stamp version 0 into the module, the
# capsule table and the manifest (issue 27; 05a670f exits 0 and does).
CUDA_VERSION_CASES = {
    "absent": (lambda t: CUDA_VERSION_LINE.sub("", t, count=1), False,
               "not a CUDA driver header: no CUDA_VERSION macro"),
    "not a number": (lambda t: CUDA_VERSION_LINE.sub("#define CUDA_VERSION cuInit", t, count=1),
                     True, "not a CUDA driver header: CUDA_VERSION is not a positive integer"),
    "zero": (lambda t: CUDA_VERSION_LINE.sub("#define CUDA_VERSION 0", t, count=1),
             True, "not a CUDA driver header: CUDA_VERSION is not a positive integer"),
}


@pytest.mark.parametrize("case", sorted(CUDA_VERSION_CASES))
def test_header_without_a_cuda_version_is_refused(run_cubind, tmp_path, cuda_h, case):
    """Refused with exit status 2, naming the header (and the line of a
    CUDA_VERSION that is not a release number); out/ untouched; `manifest`
    `dump` and `classify` refuse it the same way."""
    edit, has_line, message = CUDA_VERSION_CASES[case]
    with open(cuda_h) as f:
        text = f.read()
    line = text.count("\n", 0, CUDA_VERSION_LINE.search(text).start()) + 1
    h = copy_of_cuda_h(tmp_path, cuda_h, edit)
    p = generate_fails(run_cubind, tmp_path, h, h, line if has_line else 0, status=2)
    assert message in p.stderr, p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr
    for cmd in (["manifest", "--header", str(h)], ["dump", "--header", str(h)],
                ["classify", "--header", str(h)]):
        q = run_cubind(*cmd)
        assert_error(q, h, line if has_line else 0, status=2)
        assert message in q.stderr, q.stderr


def test_typedefs_header_that_does_not_parse(run_cubind, tmp_path):
    h = made_up_header(tmp_path, "int x;\n",
                       typedefs='#include "cuda.h"\ntypedef int (*PFN_cuInit_v2000)(unsigned int;\n')
    generate_fails(run_cubind, tmp_path, h, h.parent / "cudaTypedefs.h", 2)


def test_missing_typedefs_header(run_cubind, tmp_path, cuda_h):
    d = tmp_path / "hdr"
    d.mkdir()
    shutil.copy(cuda_h, str(d / "cuda.h"))
    p = generate_fails(run_cubind, tmp_path, d / "cuda.h", d / "cuda.h")
    assert "cudaTypedefs.h" in p.stderr


def test_dump_reports_the_same_errors(run_cubind, tmp_path):
    h = made_up_header(tmp_path, "int x = ;\n")
    p = run_cubind("dump", "--header", str(h))
    assert_error(p, h, 1)


# ---- the output directory ----------------------------------------------------

def test_output_directory_missing(run_cubind, tmp_path, cuda_h):
    out = tmp_path / "missing"
    p = run_generate(run_cubind, cuda_h, out)
    assert_error(p, out)
    assert not os.path.lexists(str(out)), "the generator created the output directory"
    assert sorted(os.listdir(str(tmp_path))) == []


def test_output_directory_is_a_file(run_cubind, tmp_path, cuda_h):
    out = tmp_path / "file"
    out.write_bytes(SENTINEL)
    before = snapshot(str(tmp_path))
    p = run_generate(run_cubind, cuda_h, out)
    assert_error(p, out)
    assert snapshot(str(tmp_path)) == before


def test_output_directory_below_a_file(run_cubind, tmp_path, cuda_h):
    (tmp_path / "file").write_bytes(SENTINEL)
    out = tmp_path / "file" / "out"
    before = snapshot(str(tmp_path))
    p = run_generate(run_cubind, cuda_h, out)
    assert_error(p, out)
    assert snapshot(str(tmp_path)) == before


@pytest.mark.parametrize("target", ["driver.c", "struct_layout_check.c", "unsupported.txt"])
def test_output_file_that_cannot_be_replaced(run_cubind, tmp_path, cuda_h, target):
    """One of the outputs is a directory, so it cannot be renamed into place
    (this fails for root too). Nothing in the directory may change: not the
    other outputs either, or out/ would be half new and half old."""
    out = sentinel_out(tmp_path)
    os.unlink(str(out / target))
    (out / target).mkdir()
    (out / target / "keep").write_bytes(SENTINEL)
    before = snapshot(str(out))
    p = run_generate(run_cubind, cuda_h, out)
    assert_error(p, out / target)
    after = snapshot(str(out))
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, "the failed run changed %s" % changed


RENAME_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* TEST-ONLY: rename() failing (EIO) for the temporary of the output named
 * in CUBIND_TEST_FAIL_RENAME, the others done by the C library. */
int rename(const char *from, const char *to)
{
    const char *fail = getenv("CUBIND_TEST_FAIL_RENAME");
    size_t n = fail ? strlen(fail) : 0, m = strlen(to);
    if (n && strstr(from, ".tmp.") && m >= n && strcmp(to + m - n, fail) == 0) {
        errno = EIO;
        return -1;
    }
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}
"""


@pytest.fixture(scope="session")
def rename_shim(tmp_path_factory):
    d = tmp_path_factory.mktemp("shim")
    (d / "shim.c").write_text(RENAME_SHIM)
    so = d / "shim.so"
    p = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(d / "shim.c"), "-ldl"],
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stderr
    return so


@pytest.mark.parametrize("target", ["struct_layout_check.c", "cu.pyi"])
def test_a_rename_failing_part_way_puts_the_old_outputs_back(run_cubind, tmp_path, cuda_h,
                                                            rename_shim, target):
    """The outputs are renamed into place one by one: when one rename fails
    after others succeeded, those are put back, so the directory holds the
    old set, not half of each (05a670f left driver.c new and the rest old).
    The old files come back as themselves (same inodes, times, contents)
    and nothing is left beside them."""
    # ASan's runtime would refuse to come after the shim in the load order.
    env = ["env", "LD_PRELOAD=%s" % rename_shim, "CUBIND_TEST_FAIL_RENAME=/" + target,
           "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:exitcode=99:abort_on_error=0"]
    p = generate_fails(run_cubind, tmp_path, cuda_h, tmp_path / "outdir" / target, 0, prefix=env)
    assert "cannot rename into place" in p.stderr, p.stderr


def unprivileged_prefix():
    """A command prefix that runs its command as nobody (uid and gid 65534,
    no supplementary groups), or None when neither tool works here."""
    for cmd in (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"],
                ["runuser", "-u", "nobody", "--"]):
        if shutil.which(cmd[0]) is None:
            continue
        try:
            r = subprocess.run(cmd + ["id", "-u"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True, timeout=30)
        except OSError:
            continue
        if r.returncode == 0 and r.stdout.strip() == "65534":
            return cmd
    return None


def test_unwritable_output_directory(run_cubind, tmp_path, cuda_h):
    """Non-root: the directory is made read-only. Root (CI), whom permissions
    do not stop: the generator runs as nobody against a root-owned 0755
    directory (in a fresh 0755 parent: pytest's tmp_path is 0700)."""
    prefix = []
    if os.geteuid() == 0:
        prefix = unprivileged_prefix()
        if prefix is None:
            pytest.skip("running as root, and neither setpriv nor runuser can drop to "
                        "nobody: test_output_file_that_cannot_be_replaced covers the failure")
        parent = pathlib.Path(tempfile.mkdtemp(prefix="cubind-unwritable-"))
        os.chmod(str(parent), 0o755)
        out = sentinel_out(parent)
        os.chmod(str(out), 0o755)
        probe = subprocess.run(prefix + ["sh", "-c", 'touch "$1/.probe"', "sh", str(out)],
                               stderr=subprocess.DEVNULL)
        assert probe.returncode != 0, "nobody can write into %s" % out
    else:
        parent = None
        out = sentinel_out(tmp_path)
        os.chmod(str(out), 0o555)
    try:
        before = snapshot(str(out))
        p = run_generate(run_cubind, cuda_h, out, prefix=prefix)
        assert_error(p, out, inside=True)
        assert snapshot(str(out)) == before
    finally:
        os.chmod(str(out), 0o755)
        if parent is not None:
            shutil.rmtree(str(parent))


# ---- templates and rules ------------------------------------------------------

@pytest.mark.parametrize("template", ["report.txt.tmpl", "driver/function.c.tmpl",
                                      "generated_header.tmpl"])
def test_broken_template(run_cubind, tmp_path, cuda_h, template):
    t = tmp_path / "templates"
    shutil.copytree(TEMPLATES, str(t))
    path = t / template
    lines = path.read_text().splitlines(True)
    assert len(lines) >= 2
    lines.insert(2, "{{#tests_gen_unclosed}}\n")  # becomes line 3
    path.write_text("".join(lines))
    p = generate_fails(run_cubind, tmp_path, cuda_h, path, 3, "--templates", str(t))
    assert "tests_gen_unclosed" in p.stderr


def test_unknown_rules_directive(run_cubind, tmp_path, cuda_h):
    p = rule_refused(run_cubind, tmp_path, cuda_h, "tests-gen-no-such-directive cuInit")
    assert "tests-gen-no-such-directive" in p.stderr


def test_missing_rules_file(run_cubind, tmp_path, cuda_h):
    rules = tmp_path / "no-rules.txt"
    generate_fails(run_cubind, tmp_path, cuda_h, rules, None, "--rules", str(rules))


def test_rename_param_in_takes_three_arguments(run_cubind, tmp_path, cuda_h):
    p = rule_refused(run_cubind, tmp_path, cuda_h, "rename-param-in cuInit Flags")
    assert "'rename-param-in' takes 3 argument(s), got 2" in p.stderr


def generate_with_extra_rules(run_cubind, tmp_path, cuda_h, extra):
    """Generates into tmp_path/outdir with the repository's rules plus the
    lines `extra`, which must succeed. Returns (stderr, a function giving
    "PATH:LINE: rule 'RULE' matches nothing in HEADER" for extra line k
    (from 1), the driver module's C text, every unit)."""
    out = tmp_path / "outdir"
    out.mkdir(exist_ok=True)
    with open(RULES) as f:
        lines = f.read().splitlines(True)
    rules = tmp_path / "rules.txt"
    rules.write_text("".join(lines + extra))
    p = run_generate(run_cubind, cuda_h, out, "--rules", str(rules))
    assert p.returncode == 0, p.stderr
    # By default one summary line counts them (they read as errors
    # otherwise: an older release's header leaves 17-104 unmatched);
    # --list-unmatched names each.
    summary = p.stderr
    assert "matches nothing" not in summary
    p = run_generate(run_cubind, cuda_h, out, "--rules", str(rules), "--list-unmatched")
    assert p.returncode == 0, p.stderr
    n = p.stderr.count("matches nothing")
    assert n == 0 or "cubind: %d rule%s of %s name%s nothing in %s (" % (
        n, "s" if n > 1 else "", rules, "" if n > 1 else "s", cuda_h) in summary, summary

    def unmatched(k, rule):
        return "%s:%d: rule '%s' matches nothing in %s" % (rules, len(lines) + k, rule, cuda_h)

    return p.stderr, unmatched, module_source(out, "driver")


def test_rules_matching_nothing_are_reported_with_their_line(run_cubind, tmp_path, cuda_h):
    """A rule naming what the header lacks is reported as path:LINE, not
    fatal: older headers (11.8, 12.4) lack functions and parameters that
    rules.txt names for 13.0. The repository's rules match everything in
    13.0's header."""
    out = tmp_path / "outdir"
    out.mkdir()
    p = run_generate(run_cubind, cuda_h, out)
    assert p.returncode == 0, p.stderr
    assert "matches nothing" not in p.stderr
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["rename-param-in cuTestsGenNoSuchFunction Flags flags\n",
         "rename-param-in cuInit testsGenNoSuchParam flags\n",
         "rename-param-in cuInit Flags testsGenFlags\n"])
    assert unmatched(1, "rename-param-in cuTestsGenNoSuchFunction Flags") in stderr
    assert unmatched(2, "rename-param-in cuInit testsGenNoSuchParam") in stderr
    assert "rename-param-in cuInit Flags" not in stderr
    # the rule that matches renames the Python parameter, not the C prototype
    assert '"cuInit(testsGenFlags)\\n--\\n\\n"' in text
    assert "CUresult cuInit(unsigned int Flags)" in text


def test_rules_name_a_function_by_its_public_name_or_its_declared_symbol(run_cubind, tmp_path,
                                                                         cuda_h):
    """cuMemAlloc is declared as cuMemAlloc_v2: a rule may name either, so
    one rule follows a function that a release renamed (12.x's
    cuGraphAddDependencies_v2 is 13.0's cuGraphAddDependencies). A
    handle-cast to a class the header lacks is reported, and the function
    stays bound without the cast."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["rename-param-in cuMemAlloc_v2 bytesize testsGenBytes\n",
         "rename-param-in cuMemFree_v9 dptr testsGenPtr\n",
         "handle-cast cuFuncGetAttribute hfunc CUtestsGenNoSuchHandle\n"])
    assert "rename-param-in cuMemAlloc_v2" not in stderr
    assert unmatched(2, "rename-param-in cuMemFree_v9 dptr") in stderr
    assert unmatched(3, "handle-cast cuFuncGetAttribute hfunc") in stderr
    assert '"cuMemAlloc(testsGenBytes)\\n--\\n\\n"' in text
    assert '"cuMemFree(dptr)\\n--\\n\\n"' in text
    assert "cuFuncGetAttribute" not in (tmp_path / "outdir" / "unsupported.txt").read_text()
    assert "static PyObject *impl_cuFuncGetAttribute(" in text


def test_field_count_rules_that_do_not_describe_the_header_are_reported(run_cubind, tmp_path,
                                                                         cuda_h):
    """A field-count rule is reported unless its field points at a record
    and its count is an integer field of the same record; one that matches
    makes the field a counted array of records."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["field-count CUtestsGenNoSuchRecord attrs numAttrs\n",
         "field-count CUlaunchConfig_st gridDimX numAttrs\n",
         "field-count CUlaunchConfig_st attrs testsGenNoCount\n",
         "field-count CUlaunchConfig_st attrs hStream\n"])
    assert unmatched(1, "field-count CUtestsGenNoSuchRecord attrs") in stderr
    assert unmatched(2, "field-count CUlaunchConfig_st gridDimX") in stderr
    assert unmatched(3, "field-count CUlaunchConfig_st attrs") in stderr
    assert unmatched(4, "field-count CUlaunchConfig_st attrs") in stderr
    assert '{"attrs", 40, 8, CBS_F_RECORD_ARRAY,' in text
    assert '{"gridDimX", 0, 4, CBS_F_UNSIGNED,' in text


def test_field_count_query_rules_match_a_counted_pointer(run_cubind, tmp_path, cuda_h):
    """A field-count-query rule matches where the field-count rule of its
    field matches (a record the header lacks: reported); on the driver's
    input structs it changes nothing (the fill is an output struct's)."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["field-count-query CUtestsGenNoSuchRecord attrs\n",
         "field-count-query CUlaunchConfig_st attrs\n"])
    assert unmatched(1, "field-count-query CUtestsGenNoSuchRecord attrs") in stderr
    assert "field-count-query CUlaunchConfig_st" not in stderr
    assert "cbs_struct_fill(" not in text


@pytest.mark.parametrize("rule, message", [
    # a field without a field-count rule (a record the header has)
    ("field-count-query CUlaunchConfig_st gridDimX",
     "field-count-query: CUlaunchConfig_st.gridDimX has no field-count rule"),
    # two arrays of one record: the binding fills one
    ("field-count-query CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st extSemArray\n"
     "field-count-query CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st paramsArray",
     "CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st has one already (extSemArray)"),
])
def test_field_count_query_rules_that_do_not_fit_are_errors(run_cubind, tmp_path, cuda_h, rule,
                                                            message):
    """A field-count-query rule naming a field of the header without a
    field-count rule, or a record's second one, is a path:line error."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, rule)
    assert message in p.stderr, p.stderr


def test_field_count_rules_on_handles_make_handle_arrays(run_cubind, tmp_path, cuda_h):
    """A field-count rule whose field points at a handle makes it a counted
    array of handles (the handle's class index, its size); one on a pointer
    to neither a record nor a handle is reported."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["field-count CUDA_CONDITIONAL_NODE_PARAMS phGraph_out size\n",
         "field-count CUDA_KERNEL_NODE_PARAMS_st extra sharedMemBytes\n"])
    assert "phGraph_out" not in stderr
    assert unmatched(2, "field-count CUDA_KERNEL_NODE_PARAMS_st extra") in stderr
    # the driver face keeps its counts the caller's (sets_count 0)
    assert re.search(r'\{"phGraph_out", \d+, 8, CBS_F_HANDLE_ARRAY, \d+, 0, -1, 0, \d+, 8, 0\}',
                     text)
    assert re.search(r'\{"extra", \d+, 8, CBS_F_KERNEL_EXTRA, -1, 0, -1, 0, -1, 0, 0\}', text)


def test_field_count_rules_on_fixed_arrays_count_them(run_cubind, tmp_path, cuda_h):
    """A field-count rule on a fixed array (a char array is text:
    CUcheckpointRestoreArgs_st's `char reserved[...]` is reported;
    CUDA_ARRAY_SPARSE_PROPERTIES_st's `unsigned int reserved[4]` is not)
    makes its count field aux and its setter keep the count (sets_count
    1); the driver face still names the count field."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["field-count CUcheckpointRestoreArgs_st reserved gpuPairsCount\n",
         "field-count CUDA_ARRAY_SPARSE_PROPERTIES_st reserved flags\n",
         "field-count CUDA_ARRAY_SPARSE_PROPERTIES_st reserved testsGenNoCount\n"])
    assert unmatched(1, "field-count CUcheckpointRestoreArgs_st reserved") in stderr
    assert "field-count CUDA_ARRAY_SPARSE_PROPERTIES_st reserved flags" not in stderr
    assert unmatched(3, "field-count CUDA_ARRAY_SPARSE_PROPERTIES_st reserved") in stderr
    table = re.search(r'/\* CUDA_ARRAY_SPARSE_PROPERTIES_st \*/\n'
                      r'static const cbs_field_def struct_fields_\d+\[\] = \{\n'
                      r'((?:    \{"[^\n]*\n)*)', text).group(1).splitlines()
    names = [line.split('"')[1] for line in table]
    # reserved's aux is the index of flags in the record's table
    reserved = table[names.index("reserved")]
    assert reserved.endswith("CBS_F_UNSIGNED, -1, 4, -1, 0, %d, 0, 1}," % names.index("flags")), \
        reserved
    assert '{"flags", cbs_struct_get' in text



@pytest.mark.parametrize("rule, message", [
    ("host-bytes cuMemcpyDtoH dstHost copies ByteCount", "ACCESS must be reads or writes"),
    ("host-bytes cuMemcpyHtoD srcHost writes ByteCount", "is const: the driver cannot write it"),
    ("host-bytes cuMemcpyHtoD dstDevice reads ByteCount", "is not a void or integer pointer"),
    ("host-bytes cuMemcpyHtoD srcHost reads testsGenNoCount", "'testsGenNoCount' is not an integer"),
    ("host-bytes cuMemcpyHtoD srcHost reads ByteCount rows=ByteCount",
     "a function parameter takes only SIZE"),
    ("host-bytes cuMemcpyHtoD srcHost reads 4", "SIZE is a parameter, not a constant"),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads 0", "a constant SIZE must be at least 1 byte"),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads WidthInBytes rows=srcMemoryType",
     "'srcMemoryType' is not an integer field"),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads WidthInBytes colour=Height", "is not rows="),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads WidthInBytes rows=Height rows=Height",
     "given twice"),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads WidthInBytes when=Height:CU_MEMORYTYPE_HOST",
     "when= needs an enum field"),
    ("host-bytes CUDA_MEMCPY2D_st srcHost reads WidthInBytes when=srcMemoryType:CU_JIT_INPUT_PTX",
     "when= needs an enum field"),
])
def test_host_bytes_rules_that_do_not_fit_are_errors(run_cubind, tmp_path, cuda_h, rule,
                                                     message):
    """A host-bytes rule whose owner exists but which does not fit it is a
    path:line error (the output left as it was); one naming a function or
    record the header lacks is only reported."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, rule)
    assert message in p.stderr


def test_host_bytes_rules_naming_nothing_are_reported(run_cubind, tmp_path, cuda_h):
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["host-bytes cuTestsGenNoSuchCopy dst writes n\n",
         "host-bytes CUDA_MEMCPY2D_st testsGenNoField reads WidthInBytes\n"])
    assert unmatched(1, "host-bytes cuTestsGenNoSuchCopy dst") in stderr
    assert unmatched(2, "host-bytes CUDA_MEMCPY2D_st testsGenNoField") in stderr
    # the repository's rules made the copy structs' extents, and the rule
    # naming a field CUDA_MEMCPY2D_st lacks made none (an extent's first
    # number is its buffer field's index: -1 would be refused at import)
    assert "static const cbs_host_extent struct_extents_" in text
    extent_row = re.compile(r"^    \{ (-?\d+), [01], -?\d+, \d+LL, \{", re.M)
    extents = extent_row.findall(text)
    assert extents and "-1" not in extents
    stderr, unmatched, text = generate_with_extra_rules(run_cubind, tmp_path, cuda_h, [])
    assert len(extent_row.findall(text)) == len(extents)


def test_registry_kind_rules_naming_no_kind_are_errors(run_cubind, tmp_path, cuda_h):
    """A registry-kind CONSTANT must be one of the registry kinds the
    generator knows (rules_bind.h: cb_registry_kind): a path:line error."""
    p = rule_refused(run_cubind, tmp_path, cuda_h,
                     "registry-kind CUgraph CUBIND_REG_TESTS_GEN_NONE")
    assert "registry-kind: 'CUBIND_REG_TESTS_GEN_NONE' is not a registry kind" in p.stderr


def test_callback_rules_naming_no_kind_are_errors(run_cubind, tmp_path, cuda_h):
    """A callback rule's KIND must be one of callback_kinds.def's words, all
    of which the error lists: a path:line error, nothing written."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, "callback cuLaunchHostFunc fn userData hots")
    assert "'callback' takes 'host', 'stream' or 'destroy', not 'hots'" in p.stderr


COUNT_BOUND_RULES = ("count-bound cuModuleEnumerateFunctions ",
                     "count-bound cuLibraryEnumerateKernels ")


@pytest.mark.parametrize("rule, message", [
    ("count-bound cuModuleEnumerateFunctions numFunctions cuLibraryGetKernelCount",
     "cuLibraryGetKernelCount must take (unsigned int *count, H) with H the type of a handle "
     "parameter of cuModuleEnumerateFunctions"),
    ("count-bound cuModuleEnumerateFunctions numFunctions cuModuleGetFunction",
     "cuModuleGetFunction must take (unsigned int *count, H)"),
    ("count-bound cuModuleEnumerateFunctions mod cuModuleGetFunctionCount",
     "'mod' is not the unsigned input count of an output array"),
    ("count-bound cuGraphGetNodes numNodes cuModuleGetFunctionCount",
     "cuModuleGetFunctionCount must take (unsigned int *count, H) with H the type of a handle "
     "parameter of cuGraphGetNodes"),
    ("count-bound cuLibraryEnumerateKernels numKernels cuLibraryGetKernelCount\n"
     "count-bound cuModuleEnumerateFunctions numFunctions cuModuleGetFunctionCount\n"
     "count-bound cuDevSmResourceSplitByCount nbGroups cuLibraryGetKernelCount", None),
])
def test_count_bound_rules_that_do_not_fit_are_errors(run_cubind, tmp_path, cuda_h, rule,
                                                      message):
    """A count-bound rule whose functions exist must name the unsigned input
    count of an output array and a count function (unsigned int *, H) with
    H a handle parameter of the function: otherwise a path:line error on
    its line. message None: the last line is checked for its handle."""
    with open(RULES) as f:
        lines = [l for l in f.read().splitlines(True) if not l.startswith(COUNT_BOUND_RULES)]
    assert len(lines) == len(open(RULES).readlines()) - 2, "rules.txt lost its count-bound rules"
    lines += [l + "\n" for l in rule.split("\n")]
    rules = tmp_path / "rules.txt"
    rules.write_text("".join(lines))
    p = generate_fails(run_cubind, tmp_path, cuda_h, rules, len(lines), "--rules", str(rules))
    assert (message or "count-bound cuDevSmResourceSplitByCount: cuLibraryGetKernelCount must "
            "take (unsigned int *count, H)") in p.stderr


def test_count_bound_rules_naming_nothing_are_reported(run_cubind, tmp_path, cuda_h):
    """One naming a function, count or count function the header lacks
    is only reported; the repository's two rules bind their functions."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["count-bound cuTestsGenNoSuchEnumerate n cuModuleGetFunctionCount\n",
         "count-bound cuModuleEnumerateFunctions testsGenNoCount cuModuleGetFunctionCount\n",
         "count-bound cuModuleEnumerateFunctions numFunctions cuTestsGenNoSuchCount\n"])
    assert unmatched(1, "count-bound cuTestsGenNoSuchEnumerate n") in stderr
    assert unmatched(2, "count-bound cuModuleEnumerateFunctions testsGenNoCount") in stderr
    assert unmatched(3, "count-bound cuModuleEnumerateFunctions numFunctions") in stderr
    assert "bound_fn = proc(st, PROC_cuModuleGetFunctionCount);" in text
    assert "bound_fn = proc(st, PROC_cuLibraryGetKernelCount);" in text
    assert text.count("bound_fn = proc(st, PROC_") == 2


def test_param_doc_takes_the_rest_of_its_line(run_cubind, tmp_path, cuda_h):
    """param-doc's TEXT is the rest of the line, any number of words, C-escaped
    into both faces' docstrings (issue 43: every parameter read "The C
    parameter ``NAME``."); a parameter the header lacks is reported, and
    one without a rule keeps the default line."""
    text = 'A test "text" of  many words: one two three four five six seven eight nine ten.'
    stderr, unmatched, driver = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["param-doc cuDeviceGetCount count %s\n" % text,
         "param-doc cuInit testsGenNoSuchParam Some text.\n",
         "param-doc cuStreamBeginCapture hStream   Trailing blanks go.   \n"])
    assert unmatched(2, "param-doc cuInit testsGenNoSuchParam") in stderr
    assert "param-doc cuDeviceGetCount" not in stderr
    # cuDeviceGetCount's `count` is an output: no Parameters entry shows it
    assert "A test" not in driver
    escaped = text.replace('"', '\\"')   # its blanks as written
    assert driver.count('"    Trailing blanks go.\\n"') == 2   # both faces
    assert '"    The C parameter ``mode``.\\n"' in driver
    stderr, _, driver = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h, ["param-doc cuStreamBeginCapture mode %s\n" % text])
    assert driver.count('"    %s\\n"' % escaped) == 2, escaped


def test_param_doc_without_text_is_refused(run_cubind, tmp_path, cuda_h):
    p = rule_refused(run_cubind, tmp_path, cuda_h, "param-doc cuInit Flags")
    assert "'param-doc' takes 3 argument(s), got 2" in p.stderr


@pytest.mark.parametrize("count", ["0", "17", "08", "4x", "-1"])
def test_a_parts_count_out_of_range_is_refused(run_cubind, tmp_path, cuda_h, count):
    """`parts N` takes 1..16 translation units, written plainly (configure
    reads the same number with sed)."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, "parts " + count)
    assert "'parts' takes a number of translation units from 1 to 16, not '%s'" % count in p.stderr


def test_the_last_parts_rule_gives_the_units(run_cubind, tmp_path, cuda_h):
    """A rules file's last `parts` rule wins, as for every API directive:
    here 3 units after the repository's 8, and their functions together
    are those of the unsplit module."""
    _, _, text = generate_with_extra_rules(run_cubind, tmp_path, cuda_h, ["parts 3\n"])
    out = tmp_path / "outdir"
    assert sorted(n for n in os.listdir(out) if n.startswith("driver") and n.endswith(".c")) == \
        ["driver.c", "driver_part1.c", "driver_part2.c"]
    assert text.count("PyObject *impl_cuInit(") == 1


@pytest.mark.parametrize("rule, message", [
    ("maker CUDA_MEMCPY2D_st testsGenMake Height", "'Height' is not PARAM=FIELD"),
    ("maker CUDA_MEMCPY2D_st testsGenMake =Height", "'=Height' is not PARAM=FIELD"),
    ("maker CUDA_MEMCPY2D_st testsGenMake h=", "'h=' is not PARAM=FIELD"),
    ("maker CUDA_MEMCPY2D_st testsGenMake h=testsGenNoField", "has no field 'testsGenNoField'"),
    ("maker CUDA_MEMCPY2D_st testsGenMake h=Height h=WidthInBytes", "parameter 'h' given twice"),
])
def test_maker_rules_that_do_not_fit_are_errors(run_cubind, tmp_path, cuda_h, rule, message):
    """A maker rule naming a record of the header whose terms do not fit it
    is a path:line error."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, rule)
    assert message in p.stderr


def test_maker_alias_and_sizeof_rules_make_module_functions(run_cubind, tmp_path, cuda_h):
    """maker, alias and sizeof rules add functions to both faces' method
    tables; a maker naming no record and an alias naming no function are
    only reported."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["maker CUDA_MEMCPY2D_st testsGenMake w=WidthInBytes h=Height\n",
         "alias cuInit testsGenInit\n",
         "sizeof testsGenSizeof\n",
         "maker testsGenNoRecord testsGenMake2 a=b\n",
         "alias cuTestsGenNoSuchFunction testsGenAlias\n"])
    assert unmatched(4, "maker testsGenNoRecord testsGenMake2") in stderr
    assert unmatched(5, "alias cuTestsGenNoSuchFunction testsGenAlias") in stderr
    assert "testsGenMake2" not in text and "testsGenAlias" not in text
    assert text.count('{"testsGenMake", (PyCFunction)(void (*)(void))maker_testsGenMake,') == 2
    assert 'testsGenMake_fields[] = { "WidthInBytes", "Height", NULL }' in text
    assert text.count('{"testsGenInit", (PyCFunction)(void (*)(void))driver_cuInit,') == 1
    assert text.count('{"testsGenInit", (PyCFunction)(void (*)(void))cu_cuInit,') == 1
    # the alias's own docstring, so inspect.signature reads its name
    assert '"testsGenInit(Flags)\\n--\\n\\n"' in text
    assert text.count('{"testsGenSizeof", module_sizeof, METH_O, sizeof_doc}') == 2


# ---- define-enum ------------------------------------------------------------------

@pytest.mark.parametrize("rule, message", [
    ("define-enum TestsGenFlags", "'define-enum' takes 2 to 12 arguments, got 1"),
    ("define-enum 1TestsGen CU_MEMHOSTALLOC_", "CLASS '1TestsGen' is not an identifier"),
    ("define-enum TestsGenFlags CU-MEMHOSTALLOC", "PREFIX 'CU-MEMHOSTALLOC' is not an identifier"),
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_ CU_MEMHOSTREGISTER_",
     "STRIP 'CU_MEMHOSTREGISTER_' is not a prefix of PREFIX 'CU_MEMHOSTALLOC_'"),
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_ CU_ CU_MEM",
     "'define-enum' takes one STRIP, then -NAME exclusions, not 'CU_MEM'"),
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_ -CU_MEMHOSTREGISTER_PORTABLE",
     "excludes 'CU_MEMHOSTREGISTER_PORTABLE', which is no name starting with PREFIX"),
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_ -", "excludes ''"),
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_ -CU_MEMHOSTALLOC_PORTABLE=1ST",
     "excludes 'CU_MEMHOSTALLOC_PORTABLE=1ST'"),
    # bound against the header: a member name that is no identifier, a
    # CLASS that is one of the header's enum classes
    ("define-enum TestsGenFlags CU_MEMHOSTALLOC_PORTABLE",
     "define-enum: the member name '' of CU_MEMHOSTALLOC_PORTABLE is not an identifier"),
    ("define-enum CUlimit CU_MEMHOSTALLOC_", "define-enum: CLASS 'CUlimit' names an enum of the header"),
])
def test_define_enum_rules_that_do_not_fit_are_errors(run_cubind, tmp_path, cuda_h, rule, message):
    """A define-enum line with bad words, or whose class cannot be built,
    is a path:line error naming the rules file and that line."""
    p = rule_refused(run_cubind, tmp_path, cuda_h, rule)
    assert message in p.stderr, p.stderr


def test_define_enum_members_repeating_are_an_error_at_their_line(run_cubind, tmp_path, cuda_h):
    """Two lines of one class giving one member name two values
    (MAX_THREADS_PER_BLOCK of CUdevice_attribute, 1, and of
    CUfunction_attribute, 0): the line adding the second is named."""
    with open(RULES) as f:
        lines = f.read().splitlines(True)
    lines += ["define-enum TestsGenAttr CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK "
              "CU_DEVICE_ATTRIBUTE_\n",
              "define-enum TestsGenAttr CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK "
              "CU_FUNC_ATTRIBUTE_\n"]
    rules = tmp_path / "rules.txt"
    rules.write_text("".join(lines))
    p = generate_fails(run_cubind, tmp_path, cuda_h, rules, len(lines), "--rules", str(rules))
    assert ("the member name 'MAX_THREADS_PER_BLOCK' of CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK "
            "repeats one of its class with another value") in p.stderr, p.stderr


def test_define_enum_makes_an_enum_class_of_constants(run_cubind, tmp_path, cuda_h):
    """define-enum: the macros (then enumerators) named PREFIX..., members
    named without STRIP, lines of one CLASS adding to it, -NAME left out;
    a line selecting nothing is only reported and makes no class."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["define-enum TestsGenHostFlags CU_MEMHOSTALLOC_ CU_ -CU_MEMHOSTALLOC_WRITECOMBINED\n",
         "define-enum TestsGenHostFlags CU_MEMHOSTREGISTER_IOMEMORY CU_\n",
         "define-enum TestsGenLimit CU_LIMIT_STACK CU_LIMIT_\n",
         "define-enum TestsGenNothing CU_TESTS_GEN_NO_SUCH_\n",
         # one name, one value, twice (a header's respelling): one member
         "define-enum TestsGenPortable CU_MEMHOSTALLOC_PORTABLE CU_MEMHOSTALLOC_\n",
         "define-enum TestsGenPortable CU_MEMHOSTREGISTER_PORTABLE CU_MEMHOSTREGISTER_\n"])
    assert unmatched(4, "define-enum TestsGenNothing CU_TESTS_GEN_NO_SUCH_") in stderr, stderr
    assert "TestsGenNothing" not in text
    items = re.search(r"enum_items_\d+\[\] = \{\n"
                      r'    \{"MEMHOSTALLOC_PORTABLE", 1LL\},\n'
                      r'    \{"MEMHOSTALLOC_DEVICEMAP", 2LL\},\n'
                      r'    \{"MEMHOSTREGISTER_IOMEMORY", 4LL\},\n\};', text)
    assert items, "TestsGenHostFlags' items not found"
    assert '{"MEMHOSTALLOC_WRITECOMBINED"' not in text
    # the module's constants stay as they were, the excluded one too
    assert '{"CU_MEMHOSTALLOC_WRITECOMBINED", 4LL, 0},' in text
    assert '{"CU_MEMHOSTALLOC_PORTABLE", 1LL, 0},' in text
    assert re.search(r'enum_items_\d+\[\] = \{\n    \{"STACK_SIZE", 0LL\},\n\};', text)
    assert '{"cubind.driver.TestsGenHostFlags",' in text and '{"cubind.driver.TestsGenLimit",' in text
    assert "The constants CU_MEMHOSTALLOC_*, CU_MEMHOSTREGISTER_IOMEMORY* of cuda.h" in text
    assert re.search(r'enum_items_\d+\[\] = \{\n    \{"PORTABLE", 1LL\},\n\};', text)


def test_field_default_sets_integer_fields_only(run_cubind, tmp_path, cuda_h):
    """field-default RECORD FIELD VALUE (dim3's 1, 1, 1 in runtime.rules):
    the struct table of RECORD carries FIELD's offset, size and VALUE; a
    rule naming a field that is no integer, or a VALUE that is no number,
    matches nothing and is reported."""
    stderr, unmatched, text = generate_with_extra_rules(
        run_cubind, tmp_path, cuda_h,
        ["field-default CUDA_MEMCPY2D_st WidthInBytes 7\n",
         "field-default CUDA_MEMCPY2D_st srcHost 7\n",
         "field-default CUDA_MEMCPY2D_st Height seven\n"])
    assert "field-default CUDA_MEMCPY2D_st WidthInBytes" not in stderr
    assert unmatched(2, "field-default CUDA_MEMCPY2D_st srcHost") in stderr
    assert unmatched(3, "field-default CUDA_MEMCPY2D_st Height") in stderr
    # WidthInBytes: a size_t after 4 size_t, a memory type, 2 pointers, an
    # array and a size_t (cuda.h's CUDA_MEMCPY2D): offset 112
    assert re.search(r"static const cbs_field_default struct_defaults_\d+\[\] = \{\n"
                     r"    \{ 112, 8, 7ull \},\n\};", text), text[:0]
