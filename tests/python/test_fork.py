# SPDX-License-Identifier: Apache-2.0
"""fork() after cubind ran Python callbacks (issue 4's "no hang"): the
child must not inherit a runtime lock held by a thread it does not have, nor
wait at exit for a callback runner that is not in it
(runtime/process/rt_callbacks.h: rt_cb_fork_*, registered by cubind._runtime).

Each scenario runs in a fresh interpreter (tests/python/conftest.py
run_python) that forks and reaps its children with a deadline: a child
still running after it is killed and reported as hung."""
import textwrap

from conftest import run_python

PRELUDE = textwrap.dedent("""
    import ctypes, os, signal, sys, threading, time
    import cubind.driver as drv

    drv.cuInit(0)
    dev = drv.cuDeviceGet(0)[1]
    ctx = drv.cuDevicePrimaryCtxRetain(dev)[1]
    assert drv.cuCtxSetCurrent(ctx)[0] == 0

    def reap(pid, seconds=20):
        '''The child's exit status, or 'hung' (then killed).'''
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return "hung"

    def host_call(fn, data):
        '''fn(data) as a host function on the null stream, run to completion.'''
        assert drv.cuLaunchHostFunc(None, fn, data)[0] == 0
        assert drv.cuCtxSynchronize()[0] == 0
""")


def run(body):
    r = run_python(PRELUDE + textwrap.dedent(body))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_child_exits_after_the_parent_ran_python_callbacks():
    out = run("""
        hits = []
        host_call(hits.append, 1)
        assert hits == [1]              # the runner thread exists now
        pid = os.fork()
        if pid == 0:
            # cubind still answers in the child; its exit runs cubind's
            # shutdown steps (threading hook, atexit), which must not wait
            # for the parent's runner.
            ok = drv.cuDeviceGet(0)[0] == 0
            sys.exit(0 if ok else 3)
        print("child:", reap(pid))
        # the parent's runner is untouched by the fork
        host_call(hits.append, 2)
        print("parent:", hits)
    """)
    assert "child: 0" in out, out
    assert "parent: [1, 2]" in out, out


def test_fork_while_callbacks_fire_and_the_registry_is_busy():
    # Another thread keeps host functions coming (the fake driver calls
    # them from its own threads, the runner runs them) and registry-backed
    # launches going (each looks its kernel's layout up under a shard lock),
    # while this thread forks 30 times; every child takes every registry
    # lock (the registry counts) and exits, half through sys.exit (cubind's
    # shutdown steps run), half through os._exit. The child calls no
    # driver: a driver is not usable after fork (CUDA's rule, and the fake
    # driver's threads are not in the child either).
    out = run("""
        import cubind._runtime as rt
        from fake_driver import open_fake
        lib = open_fake()
        offs = (ctypes.c_size_t * 2)(0, 8)
        sizes = (ctypes.c_size_t * 2)(8, 4)
        assert lib.fakecuda_set_param_layout(None, b"fork_k", 2, offs, sizes) == 0
        mod = drv.cuModuleLoadData(b"fake image for fork_k\\0")[1]
        # launched by its int value: a CUfunction object would serve its
        # own copy of the layout after the first launch, without the lock
        f = int(drv.cuModuleGetFunction(mod, b"fork_k")[1])
        hits = []
        stop = threading.Event()
        launched = [0]

        def churn():
            drv.cuCtxSetCurrent(ctx)
            while not stop.is_set():
                assert drv.cuLaunchHostFunc(None, hits.append, 1)[0] == 0
                assert drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (0x1000, 7), None)[0] == 0
                launched[0] += 1
                # as a stream would: the next launch after this one ran (the
                # fake driver fires at once; without this, millions queue up)
                assert drv.cuCtxSynchronize()[0] == 0

        t = threading.Thread(target=churn)
        t.start()
        statuses = []
        for i in range(30):
            time.sleep(0.005)
            pid = os.fork()
            if pid == 0:
                counts = rt._registry_counts()
                ok = counts["kernel_layout"] >= 1
                if i % 2:
                    os._exit(0 if ok else 3)
                sys.exit(0 if ok else 3)
            statuses.append(reap(pid))
        stop.set()
        t.join()
        assert drv.cuCtxSynchronize()[0] == 0
        deadline = time.monotonic() + 20
        while len(hits) < launched[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        print("statuses:", sorted(set(statuses), key=str))
        print("parent callbacks:", len(hits) == launched[0], launched[0] > 0)
    """)
    assert "statuses: [0]" in out, out
    assert "parent callbacks: True True" in out, out


def test_fork_inside_a_python_callback():
    # A host function forks: the child's one thread is the callback runner,
    # inside the callable. When the callable returns there, the runner must
    # end (and the child with it) rather than wait for requests that no
    # driver thread will make.
    out = run("""
        pids = []

        def forker(data):
            pid = os.fork()
            pids.append(pid)     # in the child: 0, then the callable returns

        host_call(forker, None)
        assert len(pids) == 1 and pids[0] > 0
        print("child:", reap(pids[0]))
        hits = []
        host_call(hits.append, 3)
        print("parent:", hits)
    """)
    assert "child: 0" in out, out
    assert "parent: [3]" in out, out


def test_child_does_not_run_the_parents_queued_destructors():
    # A user object's destructor queued (the driver released the object)
    # while the runner is busy, then a fork: the destructor is the parent's
    # work. It runs once, in the parent; the child forgets it. The main
    # thread waits inside cuCtxSynchronize meanwhile (for the busy host
    # function), running no bytecode, so the pending call that also drains
    # the main interpreter's queue cannot run before the fork: a second
    # thread, once the main thread is in that call, queues the destructor
    # and forks.
    out = run("""
        import cubind._runtime as rt
        gate = threading.Event()
        started = threading.Event()
        ran = []
        result = {}

        def busy(data):          # holds the runner until the fork is done
            started.set()
            gate.wait(20)

        from fake_driver import open_fake
        lib = open_fake()
        syncs = lib.fakecuda_call_count(b"cuCtxSynchronize")

        def forker():
            try:
                deadline = time.monotonic() + 20
                while lib.fakecuda_call_count(b"cuCtxSynchronize") == syncs:
                    assert time.monotonic() < deadline
                    time.sleep(0.001)
                err, uo = drv.cuUserObjectCreate(7, lambda p: ran.append((os.getpid(), p)), 1, 1)
                assert err == 0
                assert drv.cuUserObjectRelease(uo, 1)[0] == 0
                # the fake driver calls the destructor trampoline on its own
                # thread: once it returned, the call is queued (the runner is
                # busy, the main thread blocked)
                deadline = time.monotonic() + 20
                while lib.fakecuda_pending_destructors() and time.monotonic() < deadline:
                    time.sleep(0.001)
                result["queued"] = not ran
                pid = os.fork()
                if pid == 0:
                    # cubind calls drain queued work
                    drv.cuDriverGetVersion()
                    sys.stdout.write("child ran %r leaked %d\\n" % (ran, rt._callback_counts()["leaked"]))
                    sys.stdout.flush()
                    os._exit(0)
                result["status"] = reap(pid)
            finally:
                gate.set()

        assert drv.cuLaunchHostFunc(None, busy, None)[0] == 0
        assert started.wait(20)
        t = threading.Thread(target=forker)
        t.start()
        assert drv.cuCtxSynchronize()[0] == 0    # returns once the forker set the gate
        t.join()
        deadline = time.monotonic() + 20
        while not ran and time.monotonic() < deadline:
            drv.cuDriverGetVersion()
            time.sleep(0.01)
        print("queued before the fork:", result.get("queued"))
        print("child:", result.get("status"))
        print("parent ran:", ran == [(os.getpid(), 7)])
    """)
    assert "queued before the fork: True" in out, out
    assert "child: 0" in out, out
    assert "child ran [] leaked 1" in out, out
    assert "parent ran: True" in out, out
