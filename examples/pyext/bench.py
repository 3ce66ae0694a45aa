"""Side-by-side per-array costs: usmbridge against dpctl/dpnp and numpy.

    USMBRIDGE_LIB=... OCL_ICD_VENDORS=... python examples/pyext/bench.py

Rows (ratio = usmbridge / peer; ≤ 1.0 means usmbridge is not slower):
 a. dpnp.tensor __dlpack__ + from_dlpack   vs  usmbridge.from_dlpack + __dlpack__
 b. dpctl.memory.as_usm_memory(x)          vs  usmbridge.asarray(x)
 c. numpy.from_dlpack(numpy array)         vs  numpy.from_dlpack(usmbridge array)
"""
import os, sys, timeit
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import dpctl, dpctl.memory
import dpnp.tensor as dpt
import usmbridge as ub

q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(1024, dtype="f4", sycl_queue=q)
h = np.arange(1024, dtype=np.float32)
ours_dev = ub.from_dlpack(x)
ours_host = ub.from_dlpack(h)


class Cap:
    def __init__(self, a):
        self.a = a
    def __dlpack__(self, **kw):
        return self.a.__dlpack__(max_version=(1, 0))
    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


rows = [
    ("a. DLPack in+out of a dpnp array", lambda: dpt.from_dlpack(Cap(x)), lambda: ub.from_dlpack(x).__dlpack__(max_version=(1, 0))),
    ("b. SUAI ingest of a dpnp array", lambda: dpctl.memory.as_usm_memory(x), lambda: ub.asarray(x)),
    ("c. numpy.from_dlpack", lambda: np.from_dlpack(h), lambda: np.from_dlpack(ours_host)),
]


def per_call(fn, n=20000):
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


print("| row | peer µs | usmbridge µs | ratio |")
print("|---|---:|---:|---:|")
for name, peer, ours in rows:
    p, o = per_call(peer), per_call(ours)
    print("| %s | %.2f | %.2f | %.2f |" % (name, p, o, o / p))
