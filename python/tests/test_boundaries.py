"""A Go panic at any boundary where C calls Go becomes a Python exception
(a call in progress) or a counted, logged error (a deallocator, capsule
destructor or deleter) — never a crash, never silent. Each case injects a
panic (usmbridge._inject_panic) in a fresh interpreter, so that a boundary
that fails to recover aborts that interpreter, not the test run."""
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

PRELUDE = """
import gc, sys
sys.path.insert(0, %r)
import numpy as np
import usmbridge as ub

class GoCapsule:
    def __init__(self, a): self.a = a
    def __dlpack__(self, **kw): return self.a.__dlpack__(copy=True, max_version=(1, 0))
    def __dlpack_device__(self): return (1, 0)

def usm_array():
    import dpctl, dpnp.tensor as dpt
    global _x
    _x = dpt.arange(4, dtype="f4", sycl_queue=dpctl.SyclQueue("opencl:cpu"))
    return _x

def raises_panic(where, fn):
    ub._inject_panic(where)
    try:
        fn()
    except RuntimeError as e:
        assert "Go panic in " + where in str(e), e
    else:
        raise AssertionError("no exception from a panic in " + where)
""" % os.path.join(HERE, "..")

# Each case: the boundary (the name pyext's Go half gives where C calls
# it), and code that makes the next call of it panic and checks what the
# caller sees. `h` is a host array made before.
EXCHANGE = """
import ctypes
api = (ctypes.c_void_p * 7).from_address(ub.Array.__c_dlpack_exchange_api__)
"""
CASES = {
    "asarray": "x = usm_array(); raises_panic('asarray', lambda: ub.asarray(x))",
    "from_dlpack": "raises_panic('from_dlpack', lambda: ub.from_dlpack(np.arange(2.0), copy=True))",
    # A host producer whose capsule C does not take (not a DLPack name):
    # Go imports it, and says what is wrong with it.
    "from_dlpack capsule": textwrap.dedent("""
        import ctypes
        class Odd:
            def __dlpack__(self, **kw):
                return ctypes.pythonapi.PyCapsule_New(ctypes.c_void_p(8), b"odd", None)
            def __dlpack_device__(self): return (1, 0)
        ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
        ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        raises_panic('from_dlpack capsule', lambda: ub.from_dlpack(Odd()))
        """),
    "__dlpack__": "raises_panic('__dlpack__', lambda: h.__dlpack__(copy=True))",
    "__sycl_usm_array_interface__": "a = ub.asarray(usm_array()); raises_panic('__sycl_usm_array_interface__', lambda: a.__sycl_usm_array_interface__)",
    "Array.dtype": "raises_panic('Array.dtype', lambda: h.dtype)",
    # USM shared memory has a queue to wait on first: Go's buffer path
    # (host memory with nothing pending is C's alone).
    "Array buffer": textwrap.dedent("""
        import dpctl, dpctl.memory as dm
        s = ub.asarray(dm.MemoryUSMShared(16, queue=dpctl.SyclQueue("opencl:cpu")))
        raises_panic('Array buffer', lambda: memoryview(s))
        """),
    # A Go function of the module (pyext.Func0R).
    "_go_stats": "raises_panic('_go_stats', ub._stats)",
    # The C exchange API's calls into Go.
    "current_work_stream": EXCHANGE + textwrap.dedent("""
        stream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(api[6])
        raises_panic('current_work_stream', lambda: stream(1, 0, ctypes.byref(ctypes.c_void_p())))
        """),
    "exchange wait": EXCHANGE + textwrap.dedent("""
        a = ub.asarray(usm_array())
        from_py = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(api[3])
        raises_panic('exchange wait', lambda: from_py(a, ctypes.byref(ctypes.c_void_p())))
        """),
    "managed_tensor_to_py_object_no_sync": EXCHANGE + textwrap.dedent("""
        from dlstructs import versioned_of
        a = ub.asarray(usm_array())
        cap = a.__dlpack__(max_version=(1, 0))  # a kDLOneAPI tensor: Go imports it
        m = ctypes.addressof(versioned_of(cap))
        ctypes.pythonapi.PyCapsule_SetName(ctypes.py_object(cap), b"used_dltensor_versioned")
        to_py = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(api[4])
        raises_panic('managed_tensor_to_py_object_no_sync', lambda: to_py(m, ctypes.byref(ctypes.c_void_p())))
        """),
    "managed_tensor_allocator": EXCHANGE + textwrap.dedent("""
        SETERR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
        got = []
        seterr = SETERR(lambda ctx, kind, msg: got.append((kind, msg)))
        alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, SETERR)(api[2])
        proto = (ctypes.c_char * 48)()
        ctypes.c_int32.from_buffer(proto, 8).value = 1
        proto[20], proto[21], proto[22] = 2, 32, 1
        ub._inject_panic('managed_tensor_allocator')
        assert alloc(ctypes.addressof(proto), ctypes.byref(ctypes.c_void_p()), None, seterr) == -1
        assert got and got[0][0] == b"RuntimeError" and b"Go panic in managed_tensor_allocator" in got[0][1], got
        """),
    # Boundaries with no caller to raise to: counted and logged. An Array
    # with Go state (a copy Go made) is released by Go.
    "Array release": textwrap.dedent("""
        a = ub.from_dlpack(np.arange(2.0), copy=True)
        ub._inject_panic('Array release'); del a; gc.collect()
        """),
    "dlpack deleter": "n = np.from_dlpack(GoCapsule(h)); ub._inject_panic('dlpack deleter'); del n; gc.collect()",
    "pybridge capsule destructor": "c = h.__dlpack__(copy=True, max_version=(1, 0)); ub._inject_panic('pybridge capsule destructor'); del c",
}


@pytest.mark.parametrize("where", sorted(CASES))
def test_panic_at_boundary(where):
    if "usm_array()" in CASES[where] or "import dpctl" in CASES[where]:  # USM: skips without dpctl
        pytest.importorskip("dpctl")
        pytest.importorskip("dpnp.tensor")
    code = PRELUDE + textwrap.dedent("""
        h = ub.from_dlpack(np.arange(4.0))
        before = ub._stats()["panics"]
        {case}
        after = ub._stats()["panics"]
        assert after == before + 1, (before, after)
        # The module still works after the panic.
        assert np.from_dlpack(ub.from_dlpack(np.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
        print("panic at {where} handled")
        """).format(case=CASES[where], where=where)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=HERE)
    assert r.returncode == 0, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
    assert "panic at %s handled" % where in r.stdout
    assert "Go panic in %s: injected panic at %s" % (where, where) in r.stderr, "logged with its stack"
    assert "goroutine" in r.stderr


def test_every_go_callback_is_gated():
    # The DLPack deleters and the capsule destructor all go through the C
    # half's fork gates (see test_fork.py for what the gates do).
    code = PRELUDE + textwrap.dedent("""
        h = ub.from_dlpack(np.arange(4.0))
        np.from_dlpack(GoCapsule(h))
        print(ub._stats()["gated_callbacks"])
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert r.stdout.split()[-1] == "3", r.stdout
