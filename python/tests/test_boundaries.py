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

# Each case: the boundary, and code that makes the next call of it panic
# and checks what the caller sees. `h` is a host array made before.
CASES = {
    "ub_asarray_read": "x = usm_array(); raises_panic('ub_asarray_read', lambda: ub.asarray(x))",
    # The first asarray asks Go for its getters; a later one asks again.
    "ub_suai_getters": "x = usm_array(); raises_panic('ub_suai_getters', lambda: ub.asarray(x)); ub.asarray(x)",
    # C dropped an asarray array's references; Go counts it on its next entry.
    "ub_released (asarray)": "a = ub.asarray(usm_array()); ub._inject_panic('ub_released'); del a; gc.collect()",
    "ub_from_dlpack": "raises_panic('ub_from_dlpack', lambda: ub.from_dlpack(np.arange(2.0), copy=True))",
    # from_dlpack without keywords: C calls __dlpack__, then Go imports a
    # kDLCPU capsule (ub_import_host) or does the rest (ub_from_dlpack_result).
    # (int16: a layout Go has not decided before, so C has nothing to
    # replay; ext.h, "Host imports C replays".)
    "ub_import_host": "raises_panic('ub_import_host', lambda: ub.from_dlpack(np.arange(2, dtype=np.int16)))",
    # A host producer from before DLPack 1.0 refuses max_version: Go retries.
    # A pending array (ext.h, "Host imports C replays": h's layout is in
    # Go's table): Go imports it at its first use, and again after a panic.
    "ub_adopt_host": textwrap.dedent("""
        a = ub.from_dlpack(np.arange(4.0))
        raises_panic('ub_adopt_host', lambda: a.shape)
        assert a.shape == (4,) and np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0]
        """),
    "ub_from_dlpack_result": textwrap.dedent("""
        class Old:
            def __dlpack__(self, stream=None): return np.arange(2.0).__dlpack__()
            def __dlpack_device__(self): return (1, 0)
        raises_panic('ub_from_dlpack_result', lambda: ub.from_dlpack(Old()))
        """),
    # Later __sycl_usm_array_interface__ calls reuse the first dict after a
    # wait C makes with Go's plan (ub_wait_plan_fill); without a plan Go
    # waits (ub_wait). A panic in the plan's fill is counted, and Go waits.
    "ub_wait_plan_fill": textwrap.dedent("""
        a = ub.asarray(usm_array())
        want = a.__sycl_usm_array_interface__
        ub._inject_panic('ub_wait_plan_fill')
        assert a.__sycl_usm_array_interface__ == want
        """),
    "ub_wait": textwrap.dedent("""
        a = ub.asarray(usm_array())
        a.__sycl_usm_array_interface__
        ub._inject_panic('ub_wait_plan_fill')
        a.__sycl_usm_array_interface__  # no plan now: Go waits from here on
        before = ub._stats()["panics"]
        raises_panic('ub_wait', lambda: a.__sycl_usm_array_interface__)
        """),
    "ub_info": "a = ub.from_dlpack(np.arange(2.0)); raises_panic('ub_info', lambda: a.shape)",
    "ub_suai": "a = ub.asarray(usm_array()); raises_panic('ub_suai', lambda: a.__sycl_usm_array_interface__)",
    "ub_dlpack": "raises_panic('ub_dlpack', lambda: h.__dlpack__(copy=True))",
    "ub_stats": "raises_panic('ub_stats', ub._stats)",
    # The C exchange API's calls into Go.
    "ub_work_stream": textwrap.dedent("""
        import ctypes
        api = (ctypes.c_void_p * 7).from_address(ub.Array.__c_dlpack_exchange_api__)
        stream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(api[6])
        raises_panic('ub_work_stream', lambda: stream(1, 0, ctypes.byref(ctypes.c_void_p())))
        """),
    "ub_alloc": textwrap.dedent("""
        import ctypes
        api = (ctypes.c_void_p * 7).from_address(ub.Array.__c_dlpack_exchange_api__)
        SETERR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
        got = []
        seterr = SETERR(lambda ctx, kind, msg: got.append((kind, msg)))
        alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, SETERR)(api[2])
        proto = (ctypes.c_char * 48)()
        ctypes.c_int32.from_buffer(proto, 8).value = 1
        proto[20], proto[21], proto[22] = 2, 32, 1
        ub._inject_panic('ub_alloc')
        assert alloc(ctypes.addressof(proto), ctypes.byref(ctypes.c_void_p()), None, seterr) == -1
        assert got and got[0][0] == b"RuntimeError" and b"Go panic in ub_alloc" in got[0][1], got
        """),
    # Boundaries with no caller to raise to: counted and logged.
    # An array whose release Go makes: Go has seen it since the import (a
    # fresh host import is released by C, see ub_released below).
    "ub_release": textwrap.dedent("""
        a = ub.from_dlpack(np.arange(2.0))
        np.from_dlpack(a)
        ub._inject_panic('ub_release'); del a; gc.collect()
        """),
    # C released a fresh host import; Go finishes it on its next entry.
    "ub_released": "a = ub.from_dlpack(np.arange(2, dtype=np.int16)); ub._inject_panic('ub_released'); del a; gc.collect()",
    "ub_template_fill": textwrap.dedent("""
        a = ub.from_dlpack(np.arange(3.0))
        ub._inject_panic('ub_template_fill')
        assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0]  # Go serves what C could not
        """),
    "ub_blocks": textwrap.dedent("""
        ub._inject_panic('ub_blocks')  # the first fast export fetches blocks
        try:
            h.__dlpack__()
        except MemoryError:
            pass
        else:
            raise AssertionError("no MemoryError without blocks")
        """),
    "dlpack deleter": "n = np.from_dlpack(GoCapsule(h)); ub._inject_panic('dlpack deleter'); del n; gc.collect()",
    "pybridge capsule destructor": "c = h.__dlpack__(copy=True, max_version=(1, 0)); ub._inject_panic('pybridge capsule destructor'); del c",
}


@pytest.mark.parametrize("where", sorted(CASES))
def test_panic_at_boundary(where):
    if "usm_array()" in CASES[where]:  # a USM array: skips without dpctl
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
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
    assert "panic at %s handled" % where in r.stdout
    point = where.split(" (")[0]  # "ub_released (asarray)": the boundary ub_released
    assert "Go panic in %s: injected panic at %s" % (point, point) in r.stderr, "logged with its stack"
    assert "goroutine" in r.stderr


def test_every_go_callback_is_gated():
    # The DLPack deleters and the capsule destructor all go through ext.c's
    # fork gates (see test_fork.py for what the gates do).
    code = PRELUDE + textwrap.dedent("""
        h = ub.from_dlpack(np.arange(4.0))
        np.from_dlpack(GoCapsule(h))
        print(ub._stats()["gated_callbacks"])
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert r.stdout.split()[-1] == "3", r.stdout
