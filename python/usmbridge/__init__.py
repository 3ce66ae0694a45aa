"""usmbridge: zero-copy USM and DLPack arrays backed by Go.

The core is the extension module usmbridge._ext, a c-shared library built
from Go (go build -buildmode=c-shared) whose C half defines the module and
the Array type; it is installed beside this file under its platform name
(_ext.cpython-311-x86_64-linux-gnu.so), and $USMBRIDGE_LIB, when set, names
another build to load instead (the tests build one per run). Go errors arrive as the Python exceptions the array API
and dpctl use; a Python exception raised by a producer (a __dlpack__, a
property) arrives as the same object.

fork: the Go runtime does not survive fork() without exec(). In a child
created by fork() from a process that had loaded the library, every call
raises ForkError: use the 'spawn' or 'forkserver' start method. The library
is loaded on first use, not by ``import usmbridge``, so a process that only
imports the package (a forkserver importing the main module, a parent that
leaves the work to its children) can still fork children that use it.
"""
import importlib.machinery as _machinery
import importlib.util as _util
import os as _os
import sys as _sys
import threading as _threading

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)

__all__ = ["Array", "ForkError", "asarray", "from_dlpack"]
_NAMES = frozenset(__all__ + ["_stats", "_inject_panic", "_fork_skips", "_enter_go"])
_EXT_NAMES = frozenset(__all__ + ["_inject_panic", "_fork_skips", "_enter_go"])
_lock = _threading.Lock()


def _load():
    """Load usmbridge._ext (once) and bind its names here."""
    with _lock:
        ext = _sys.modules.get(__name__ + "._ext")
        if ext is None:
            path = _os.environ.get("USMBRIDGE_LIB")
            if path:
                ext = _load_file(path)
            else:
                import importlib
                ext = importlib.import_module(__name__ + "._ext")
        g = globals()
        for name in _EXT_NAMES:
            g[name] = getattr(ext, name)
        g["_stats"] = _stats_of(ext)
        return ext


def _stats_of(ext):
    """_stats(): the live counts of the module's Go and C halves, for leak
    tests: live_exports and stray_deletes are both halves' (C's exports of
    an Array's view and Go's), live_imports the producers' tensors held
    (C's imports and Go's), handles the Arrays with Go state."""
    go_stats, c_stats = ext._go_stats, ext._c_stats

    def _stats():
        g, c = go_stats(), c_stats()
        return {
            "live_exports": g["dlpack_exports"] + c["live_exports"],
            "stray_deletes": g["dlpack_stray_deletes"] + c["stray_deletes"],
            "live_imports": g["dlpack_imports"] + c["live_c_imports"],
            "handles": g["arrays"],
            "panics": g["panics"],
            "exchange_exports": c["exchange_exports"],
            "exchange_imports": g["exchange_imports"],
            "gated_callbacks": g["gated_callbacks"],
            "dlpack_calls_into_go": g["dlpack_calls"],
            "c_imports": c["c_imports"],
            "go_heap_allocs": g["go_heap_allocs"],
            "go_calls": g["go_calls"],
        }
    return _stats


def _load_file(path):
    """Load the extension module from a file that is not on the import path."""
    loader = _machinery.ExtensionFileLoader(__name__ + "._ext", path)
    spec = _util.spec_from_file_location(__name__ + "._ext", path, loader=loader)
    try:
        ext = _util.module_from_spec(spec)
    except ImportError as e:
        if "PyInit__ext" in str(e):
            raise ImportError("%s was built without Python's headers (Python.h); rebuild it with "
                              "CGO_CFLAGS=-I<sysconfig include dir>" % path) from e
        raise
    _sys.modules[spec.name] = ext
    loader.exec_module(ext)
    return ext


def __getattr__(name):
    if name in _NAMES:
        _load()
        return globals()[name]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    return sorted(set(globals()) | _NAMES)
