"""usmbridge: zero-copy USM and DLPack arrays backed by Go (examples/pyext).

The Go half is libusmbridge.so (go build -buildmode=c-shared), loaded with
ctypes.PyDLL so calls keep the GIL and Go errors arrive as the Python
exceptions the array API and dpctl use. $USMBRIDGE_LIB overrides its path.
"""
import ctypes as _ct
import os as _os

_path = _os.environ.get("USMBRIDGE_LIB") or _os.path.join(_os.path.dirname(__file__), "libusmbridge.so")
_lib = _ct.PyDLL(_path)
for _name, _n in (("ub_init", 0), ("ub_asarray", 1), ("ub_from_dlpack", 3), ("ub_release", 1),
                  ("ub_info", 1), ("ub_suai", 1), ("ub_dlpack", 5), ("ub_dlpack_device", 1),
                  ("ub_stats", 0)):
    _f = getattr(_lib, _name)
    _f.argtypes = [_ct.py_object] * _n
    _f.restype = _ct.py_object
python_version = _lib.ub_init()


class Array:
    """A Go-held view of USM or host memory."""
    __slots__ = ("_h", "_i")

    def __init__(self, handle):
        self._h = handle
        self._i = None

    @property
    def _info(self):
        # Fetched from Go on first use: making an array needs none of it.
        i = self._i
        if i is None:
            i = self._i = _lib.ub_info(self._h)
        return i

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and _lib is not None:
            self._h = None
            _lib.ub_release(h)

    @property
    def __sycl_usm_array_interface__(self):
        return _lib.ub_suai(self._h)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _lib.ub_dlpack(self._h, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return _lib.ub_dlpack_device(self._h)

    shape = property(lambda self: tuple(self._info[0]))
    dtype = property(lambda self: self._info[1], doc="typestr, e.g. '|f4'")
    strides = property(lambda self: None if self._info[2] is None else tuple(self._info[2]),
                       doc="in elements; None when C-contiguous")
    offset = property(lambda self: self._info[3], doc="element offset from the data pointer")
    usm_type = property(lambda self: self._info[4])
    device = property(lambda self: tuple(self._info[5]), doc="(DLPack device type, device id)")
    data = property(lambda self: self._info[6] + self._info[3] * int(self._info[1][2:]),
                    doc="address of element 0")
    readonly = property(lambda self: self._info[7])

    def __repr__(self):
        return "usmbridge.Array(shape=%r, dtype=%r, usm_type=%r, device=%r)" % (
            self.shape, self.dtype, self.usm_type, self.device)


def asarray(obj):
    """Zero-copy, validated view of any object exposing __sycl_usm_array_interface__."""
    return Array(_lib.ub_asarray(obj))


def from_dlpack(x, /, *, device=None, copy=None):
    """The array API's from_dlpack: consume x.__dlpack__()."""
    return Array(_lib.ub_from_dlpack(x, device, copy))


def _stats():
    return _lib.ub_stats()
