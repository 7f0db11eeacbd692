# SPDX-License-Identifier: Apache-2.0
"""Every module's capsule table refuses a consumer that was compiled
against a header it does not match, with an ImportError naming the module
and the mismatch, never a crash and never a call through the wrong
prototype (a name-only capsule check, as PyCapsule_GetPointer(c,
PyCapsule_GetName(c)) does, would import it and call it).

tests/consumer/one_api_consumer.c is compiled against a copy of the
module's generated consumer header (out/cubind_<api>_api.h) changed one
way: a function's signature string drifted plus a function the module
lacks; the table's version; the size of a table entry. The unchanged copy
imports (the harness itself works). Modules configure did not build (no
fetched header) are skipped, with the reason."""
import glob
import os
import re
import struct
import sys

import pytest

from conftest import BUILD_PY, EXT_SUFFIX, PY_INCLUDE, REPO, WARN, config_value, py_env, run

# Every module with a capsule table: one line each (a new library API adds
# its line; test_every_api_is_listed fails until it does).
CAPI_MODULES = [
    "driver",
    "runtime",
    "nvrtc",
    "nvjitlink",
    "nvvm",
    "nvfatbin",
    "nvml",
    "cufile",
]

CONSUMER_SRC = os.path.join(REPO, "tests", "consumer", "one_api_consumer.c")
SEPARATOR = "=== mismatches ==="
# A function no module has, added to the consumer's table.
ABSENT = ("cubindTestsAbsent", "int cubindTestsAbsent(void) @cubindTestsAbsent/0")


def test_every_api_is_listed():
    """The driver and each library API (gen/<api>.rules) has its line."""
    apis = {os.path.basename(p)[:-len(".rules")] for p in glob.glob(os.path.join(REPO, "gen", "*.rules"))}
    assert sorted(CAPI_MODULES) == sorted(apis | {"driver"})


def drift_signature(text, api):
    """The first function's signature gains a parameter, and a function the
    module lacks is expected last. Returns (text, that function's name,
    its module signature, the drifted one)."""
    up = api.upper()
    start = text.index("} cubind_%s_api_expected[CUBIND_%s_API_N] = {\n" % (api, up))
    end = text.index("\n};\n", start)
    m = re.compile(r'    \{"(\w+)", "([^"]*)"\},').search(text, start, end)
    name, sig = m.group(1), m.group(2)
    drifted = (sig.replace("(void)", "(long long)", 1) if "(void)" in sig
               else sig.replace("(", "(long long, ", 1))
    # the absent function last (after the entry, which comes before it)
    text = text[:end] + '\n    {"%s", "%s"},' % ABSENT + text[end:]
    text = text[:m.start(2)] + drifted + text[m.end(2):]
    last = "    CUBIND_%s_API_N\n};" % up
    assert text.count(last) == 1
    text = text.replace(last, "    CUBIND_%s_API_%s,\n%s" % (up, ABSENT[0], last))
    return text, name, sig, drifted


def bump_version(text, api):
    text, n = re.subn(r"^(#define CUBIND_%s_CAPI_VERSION )(\d+)$" % api.upper(),
                      lambda m: m.group(1) + str(int(m.group(2)) + 1), text, flags=re.M)
    assert n == 1
    return text


def grow_entry(text, api):
    """The table entry struct gains a pointer field after its entry point."""
    fn = re.search(r"^    void \(\*fn\)\(void\);.*\n", text, re.M)
    assert fn and text.index("} cubind_%s_capi_entry;" % api) > fn.start()
    return text[:fn.end()] + "    void *tests_extra;\n" + text[fn.end():]


def compile_with(api, header_text, out_dir):
    """one_api_consumer.c built against header_text as cubind_<api>_api.h;
    the directory to put on PYTHONPATH."""
    os.makedirs(out_dir)
    name = "cubind_%s_api.h" % api
    with open(os.path.join(out_dir, name), "w") as f:
        f.write(header_text)
    so = os.path.join(out_dir, "_cubind_one_api_consumer" + EXT_SUFFIX)
    includes = ["-I" + config_value("cuda_include")] + (config_value("api_includes") or "").split()
    p = run(["gcc", "-std=c11", "-O0"] + WARN + [
        "-fPIC", "-shared", "-I" + PY_INCLUDE, "-I" + out_dir, *includes,
        '-DCONSUMER_HEADER="%s"' % name, "-DCONSUMER_IMPORT=cubind_%s_import" % api,
        CONSUMER_SRC, "-o", so], cwd=REPO)
    assert p.returncode == 0, "compiling the consumer failed:\n" + p.stderr[-4000:]
    return out_dir


def import_consumer(cdir):
    """Imports the consumer in a child: ("imported", "", []) or ("refused",
    the ImportError's message, its .mismatches)."""
    code = ("import sys\n"
            "try:\n"
            "    import _cubind_one_api_consumer\n"
            "except ImportError as e:\n"
            "    assert '_cubind_one_api_consumer' not in sys.modules\n"
            "    print('refused'); print(e); print(%r)\n"
            "    print('\\n'.join(getattr(e, 'mismatches', ())))\n"
            "else:\n"
            "    print('imported')\n" % SEPARATOR)
    p = run([sys.executable, "-c", code], env=py_env(cdir, BUILD_PY))
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    outcome, _, rest = p.stdout.partition("\n")
    message, _, mismatches = rest.partition(SEPARATOR + "\n")
    return outcome, message.rstrip("\n"), mismatches.rstrip("\n")


@pytest.fixture
def header(request):
    """(api, the text of out/cubind_<api>_api.h); skipped where configure
    did not build cubind.<api>."""
    api = request.param
    if not os.path.isfile(os.path.join(BUILD_PY, "cubind", api + EXT_SUFFIX)):
        pytest.skip("cubind.%s is not built: configure found no header for it "
                    "(scripts/fetch-cuda-libs.sh)" % api)
    with open(os.path.join(REPO, "out", "cubind_%s_api.h" % api)) as f:
        return api, f.read()


@pytest.mark.parametrize("header", CAPI_MODULES, indirect=True)
def test_unchanged_header_imports(header, tmp_path):
    api, text = header
    assert import_consumer(compile_with(api, text, str(tmp_path / "c")))[0] == "imported"


@pytest.mark.parametrize("header", CAPI_MODULES, indirect=True)
def test_drifted_signature_and_absent_function_are_refused(header, tmp_path):
    api, text = header
    text, name, sig, drifted = drift_signature(text, api)
    outcome, message, mismatches = import_consumer(compile_with(api, text, str(tmp_path / "c")))
    assert outcome == "refused", message
    assert message.startswith("cubind.%s's C API does not match the header this extension was "
                              "compiled with" % api), message
    assert "): 2 functions or struct layouts differ; all 2:\n" in message, message
    listed = ("  %s:\n    expected: %s\n    module:   %s\n"
              "  %s:\n    expected: %s\n    module:   (missing)" % (name, drifted, sig, *ABSENT))
    assert mismatches == listed
    assert message.endswith(listed)


# A change of the table's shape: how the header changes, and how the
# numbers of the refusal (the module's version and entry size, the
# consumer's) then relate.
SHAPE_CHANGES = {
    "version": (bump_version, lambda have_v, have_e, want_v, want_e:
                want_v == have_v + 1 and want_e == have_e),
    "entry_size": (grow_entry, lambda have_v, have_e, want_v, want_e:
                   want_v == have_v and want_e == have_e + struct.calcsize("P")),
}


@pytest.mark.parametrize("change", sorted(SHAPE_CHANGES))
@pytest.mark.parametrize("header", CAPI_MODULES, indirect=True)
def test_other_table_shape_is_refused(header, change, tmp_path):
    """Another table version or entry size: refused before any entry is
    read, naming the capsule and both shapes."""
    api, text = header
    edit, related = SHAPE_CHANGES[change]
    outcome, message, mismatches = import_consumer(
        compile_with(api, edit(text, api), str(tmp_path / "c")))
    assert outcome == "refused" and mismatches == ""
    m = re.fullmatch(r"cubind\.%s\._C_API: table version (\d+) \(entry size (\d+)\), this "
                     r"extension expects version (\d+) \(entry size (\d+)\)" % api, message)
    assert m, message
    assert related(*map(int, m.groups())), message
