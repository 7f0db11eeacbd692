#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds sanitizer copies of cubind's binaries for tests/fuzz (run by ninja).

  build_asan.py ext --stamp S   the extensions of the main interpreter (the
                                one build/config.ninja calls `python`), under
                                -fsanitize=address,undefined, into
                                build/asan/python/cubind/
  build_asan.py gen --stamp S   the generator under the same sanitizers, as
                                build/asan/cubind

The source lists are read from what ./configure wrote (build/extensions.ninja,
build/generate.ninja), so a file added there is picked up here without an
edit. Writes S.d (a depfile naming every source and header compiled) and then
touches S.
"""
import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
       "-fno-omit-frame-pointer"]
# The extensions' test-only allocation fault injection (runtime/include/rt_alloc.h):
# cubind._runtime._fail_allocations and _alloc_counts exist in these builds
# only (never in build/python or a wheel).
FAULTS = ["-DCUBIND_FAULT_INJECTION"]


def config():
    cfg = {}
    for line in (BUILD / "config.ninja").read_text().splitlines():
        m = re.match(r"^(\w+) = (.*)$", line)
        if m:
            cfg[m.group(1)] = m.group(2)
    return cfg


def ninja_edges(path):
    """(outputs, rule, inputs, {var: value}) of each build edge of a ninja file."""
    edges = []
    for line in path.read_text().splitlines():
        if line.startswith("build "):
            head, rest = line[len("build "):].split(":", 1)
            parts = rest.split("|")[0].split()
            edges.append((head.split(), parts[0], parts[1:], {}))
        elif line.startswith("  ") and edges and "=" in line:
            k, v = line.strip().split("=", 1)
            edges[-1][3][k.strip()] = v.strip()
    return edges


def compile_all(jobs, depfiles):
    def one(job):
        cmd, name = job
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(" ".join(map(shlex.quote, cmd)) + "\n" + r.stdout + r.stderr)
            raise SystemExit(f"build_asan.py: compiling {name} failed")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        list(ex.map(one, jobs))
    deps = set()
    for d in depfiles:
        text = pathlib.Path(d).read_text().replace("\\\n", " ")
        deps.update(text.split(":", 1)[1].split())
    return deps


def build_ext(cfg, outdir, objdir):
    suffix = cfg["ext_suffix"]
    edges = ninja_edges(BUILD / "extensions.ninja")
    # each object's source, Python include path and runtime folders
    srcs = {e[0][0]: (e[2][0], e[3].get("py_includes", cfg["py_includes"]),
                      e[3].get("rt_includes", ""))
            for e in edges if e[1] == "cc_ext"}
    links = [e for e in edges if e[1] == "link_ext" and e[0][0].endswith(suffix)]
    if not links:
        raise SystemExit("build_asan.py: no extension for " + suffix)
    outdir.mkdir(parents=True, exist_ok=True)
    objdir.mkdir(parents=True, exist_ok=True)
    jobs, depfiles, plan = [], [], []
    for outs, _, objs, _ in links:
        mine = []
        for o in objs:
            src, inc, rt_inc = srcs[o]
            obj = objdir / (pathlib.Path(o).name)
            cmd = [cfg["cc"], "-std=c11", "-O1", "-g", "-fPIC", "-fvisibility=hidden", *SAN, *FAULTS,
                   *shlex.split(rt_inc), *shlex.split(inc), "-I" + cfg["cuda_include"],
                   "-MMD", "-MF", str(obj) + ".d", "-c", src, "-o", str(obj)]
            jobs.append((cmd, src))
            depfiles.append(str(obj) + ".d")
            mine.append(str(obj))
        plan.append((outdir / pathlib.Path(outs[0]).name, mine))
    deps = compile_all(jobs, depfiles)
    for out, objs in plan:
        subprocess.run([cfg["cc"], "-shared", *SAN, *objs, "-o", str(out), "-ldl", "-pthread"],
                       cwd=ROOT, check=True)
    for py in sorted((ROOT / "python" / "cubind").glob("*.py")):  # __init__.py, rtc.py
        shutil.copy(py, outdir / py.name)
        deps.add("python/cubind/" + py.name)
    shutil.copy(BUILD / "python" / "cubind" / "_version.py", outdir / "_version.py")
    deps.add("build/python/cubind/_version.py")
    # the libraries every interpreter's modules share (the bundled CUDA
    # runtime, packaging/cudart_bundle.py), as built: never instrumented
    for outs, rule, _, _ in edges:
        if rule == "cudart_bundle":
            shutil.copy(ROOT / outs[0], outdir / pathlib.Path(outs[0]).name)
            deps.add(outs[0])
    return deps


def build_gen(cfg, out, objdir):
    edges = ninja_edges(BUILD / "generate.ninja")
    srcs = {e[0][0]: e[2][0] for e in edges if e[1] == "cc_gen"}
    link = [e for e in edges if e[1] == "link_gen"][0]
    jobs, depfiles, objs = [], [], []
    for o in link[2]:
        # build/obj/gen/parse/parse.o -> OBJDIR/parse/parse.o: one folder
        # per stage, as gen/ has (gen/README.md)
        obj = objdir / pathlib.Path(srcs[o]).relative_to("gen").with_suffix(".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        cmd = [cfg["cc"], "-std=c11", "-O1", "-g", *SAN, *shlex.split(cfg["clang_cflags"]),
               "-Igen", '-DCUBIND_VERSION="%s"' % cfg["version"],
               "-MMD", "-MF", str(obj) + ".d", "-c", srcs[o], "-o", str(obj)]
        jobs.append((cmd, srcs[o]))
        depfiles.append(str(obj) + ".d")
        objs.append(str(obj))
    deps = compile_all(jobs, depfiles)
    subprocess.run([cfg["cc"], *SAN, *objs, *shlex.split(cfg["clang_libs"]), "-o", str(out)],
                   cwd=ROOT, check=True)
    return deps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["ext", "gen"])
    ap.add_argument("--stamp", required=True)
    a = ap.parse_args()
    cfg = config()
    if a.what == "ext":
        deps = build_ext(cfg, BUILD / "asan" / "python" / "cubind", BUILD / "asan" / "obj" / "ext")
    else:
        deps = build_gen(cfg, BUILD / "asan" / "cubind", BUILD / "asan" / "obj" / "gen")
    deps.update(["build/config.ninja", "tests/fuzz/build_asan.py"])
    stamp = pathlib.Path(a.stamp)
    stamp.with_name(stamp.name + ".d").write_text(
        a.stamp + ": " + " ".join(sorted(deps)) + "\n")
    stamp.touch()


if __name__ == "__main__":
    main()
