# SPDX-License-Identifier: Apache-2.0
"""The runtime's targets of tools/compare_conversions.py: what is probed of
cuda.bindings.runtime / cubind.runtime besides the fields and the handle and
enum constructors (those are compare_conversions' struct_groups and
ctor_groups, named "runtime:...").

- the makers make_cudaExtent / make_cudaPos / make_cudaPitchedPtr, one
  target per parameter, read back from the struct made (no driver call);
- the dim3 constructor given a value (a tuple, a dim3, ...), read back as
  [x, y, z] (no driver call; only values no binding could take as an
  address other than NULL);
- an allowlist of runtime functions whose results show what arrived, run on
  device 0 (the GPU machine): cudaSetDevice then cudaGetDevice,
  cudaDeviceGetAttribute, cudaMalloc then the driver's range size, then
  cudaFree, cudaPointerGetAttributes, cudaStreamCreateWithFlags then
  cudaStreamGetFlags, cudaEventCreateWithFlags, cudaStreamQuery, cudaMemset
  then a read back, cudaMemcpy from host memory then a read back,
  cudaGetDeviceProperties, cudaKernelSetAttributeForDevice on an empty
  kernel loaded with cudaLibraryLoadData then the driver's
  cuKernelGetAttribute, cudaLaunchHostFunc (cuda.bindings.runtime 13.3.1
  has no cudaLaunchKernel: dim3 is probed as the fields of
  cudaLaunchConfig_t and cudaKernelNodeParams, and as dim3's
  constructor). The same safety rules as the driver's allowlist:
  handles that convert to 0, 1 or 2 only, host memory only as Python
  buffers, fixed sizes wherever the device writes, only what a probe made
  is freed or destroyed.
"""
import compare_conversions as cc

# what each maker's parameters set, in order: (maker, [(parameter, field)])
MAKERS = (
    ("make_cudaExtent", (("w", "width"), ("h", "height"), ("d", "depth"))),
    ("make_cudaPos", (("x", "x"), ("y", "y"), ("z", "z"))),
    ("make_cudaPitchedPtr", (("d", "ptr"), ("p", "pitch"), ("xsz", "xsize"), ("ysz", "ysize"))),
)


def dim3_values(runtimes):
    """dim3 arguments: a dim3 (1, 1, 1) of each family, tuples and lists."""
    vals = [("tuple (1, 1, 1)", lambda: (1, 1, 1)), ("list [1, 1, 1]", lambda: [1, 1, 1]),
            ("tuple (1,)", lambda: (1,)), ("tuple (1.0, 1, 1)", lambda: (1.0, 1, 1))]
    for fam in sorted(runtimes):
        cls = getattr(runtimes[fam], "dim3", None)
        if cls is not None:
            vals.append(("struct %s.runtime.dim3 (1, 1, 1)" % fam, (lambda cls=cls: _dim3(cls))))
    return vals


def _dim3(cls):
    d = cls()
    d.x, d.y, d.z = 1, 1, 1
    return d


def not_an_address(label, fac):
    """A value that no binding could take as an address other than NULL
    (a struct parameter given an int reads the struct there)."""
    got = cc._conversions_of(fac)
    return got is not None and got <= {0}


def maker_groups(rt, values, kinds):
    """One group: every parameter of every maker given every value (the
    others fixed), read back from the struct made; and dim3(value)."""
    probes = []
    for maker, params in MAKERS:
        fn = getattr(rt, maker, None)
        if fn is None:
            continue
        for i, (param, field) in enumerate(params):
            target = "runtime:%s.%s" % (maker, param)
            kinds[target] = "pointer" if field == "ptr" else "integer"

            def thunk(ctx, v, fn=fn, i=i, field=field, n=len(params)):
                args = [1] * n
                args[i] = v
                return getattr(fn(*args), field)
            probes += [(target, label, fac, thunk) for label, fac in values]
    if hasattr(rt, "dim3"):
        target = "runtime:dim3()"
        kinds[target] = "struct"

        def thunk(ctx, v):
            d = rt.dim3(v)
            return [d.x, d.y, d.z]
        runtimes = cc.family_modules("runtime")
        vals = [(l, f) for l, f in values if not_an_address(l, f)] + dim3_values(runtimes)
        probes += [(target, label, fac, thunk) for label, fac in vals]
    return [(None, probes)]


def runtime_setup(rt, drv):
    """ctx: device 0 current (its primary context), an allocation of 1 KiB,
    a library with an empty kernel."""
    def setup():
        ctx = {"rt": rt, "drv": drv}
        cc.check(rt.cudaSetDevice(0))
        cc.check(rt.cudaFree(0))
        ctx["dptr"] = cc.check(rt.cudaMalloc(1024))
        ctx["lib"] = cc.check(rt.cudaLibraryLoadData(cc.PTX + b"\0", [], [], 0, [], [], 0))
        ctx["kernel"] = cc.check(rt.cudaLibraryGetKernel(ctx["lib"], b"cubind_probe_empty"))
        ctx["device"] = True

        def teardown():
            rt.cudaDeviceSynchronize()
            rt.cudaFree(ctx["dptr"])
            rt.cudaLibraryUnload(ctx["lib"])
        ctx["teardown"] = teardown
        return ctx
    return setup


def deviceless_setup(rt, drv):
    """ctx without a device (the fake driver: the runtime cannot start):
    NULL for the allocation and the kernel, so every call converts its
    arguments and then fails with the runtime's status. The probes then
    show what each parameter takes or refuses (a replay compares their
    outcomes only), never what arrived."""
    def setup():
        return {"rt": rt, "drv": drv, "dptr": 0, "kernel": None, "device": False,
                "teardown": lambda: None}
    return setup


def _ok(r):
    return int(r[0]) == 0


def runtime_functions(rt, drv):
    """(target, kind, filter, thunk) of the allowlisted runtime functions;
    drv: the same family's driver module (reads back what a runtime call
    made)."""
    A = rt.cudaDeviceAttr
    P = drv.CUpointer_attribute
    st = cc.status

    def set_device(ctx, v):
        r = rt.cudaSetDevice(v)
        g = rt.cudaGetDevice()
        rt.cudaSetDevice(0)
        return [st(r), g[1] if _ok(g) else None]

    def attr_attr(ctx, v):
        r = rt.cudaDeviceGetAttribute(v, 0)
        return [st(r), r[1] if _ok(r) else None]

    def attr_device(ctx, v):
        r = rt.cudaDeviceGetAttribute(A.cudaDevAttrMaxThreadsPerBlock, v)
        return [st(r), r[1] if _ok(r) else None]

    def malloc(ctx, v):
        r = rt.cudaMalloc(v)
        if not _ok(r):
            return [st(r), None]
        try:
            s = drv.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_SIZE, int(r[1]))
            return [st(r), s[1] if int(s[0]) == 0 else cc.status(s)]
        finally:
            rt.cudaFree(r[1])

    def pointer_attributes(ctx, v):
        r = rt.cudaPointerGetAttributes(v)
        if not _ok(r):
            return [st(r), None]
        a = r[1]
        return [st(r), cc.norm(a.type), a.device, a.devicePointer, a.hostPointer]

    def stream_create(ctx, v):
        r = rt.cudaStreamCreateWithFlags(v)
        if not _ok(r):
            return [st(r), None]
        try:
            f = rt.cudaStreamGetFlags(r[1])
            return [st(r), f[1] if _ok(f) else st(f)]
        finally:
            rt.cudaStreamDestroy(r[1])

    def event_create(ctx, v):
        r = rt.cudaEventCreateWithFlags(v)
        if _ok(r):
            rt.cudaEventDestroy(r[1])
        return [st(r)]

    def stream_query(ctx, v):
        return [st(rt.cudaStreamQuery(v))]

    def read_back(ctx):
        if not ctx["device"]:
            return None
        back = bytearray(1)
        drv.cuMemcpyDtoH(back, int(ctx["dptr"]), 1)
        return back[0]

    def memset_value(ctx, v):
        rt.cudaMemset(ctx["dptr"], 0, 16)
        r = rt.cudaMemset(ctx["dptr"], v, 16)
        rt.cudaDeviceSynchronize()
        return [st(r), read_back(ctx)]

    def memset_ptr(ctx, v):  # a device pointer as a value, nothing written (count 0)
        return [st(rt.cudaMemset(v, 0, 0))]

    def memcpy_src(ctx, v):
        rt.cudaMemset(ctx["dptr"], 0, 16)
        r = rt.cudaMemcpy(ctx["dptr"], v, 1, rt.cudaMemcpyKind.cudaMemcpyHostToDevice)
        return [st(r), read_back(ctx)]

    def kernel_attribute(which):  # set, then read back through the driver
        F = drv.CUfunction_attribute
        dyn = rt.cudaFuncAttribute.cudaFuncAttributeMaxDynamicSharedMemorySize

        def thunk(ctx, v):
            args = [ctx["kernel"], dyn, 1024, 0]
            args[which] = v
            r = rt.cudaKernelSetAttributeForDevice(*args)
            if not ctx["device"]:
                return [st(r)]
            back = drv.cuKernelGetAttribute(F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            drv.CUkernel(int(ctx["kernel"])), drv.CUdevice(0))
            rt.cudaKernelSetAttributeForDevice(ctx["kernel"], dyn, 0, 0)
            return [st(r), back[1] if int(back[0]) == 0 else None]
        return thunk

    def device_properties(ctx, v):
        r = rt.cudaGetDeviceProperties(v)
        return [st(r), [r[1].major, r[1].minor] if _ok(r) else None]

    anything, safe, buffers = None, cc.safe_handle, cc.host_buffer
    return [
        ("runtime:cudaSetDevice.device", "integer", anything, set_device),
        ("runtime:cudaDeviceGetAttribute.attr", "enum", anything, attr_attr),
        ("runtime:cudaDeviceGetAttribute.device", "integer", anything, attr_device),
        ("runtime:cudaMalloc.size", "integer", anything, malloc),
        ("runtime:cudaPointerGetAttributes.ptr", "pointer", anything, pointer_attributes),
        ("runtime:cudaStreamCreateWithFlags.flags", "integer", anything, stream_create),
        ("runtime:cudaEventCreateWithFlags.flags", "integer", anything, event_create),
        ("runtime:cudaStreamQuery.stream", "handle", safe, stream_query),
        ("runtime:cudaMemset.value", "integer", anything, memset_value),
        ("runtime:cudaMemset.devPtr", "pointer", safe, memset_ptr),
        ("runtime:cudaMemcpy.src", "buffer", buffers, memcpy_src),
        ("runtime:cudaGetDeviceProperties.device", "integer", anything, device_properties),
        ("runtime:cudaKernelSetAttributeForDevice.kernel", "handle", cc.null_handle,
         kernel_attribute(0)),
        ("runtime:cudaKernelSetAttributeForDevice.attr", "enum", anything, kernel_attribute(1)),
        ("runtime:cudaKernelSetAttributeForDevice.value", "integer", anything, kernel_attribute(2)),
        ("runtime:cudaKernelSetAttributeForDevice.device", "integer", anything,
         kernel_attribute(3)),
    ]


def host_func_target(rt, runtimes):
    vals, keep = cc.callable_values(runtimes, "cudaHostFn_t")

    def thunk(ctx, v, keep=keep):
        r = rt.cudaLaunchHostFunc(0, v, 0)
        rt.cudaDeviceSynchronize()
        return [cc.status(r)]
    return ("runtime:cudaLaunchHostFunc.fn", "callable", vals, thunk)


def function_targets(rt, drv, common, extra_handles, device=True):
    """[(target, kind, setup, [(label, factory)], thunk)] of the runtime's
    allowlist; common: the probe values, extra_handles: every handle of
    both families' runtime and driver modules (for handle parameters);
    device: set up on device 0, else deviceless_setup."""
    setup = runtime_setup(rt, drv) if device else deviceless_setup(rt, drv)
    out = []
    runtimes = cc.family_modules("runtime")
    for target, kind, filt, thunk in runtime_functions(rt, drv):
        vals = common + extra_handles if kind in ("handle", "pointer") else common
        if filt is not None:
            vals = [(l, f) for l, f in vals if filt(l, f)]
        out.append((target, kind, setup, vals, thunk))
    target, kind, vals, thunk = host_func_target(rt, runtimes)
    out.append((target, kind, setup, vals, thunk))
    return out
