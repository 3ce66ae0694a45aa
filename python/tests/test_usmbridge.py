import ctypes
import gc
import sys
import threading
import numpy as np
import pytest
import usmbridge as ub
from dlstructs import numpy_stream_error

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


def ptr(x):
    s = x.__sycl_usm_array_interface__
    return s["data"][0] + s.get("offset", 0) * int(s["typestr"][2:])


def test_asarray_zero_copy_and_props(q):
    x = dpt.reshape(dpt.arange(12, dtype="f4", sycl_queue=q), (3, 4))[:, ::-2]
    a = ub.asarray(x)
    assert a.shape == (3, 2) and a.dtype == "|f4" and a.strides == (4, -2)
    assert a.usm_type == "device" and a.device == (14, q.sycl_device.get_device_id())
    assert a.data == ptr(x)


@pytest.mark.parametrize("form", ["queue", "context", "filter", "qcap", "ccap", "duck"])
def test_syclobj_forms(q, form):
    x = dpt.arange(5, dtype="i8", sycl_queue=q, usm_type="shared")
    base = x.__sycl_usm_array_interface__

    class Duck:
        def _get_capsule(self):
            return q._get_capsule()

    so = {"queue": lambda: q, "context": lambda: q.sycl_context, "filter": lambda: "opencl:cpu",
          "qcap": lambda: q._get_capsule(), "ccap": lambda: q.sycl_context._get_capsule(),
          "duck": lambda: Duck()}[form]

    class V:
        @property
        def __sycl_usm_array_interface__(self):
            return dict(base, syclobj=so())

    a = ub.asarray(V())
    assert a.data == ptr(x) and a.usm_type == "shared"


def test_capsule_in_dict_is_single_use(q):
    x = dpt.arange(5, sycl_queue=q)
    d = dict(x.__sycl_usm_array_interface__, syclobj=q._get_capsule())

    class V:
        __sycl_usm_array_interface__ = d

    ub.asarray(V())
    with pytest.raises(ValueError):
        ub.asarray(V())


def test_readonly_flag(q):
    m = dpctl.memory.MemoryUSMShared(32, queue=q)
    assert ub.asarray(m).readonly is False  # dpctl.memory's True means writable
    x = dpt.ones(3, sycl_queue=q)

    class RO:
        __sycl_usm_array_interface__ = dict(x.__sycl_usm_array_interface__, data=(x.__sycl_usm_array_interface__["data"][0], True))

    assert ub.asarray(RO()).readonly is True


def test_missing_suai():
    with pytest.raises(ValueError):
        ub.asarray(object())


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (2, 3)])
@pytest.mark.parametrize("ts", ["b1", "i1", "u2", "i4", "u8", "f2", "f4", "f8", "c8", "c16"])
def test_dpctl_round_trip_keeps_pointer(q, shape, ts):
    x = dpt.zeros(shape, dtype=ts, sycl_queue=q)
    a = ub.from_dlpack(x)
    assert a.shape == shape
    y = dpt.from_dlpack(a)
    assert ptr(y) == ptr(x)
    z = dpt.asarray(a)
    assert ptr(z) == ptr(x) and z.shape == shape


def test_negative_strides_round_trip(q):
    x = dpt.arange(10, dtype="i4", sycl_queue=q)[::-3]
    a = ub.from_dlpack(x)
    y = dpt.from_dlpack(a)
    assert ptr(y) == ptr(x)
    assert dpt.asnumpy(y).tolist() == [9, 6, 3, 0]


def test_numpy_round_trip():
    h = np.arange(6, dtype=np.float64).reshape(2, 3).T
    a = ub.from_dlpack(h)
    assert a.device == (1, 0) and a.strides == (1, 3)
    b = np.from_dlpack(a)
    assert np.shares_memory(b, h) and (b == h).all()
    with pytest.raises(AttributeError):
        a.__sycl_usm_array_interface__


@pytest.mark.parametrize("mv,name", [(None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"), ((2, 0), "dltensor_versioned")])
def test_max_version(mv, name):
    a = ub.from_dlpack(np.arange(3.0))
    cap = a.__dlpack__(max_version=mv)
    assert repr(cap).split('"')[1] == name


def test_max_version_validation():
    a = ub.from_dlpack(np.arange(3.0))
    with pytest.raises(TypeError):
        a.__dlpack__(max_version=1)
    with pytest.raises(TypeError):
        a.__dlpack__(dl_device=(1,))


@pytest.mark.parametrize("copy", [None, True, False])
def test_dl_device_cpu(q, copy):
    x = dpt.arange(4, dtype="f4", sycl_queue=q)  # device USM
    a = ub.from_dlpack(x)
    if copy is False:
        with pytest.raises(BufferError):
            a.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=copy)
        return

    class H:
        def __dlpack__(self, **kw):
            return a.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=copy)

        def __dlpack_device__(self):
            return (1, 0)

    assert np.from_dlpack(H()).tolist() == [0, 1, 2, 3]


def test_stream_queue(q):
    a = ub.from_dlpack(dpt.arange(4, sycl_queue=q))
    cap = a.__dlpack__(max_version=(1, 0), stream=dpctl.SyclQueue("opencl:cpu"))
    assert repr(cap).split('"')[1] == "dltensor_versioned"
    with pytest.raises(ValueError):  # test_streams.py has every value
        a.__dlpack__(max_version=(1, 0), stream=5)


def test_consumed_twice_and_wrong_capsule(q):
    x = dpt.arange(4, sycl_queue=q)
    cap = x.__dlpack__(max_version=(1, 0))

    class C:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    ub.from_dlpack(C())
    with pytest.raises(ValueError):
        ub.from_dlpack(C())

    class W(C):
        def __dlpack__(self, **kw):
            return q._get_capsule()

    with pytest.raises(TypeError):
        ub.from_dlpack(W())


def _settled_stats():
    """_stats() after a collection, without its running totals (which
    only grow): what must come back to where it was."""
    gc.collect()
    s = ub._stats()
    del s["dlpack_calls_into_go"], s["c_imports"], s["go_heap_allocs"], s["go_calls"]
    return s


def test_no_leaks(q):
    """10^5 round trips through each path: Go's handles, Go's and C's
    exports and imports, and the source arrays' reference counts all come
    back to where they were, and no deleter ran twice."""
    h = np.arange(8.0)
    x = dpt.arange(8, dtype="f4", sycl_queue=q)
    s0 = _settled_stats()
    r0 = sys.getrefcount(h), sys.getrefcount(x)
    for _ in range(100_000):
        np.from_dlpack(ub.from_dlpack(h))          # C export of a host array
        ub.asarray(x)                              # SUAI ingest
    for _ in range(10_000):
        dpt.from_dlpack(ub.from_dlpack(x))         # Go export of a USM array
        ub.from_dlpack(h).__dlpack__()             # legacy capsule never consumed
    s1 = _settled_stats()
    assert (sys.getrefcount(h), sys.getrefcount(x)) == r0
    assert s1 == s0, (s0, s1)
    assert s1["stray_deletes"] == 0


# ---- the C fast path of __dlpack__ (host arrays) ----

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Versioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _take(cap):
    """Consume a dltensor_versioned capsule by hand: (struct, its address)."""
    p = _api.PyCapsule_GetPointer(cap, b"dltensor_versioned")
    _api.PyCapsule_SetName(cap, b"used_dltensor_versioned")
    return _Versioned.from_address(p), p


@pytest.mark.parametrize("make", [
    lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4)[:, ::-1, 1::2],
    lambda: np.arange(10, dtype=np.float32)[::-3],
    lambda: np.array(7.5),
    lambda: np.zeros((3, 0), dtype=np.complex64),
    lambda: np.arange(6, dtype=np.uint16).reshape(2, 3).T,
], ids=["strided3d", "negative", "0d", "size0", "transposed"])
def test_fast_export_matches_source(make):
    h = make()
    a = ub.from_dlpack(h)
    for _ in range(2):  # the first call makes the template, the second uses it
        b = np.from_dlpack(a)
        assert b.shape == h.shape and b.dtype == h.dtype
        assert np.array_equal(b, h)
        if h.size:
            assert np.shares_memory(b, h)
        assert b.__array_interface__["data"][0] == h.__array_interface__["data"][0]


def test_fast_export_struct():
    h = np.arange(10, dtype=np.int64)[::-2]  # [9, 7, 5, 3, 1]
    a = ub.from_dlpack(h)
    before = sys.getrefcount(a)
    cap = a.__dlpack__(max_version=(1, 1))
    assert sys.getrefcount(a) == before + 1  # the tensor keeps the array alive
    m, p = _take(cap)
    t = m.dl_tensor
    assert (m.major, m.minor, m.flags) == (1, 1, 0)
    assert (t.device.device_type, t.ndim, t.code, t.bits, t.lanes) == (1, 1, 0, 64, 1)
    assert t.shape[0] == 5 and t.strides[0] == -2
    # data is the lowest byte touched; byte_offset leads to element 0
    assert t.data + t.byte_offset == h.__array_interface__["data"][0]
    assert t.byte_offset == 4 * 2 * 8
    s0 = ub._stats()
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)(p)
    assert sys.getrefcount(a) == before
    # one counter set: the C fast path's exports are Go's live_exports
    assert ub._stats()["live_exports"] == s0["live_exports"] - 1
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)(p)  # a consumer's bug: counted, not freed twice
    assert ub._stats()["stray_deletes"] == s0["stray_deletes"] + 1
    del cap  # used_*: the capsule does not delete again


def test_fast_export_deleter_on_other_thread():
    a = ub.from_dlpack(np.arange(4.0))
    before = sys.getrefcount(a)
    m, p = _take(a.__dlpack__(max_version=(1, 0)))
    # ctypes releases the GIL around the call: the deleter takes it itself.
    t = threading.Thread(target=ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter), args=(p,))
    t.start()
    t.join()
    assert sys.getrefcount(a) == before


def test_readonly_host_array():
    h = np.arange(3.0)
    h.flags.writeable = False
    a = ub.from_dlpack(h)
    assert a.readonly is True
    b = np.from_dlpack(a)
    assert b.flags.writeable is False and np.shares_memory(b, h)
    m, p = _take(a.__dlpack__(max_version=(1, 0)))
    assert m.flags & 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)(p)
    with pytest.raises(BufferError):
        a.__dlpack__()  # a legacy tensor cannot say read-only


def test_fast_path_arguments():
    a = ub.from_dlpack(np.arange(3.0))
    for kw in [{}, {"stream": None}, {"copy": False}, {"copy": None}, {"dl_device": (1, 0)},
               {"dl_device": None, "max_version": (1, 0)}, {"max_version": (0, 5)}]:
        assert np.array_equal(np.from_dlpack(_Cap(a, kw)), [0.0, 1.0, 2.0]), kw
    cap = a.__dlpack__(max_version=(1, 0), copy=True)  # Go: a copy flagged IS_COPIED
    m, p = _take(cap)
    assert m.flags & 2 and m.dl_tensor.data != a.data
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)(p)
    with pytest.raises(TypeError):
        a.__dlpack__(1)
    with pytest.raises(TypeError):
        a.__dlpack__(bogus=1)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(14, 0))
    with pytest.raises(numpy_stream_error()):  # NumPy's answer (test_streams.py)
        a.__dlpack__(max_version=(1, 0), stream=3)
    with pytest.raises(TypeError):
        ub.Array()


class _Cap:
    def __init__(self, a, kw):
        self.a, self.kw = a, kw

    def __dlpack__(self, **ignored):
        return self.a.__dlpack__(**self.kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.parametrize("request_, minor", [((1, 0), 0), ((1, 1), 1), ((1, 2), 2), ((1, 7), 2), ((1, 9), 2),
                                             ((1, 2**31), 2), ((2, 0), 2), ((3, 5), 2)])
def test_fast_export_version_is_gos_answer(request_, minor):
    # the fast path answers max_version from the table Go fills with
    # internal/dlabi's NegotiateVersion; larger minors go to Go: the same answers
    a = ub.from_dlpack(np.arange(3.0))
    for _ in range(2):  # the first call makes the template, the second uses it
        m, _ = _take(a.__dlpack__(max_version=request_))
        assert (m.major, m.minor) == (1, minor)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)(ctypes.addressof(m))


def test_suai_is_a_fresh_dict_each_call():
    # ext.c builds the dict once and hands out copies: what a caller does to
    # its dict reaches neither the array nor the next caller (dpnp's arrays
    # give a new dict per call too).
    dpctl = pytest.importorskip("dpctl")
    dpt = pytest.importorskip("dpnp.tensor")
    a = ub.asarray(dpt.arange(6, dtype="f4", sycl_queue=dpctl.SyclQueue("opencl:cpu"))[::2])
    first = a.__sycl_usm_array_interface__
    want = dict(first)
    first["shape"], first["data"] = (0,), None
    del first["syclobj"]
    second = a.__sycl_usm_array_interface__
    assert second is not first
    assert second == want
    assert a.__sycl_usm_array_interface__ == want
