"""Producers whose memory the lifecycle and soundness tests can watch:
NumPy arrays (weak references tell when they go), DLPack capsules whose
deleter counts its calls per tensor, and dpnp arrays (device USM) when dpnp
imports."""
import ctypes
import weakref

import numpy as np

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# The capsule's destructor sees the capsule as a bare pointer (it is being
# deallocated: a py_object argument would revive it).
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", ctypes.c_uint32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Versioned(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32 * 2), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


# Deleter calls by tensor address, for every counting capsule made. The
# tensors and their memory stay alive here (never freed): a deleter that
# runs twice is counted, not a crash of the test itself.
deletes = {}
_keep = []


@_DELETER
def _count(p):
    deletes[p] = deletes.get(p, 0) + 1


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destroy(cap):
    # The capsule rule: a capsule still named dltensor_versioned was never
    # consumed, and deletes its tensor.
    if _is_valid(cap, b"dltensor_versioned"):
        _count(_get_pointer(cap, b"dltensor_versioned"))


def python_deleter_capsule(values, log):
    """A fresh "dltensor_versioned" capsule whose deleter is Python code that
    appends the exception in its way (None when there is none) to log.
    Returns the capsule, which a call must consume."""
    buf = np.array(values, dtype=np.float64)
    m = _Versioned()
    m.version[0] = 1

    def deleter(p):
        import sys
        log.append(sys.exc_info()[0])  # None: no exception in the deleter's way

    cb = _DELETER(deleter)
    m.deleter = ctypes.cast(cb, ctypes.c_void_p)
    shape = (ctypes.c_int64 * 1)(buf.size)
    m.dl_tensor.data, m.dl_tensor.device_type, m.dl_tensor.ndim = buf.ctypes.data, 1, 1
    m.dl_tensor.dtype = 2 | (64 << 8) | (1 << 16)
    m.dl_tensor.shape = shape
    _keep.append((m, shape, buf, cb))
    # No capsule destructor: the tests hand it to a call, which consumes it,
    # and it may die with the call's exception pending, which a destructor
    # written with ctypes cannot set aside (NumPy's, in C, does).
    return _api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)


def counting_capsule(values):
    """A fresh "dltensor_versioned" capsule over a float64 copy of values,
    whose deleter counts its calls in deletes[address]. Returns (capsule,
    address)."""
    buf = np.array(values, dtype=np.float64)
    m = _Versioned()
    m.version[0] = 1
    m.deleter = ctypes.cast(_count, ctypes.c_void_p)
    shape = (ctypes.c_int64 * 1)(buf.size)
    m.dl_tensor.data, m.dl_tensor.device_type, m.dl_tensor.ndim = buf.ctypes.data, 1, 1
    m.dl_tensor.dtype = 2 | (64 << 8) | (1 << 16)  # float64
    m.dl_tensor.shape = shape
    _keep.append((m, shape, buf))
    addr = ctypes.addressof(m)
    deletes[addr] = 0
    return _api.PyCapsule_New(addr, b"dltensor_versioned", ctypes.cast(_destroy, ctypes.c_void_p)), addr


def broadcast_capsule(n, itemsize_bits=64):
    """A fresh "dltensor_versioned" capsule of n float elements that all lie
    on one (stride 0), over a real 8-byte buffer: a tensor whose element
    count fits in an int64 and whose size in bytes need not."""
    buf = np.zeros(1)
    m = _Versioned()
    m.version[0] = 1
    shape, strides = (ctypes.c_int64 * 1)(n), (ctypes.c_int64 * 1)(0)
    m.dl_tensor.data, m.dl_tensor.device_type, m.dl_tensor.ndim = buf.ctypes.data, 1, 1
    m.dl_tensor.dtype = 2 | (itemsize_bits << 8) | (1 << 16)
    m.dl_tensor.shape, m.dl_tensor.strides = shape, strides
    _keep.append((m, shape, strides, buf))
    return _api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)


def numpy_source(values):
    """A NumPy float64 array and a weak reference to it."""
    x = np.array(values, dtype=np.float64)
    return x, weakref.ref(x)


def dpnp_source(values):
    """A dpnp.tensor.usm_ndarray of float64 in device USM (the array under
    every dpnp.ndarray, which itself takes no weak references) and a weak
    reference to it, or None when dpnp cannot make one here."""
    try:
        import dpnp.tensor as dpt
        x = dpt.asarray(np.array(values, dtype=np.float64), usm_type="device")
    except Exception:
        return None
    return x, weakref.ref(x)
