"""The performance table: every exchange beside its peer, one process per row.

    scripts/bench.sh            # builds the extension, then runs this
    scripts/bench.sh --smoke    # one short round per row (CI: the rows cannot rot)
    scripts/bench.sh ROW...     # only these rows (names as printed)

Each row runs in a process of its own (a Python row in `python bench.py
--row NAME`, a Go row as one `go test -bench` run), so no row warms or
pollutes another's caches and allocator. Inside a row the peer and
usmbridge are timed in alternating rounds (peer, usmbridge, peer, ...) and
each keeps its best round, so load from other processes hits both sides
alike; ratio = usmbridge / peer (<= 1.0: usmbridge is not slower; for the
round-trip row, the 1 GiB cost over the 1 B cost). The first line names
the CPU the numbers belong to.

Environment: USMBRIDGE_LIB (the extension module to load; scripts/bench.sh
builds one), OCL_ICD_VENDORS (the OpenCL runtimes, scripts/setup-20-opencl.sh),
USMBRIDGE_BENCH_ROUNDS (rounds per row; default 9, 1 with --smoke).
"""
import json
import os
import re
import subprocess
import sys
import timeit

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))


# ---- Python rows: each a setup returning (peer, usmbridge) callables -----

def _dpctl_array():
    import dpctl
    import dpnp
    q = dpctl.SyclQueue("opencl:cpu")
    return dpnp.arange(1024, dtype="f4", sycl_queue=q)


def row_from_dlpack_numpy():
    import numpy as np
    import usmbridge as ub
    h = np.arange(1024, dtype=np.float32)
    return "`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(h), lambda: ub.from_dlpack(h)


def row_from_dlpack_varying():
    """Arrays of 16 lengths in turn, the same for both sides."""
    import itertools
    import numpy as np
    import usmbridge as ub
    xs = [np.arange(n, dtype=np.float32) for n in range(1000, 1016)]
    peer_next, ours_next = itertools.cycle(xs).__next__, itertools.cycle(xs).__next__
    return ("`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(peer_next()),
            lambda: ub.from_dlpack(ours_next()))


def row_numpy_of_ours():
    import numpy as np
    import usmbridge as ub
    h = np.arange(1024, dtype=np.float32)
    ours = ub.from_dlpack(h)
    return "`numpy.from_dlpack(numpy)`", lambda: np.from_dlpack(h), lambda: np.from_dlpack(ours)


def row_suai():
    import usmbridge as ub
    x = _dpctl_array()
    ours = ub.asarray(x)
    return ("dpnp array", lambda: x.__sycl_usm_array_interface__,
            lambda: ours.__sycl_usm_array_interface__)


def row_dpt_from_dlpack():
    import dpnp.tensor as dpt
    import usmbridge as ub
    x = _dpctl_array().get_array()  # the dpnp.tensor.usm_ndarray under the dpnp array
    ours = ub.asarray(x)
    return "of dpnp's own", lambda: dpt.from_dlpack(x), lambda: dpt.from_dlpack(ours)


def row_asarray():
    import dpnp
    import usmbridge as ub
    x = _dpctl_array()
    return "`dpnp.asarray(dpnp)`", lambda: dpnp.asarray(x), lambda: ub.asarray(x)


PY_ROWS = {
    "from_dlpack": ("`usmbridge.from_dlpack(numpy array)`", row_from_dlpack_numpy),
    "from_dlpack_sizes": ("`usmbridge.from_dlpack(numpy array)`, 16 sizes in turn", row_from_dlpack_varying),
    "numpy_import": ("`numpy.from_dlpack` of our export", row_numpy_of_ours),
    "suai": ("`__sycl_usm_array_interface__` produced", row_suai),
    "dpt_from_dlpack": ("`dpnp.tensor.from_dlpack` of our array", row_dpt_from_dlpack),
    "asarray": ("`usmbridge.asarray(dpnp array)`", row_asarray),
}


def run_py_row(name, rounds, smoke):
    """In the row's own process: time peer and usmbridge alternately."""
    title, setup = PY_ROWS[name]
    peer_name, peer, ours = setup()
    for fn in (peer, ours):  # warm up; also proves both sides work
        fn()
    # Size a round to ~0.1 s of the slower side (a fixed tiny count in smoke).
    if smoke:
        n = 10
    else:
        t = max(timeit.timeit(peer, number=200), timeit.timeit(ours, number=200)) / 200
        n = max(100, int(0.1 / max(t, 1e-9)))
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for i, fn in enumerate((peer, ours)):
            best[i] = min(best[i], timeit.timeit(fn, number=n) / n)
    json.dump({"row": title, "peer": peer_name, "peer_ns": best[0] * 1e9, "ours_ns": best[1] * 1e9}, sys.stdout)


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


def fmt_time(ns):
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.2f µs" % (ns / 1e3)
    return "%.0f ns" % ns


def main(argv):
    smoke = "--smoke" in argv
    rounds = int(os.environ.get("USMBRIDGE_BENCH_ROUNDS", "1" if smoke else "9"))
    if "--row" in argv:  # a child: one Python row
        run_py_row(argv[argv.index("--row") + 1], rounds, smoke)
        return 0
    wanted = [a for a in argv if not a.startswith("--")]
    print("CPU: %s; best of %d alternating rounds per row%s" % (cpu_name(), rounds, " (smoke)" if smoke else ""))
    print()
    print("| row | peer is | peer | usmbridge | ratio | allocs peer / usmbridge |")
    print("|---|---|---:|---:|---:|---|")
    status = 0
    for key in list(PY_ROWS) + [r[0] for r in GO_ROWS]:
        if wanted and key not in wanted:
            continue
        if key in PY_ROWS:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--row", key] + (["--smoke"] if smoke else []),
                                 capture_output=True, text=True, env=dict(os.environ, USMBRIDGE_BENCH_ROUNDS=str(rounds)))
            if out.returncode != 0:
                print("| %s | row failed: %s | | | | |" % (PY_ROWS[key][0], (out.stderr.strip().splitlines() or ["?"])[-1]))
                status = 1
                continue
            results = [json.loads(out.stdout)]
        else:
            results = run_go_row(key, rounds, smoke)
        for r in results:
            if "skipped" in r:
                print("| %s | %s | skipped: %s | | | |" % (r["row"], r["peer"], r["skipped"]))
                continue
            allocs = ""
            if r.get("peer_allocs") is not None:
                allocs = "%s / %s" % (r["peer_allocs"], r["ours_allocs"])
            print("| %s | %s | %s | %s | %.2f | %s |" % (r["row"], r["peer"], fmt_time(r["peer_ns"]), fmt_time(r["ours_ns"]),
                                                       r["ours_ns"] / r["peer_ns"], allocs))
        sys.stdout.flush()
    if not wanted or "from_dlpack" in wanted:
        # What the from_dlpack row's usmbridge time is made of (bench_floor.py).
        print()
        floor = [sys.executable, os.path.join(here, "bench_floor.py"), "--rounds", str(rounds)]
        out = subprocess.run(floor + (["--number", "10"] if smoke else []), capture_output=True, text=True)
        if out.returncode != 0:
            print("from_dlpack breakdown failed: %s" % (out.stderr.strip().splitlines() or ["?"])[-1])
            status = 1
        else:
            print("`usmbridge.from_dlpack(numpy array)`, piece by piece (python/bench/bench_floor.py):")
            print()
            print("```")
            print(out.stdout.rstrip())
            print("```")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
