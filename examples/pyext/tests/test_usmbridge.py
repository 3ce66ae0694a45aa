import gc
import numpy as np
import pytest
import usmbridge as ub

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
    with pytest.raises(TypeError):
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


def test_no_leaks():
    h = np.arange(8.0)
    base = len(gc.get_objects()), __import__("sys").getrefcount(h)
    s0 = ub._stats()
    for _ in range(20000):
        np.from_dlpack(ub.from_dlpack(h))
    gc.collect()
    s1 = ub._stats()
    assert __import__("sys").getrefcount(h) == base[1]
    assert s1 == s0, (s0, s1)
