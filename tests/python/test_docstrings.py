# SPDX-License-Identifier: Apache-2.0
"""Docstrings and integer constants of both faces (cubind.driver, cubind.cu),
checked against the text of cuda.h itself."""
import pathlib
import pydoc
import re

import pytest


@pytest.fixture(scope="module")
def header_text(model):
    """The text of the cuda.h the modules were generated from."""
    return pathlib.Path(model["header"]).read_text()

# A doc comment (never `/**<`) separated only by white space from a function
# declaration; the comment may not span another comment's end.
DOC_BEFORE_DECL = re.compile(
    r"/\*\*(?!<)((?:[^*]|\*(?!/))*)\*/\s*(?:\w+\s+)*?CUDAAPI\s+(\w+)\s*\(")


def header_function_docs(text):
    """{name as cuda.h's declaration spells it: words of its doc comment}."""
    docs = {}
    for m in DOC_BEFORE_DECL.finditer(text):
        lines = [re.sub(r"^\s*\*?", "", line) for line in m.group(1).splitlines()]
        docs.setdefault(m.group(2), " ".join(" ".join(lines).split()))
    return docs


@pytest.fixture(scope="module", params=["driver", "cu"])
def face(request, drv):
    if request.param == "cu":
        import cubind.cu as cu
        return cu
    return drv


def test_docstrings_link_nvidia_documentation_and_copy_none(face, header_text):
    """Every function documented in cuda.h is bound; its docstring has the C
    prototype and a link to NVIDIA's documentation, and none of the
    header's documentation text (only `generate --header-docs` puts it in:
    tests/gen/test_provenance.py). Fails on 05a670f, which copied it."""
    docs = header_function_docs(header_text)
    assert len(docs) >= 400, "found only %d documented declarations in cuda.h" % len(docs)
    missing = sorted(n for n in docs if not hasattr(face, n))
    assert not missing, "documented in cuda.h, not bound: %s" % missing[:20]
    copied, unlinked = [], []
    for n, words in docs.items():
        doc = " ".join((getattr(face, n).__doc__ or "").split())
        if len(words) > 80 and words[:80] in doc:
            copied.append(n)
        if "module/driver.html#cuda.bindings.driver." not in doc:
            unlinked.append(n)
    assert not copied, "%d docstrings copy cuda.h's documentation: %s" % (len(copied), copied[:20])
    assert not unlinked, unlinked[:20]


def test_help_of_a_versioned_function(face):
    # cuMemAlloc is `#define cuMemAlloc cuMemAlloc_v2` in cuda.h.
    text = pydoc.render_doc(face.cuMemAlloc, renderer=pydoc.plaintext)
    assert "CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)" in text
    assert "\\brief" not in text and "Allocates \\p bytesize" not in text
    for section in ("Parameters\n", "Returns\n", "Raises\n"):
        assert section in text
    raising = face.__name__ == "cubind.cu"
    assert ("tuple[CUresult" in text) != raising      # written per face
    assert ("cubind.CUDAError" in text) == raising


ENUM_NAMED = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(CU_LAUNCH_ATTRIBUTE_\w+)[ \t]*$", re.M)


def test_macros_naming_launch_attributes(face, drv, header_text):
    """CU_KERNEL_NODE_ATTRIBUTE_* and CU_STREAM_ATTRIBUTE_* are
    `#define X CU_LAUNCH_ATTRIBUTE_Y`: plain ints of Y's value, like every
    other constant (cuda.bindings' values are integers too)."""
    defines = dict(ENUM_NAMED.findall(header_text))
    assert {n for n in defines if n.startswith("CU_STREAM_ATTRIBUTE_")} >= {
        "CU_STREAM_ATTRIBUTE_PRIORITY", "CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW"}
    assert len(defines) >= 15
    for name, member in defines.items():
        value = getattr(face, name)
        assert type(value) is int, name
        assert value == int(getattr(drv.CUlaunchAttributeID, member)), name
    assert face.CU_STREAM_ATTRIBUTE_PRIORITY == 8
    assert face.CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE == 2


# module -> how many of its functions have outputs, at least (nvfatbin's:
# create, size, version, get_error_string)
@pytest.mark.parametrize("module,least", [("cubind.driver", 5), ("cubind.cu", 5), ("cubind.nvrtc", 5),
                                          ("cubind.nvjitlink", 5), ("cubind.nvvm", 5),
                                          ("cubind.nvfatbin", 4), ("cubind.cufile", 5),
                                          ("cubind.nvml", 5)])
def test_returns_lists_name_every_output_once(module, least, drv):
    """The Returns section names the outputs as ``(status, a, b)`` (tuple
    face) or ``a, b`` (raising face), never with an empty entry. Failed on
    3dd668e for nvrtcGetErrorString, whose C string came out as
    ``(status, , bytes)`` and ``, bytes``."""
    import importlib
    mod = importlib.import_module(module)
    checked = 0
    for name in dir(mod):
        doc = getattr(getattr(mod, name), "__doc__", None) or ""
        if "\nReturns\n-------\n" not in doc:
            continue
        returns = doc.split("\nReturns\n-------\n", 1)[1].split("\n\n", 1)[0]
        for listed in re.findall(r"``([^`]*)``: (?:the|what)", returns):
            entries = [e.strip() for e in listed.strip("()").split(",")]
            assert all(entries), "%s.%s: %r" % (module, name, listed)
            checked += 1
    assert checked >= least, checked


# The most used functions (memory, streams, events, modules, launch,
# context): each input parameter has a one-line description of cubind's
# own (gen/rules.txt, param-doc); issue 43 found "The C parameter
# ``bytesize``." for every one.
MOST_USED = """
cuInit cuDeviceGet cuDeviceGetName cuDeviceGetAttribute cuDeviceTotalMem
cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRelease cuCtxCreate cuCtxDestroy cuCtxSetCurrent
cuCtxPushCurrent cuMemAlloc cuMemFree cuMemAllocHost cuMemFreeHost cuMemHostAlloc
cuMemAllocManaged cuMemcpyHtoD cuMemcpyDtoH cuMemcpyDtoD cuMemcpyHtoDAsync cuMemcpyDtoHAsync
cuMemcpyDtoDAsync cuMemsetD8 cuMemsetD32 cuMemsetD8Async cuMemAllocAsync cuMemFreeAsync
cuStreamCreate cuStreamCreateWithPriority cuStreamDestroy cuStreamSynchronize cuStreamQuery
cuStreamWaitEvent cuLaunchHostFunc cuStreamAddCallback cuEventCreate cuEventRecord
cuEventSynchronize cuEventQuery cuEventDestroy cuEventElapsedTime cuModuleLoad cuModuleLoadData
cuModuleLoadDataEx cuModuleUnload cuModuleGetFunction cuModuleGetGlobal cuLaunchKernel
cuLaunchKernelEx cuLaunchCooperativeKernel cuFuncGetAttribute cuFuncSetAttribute
""".split()


def parameter_lines(doc):
    """{Python name: its description line} of a docstring's Parameters."""
    section = doc.split("Parameters\n----------\n", 1)[1].split("\nReturns\n", 1)[0]
    lines = section.splitlines()
    return {line.split(" : ", 1)[0]: lines[i + 1].strip()
            for i, line in enumerate(lines) if " : " in line and not line.startswith(" ")}


def check_parameters_described(module, names, header_text):
    """Every parameter of module's functions `names` has a description of
    the project's own: not the default line, not a sentence of the
    header's."""
    assert len(names) >= 40
    undescribed, copied = [], []
    flat_header = " ".join(header_text.split())
    for name in names:
        params = parameter_lines(getattr(module, name).__doc__)
        assert params, name
        for pyname, line in params.items():
            if line.startswith("The C parameter"):
                undescribed.append("%s(%s)" % (name, pyname))
            elif len(line) > 40 and line.rstrip(".") in flat_header:
                copied.append(line)
    assert not undescribed, undescribed
    assert not copied, copied   # our own words, not the header's


def test_most_used_functions_describe_every_parameter(face, header_text):
    check_parameters_described(face, MOST_USED, header_text)


# The runtime's most used functions (gen/runtime.rules, param-doc): the
# same promise for cubind.runtime and cubind.cudart, whose parameters all
# read "The C parameter ``x``." before.
MOST_USED_RUNTIME = """
cudaMalloc cudaFree cudaMemcpy cudaMemcpyAsync cudaMemset cudaMemsetAsync cudaMallocHost
cudaFreeHost cudaHostAlloc cudaHostRegister cudaHostUnregister cudaMallocManaged cudaMallocAsync
cudaFreeAsync cudaMemcpy2D cudaMemcpyPeer cudaPointerGetAttributes cudaStreamCreateWithFlags
cudaStreamCreateWithPriority cudaStreamDestroy cudaStreamSynchronize cudaStreamQuery
cudaStreamWaitEvent cudaLaunchHostFunc cudaStreamAddCallback cudaEventCreateWithFlags
cudaEventRecord cudaEventSynchronize cudaEventQuery cudaEventElapsedTime cudaEventDestroy
cudaSetDevice cudaGetDeviceProperties cudaDeviceGetAttribute cudaDeviceCanAccessPeer
cudaDeviceEnablePeerAccess cudaLaunchKernel cudaLaunchKernelExC cudaFuncGetAttributes
cudaFuncSetAttribute cudaLibraryLoadData cudaLibraryGetKernel cudaLibraryUnload
cudaGetErrorString cudaGetErrorName cudaGraphCreate cudaGraphInstantiate cudaGraphLaunch
cudaStreamBeginCapture cudaStreamEndCapture
""".split()


@pytest.mark.parametrize("name", ["runtime", "cudart"])
def test_most_used_runtime_functions_describe_every_parameter(name, model):
    import importlib
    module = importlib.import_module("cubind." + name)
    header = pathlib.Path(model["header"]).with_name("cuda_runtime_api.h")
    check_parameters_described(module, MOST_USED_RUNTIME,
                               header.read_text() if header.is_file() else "")
    # a function not in the list keeps the default line
    assert parameter_lines(module.cudaStreamGetPriority.__doc__)["hStream"] == \
        "The C parameter ``hStream``."


def test_parameters_without_a_description_keep_the_default_line(face):
    # cuStreamBeginCapture has no param-doc rule
    params = parameter_lines(face.cuStreamBeginCapture.__doc__)
    assert params["hStream"] == "The C parameter ``hStream``."
    assert parameter_lines(face.cuMemAlloc.__doc__)["bytesize"] == \
        "How many bytes of device memory to allocate."


# A numpydoc section heading: a line, then a line of dashes as long.
SECTION = re.compile(r"^(\S[^\n]*)\n-+$", re.M)
# A Raises entry: exception names, comma-separated.
EXCEPTIONS = re.compile(r"^(?:cubind\.)?[A-Za-z_]\w*(?:, (?:cubind\.)?[A-Za-z_]\w*)*$")


def numpydoc_sections(doc):
    """{heading: body} of a docstring's numpydoc sections."""
    parts = SECTION.split(doc)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("name", ["driver", "cu", "runtime", "cudart", "nvrtc", "rtc",
                                  "nvjitlink", "nvvm"])
def test_raises_sections_name_only_exceptions(name):
    """Every entry of every function's Raises section is an exception: the
    docs site (napoleon) renders each unindented line there as one. Fails
    on 88d81ea, whose link to NVIDIA's documentation followed the Raises
    section without a heading of its own."""
    import importlib
    m = importlib.import_module("cubind." + name)
    bad, checked = [], 0
    for attr in dir(m):
        f = getattr(m, attr)
        if type(f).__name__ != "builtin_function_or_method" or not f.__doc__:
            continue
        sections = numpydoc_sections(f.__doc__)
        raises = sections.get("Raises")
        if raises is None:
            continue
        checked += 1
        if "NVIDIA's documentation" not in sections.get("References", ""):
            bad.append("%s: no References section with the link" % attr)
        bad += ["%s: %r" % (attr, line) for line in raises.strip("\n").splitlines()
                if line and not line.startswith(" ") and not EXCEPTIONS.match(line)]
    assert checked, "no function of cubind.%s has a Raises section" % name
    assert not bad, bad[:10]
