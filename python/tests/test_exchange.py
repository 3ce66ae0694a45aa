"""The DLPack 1.3 C exchange API: usmbridge.Array as a producer (its type's
__dlpack_c_exchange_api__ table), usmbridge.from_dlpack as a consumer of
other producers' tables, tvm-ffi as the peer on both sides, and hostile
tables. Cases that could crash the process run in a child interpreter.
"""
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import usmbridge as ub

tvm_ffi = pytest.importorskip("tvm_ffi")

PKG_DIR = os.path.join(os.path.dirname(__file__), "..")


class _Header(ctypes.Structure):
    pass


_Header._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                    ("prev_api", ctypes.c_void_p)]

FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class _API(ctypes.Structure):
    _fields_ = [("header", _Header), ("allocator", ctypes.c_void_p), ("from_py", ctypes.c_void_p),
                ("to_py", ctypes.c_void_p), ("dltensor_from_py", ctypes.c_void_p), ("stream", ctypes.c_void_p)]


def our_api():
    return _API.from_address(type(ub.from_dlpack(np.zeros(1))).__c_dlpack_exchange_api__)


def counts():
    s = ub._stats()
    return s["exchange_exports"], s["exchange_imports"], s["live_exports"]


# ---- the producer: our table ----

def test_type_attributes():
    t = ub.Array
    cap = t.__dlpack_c_exchange_api__
    assert type(cap).__name__ == "PyCapsule" and '"dlpack_exchange_api"' in repr(cap)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    assert get(cap, b"dlpack_exchange_api") == t.__c_dlpack_exchange_api__  # one table, two forms
    api = our_api()
    assert (api.header.major, api.header.minor, api.header.prev_api) == (1, 3, None)
    assert all((api.allocator, api.from_py, api.to_py, api.dltensor_from_py, api.stream))


def test_tvm_ffi_consumes_ours_through_the_table():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::-2]
    a = ub.from_dlpack(h)
    e0, _, live0 = counts()
    t = tvm_ffi.from_dlpack(a)
    e1, _, live1 = counts()
    assert e1 == e0 + 1, "tvm_ffi.from_dlpack did not call managed_tensor_from_py_object_no_sync"
    assert live1 == live0 + 1
    assert np.array_equal(np.from_dlpack(t), h)
    del t
    assert counts()[2] == live0  # the deleter ran, once


def test_read_only_never_reaches_tvm_ffi():
    """tvm-ffi drops READ_ONLY (it makes every tensor it takes writable):
    our table refuses a read-only array, tvm-ffi falls back to a legacy
    __dlpack__(), which is refused too, as NumPy's read-only arrays are. A
    writable array still goes through the table, and back, zero-copy."""
    x = np.arange(4.0)
    x.flags.writeable = False
    ro = ub.from_dlpack(x)
    assert ro.readonly
    with pytest.raises(BufferError):
        tvm_ffi.from_dlpack(ro)
    with pytest.raises(BufferError):
        tvm_ffi.from_dlpack(x)  # NumPy's, for comparison
    w = ub.from_dlpack(np.arange(4.0))
    back = ub.from_dlpack(tvm_ffi.from_dlpack(w))
    assert back.data == w.data and not back.readonly


def test_tvm_ffi_returns_through_to_py():
    a = ub.from_dlpack(np.arange(5.0))
    r = tvm_ffi.get_global_func("testing.echo")(a)
    # an argument goes out through our table and comes back through
    # managed_tensor_to_py_object_no_sync as a usmbridge.Array
    assert type(r) is ub.Array and r.shape == (5,)
    assert np.array_equal(np.from_dlpack(r), np.arange(5.0))


def test_our_array_to_our_from_dlpack_is_a_view():
    """Our consumer given our own Array makes a view that holds it, as .T
    does, neither through the table nor through an export whose tensor
    would hold it where the collector cannot see; the read-only flag is the
    Array's own."""
    h = np.arange(4.0)
    h.flags.writeable = False
    a = ub.from_dlpack(h)
    w = ub.from_dlpack(np.arange(4.0))
    e0, i0, live0 = counts()
    b = ub.from_dlpack(a)
    assert b.readonly and b.data == a.data
    c = ub.from_dlpack(w, device=w.device, copy=False)
    assert not c.readonly and c.data == w.data
    assert counts() == (e0, i0, live0), "not through the table, no export"
    r = sys.getrefcount(a)
    del b
    assert sys.getrefcount(a) == r - 1, "the view held the Array itself"


# ---- the consumer: other producers' tables ----

def test_ours_consumes_tvm_ffi_through_its_table():
    t = tvm_ffi.from_dlpack(np.arange(6.0))

    class NoDunder(tvm_ffi.core.DLTensorTestWrapper):
        def __dlpack__(self, **kw):  # proves the table was used
            raise AssertionError("__dlpack__ called")

    _, i0, _ = counts()
    b = ub.from_dlpack(NoDunder(t))
    assert counts()[1] == i0 + 1
    assert np.array_equal(np.from_dlpack(b), np.arange(6.0))


def test_from_dlpack_rules_hold_on_the_table_path():
    h = np.arange(6.0)
    w = tvm_ffi.core.DLTensorTestWrapper(tvm_ffi.from_dlpack(h))
    assert np.shares_memory(np.from_dlpack(ub.from_dlpack(w)), h)
    assert not np.shares_memory(np.from_dlpack(ub.from_dlpack(w, copy=True)), h)
    assert np.shares_memory(np.from_dlpack(ub.from_dlpack(w, device=(1, 0), copy=False)), h)
    with pytest.raises(BufferError):
        ub.from_dlpack(w, device=(2, 0))  # a device nobody can place it on


def _attr_class(value, dunder=True):
    """A producer type whose __dlpack_c_exchange_api__ is value, with a
    __dlpack__ that works (numpy's), for the cases that fall back."""
    base = np.arange(3.0)

    class P:
        __dlpack_c_exchange_api__ = value

        def __dlpack__(self, **kw):
            return base.__dlpack__(**kw)

        def __dlpack_device__(self):
            return base.__dlpack_device__()

    return P()


def test_bad_capsule_name_is_a_type_error():
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    api = our_api()
    name = ctypes.create_string_buffer(b"not_dlpack_exchange_api")  # the capsule keeps this pointer
    with pytest.raises(TypeError, match='capsule named "not_dlpack_exchange_api"'):
        ub.from_dlpack(_attr_class(new(ctypes.addressof(api), ctypes.addressof(name), None)))
    with pytest.raises(TypeError, match="neither"):
        ub.from_dlpack(_attr_class("dlpack_exchange_api"))


def test_wrong_major_falls_back():
    newer = _API(_Header(2, 0, None))
    _, i0, _ = counts()
    assert np.array_equal(np.from_dlpack(ub.from_dlpack(_attr_class(ctypes.addressof(newer)))), np.arange(3.0))
    assert counts()[1] == i0, "a major-2 table without an older one must not be used"


def test_prev_api_chain_reaches_an_older_major():
    # A producer of usmbridge arrays whose newest table is major 2: the
    # consumer must walk prev_api to usmbridge's 1.3 table.
    code = """
    import ctypes, numpy as np, usmbridge as ub
    from test_exchange import _API, _Header, our_api, counts
    ours = our_api()
    top = _API(_Header(2, 0, ctypes.addressof(ours)))
    # usmbridge.Array is a static type: its table cannot be swapped, so a
    # proxy type's chain ends at ours, whose managed_tensor_from_py_object_
    # no_sync refuses the proxy with a TypeError: proof that the 1.x table
    # of the chain was the one called.
    class Proxy:
        __c_dlpack_exchange_api__ = ctypes.addressof(top)
    e0 = counts()[0]
    try:
        ub.from_dlpack(Proxy())
    except TypeError as e:
        print("TypeError", "expected a usmbridge.Array" in str(e), counts()[0] == e0)
    """
    assert in_child(code) == "TypeError True True"


def test_null_functions_and_silent_failures():
    code = """
    import ctypes, numpy as np, usmbridge as ub
    from test_exchange import _API, _Header, FROM_PY
    def holder(addr):
        class P:
            __c_dlpack_exchange_api__ = addr
            def __dlpack__(self, **kw): raise AssertionError("fell back")
            def __dlpack_device__(self): return (1, 0)
        return P()
    def run(api):
        try:
            ub.from_dlpack(holder(ctypes.addressof(api)))
            return "ok"
        except BaseException as e:
            return type(e).__name__ + ":" + str(e).split(": ")[-1]
    null = _API(_Header(1, 3, None))
    print(run(null))
    silent = _API(_Header(1, 3, None))
    @FROM_PY
    def fail(obj, out):
        return -1
    silent.from_py = ctypes.cast(fail, ctypes.c_void_p)
    print(run(silent))
    """
    out = in_child(code).splitlines()
    assert out == ["BufferError:managed_tensor_from_py_object_no_sync is NULL",
                   "ValueError:managed_tensor_from_py_object_no_sync of holder.<locals>.P failed without "
                   "setting an exception"], out


def test_attribute_that_raises_propagates():
    class Boom(Exception):
        pass

    err = Boom("no table today")

    class Meta(type):
        @property
        def __dlpack_c_exchange_api__(cls):
            raise err

    class P(metaclass=Meta):
        def __dlpack__(self, **kw):
            raise AssertionError

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(Boom) as info:
        ub.from_dlpack(P())
    assert info.value is err


# ---- calling our table directly (what a C consumer does) ----

def test_our_functions_called_directly():
    code = """
    import ctypes, numpy as np, usmbridge as ub
    from test_exchange import our_api
    api = our_api()
    P = ctypes.PYFUNCTYPE  # keeps the GIL and raises the exception left set
    from_py = P(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(api.from_py)
    to_py = P(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(api.to_py)
    dlt = P(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(api.dltensor_from_py)
    stream = P(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(api.stream)
    def err(f, *a):
        try:
            return "r=%d" % f(*a)
        except BaseException as e:
            return type(e).__name__
    out = ctypes.c_void_p(0)
    print(err(from_py, np.arange(3.0), ctypes.byref(out)), out.value)
    a = ub.from_dlpack(np.arange(3.0))
    print(err(from_py, a, None))
    print(err(to_py, None, ctypes.byref(out)))
    buf = (ctypes.c_char * 48)()
    print(err(dlt, a, buf), ctypes.c_int32.from_buffer(buf, 16).value)
    x = np.arange(3.0); x.flags.writeable = False
    ro = ub.from_dlpack(x)
    print("read-only:", err(dlt, ro, buf), err(from_py, ro, ctypes.byref(out)))
    s = ctypes.c_void_p(1)
    print(err(stream, 1, 0, ctypes.byref(s)), s.value)
    print(err(stream, 7, 0, ctypes.byref(s)))
    # allocator: errors through SetError, no Python exception
    SETERR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
    got = []
    seterr = SETERR(lambda ctx, kind, msg: got.append((kind.decode(), msg.decode())))
    alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, SETERR)(api.allocator)
    shape = (ctypes.c_int64 * 2)(2, 3)
    proto = (ctypes.c_char * 48)()
    ctypes.c_int32.from_buffer(proto, 8).value = 1     # kDLCPU
    ctypes.c_int32.from_buffer(proto, 16).value = 2    # ndim
    proto[20], proto[21], proto[22] = 2, 32, 1         # float32
    ctypes.c_void_p.from_buffer(proto, 24).value = ctypes.addressof(shape)
    m = ctypes.c_void_p(0)
    print(alloc(ctypes.addressof(proto), ctypes.byref(m), None, seterr), got)
    r = ctypes.py_object()
    print(err(to_py, m, ctypes.byref(r)), r.value.shape, r.value.dtype)
    proto[20] = 99                                     # no such dtype code
    print(alloc(ctypes.addressof(proto), ctypes.byref(m), None, seterr), got[-1][0])
    """
    out = in_child(code).splitlines()
    assert out == ["TypeError None", "ValueError", "ValueError", "r=0 1",
                   "read-only: BufferError BufferError", "r=0 None", "BufferError",
                   "0 []", "r=0 (2, 3) float32", "-1 BufferError"], out


def in_child(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PKG_DIR, os.path.dirname(__file__), env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, "child exited with %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr[-3000:])
    return p.stdout.strip()


def test_usm_array_through_the_table():
    dpctl = pytest.importorskip("dpctl")
    dpt = pytest.importorskip("dpnp.tensor")
    q = dpctl.SyclQueue("opencl:cpu")
    x = dpt.arange(16, dtype="f4", sycl_queue=q)
    a = ub.asarray(x)  # its queue is x's, not usmbridge's queue of the device
    api = our_api()
    s = ctypes.c_void_p(0)
    stream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(api.stream)
    assert stream(*a.device, ctypes.byref(s)) == 0 and s.value  # a SYCL queue for kDLOneAPI
    e0, i0, _ = counts()
    b = ub.from_dlpack(a)  # a view of our own Array (test_our_array_to_our_from_dlpack_is_a_view)
    assert counts()[:2] == (e0, i0)
    assert b.device == a.device and b.data == a.data and b.usm_type == "device"
    assert b.sycl_queue == a.sycl_queue
    h = ub.from_dlpack(a, device=(1, 0))  # the host copy rule of every import
    assert np.array_equal(np.from_dlpack(h), np.arange(16, dtype="f4"))
    # tvm-ffi both ways with device USM: as a function argument (tvm-ffi
    # asks current_work_stream for a non-CPU tensor) and back through
    # tvm-ffi's own table
    r = tvm_ffi.get_global_func("testing.echo")(a)
    assert type(r) is ub.Array and r.device == a.device and r.data == a.data
    t = tvm_ffi.from_dlpack(a)
    back = ub.from_dlpack(tvm_ffi.core.DLTensorTestWrapper(t))
    assert back.device == a.device and back.data == a.data and back.usm_type == "device"


def test_a_class_that_gains_a_table_is_seen():
    # Python classes are not cached without a table: setting one later
    # takes effect (usmbridge's table then refuses the foreign object,
    # which proves it was called)
    base = np.arange(3.0)

    class P:
        def __dlpack__(self, **kw):
            return base.__dlpack__(**kw)

        def __dlpack_device__(self):
            return base.__dlpack_device__()

    assert ub.from_dlpack(P()).shape == (3,)
    P.__dlpack_c_exchange_api__ = ub.Array.__dlpack_c_exchange_api__
    with pytest.raises(TypeError, match="expected a usmbridge.Array"):
        ub.from_dlpack(P())


def test_a_table_added_to_a_type_later_is_seen():
    """from_dlpack's fast path remembers the last type it found without a
    table while the type's version tag holds; a table set on the type (or
    a base) afterwards is read on the next call."""
    base = np.arange(4.0)

    class Base:
        pass

    class P(Base):
        def __dlpack__(self, **kw):
            return base.__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)

    for _ in range(3):
        assert ub.from_dlpack(P()).shape == (4,)
    Base.__dlpack_c_exchange_api__ = "dlpack_exchange_api"  # on the base: P's tag changes too
    with pytest.raises(TypeError, match="neither"):
        ub.from_dlpack(P())
    del Base.__dlpack_c_exchange_api__
    assert ub.from_dlpack(P()).shape == (4,)
    P.__c_dlpack_exchange_api__ = "not an int"
    with pytest.raises(TypeError):
        ub.from_dlpack(P())
