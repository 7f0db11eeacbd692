#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run all [CARRY124] — the whole GPU session in one call: the
# GPU tests against cubind.driver, cubind.cu and cuda.bindings (suite
# tests), the 12.4-generated bindings on this driver when their sources are
# given (CARRY124/out and CARRY124/include, see build-release.sh), and the
# benchmarks (suite bench) and the faces probe. Logs go to $OUT.
set -u
. "$(dirname "$0")/common.sh"
sh scripts/gpu/tests.sh > /dev/null 2>&1
carry=${1:-}
if [ -n "$carry" ] && [ -d "$carry/out" ]; then
    {
        echo "## bindings generated from CUDA 12.4's cuda.h, on $(nvidia-smi --query-gpu=driver_version --format=csv,noheader)"
        sh scripts/gpu/build-release.sh "$carry/out" "$carry/include" build/cuda124
        PYTHONPATH=build/cuda124 "$py" -c '
import cubind.driver as d
print("header CUDA_VERSION", d.CUBIND_HEADER_CUDA_VERSION)
sig = d._abi_signatures()
for n in ("cuCtxCreate", "cuDeviceGetUuid", "cuStreamGetCaptureInfo", "cuEventElapsedTime"):
    print(n, "->", sig[n])
d.cuInit(0)
err, dev = d.cuDeviceGet(0)
err, ctx = d.cuCtxCreate(0, dev)   # the 12.4 ABI: cuCtxCreate_v2(pctx, flags, dev)
print("cuCtxCreate (12.4 ABI, 3 arguments):", err)
print("cuCtxDestroy:", d.cuCtxDestroy(ctx)[0])
err, uuid = d.cuDeviceGetUuid(dev)   # 12.4: cuDeviceGetUuid v9020
print("cuDeviceGetUuid (v9020):", err, bytes(uuid.bytes).hex()[:8])
'
        CUBIND_GPU_IMPL=cubind PYTHONPATH=build/cuda124 "$py" -m pytest -q -p no:cacheprovider tests/gpu/test_basic_gpu.py tests/gpu/test_packer_gpu.py
    } > "$OUT/cuda124-on-13.0.log" 2>&1
fi
bash scripts/gpu/bench.sh > "$OUT/bench-stdout.txt" 2>&1
PYTHONPATH=build/python "$py" bench/faces_probe.py gc-off > "$OUT/faces-probe.txt" 2>&1
