#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mkwheel.py — writes cubind's wheels (PEP 427), one per interpreter.

    python3 packaging/mkwheel.py [--out DIR] [--generated DIR] [--manifest FILE]
                                 [--depfile FILE] [--check FILE.so ...] PYTHON...
    python3 packaging/mkwheel.py --version-py FILE     (cubind/_version.py)
    python3 packaging/mkwheel.py --metadata DIR        (a .dist-info, no wheel)

For each PYTHON (an interpreter the extensions were built for; build.ninja
passes ./configure's `pythons`) it packs, from build/python/cubind/:

    cubind/*.py, cubind/*.pyi, cubind/py.typed     (whatever is there)
    cubind/{driver,_runtime,nvrtc,nvjitlink,nvvm,runtime}<EXT_SUFFIX>  (that interpreter's)
    cubind/{nvfatbin,cufile,nvml}<EXT_SUFFIX>      (when built: OPTIONAL_MODULES)
    cubind/_cudart.so                              (the bundled CUDA runtime, when built:
                                                    packaging/cudart_bundle.py)
    cubind/include/*.h                             (out/cubind_*_api.h, staged there first)

plus cubind_cuNN-<version>.dist-info/{METADATA,WHEEL,RECORD,entry_points.txt,
licenses/LICENSE} (entry_points.txt: pyproject.toml's [project.scripts], the
`cubind` command).
The distribution is named per CUDA major release, as CuPy's (cupy-cuda12x)
and NVIDIA's (nvidia-*-cu12) are: cubind-cu13 from CUDA 13.x headers,
cubind-cu12 from 12.x; the import package is `cubind` in each. --generated
(out/, or build/out/ for another release) is where the headers and the
release (the CUDA_VERSION stamped in driver.c) come from. Nothing else: the
test-only fake driver (build/fakecuda) is never looked at, and a file named
like a driver library stops the build.

Tags: `cpXY-cpXY<abiflags>` from the interpreter itself (cp311-cp311,
cp313-cp313t); the platform tag from the extensions' ELF files, read here
(no readelf needed): when every DT_NEEDED library is part of glibc, the tag is
manylinux_2_<N>_<arch> for the highest GLIBC_2.N version the files require
(at least 2.17, and with its legacy name: manylinux_2_17_x86_64.manylinux2014_x86_64)
(their version-needed entries, which the dynamic loader checks, cross-checked
against the versions of the undefined symbols); otherwise linux_<arch>, and
the reason is printed. `--check` prints that analysis for some files.

Wheels are reproducible: sorted entries, fixed timestamps ($SOURCE_DATE_EPOCH,
else the commit's time when in a git checkout, else 1980-01-01). The manifest (build/wheels.txt) has one line per wheel:
`<python> <wheel path>`; the depfile lists every file packed.
"""
import argparse
import base64
import csv
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = "cubind"
MODULES = ("driver", "_runtime", "nvrtc", "nvjitlink", "nvvm", "runtime")
# Modules of libraries whose headers a toolkit may lack (configure takes
# them from scripts/fetch-cuda-libs.sh's cache, which `./configure --user`
# does not fetch): packed when built, not required.
OPTIONAL_MODULES = ("nvfatbin", "cufile", "nvml")
# Libraries shared by every interpreter's modules, packed when built.
BUNDLED = ("_cudart.so",)

# Libraries that are glibc itself (manylinux policy): depending on them keeps
# a wheel manylinux. Anything else NEEDED makes the tag linux_<arch>.
GLIBC_LIBS = {
    "libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6", "librt.so.1",
    "libresolv.so.2", "libutil.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld-linux.so.2",
    "ld64.so.2", "ld64.so.1",
}
ELF_ARCH = {3: "i686", 62: "x86_64", 183: "aarch64", 21: "ppc64le", 22: "s390x"}
# The oldest tag the wheels claim: manylinux2014's glibc 2.17 (PEP 599), the
# oldest policy tests/wheel checks them against. A lower GLIBC_2.N need (2.16
# today) still gets 2.17: no policy defines manylinux_2_16.
MANYLINUX_FLOOR = (2, 17)
# PEP 600 tags that have a legacy name (PEP 513, 571, 599), which pip before
# 20.3 reads: the platform tag names both (manylinux_2_17_x86_64.manylinux2014_x86_64).
MANYLINUX_LEGACY = {(2, 17): "manylinux2014", (2, 12): "manylinux2010", (2, 5): "manylinux1"}


class WheelError(Exception):
    pass


# ---------------------------------------------------------------- metadata

def parse_project_toml(text):
    """[project] and its subtables ([project.urls]) of pyproject.toml, for
    Python 3.10, which has no tomllib: `key = "string"`, `key = [strings]`
    (one line or several) and `key = {k = "v", ...}`; comments. What
    pyproject.toml uses; tests/wheel checks it reads the same as tomllib."""
    project, table = {}, None
    pending = None   # (key, text so far) of an array spanning lines
    for line in text.splitlines():
        line = re.sub(r'\s+#[^"]*$|^\s*#.*$', "", line)
        if pending:
            key, acc = pending
            acc += " " + line
            if "]" in line:
                table[key] = re.findall(r'"([^"]*)"', acc)
                pending = None
            else:
                pending = (key, acc)
            continue
        m = re.match(r"\s*\[([^\]]+)\]\s*$", line)
        if m:
            name = m.group(1).strip()
            if name == "project":
                table = project
            elif name.startswith("project."):
                table = project.setdefault(name[len("project."):], {})
            else:
                table = None
            continue
        m = re.match(r'\s*([A-Za-z0-9_-]+)\s*=\s*(.*?)\s*$', line)
        if table is None or not m:
            continue
        key, value = m.groups()
        if value.startswith('"'):
            table[key] = re.match(r'"([^"]*)"', value).group(1)
        elif value.startswith("{"):
            table[key] = dict(re.findall(r'([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"', value))
        elif value.startswith("["):
            if "]" in value:
                table[key] = re.findall(r'"([^"]*)"', value)
            else:
                pending = (key, value)
    return project


def project_metadata():
    """[project] of pyproject.toml (tomllib on 3.11+, parse_project_toml
    before that)."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
        project = tomllib.loads(text).get("project", {})
    except ImportError:
        project = parse_project_toml(text)
    for key in ("name", "version"):
        if not project.get(key):
            raise WheelError("pyproject.toml: [project] has no %s" % key)
    if project["name"] != NAME:
        raise WheelError("pyproject.toml: [project] name is %r, not %r" % (project["name"], NAME))
    if not re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", project["version"]):
        raise WheelError("pyproject.toml: version %r is not a plain PEP 440 version" % project["version"])
    return project


def cuda_release(generated):
    """(major, minor) of the CUDA_VERSION stamped in GENERATED/driver.c."""
    path = pathlib.Path(generated) / "driver.c"
    try:
        head = path.read_text(errors="replace")[:512]
    except OSError as e:
        raise WheelError("cannot read %s: %s" % (path, e))
    m = re.search(r"\(CUDA_VERSION (\d+)\)", head)
    if not m:
        raise WheelError("%s: no CUDA_VERSION in its generated header" % path)
    v = int(m.group(1))
    return v // 1000, v % 1000 // 10


def distribution(project, release):
    """The distribution's name for a CUDA release: cubind-cu13."""
    return "%s-cu%d" % (project["name"], release[0])


def metadata_text(project, release):
    lines = [
        "Metadata-Version: 2.4",
        "Name: " + distribution(project, release),
        "Version: " + project["version"],
    ]
    if project.get("description"):
        lines.append("Summary: %s; generated from CUDA %d.%d's cuda.h" % (
            project["description"], release[0], release[1]))
    if project.get("license"):
        lines.append("License-Expression: " + project["license"])
    for name in project.get("license-files") or []:
        lines.append("License-File: " + name)
    if project.get("requires-python"):
        lines.append("Requires-Python: " + project["requires-python"])
    for url_name, url in sorted((project.get("urls") or {}).items()):
        lines.append("Project-URL: %s, %s" % (url_name, url))
    for classifier in project.get("classifiers") or []:
        lines.append("Classifier: " + classifier)
    # The GPU classifier names the release the wheel was generated from.
    lines.append("Classifier: Environment :: GPU :: NVIDIA CUDA :: %d" % release[0])
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text()
    return "\n".join(lines) + "\n" + body


# ---------------------------------------------------------------- interpreter

INTERP_QUERY = r"""
import json, sys, sysconfig
print(json.dumps({
    "implementation": sys.implementation.name,
    "version": list(sys.version_info[:2]),
    "abiflags": getattr(sys, "abiflags", ""),
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    "platform": sysconfig.get_platform(),
}))
"""


def interpreter_tags(python):
    """(python tag, abi tag, EXT_SUFFIX, sysconfig platform) of an interpreter."""
    try:
        out = subprocess.run([python, "-I", "-c", INTERP_QUERY], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise WheelError("cannot query %s: %s" % (python, e))
    info = json.loads(out)
    if info["implementation"] != "cpython":
        raise WheelError("%s is %s, not CPython" % (python, info["implementation"]))
    major, minor = info["version"]
    abiflags = info["abiflags"]
    if info["gil_disabled"] and "t" not in abiflags:
        abiflags += "t"
    py_tag = "cp%d%d" % (major, minor)
    abi_tag = py_tag + abiflags
    if not info["ext_suffix"].startswith(".cpython-%d%d%s" % (major, minor, abiflags)):
        raise WheelError("%s: EXT_SUFFIX %s does not match abi %s" % (python, info["ext_suffix"], abi_tag))
    return py_tag, abi_tag, info["ext_suffix"], info["platform"]


# ---------------------------------------------------------------- ELF

SHT_DYNSYM, SHT_DYNAMIC = 11, 6
SHT_GNU_VERNEED, SHT_GNU_VERSYM = 0x6ffffffe, 0x6fffffff
DT_NEEDED = 1


class Elf:
    """What the dynamic loader needs of a shared object: DT_NEEDED, the
    version-needed entries (library → versions) and the undefined dynamic
    symbols with the version each is bound to."""

    def __init__(self, path):
        self.path = str(path)
        data = pathlib.Path(path).read_bytes()
        if data[:4] != b"\x7fELF":
            raise WheelError("%s is not an ELF file" % path)
        self.is64 = data[4] == 2
        end = "<" if data[5] == 1 else ">"
        self.data, self.end = data, end
        if self.is64:
            (self.machine,) = struct.unpack_from(end + "H", data, 18)
            shoff, = struct.unpack_from(end + "Q", data, 40)
            shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 58)
            shfmt = end + "IIQQQQIIQQ"
        else:
            (self.machine,) = struct.unpack_from(end + "H", data, 18)
            shoff, = struct.unpack_from(end + "I", data, 32)
            shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 46)
            shfmt = end + "IIIIIIIIII"
        self.little = data[5] == 1
        self.sections = []
        for i in range(shnum):
            (name, typ, _flags, _addr, offset, size, link, info, _align,
             entsize) = struct.unpack_from(shfmt, data, shoff + i * shentsize)
            self.sections.append(dict(type=typ, offset=offset, size=size, link=link,
                                      info=info, entsize=entsize))
        if not self.sections:
            raise WheelError("%s has no section headers" % path)
        self.needed = []
        self.verneed = {}      # library -> {version name: vna_other index}
        self.undefined = []    # (symbol, version name or None)
        self._parse()

    def _str(self, section_index, offset):
        sec = self.sections[section_index]
        start = sec["offset"] + offset
        stop = self.data.index(b"\0", start)
        return self.data[start:stop].decode()

    def _parse(self):
        d, e = self.data, self.end
        by_type = {}
        for index, sec in enumerate(self.sections):
            by_type.setdefault(sec["type"], []).append((index, sec))
        for index, sec in by_type.get(SHT_DYNAMIC, []):
            fmt, size = (e + "qQ", 16) if self.is64 else (e + "iI", 8)
            for off in range(sec["offset"], sec["offset"] + sec["size"], size):
                tag, val = struct.unpack_from(fmt, d, off)
                if tag == 0:
                    break
                if tag == DT_NEEDED:
                    self.needed.append(self._str(sec["link"], val))
        version_of_index = {}
        for index, sec in by_type.get(SHT_GNU_VERNEED, []):
            off = sec["offset"]
            for _ in range(sec["info"]):
                _ver, cnt, file_off, aux, nxt = struct.unpack_from(e + "HHIII", d, off)
                library = self._str(sec["link"], file_off)
                versions = self.verneed.setdefault(library, {})
                aoff = off + aux
                for _ in range(cnt):
                    _hash, _flags, other, name_off, anext = struct.unpack_from(e + "IHHII", d, aoff)
                    name = self._str(sec["link"], name_off)
                    versions[name] = other
                    version_of_index[other] = name
                    aoff += anext
                off += nxt
        versym = None
        for index, sec in by_type.get(SHT_GNU_VERSYM, []):
            versym = sec
        for index, sec in by_type.get(SHT_DYNSYM, []):
            size = 24 if self.is64 else 16
            for n, off in enumerate(range(sec["offset"], sec["offset"] + sec["size"], size)):
                if self.is64:
                    name_off, _info, _other, shndx = struct.unpack_from(e + "IBBH", d, off)
                else:
                    name_off, = struct.unpack_from(e + "I", d, off)
                    shndx, = struct.unpack_from(e + "H", d, off + 14)
                if shndx != 0 or name_off == 0:
                    continue
                version = None
                if versym is not None:
                    vi, = struct.unpack_from(e + "H", d, versym["offset"] + 2 * n)
                    version = version_of_index.get(vi & 0x7fff)
                self.undefined.append((self._str(sec["link"], name_off), version))

    def arch(self):
        arch = ELF_ARCH.get(self.machine)
        if arch == "ppc64le" and not self.little:
            arch = "ppc64"
        if arch is None:
            raise WheelError("%s: unknown ELF machine %d" % (self.path, self.machine))
        return arch


def glibc_version(name):
    m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def platform_tag(paths, log=print):
    """(tag, explanation lines) for extension files: manylinux_2_N_<arch> when
    they need nothing but glibc, N the highest GLIBC_2.N they require."""
    elves = [Elf(p) for p in paths]
    arches = {elf.arch() for elf in elves}
    if len(arches) != 1:
        raise WheelError("extensions of different architectures: %s" % sorted(arches))
    arch = arches.pop()
    reasons, lines = [], []
    highest, highest_by = MANYLINUX_FLOOR, []
    needed_max = None
    for elf in elves:
        name = os.path.basename(elf.path)
        for lib in elf.needed:
            if lib not in GLIBC_LIBS:
                reasons.append("%s needs %s, which is not part of glibc" % (name, lib))
        for lib, versions in elf.verneed.items():
            for version in versions:
                v = glibc_version(version)
                if lib not in GLIBC_LIBS or v is None:
                    reasons.append("%s needs %s from %s, not a GLIBC_2.N version" % (name, version, lib))
                    continue
                users = sorted(s for s, sv in elf.undefined if sv == version)
                if not users:
                    # The loader still checks it; say so, but it counts.
                    users = ["(no symbol; listed in .gnu.version_r)"]
                if needed_max is None or v > needed_max:
                    needed_max, highest_by = v, []
                if v == needed_max:
                    highest_by.extend("%s:%s" % (name, s) for s in users)
        # Every versioned undefined symbol must point at a version-needed entry.
        for symbol, version in elf.undefined:
            if version is not None and not any(version in vs for vs in elf.verneed.values()):
                reasons.append("%s: %s bound to unknown version %s" % (name, symbol, version))
        lines.append("%s: NEEDED %s; versions %s" % (
            name, " ".join(elf.needed) or "(none)",
            ", ".join("%s{%s}" % (lib, " ".join(sorted(vs, key=lambda x: glibc_version(x) or (0, 0))))
                      for lib, vs in sorted(elf.verneed.items())) or "(none)"))
    if reasons:
        return "linux_" + arch, lines + ["not manylinux: " + r for r in reasons]
    if needed_max is not None and needed_max > highest:
        highest = needed_max
    tag = "manylinux_%d_%d_%s" % (highest[0], highest[1], arch)
    if highest in MANYLINUX_LEGACY:
        tag += ".%s_%s" % (MANYLINUX_LEGACY[highest], arch)
    if needed_max is None:
        lines.append("no GLIBC versions referenced; the oldest tag for %s" % arch)
    else:
        lines.append("highest GLIBC version referenced: %d.%d, by %s" % (
            needed_max[0], needed_max[1], ", ".join(highest_by[:6]) + (" ..." if len(highest_by) > 6 else "")))
    return tag, lines


# ---------------------------------------------------------------- wheel

def urlsafe_sha256(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def source_date_epoch():
    """$SOURCE_DATE_EPOCH; else, in an unpacked sdist (it has PKG-INFO, a
    checkout has not), the time its PKG-INFO carries, which
    cubind_build.build_sdist sets to its commit's; else the time of the
    checkout's commit; else None."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return epoch
    if (ROOT / "PKG-INFO").is_file():
        return str(int((ROOT / "PKG-INFO").stat().st_mtime))
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out or None


def zip_time():
    epoch = source_date_epoch()
    if epoch:
        t = time.gmtime(max(int(epoch), 315532800))
        return t[:6]
    return (1980, 1, 1, 0, 0, 0)


def stage_headers(package_dir, generated):
    """GENERATED/cubind_*_api.h, the C API headers, → build/python/cubind/include/
    (so cubind.get_include() works from the build tree too); stale headers
    there are removed. A module's <module>_internal.h, what its translation
    units share, is not an API and never ships."""
    include = package_dir / "include"
    headers = sorted(pathlib.Path(generated).glob("cubind_*_api.h"))
    if not headers and not include.exists():
        return []
    include.mkdir(exist_ok=True)
    names = {h.name for h in headers}
    for old in include.iterdir():
        if old.name not in names:
            old.unlink()
    for h in headers:
        dest = include / h.name
        if not dest.exists() or dest.read_bytes() != h.read_bytes():
            shutil.copyfile(h, dest)
    return headers


def package_files(package_dir, ext_suffix):
    """(archive name, path) of everything a wheel for EXT_SUFFIX holds."""
    files = []
    for mod in MODULES:
        path = package_dir / (mod + ext_suffix)
        if not path.is_file():
            raise WheelError("%s missing (run ninja)" % path)
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir)
        if path.is_dir() or "__pycache__" in rel.parts:
            continue
        name = path.name
        if name.startswith("libcuda") or "fakecuda" in str(rel):
            raise WheelError("refusing to pack %s: a driver library never ships" % path)
        if rel.parts[0] == "include":
            keep = name.endswith(".h") and len(rel.parts) == 2
        elif name.endswith((".py", ".pyi")) or name == "py.typed":
            keep = True
        elif name.endswith(".so"):
            keep = name in BUNDLED or (name.endswith(ext_suffix) and
                                       name[: -len(ext_suffix)] in MODULES + OPTIONAL_MODULES)
        else:
            keep = False
            print("mkwheel: skipping %s (not part of the package)" % path, file=sys.stderr)
        if keep:
            files.append(("%s/%s" % (NAME, rel.as_posix()), path))
    return files


def entry_points_text(project):
    """entry_points.txt for [project.scripts] (the `cubind` command), or
    None when there are none."""
    scripts = project.get("scripts") or {}
    if not scripts:
        return None
    return "[console_scripts]\n" + "".join(
        "%s = %s\n" % (name, target) for name, target in sorted(scripts.items()))


def dist_info_files(project, release):
    """(name, bytes) of the .dist-info's METADATA, entry_points.txt and
    licenses/*."""
    files = [("METADATA", metadata_text(project, release).encode())]
    entry_points = entry_points_text(project)
    if entry_points:
        files.append(("entry_points.txt", entry_points.encode()))
    for name in project.get("license-files") or []:
        files.append(("licenses/" + name, (ROOT / name).read_bytes()))
    return files


def dist_info_name(project, release):
    """cubind_cu13-0.1.0.dist-info (the name normalized as wheels write it)."""
    return "%s-%s.dist-info" % (distribution(project, release).replace("-", "_"), project["version"])


def write_metadata_dir(out_dir, project, release):
    """prepare_metadata_for_build_wheel's .dist-info directory; its name."""
    dist_info = dist_info_name(project, release)
    for name, data in dist_info_files(project, release):
        path = pathlib.Path(out_dir) / dist_info / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return dist_info


def write_wheel(out_dir, project, release, tags, files):
    py_tag, abi_tag, plat_tag = tags
    version = project["version"]
    dist_info = dist_info_name(project, release)
    wheel_name = "%s-%s-%s-%s-%s.whl" % (dist_info.split("-")[0], version, py_tag, abi_tag, plat_tag)
    entries = [(arc, path.read_bytes(), os.access(path, os.X_OK) or arc.endswith(".so"))
               for arc, path in files]
    entries += [("%s/%s" % (dist_info, name), data, False)
                for name, data in dist_info_files(project, release)]
    entries.append(("%s/WHEEL" % dist_info, (
        "Wheel-Version: 1.0\n"
        "Generator: cubind packaging/mkwheel.py\n"
        "Root-Is-Purelib: false\n"
        + "".join("Tag: %s-%s-%s\n" % (py_tag, abi_tag, plat)
                  for plat in plat_tag.split("."))).encode(), False))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arc, data, _ in entries:
        writer.writerow([arc, urlsafe_sha256(data), len(data)])
    writer.writerow(["%s/RECORD" % dist_info, "", ""])
    entries.append(("%s/RECORD" % dist_info, record.getvalue().encode(), False))

    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / wheel_name
    tmp = out_dir / (wheel_name + ".tmp")
    stamp = zip_time()
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data, executable in entries:
            info = zipfile.ZipInfo(arc, stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, data)
    os.replace(tmp, dest)
    # One wheel per interpreter in out_dir: older ones for the same tags go.
    for old in out_dir.glob("%s-*-%s-%s-*.whl" % (dist_info.split("-")[0], py_tag, abi_tag)):
        if old.name != wheel_name:
            print("mkwheel: removing stale %s" % old, file=sys.stderr)
            old.unlink()
    return dest


def relative(path):
    """A path as Ninja names it: relative to the build's directory when inside."""
    rel = os.path.relpath(str(path))
    return str(path) if rel.startswith("..") else rel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pythons", nargs="*", help="interpreters the extensions were built for")
    ap.add_argument("--out", default=str(ROOT / "dist"), help="where the wheels go (dist/)")
    ap.add_argument("--package-dir", default=str(ROOT / "build" / "python" / NAME))
    ap.add_argument("--generated", default=str(ROOT / "out"),
                    help="the generator's output the extensions were built from (out/)")
    ap.add_argument("--version-py", metavar="FILE", help="only write cubind/_version.py")
    ap.add_argument("--metadata", metavar="DIR", help="only write the .dist-info into DIR")
    ap.add_argument("--manifest", help="write '<python> <wheel>' lines here")
    ap.add_argument("--depfile", help="write a Makefile depfile for --manifest here")
    ap.add_argument("--check", nargs="+", metavar="SO", help="only print the platform tag analysis")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each extension's NEEDED and versions")
    args = ap.parse_args(argv)

    try:
        if args.check:
            tag, lines = platform_tag(args.check)
            for line in lines:
                print(line)
            print(tag)
            return 0
        project = project_metadata()
        if args.version_py:
            pathlib.Path(args.version_py).write_text(
                "# SPDX-License-Identifier: Apache-2.0\n"
                "# Written by packaging/mkwheel.py from pyproject.toml.\n"
                "__version__ = %r\n" % project["version"])
            return 0
        release = cuda_release(args.generated)
        if args.metadata:
            print(write_metadata_dir(args.metadata, project, release))
            return 0
        if not args.pythons:
            ap.error("no interpreter given")
        package_dir = pathlib.Path(args.package_dir)
        out_dir = pathlib.Path(args.out)
        headers = stage_headers(package_dir, args.generated)
        manifest, inputs = [], {ROOT / "pyproject.toml", pathlib.Path(args.generated)}
        inputs.update(ROOT / n for n in project.get("license-files") or [])
        for python in args.pythons:
            py_tag, abi_tag, ext_suffix, sys_platform = interpreter_tags(python)
            files = package_files(package_dir, ext_suffix)
            extensions = [p for arc, p in files if arc.endswith(".so")]
            plat, lines = platform_tag(extensions)
            if not sys_platform.startswith("linux-"):
                raise WheelError("%s: platform %s is not Linux" % (python, sys_platform))
            fallback = plat.startswith("linux_")
            for line in lines if args.verbose or fallback else lines[-1:]:
                print("mkwheel: %s: %s" % (abi_tag, line), file=sys.stderr)
            if fallback:
                print("mkwheel: %s: falling back to %s (see above)" % (abi_tag, plat), file=sys.stderr)
            wheel = write_wheel(out_dir, project, release, (py_tag, abi_tag, plat), files)
            print("mkwheel: wrote %s" % relative(wheel), file=sys.stderr)
            manifest.append("%s %s\n" % (python, relative(wheel)))
            inputs.update(p for _, p in files)
            inputs.update(headers)
        if args.depfile:
            deps = " ".join(sorted(relative(p).replace(" ", "\\ ") for p in inputs))
            pathlib.Path(args.depfile).write_text("%s: %s\n" % (args.manifest or "wheels", deps))
        if args.manifest:
            tmp = args.manifest + ".tmp"
            pathlib.Path(tmp).write_text("".join(manifest))
            os.replace(tmp, args.manifest)
    except WheelError as e:
        print("mkwheel: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
