"""Child process of test_ordering.py: one hand-off with work pending on the
producer's queue, printed as JSON. Run in a child with a timeout because a
hand-off that waits on the host would block forever: the pending work only
completes when this script says so, after the hand-off returned.

    orderingcheck.py SCENARIO CONSUMER   (CONSUMER: in_order | out_of_order)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402
import dpctl
import dpctl.memory as dm
import dpnp.tensor as dpt
import usmbridge as ub

from pending import Pending

N = 1 << 16


class Wrapper:
    """A DLPack producer that forwards to a dpnp array and has no
    sycl_queue attribute of its own."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def queues(consumer):
    p = dpctl.SyclQueue("opencl:cpu", property="in_order")
    props = ["in_order"] if consumer == "in_order" else []
    c = dpctl.SyclQueue(p.sycl_context, p.sycl_device, property=props)
    assert c.is_in_order == (consumer == "in_order")
    return p, c


def main(scenario, consumer):
    p, c = queues(consumer)
    mem = dm.MemoryUSMShared(N * 4, queue=p)
    src = dm.MemoryUSMShared(N * 4, queue=p)
    np.asarray(src).view("f4")[:] = 7
    np.asarray(mem).view("f4")[:] = 0
    a = ub.asarray(mem)  # before the pending work: taking the SUAI waits
    x = dpt.usm_ndarray((N,), "f4", buffer=mem)
    pend = Pending(p)
    p.memcpy_async(mem, src, N * 4)  # the producer's result, held back
    keep = []
    t0 = time.perf_counter()
    if scenario == "stream":
        cap = a.__dlpack__(stream=c, max_version=(1, 0))
    elif scenario == "nosync":  # control: nothing orders c after p
        cap = a.__dlpack__(stream=-1, max_version=(1, 0))
    elif scenario == "same_queue":
        cap = a.__dlpack__(stream=p, max_version=(1, 0))
        c = p
    elif scenario in ("import_dpnp", "import_wrapper"):
        # usmbridge as the consumer: from_dlpack passes its own queue as
        # the stream, and the array it made hands that ordering on to c.
        b = ub.from_dlpack(x if scenario == "import_dpnp" else Wrapper(x))
        t1 = time.perf_counter()
        cap = b.__dlpack__(stream=c, max_version=(1, 0))
        keep.append(b)
        handoff = t1 - t0
    else:
        raise SystemExit("unknown scenario " + scenario)
    if not scenario.startswith("import"):
        handoff = time.perf_counter() - t0
    h = np.zeros(N, "f4")
    e = c.memcpy_async(h, mem, N * 4)  # the consumer's next command
    if scenario == "nosync":
        e.wait()  # not held back: it reads before the producer wrote
    before = float(h[0])
    pend.complete()
    e.wait()
    p.wait()
    del cap
    print(json.dumps({"handoff_us": handoff * 1e6, "before": before, "first": float(h[0]),
                      "all_seven": bool((h == 7).all())}))
    sys.stdout.flush()
    os._exit(0)


def kernel(how, producer, consumer):
    """Real work instead of a held-back queue: a dpnp kernel fills the
    array on the producer's queue, the array is handed over (how:
    "stream", or "import": usmbridge.from_dlpack first), and the
    consumer's next command copies it to the host. Prints how many of
    ROUNDS copies read the memory before the fill had finished."""
    props = lambda m: ["in_order"] if m == "in_order" else []
    p = dpctl.SyclQueue("opencl:cpu", property=props(producer))
    c = dpctl.SyclQueue(p.sycl_context, p.sycl_device, property=props(consumer))
    n, stale = 1 << 22, 0
    mem = dpt.empty((n,), dtype="f4", sycl_queue=p)
    view = ub.asarray(mem)  # before the work: taking the SUAI waits
    for _ in range(ROUNDS):
        if how == "import":
            x = dpt.full((n,), 7.0, dtype="f4", sycl_queue=p)
            a = ub.from_dlpack(x)
        else:
            mem[...] = 7.0  # a fill kernel on p, in place
            x, a = mem, view
        cap = a.__dlpack__(stream=c, max_version=(1, 0))
        h = np.zeros(n, "f4")
        c.memcpy_async(h, x.usm_data, n * 4).wait()
        stale += int(not (h == 7).all())
        del cap
        if how != "import":
            mem[...] = 0.0
            p.wait()
    print(json.dumps({"stale": stale, "rounds": ROUNDS}))
    sys.stdout.flush()
    os._exit(0)


ROUNDS = 5


def import_copy(producer):
    """from_dlpack(x, copy=True) of a dpnp array a fill kernel is still
    writing on its queue; the copy is then read through usmbridge's own
    host copy. Prints how many of COPY_ROUNDS copies held anything but the
    fill's value."""
    props = ["in_order"] if producer == "in_order" else []
    p = dpctl.SyclQueue("opencl:cpu", property=props)
    n, stale = 1 << 20, 0
    for _ in range(COPY_ROUNDS):
        x = dpt.full((n,), 7.0, dtype="f4", sycl_queue=p)
        a = ub.from_dlpack(x, copy=True)
        stale += int(not (np.from_dlpack(a, device="cpu") == 7).all())
        p.wait()
    print(json.dumps({"stale": stale, "rounds": COPY_ROUNDS}))
    sys.stdout.flush()
    os._exit(0)


COPY_ROUNDS = 40


def legacy():
    """A pre-2023.12 producer (stream is its only keyword, and it ignores
    it) over memory its sycl_queue is still writing: from_dlpack(copy=True)
    must wait for that queue before it copies. The pending work is
    released from a thread, since this hand-off does wait on the host."""
    import threading

    class Legacy:
        def __init__(self, x):
            self.x, self.sycl_queue = x, x.sycl_queue

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    p = dpctl.SyclQueue("opencl:cpu", property="in_order")
    mem = dm.MemoryUSMShared(N * 4, queue=p)
    src = dm.MemoryUSMShared(N * 4, queue=p)
    np.asarray(src).view("f4")[:] = 7
    np.asarray(mem).view("f4")[:] = 0
    x = dpt.usm_ndarray((N,), "f4", buffer=mem)
    pend = Pending(p)
    p.memcpy_async(mem, src, N * 4)
    threading.Timer(0.5, pend.complete).start()
    b = ub.from_dlpack(Legacy(x), copy=True)
    cap = b.__dlpack__(dl_device=(1, 0), max_version=(1, 0))

    class Caps:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)

    h = np.from_dlpack(Caps())
    print(json.dumps({"all_seven": bool((h == 7).all())}))
    sys.stdout.flush()
    os._exit(0)

if __name__ == "__main__":
    if sys.argv[1] == "legacy":
        legacy()
    if sys.argv[1] == "kernel":
        kernel(*sys.argv[2:5])
    if sys.argv[1] == "import_copy":
        import_copy(sys.argv[2])
    main(*sys.argv[1:3])
