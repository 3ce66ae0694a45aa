"""Where usmbridge.from_dlpack(numpy array) and usmbridge.asarray(dpnp array)
spend their time beside the peer's own.

    USMBRIDGE_LIB=... python python/bench/bench_floor.py [--rounds N]

Times, in alternating rounds in one process (best round each), the pieces
the two imports are made of:

- numpy.from_dlpack(x), the peer, whole;
- x.__dlpack__(max_version=...), which both make;
- x.__dlpack_device__(), which usmbridge makes first (a kDLOneAPI producer
  must be passed the consumer's queue, so the fast path is for host
  producers only, RATIONALE.md "The Python package is an extension module
  with a C half");
- usmbridge.from_dlpack(x), whole: a tensor of a layout Go has accepted
  before, which C imports by replaying Go's decision without entering Go
  (pybridge/ext/ext.h, "Host imports C replays");
- the same for a 5-d array, which Go's table of decisions does not hold,
  so every import enters Go (numpy.from_dlpack of it beside it); and a C
  function of the extension that stays in C (usmbridge._fork_skips) and
  one that enters Go and does nothing (usmbridge._enter_go), whose
  difference is the cost of any call into Go.

NumPy's import and the device call are the floor of the replayed path;
the rest of usmbridge's time is its C object and the comparison with Go's
decisions. On Go's path add one call into Go, Go's import rules
(dlpack.Import, BenchmarkImportHostReuse) and its array's state.

With dpnp present, also asarray of a dpnp array: dpnp.asarray(x) (the peer,
which returns an array over the same memory without reading any
interface), x.__sycl_usm_array_interface__ (dpnp's own property, which
usmbridge.asarray must read: it is the protocol) and usmbridge.asarray(x).
"""
import argparse
import os
import sys
import timeit

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))

import numpy as np  # noqa: E402

import usmbridge as ub  # noqa: E402


def timed(parts, rounds, number):
    """Best time per call of each part, in alternating rounds."""
    best = {name: float("inf") for name, _ in parts}
    for _ in range(rounds):
        for name, fn in parts:
            t = timeit.timeit(fn, number=number) / number * 1e9
            best[name] = min(best[name], t)
    for name, _ in parts:
        print("%-34s %7.0f ns" % (name, best[name]))
    return best


def asarray_parts(rounds, number):
    try:
        import dpctl
        import dpnp
        q = dpctl.SyclQueue("opencl:cpu")
        x = dpnp.arange(1024, dtype="f4", sycl_queue=q)
    except Exception as e:  # no dpnp, no OpenCL CPU device, no USM on it
        print("asarray: skipped (%s: %s)" % (type(e).__name__, e))
        return
    print()
    best = timed([
        ("dpnp.asarray(x)", lambda: dpnp.asarray(x)),
        ("x.__sycl_usm_array_interface__", lambda: x.__sycl_usm_array_interface__),
        ("usmbridge.asarray(x)", lambda: ub.asarray(x)),
    ], rounds, max(1, number // 20))
    ours = best["usmbridge.asarray(x)"]
    own = ours - best["x.__sycl_usm_array_interface__"]
    print("%-34s %7.0f ns" % ("usmbridge - dpnp's property", own))
    print("ratio usmbridge / dpnp: %.2f; without dpnp's property: %.2f" % (ours / best["dpnp.asarray(x)"], own / best["dpnp.asarray(x)"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=200000)
    args = ap.parse_args()
    x = np.arange(1024, dtype=np.float32)
    x5 = np.zeros((2, 2, 2, 2, 2), dtype=np.float32)
    mv = (1, 1)
    parts = [
        ("numpy.from_dlpack(x)", lambda: np.from_dlpack(x)),
        ("x.__dlpack__(max_version=...)", lambda: x.__dlpack__(max_version=mv)),
        ("x.__dlpack_device__()", lambda: x.__dlpack_device__()),
        ("usmbridge.from_dlpack(x)", lambda: ub.from_dlpack(x)),
        ("numpy.from_dlpack(x5)", lambda: np.from_dlpack(x5)),
        ("usmbridge.from_dlpack(x5), Go's", lambda: ub.from_dlpack(x5)),
        ("C call, stays in C", ub._fork_skips),
        ("C call, enters Go once", ub._enter_go),
    ]
    best = timed(parts, args.rounds, args.number)
    numpy_ns, ours = best["numpy.from_dlpack(x)"], best["usmbridge.from_dlpack(x)"]
    floor = numpy_ns + best["x.__dlpack_device__()"]
    print("%-34s %7.0f ns (%.2f of numpy)" % ("floor: numpy + device call", floor, floor / numpy_ns))
    print("%-34s %7.0f ns" % ("usmbridge - floor", ours - floor))
    print("%-34s %7.0f ns" % ("usmbridge's own: - both calls", ours - best["x.__dlpack__(max_version=...)"] - best["x.__dlpack_device__()"]))
    print("%-34s %7.0f ns" % ("numpy's own: - __dlpack__", numpy_ns - best["x.__dlpack__(max_version=...)"]))
    print("ratio usmbridge / numpy: %.2f" % (ours / numpy_ns))
    go = best["C call, enters Go once"] - best["C call, stays in C"]
    print("%-34s %7.0f ns" % ("one call into Go, over a C call", go))
    print("Go's path (x5): ratio %.2f; %.0f ns above numpy + device call + one Go call" % (
        best["usmbridge.from_dlpack(x5), Go's"] / best["numpy.from_dlpack(x5)"],
        best["usmbridge.from_dlpack(x5), Go's"] - best["numpy.from_dlpack(x5)"] - best["x.__dlpack_device__()"] - go))
    asarray_parts(args.rounds, args.number)


if __name__ == "__main__":
    main()
