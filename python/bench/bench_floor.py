"""What the Python rows of the performance table are made of: each row's
usmbridge time beside the pieces it is built from, timed in alternating
rounds in one process (best round each), and the differences that are
usmbridge's own cost.

    python python/bench/bench_floor.py [--part PART ...] [--rounds N] [--number N]

scripts/bench.sh runs it after the table (one process per part, for the
rows that ran), with the environment it sets for bench.py
(USMBRIDGE_LIB, USMBRIDGE_BENCH_DIR). The parts:

- from_dlpack: usmbridge.from_dlpack(numpy array) beside numpy.from_dlpack
  and the two calls the consumer makes of the producer, __dlpack_device__
  (DLPack's from_dlpack asks it to choose the stream; usmbridge must pass
  a kDLOneAPI producer its queue, so only a host producer takes C's path)
  and __dlpack__(max_version=...). Also the cost of one call into Go: a C
  function of usmbridge._ext (_fork_skips) beside a Go one that does
  nothing (_enter_go).
- f_numpy: benchmod.f(numpy array) beside its pieces: a call of a C
  function (capipeer.nothing), the buffer protocol (capipeer.f: get the
  buffer, check it, release it), one call of a Go function
  (benchmod.nothing); the rest is pyext's work on the array argument.
- f_dpnp: benchmod.f(dpnp array) beside dpnp's __sycl_usm_array_interface__
  (which f reads: the protocol), __dlpack__ and __dlpack_device__, and
  f_usm (the same with Memory(AnyUSM)).
- asarray: usmbridge.asarray(dpnp array) beside dpnp.asarray(x) (which
  reads no interface) and the property usmbridge.asarray must read.

A part runs in a process of its own, so that only one Go runtime is loaded
(usmbridge._ext or benchmod).
"""
import argparse
import os
import subprocess
import sys
import timeit

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.environ.get("USMBRIDGE_BENCH_DIR", os.path.join(root, ".cache", "bench")))

PARTS = ["from_dlpack", "f_numpy", "f_dpnp", "asarray"]


def timed(parts, rounds, number):
    """Best time per call of each part (ns), in alternating rounds; prints them."""
    for _, fn in parts:
        fn()  # warm up; also proves each piece works
    best = {name: float("inf") for name, _ in parts}
    for _ in range(rounds):
        for name, fn in parts:
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number * 1e9)
    for name, _ in parts:
        line(name, best[name])
    return best


def line(name, ns, extra=""):
    print("%-46s %8.0f ns%s" % (name, ns, extra))


def _dpnp_array():
    import dpctl
    import dpnp
    q = dpctl.SyclQueue("opencl:cpu")
    return dpnp.arange(1024, dtype="f4", sycl_queue=q)


def part_from_dlpack(rounds, number):
    import numpy as np

    import usmbridge as ub
    x = np.arange(1024, dtype=np.float32)
    mv = (1, 1)
    best = timed([
        ("numpy.from_dlpack(x)", lambda: np.from_dlpack(x)),
        ("x.__dlpack__(max_version=(1, 1))", lambda: x.__dlpack__(max_version=mv)),
        ("x.__dlpack_device__()", lambda: x.__dlpack_device__()),
        ("usmbridge.from_dlpack(x)", lambda: ub.from_dlpack(x)),
        ("C function of usmbridge._ext (_fork_skips)", ub._fork_skips),
        ("Go function of usmbridge._ext (_enter_go)", ub._enter_go),
    ], rounds, number)
    ours, numpy_ns = best["usmbridge.from_dlpack(x)"], best["numpy.from_dlpack(x)"]
    calls = best["x.__dlpack__(max_version=(1, 1))"] + best["x.__dlpack_device__()"]
    line("usmbridge's own: - __dlpack__ - device call", ours - calls)
    line("numpy's own: - __dlpack__", numpy_ns - best["x.__dlpack__(max_version=(1, 1))"])
    line("one call into Go, over a C call", best["Go function of usmbridge._ext (_enter_go)"] -
         best["C function of usmbridge._ext (_fork_skips)"])
    print("ratio usmbridge / numpy: %.2f" % (ours / numpy_ns))


def part_f_numpy(rounds, number):
    import benchmod
    import capipeer
    import nbpeer
    import numpy as np
    x = np.arange(1024, dtype=np.float32)
    mv = (1, 1)
    best = timed([
        ("C function, no argument (capipeer.nothing)", capipeer.nothing),
        ("C-API f(x): buffer protocol (capipeer.f)", lambda: capipeer.f(x)),
        ("x.__dlpack__(max_version=(1, 1))", lambda: x.__dlpack__(max_version=mv)),
        ("nanobind f(x) (nbpeer.f)", lambda: nbpeer.f(x)),
        ("Go function, no argument (benchmod.nothing)", benchmod.nothing),
        ("Go f(x) (benchmod.f)", lambda: benchmod.f(x)),
    ], rounds, number)
    c_call = best["C function, no argument (capipeer.nothing)"]
    buffer = best["C-API f(x): buffer protocol (capipeer.f)"] - c_call
    go_call = best["Go function, no argument (benchmod.nothing)"] - c_call
    ours = best["Go f(x) (benchmod.f)"]
    line("buffer protocol: C-API f - C call", buffer)
    line("one call of a Go function, over a C call", go_call)
    line("the array argument: f - Go call - buffer", ours - best["Go function, no argument (benchmod.nothing)"] - buffer)
    line("usmbridge's own: f - C-API f", ours - best["C-API f(x): buffer protocol (capipeer.f)"])
    print("ratio usmbridge / nanobind: %.2f; usmbridge / C-API: %.2f" % (
        ours / best["nanobind f(x) (nbpeer.f)"], ours / best["C-API f(x): buffer protocol (capipeer.f)"]))


def part_f_dpnp(rounds, number):
    import benchmod
    x = _dpnp_array()
    mv = (1, 1)
    best = timed([
        ("x.__sycl_usm_array_interface__", lambda: x.__sycl_usm_array_interface__),
        ("x.__dlpack__(max_version=(1, 1))", lambda: x.__dlpack__(max_version=mv)),
        ("x.__dlpack_device__()", lambda: x.__dlpack_device__()),
        ("Go function, no argument (benchmod.nothing)", benchmod.nothing),
        ("Go f(x) (benchmod.f)", lambda: benchmod.f(x)),
        ("Go f_usm(x), Memory(AnyUSM) (benchmod.f_usm)", lambda: benchmod.f_usm(x)),
    ], rounds, number)
    ours, prop = best["Go f(x) (benchmod.f)"], best["x.__sycl_usm_array_interface__"]
    own = ours - prop
    line("usmbridge's own: f - dpnp's property", own, " (%.2f µs; target <= 1 µs)" % (own / 1e3))
    line("the same, less one call of a Go function", own - best["Go function, no argument (benchmod.nothing)"])
    line("f_usm - f (the Memory constraint)", best["Go f_usm(x), Memory(AnyUSM) (benchmod.f_usm)"] - ours)
    print("ratio usmbridge / dpnp's property: %.2f; usmbridge / __dlpack__: %.2f" % (
        ours / prop, ours / best["x.__dlpack__(max_version=(1, 1))"]))


def part_asarray(rounds, number):
    import dpnp

    import usmbridge as ub
    x = _dpnp_array()
    best = timed([
        ("dpnp.asarray(x)", lambda: dpnp.asarray(x)),
        ("x.__sycl_usm_array_interface__", lambda: x.__sycl_usm_array_interface__),
        ("usmbridge.asarray(x)", lambda: ub.asarray(x)),
    ], rounds, number)
    ours = best["usmbridge.asarray(x)"]
    own = ours - best["x.__sycl_usm_array_interface__"]
    line("usmbridge's own: - dpnp's property", own)
    print("ratio usmbridge / dpnp: %.2f; without dpnp's property: %.2f" % (
        ours / best["dpnp.asarray(x)"], own / best["dpnp.asarray(x)"]))


RUN = {"from_dlpack": part_from_dlpack, "f_numpy": part_f_numpy, "f_dpnp": part_f_dpnp, "asarray": part_asarray}
# Calls per round: the dpnp parts' calls take microseconds.
NUMBER = {"from_dlpack": 200000, "f_numpy": 200000, "f_dpnp": 10000, "asarray": 10000}


def main(argv):
    ap = argparse.ArgumentParser(prog="bench_floor.py", description="The performance table's rows, piece by piece.")
    ap.add_argument("--part", nargs="+", choices=PARTS, default=PARTS)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, help="calls per round (default: per part)")
    a = ap.parse_args(argv)
    if len(a.part) > 1:  # one process per part
        status = 0
        for i, part in enumerate(a.part):
            if i:
                print()
            print("%s:" % part)
            sys.stdout.flush()
            cmd = [sys.executable, os.path.abspath(__file__), "--part", part, "--rounds", str(a.rounds)]
            status |= subprocess.run(cmd + (["--number", str(a.number)] if a.number else [])).returncode
        return status
    part = a.part[0]
    RUN[part](a.rounds, a.number or NUMBER[part])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
