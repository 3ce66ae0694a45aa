"""__dlpack__(stream=queue) with work pending on the array's queue.

    USMBRIDGE_LIB=... OCL_ICD_VENDORS=... python python/bench/bench_ordering.py

The producer's queue gets a copy of SIZE bytes of shared USM (the pending
work), then the array is handed over in one of three ways, in alternating
rounds; each keeps its best round:

  device order  usmbridge: a.__dlpack__(stream=c): c is ordered after the
                producer on the device and the call returns at once;
  host wait     usmbridge: a.__dlpack__() (stream=None), which waits on the
                producer's queue: what __dlpack__(stream=c) did before;
  dpnp          dpnp's own x.__dlpack__(stream=c) (a barrier pair), the
                peer, on the same memory and queues.

"hand-off" is the time the call takes, "pending work" the copy alone
(submit, then wait). Ratios are hand-off / pending work.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dpctl
import dpctl.memory as dm
import dpnp.tensor as dpt
import numpy as np
import usmbridge as ub

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
SIZE = int(os.environ.get("BENCH_MIB", "64")) << 20

p = dpctl.SyclQueue("opencl:cpu", property="in_order")
c = dpctl.SyclQueue(p.sycl_context, p.sycl_device, property="in_order")  # out of order: host wait
src = dm.MemoryUSMShared(SIZE, queue=p)
dst = dm.MemoryUSMShared(SIZE, queue=p)
np.asarray(src)[:] = 1
np.asarray(dst)[:] = 0
a = ub.asarray(dst)
x = dpt.usm_ndarray((SIZE,), "u1", buffer=dst)


def one(mode):
    p.memcpy_async(dst, src, SIZE)
    t0 = time.perf_counter()
    if mode == "device order":
        cap = a.__dlpack__(stream=c, max_version=(1, 0))
    elif mode == "host wait":
        cap = a.__dlpack__(max_version=(1, 0))
    elif mode == "dpnp":
        cap = x.__dlpack__(stream=c, max_version=(1, 0))
    else:  # the pending work alone
        cap = None
        p.wait()
    t1 = time.perf_counter()
    p.wait()
    c.wait()
    del cap
    return t1 - t0


modes = ["pending work", "device order", "host wait", "dpnp"]
best = {m: float("inf") for m in modes}
for m in modes:  # warm up
    one(m)
for _ in range(ROUNDS):
    for m in modes:
        best[m] = min(best[m], one(m))
work = best["pending work"]
print("pending work: copy of %d MiB of shared USM on %s, best of %d rounds" % (SIZE >> 20, p.sycl_device.name, ROUNDS))
print("%-14s %12s %10s" % ("hand-off", "time", "/ work"))
for m in modes:
    print("%-14s %10.1f us %10.4f" % (m, best[m] * 1e6, best[m] / work))
