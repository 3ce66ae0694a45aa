"""Allreduce between MPI ranks: usmbridge over shared USM vs NumPy arrays.

    USMBRIDGE_LIB=... OCL_ICD_VENDORS=... \
        mpiexec -launcher fork -n 2 python python/bench/bench_mpi.py

For 1 MiB and 64 MiB of float32, times comm.Allreduce(SUM) of a usmbridge
array over shared USM on opencl:cpu (usmbridge.asarray of a dpnp.tensor
array; mpi4py reaches its memory through __dlpack__(stream=-1), zero copy)
and of a NumPy array of the same size (mpi4py's buffer protocol). The two
run in alternating rounds; each keeps its best round (the mean over a few
reductions). Rank 0 prints the table; ratio = usmbridge / numpy. Two more
columns tell the memory from the wrapper: the same shared USM handed to MPI
by address (MPI.memory.fromaddress, no usmbridge), and usmbridge arrays over
the NumPy arrays. With transparent huge pages in "madvise" mode NumPy asks
for huge pages for large arrays and the SYCL runtime's USM does not; at
64 MiB that, not usmbridge, separates the first two columns
(numpy._core.multiarray._set_madvise_hugepage(False) evens them).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dpctl
import dpnp.tensor as dpt
import numpy as np
import usmbridge as ub
from mpi4py import MPI

comm = MPI.COMM_WORLD
q = dpctl.SyclQueue("opencl:cpu")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))


def round_time(send, recv, reps):
    comm.Barrier()
    t = time.perf_counter()
    for _ in range(reps):
        comm.Allreduce(send, recv, op=MPI.SUM)
    return (time.perf_counter() - t) / reps


rows = []
for mib in (1, 64):
    n = mib * (1 << 20) // 4
    reps = max(2, 64 // mib)
    hs, hr = np.ones(n, np.float32), np.zeros(n, np.float32)
    ds = dpt.ones(n, dtype="f4", sycl_queue=q, usm_type="shared")
    dr = dpt.zeros(n, dtype="f4", sycl_queue=q, usm_type="shared")
    q.wait()  # mpi4py asks for stream=-1: the queue is ours to wait on
    us, ur = ub.asarray(ds), ub.asarray(dr)
    assert MPI.buffer(us).address == ds.__sycl_usm_array_interface__["data"][0]
    # The same shared USM handed to MPI by address, without usmbridge:
    # what the memory itself costs, apart from how it reaches MPI.
    rs = MPI.memory.fromaddress(ds.__sycl_usm_array_interface__["data"][0], 4 * n)
    rr = MPI.memory.fromaddress(dr.__sycl_usm_array_interface__["data"][0], 4 * n)
    # usmbridge over the NumPy arrays: what the wrapper costs on the same memory.
    uhs, uhr = ub.from_dlpack(hs), ub.from_dlpack(hr)
    cases = [(hs, hr), (us, ur), ([rs, MPI.FLOAT], [rr, MPI.FLOAT]), (uhs, uhr)]
    best = [float("inf")] * len(cases)
    for _ in range(ROUNDS):
        for i, (s, r) in enumerate(cases):
            best[i] = min(best[i], comm.allreduce(round_time(s, r, reps), op=MPI.MAX))
    assert (hr == comm.size).all() and (dpt.asnumpy(dr) == comm.size).all()
    rows.append((mib, *best))

if comm.rank == 0:
    print(f"Allreduce float32, {comm.size} ranks, {MPI.Get_library_version().splitlines()[0].strip()}, best of {ROUNDS} alternating rounds")
    print("| size | numpy (ms) | usmbridge shared USM (ms) | ratio | shared USM by address, no usmbridge (ms) | usmbridge / by address | usmbridge over numpy (ms) | / numpy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mib, a, b, c, d in rows:
        print(f"| {mib} MiB | {a * 1e3:.3f} | {b * 1e3:.3f} | {b / a:.3f} | {c * 1e3:.3f} | {b / c:.3f} | {d * 1e3:.3f} | {d / a:.3f} |")
