"""__dlpack__'s stream keyword: NumPy's rule for kDLCPU arrays, -1 or a
dpctl.SyclQueue for kDLOneAPI arrays (RATIONALE.md, "__dlpack__'s stream")."""
import gc
import ctypes
import numpy as np
import pytest
import usmbridge as ub

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")

_STREAMS_NOT_NONE = [-1, 0, 1, 2, 3, 2**70, -(2**70), True, False, 1.0, "x", (1, 2), object()]


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


def _raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return None


@pytest.mark.parametrize("stream", _STREAMS_NOT_NONE, ids=repr)
@pytest.mark.parametrize("kw", [{}, {"max_version": (1, 0)}, {"max_version": (1, 0), "dl_device": (1, 0)},
                                {"max_version": (1, 0), "copy": True}], ids=repr)
def test_host_array_follows_numpy(stream, kw):
    x = np.arange(4.0)
    a = ub.from_dlpack(x)
    want = _raised(lambda: x.__dlpack__(stream=stream, **kw))
    # "NumPy only supports stream=None.": a RuntimeError up to NumPy 2.4, a
    # ValueError from 2.5 on; usmbridge raises the one of the NumPy loaded.
    assert want is (ValueError if tuple(map(int, np.__version__.split(".")[:2])) >= (2, 5) else RuntimeError)
    assert _raised(lambda: a.__dlpack__(stream=stream, **kw)) is want


def test_host_array_stream_none():
    a = ub.from_dlpack(np.arange(4.0))
    for kw in [{}, {"max_version": (1, 0)}]:
        assert np.from_dlpack(_Caps(a.__dlpack__(stream=None, **kw))).tolist() == [0, 1, 2, 3]


class _Caps:
    def __init__(self, c):
        self.c = c

    def __dlpack__(self, **_):
        return self.c

    def __dlpack_device__(self):
        return (1, 0)


def _managed(cap):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(cap, b"dltensor_versioned")
    # DLManagedTensorVersioned: version (8), manager_ctx, deleter, flags, then DLTensor.data
    flags = ctypes.c_uint64.from_address(p + 24).value
    data = ctypes.c_void_p.from_address(p + 32).value
    return flags, data


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
def test_oneapi_minus_one_is_accepted_without_a_copy(q, usm_type):
    # What mpi4py asks of every non-CPU producer.
    x = dpt.arange(8, dtype="f4", sycl_queue=q, usm_type=usm_type)
    a = ub.asarray(x)
    cap = a.__dlpack__(stream=-1, max_version=(1, 0), copy=False)
    flags, data = _managed(cap)
    assert data == x.__sycl_usm_array_interface__["data"][0]
    assert flags & 2 == 0  # not IS_COPIED
    # With a copy the producer still hands out complete data.
    cap = a.__dlpack__(stream=-1, max_version=(1, 0), copy=True)
    flags, data = _managed(cap)
    assert flags & 2 and data != x.__sycl_usm_array_interface__["data"][0]
    y = ub.from_dlpack(_OneAPI(cap, a))
    assert dpt.asnumpy(dpt.asarray(y)).tolist() == list(range(8))


class _OneAPI:
    def __init__(self, c, like):
        self.c, self.dev = c, like.__dlpack_device__()

    def __dlpack__(self, **_):
        return self.c

    def __dlpack_device__(self):
        return self.dev


@pytest.mark.parametrize("stream,exc", [
    (0, ValueError), (1, ValueError), (2, ValueError), (3, ValueError), (-2, ValueError),
    (2**70, ValueError), (-(2**70), ValueError),
    (True, TypeError), (False, TypeError), (1.0, TypeError), ("x", TypeError), (object(), TypeError),
], ids=repr)
def test_oneapi_other_streams_refused(q, stream, exc):
    a = ub.asarray(dpt.arange(4, sycl_queue=q))
    with pytest.raises(exc):
        a.__dlpack__(stream=stream, max_version=(1, 0))


def test_oneapi_queue_stream_and_cpu_dl_device(q):
    a = ub.asarray(dpt.arange(4, sycl_queue=q, usm_type="shared"))
    a.__dlpack__(stream=q, max_version=(1, 0))
    a.__dlpack__(stream=-1, max_version=(1, 0), dl_device=(14, a.__dlpack_device__()[1]))
    for s in [-1, q, 1]:  # the standard: kDLCPU means stream None
        with pytest.raises(ValueError):
            a.__dlpack__(stream=s, max_version=(1, 0), dl_device=(1, 0))
    assert np.from_dlpack(_Caps(a.__dlpack__(max_version=(1, 0), dl_device=(1, 0)))).tolist() == [0, 1, 2, 3]


class _Int(int):
    """An int subclass: C's fast path leaves it to Go, which accepts it."""


def _tensor(cap):
    """The fields of a dltensor_versioned capsule's tensor that a consumer reads."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(cap, b"dltensor_versioned")
    u32, i32, u64, i64 = (lambda t: lambda off: t.from_address(p + off).value)(ctypes.c_uint32), \
        (lambda off: ctypes.c_int32.from_address(p + off).value), \
        (lambda off: ctypes.c_uint64.from_address(p + off).value), \
        (lambda ptr, i: ctypes.c_int64.from_address(ptr + 8 * i).value)
    ndim = i32(48)
    shape, strides = u64(56), u64(64)
    return {"version": (u32(0), u32(4)), "flags": u64(24), "data": u64(32), "device": (i32(40), i32(44)),
            "ndim": ndim, "dtype": ctypes.c_uint32.from_address(p + 52).value,
            "shape": [i64(shape, i) for i in range(ndim)], "strides": [i64(strides, i) for i in range(ndim)],
            "byte_offset": u64(72)}


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
def test_oneapi_minus_one_never_enters_go(q, usm_type):
    # mpi4py asks for stream=-1 on every MPI call. A call into Go from a
    # Python thread wakes Go's idle threads, which preempt busy MPI ranks,
    # so C answers it from Go's template: exports are made, Go is not asked.
    x = dpt.reshape(dpt.arange(24, dtype="f4", sycl_queue=q, usm_type=usm_type), (2, 3, 4))[:, ::-1, ::2]
    a = ub.asarray(x)
    gc.collect()  # other tests' exports that wait for a collection
    s0 = ub._stats()
    caps = [a.__dlpack__(stream=-1, max_version=(1, 0), copy=False),
            a.__dlpack__(stream=-1, max_version=(1, 0), copy=False),
            a.__dlpack__(stream=-1, max_version=(1, 0), dl_device=a.__dlpack_device__()),
            a.__dlpack__(stream=-1)]  # legacy
    s1 = ub._stats()
    assert (s1["live_exports"] - s0["live_exports"], s1["dlpack_calls_into_go"] - s0["dlpack_calls_into_go"]) == (4, 0)
    # Go's own answer to the same request (an int subclass is Go's to read) is the same tensor.
    go = a.__dlpack__(stream=_Int(-1), max_version=(1, 0), copy=False)
    assert ub._stats()["dlpack_calls_into_go"] - s1["dlpack_calls_into_go"] == 1
    assert _tensor(caps[1]) == _tensor(go)
    t = _tensor(caps[1])
    assert t["device"] == a.__dlpack_device__() and t["flags"] == 0
    suai = x.__sycl_usm_array_interface__
    assert t["data"] + t["byte_offset"] == suai["data"][0] + 4 * suai["offset"]  # element 0
    assert (t["shape"], t["strides"]) == ([2, 3, 2], [12, -4, 2])
    y = ub.from_dlpack(_OneAPI(caps[1], a))
    assert dpt.asnumpy(dpt.from_dlpack(y)).tolist() == dpt.asnumpy(x).tolist()
    # A copy and other streams still ask Go (stream None is C's after a wait:
    # test_oneapi_export_waits_for_pending_work).
    n0 = ub._stats()["dlpack_calls_into_go"]
    keep = [a.__dlpack__(stream=-1, max_version=(1, 0), copy=True), a.__dlpack__(stream=q, max_version=(1, 0))]
    assert ub._stats()["dlpack_calls_into_go"] - n0 == 2
    for s, exc in [(True, TypeError), (-2, ValueError), (2**70, ValueError)]:
        with pytest.raises(exc):
            a.__dlpack__(stream=s, max_version=(1, 0))
    del caps, go, y, keep
    gc.collect()
    s2 = ub._stats()
    assert s2["live_exports"] == s0["live_exports"]


@pytest.mark.parametrize("call", ["__dlpack__", "__sycl_usm_array_interface__"])
def test_oneapi_export_waits_for_pending_work(q, call):
    # Every call waits on the array's queue before it hands anything out,
    # the later ones too (the SUAI dict is then the Array's copy of the
    # first, its view's tensor C's): what the queue was still computing
    # must be in memory when the call returns.
    n = 1 << 22
    src = dpt.linspace(0, 1, n, dtype="f4", sycl_queue=q)
    out = dpt.empty(n, dtype="f4", usm_type="shared", sycl_queue=q)
    want = np.sin(dpt.asnumpy(src))
    a = ub.asarray(out)
    getattr(a, call)() if call == "__dlpack__" else getattr(a, call)  # Go's first call
    view = np.ctypeslib.as_array((ctypes.c_float * n).from_address(a.data))
    for _ in range(3):
        dpt.multiply(src, 0, out=out)
        q.wait()
        dpt.sin(src, out=out)  # enqueued, not waited for
        r = getattr(a, call)() if call == "__dlpack__" else getattr(a, call)
        assert np.allclose(view, want)
        del r


def test_suai_dict_is_the_callers_own(q):
    # The Array keeps the dict Go made first and hands out copies, as
    # dpctl's property makes a fresh dict: a caller that edits its dict
    # edits no one else's.
    a = ub.asarray(dpt.arange(8, dtype="f4", sycl_queue=q))
    d1 = a.__sycl_usm_array_interface__
    want = dict(d1)
    d1["shape"] = (1,)
    d1["extra"] = 1
    d2 = a.__sycl_usm_array_interface__
    assert d2 is not d1 and d2 == want
