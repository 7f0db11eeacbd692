# SPDX-License-Identifier: Apache-2.0
"""Builds device_info.c into an extension in OUTDIR (default: beside this
file), then uses it.

    python3 examples/capsule_extension/build.py [OUTDIR]

Include paths: cubind.get_include() (cubind_driver_api.h), Python's, and the
CUDA toolkit's (cuda.h: $CUDA_HOME/include, else $CUDA_PATH/include, else
/usr/local/cuda/include). The compiler is $CC, else cc.
"""
import os
import pathlib
import shlex
import subprocess
import sys
import sysconfig

import cubind

HERE = pathlib.Path(__file__).resolve().parent


def cuda_include() -> str:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.path.join(os.environ[var], "include")
    return "/usr/local/cuda/include"


def build(outdir: pathlib.Path) -> pathlib.Path:
    target = outdir / ("device_info" + str(sysconfig.get_config_var("EXT_SUFFIX")))
    cmd = [*shlex.split(os.environ.get("CC", "cc")), "-std=c11", "-O2", "-Wall", "-Wextra",
           "-Werror", "-shared", "-fPIC", "-I" + cubind.get_include(),
           "-I" + sysconfig.get_paths()["include"], "-I" + cuda_include(),
           str(HERE / "device_info.c"), "-o", str(target)]
    print(" ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True)
    return target


def main() -> None:
    outdir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    outdir.mkdir(parents=True, exist_ok=True)
    build(outdir)
    sys.path.insert(0, str(outdir))
    import device_info  # type: ignore[import]
    n = device_info.count()
    print("devices: %d" % n)
    for i in range(n):
        print("  %d: %s" % (i, device_info.name(i)))


if __name__ == "__main__":
    main()
