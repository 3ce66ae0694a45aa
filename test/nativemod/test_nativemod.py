"""How SYCL consumers take USM of usmbridge's native OpenCL backend
(nativemod's arrays): through a SYCL context and queue made from the
native ones, dpnp and dpnp.tensor use it in place, and Go sees what they
write; memory no SYCL context can be made for is refused with a
ValueError that says what to do. test/native_test.go builds nativemod and
runs this file (RATIONALE.md, "Native allocations and SYCL consumers")."""
import gc

import dpctl
import dpnp
import dpnp.tensor as dpt
import numpy as np
import pytest

import nativemod


def pointer(x):
    return x.__sycl_usm_array_interface__["data"][0]


@pytest.mark.parametrize("kind", ["shared", "device", "host"])
def test_dpnp_reads_and_writes_in_place(kind):
    a = nativemod.ramp(1000, kind)
    x = dpnp.asarray(a)
    assert x.usm_type == kind
    assert pointer(x) == pointer(a), "no copy"
    assert (dpnp.asnumpy(x) == np.arange(1000)).all()
    x += 5
    # Go reads after waiting on the array's own queue, which SYCL's queue wraps.
    assert np.asarray(nativemod.values(a)).tolist() == list(range(5, 1005))
    y = dpt.asarray(a)
    assert pointer(y) == pointer(a)
    assert (dpt.asnumpy(y) == np.arange(5, 1005)).all()
    m = dpctl.memory.as_usm_memory(a)
    assert m._pointer == pointer(a) and m.sycl_queue == a.sycl_queue


def test_one_sycl_queue_per_native_queue():
    a, b = nativemod.ramp(4), nativemod.ramp(4)
    assert a.sycl_queue == b.sycl_queue
    assert a.sycl_queue.sycl_device == dpctl.SyclDevice("opencl:cpu")
    assert a.sycl_queue.sycl_context != dpctl.SyclQueue("opencl:cpu").sycl_context
    assert a.__sycl_usm_array_interface__["syclobj"] == a.sycl_queue
    z = dpnp.asarray(a) + dpnp.asarray(b)  # one queue: dpnp may combine them
    assert dpnp.asnumpy(z).tolist() == [0, 2, 4, 6]


def test_memory_sycl_cannot_see_is_refused():
    a = nativemod.ramp(4, memory="svm")  # PoCL's device has no USM in SYCL
    for read in (lambda: a.__sycl_usm_array_interface__, lambda: dpnp.asarray(a),
                 lambda: dpt.asarray(a), lambda: a.__usm_ndarray__, lambda: a.sycl_queue):
        with pytest.raises(ValueError, match=r"native OpenCL context.*cannot see.*pyext\.Empty"):
            read()
    assert np.asarray(a).tolist() == [0, 1, 2, 3], "the host still reads it"


def test_dlpack_consumers_look_in_the_default_context():
    # kDLOneAPI names a device, and dpnp finds the memory through that
    # device's default context, which does not know it: dpnp refuses. A
    # host view, which every producer gives, works.
    a = nativemod.ramp(4)
    with pytest.raises(BufferError):
        dpt.from_dlpack(a)
    assert np.from_dlpack(a, device="cpu").tolist() == [0, 1, 2, 3]


def test_no_leaks():
    gc.collect()
    before = nativemod.live()["allocations"]
    for _ in range(50):
        a = nativemod.ramp(16)
        q = a.sycl_queue
        x = dpnp.asarray(a)
        x += 1
        y = dpt.asarray(a)
        del a, x, y
        q.wait()  # dpnp keeps its arguments alive until its kernels are done
    gc.collect()
    assert nativemod.live()["allocations"] == before


def test_sycl_queue_outlives_the_backend():
    # SYCL does not retain the native context and queue: one reference to
    # each is lent to it for the life of the process, so a queue Python
    # kept still works after the backend that made them is closed.
    a = nativemod.ramp(4)
    q = a.sycl_queue
    x = dpnp.asarray(a)
    x += 1
    del a, x
    q.wait()
    gc.collect()
    nativemod.close()
    assert nativemod.live()["allocations"] == 0
    assert nativemod.live()["queues"] >= 1, "the lent queue"
    y = dpnp.ones(8, sycl_queue=q)
    y += 1
    assert float(y.sum()) == 16.0
    del y
    b = nativemod.ramp(4)  # a new backend, a new lend
    assert b.sycl_queue != q
    assert dpnp.asnumpy(dpnp.asarray(b)).tolist() == [0, 1, 2, 3]
