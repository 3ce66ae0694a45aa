"""usmbridge: zero-copy USM and DLPack arrays backed by Go (examples/pyext).

The core is the extension module usmbridge._ext, a c-shared library built
from Go (go build -buildmode=c-shared) whose C half defines the module and
the Array type; $USMBRIDGE_LIB overrides its path (default: libusmbridge.so
beside this file). Go errors arrive as the Python exceptions the array API
and dpctl use.
"""
import importlib.machinery as _machinery
import importlib.util as _util
import os as _os
import sys as _sys

_path = _os.environ.get("USMBRIDGE_LIB") or _os.path.join(_os.path.dirname(__file__), "libusmbridge.so")
_loader = _machinery.ExtensionFileLoader(__name__ + "._ext", _path)
_spec = _util.spec_from_file_location(__name__ + "._ext", _path, loader=_loader)
try:
    _ext = _util.module_from_spec(_spec)
except ImportError as e:
    if "PyInit__ext" in str(e):
        raise ImportError("%s was built without Python's headers (Python.h); rebuild it with "
                          "CGO_CFLAGS=-I<sysconfig include dir>" % _path) from e
    raise
_sys.modules[_spec.name] = _ext
_loader.exec_module(_ext)

Array = _ext.Array
asarray = _ext.asarray
from_dlpack = _ext.from_dlpack
_stats = _ext._stats

__all__ = ["Array", "asarray", "from_dlpack"]
