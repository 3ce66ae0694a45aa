"""The DLPack C exchange API against __dlpack__, per array (host, 1024 f4).

    USMBRIDGE_LIB=... python python/bench/bench_exchange.py

Each row times two ways of the same exchange in alternating rounds, best
of 7 x 20000 calls; ratio = first / second (< 1: the first is faster).
"__dlpack__" rows hand the consumer the same array behind a wrapper that
offers only __dlpack__/__dlpack_device__, so the consumer cannot use the
table (usmbridge.Array's type always has it); the wrapper adds one
Python-level call to that side. The last row is the peer: tvm-ffi's own producer into tvm-ffi,
against usmbridge's producer into tvm-ffi, both through the table.
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import timeit
import numpy as np, usmbridge as ub, tvm_ffi
h = np.arange(1024, dtype=np.float32)
a = ub.from_dlpack(h)
class Dunder:  # the same array, offered only through __dlpack__
    def __init__(s, a): s.a = a
    def __dlpack__(s, **kw): return s.a.__dlpack__(**kw)
    def __dlpack_device__(s): return s.a.__dlpack_device__()
d = Dunder(a)
t = tvm_ffi.from_dlpack(h)
W = tvm_ffi.core.DLTensorTestWrapper(t)
class WD:
    def __init__(s, w): s.w = w
    def __dlpack__(s, **kw): return s.w.__dlpack__(**kw)
    def __dlpack_device__(s): return s.w.__dlpack_device__()
wd = WD(W)
rows = [
  ("ours->tvm: tvm_ffi.from_dlpack(ub array), C API vs __dlpack__", lambda: tvm_ffi.from_dlpack(a), lambda: tvm_ffi.from_dlpack(d)),
  ("ours->ours: ub.from_dlpack(ub array), C API vs __dlpack__", lambda: ub.from_dlpack(a), lambda: ub.from_dlpack(d)),
  ("tvm->ours: ub.from_dlpack(tvm wrapper), C API vs __dlpack__", lambda: ub.from_dlpack(W), lambda: ub.from_dlpack(wd)),
  ("peer: tvm_ffi.from_dlpack(tvm wrapper) C API vs ours->tvm C API", lambda: tvm_ffi.from_dlpack(W), lambda: tvm_ffi.from_dlpack(a)),
]
for name, f1, f2 in rows:
    best = [1e9, 1e9]
    for _ in range(7):
        for i, f in enumerate((f1, f2)):
            best[i] = min(best[i], timeit.timeit(f, number=20000) / 20000 * 1e9)
    print("%-66s %6.0f ns %6.0f ns  ratio %.2f" % (name, best[0], best[1], best[0] / best[1]))
