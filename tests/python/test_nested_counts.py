# SPDX-License-Identifier: Apache-2.0
"""A counted struct is checked wherever it appears: passed directly, or as a
member of another struct or of a union (CUgraphNodeParams' extSemSignal,
extSemWait, alloc, memOp through cuGraphAddNode, cuGraphNodeSetParams and
cuGraphExecNodeSetParams). A count larger than the array the struct owns,
or than the buffer its array field was set from, is a ValueError naming the
path of the field, before the driver is called; the next valid call goes
through (the fake driver records the semaphores a signal node received).
On 05a670f only a struct passed directly was checked: the nested cases
reached the driver with numExtSems 1000 and a 1-element array."""
import ctypes

import pytest

from conftest import assert_no_growth

NOT_SUPPORTED = 801  # the fake has no semaphore nodes: it records and refuses


def members(drv):
    """(member of CUgraphNodeParams, array field, count field, one element)."""
    return [
        ("extSemSignal", "extSemArray", "numExtSems", drv.CUexternalSemaphore(0x5e1)),
        ("extSemSignal", "paramsArray", "numExtSems", drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()),
        ("extSemWait", "extSemArray", "numExtSems", drv.CUexternalSemaphore(0x5e2)),
        ("extSemWait", "paramsArray", "numExtSems", drv.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS()),
        ("alloc", "accessDescs", "accessDescCount", drv.CUmemAccessDesc()),
        ("memOp", "paramArray", "count", drv.CUstreamBatchMemOpParams()),
    ]


def overcounted(drv, member, array, count, elem, n=1000):
    gp = drv.CUgraphNodeParams()
    inner = getattr(gp, member)     # a view: writing it writes gp
    setattr(inner, array, [elem])
    setattr(inner, count, n)
    return gp


@pytest.fixture
def graph(drv, ctx):
    err, g = drv.cuGraphCreate(0)
    assert err == 0
    yield g
    assert drv.cuGraphDestroy(g)[0] == 0


def test_every_counted_member_is_checked_through_every_graph_call(drv, graph):
    for member, array, count, elem in members(drv):
        gp = overcounted(drv, member, array, count, elem)
        # extSemSignal and extSemWait lay out the same bytes of the union:
        # the first member the bytes fail is named
        path = "CUgraphNodeParams_st." + ("extSem(Signal|Wait)" if "extSem" in member else member)
        want = rf"argument 'nodeParams': {path}.{count} is 1000 but {path}\.\w+ holds 1 element"
        with pytest.raises(ValueError, match=r"cuGraphAddNode\(\): " + want):
            drv.cuGraphAddNode(graph, None, None, 0, gp)
        with pytest.raises(ValueError, match=r"cuGraphNodeSetParams\(\): " + want):
            drv.cuGraphNodeSetParams(None, gp)
        with pytest.raises(ValueError, match=r"cuGraphExecNodeSetParams\(\): " + want):
            drv.cuGraphExecNodeSetParams(None, None, gp)


def test_a_whole_struct_assigned_into_the_union_is_checked_too(drv, graph):
    s = drv.CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2()
    s.extSemArray = [drv.CUexternalSemaphore(1), drv.CUexternalSemaphore(2)]
    s.paramsArray = [drv.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS()] * 2
    s.numExtSems = 3
    gp = drv.CUgraphNodeParams()
    gp.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT
    gp.extSemWait = s  # a copy: the arrays it owns come with it
    with pytest.raises(ValueError, match=r"extSem(Signal|Wait)\.numExtSems is 3 but "
                                         r"CUgraphNodeParams_st\.extSem(Signal|Wait)\.extSemArray "
                                         r"holds 2 elements"):
        drv.cuGraphAddNode(graph, None, None, 0, gp)


def test_the_next_valid_call_reaches_the_driver(drv, fake, graph):
    gp = overcounted(drv, "extSemSignal", "extSemArray", "numExtSems", drv.CUexternalSemaphore(0x5e1))
    gp.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL
    gp.extSemSignal.paramsArray = [drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()]
    out = (ctypes.c_ulonglong * 8)()
    before = fake.fakecuda_last_ext_sems(out, 8)
    with pytest.raises(ValueError):
        drv.cuGraphAddNode(graph, None, None, 0, gp)
    assert fake.fakecuda_last_ext_sems(out, 8) == before  # never reached
    gp.extSemSignal.numExtSems = 1
    err = drv.cuGraphAddNode(graph, None, None, 0, gp)[0]
    assert err == NOT_SUPPORTED
    assert fake.fakecuda_last_ext_sems(out, 8) == 1 and out[0] == 0x5e1


def test_an_array_field_set_from_a_buffer_is_checked_against_its_bytes(drv, graph):
    gp = drv.CUgraphNodeParams()
    handles = (ctypes.c_uint64 * 2)(7, 8)
    gp.extSemSignal.extSemArray = memoryview(handles).cast("B")  # 16 bytes: two handles
    gp.extSemSignal.paramsArray = [drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()] * 3
    gp.extSemSignal.numExtSems = 3
    with pytest.raises(ValueError, match=r"extSemSignal.numExtSems is 3 but CUgraphNodeParams_st"
                                         r"\.extSemSignal\.extSemArray is a buffer of 16 bytes, "
                                         r"fewer than the 24 those elements take"):
        drv.cuGraphAddNode(graph, None, None, 0, gp)
    # passed directly, the same struct says the same
    s = drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS()
    s.extSemArray = bytearray(8)
    s.numExtSems = 2
    with pytest.raises(ValueError, match="CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st.extSemArray is a "
                                         "buffer of 8 bytes, fewer than the 16"):
        drv.cuGraphExternalSemaphoresSignalNodeSetParams(None, s)
    # an int address stays the caller's, as in C: past the checks, the call
    # looks the driver up (the fake has no such function)
    import cubind
    s.extSemArray = ctypes.addressof(handles)
    with pytest.raises(cubind.FunctionNotFoundError):
        drv.cuGraphExternalSemaphoresSignalNodeSetParams(None, s)


def test_a_refused_call_leaves_nothing_behind(drv, graph):
    gp = overcounted(drv, "alloc", "accessDescs", "accessDescCount", drv.CUmemAccessDesc())

    def refused():
        with pytest.raises(ValueError):
            drv.cuGraphAddNode(graph, None, None, 0, gp)

    assert_no_growth(refused)
