# SPDX-License-Identifier: Apache-2.0
"""cubind.runtime's callbacks as the driver's (issue 45, item 5; the
`callback` rules of gen/runtime.rules): cudaLaunchHostFunc,
cudaStreamAddCallback and cudaUserObjectCreate take a Python callable, a
ctypes function pointer (kept alive with its data), a handle of the
callback class or an int address, through the shared runtime's registry.

Without a GPU the runtime answers cudaErrorInsufficientDriver: these tests
check the plumbing around the call (what is taken, what is refused, that a
payload the runtime never received is released); tests/gpu/
test_runtime_gpu.py checks that the callbacks run."""
import ctypes
import gc
import threading
import weakref

import pytest

import cubind.runtime as r

# also under ThreadSanitizer (tests/run: -m tsan), as the driver's callback
# tests are
pytestmark = pytest.mark.tsan

NO_GPU = (r.cudaError_t.cudaErrorInsufficientDriver, r.cudaError_t.cudaErrorNoDevice)


class Callable:
    def __call__(self, *args):
        raise AssertionError("the runtime has no GPU to call it")


class Data:
    pass


CALLS = {
    "cudaLaunchHostFunc": lambda fn, data: r.cudaLaunchHostFunc(0, fn, data),
    "cudaStreamAddCallback": lambda fn, data: r.cudaStreamAddCallback(0, fn, data, 0),
    "cudaUserObjectCreate": lambda fn, data: r.cudaUserObjectCreate(data, fn, 1, 1),
}
PARAMS = {"cudaLaunchHostFunc": "fn", "cudaStreamAddCallback": "callback",
          "cudaUserObjectCreate": "destroy"}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_python_callable_is_taken_then_released(name):
    """Before: TypeError ('fn' must be an int address, ...). A payload the
    runtime did not take (its call failed) releases the callable and the
    data at once."""
    fn, data = Callable(), Data()
    refs = weakref.ref(fn), weakref.ref(data)
    out = CALLS[name](fn, data)
    assert out[0] in NO_GPU, out
    del fn, data
    gc.collect()
    assert refs[0]() is None and refs[1]() is None


@pytest.mark.parametrize("name", sorted(CALLS))
def test_not_a_callback_names_the_parameter(name):
    with pytest.raises(TypeError, match="'%s'.*Python callable" % PARAMS[name]):
        CALLS[name](object(), None)


PROTOS = {
    "cudaLaunchHostFunc": ctypes.CFUNCTYPE(None, ctypes.c_void_p),
    "cudaStreamAddCallback": ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p),
    "cudaUserObjectCreate": ctypes.CFUNCTYPE(None, ctypes.c_void_p),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_ctypes_function_pointer_is_kept_then_released(name):
    c_fn = PROTOS[name](lambda *a: None)
    ref = weakref.ref(c_fn)
    out = CALLS[name](c_fn, 5)
    assert out[0] in NO_GPU, out
    del c_fn
    gc.collect()
    assert ref() is None


def test_handle_class_reads_a_function_pointer_through_ptr():
    """cuda.bindings' form (upstream test_cudart_func_callback):
    cudaHostFn_t(_ptr=ctypes.addressof(c_fn)) holds the function's address.
    Before: TypeError (no _ptr keyword)."""
    c_fn = PROTOS["cudaLaunchHostFunc"](lambda data: None)
    address = ctypes.cast(c_fn, ctypes.c_void_p).value
    fn = r.cudaHostFn_t(_ptr=ctypes.addressof(c_fn))
    assert int(fn) == address
    assert int(r.cudaStreamCallback_t(_ptr=ctypes.addressof(c_fn))) == address
    assert r.cudaLaunchHostFunc(0, fn, 1234)[0] in NO_GPU
    # a view of that memory, as cuda.bindings' (the upstream kernel test
    # hands one as a kernel's pointer argument and reads what it wrote)
    box = ctypes.c_uint64(0x1122334455667788)
    stream = r.cudaStream_t(_ptr=ctypes.addressof(box))
    assert int(stream) == 0x1122334455667788
    box.value = 0x99
    assert int(stream) == 0x99 and stream.getPtr() == ctypes.addressof(box)
    with pytest.raises(TypeError, match="not both"):
        r.cudaStream_t(1, _ptr=ctypes.addressof(box))
    with pytest.raises(TypeError, match="_ptr"):
        r.cudaStream_t(_ptr="here")


def test_threads_give_and_release_callbacks():
    """8 threads each hand the runtime Python callables through all three
    functions, 200 times; every payload is made and released (the runtime
    takes none without a GPU) while the others do the same, through the one
    process registry (no GIL on a free-threaded build)."""
    errors, barrier = [], threading.Barrier(8)
    refs = []

    def body():
        try:
            barrier.wait()
            for i in range(200):
                fn, data = Callable(), Data()
                if i % 50 == 0:
                    refs.append((weakref.ref(fn), weakref.ref(data)))
                for call in CALLS.values():
                    assert call(fn, data)[0] in NO_GPU
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=body) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    assert refs and all(a() is None and b() is None for a, b in refs)
