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
- a C function of the extension that stays in C (usmbridge._fork_skips),
  and one that enters Go and does nothing (usmbridge._enter_go): their
  difference is the floor of any call into Go;
- usmbridge.from_dlpack(x), whole.

NumPy's import, the device call and one call into Go are this design's
floor; the rest of usmbridge's time is Go's import rules (dlpack.Import,
BenchmarkImportHostReuse), its array's state, and the C object.

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
    mv = (1, 1)
    parts = [
        ("numpy.from_dlpack(x)", lambda: np.from_dlpack(x)),
        ("x.__dlpack__(max_version=...)", lambda: x.__dlpack__(max_version=mv)),
        ("x.__dlpack_device__()", lambda: x.__dlpack_device__()),
        ("C call, stays in C", ub._fork_skips),
        ("C call, enters Go once", ub._enter_go),
        ("usmbridge.from_dlpack(x)", lambda: ub.from_dlpack(x)),
    ]
    best = timed(parts, args.rounds, args.number)
    go = best["C call, enters Go once"] - best["C call, stays in C"]
    rest = best["usmbridge.from_dlpack(x)"] - best["numpy.from_dlpack(x)"] - best["x.__dlpack_device__()"] - go
    floor = best["numpy.from_dlpack(x)"] + best["x.__dlpack_device__()"] + go
    print("%-34s %7.0f ns" % ("one call into Go, over a C call", go))
    print("%-34s %7.0f ns (%.2f of numpy)" % ("floor: numpy + device + Go call", floor, floor / best["numpy.from_dlpack(x)"]))
    print("%-34s %7.0f ns" % ("usmbridge - floor", rest))
    print("ratio usmbridge / numpy: %.2f" % (best["usmbridge.from_dlpack(x)"] / best["numpy.from_dlpack(x)"]))
    asarray_parts(args.rounds, args.number)


if __name__ == "__main__":
    main()
