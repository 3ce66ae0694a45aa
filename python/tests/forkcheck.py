"""Fork scenarios for test_fork.py, each run in a fresh interpreter:

    python forkcheck.py SCENARIO

It prints what it saw and exits 0 when the scenario behaved as the fork
rule says (docs/python.md, "fork"), non-zero otherwise. Children that hang are
killed after CHILD_TIMEOUT seconds and reported as a failure.
"""
import gc
import multiprocessing as mp
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np
import usmbridge as ub  # loads nothing yet: the library is loaded on first use

ROUNDS = int(os.environ.get("UB_FORK_ROUNDS", "2000"))
CHILD_TIMEOUT = float(os.environ.get("UB_FORK_CHILD_TIMEOUT", "120"))
DROPS = int(os.environ.get("UB_FORK_DROPS", "3000"))

class GoCapsule:
    """A producer whose capsule Go made (copy=True leaves the C fast path)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(copy=True, max_version=(1, 0))

    def __dlpack_device__(self):
        return (1, 0)


def parent_objects():
    """Objects made in the parent whose release would enter Go, by every
    route: Array deallocation, capsule destructors (C and Go), deleters a
    consumer calls (C fast path and Go)."""
    import dpctl
    import dpnp.tensor as dpt

    q = dpctl.SyclQueue("opencl:cpu")
    x = dpt.arange(8, dtype="f4", sycl_queue=q)
    host = ub.from_dlpack(np.arange(8.0))
    usm = ub.asarray(x)
    assert usm.shape == (8,) and host.shape == (8,)
    drop = [
        host,
        usm,
        ub.from_dlpack(GoCapsule(ub.from_dlpack(np.arange(3.0)))),  # a Go tensor imported by Go
        host.__dlpack__(),  # C fast-path capsule
        np.from_dlpack(ub.from_dlpack(np.arange(4.0))),  # numpy holds a C fast-path tensor
    ]
    # Many of each release that a Go callback performs, since entering the
    # Go runtime in a child may hang only after a few thousand entries.
    for _ in range(DROPS):
        drop.append(host.__dlpack__(max_version=(1, 0), copy=True))  # Go capsule: gated destructor
        drop.append(np.from_dlpack(GoCapsule(host)))  # numpy holds a Go tensor: gated deleter
        held = ub.from_dlpack(np.arange(2.0), copy=True)  # Go made the copy: an Array with Go state
        assert held.shape == (2,)
        drop.append(held)  # its dealloc skips Go
    # Arrays C imported (host memory, no Go state): in a child their
    # deallocator calls numpy's deleter, which needs no Go.
    src = np.arange(6.0)
    pending = [ub.from_dlpack(src) for _ in range(DROPS)]
    # dpctl is not fork-safe either: its objects are never dropped in a child.
    return {"keep": [q, x], "drop": drop, "x": x, "src": src, "pending": pending}


def _exchange(fn, arr):
    """Calls a function of usmbridge.Array's DLPack C exchange table as a C
    consumer would (with the GIL; an exception left set is raised)."""
    import ctypes
    table = (ctypes.c_void_p * 7).from_address(type(arr).__c_dlpack_exchange_api__)
    out = ctypes.c_void_p()
    if fn == "from_py":
        f = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(table[3])
        return f(arr, ctypes.byref(out))
    f = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(table[6])
    return f(1, 0, ctypes.byref(out))  # kDLCPU: Go would answer NULL, if it were entered


def use_in_forked_child(objs):
    """Every entry point, ROUNDS times; each must raise ForkError. Then drop
    what the parent made. Returns a list of problems."""
    problems = []
    host, usm = objs["drop"][0], objs["drop"][1]
    calls = [
        ("asarray", lambda: ub.asarray(objs["x"])),
        ("from_dlpack", lambda: ub.from_dlpack(np.arange(2.0))),
        ("_stats", lambda: ub._stats()),
        ("_inject_panic", lambda: ub._inject_panic("ub_stats")),
        ("__dlpack__", lambda: host.__dlpack__()),
        ("__dlpack__(copy=True)", lambda: host.__dlpack__(copy=True)),
        ("__dlpack_device__", lambda: usm.__dlpack_device__()),
        ("__sycl_usm_array_interface__", lambda: usm.__sycl_usm_array_interface__),
        ("repr", lambda: repr(host)),
        ("numpy.from_dlpack", lambda: np.from_dlpack(host)),
        ("exchange API from_py", lambda: _exchange("from_py", host)),
        ("exchange API stream", lambda: _exchange("stream", usm)),
    ] + [(p, (lambda p=p: getattr(usm, p))) for p in
         ("shape", "dtype", "strides", "offset", "usm_type", "device", "data", "readonly")]
    for _ in range(ROUNDS):
        for what, fn in calls:
            try:
                fn()
            except ub.ForkError as e:
                if "'spawn'" not in str(e) or "'forkserver'" not in str(e):
                    problems.append("%s: unclear message: %s" % (what, e))
            except BaseException as e:
                problems.append("%s: %s: %s" % (what, type(e).__name__, e))
            else:
                problems.append("%s: no error" % what)
        if problems:
            return problems
    n = len(objs["drop"])
    skips = ub._fork_skips()
    objs["drop"].clear()
    gc.collect()
    skipped = ub._fork_skips() - skips
    print("child: dropped %d objects made in the parent; %d releases skipped Go" % (n, skipped), flush=True)
    if skipped < 3 * DROPS:  # each round: a Go capsule, a Go tensor in numpy, an Array
        problems.append("only %d releases were kept out of Go" % skipped)
    r0 = sys.getrefcount(objs["src"])
    objs["pending"].clear()
    gc.collect()
    released = r0 - sys.getrefcount(objs["src"])
    print("child: %d arrays Go never saw released numpy's memory" % released, flush=True)
    if released < DROPS:
        problems.append("only %d of %d arrays Go never saw released numpy's memory" % (released, DROPS))
    return problems


def forked_child_main(objs):
    problems = use_in_forked_child(objs)
    for p in problems:
        print("child:", p, flush=True)
    if not problems:
        print("child: %d rounds, every call raised ForkError" % ROUNDS, flush=True)
    return 1 if problems else 0


def mp_fork_target(objs):
    sys.exit(forked_child_main(objs))


def wait_pid(pid):
    deadline = time.monotonic() + CHILD_TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def join(p):
    p.join(CHILD_TIMEOUT)
    if p.is_alive():
        p.kill()
        p.join()
        return "hung"
    return p.exitcode


def check_parent_still_works():
    for _ in range(100):
        a = ub.from_dlpack(np.arange(5.0))
        assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert ub._stats()["panics"] == 0


def worker(n):
    """Work in a spawn/forkserver worker: round trips that must succeed."""
    total = 0.0
    for _ in range(200):
        a = ub.from_dlpack(np.arange(float(n)))
        total = float(np.from_dlpack(a).sum())
    return total


def worker_expect_fork_error(_):
    try:
        ub.from_dlpack(np.zeros(1))
    except ub.ForkError as e:
        return "ForkError: " + str(e)
    return "no error"


def pool_run(method, fn, args, preload=None):
    ctx = mp.get_context(method)
    if preload is not None:
        ctx.set_forkserver_preload(preload)
    with ctx.Pool(2) as pool:
        res = pool.map_async(fn, args)
        return res.get(CHILD_TIMEOUT)


def main(scenario):
    if scenario in ("mp-fork", "os-fork"):
        objs = parent_objects()
        for _ in range(1000):  # the parent's Go runtime is busy before the fork
            np.from_dlpack(GoCapsule(ub.from_dlpack(np.arange(3.0))))
        if scenario == "mp-fork":
            p = mp.get_context("fork").Process(target=mp_fork_target, args=(objs,))
            p.start()
            code = join(p)
        else:
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = forked_child_main(objs)
                finally:
                    os._exit(code)
            code = wait_pid(pid)
        print("parent: child exit", code)
        check_parent_still_works()
        return 0 if code == 0 else 1
    if scenario in ("spawn", "forkserver"):
        ub.from_dlpack(np.zeros(1))  # the parent uses usmbridge too
        got = pool_run(scenario, worker, [4, 5, 6])
        print("parent: workers returned", got)
        check_parent_still_works()
        return 0 if got == [6.0, 10.0, 15.0] else 1
    if scenario == "forkserver-preloaded":
        # The server preloads a module that uses usmbridge while being
        # imported (as a main module that does so is preloaded from 3.13
        # on): its workers are forked from a process running Go.
        got = pool_run("forkserver", worker_expect_fork_error, [0, 1], preload=["forkpreload"])
        print("parent: workers returned", got)
        return 0 if all(g.startswith("ForkError") and "'spawn'" in g for g in got) else 1
    print("unknown scenario", scenario)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
