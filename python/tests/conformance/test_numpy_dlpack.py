"""numpy's numpy/_core/tests/test_dlpack.py (numpy 2.4.6), re-expressed against usmbridge.

There the peer object is numpy.ndarray, a DLPack producer and (through
numpy.from_dlpack) a consumer of host (kDLCPU) memory. Here usmbridge.Array
takes that role: usmbridge.from_dlpack consumes NumPy's arrays (and NumPy's
"old" producer that only knows ``__dlpack__(stream=None)``), and the
Array's ``__dlpack__``/``__dlpack_device__`` are what numpy.from_dlpack
consumes. Each case runs on host memory, as numpy's do; where the
behaviour also holds for USM, the case runs on a dpnp.tensor array too.

Our test                                   re-expresses (numpy TestDLPack method)
-----------------------------------------  -----------------------------------------
test_dunder_dlpack_refcount                test_dunder_dlpack_refcount
test_dunder_dlpack_refcount_usm            test_dunder_dlpack_refcount (USM: lifetime)
test_dunder_dlpack_stream                  test_dunder_dlpack_stream
test_dunder_dlpack_copy                    test_dunder_dlpack_copy
test_strides_not_multiple_of_itemsize      test_strides_not_multiple_of_itemsize
test_from_dlpack_refcount                  test_from_dlpack_refcount
test_dtype_passthrough                     test_dtype_passthrough
test_invalid_dtype                         test_invalid_dtype
test_invalid_byte_swapping                 test_invalid_byte_swapping
test_non_contiguous                        test_non_contiguous
test_higher_dims                           test_higher_dims
test_dlpack_device                         test_dlpack_device
test_dlpack_destructor_exception           test_dlpack_destructor_exception (with dlpack_deleter_exception)
test_readonly                              test_readonly
test_writeable                             test_writeable
test_ndim0                                 test_ndim0
test_size1dims_arrays                      test_size1dims_arrays
test_copy                                  test_copy
test_device                                test_device (see below)

Every numpy case applies; none is left out. Where the standard leaves the
choice open and usmbridge decided differently from numpy, the test states
usmbridge's rule and the reason:
- test_device: numpy's device objects are strings ("cpu"); usmbridge's
  are the DLPack (device_type, device_id) tuples Array.device returns, and
  from_dlpack also takes "cpu", SYCL filter strings and dpctl devices and
  queues. A string naming no device ("gpu" here) is numpy's ValueError; a
  DLPack pair nobody here can provide, (kDLCUDA, 0), is the producer's
  BufferError, propagated as the array API asks.
"""
import gc
import re
import sys
import weakref

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import usmbridge as ub

KDLCPU = (1, 0)


class OldDLPack(np.ndarray):
    """A producer that only knows the pre-2023.12 signature."""

    def __dlpack__(self, stream=None):
        return super().__dlpack__(stream=None)


def new_and_old():
    return [np.arange(5), np.arange(5).view(OldDLPack)]


@pytest.fixture(params=["host", "usm"])
def memory(request):
    """Makes usmbridge arrays over host memory (numpy) or over USM (dpnp)."""
    if request.param == "host":
        return lambda x: ub.from_dlpack(x)
    dpt = pytest.importorskip("dpnp.tensor")
    dpctl = pytest.importorskip("dpctl")
    q = dpctl.SyclQueue()
    return lambda x: ub.asarray(dpt.asarray(x, sycl_queue=q))


MAX_VERSIONS = [(0, 0), None, (1, 0), (100, 3)]


@pytest.mark.parametrize("max_version", MAX_VERSIONS)
def test_dunder_dlpack_refcount(max_version):
    a = ub.from_dlpack(np.arange(5))
    cap = a.__dlpack__(max_version=max_version)
    before = sys.getrefcount(a)
    del cap
    assert before - sys.getrefcount(a) == 1


@pytest.mark.parametrize("max_version", MAX_VERSIONS)
def test_dunder_dlpack_refcount_usm(max_version):
    # For USM the Array is a view; what an export must keep alive is the
    # producer's object that owns the memory (usmbridge counts its
    # references in Go, so the check is on lifetime, not on refcounts).
    dpt = pytest.importorskip("dpnp.tensor")
    t = dpt.arange(5)
    alive = weakref.ref(t)
    a = ub.asarray(t)
    cap = a.__dlpack__(max_version=max_version)
    del a, t
    gc.collect()
    assert alive() is not None
    del cap
    gc.collect()
    assert alive() is None


def test_dunder_dlpack_stream():
    a = ub.from_dlpack(np.arange(5))
    a.__dlpack__(stream=None)
    # NumPy's class: RuntimeError up to NumPy 2.4, ValueError from 2.5 on.
    with pytest.raises(Exception) as numpy_error:
        np.arange(5).__dlpack__(stream=1)
    with pytest.raises(numpy_error.type):
        a.__dlpack__(stream=1)


def test_dunder_dlpack_copy(memory):
    a = memory(np.arange(5))
    for c in (True, None, False, np.True_, np.False_):
        a.__dlpack__(copy=c)
    with pytest.raises(ValueError):
        a.__dlpack__(copy=np.array([1, 2, 3]))  # its truth value is ambiguous
    with pytest.raises(ValueError):
        a.__dlpack__(copy="yes")


def test_strides_not_multiple_of_itemsize():
    rec = np.zeros(5, dtype=[("int", np.int32), ("char", np.int8)])
    with pytest.raises(BufferError):
        ub.from_dlpack(rec["int"])


@pytest.mark.parametrize("arr", new_and_old(), ids=["new", "old"])
def test_from_dlpack_refcount(arr):
    arr = arr.copy()
    a = ub.from_dlpack(arr)
    before = sys.getrefcount(arr)
    del a
    assert before - sys.getrefcount(arr) == 1


DTYPES = [np.bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("arr", new_and_old(), ids=["new", "old"])
def test_dtype_passthrough(arr, dtype):
    x = arr.astype(dtype)
    a = ub.from_dlpack(x)
    assert np.dtype(a.dtype) == x.dtype  # typestr as dpctl writes it: "|f8"
    y = np.from_dlpack(a)
    assert y.dtype == x.dtype
    assert_array_equal(x, y)


def test_invalid_dtype():
    with pytest.raises(BufferError):
        ub.from_dlpack(np.asarray(np.datetime64("2021-05-27")))


def test_invalid_byte_swapping():
    with pytest.raises(BufferError):
        ub.from_dlpack(np.arange(5, dtype=np.dtype("=i8").newbyteorder()))


def test_non_contiguous():
    x = np.arange(25).reshape((5, 5))
    for v in (x[0], x[:, 0], x[1, :], x[1], np.diagonal(x).copy(), x[::-2, 1::2]):
        a = ub.from_dlpack(v)
        assert a.data == v.ctypes.data
        assert_array_equal(v, np.from_dlpack(a))


@pytest.mark.parametrize("ndim", range(33))
def test_higher_dims(ndim):
    shape = (1,) * ndim
    a = ub.from_dlpack(np.zeros(shape, dtype=np.float64))
    assert a.shape == shape
    assert np.from_dlpack(a).shape == shape


def test_dlpack_device():
    a = ub.from_dlpack(np.arange(5))
    assert a.__dlpack_device__() == KDLCPU and a.device == KDLCPU
    b = ub.from_dlpack(a)
    assert b.__dlpack_device__() == KDLCPU
    c = ub.from_dlpack(np.from_dlpack(b)[::2])
    assert c.__dlpack_device__() == KDLCPU


def _export_then_raise(a, max_version):
    _ = a.__dlpack__(max_version=max_version)
    raise RuntimeError


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_dlpack_destructor_exception(memory, max_version):
    a = memory(np.arange(5))
    before = ub._stats()
    with pytest.raises(RuntimeError):
        _export_then_raise(a, max_version)
    after = ub._stats()
    assert after["live_exports"] == before["live_exports"]  # Go's exports and C's replays alike
    assert after["stray_deletes"] == before["stray_deletes"]


@pytest.mark.parametrize("kind", ["host", "usm"])
def test_readonly(kind):
    x = np.arange(5)
    if kind == "host":
        x.flags.writeable = False
        a = ub.from_dlpack(x)
    else:
        dpt = pytest.importorskip("dpnp.tensor")
        t = dpt.asarray(x)
        t.flags["W"] = False
        a = ub.asarray(t)
    assert a.readonly
    with pytest.raises(BufferError):
        a.__dlpack__()  # a legacy capsule cannot say read-only
    y = np.from_dlpack(a, device="cpu")
    assert not y.flags.writeable
    assert_array_equal(y, x)


def test_writeable():
    new, old = new_and_old()
    assert not ub.from_dlpack(new).readonly
    # A legacy capsule cannot say whether the memory may be written: read-only,
    # as numpy has it (a flag is never dropped, RATIONALE.md).
    assert ub.from_dlpack(old).readonly
    assert not np.from_dlpack(old).flags.writeable


def test_ndim0(memory):
    x = np.array(1.0)
    a = memory(x)
    assert a.shape == ()
    assert_array_equal(x, np.from_dlpack(a, device="cpu"))


def test_size1dims_arrays():
    x = np.ndarray(dtype="f8", shape=(10, 5, 1), strides=(8, 80, 4),
                   buffer=np.ones(1000, dtype=np.uint8), order="F")
    a = ub.from_dlpack(x)
    assert a.shape == (10, 5, 1)
    assert_array_equal(x, np.from_dlpack(a))


def test_copy():
    x = np.arange(5)
    assert np.may_share_memory(x, np.from_dlpack(ub.from_dlpack(x)))
    assert np.may_share_memory(x, np.from_dlpack(ub.from_dlpack(x, copy=False)))
    c = np.from_dlpack(ub.from_dlpack(x, copy=True))
    assert not np.may_share_memory(x, c)
    assert_array_equal(x, c)
    # and as the producer numpy consumes
    a = ub.from_dlpack(x)
    assert np.may_share_memory(x, np.from_dlpack(a, copy=False))
    assert not np.may_share_memory(x, np.from_dlpack(a, copy=True))


def test_device():
    x = np.arange(5)
    a = ub.from_dlpack(x)
    a.__dlpack__(dl_device=KDLCPU)
    assert ub.from_dlpack(x, device=KDLCPU).device == KDLCPU
    assert ub.from_dlpack(x, device=None).device == KDLCPU
    assert np.from_dlpack(a, device="cpu").__dlpack_device__() == KDLCPU
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(10, 0))
    # A device numpy cannot export to: numpy's own refusal comes back
    # (BufferError since numpy 2.3, ValueError before; docs/python.md, "Errors").
    with pytest.raises(Exception) as refusal:
        x.__dlpack__(dl_device=(2, 0))
    assert refusal.type in (BufferError, ValueError), refusal.value
    with pytest.raises(refusal.type, match=re.escape(str(refusal.value))):
        ub.from_dlpack(x, device=(2, 0))
    assert ub.from_dlpack(x, device="cpu").device == KDLCPU  # numpy's own name for the host
    with pytest.raises(ValueError):  # as numpy: a device it cannot provide
        ub.from_dlpack(x, device="gpu")
    with pytest.raises(ValueError):
        np.from_dlpack(x, device="gpu")
