"""The performance table: every exchange beside its peer, one process per row.

    scripts/bench.sh                  # builds what the rows time, then runs this
    scripts/bench.sh --smoke          # one short round per row (CI: the rows cannot rot)
    scripts/bench.sh ROW...           # only these rows (names as in ROWS below)
    scripts/bench.sh --write PATH     # also write the page (docs/performance.md),
                                      # unless a row's ratio regressed against it

Each row runs in a process of its own (a Python row in `python bench.py
--row NAME`, a Go row as one `go test -bench` run), so no row warms or
pollutes another's caches and allocator. Inside a row usmbridge and its
peers are timed in alternating rounds (usmbridge, peer, peer, usmbridge,
...) and each keeps its best round, so load from other processes hits
every side alike; ratio = usmbridge / peer (<= 1.0: usmbridge is not
slower; for the round-trip row, the 1 GiB cost over the 1 B cost). A
peer can be a floor, the least any implementation can spend: a signed sum
of callables each timed in the alternation like a side (FLOOR). The
first lines name the CPU the numbers belong to and the Go, Python, NumPy
and nanobind that made them. After the table, the rows' times are split
into their pieces (bench_floor.py).

With --write PATH and PATH present, the new ratios are held to the page's
(regressions()): a row with a ratio more than 10% above the page's runs
once more, each side keeping its best of both runs (merge_rounds()); a
(row, peer) whose ratio is still more than 10% above the page's is
printed, the exit status is 1 and PATH is kept as it was, unless
--accept-regressions is given (then PATH is written, and the status does
not count them).

Environment (scripts/bench.sh sets the first three): USMBRIDGE_LIB (the
usmbridge._ext to load), USMBRIDGE_BENCH_DIR (where benchmod and its peers
nbpeer and capipeer were built), USMBRIDGE_BENCH_NANOBIND (nanobind's
version, for the table), OCL_ICD_VENDORS (the OpenCL runtimes,
scripts/setup-20-opencl.sh), USMBRIDGE_BENCH_ROUNDS (rounds per row;
default 9, 1 with --smoke).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import timeit

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.environ.get("USMBRIDGE_BENCH_DIR", os.path.join(root, ".cache", "bench")))

NANOBIND = os.environ.get("USMBRIDGE_BENCH_NANOBIND", "?")


# ---- Python rows: each a setup returning (usmbridge callable, peers) -----
# peers: [(label, peer), ...], each timed beside usmbridge. A peer is a
# callable, or a floor: [(sign, callable), ...], whose time is the signed
# sum of its terms' best rounds, each term timed in the alternation like
# any side (a callable in several peers, or ours, is timed once).

FLOOR = "floor: C-API buffer read + one call into Go"


def _into_go():
    """One call into Go over a call of a C function, as floor terms: what a
    Go function spends beyond a C function of the same module kind."""
    import benchmod
    import capipeer
    return [(+1, benchmod.nothing), (-1, capipeer.nothing)]


def _dpctl_array():
    import dpctl
    import dpnp
    q = dpctl.SyclQueue("opencl:cpu")
    return dpnp.arange(1024, dtype="f4", sycl_queue=q)


def row_f_numpy():
    import benchmod
    import capipeer
    import nbpeer
    import numpy as np
    x = np.arange(1024, dtype=np.float32)
    f, nb, c = benchmod.f, nbpeer.f, capipeer.f
    c_f = lambda: c(x)  # one callable: the C-API line and the floor's term
    return lambda: f(x), [("nanobind %s `f(x)`" % NANOBIND, lambda: nb(x)),
                          ("C-API `f(x)`, buffer protocol", c_f),
                          (FLOOR, [(+1, c_f)] + _into_go())]


def row_saxpy_numpy():
    """examples/saxpy's saxpy(a, x, y) on two NumPy arrays of 16 float32
    (the call's cost, not the loop's), beside nanobind's and the C API's of
    the same loop, and the floor (benchmod is loaded beside saxpy for its
    Go call: two Go runtimes, which docs/extensions.md says coexist)."""
    import capipeer
    import nbpeer
    import numpy as np
    import saxpy
    x, y = np.ones(16, np.float32), np.zeros(16, np.float32)
    f, nb, c = saxpy.saxpy, nbpeer.saxpy, capipeer.saxpy
    c_saxpy = lambda: c(0.5, x, y)  # one callable: the C-API line and the floor's term
    return lambda: f(0.5, x, y), [("nanobind %s `saxpy(a, x, y)`" % NANOBIND, lambda: nb(0.5, x, y)),
                                  ("C-API `saxpy(a, x, y)`, buffer protocol", c_saxpy),
                                  (FLOOR, [(+1, c_saxpy)] + _into_go())]


def row_f_dpnp():
    import benchmod
    import nbpeer
    from dpctl.memory import as_usm_memory
    x = _dpctl_array()
    f, nb = benchmod.f, nbpeer.f
    mv = (1, 1)
    return lambda: f(x), [("`x.__sycl_usm_array_interface__`", lambda: x.__sycl_usm_array_interface__),
                          ("`x.__dlpack__(max_version=(1, 1))`", lambda: x.__dlpack__(max_version=mv)),
                          ("nanobind %s `f(x)`" % NANOBIND, lambda: nb(x)),
                          ("dpctl's reader: `dpctl.memory.as_usm_memory(x)`", lambda: as_usm_memory(x))]


def row_from_dlpack_numpy():
    import numpy as np
    import usmbridge as ub
    h = np.arange(1024, dtype=np.float32)
    return lambda: ub.from_dlpack(h), [("`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(h))]


def row_from_dlpack_varying():
    """Arrays of 16 lengths in turn, the same for both sides."""
    import itertools
    import numpy as np
    import usmbridge as ub
    xs = [np.arange(n, dtype=np.float32) for n in range(1000, 1016)]
    peer_next, ours_next = itertools.cycle(xs).__next__, itertools.cycle(xs).__next__
    return (lambda: ub.from_dlpack(ours_next()),
            [("`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(peer_next()))])


def row_numpy_of_ours():
    import numpy as np
    import usmbridge as ub
    h = np.arange(1024, dtype=np.float32)
    ours = ub.from_dlpack(h)
    return lambda: np.from_dlpack(ours), [("`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(h))]


def row_suai():
    import usmbridge as ub
    x = _dpctl_array()
    ours = ub.asarray(x)
    return (lambda: ours.__sycl_usm_array_interface__,
            [("dpnp array", lambda: x.__sycl_usm_array_interface__)])


def row_dpt_from_dlpack():
    import dpnp.tensor as dpt
    import usmbridge as ub
    x = _dpctl_array().get_array()  # the dpnp.tensor.usm_ndarray under the dpnp array
    ours = ub.asarray(x)
    return lambda: dpt.from_dlpack(ours), [("of dpnp's own", lambda: dpt.from_dlpack(x))]


def row_asarray():
    import dpnp
    import usmbridge as ub
    x = _dpctl_array()
    return lambda: ub.asarray(x), [("`dpnp.asarray(dpnp)`", lambda: dpnp.asarray(x))]


def _kernels_source():
    with open(os.path.join(root, "internal", "testutil", "testdata", "kernels.cl")) as f:
        return f.read()


# The kernel a user writes for contiguous arrays, which the runtime
# vectorizes: the peer of examples/saxpy's kernel rows.
PLAIN_SAXPY = """
kernel void saxpy(float a, global const float *x, global float *y)
{
    size_t i = get_global_id(0);
    y[i] += a * x[i];
}"""


class Timed:
    """A side that times a part of itself: fn() runs once and returns the
    seconds of the part it times (the rest, a wait for an idle queue
    before it, untimed)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self):
        return self.fn()


def _saxpy_arrays(n, step=1):
    """x = 0, 1, ... and y = 0 of n float32 on one out-of-order queue of the
    OpenCL CPU device (dpnp's kind), as views of stride step; the queue and
    the dpctl.memory of each, for dpctl.program's arguments."""
    import dpctl
    import dpnp
    q = dpctl.SyclQueue("opencl:cpu")
    xb = dpnp.arange(n * step, dtype="f4", sycl_queue=q)
    yb = dpnp.zeros(n * step, dtype="f4", sycl_queue=q)
    q.wait()  # dpnp's fills, before a peer that orders after nothing
    return q, xb[::step], yb[::step], xb.get_array().usm_data, yb.get_array().usm_data


def row_saxpy_device():
    """examples/saxpy on two contiguous dpnp device arrays of 2^22 float32:
    its plain kernel on the arrays' queue, and the wait for it, beside the
    plain kernel a user writes, built with dpctl.program and submitted on
    the same queue; and beside the strided kernel, the one saxpy ran on
    every layout before issue 45."""
    import ctypes
    import dpctl.program
    import saxpy
    n = 1 << 22
    q, x, y, xm, ym = _saxpy_arrays(n)
    assert saxpy.path(x, y) == "kernel"
    kp = dpctl.program.create_program_from_source(q, PLAIN_SAXPY).get_sycl_kernel("saxpy")
    ks = dpctl.program.create_program_from_source(q, _kernels_source()).get_sycl_kernel("saxpy")
    plain = [ctypes.c_float(0.5), xm, ym]
    strided = [ctypes.c_float(0.5), xm, ctypes.c_long(1), ym, ctypes.c_long(1)]
    f = saxpy.saxpy

    def ours():
        f(0.5, x, y)
        q.wait()
    return (ours,
            [("the plain kernel through `dpctl.program`, `q.submit(...).wait()`", lambda: q.submit(kp, plain, [n]).wait()),
             ("the strided kernel (saxpy's before issue 45), the same way", lambda: q.submit(ks, strided, [n]).wait())])


def row_saxpy_strided():
    """examples/saxpy on strided views (every other element) of dpnp device
    arrays, 2^22 elements each: its strided kernel, and the wait, beside
    the same strided kernel through dpctl.program on the same views."""
    import ctypes
    import dpctl.program
    import saxpy
    n = 1 << 22
    q, x, y, xm, ym = _saxpy_arrays(n, 2)
    assert saxpy.path(x, y) == "strided kernel"
    ks = dpctl.program.create_program_from_source(q, _kernels_source()).get_sycl_kernel("saxpy")
    args = [ctypes.c_float(0.5), xm, ctypes.c_long(2), ym, ctypes.c_long(2)]
    f = saxpy.saxpy

    def ours():
        f(0.5, x, y)
        q.wait()
    return ours, [("the strided kernel through `dpctl.program`, `q.submit(...).wait()`",
                   lambda: q.submit(ks, args, [n]).wait())]


def row_saxpy_return():
    """examples/saxpy on dpnp device arrays of 2^24 float32, on an idle
    queue: the call alone (it returns once its kernel is submitted),
    beside the call and its wait (q.wait())."""
    import time
    import saxpy
    q, x, y, _, _ = _saxpy_arrays(1 << 24)
    f, now = saxpy.saxpy, time.perf_counter

    def call():
        q.wait()
        t = now()
        f(0.5, x, y)
        t = now() - t
        q.wait()
        return t

    def call_and_wait():
        q.wait()
        t = now()
        f(0.5, x, y)
        q.wait()
        return now() - t
    return Timed(call), [("the same call and its wait, `q.wait()`", Timed(call_and_wait))]


def row_saxpy_chain():
    """50 examples/saxpy calls in a row on dpnp device arrays of 4,096
    float32 (y += a*x, each after the last), then a wait, beside 50
    submissions of the plain kernel through dpctl.program, each depending
    on the last one's event."""
    import ctypes
    import dpctl.program
    import saxpy
    n = 4096
    q, x, y, xm, ym = _saxpy_arrays(n)
    kp = dpctl.program.create_program_from_source(q, PLAIN_SAXPY).get_sycl_kernel("saxpy")
    args = [ctypes.c_float(0.5), xm, ym]
    f = saxpy.saxpy

    def ours():
        for _ in range(50):
            f(0.5, x, y)
        q.wait()

    def peer():
        ev = q.submit_async(kp, args, [n])
        for _ in range(49):
            ev = q.submit_async(kp, args, [n], dEvents=[ev])
        ev.wait()
    return ours, [("50 `q.submit_async(kernel, ..., dEvents=[ev])` of the plain kernel, then `ev.wait()`", peer)]


def row_launch_empty():
    """An empty kernel launched from Go on a dpnp array's queue and waited
    for (benchmod.launch_empty), beside SyclQueue.submit of the same
    kernel from Python."""
    import dpctl
    import dpctl.program
    import benchmod
    x = _dpctl_array()
    q = x.sycl_queue
    q.wait()
    k = dpctl.program.create_program_from_source(q, "kernel void empty(void) {}").get_sycl_kernel("empty")
    f = benchmod.launch_empty
    return lambda: f(x), [("`q.submit(empty, [], [1]).wait()`", lambda: q.submit(k, [], [1]).wait()),
                          ("the same after `q.submit_barrier()`, as Go orders",
                           lambda: q.submit(k, [], [1], dEvents=[q.submit_barrier()]).wait())]


# name: (row title, setup, the bench_floor.py part that splits it or None)
PY_ROWS = {
    "f_numpy": ("Go `f(x)`, x a NumPy 1-D float32 array", row_f_numpy, "f_numpy"),
    "saxpy_numpy": ("examples/saxpy `saxpy(a, x, y)`, NumPy 1-D float32 arrays of 16", row_saxpy_numpy, None),
    "f_dpnp": ("Go `f(x)`, x a dpnp 1-D float32 array", row_f_dpnp, "f_dpnp"),
    "from_dlpack": ("`usmbridge.from_dlpack(numpy array)`", row_from_dlpack_numpy, "from_dlpack"),
    "from_dlpack_sizes": ("`usmbridge.from_dlpack(numpy array)`, 16 sizes in turn", row_from_dlpack_varying, None),
    "numpy_import": ("`numpy.from_dlpack` of our export", row_numpy_of_ours, None),
    "suai": ("`__sycl_usm_array_interface__` produced", row_suai, None),
    "dpt_from_dlpack": ("`dpnp.tensor.from_dlpack` of our array", row_dpt_from_dlpack, None),
    "asarray": ("`usmbridge.asarray(dpnp array)`", row_asarray, "asarray"),
    "saxpy_device": ("examples/saxpy and its wait, contiguous dpnp device arrays of 2^22 float32", row_saxpy_device, None),
    "saxpy_strided": ("examples/saxpy and its wait, strided views of dpnp device arrays, 2^22 float32", row_saxpy_strided, None),
    "saxpy_return": ("examples/saxpy returns before its kernel, dpnp device arrays of 2^24 float32", row_saxpy_return, None),
    "saxpy_chain": ("50 chained examples/saxpy calls, dpnp device arrays of 4,096 float32", row_saxpy_chain, None),
    "launch_py": ("empty kernel launched from Python, waited for", row_launch_empty, None),
}


def run_py_row(name, rounds, smoke):
    """In the row's own process: time usmbridge and its peers alternately
    (a floor's terms each as a side), and print the row's results (JSON)."""
    title, setup, _ = PY_ROWS[name]
    ours, peers = setup()
    terms = [[(+1, peer)] if callable(peer) else peer for _, peer in peers]
    fns = [ours]  # every callable to time, each once
    for fn in (fn for peer in terms for _, fn in peer):
        if not any(fn is g for g in fns):
            fns.append(fn)
    for fn in fns:  # warm up; also proves every side works
        fn()

    def time_n(fn, n):
        """Seconds per call of fn over n calls (a Timed side's own parts)."""
        if isinstance(fn, Timed):
            return sum(fn() for _ in range(n)) / n
        return timeit.timeit(fn, number=n) / n
    # Size a round to ~0.1 s of the slowest side (a fixed tiny count in
    # smoke), and at least 100 calls, 10 for sides of 10 ms and more.
    if smoke:
        n = 10
    else:
        t = max(time_n(fn, 20) for fn in fns)
        n = max(10 if t >= 0.01 else 100, int(0.1 / max(t, 1e-9)))
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], time_n(fn, n))

    def time_of(fn):
        return best[next(i for i, g in enumerate(fns) if g is fn)]
    json.dump([{"row": title, "peer": label, "ours_ns": best[0] * 1e9,
                "peer_ns": sum(sign * time_of(fn) for sign, fn in peer) * 1e9}
               for (label, _), peer in zip(peers, terms)], sys.stdout)


# ---- Go rows: one go test -bench run each ---------------------------------

# (key, row title, package, -bench pattern, [(peer label, peer sub-benchmark,
# usmbridge sub-benchmark), ...]); sub-benchmark names are matched as
# suffixes of the full benchmark name.
GO_ROWS = [
    ("copy_256m", "256 MiB host->shared copy", "./opencl", "^BenchmarkCopyHostToShared$/.*/256MiB$",
     [("C memcpy (%s)" % rt, "CopyHostToShared/%s/256MiB/c-memcpy" % rt, "CopyHostToShared/%s/256MiB/backend" % rt)
      for rt in ("pocl", "intel-opencl")]),
    ("copy_d2h_1m", "Intel device->host 1 MiB copy", "./opencl", "^BenchmarkCopyDeviceToHost$/^1MiB$",
     [("Go copy host->host", "CopyDeviceToHost/1MiB/go-copy", "CopyDeviceToHost/1MiB/backend")]),
    ("copy_fixed", "4 KiB OpenCL copy (fixed cost)", "./opencl", "^BenchmarkCopyFixedCost$",
     [("enqueue+clFinish (%s)" % what, "CopyFixedCost/%s/runtime-enqueue-finish" % what, "CopyFixedCost/%s/backend" % what)
      for what in ("pocl/host-to-shared", "intel-opencl/host-to-shared", "intel-opencl/device-to-host")]),
    ("roundtrip", "DLPack round trip, 1 GiB vs 1 B", "./dlpack", "^BenchmarkRoundTrip$",
     [("the 1 B array", "RoundTrip/1B", "RoundTrip/1GiB")]),
    ("launch_opencl", "empty kernel launched from Go, OpenCL", "./opencl", "^BenchmarkLaunchEmpty$",
     [("C `clEnqueueNDRangeKernel` (%s)" % rt, "LaunchEmpty/%s/c-enqueue" % rt, "LaunchEmpty/%s/go" % rt)
      for rt in ("pocl", "intel-opencl")]),
    ("launch_levelzero", "empty kernel launched from Go, Level Zero (fake driver)", "./levelzero", "^BenchmarkLaunchEmpty$",
     [("C `zeCommandListAppendLaunchKernel`", "LaunchEmpty/c-append", "LaunchEmpty/go"),
      ("C append + `zeEventHostSynchronize` + `zeEventHostReset` (asynchronous list)",
       "LaunchEmpty/async/c-append", "LaunchEmpty/async/go")]),
    ("launch_dpctl", "empty kernel launched from Go, dpctl", "./dpctl", "^BenchmarkLaunchEmpty$",
     [("C `DPCTLQueue_SubmitRange`", "LaunchEmpty/c-submit", "LaunchEmpty/go")]),
    ("extent_query", "extent check of USM from elsewhere (Intel OpenCL)", "./opencl",
     "^BenchmarkQueryPointer$/^intel-opencl$/^runtime",
     [("C: the same three `clGetMemAllocInfoINTEL`", "QueryPointer/intel-opencl/runtime-c",
       "QueryPointer/intel-opencl/runtime")]),
    ("queue_wait", "host wait on an idle dpctl queue (barrier + event)", "./dpctl", "^BenchmarkQueueWait$",
     [("C `DPCTLQueue_Wait`", "QueueWait/c-queue-wait", "QueueWait/go")]),
]

BENCH_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:.*?(\d+) allocs/op)?")


def run_go_row(key, rounds, smoke):
    _, title, pkg, pattern, pairs = next(r for r in GO_ROWS if r[0] == key)
    benchtime = "1x" if smoke else ("3x" if key.startswith("copy_256m") else "0.2s")
    cmd = ["go", "test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime,
           "-count", str(rounds), pkg]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    best = {}
    for line in out.stdout.splitlines():
        m = BENCH_LINE.match(line)
        if m:
            name, ns, allocs = m.group(1), float(m.group(2)), m.group(3)
            prev = best.get(name)
            if prev is None or ns < prev[0]:
                best[name] = (ns, allocs)
    results = []
    for peer_label, peer, ours in pairs:
        p, o = best.get(peer), best.get(ours)
        if p is None or o is None:
            why = (out.stderr.strip() or out.stdout.strip() or "no benchmark output").splitlines()[-1]
            results.append({"row": title, "peer": peer_label, "skipped": why})
            continue
        results.append({"row": title, "peer": peer_label, "peer_ns": p[0], "ours_ns": o[0],
                        "peer_allocs": p[1], "ours_allocs": o[1]})
    return results


# ---- the page (docs/performance.md) ---------------------------------------

FLOOR_TITLES = {
    "from_dlpack": "`usmbridge.from_dlpack(numpy array)`",
    "f_numpy": "Go `f(x)` of a NumPy array",
    "f_dpnp": "Go `f(x)` of a dpnp array",
    "asarray": "`usmbridge.asarray(dpnp array)`",
}

# What each row times, for the page: keyed by row name.
ROW_NOTES = {
    "f_numpy": """\
A Go function `func(x pyext.Array[float32]) error` declared with
`pyext.NDim(1), pyext.CContiguous()` that does nothing
(`python/bench/benchmod`, built by `python -m usmbridge.build`), called
with a NumPy array of 1024 float32. The call goes through the module's C
half (`pyext/call.c`): it binds the argument, reads the NumPy array in
place (`pyext/read_numpy.c`: its struct, as NumPy's C API macros do, once the first array read
both ways gave the buffer protocol's answer; other host arrays go
through the buffer protocol) and checks the layout with the DLPack
import's rules, then calls into Go once (`pyext/call_cgo.go`, `ubx_go_call`),
where pyext makes the `Array` view, checks the element type and the
constraints and calls the function; the array is let go after the
call. Its peers take the same array with the same signature and do
nothing: nanobind's, and a plain C-API function, which is the least any
extension can spend on the argument. The floor is the least a Go
function can spend on it: that C-API function's time plus one call into
Go (`benchmod.nothing()` less `capipeer.nothing()`), the three timed in
the row's rounds (see the peers below).""",
    "saxpy_numpy": """\
`saxpy.saxpy(a, x, y)` of examples/saxpy (built by
`python -m usmbridge.build`) on two NumPy arrays of 16 float32, so that
the call is timed rather than the loop: the C half reads x and y (y
writable) and calls into Go once, where saxpy runs its loop over their
memory. Its peers compute the same y += a*x: nanobind's `saxpy`, and a
C-API `saxpy` that reads x and y through the buffer protocol with `f`'s
checks and runs the loop in C, the least a C extension spends. The floor
is that C-API `saxpy`'s time plus one call into Go, as `f_numpy`'s;
`benchmod` is loaded beside `saxpy` for it (two Go runtimes in one
process, which docs/extensions.md says coexist).""",
    "f_dpnp": """\
The same `f` with a dpnp array of 1024 float32 in USM on the OpenCL CPU
device. USM arrays are Go's: C calls the array's
`__sycl_usm_array_interface__` and looks the dict's keys up, and Go reads
the values with dpctl's rules, binds the pointer to the SYCL context its
`syclobj` names and checks the array lies inside its allocation (the
OpenCL runtime's `clGetMemAllocInfoINTEL`, about a quarter of the own
cost: RATIONALE.md, "Extent checks nobody else does"). Making that dict is
dpnp's property, which every consumer of the protocol pays, so
`usmbridge − peer` on the property's line is usmbridge's own cost (the
target is at most 1 µs). dpnp's `__dlpack__` is what reading the array
through DLPack instead would start with; nanobind's `f` does that (it
calls `__dlpack__` without a stream). dpctl's own reader of the protocol,
`dpctl.memory.as_usm_memory`, calls the same property and makes a
`dpctl.memory` object over the pointer after asking the SYCL runtime
its USM kind (it checks no extent).""",
    "from_dlpack": """\
`usmbridge.from_dlpack` of a NumPy array of 1024 float32 beside
`numpy.from_dlpack` of it. A host producer is imported by the C half
without entering Go: it asks `__dlpack_device__` (DLPack's `from_dlpack`
asks it to choose the stream, and usmbridge must pass a kDLOneAPI
producer its queue, which is Go's path) of every type but
`numpy.ndarray`, whose arrays never need a stream, calls
`__dlpack__(max_version=...)`, checks the tensor with the import's rules
and makes the Array over it, its shape and strides read straight into
the Array.""",
    "from_dlpack_sizes": """\
The same with arrays of 16 lengths in turn, so that nothing kept from the
previous call's layout helps either side.""",
    "numpy_import": """\
`numpy.from_dlpack` of one of our host Arrays beside that of a NumPy
array: the Array's `__dlpack__` exports its view from C (a capsule and
its deleter) without entering Go.""",
    "suai": """\
Our Array's `__sycl_usm_array_interface__` (made by `usmbridge.asarray`
from a dpnp array) beside dpnp's own property for the same memory. Go
makes the dict the first time and the Array keeps it; every call waits on
the array's queue in Go first, as dpnp's property waits on its own, and
hands out a copy. Go waits with a barrier and its event, where dpnp's
property calls `queue::wait` (which can let a C++ exception through the C
ABI): that is most of the difference.""",
    "dpt_from_dlpack": """\
`dpnp.tensor.from_dlpack` of our Array beside that of the dpnp array's
own `usm_ndarray`. dpnp calls `__dlpack__(max_version=(1, 0))` without a
stream, so an Array on a dpctl queue must have its queue's work done
before the capsule is read: that export is Go's (one call into Go, which
waits on the queue).""",
    "asarray": """\
`usmbridge.asarray` of a dpnp array beside `dpnp.asarray` of it, which
returns an array over the same memory without reading any interface.
usmbridge must read the producer's `__sycl_usm_array_interface__` (the
protocol): C reads it once, Go parses it and binds the pointer to its
context, and checks that the array lies inside its allocation, which
takes the OpenCL runtime three `clGetMemAllocInfoINTEL` calls (dpnp checks
no extent: RATIONALE.md, "Extent checks nobody else does").""",
    "copy_256m": """\
256 MiB from host memory into USM shared memory through the backend's
`Copy`, beside a C `memcpy` of the same bytes into the same destination,
on each OpenCL runtime (`go test -bench CopyHostToShared ./opencl`).""",
    "copy_d2h_1m": """\
Intel's runtime: 1 MiB from USM device memory to the host (the copy a
kDLCPU export of device memory makes), beside Go's `copy` between two
host buffers of that size (`./opencl`, `CopyDeviceToHost`).""",
    "copy_fixed": """\
The fixed cost of a small copy: the backend's `Copy` of 4 KiB beside
the runtime's own enqueue of the same copy followed by `clFinish`
(`./opencl`, `CopyFixedCost`).""",
    "roundtrip": """\
The whole DLPack exchange in Go, export + import + release, of a 1 GiB
array beside a 1 B one: the cost does not depend on the size
(`./dlpack`, `RoundTrip`).""",
    "saxpy_device": """\
`saxpy.saxpy(a, x, y)` of examples/saxpy on two contiguous dpnp arrays of
2^22 float32 in device USM on the OpenCL CPU device, followed by
`q.wait()`: the module builds its OpenCL C once for the arrays' context
and device (`usm.BuildProgram`), launches its plain kernel
(`y[i] += a * x[i]`, which the runtime vectorizes) on y's queue after a
barrier of the queue's earlier work, and returns (`pyext.NoWait`); the
wait is the kernel's. The peer is the plain kernel a user writes, built
with `dpctl.program.create_program_from_source` on the same queue and
submitted with `SyclQueue.submit(kernel, args, [n]).wait()`. The second
peer is the strided kernel (`y[i*sy] += a * x[i*sx]`, strides at run
time), which saxpy ran on every layout before issue 45, submitted the
same way.""",
    "saxpy_strided": """\
The same on strided views (every other element of arrays of 2^23): saxpy
runs its strided kernel, beside that kernel through `dpctl.program` on
the same views.""",
    "saxpy_return": """\
`saxpy.saxpy(a, x, y)` on dpnp device arrays of 2^24 float32, on an
idle queue: the call alone (it returns once its kernel is submitted;
`pyext.NoWait`), beside the same call followed by `q.wait()`. The ratio
is the share of the kernel's time the caller waits for (1.0 before
issue 45, when saxpy waited for its kernel).""",
    "saxpy_chain": """\
50 `saxpy.saxpy(a, x, y)` calls in a row on dpnp device arrays of 4,096
float32, each kernel after the last (y's queue orders them), then
`q.wait()`, beside 50 `SyclQueue.submit_async` of the plain kernel, each
depending on the last one's event, then a wait. Each saxpy call reads x
and y through dpnp's `__sycl_usm_array_interface__`, which waits for the
queue: the kernel before it has ended by then.""",
    "launch_py": """\
A Go function of `python/bench/benchmod` that launches an empty kernel
over one work-item on its argument's queue (a dpnp array's, out of
order) and waits for it, beside `SyclQueue.submit` of the same kernel
from Python and `.wait()` on its event, without and with the barrier
that a launch on an out-of-order queue depends on.""",
    "launch_opencl": """\
An empty kernel over one work-item launched from Go through
`usm.Kernel`, waited for and its event released (`./opencl`,
`LaunchEmpty`), beside the same launch written in C:
`clEnqueueNDRangeKernel`, `clWaitForEvents`, `clReleaseEvent` in a loop
(`internal/testutil/testdata/launchpeer.c`), on each OpenCL runtime.""",
    "launch_levelzero": """\
The same through the Level Zero loader and the fake driver
(`./levelzero`). On the Backend's immediate list, which is synchronous, a
launch is done when its append returns, so neither side makes an event:
`zeCommandListAppendLaunchKernel` alone in C beside Go, whose launch
returns the zero `usm.Event`. On an asynchronous immediate list each
launch signals an event: the append signalling one, then
`zeEventHostSynchronize` and `zeEventHostReset` in C. Go makes its
native calls of a launch in one crossing into C (RATIONALE.md, "A Level
Zero launch: one crossing, no event it does not need"). The
driver runs nothing, so this is the cost of the calls (cgo transitions
included), not of a GPU.""",
    "launch_dpctl": """\
The same through dpctl's library on the OpenCL CPU device's in-order
queue (`./dpctl`): `DPCTLQueue_SubmitRange`, `DPCTLEvent_Wait`,
`DPCTLEvent_Delete` in C beside Go.""",
    "extent_query": """\
What the extent check of every SUAI import asks Intel's OpenCL runtime
of a pointer its context did not allocate (a dpnp array's): the
allocation's type, base and size, three `clGetMemAllocInfoINTEL` calls,
made from Go in one crossing into C (`./opencl`, `QueryPointer`,
`runtime`), beside the same three calls in a C loop
(`internal/testutil/testdata/launchpeer.c`). The C line is the least the
check can cost, and so part of the floor of `f_dpnp`'s own cost: with one
call into Go (`f_numpy`'s floor) it leaves little of `f_dpnp`'s 1 µs
target for reading the dict's values, binding the queue and making the
Array (RATIONALE.md, "What usmbridge's own cost of `f(x)` of a dpnp
array is made of").""",
    "queue_wait": """\
A host wait on an idle out-of-order queue of the OpenCL CPU device, as
dpnp's queues are (`./dpctl`, `QueueWait`): usmbridge's `Queue.Wait`, a
barrier and a wait on its event, which is how it waits on every dpctl
queue, beside `DPCTLQueue_Wait` in a C loop, which dpnp's
`__sycl_usm_array_interface__` calls and which lets a SYCL exception
through the C ABI (RATIONALE.md, "A host wait on a dpctl queue is a
barrier and its event"). The difference is most of what `suai` measures
over dpnp's own property.""",
}

PEERS_TEXT = """\
- **nanobind** (`python/bench/peers/nbpeer.cpp`): `f` bound with
  `nb::ndarray<float, nb::ndim<1>, nb::c_contig>` (with `.noconvert()`,
  so that it refuses what usmbridge refuses instead of copying) and an
  empty body, built with nanobind's CMake package (`nanobind_add_module`
  and its defaults, a Release build) from the nanobind that
  `requirements-test.txt` pins. Its caster calls the argument's
  `__dlpack__(max_version=...)` and reads the capsule (for NumPy too: the
  buffer protocol is its fallback).
- **nanobind's `saxpy`** (the same file): `float a` and x and y bound as
  `nb::ndarray<const float, ...>` and `nb::ndarray<float, ...>` (1-D,
  C-contiguous, `.noconvert()`), the lengths checked, y += a*x in C++.
- **C API** (`python/bench/peers/capipeer.c`): `f`, a `METH_O` function
  that calls `PyObject_GetBuffer(x, PyBUF_RECORDS_RO)`, checks the format,
  the item size, one dimension and C order (`PyBuffer_IsContiguous`), and
  calls `PyBuffer_Release`: the least a C extension spends on such an
  argument. Its `saxpy(a, x, y)` (`METH_FASTCALL`) reads a float, x the
  same way and y writable (`PyBUF_RECORDS`), with `f`'s checks and equal
  lengths, computes y += a*x in C and releases both. Its `nothing()`
  (`METH_NOARGS`) is the cost of any call of a C function.
- **floors** (the lines `floor: C-API buffer read + one call into Go`):
  the least a Go function can spend on the row's arguments. A Go function
  called from Python is a C function that reads the arguments, for which
  nothing spends less than the C-API peer, and then calls into Go once, a
  C-to-Go callback that a Python thread pays on every call. So the floor
  is the C-API peer's time (`capipeer.f(x)`, `capipeer.saxpy(a, x, y)`)
  plus one call into Go: `benchmod.nothing()`, a Go function that does
  nothing, less `capipeer.nothing()`, a C function that does nothing.
  Each of the three is timed as a side in the row's alternating rounds,
  and the floor is the signed sum of their best rounds; its ratio is
  usmbridge / floor, how far usmbridge is from what any Go function must
  spend.
- **dpnp's own calls** (`__sycl_usm_array_interface__`, `__dlpack__`,
  `dpnp.asarray`, `dpnp.tensor.from_dlpack`) and **NumPy's**
  (`numpy.from_dlpack`), for the rows whose work is theirs.
- **C and Go** for the Go rows (`memcpy`, `copy`, the runtime's enqueue and
  `clFinish`, the runtimes' kernel launches in C).
- **dpctl's programs** (`dpctl.program`, `SyclQueue.submit`) for the
  kernel rows: the same OpenCL C on the same queue."""

METHOD_TEXT = """\
`scripts/bench.sh` builds what the rows time into `.cache/bench` (nothing
built is committed): `usmbridge._ext` and the Go bench module `benchmod`
with `python -m usmbridge.build`, and the two peers of `benchmod.f` with
CMake. It then runs `python/bench/bench.py`: each Python row in a process
of its own, each Go row as one `go test -bench` run. Inside a row
usmbridge and its peers are timed in alternating rounds (each round
~0.1 s of the slowest side) and each keeps its best round, so that load
from other processes falls on every side alike; ratio = usmbridge /
peer, and ≤ 1.0 means usmbridge is not slower. Only the ratios and the
differences travel between machines; the lines above the table name the
machine and the Go, Python, NumPy and nanobind that made the numbers.
`python/bench/bench_floor.py` then splits the rows into their pieces, one
process per part.

`--write` holds the new ratios to those of the page it would replace: a
row whose ratio is more than 10% above the page's runs once more, each
side keeping its best of both runs (as if the row had twice the rounds;
the page names such rows under the table), and a ratio still more than
10% above the page's is printed with both ratios, the command exits 1
and the page is kept, unless
`--accept-regressions` is given (then the page is written). Rows skipped
or failed on either side, and rows only one side has, are not compared.

```sh
scripts/bench.sh                      # every row (a few minutes)
scripts/bench.sh f_numpy f_dpnp       # only the rows named
scripts/bench.sh --smoke              # one short round per row (scripts/test.sh)
scripts/bench.sh --write docs/performance.md   # every row, and this page unless a ratio regressed
scripts/bench.sh --write docs/performance.md --accept-regressions   # and this page even so
```"""


def page(command, cpu, versions, lines, floors, ran, measured, rerun=()):
    """docs/performance.md: the table and the pieces as this run printed
    them, and what each row, peer and piece is; measured is the commit
    (commit()), taken before the run; rerun, the rows run twice (main())."""
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = [
        "# Performance",
        "",
        "<!-- Written by `%s` (python/bench/bench.py): rerun it rather than edit this page. -->" % command,
        "",
        "What usmbridge's Python edge costs beside its peers: a Go function taking an",
        "array, the DLPack and `__sycl_usm_array_interface__` exchanges, and the copies",
        "and DLPack round trip in Go.",
        "",
        "`%s` on %s, commit %s." % (command, today, measured),
        "",
        cpu,
        "",
        versions,
        "",
    ] + TABLE_HEAD + lines + [""]
    if rerun:
        out += ["Run twice, each side keeping its best of both runs, because the first run's ratio",
                "was more than %d%% above the page's: %s." % (round(REGRESSION * 100), ", ".join("`%s`" % k for k in rerun)), ""]
    out += ["## The rows", ""]
    for key in ran:
        title = PY_ROWS[key][0] if key in PY_ROWS else next(r[1] for r in GO_ROWS if r[0] == key)
        out += ["- **%s** (`%s`):" % (title, key), "  " + indent(ROW_NOTES[key]), ""]
    out += ["## The peers", "", PEERS_TEXT, ""]
    if floors:
        out += ["## Piece by piece", "",
                "`python/bench/bench_floor.py` times each row's pieces in alternating rounds in one",
                "process; the lines after the timed ones are differences of them.", ""]
        for part, text, err in floors:
            out += ["%s (`--part %s`):" % (FLOOR_TITLES[part], part), ""]
            out += ["```", text if text is not None else "failed: %s" % err, "```", ""]
    out += ["## How the numbers are made", "", METHOD_TEXT, ""]
    return "\n".join(out)


def indent(text):
    """A note's lines after the first, indented under its list item."""
    return "\n  ".join(text.splitlines())


# ---- the table ------------------------------------------------------------

def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"^Model name:\s*(.+)$", out, re.M)
        cpus = re.search(r"^CPU\(s\):\s*(\d+)$", out, re.M)
        return "%s, %s CPUs" % (model.group(1).strip(), cpus.group(1))
    except (OSError, AttributeError):
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
        return m.group(1).strip() if m else "unknown CPU"


def versions_line():
    """The toolchain that made the numbers: Go (`go version`, the go the Go
    rows run, from the repository root as they do), the Python running
    the rows, its NumPy (asked of a child, so that this process imports no
    NumPy) and nanobind."""
    try:
        go = subprocess.run(["go", "version"], cwd=root, capture_output=True, text=True,
                            check=True).stdout.strip()
        go = go[len("go version "):] if go.startswith("go version ") else go
    except (OSError, subprocess.CalledProcessError):
        go = "not found"
    numpy = subprocess.run([sys.executable, "-c", "import numpy; print(numpy.__version__)"],
                           capture_output=True, text=True)
    v = sys.version_info
    python = "%d.%d.%d" % v[:3] + ("" if v.releaselevel == "final" else "%s%d" % (v.releaselevel[0], v.serial))
    return "Go %s (`go version`), %s %s, NumPy %s, nanobind %s" % (
        go, platform.python_implementation(), python,
        numpy.stdout.strip() if numpy.returncode == 0 else "not importable", NANOBIND)


def commit():
    """The commit measured, marked when the work tree differs from it."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
        return sha + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt_time(ns):
    if abs(ns) < 0.5:
        ns = 0.0  # not "-0 ns"
    if abs(ns) >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if abs(ns) >= 1e3:
        return "%.2f µs" % (ns / 1e3)
    return "%.0f ns" % ns


TABLE_HEAD = ["| row | peer is | peer | usmbridge | ratio | usmbridge − peer | allocs peer / usmbridge |",
              "|---|---|---:|---:|---:|---:|---|"]
TABLE_COLUMNS = 7


def table_line(r):
    if "failed" in r:
        return "| %s | row failed: %s | | | | | |" % (r["row"], r["failed"])
    if "skipped" in r:
        return "| %s | %s | skipped: %s | | | | |" % (r["row"], r["peer"], r["skipped"])
    allocs = ""
    if r.get("peer_allocs") is not None:
        allocs = "%s / %s" % (r["peer_allocs"], r["ours_allocs"])
    return "| %s | %s | %s | %s | %.2f | %s | %s |" % (
        r["row"], r["peer"], fmt_time(r["peer_ns"]), fmt_time(r["ours_ns"]), r["ours_ns"] / r["peer_ns"],
        fmt_time(r["ours_ns"] - r["peer_ns"]), allocs)


# A (row, peer) whose ratio grew by more than this against the page is a
# regression (regressions()).
REGRESSION = 0.10


def table_ratios(lines):
    """{(row title, peer label): ratio} of the table rows among lines (a
    page's lines, or table_line()s), in their order. Only the ratio column
    is read, so times in other units (µs against ns) do not matter; the
    head, and rows skipped or failed (no ratio), are left out."""
    ratios = {}
    for line in lines:
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            continue
        cells = [c.strip() for c in line[1:-1].split("|")]
        if len(cells) != TABLE_COLUMNS:
            continue  # not this table's, or a message with a "|" in it
        try:
            ratio = float(cells[4])
        except ValueError:
            continue  # the head, its rule, a skipped or failed row
        if math.isfinite(ratio):
            ratios[(cells[0], cells[1])] = ratio
    return ratios


def page_cpu(text):
    """The CPU a page names ("CPU: <name>, <n> CPUs; ..."), or None."""
    m = re.search(r"^CPU: ([^;\n]*)", text, re.M)
    return m.group(1) if m else None


def regressions(old_page, new_lines, tolerance=REGRESSION):
    """The rows of new_lines (this run's table_line()s) that regressed
    against old_page (the text of the page they would replace): for each
    (row title, peer label) with a ratio on both sides, new > old × (1 +
    tolerance). Ratios (usmbridge / peer), not times, are compared: they
    travel between runs and machines, absolute times do not. Rows skipped
    or failed on either side, and rows only one side has, are not
    compared. Returns [(row, peer, old ratio, new ratio)], in new_lines'
    order. The ratios are the page's, rounded to two decimals, so a ratio
    near 0.05 or below moves by more than 10% with its last digit."""
    old = table_ratios(old_page.splitlines())
    return [(row, peer, old[(row, peer)], ratio) for (row, peer), ratio in table_ratios(new_lines).items()
            if (row, peer) in old and old[(row, peer)] > 0 and ratio > old[(row, peer)] * (1 + tolerance)]


def run_row(key, rounds, smoke):
    """Run one row in a process of its own; return (its results, the
    bench_floor.py part it has or None). A Python row that fails gives one
    result {"row", "failed"}."""
    if key not in PY_ROWS:
        return run_go_row(key, rounds, smoke), None
    cmd = [sys.executable, os.path.abspath(__file__), "--row", key] + (["--smoke"] if smoke else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, USMBRIDGE_BENCH_ROUNDS=str(rounds)))
    if out.returncode != 0:
        return [{"row": PY_ROWS[key][0], "failed": (out.stderr.strip().splitlines() or ["?"])[-1]}], None
    return json.loads(out.stdout), PY_ROWS[key][2]


def run_rows(wanted, rounds, smoke, head, emit):
    """Run the rows (all, or those wanted), emitting the head lines (the
    CPU's, the versions') and each table line as it is made; return
    (status, {row key: its results}, the bench_floor.py parts to run)."""
    status, results, parts = 0, {}, []
    for line in head + [""] + TABLE_HEAD:
        emit(line)
    for key in ALL_ROWS:
        if wanted and key not in wanted:
            continue
        results[key], part = run_row(key, rounds, smoke)
        if part:
            parts.append(part)
        for r in results[key]:
            if "failed" in r:
                status = 1
            emit(table_line(r))
    return status, results, parts


def merge_rounds(first, second):
    """A row's results over the rounds of two runs of it (first, second:
    run_row()'s results): each side keeps its best of either run, as if
    the row had run twice the rounds; a floor keeps the better of the two
    runs' floors (each the signed sum of that run's best terms). A (row,
    peer) that failed or was skipped in either run keeps the second run's
    line."""
    timed = {r["peer"]: r for r in first if "ours_ns" in r}
    merged = []
    for b in second:
        a = timed.get(b.get("peer"))
        if a is not None and "ours_ns" in b:
            b = dict(b, ours_ns=min(a["ours_ns"], b["ours_ns"]), peer_ns=min(a["peer_ns"], b["peer_ns"]))
        merged.append(b)
    return merged


def table_lines(results):
    """The table lines of run_rows()' results, in the rows' order."""
    return [table_line(r) for rows in results.values() for r in rows]


def cpu_line(rounds, smoke):
    return "CPU: %s; best of %d alternating rounds per row%s" % (cpu_name(), rounds, " (smoke)" if smoke else "")


def run_floor(parts, rounds, smoke):
    """bench_floor.py's split of the rows, one process per part: [(part, text or None, error or None)]."""
    out = []
    for part in parts:
        cmd = [sys.executable, os.path.join(here, "bench_floor.py"), "--part", part, "--rounds", str(rounds)]
        r = subprocess.run(cmd + (["--number", "10"] if smoke else []), capture_output=True, text=True)
        if r.returncode != 0:
            out.append((part, None, (r.stderr.strip().splitlines() or ["?"])[-1]))
        else:
            out.append((part, r.stdout.rstrip(), None))
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="scripts/bench.sh", description="The performance table (docs/performance.md).")
    ap.add_argument("rows", nargs="*", help="rows to run (default: all): %s" % ", ".join(ALL_ROWS))
    ap.add_argument("--smoke", action="store_true", help="one short round per row")
    # argparse formats help with %: the percent sign is written %%.
    ap.add_argument("--write", metavar="PATH", help="also write the page (docs/performance.md) there, unless a row's "
                    f"ratio is more than {round(REGRESSION * 100)}%% above that of the page already there")
    ap.add_argument("--accept-regressions", action="store_true",
                    help="with --write: write the page even where ratios regressed (they are still printed)")
    ap.add_argument("--row", help=argparse.SUPPRESS)  # a child: one Python row
    a = ap.parse_args(argv)
    rounds = int(os.environ.get("USMBRIDGE_BENCH_ROUNDS", "1" if a.smoke else "9"))
    if a.row:
        run_py_row(a.row, rounds, a.smoke)
        return 0
    unknown = [r for r in a.rows if r not in ALL_ROWS]
    if unknown:
        ap.error("unknown row %s (rows: %s)" % (", ".join(unknown), ", ".join(ALL_ROWS)))
    if a.accept_regressions and not a.write:
        ap.error("--accept-regressions goes with --write PATH")

    def emit(line):
        print(line)
        sys.stdout.flush()
    measured = commit()  # before the page is opened for writing, which dirties the tree
    cpu, versions = cpu_line(rounds, a.smoke), versions_line()
    status, results, parts = run_rows(a.rows, rounds, a.smoke, [cpu, versions], emit)
    old = None
    if a.write and os.path.exists(a.write):
        with open(a.write) as f:
            old = f.read()
    # A ratio more than 10% above the page's is measured again before it
    # counts: the row runs once more and each side keeps its best of both
    # runs (twice the rounds). On a shared machine one run's best round can
    # be a slow one for one side only; a regression of the code survives
    # the second run, which times both sides alike.
    rerun = []
    if old is not None and not a.smoke:
        titles = {row for row, _, _, _ in regressions(old, table_lines(results))}
        rerun = [key for key, rows in results.items() if rows and rows[0]["row"] in titles]
        if rerun:
            print()
            print("rerunning %s: a ratio more than %d%% above %s's; each side keeps its best of both runs"
                  % (", ".join(rerun), round(REGRESSION * 100), a.write))
            for key in rerun:
                results[key] = merge_rounds(results[key], run_row(key, rounds, a.smoke)[0])
            print()
            for line in TABLE_HEAD + table_lines({k: results[k] for k in rerun}):
                emit(line)
    lines = table_lines(results)
    floors = run_floor(parts, rounds, a.smoke)
    for part, text, err in floors:
        print()
        if err:
            print("%s: split failed: %s" % (FLOOR_TITLES[part], err))
            status = 1
            continue
        print("%s, piece by piece (python/bench/bench_floor.py --part %s):" % (FLOOR_TITLES[part], part))
        print()
        print(text)
    if a.write:
        worse, old_cpu = [], None
        if old is not None:
            worse, old_cpu = regressions(old, lines), page_cpu(old)
        if worse:
            print()
            if old_cpu is not None and old_cpu != page_cpu(cpu):
                # Still refused: only the one who runs it can say the
                # machine, not the code, moved the ratios.
                print("%s was measured on another machine (%s; this run: %s): its ratios are that machine's"
                      % (a.write, old_cpu, page_cpu(cpu)))
            print("ratios more than %d%% above %s's (row | peer: old -> new):" % (round(REGRESSION * 100), a.write))
            for row, peer, old_ratio, new in worse:
                print("  %s | %s: %.2f -> %.2f (%+.0f%%)" % (row, peer, old_ratio, new, (new / old_ratio - 1) * 100))
        print()
        if worse and not a.accept_regressions:
            print("kept %s: %d ratio(s) regressed; rerun on an idle machine, or pass --accept-regressions "
                  "to write it anyway" % (a.write, len(worse)))
            return 1
        command = " ".join(["scripts/bench.sh"] + argv)
        with open(a.write, "w") as f:
            f.write(page(command, cpu, versions, lines, floors, list(results), measured, rerun))
        print("wrote %s%s" % (a.write, " with %d regressed ratio(s) accepted (--accept-regressions)" % len(worse)
                                       if worse else ""))
    return status


ALL_ROWS = list(PY_ROWS) + [r[0] for r in GO_ROWS]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
