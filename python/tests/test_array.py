"""usmbridge.Array as an array object (issue 25): NumPy takes it as a view
(buffer protocol, __array__ with NumPy's copy keyword), it answers the
array API's attributes that need no compute, its transposes are views, and
its repr shows values."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import usmbridge as ub


def test_numpy_views_host_memory():
    x = np.arange(12, dtype="f4").reshape(3, 4)
    a = ub.from_dlpack(x)
    v = np.asarray(a)
    assert v.ctypes.data == x.ctypes.data and v.flags.writeable
    v[0, 0] = 7
    assert x[0, 0] == 7, "a view, not a copy"
    m = memoryview(a)
    assert (m.format, m.shape, m.strides, m.readonly) == ("f", (3, 4), (16, 4), False)
    s = ub.from_dlpack(x[::-1, ::2])
    assert np.asarray(s).tolist() == x[::-1, ::2].tolist()
    assert np.shares_memory(np.asarray(s), x)


def test_read_only_is_honoured():
    x = np.arange(4.0)
    x.flags.writeable = False
    a = ub.from_dlpack(x)
    v = np.asarray(a)
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 1
    assert memoryview(a).readonly
    import ctypes
    with pytest.raises(TypeError, match="not writable"):  # ctypes' word for our BufferError
        ctypes.c_char.from_buffer(a)  # asks a writable buffer


def test_array_protocol_copy_keyword():
    x = np.arange(6.0)
    a = ub.from_dlpack(x)
    assert np.shares_memory(a.__array__(), x)
    assert np.shares_memory(a.__array__(copy=False), x)
    c = a.__array__(copy=True)
    assert not np.shares_memory(c, x) and c.tolist() == x.tolist()
    assert np.array(a, copy=True).tolist() == x.tolist()
    f = a.__array__(dtype="f4")
    assert f.dtype == np.float32 and f.tolist() == x.tolist()
    with pytest.raises(ValueError):
        a.__array__(dtype="f4", copy=False)


def test_device_memory_through_array():
    dpnp = pytest.importorskip("dpnp")
    a = ub.asarray(dpnp.arange(5, dtype="f4"))  # device USM: no buffer
    with pytest.raises(BufferError, match="not host-accessible"):
        memoryview(a)
    assert np.asarray(a).tolist() == [0, 1, 2, 3, 4]  # through __array__: a host copy
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(a, copy=False)
    s = ub.asarray(dpnp.arange(5, dtype="f4", usm_type="shared"))
    assert np.asarray(s).ctypes.data == s.data, "shared USM is viewed"


def test_attributes():
    x = np.zeros((2, 3, 4), dtype="i2")
    a = ub.from_dlpack(x)
    assert (a.ndim, a.size, a.nbytes, a.itemsize, len(a)) == (3, 24, 48, 2, 2)
    assert a.dtype == np.int16 and isinstance(a.dtype, np.dtype)
    assert a.device == (1, 0) and a.shape == (2, 3, 4) and a.strides == (12, 4, 1)
    with pytest.raises(TypeError):
        len(ub.from_dlpack(np.array(1.0)))
    # device is what from_dlpack's device takes
    assert ub.from_dlpack(x, device=a.device).device == a.device


def test_type_is_immutable():
    # As numpy.ndarray and dpnp's usm_ndarray: the protocols every consumer
    # reads are the type's own, not an assignment's; the exchange table's
    # attributes set when the module was made stay readable.
    for name, value in [("__dlpack__", None), ("__sycl_usm_array_interface__", property(lambda s: {})), ("extra", 1)]:
        with pytest.raises(TypeError, match="immutable type"):
            setattr(ub.Array, name, value)
    with pytest.raises(TypeError, match="immutable type"):
        del ub.Array.__dlpack__
    assert isinstance(ub.Array.__c_dlpack_exchange_api__, int)
    assert ub.Array.__dlpack_c_exchange_api__ is not None
    a = ub.from_dlpack(np.arange(3.0))
    assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0]


def test_transposes_are_views():
    x = np.arange(24.0).reshape(2, 3, 4)
    a = ub.from_dlpack(x)
    assert np.from_dlpack(a.T).tolist() == x.T.tolist()
    assert np.from_dlpack(a.mT).tolist() == np.swapaxes(x, -1, -2).tolist()
    assert a.T.data == a.data and a.T.strides == (1, 4, 12)
    with pytest.raises(ValueError):
        ub.from_dlpack(np.arange(3.0)).mT
    r0 = sys.getrefcount(x)
    t = ub.from_dlpack(x).T
    gc.collect()
    assert np.from_dlpack(t)[3, 2, 1] == x[1, 2, 3], "the view holds the memory"
    del t
    gc.collect()
    assert sys.getrefcount(x) == r0


def test_repr_shows_values():
    assert repr(ub.from_dlpack(np.arange(3, dtype="f4"))) == "usmbridge.Array([0., 1., 2.], dtype=float32)"
    assert "..." in repr(ub.from_dlpack(np.arange(5000.0)))


class _Py_buffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_Py_buffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_Py_buffer)]

# CPython's request flags (Include/pybuffer.h).
PyBUF_ND, PyBUF_STRIDES = 0x0008, 0x0018
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS = 0x0038, 0x0058, 0x0098


@pytest.mark.parametrize("make", ["c", "f", "strided", "empty"])
@pytest.mark.parametrize("flags", ["ND", "STRIDES", "C", "F", "ANY"])
def test_buffer_contiguity_requests_are_numpys(make, flags):
    # Each contiguity a consumer asks of the buffer protocol is granted or
    # refused exactly as NumPy grants or refuses it for the same layout:
    # a strided view handed to a consumer that asked for C order would be
    # read as if it were dense. (The Array refuses with the protocol's
    # BufferError; NumPy raises ValueError.)
    x = {"c": lambda: np.arange(6.0).reshape(2, 3), "f": lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
         "strided": lambda: np.arange(12.0).reshape(3, 4)[:, ::2], "empty": lambda: np.zeros((0, 3))[:, ::2]}[make]()
    f = {"ND": PyBUF_ND, "STRIDES": PyBUF_STRIDES, "C": PyBUF_C_CONTIGUOUS, "F": PyBUF_F_CONTIGUOUS,
         "ANY": PyBUF_ANY_CONTIGUOUS}[flags]

    def granted(o):
        v = _Py_buffer()
        try:
            _get_buffer(o, ctypes.byref(v), f)
        except BufferError:
            return False
        except ValueError:
            assert type(o) is np.ndarray, "the Array refuses with BufferError"
            return False
        _release_buffer(ctypes.byref(v))
        return True

    assert granted(ub.from_dlpack(x)) == granted(x)
