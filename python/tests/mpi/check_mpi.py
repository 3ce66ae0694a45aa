"""Runs under `mpiexec -n N python -m mpi4py check_mpi.py` (mpi_test.go).

Every rank moves usmbridge arrays through mpi4py over host memory (NumPy),
shared and device USM on opencl:cpu (dpnp.tensor arrays) and dpnp arrays,
all wrapped by usmbridge, and checks the results element by element. Zero
copy is shown twice: the address mpi4py hands MPI (its DLPack path) is the
USM pointer, and data received lands in the producer's own array.

The arrays' queues are waited on before MPI touches them: mpi4py asks
for __dlpack__(stream=-1), under which the consumer owns the ordering.
"""
import sys

import dpctl
import dpnp
import dpnp.tensor as dpt
import numpy as np
import usmbridge as ub
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
q = dpctl.SyclQueue("opencl:cpu")
N = 1000
checks = 0


class Buf:
    """A usmbridge array over one kind of memory, and the producer's own
    object to read it back through (no copy in between)."""

    def __init__(self, kind, values):
        values = np.asarray(values)
        self.kind = kind
        if kind == "numpy":
            self.base = values.copy()
            self.arr = ub.from_dlpack(self.base)
            self.ptr = self.base.ctypes.data
        elif kind == "dpnp":
            self.base = dpnp.asarray(values, sycl_queue=q)
            self.arr = ub.asarray(self.base)
            self.ptr = self.base.__sycl_usm_array_interface__["data"][0]
        else:
            self.base = dpt.asarray(values, sycl_queue=q, usm_type=kind)
            self.arr = ub.asarray(self.base)
            self.ptr = self.base.__sycl_usm_array_interface__["data"][0]
        q.wait()

    def read(self):
        if self.kind == "numpy":
            return self.base.copy()
        if self.kind == "dpnp":
            return dpnp.asnumpy(self.base)
        return dpt.asnumpy(self.base)


def check(what, got, want):
    global checks
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)[:5] if got.shape == want.shape else []
        raise AssertionError(f"rank {rank}: {what}: got {got[:8]}... want {want[:8]}... first differences at {bad}")
    checks += 1


def expect_error(what, exc, fn):
    global checks
    try:
        fn()
    except exc:
        checks += 1
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"rank {rank}: {what}: raised {type(e).__name__}: {e}, want {exc.__name__}")
    raise AssertionError(f"rank {rank}: {what}: no {exc.__name__}")


def pattern(r, dtype):
    return (np.arange(N) * 7 + r * 1000).astype(dtype)


def run(kind):
    # Zero copy: the buffer mpi4py makes (and passes to MPI) starts at the
    # producer's pointer, with the array's size.
    b = Buf(kind, pattern(rank, "i4"))
    mb = MPI.buffer(b.arr)
    check(kind + " MPI.buffer address", mb.address, b.ptr)
    check(kind + " MPI.buffer nbytes", mb.nbytes, 4 * N)

    # Send/Recv: even ranks send to the next odd rank.
    peer = rank + 1 if rank % 2 == 0 else rank - 1
    if peer < size:
        if rank % 2 == 0:
            comm.Send(Buf(kind, pattern(rank, "i4")).arr, dest=peer, tag=1)
        else:
            r = Buf(kind, np.zeros(N, "i4"))
            comm.Recv(r.arr, source=peer, tag=1)
            check(kind + " Recv", r.read(), pattern(peer, "i4"))

    # Bcast from rank 0 into every rank's own memory.
    r = Buf(kind, pattern(0, "i4") if rank == 0 else np.zeros(N, "i4"))
    comm.Bcast(r.arr, root=0)
    check(kind + " Bcast", r.read(), pattern(0, "i4"))

    # Allreduce (sum) of float32; exact for these small integers.
    s = Buf(kind, pattern(rank, "f4"))
    r = Buf(kind, np.zeros(N, "f4"))
    comm.Allreduce(s.arr, r.arr, op=MPI.SUM)
    check(kind + " Allreduce", r.read(), sum(pattern(k, "f4") for k in range(size)).astype("f4"))

    # Non-blocking ring: send to the right, receive from the left.
    right, left = (rank + 1) % size, (rank - 1) % size
    s = Buf(kind, pattern(rank, "f8"))
    r = Buf(kind, np.zeros(N, "f8"))
    reqs = [comm.Irecv(r.arr, source=left, tag=2), comm.Isend(s.arr, dest=right, tag=2)]
    MPI.Request.Waitall(reqs)
    check(kind + " Isend/Irecv", r.read(), pattern(left, "f8"))

    # Receiving into a read-only array is refused before MPI is called.
    ro = Buf(kind, np.zeros(N, "i4"))
    if kind == "numpy":
        ro.base.flags.writeable = False
        ro.arr = ub.from_dlpack(ro.base)
    else:
        ro.base.flags["W"] = False
        ro.arr = ub.asarray(ro.base)
    expect_error(kind + " Irecv into read-only", BufferError, lambda: comm.Irecv(ro.arr, source=left, tag=3))
    # ... while sending from it is fine (MPI only reads).
    check(kind + " read-only MPI.buffer", MPI.buffer(ro.arr).readonly, True)

    # Strided arrays are refused: MPI takes contiguous buffers.
    st = Buf(kind, np.zeros(2 * N, "i4"))
    strided = ub.from_dlpack(st.base[::2]) if kind == "numpy" else ub.asarray(st.base[::2])
    expect_error(kind + " strided Send", BufferError, lambda: comm.Isend(strided, dest=right, tag=4))


for kind in sys.argv[1:] or ["numpy", "shared", "device", "dpnp"]:
    run(kind)
    comm.Barrier()
print(f"rank {rank}/{size}: {checks} checks passed, {MPI.Get_library_version().splitlines()[0].strip()}", flush=True)
