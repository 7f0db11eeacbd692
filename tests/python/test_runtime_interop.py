# SPDX-License-Identifier: Apache-2.0
"""cubind.runtime and cubind.driver as one set of handles (issue 45, item 4):
where the runtime's C type is the driver's, the runtime's class derives
from the driver's (the handle-base rules of gen/runtime.rules), each
module's functions take the other's objects, an object of an unrelated
handle class is refused with a TypeError naming the parameter, and the
classes compare and hash alike by value, as cuda.bindings' do.

The runtime's own calls fail without a GPU (cudaErrorInsufficientDriver),
so these tests check the conversions, which happen before any call."""
import pathlib
import re

import pytest

import cubind
import cubind.driver as d
import cubind.runtime as r
import cubind.cudart as cudart

NO_GPU = (r.cudaError_t.cudaErrorInsufficientDriver, r.cudaError_t.cudaErrorNoDevice)

RULES = pathlib.Path(__file__).resolve().parents[2] / "gen" / "runtime.rules"


def handle_bases():
    """(runtime class, driver class) of each handle-base rule."""
    pairs = []
    for line in RULES.read_text().splitlines():
        m = re.match(r"handle-base (\S+) cubind\.driver (\S+)$", line)
        if m:
            pairs.append((getattr(r, m.group(1)), getattr(d, m.group(2))))
    return pairs


PAIRS = handle_bases()


def test_the_rules_name_cuda_bindings_subclasses():
    """cuda.bindings 13.3.1's runtime classes that derive from its driver's
    are among the rules' (the others of the table are the header's same
    C types)."""
    names = {(rc.__name__, dc.__name__) for rc, dc in PAIRS}
    for pair in [("cudaStream_t", "CUstream"), ("cudaEvent_t", "CUevent"),
                 ("cudaGraph_t", "CUgraph"), ("cudaGraphNode_t", "CUgraphNode"),
                 ("cudaUserObject_t", "CUuserObject"), ("cudaFunction_t", "CUfunction"),
                 ("cudaMemPool_t", "CUmemoryPool"), ("cudaGraphExec_t", "CUgraphExec")]:
        assert pair in names, pair


@pytest.mark.parametrize("rc, dc", PAIRS, ids=lambda c: c.__name__)
def test_runtime_class_derives_from_the_drivers(rc, dc):
    assert issubclass(rc, dc) and rc.__module__ == "cubind.runtime"
    assert isinstance(rc(5), dc) and not isinstance(dc(5), rc)
    # equal by value in both orders, and hashed alike
    assert rc(5) == dc(5) and dc(5) == rc(5) and not (rc(5) != dc(5))
    assert rc(5) != dc(6)
    assert hash(rc(5)) == hash(dc(5)) and len({rc(5), dc(5)}) == 1
    assert int(rc(5)) == int(dc(5)) == 5
    # each constructor takes the other's object
    assert int(rc(dc(7))) == 7 and int(dc(rc(7))) == 7
    assert type(dc(rc(7))) is dc


def test_unrelated_classes_stay_apart():
    assert not issubclass(r.cudaArray_const_t, d.CUarray)
    assert r.cudaStream_t(5) != d.CUevent(5) and d.CUevent(5) != r.cudaStream_t(5)
    assert r.cudaStream_t(5) != r.cudaEvent_t(5)
    with pytest.raises(TypeError, match="init_value"):
        r.cudaStream_t(d.CUevent(7))
    with pytest.raises(TypeError, match="init_value"):
        d.CUstream(r.cudaEvent_t(7))


def test_python_cannot_subclass_a_handle_class():
    """The classes are derivable only by another cubind module (the layout
    is cubind's); a class statement is refused."""
    for base in (d.CUstream, r.cudaStream_t, r.cudaArray_const_t):
        with pytest.raises(TypeError, match="cannot be subclassed"):
            type("Mine", (base,), {})


def test_driver_takes_runtime_handles():
    """The fake driver answers, so the value reaches the call."""
    assert d.cuStreamQuery(r.cudaStream_t(0)) == d.cuStreamQuery(d.CUstream(0))
    assert isinstance(d.cuGraphDestroy(r.cudaGraph_t(0))[0], d.CUresult)
    # a handle array (const CUgraphNode *dependencies) of runtime nodes
    # (the fake driver has no cuGraphAddEmptyNode: the arguments converted,
    # the call looks for it)
    with pytest.raises(cubind.FunctionNotFoundError, match="cuGraphAddEmptyNode"):
        d.cuGraphAddEmptyNode(d.CUgraph(0), [r.cudaGraphNode_t(0)], 1)


@pytest.mark.parametrize("face", [r, cudart], ids=["runtime", "cudart"])
def test_runtime_takes_driver_handles(face):
    """Converted, then the runtime answers for want of a GPU (the tuple
    face) or raises its error (the raising face): no TypeError."""
    for call in (lambda: face.cudaStreamQuery(d.CUstream(0)),
                 lambda: face.cudaEventQuery(d.CUevent(1)),
                 lambda: face.cudaGraphAddEmptyNode(d.CUgraph(1), [d.CUgraphNode(2)], 1),
                 lambda: face.cudaGraphDestroy(d.CUgraph(1))):
        try:
            out = call()
        except TypeError:
            raise
        except Exception as e:  # the raising face: the runtime's error
            assert type(e).__name__ == "CUDARuntimeError", e
        else:
            assert isinstance(out[0], r.cudaError_t)


@pytest.mark.parametrize("call, param", [
    (lambda: r.cudaStreamQuery(d.CUevent(1)), "stream"),
    (lambda: r.cudaEventQuery(d.CUstream(1)), "event"),
    (lambda: r.cudaGraphDestroy(d.CUgraphExec(1)), "graph"),
    (lambda: r.cudaGraphAddEmptyNode(d.CUgraph(1), [d.CUevent(2)], 1), "pDependencies"),
    (lambda: d.cuStreamQuery(r.cudaEvent_t(1)), "hStream"),
    (lambda: d.cuEventQuery(r.cudaStream_t(1)), "hEvent"),
    (lambda: d.cuGraphAddEmptyNode(d.CUgraph(0), [r.cudaGraph_t(1)], 1), "dependencies"),
    (lambda: d.cuStreamQuery(r.cudaArray_const_t(1)), "hStream"),
])
def test_unrelated_handle_is_refused_naming_the_parameter(call, param):
    """Before: taken by its value (int()) across the two modules."""
    with pytest.raises(TypeError, match="'%s'" % param):
        call()


def test_runtime_dependencies_are_counted_arrays():
    """pDependencies pairs with numDependencies (a pointer's "p" prefix):
    a list of nodes, checked against its count, as cuda.bindings takes it
    (before: one cudaGraphNode_t, a list refused)."""
    out = r.cudaGraphAddEmptyNode(d.CUgraph(1), [], 0)
    assert isinstance(out[0], r.cudaError_t)
    with pytest.raises(ValueError, match="'pDependencies'"):
        r.cudaGraphAddEmptyNode(d.CUgraph(1), [r.cudaGraphNode_t(1)], 2)
    with pytest.raises(ValueError, match="'edgeData'"):
        r.cudaGraphAddDependencies(r.cudaGraph_t(1), [1, 2], [3, 4], [r.cudaGraphEdgeData()], 2)


def test_driver_device_pointer_is_an_address():
    """cuda-python's test_interop_deviceptr: a CUdeviceptr from cuMemAlloc
    given for the runtime's void * (cudaMemcpy's src, cudaMemset's devPtr)
    is its address, as cuda.bindings takes it; a handle of another kind is
    no address. Before: TypeError for src."""
    p = d.CUdeviceptr(0x1000)
    assert r.cudaMemcpy(bytearray(4), p, 4, r.cudaMemcpyKind.cudaMemcpyDeviceToHost)[0] in NO_GPU
    assert r.cudaMemset(p, 1, 4)[0] in NO_GPU
    with pytest.raises(TypeError, match="'src'"):
        r.cudaMemcpy(bytearray(4), d.CUstream(0x1000), 4, 2)
