# SPDX-License-Identifier: Apache-2.0
"""Stream capture into a CUDA graph, with a Python callable as host
function: the graph owns the callable (through a CUDA user object), and it
runs on every replay, on cubind's runner thread, in stream order.

Run: python3 examples/graph_host_function.py
"""
import threading

import cubind.cu as cu
import cubind.driver as driver


def main() -> None:
    cu.cuInit(0)
    device = cu.cuDeviceGet(0)
    cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(device))
    stream = cu.cuStreamCreate(0)

    replays: list[int] = []
    done = threading.Event()

    def on_replay(step: object) -> None:
        replays.append(len(replays))
        if len(replays) == 3:
            done.set()

    mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
    cu.cuStreamBeginCapture(stream, mode)
    cu.cuLaunchHostFunc(stream, on_replay, "step")
    graph = cu.cuStreamEndCapture(stream)
    executable = cu.cuGraphInstantiate(graph, 0)
    del on_replay          # the graph keeps the callable alive

    for _ in range(3):
        cu.cuGraphLaunch(executable, stream)
    cu.cuStreamSynchronize(stream)
    assert done.wait(10) and replays == [0, 1, 2], replays
    print("graph: the host function ran on each of %d replays" % len(replays))

    cu.cuGraphExecDestroy(executable)
    cu.cuGraphDestroy(graph)
    cu.cuStreamDestroy(stream)
    cu.cuDevicePrimaryCtxRelease(device)


if __name__ == "__main__":
    main()
