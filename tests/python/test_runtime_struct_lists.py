# SPDX-License-Identifier: Apache-2.0
"""cubind.runtime's struct fields that point at counted arrays and its
const handle parameters, as cuda.bindings.runtime takes them (the upstream
test_cudart_class_inline, test_cudart_conditional and the cudaMemcpy*Array
tests failed on them on the H200): a list of handles or structs set on
extSemArray / paramsArray / accessDescs / attrs reads back element by
element; phGraph_out reads as `size` graphs; a cudaArray_const_t parameter
takes a cudaArray_t (and a cudaMipmappedArray_const_t one a
cudaMipmappedArray_t), and still refuses other handles naming itself.
Calls need the real runtime: here they reach it (a status comes back, no
TypeError) on the fake driver."""
import pytest

import cubind.runtime as r

SEM_PARAMS = ["cudaExternalSemaphoreSignalNodeParams", "cudaExternalSemaphoreSignalNodeParamsV2",
              "cudaExternalSemaphoreWaitNodeParams", "cudaExternalSemaphoreWaitNodeParamsV2"]


@pytest.mark.parametrize("name", SEM_PARAMS)
def test_semaphore_arrays_take_lists(name):
    p = getattr(r, name)()
    values = [0, 123, 999]
    p.extSemArray = [r.cudaExternalSemaphore_t(v) for v in values]
    assert [int(h) for h in p.extSemArray] == values
    assert all(type(h) is r.cudaExternalSemaphore_t for h in p.extSemArray)
    element = getattr(r, "cudaExternalSemaphore%sParams" % ("Signal" if "Signal" in name else "Wait"))
    p.paramsArray = [element(), element()]
    assert len(p.paramsArray) == 2 and all(type(e) is element for e in p.paramsArray)


def test_launch_config_attrs_and_alloc_access_descs_take_lists():
    c = r.cudaLaunchConfig_t()
    a = r.cudaLaunchAttribute()
    a.id = r.cudaLaunchAttributeID.cudaLaunchAttributePriority
    c.attrs = [a, r.cudaLaunchAttribute()]
    assert len(c.attrs) == 2 and c.attrs[0].id == r.cudaLaunchAttributeID.cudaLaunchAttributePriority
    for name in ("cudaMemAllocNodeParams", "cudaMemAllocNodeParamsV2"):
        m = getattr(r, name)()
        d = r.cudaMemAccessDesc()
        d.flags = r.cudaMemAccessFlags.cudaMemAccessFlagsProtReadWrite
        m.accessDescs = [d]
        assert m.accessDescs[0].flags == r.cudaMemAccessFlags.cudaMemAccessFlagsProtReadWrite


def test_conditional_phgraph_out_reads_as_size_graphs():
    params = r.cudaGraphNodeParams()
    params.conditional.size = 1
    out = params.conditional.phGraph_out
    assert len(out) == 1
    params.conditional.size = 2
    assert len(params.conditional.phGraph_out) == 2


CONST_PARAMS = [
    (r.cudaGetChannelDesc, (None,), 0, r.cudaArray_t),
    (r.cudaMemcpyFromArray, (0, None, 0, 0, 0, r.cudaMemcpyKind.cudaMemcpyDefault), 1, r.cudaArray_t),
    (r.cudaMemcpy2DFromArray, (0, 0, None, 0, 0, 0, 0, r.cudaMemcpyKind.cudaMemcpyDefault), 2, r.cudaArray_t),
    (r.cudaMemcpyArrayToArray, (None, 0, 0, None, 0, 0, 0, r.cudaMemcpyKind.cudaMemcpyDefault), 3,
     r.cudaArray_t),
    (r.cudaGetMipmappedArrayLevel, (None, 0), 0, r.cudaMipmappedArray_t),
]


@pytest.mark.parametrize("fn, args, index, cls", CONST_PARAMS, ids=[c[0].__name__ for c in CONST_PARAMS])
def test_const_handle_parameters_take_the_mutable_class(fn, args, index, cls):
    args = list(args)
    args[index] = cls(0)
    result = fn(*args)
    assert isinstance(result[0] if isinstance(result, tuple) else result, r.cudaError_t)
    args[index] = r.cudaStream_t(0)
    with pytest.raises(TypeError, match="must be .*%s" % cls.__name__):
        fn(*args)


def test_graph_get_edges_returns_lists_of_nodes():
    """from and to are counted by numEdges (count rules): lists of nodes,
    as the driver's cuGraphGetEdges gives (before: one node each)."""
    returns = [line for line in r.cudaGraphGetEdges.__doc__.splitlines() if "tuple[" in line]
    assert [line.strip() for line in returns] == [
        "tuple[cudaError_t, list[Any] | None, list[Any] | None, list[Any] | None, int | None]"]
