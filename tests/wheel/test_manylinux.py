# SPDX-License-Identifier: Apache-2.0
"""The wheels meet the manylinux2014 policy their tag claims (issue 43:
they were tagged manylinux_2_16, which no policy defines). auditwheel is
not in Debian 12, so this is the equivalent check of what `auditwheel
show` reads for PEP 599's policy, done with binutils on the shared objects
inside each wheel (not the build tree's):

- every DT_NEEDED library is one the policy allows;
- every versioned symbol needed is at most GLIBC_2.17, CXXABI_1.3.7,
  GLIBCXX_3.4.19 or GCC_4.8.0 (and no other version namespace);
- the platform tag is manylinux_2_17_<arch>.manylinux2014_<arch>.

The checker is tested on objects that break each rule, so it can fail."""
import pathlib
import re
import shutil
import subprocess
import zipfile

import pytest

from test_wheel import ROOT, WHEELS, IDS

pytestmark = pytest.mark.skipif(not shutil.which("readelf"), reason="binutils not installed")

# PEP 599 (manylinux2014): the libraries a wheel may need from the system,
# and the highest symbol version of each namespace.
ALLOWED_LIBS = {
    "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6",
    "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libX11.so.6",
    "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
}
MAX_VERSIONS = {"GLIBC": (2, 17), "CXXABI": (1, 3, 7), "GLIBCXX": (3, 4, 19), "GCC": (4, 8, 0)}
# the dynamic loader's own names are allowed too (as auditwheel does)
LOADERS = re.compile(r"^ld-linux[-\w.]*\.so\.\d+$|^ld64\.so\.\d+$")


def policy_violations(so):
    """What in shared object `so` breaks manylinux2014, one string each."""
    out = []
    dyn = subprocess.run(["readelf", "-d", so], check=True, capture_output=True, text=True).stdout
    for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn):
        if lib not in ALLOWED_LIBS and not LOADERS.match(lib):
            out.append("needs %s, which manylinux2014 does not allow" % lib)
    vr = subprocess.run(["readelf", "-V", so], check=True, capture_output=True, text=True).stdout
    for name in sorted(set(re.findall(r"Name: ([A-Z]+_[\d.]+)\b", vr))):
        space, _, number = name.partition("_")
        if space not in MAX_VERSIONS:
            out.append("needs symbol version %s, outside the policy's namespaces" % name)
        elif tuple(map(int, number.split("."))) > MAX_VERSIONS[space]:
            out.append("needs %s, above manylinux2014's %s_%s"
                       % (name, space, ".".join(map(str, MAX_VERSIONS[space]))))
    return out


@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_wheel_meets_manylinux2014(python, wheel, tmp_path):
    plat = pathlib.Path(wheel).name[:-len(".whl")].split("-")[4]
    assert plat == "manylinux_2_17_x86_64.manylinux2014_x86_64", plat
    with zipfile.ZipFile(ROOT / wheel) as zf:
        objects = [n for n in zf.namelist() if n.endswith(".so")]
        zf.extractall(tmp_path, objects)
    assert len(objects) >= 4, objects
    bad = {n: policy_violations(str(tmp_path / n)) for n in objects}
    assert not any(bad.values()), bad


def build_so(tmp_path, source, *libs):
    src = tmp_path / "probe.c"
    src.write_text(source)
    so = tmp_path / "probe.so"
    p = subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(so), *libs],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot build the probe: " + p.stderr[-300:])
    return str(so)


def test_checker_refuses_a_library_outside_the_policy(tmp_path):
    so = build_so(tmp_path, "#include <zlib.h>\nconst char *f(void) { return zlibVersion(); }\n",
                  "-lz")
    assert any("libz.so.1" in v for v in policy_violations(so)), policy_violations(so)


def test_checker_refuses_a_newer_glibc_symbol(tmp_path):
    # glibc 2.34 gave dlopen a new default version; a plain call binds it
    # (runtime/include/glibc_pins.h keeps the extensions at the old one).
    so = build_so(tmp_path, "#include <dlfcn.h>\nvoid *f(void) { return dlopen(\"x\", RTLD_NOW); }\n")
    glibc = subprocess.run(["ldd", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+)\.(\d+)\s*$", glibc.splitlines()[0]) if glibc else None
    if not m or (int(m.group(1)), int(m.group(2))) < (2, 34):
        pytest.skip("this glibc has no dlopen newer than 2.17")
    assert any("GLIBC_2.34" in v and "above" in v for v in policy_violations(so)), \
        policy_violations(so)
