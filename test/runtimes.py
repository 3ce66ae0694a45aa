"""Two Go runtimes in one interpreter: usmbridge._ext and saxpy, each a
c-shared Go library with its own runtime, passing arrays to each other
from two threads while both collect garbage often (GOGC set low by the
caller). test/runtimes_test.go runs it in a child process; it prints the
round trips made and exits 0 when every result was right."""
import gc
import os
import sys
import threading

import numpy as np

import saxpy
import usmbridge as ub

ROUNDS = int(os.environ.get("UB_RUNTIME_ROUNDS", "20000"))
errors = []


def ub_into_saxpy():
    """usmbridge's arrays (Go state in usmbridge's runtime) into saxpy."""
    try:
        for i in range(ROUNDS):
            x = ub.from_dlpack(np.full(64, 2, dtype="f4"), copy=True)
            y = ub.from_dlpack(np.zeros(64, dtype="f4"), copy=True)
            saxpy.saxpy(1.5, x, y)
            assert np.from_dlpack(y)[63] == 3.0
            if i % 2000 == 0:
                gc.collect()
    except BaseException as e:
        errors.append(e)


def saxpy_into_ub():
    """saxpy's arrays (Go memory of saxpy's runtime) into usmbridge, and back."""
    try:
        for i in range(ROUNDS):
            r = saxpy.ramp(64)
            a = ub.from_dlpack(r)                  # through saxpy's Array protocols
            b = ub.from_dlpack(a, copy=True)       # a copy in usmbridge's runtime
            y = np.zeros(64, dtype="f4")
            saxpy.saxpy(2.0, b, y)                 # and back into saxpy
            assert y[10] == 20.0 and np.from_dlpack(a)[63] == 63.0
            if i % 2000 == 0:
                gc.collect()
    except BaseException as e:
        errors.append(e)


threads = [threading.Thread(target=ub_into_saxpy), threading.Thread(target=saxpy_into_ub)]
for t in threads:
    t.start()
for t in threads:
    t.join()
gc.collect()
if errors:
    raise errors[0]
print("%d round trips each way, %s" % (ROUNDS, {k: v for k, v in ub._stats().items() if k in ("handles", "live_exports", "live_imports", "panics")}))
