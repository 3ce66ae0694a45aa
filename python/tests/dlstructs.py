"""The DLPack 1.x structs, as tests that rewrite a producer's tensor see
them through ctypes (the layout pyext/ubx.h gives them).

DLManagedTensorVersioned: version, manager_ctx, deleter, flags, then the
DLTensor: data, device, ndim, dtype, shape, strides, byte_offset.
"""
import ctypes


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", ctypes.c_uint32), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32 * 2), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def versioned_of(cap):
    """The DLManagedTensorVersioned of a fresh dltensor_versioned capsule,
    which the capsule still owns."""
    return ManagedVersioned.from_address(_get_pointer(cap, b"dltensor_versioned"))


def numpy_stream_error():
    """The exception class NumPy raises for ``__dlpack__(stream=1)`` of its
    own host array, which usmbridge raises for a stream on a host array
    (RATIONALE.md, "__dlpack__'s stream"): RuntimeError up to NumPy 2.4,
    ValueError from NumPy 2.5 on."""
    import numpy as np
    try:
        np.arange(1).__dlpack__(stream=1)
    except Exception as e:  # noqa: BLE001 - the class is the answer
        return type(e)
    raise AssertionError("NumPy accepted stream=1 for a host array")
