"""Allreduce between MPI ranks: usmbridge over shared USM vs NumPy arrays.

    USMBRIDGE_LIB=... OCL_ICD_VENDORS=... \
        mpiexec -launcher fork -n 2 python python/bench/bench_mpi.py [--switches] [--hugepages]

For 1 MiB and 64 MiB of float32 (--sizes), times comm.Allreduce(SUM) of a
usmbridge array over shared USM on opencl:cpu (usmbridge.asarray of a
dpnp.tensor array; mpi4py reaches its memory through __dlpack__(stream=-1),
zero copy) and of a NumPy array of the same size (mpi4py's buffer
protocol). The cases run in alternating rounds; each keeps its best round
(the mean over a few reductions). Rank 0 prints the table; ratio =
usmbridge / numpy. Two more columns tell the memory from the wrapper: the
same shared USM handed to MPI by address (MPI.memory.fromaddress, no
usmbridge), and usmbridge arrays over the NumPy arrays.

--switches adds, per case, what each Allreduce costs the process in
context switches (from /proc/self/task/*/status, summed over ranks and
rounds): involuntary switches of the rank's own thread (it was preempted)
and wake-ups of its other threads (their voluntary switches: Go's sysmon
and idle Ms, the SYCL runtime's workers). Two busy ranks on two cores have
no core to spare: every wake-up there preempts a rank.

--hugepages adds cases that tell the memory's page size from everything
else: NumPy arrays allocated without huge pages
(numpy._core.multiarray._set_madvise_hugepage(False); NumPy asks for them
for arrays of 4 MiB and more when transparent huge pages are in "madvise"
mode), and the shared USM after this script, not usmbridge, madvise()s it
with MADV_HUGEPAGE (the SYCL runtime's USM is not advised). It prints the
share of each buffer the kernel backs with huge pages (AnonHugePages in
/proc/self/smaps).
"""
import argparse
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dpctl
import dpnp.tensor as dpt
import numpy as np
import usmbridge as ub
from mpi4py import MPI

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="1,64", help="MiB, comma-separated")
ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "15")))
ap.add_argument("--switches", action="store_true", help="context switches per Allreduce, per case")
ap.add_argument("--hugepages", action="store_true", help="cases with and without transparent huge pages")
args = ap.parse_args()

comm = MPI.COMM_WORLD
q = dpctl.SyclQueue("opencl:cpu")
MADV_HUGEPAGE = 14
_libc = ctypes.CDLL(None, use_errno=True)
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def switches():
    """(involuntary switches of this thread, voluntary switches of the others)."""
    me, inv, others = str(__import__("threading").get_native_id()), 0, 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                s = f.read()
        except OSError:  # the thread ended
            continue
        v = int(s.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        nv = int(s.split("nonvoluntary_ctxt_switches:")[1].split()[0])
        if tid == me:
            inv += nv
        else:
            others += v
    return inv, others


def huge_share(addr, nbytes):
    """The share of [addr, addr+nbytes) in mappings' AnonHugePages (an estimate
    from the mappings that overlap the range)."""
    huge = 0
    lo = hi = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
            elif head[0] == "AnonHugePages:" and lo < addr + nbytes and hi > addr:
                overlap = min(hi, addr + nbytes) - max(lo, addr)
                huge += min(int(head[1]) * 1024, overlap)
    return huge / nbytes


def madvise_huge(addr, nbytes):
    """MADV_HUGEPAGE on the 2 MiB-aligned part of [addr, addr+nbytes)."""
    lo, hi = -(-addr // (2 << 20)) * (2 << 20), (addr + nbytes) // (2 << 20) * (2 << 20)
    if hi > lo and _libc.madvise(lo, hi - lo, MADV_HUGEPAGE) != 0:
        raise OSError(ctypes.get_errno(), "madvise")


def round_time(send, recv, reps, counts):
    comm.Barrier()
    c0 = switches() if counts is not None else None
    t = time.perf_counter()
    for _ in range(reps):
        comm.Allreduce(send, recv, op=MPI.SUM)
    dt = (time.perf_counter() - t) / reps
    if counts is not None:
        c1 = switches()
        counts[0] += c1[0] - c0[0]
        counts[1] += c1[1] - c0[1]
        counts[2] += reps
    return dt


def usm_pair(n, advise=False):
    ds = dpt.empty(n, dtype="f4", sycl_queue=q, usm_type="shared")
    dr = dpt.empty(n, dtype="f4", sycl_queue=q, usm_type="shared")
    if advise:  # before the first touch: pages faulted in before stay small
        for x in (ds, dr):
            madvise_huge(addr(x), 4 * n)
    ds[...] = 1
    dr[...] = 0
    q.wait()  # mpi4py asks for stream=-1: the queue is ours to wait on
    return ds, dr


def addr(x):
    return x.__sycl_usm_array_interface__["data"][0]


results = []
for mib in (int(s) for s in args.sizes.split(",")):
    n = mib * (1 << 20) // 4
    reps = max(2, 64 // mib)
    hs, hr = np.ones(n, np.float32), np.zeros(n, np.float32)
    ds, dr = usm_pair(n)
    us, ur = ub.asarray(ds), ub.asarray(dr)
    assert MPI.buffer(us).address == addr(ds)
    # The same shared USM handed to MPI by address, without usmbridge:
    # what the memory itself costs, apart from how it reaches MPI.
    rs, rr = MPI.memory.fromaddress(addr(ds), 4 * n), MPI.memory.fromaddress(addr(dr), 4 * n)
    # usmbridge over the NumPy arrays: what the wrapper costs on the same memory.
    uhs, uhr = ub.from_dlpack(hs), ub.from_dlpack(hr)
    cases = [("numpy", hs, hr), ("usmbridge shared USM", us, ur),
             ("shared USM by address, no usmbridge", [rs, MPI.FLOAT], [rr, MPI.FLOAT]),
             ("usmbridge over numpy", uhs, uhr)]
    pages = {}
    if args.hugepages:
        np._core.multiarray._set_madvise_hugepage(False)
        ns, nr = np.ones(n, np.float32), np.zeros(n, np.float32)
        np._core.multiarray._set_madvise_hugepage(True)
        hs2, hr2 = usm_pair(n, advise=True)
        cases += [("numpy, no huge pages", ns, nr), ("usmbridge shared USM, madvised", ub.asarray(hs2), ub.asarray(hr2))]
        pages = {"numpy": huge_share(hs.ctypes.data, 4 * n), "usmbridge shared USM": huge_share(addr(ds), 4 * n),
                 "numpy, no huge pages": huge_share(ns.ctypes.data, 4 * n),
                 "usmbridge shared USM, madvised": huge_share(addr(hs2), 4 * n)}
    best = [float("inf")] * len(cases)
    counts = [[0, 0, 0] for _ in cases] if args.switches else [None] * len(cases)
    for _ in range(args.rounds):
        for i, (_, s, r) in enumerate(cases):
            best[i] = min(best[i], comm.allreduce(round_time(s, r, reps, counts[i]), op=MPI.MAX))
    assert (hr == comm.size).all() and (dpt.asnumpy(dr) == comm.size).all()
    if args.switches:
        counts = [[comm.allreduce(v) for v in c] for c in counts]
    pages = {k: comm.allreduce(v) / comm.size for k, v in pages.items()}
    results.append((mib, [c[0] for c in cases], best, counts, pages))

if comm.rank == 0:
    print(f"Allreduce float32, {comm.size} ranks, {MPI.Get_library_version().splitlines()[0].strip()}, best of {args.rounds} alternating rounds")
    print("| size | numpy (ms) | usmbridge shared USM (ms) | ratio | shared USM by address, no usmbridge (ms) | usmbridge / by address | usmbridge over numpy (ms) | / numpy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mib, names, (a, b, c, d, *_), _, _ in results:
        print(f"| {mib} MiB | {a * 1e3:.3f} | {b * 1e3:.3f} | {b / a:.3f} | {c * 1e3:.3f} | {b / c:.3f} | {d * 1e3:.3f} | {d / a:.3f} |")
    if args.switches or args.hugepages:
        print()
        print("| size | case | best (ms) | / numpy | preempted per Allreduce | other threads woken per Allreduce | huge pages |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for mib, names, best, counts, pages in results:
            for name, t, c in zip(names, best, counts):
                sw = (f"{c[0] / c[2]:.2f} | {c[1] / c[2]:.2f}" if c else " | ")
                hp = f"{pages[name]:.0%}" if name in pages else ""
                print(f"| {mib} MiB | {name} | {t * 1e3:.3f} | {t / best[0]:.3f} | {sw} | {hp} |")
