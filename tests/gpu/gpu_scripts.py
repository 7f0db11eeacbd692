# SPDX-License-Identifier: Apache-2.0
"""Source text shared by the GPU tests that run a script in a fresh
interpreter (test_shutdown_gpu.py, test_fork_gpu.py). Importing this
imports no driver module: those tests keep the driver out of the pytest
process.

CUBIND_STREAM_SETUP: cubind.driver as `d`, `ok(result)` (the outputs of a
status tuple, or exit with the failure), device 0's primary context `ctx`
made current and a non-blocking stream `s`."""

CUBIND_STREAM_SETUP = r'''
import cubind.driver as d
ok = lambda r: r[1:] if r[0] == 0 else sys.exit("failed: %r" % (r,))
ok(d.cuInit(0))
(dev,) = ok(d.cuDeviceGet(0))
(ctx,) = ok(d.cuDevicePrimaryCtxRetain(dev))
ok(d.cuCtxSetCurrent(ctx))
(s,) = ok(d.cuStreamCreate(1))
'''
