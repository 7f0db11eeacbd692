# SPDX-License-Identifier: Apache-2.0
"""cubind.utils: the face of ``cuda.bindings.utils`` for cubind's handles.

``get_cuda_native_handle(obj)`` is what client libraries (numba-cuda, for
one) call to turn a handle object into the C value it holds: the address
of an opaque-pointer handle (CUcontext, CUstream, CUgraph, ...) as an int.
It takes cubind.driver's handles and cuda.bindings.driver's (code bases
that mix the two), and refuses anything else, integer-valued handles such
as CUdevice and CUdeviceptr included, with cuda.bindings' TypeError
("Unknown type: <class ...>"). cubind's function-pointer classes (CUhostFn,
...) are opaque pointers too and are taken; cuda.bindings has no getter for
them."""
from cubind import driver as _driver

__all__ = ["get_cuda_native_handle"]


def get_cuda_native_handle(obj: object) -> int:
    """The C value of the opaque-pointer handle ``obj`` as an int.

    Raises TypeError ("Unknown type: <class ...>") for any other object."""
    return int(_driver._native_handle(obj))
