# SPDX-License-Identifier: Apache-2.0
"""``python -m cubind`` and the wheel's ``cubind`` command.

    cubind                      what this installation is and what it finds
    cubind --include            the folder of the C API headers (for -I)
    cubind abi-check [MANIFEST...] [--module NAME] [--json]

The report: cubind's version and the CUDA release the bindings were
generated from; the driver loaded (path, version, devices) or why none
was; each library API's module in the package (NVRTC, nvJitLink, NVVM,
the CUDA runtime, nvFatbin, cuFile: LIBRARIES) with its library found or
why not, on one line; whether
the interpreter is free-threaded and whether the GIL is enabled.

``abi-check`` needs no libclang: it reads the installed bindings' capsule
table (``cubind.driver._abi_signatures()``) and checks it against the
running driver (every entry point resolves through cuGetProcAddress at its
ABI version) and against ABI manifests (``cubind manifest``, the header a
C extension was compiled with: ``abi/`` of the source tree has one per
supported release). ``--module runtime`` (``nvrtc``, ...) reads that
module's table instead, checked against manifests only (``abi/runtime-*.json``). Exit status 0: no drift; 1: drift (an entry point the
driver lacks, a function of a manifest missing or changed); 2: usage or
input error, or nothing checked (no driver and no manifest).
"""
import argparse
import importlib
import json
import os
import re
import sys
import sysconfig
import typing

import cubind
from cubind import driver

# "CUresult cuMemAlloc(unsigned long long *, size_t) @cuMemAlloc/3020 ..."
_PROC = re.compile(r"@(\S+)/(\d+)")
MANIFEST_FORMAT = "cubind-abi-manifest/1"
SHOWN = 20   # entry points the driver lacks listed in the text report


def _release(version: int) -> str:
    """A CUDA version number as its release: 13000 -> "13.0"."""
    return "%d.%d" % (version // 1000, version % 1000 // 10)


def _result_name(result: object) -> str:
    return getattr(result, "name", None) or str(result)


def driver_line() -> str:
    """The driver loaded (path, CUDA release, device count) or why none."""
    loaded, what = cubind._runtime._driver_status()
    if not loaded:
        return "driver: not loaded: %s" % what
    init, = driver.cuInit(0)
    err, version = driver.cuDriverGetVersion()
    release = "CUDA %s" % _release(version) if version is not None else \
        "version unknown (%s)" % _result_name(err)
    if init != 0:
        return "driver: %s, %s; cuInit failed: %s" % (what, release, _result_name(init))
    err, count = driver.cuDeviceGetCount()
    devices = "%d device%s" % (count, "" if count == 1 else "s") if count is not None else \
        "devices unknown (%s)" % _result_name(err)
    return "driver: %s, %s, %s" % (what, release, devices)


def _one_line(module: str, why: str) -> str:
    """A loader's reason on one line: its first line (what was looked for
    and where), then how many files were there but did not load and the
    first of them; cubind.<module>._library_status() has their reasons."""
    lines = why.splitlines()
    failed = [line for line in lines[1:] if line.startswith("  ")]
    if not failed:
        return " ".join(line.strip() for line in lines)
    first = failed[0].strip().split(": ", 1)[0]
    return "%s %d, the first %s (why: cubind.%s._library_status())" % (
        lines[0], len(failed), first, module)


def library_line(label: str, module: str, version: typing.Callable[[typing.Any], str]) -> str:
    """A toolkit library's line: its path and version, or why not found."""
    import importlib
    try:
        m = importlib.import_module("cubind." + module)
    except ImportError as e:
        return "%s: not available: %s" % (label, e)
    found, what = m._library_status()
    if not found:
        return "%s: not found: %s" % (label, _one_line(module, what))
    try:
        return "%s: %s, %s" % (label, what, version(m))
    except Exception as e:   # found, but the version call failed: say why
        return "%s: %s, version unknown (%s)" % (label, what, e)


def _nvrtc_version(m: typing.Any) -> str:
    err, major, minor = m.nvrtcVersion()
    if err != 0:
        raise RuntimeError(_result_name(err))
    return "CUDA %d.%d" % (major, minor)


def _version_pair(m: typing.Any) -> str:
    """The CUDA release of a snake_case module's library: version()."""
    return "CUDA %d.%d" % tuple(m.version())


def _cufile_version(m: typing.Any) -> str:
    """cuFile's release: get_version() is major * 1000 + minor * 10."""
    major, rest = divmod(int(m.get_version()), 1000)
    return "cuFile %d.%d" % (major, rest // 10)


def _nvml_version(m: typing.Any) -> str:
    """NVML's version, which it gives without nvmlInit (the driver's
    branch: 12.550.163.01)."""
    return "NVML %s" % m.system_get_nvml_version()


def _nvvm_version(m: typing.Any) -> str:
    return "NVVM %d.%d" % tuple(m.version())


def _runtime_version(m: typing.Any) -> str:
    err, version = m.cudaRuntimeGetVersion()
    if err != 0:
        raise RuntimeError(_result_name(err))
    return "CUDA %s" % _release(version)


# How the report names each library API's module and asks its version. A
# library module of the package missing here is still reported, under its
# module's name, with its library but no version.
LIBRARIES: dict[str, tuple[str, typing.Callable[[typing.Any], str]]] = {
    "nvrtc": ("NVRTC", _nvrtc_version),
    "nvjitlink": ("nvJitLink", _version_pair),
    "nvvm": ("NVVM", _nvvm_version),
    "runtime": ("CUDA runtime", _runtime_version),
    "nvfatbin": ("nvFatbin", _version_pair),
    "cufile": ("cuFile", _cufile_version),
    "nvml": ("NVML", _nvml_version),
}


def library_modules(names: typing.Iterable[str]) -> list[str]:
    """The library APIs' modules among a package folder's file names: every
    extension module of this interpreter but the driver's and the private
    ones (_runtime, _cudart): each built from a gen/<api>.rules. Those
    LIBRARIES knows first, in its order."""
    import importlib.machinery
    found = set()
    for name in names:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if name.endswith(suffix) and "." not in name[:-len(suffix)]:
                found.add(name[:-len(suffix)])
    found = {m for m in found if m != "driver" and not m.startswith("_")}
    return [m for m in LIBRARIES if m in found] + sorted(found - set(LIBRARIES))


def _unknown_version(m: typing.Any) -> str:
    raise RuntimeError("no version query known for cubind.%s" % m.__name__.rsplit(".", 1)[-1])


def library_lines() -> list[str]:
    """One line per library API module of the installed package."""
    lines = []
    for module in library_modules(os.listdir(os.path.dirname(cubind.__file__))):
        label, version = LIBRARIES.get(module, (module, _unknown_version))
        lines.append(library_line(label, module, version))
    return lines


def threading_line() -> str:
    """Whether the interpreter is free-threaded and the GIL enabled."""
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    is_enabled = getattr(sys, "_is_gil_enabled", None)
    gil = is_enabled() if is_enabled is not None else True
    build = "free-threaded build" if free_threaded else "GIL build"
    if free_threaded and gil:
        state = "GIL enabled (PYTHON_GIL=1, or a module imported that needs it)"
    else:
        state = "GIL enabled" if gil else "GIL disabled"
    return "python: %s %s, %s, %s" % (sys.implementation.name,
                                      ".".join(map(str, sys.version_info[:3])), build, state)


def include_dir() -> str | None:
    """The C API headers' folder, when the installation has them."""
    include = cubind.get_include()
    return include if os.path.isfile(os.path.join(include, "cubind_driver_api.h")) else None


def report() -> list[str]:
    include = include_dir()
    return [
        "cubind %s (bindings generated from CUDA %s's headers)"
        % (cubind.__version__, cubind.__cuda_version__),
        "package: %s" % os.path.dirname(cubind.__file__),
        threading_line(),
        driver_line(),
        *library_lines(),
        "C API headers: %s" % (include or "not installed"),
    ]


# ---------------------------------------------------------------- abi-check

def check_driver(signatures: dict[str, str]) -> dict[str, typing.Any]:
    """Every entry point of the table looked up on the running driver at
    its ABI version: {"driver": version, "missing": {name: why}}."""
    loaded, what = cubind._runtime._driver_status()
    if not loaded:
        raise LookupError(what)
    driver.cuInit(0)
    _, version = driver.cuDriverGetVersion()
    missing = {}
    for name, signature in sorted(signatures.items()):
        m = _PROC.search(signature)
        if not m:
            missing[name] = "no @proc/version in its signature %r" % signature
            continue
        proc, needs = m.group(1), int(m.group(2))
        err, _, status = driver.cuGetProcAddress(proc, needs, 0)
        if err != 0 or status is None or int(status) != 0:
            why = _result_name(status) if err == 0 else _result_name(err)
            missing[name] = "%s/%d: %s" % (proc, needs, why)
    return {"driver": version, "path": what, "missing": missing}


def read_manifest(path: str) -> dict[str, str]:
    """{name: signature} of an ABI manifest; ValueError when it is none."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise ValueError("%s: not a cubind ABI manifest (format %r)" % (path, MANIFEST_FORMAT))
    return {f["name"]: f["signature"] for f in data["functions"]}


def check_manifest(signatures: dict[str, str], recorded: dict[str, str]) -> dict[str, typing.Any]:
    """A consumer's recorded header against the table: functions the table
    lacks or has with another signature (drift), and those only the table
    has (additions, never drift)."""
    return {
        "missing": sorted(n for n in recorded if n not in signatures),
        "changed": {n: {"recorded": recorded[n], "installed": signatures[n]}
                    for n in sorted(recorded) if n in signatures and signatures[n] != recorded[n]},
        "added": sorted(n for n in signatures if n not in recorded),
    }


def abi_check(manifests: typing.Sequence[str], as_json: bool, module: str = "driver") -> int:
    """The table of cubind.<module> against the manifests, and the
    driver's against the running driver."""
    try:
        signatures = importlib.import_module("cubind." + module)._abi_signatures()
    except (ImportError, AttributeError) as e:
        print("cubind abi-check: --module %s: %s" % (module, e), file=sys.stderr)
        return 2
    result: dict[str, typing.Any] = {"module": module, "entries": len(signatures), "manifests": {}}
    try:
        for path in manifests:
            result["manifests"][path] = check_manifest(signatures, read_manifest(path))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("cubind abi-check: %s" % e, file=sys.stderr)
        return 2
    try:
        if module != "driver":
            raise LookupError("the table of cubind.%s is checked against manifests only" % module)
        result["driver"] = check_driver(signatures)
    except LookupError as e:
        result["driver"] = {"error": str(e)}
    drift = any(m["missing"] or m["changed"] for m in result["manifests"].values()) or \
        bool(result["driver"].get("missing"))
    if as_json:
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        print_abi_check(result)
    if "error" in result["driver"] and not manifests:
        return 2   # nothing was checked
    return 1 if drift else 0


def print_abi_check(result: dict[str, typing.Any]) -> None:
    print("installed bindings: %d C entry points (CUDA %s)%s"
          % (result["entries"], cubind.__cuda_version__,
             "" if result["module"] == "driver" else ", cubind.%s's table" % result["module"]))
    d = result["driver"]
    if "error" in d:
        print("driver: not checked: %s" % d["error"])
    else:
        version = "CUDA %s" % _release(d["driver"]) if d["driver"] else "version unknown"
        print("driver: %s, %s: %d of %d entry points resolve"
              % (d["path"], version, result["entries"] - len(d["missing"]), result["entries"]))
        missing = list(d["missing"].items())
        for name, why in missing[:SHOWN]:
            print("  - %s: %s" % (name, why))
        if len(missing) > SHOWN:
            print("  ... and %d more (--json lists every one)" % (len(missing) - SHOWN))
    for path, m in result["manifests"].items():
        print("%s: %d missing, %d changed, %d only installed"
              % (path, len(m["missing"]), len(m["changed"]), len(m["added"])))
        for name in m["missing"]:
            print("  - %s: not in the installed bindings" % name)
        for name, both in m["changed"].items():
            print("  ~ %s\n      recorded:  %s\n      installed: %s"
                  % (name, both["recorded"], both["installed"]))


def main(argv: typing.Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    prog = "cubind" if os.path.basename(sys.argv[0]) == "cubind" else "python -m cubind"
    if args and args[0] == "abi-check":
        ap = argparse.ArgumentParser(
            prog=prog + " abi-check",
            description="Checks the installed bindings' C entry points against the running "
                        "driver and against ABI manifests (no libclang needed).")
        ap.add_argument("manifests", nargs="*", metavar="MANIFEST",
                        help="an ABI manifest (cubind manifest) of the header a C extension "
                             "was compiled with")
        ap.add_argument("--module", default="driver", metavar="NAME",
                        help="the module whose C entry points are checked (default driver; "
                             "runtime, nvrtc, ...: against the manifests only)")
        ap.add_argument("--json", action="store_true", help="the result as JSON")
        opts = ap.parse_args(args[1:])
        return abi_check(opts.manifests, opts.json, opts.module)
    ap = argparse.ArgumentParser(
        prog=prog, description="What this cubind installation is and what it finds: "
                               "version, driver, toolkit libraries, free-threading. "
                               "'%s abi-check --help' checks ABI drift." % prog)
    ap.add_argument("--include", action="store_true",
                    help="print the folder of the C API headers (cubind_driver_api.h)")
    opts = ap.parse_args(args)
    if opts.include:
        include = include_dir()
        if include is None:
            print("%s: this installation has no C API headers (%s)"
                  % (prog, cubind.get_include()), file=sys.stderr)
            return 1
        print(include)
        return 0
    print("\n".join(report()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
