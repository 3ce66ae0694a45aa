"""Side-by-side per-array costs: usmbridge against dpctl/dpnp and numpy.

    USMBRIDGE_LIB=... OCL_ICD_VENDORS=... python python/bench/bench.py

Rows (ratio = usmbridge / peer; <= 1.0 means usmbridge is not slower):
 a.  dpnp.tensor __dlpack__ + from_dlpack  vs  usmbridge.from_dlpack + __dlpack__
 b.  dpctl.memory.as_usm_memory(x)         vs  usmbridge.asarray(x)
 b'. the same from Go (embedded Python): g.Call(as_usm_memory, x) vs g.AsArray(x),
     measured by `go test -bench SUAIIngest ./pybridge` (skipped without go)
 c.  numpy.from_dlpack(numpy array)        vs  numpy.from_dlpack(usmbridge array)
Peer and usmbridge are timed in alternating rounds; each keeps its best.
"""
import os, re, shutil, subprocess, sys, timeit
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import numpy as np
import dpctl, dpctl.memory
import dpnp.tensor as dpt
import usmbridge as ub

q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(1024, dtype="f4", sycl_queue=q)
h = np.arange(1024, dtype=np.float32)
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


def side_by_side(peer, ours, n=20000, rounds=7):
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for i, fn in enumerate((peer, ours)):
            best[i] = min(best[i], timeit.timeit(fn, number=n) / n * 1e6)
    return best


def go_embed_row():
    """Row b' from Go's benchmark, which times both sides in one process."""
    root = os.path.abspath(os.path.join(here, "..", ".."))
    if shutil.which("go") is None:
        return None
    out = subprocess.run(["go", "test", "-run", "^$", "-bench", "SUAIIngest", "-benchtime", "20000x", "-count", "3",
                          "./pybridge"], cwd=root, capture_output=True, text=True)
    times = {}
    for name, ns in re.findall(r"SUAIIngest/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op", out.stdout):
        times[name] = min(times.get(name, float("inf")), float(ns) / 1000)
    if len(times) != 2:
        print("(Go embed row skipped: %s)" % (out.stderr.strip().splitlines() or ["no benchmark output"])[-1], file=sys.stderr)
        return None
    return ("b'. SUAI ingest from Go (embedded)", times["dpctl.memory.as_usm_memory"], times["usmbridge.AsArray"])


print("| row | peer µs | usmbridge µs | ratio |")
print("|---|---:|---:|---:|")
results = [(name,) + tuple(side_by_side(peer, ours)) for name, peer, ours in rows]
g = go_embed_row()
if g:
    results.insert(2, g)
for name, p, o in results:
    print("| %s | %.2f | %.2f | %.2f |" % (name, p, o, o / p))
