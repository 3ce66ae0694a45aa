"""Host DLPack imports made in C (pyext/dlimport.c), as NumPy's
from_dlpack makes them: one capsule, one owner, one call of the producer's
deleter. C's import repeats dlpack.Import's rules (Go's FuzzHostImport
holds the two equal over hostile tensors); these tests hold them equal over
real producers, end to end: the same array as Go's import makes
(from_dlpack with copy=False takes Go's path), the same flags, Go's errors
for a tensor C does not take, and a view that does not change when the
producer rewrites its tensor afterwards.

Cases that can free memory under a live view run in a fresh interpreter."""
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import usmbridge as ub
from dlstructs import versioned_of

HERE = os.path.dirname(os.path.abspath(__file__))


def c_imports():
    return ub._stats()["c_imports"]


MAKERS = {
    "1d": lambda: np.arange(8.0),
    "strided3d": lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4)[:, ::-1, 1::2],
    "negative": lambda: np.arange(10, dtype=np.float32)[::-3],
    "0d": lambda: np.array(7.5),
    "size0": lambda: np.zeros((3, 0), dtype=np.complex64),
    "transposed": lambda: np.arange(6, dtype=np.uint16).reshape(2, 3).T,
    "bool": lambda: np.array([True, False, True]),
    "5d": lambda: np.zeros((1, 2, 1, 2, 1), dtype=np.int8),
    "f16": lambda: np.arange(5, dtype=np.float16),
    "c16": lambda: np.arange(4, dtype=np.complex128) * 1j,
}


def props(a):
    return (a.shape, a.dtype, a.strides, a.offset, a.usm_type, a.device, a.readonly, a.data)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_c_import_is_gos(name):
    x = MAKERS[name]()
    n0 = c_imports()
    a = ub.from_dlpack(x)  # C
    assert c_imports() - n0 == 1
    b = ub.from_dlpack(x, copy=False)  # Go's path, with Go's import
    assert c_imports() - n0 == 1
    assert props(a) == props(b)
    assert a.data == x.__array_interface__["data"][0]
    view = np.from_dlpack(a)
    assert view.tolist() == x.tolist()
    assert x.size == 0 or np.shares_memory(view, x)


def test_read_only_flag():
    w = np.arange(5, dtype=np.uint64)
    r = np.arange(5, dtype=np.uint64)
    r.flags.writeable = False
    assert ub.from_dlpack(w).readonly is False
    assert ub.from_dlpack(r).readonly is True
    v = np.from_dlpack(ub.from_dlpack(r))
    assert v.flags.writeable is False
    with pytest.raises(ValueError):
        v[0] = 1.0


class Legacy:
    """A producer that predates max_version: a DLManagedTensor capsule."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        if kw:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        return self.x.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def test_legacy_capsules_are_read_only():
    """A DLManagedTensor cannot say whether its memory may be written:
    read-only, as numpy imports it."""
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    n0 = c_imports()
    a = ub.from_dlpack(Legacy(x))
    assert c_imports() - n0 == 1
    assert a.readonly is True and np.from_dlpack(Legacy(x)).flags.writeable is False
    assert props(a)[:-2] == props(ub.from_dlpack(Legacy(x), copy=False))[:-2]
    assert np.from_dlpack(a).tolist() == x.tolist()
    with pytest.raises(BufferError):
        a.__dlpack__()  # nor can it be exported as one


def test_sizes_that_vary():
    n0 = c_imports()
    sizes = range(0, 200, 7)
    for n in sizes:
        x = np.arange(n * 5, dtype=np.uint32).reshape(n, 5)
        a = ub.from_dlpack(x)
        assert a.shape == (n, 5) and np.from_dlpack(a).tolist() == x.tolist()
    assert c_imports() - n0 == len(sizes)


class Tampered:
    """numpy's own capsule with the DLTensor's data pointer rewritten, as a
    buggy producer would send it."""

    def __init__(self, x, data):
        self.x, self.data = x, data

    def __dlpack__(self, **kw):
        cap = self.x.__dlpack__(**kw)
        versioned_of(cap).dl_tensor.data = self.data
        return cap

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("data,message", [
    (None, "data is NULL"),
    ((1 << 56) - 8, "beyond any process memory"),
    ((1 << 64) - 8, "wrap around the address space"),
], ids=["null", "above-user-space", "wraps"])
def test_pointers_go_refuses_are_refused(data, message):
    """C does not take the tensor: Go decides, and raises what it raises."""
    x = np.arange(8.0)
    n0 = c_imports()
    with pytest.raises(BufferError, match=message):
        ub.from_dlpack(Tampered(x, data))
    assert c_imports() == n0
    assert np.from_dlpack(ub.from_dlpack(x)).tolist() == x.tolist()


def test_the_producers_other_device_is_gos():
    """__dlpack_device__ said kDLCPU, the tensor says kDLCUDA: Go's
    BufferError (the array API's exception for a tensor it cannot take)."""
    class Liar(Tampered):
        def __dlpack__(self, **kw):
            cap = self.x.__dlpack__(**kw)
            versioned_of(cap).dl_tensor.device_type = 2
            return cap
    with pytest.raises(BufferError):
        ub.from_dlpack(Liar(np.arange(3.0), None))


PRELUDE = """
import ctypes, gc, sys
sys.path.insert(0, %r)
sys.path.insert(0, %r)
import numpy as np
import usmbridge as ub
from dlstructs import versioned_of

def refs(x):
    return sys.getrefcount(x)

class Kept:
    # numpy's capsule, its struct kept to be changed after the import.
    def __init__(self, x):
        self.x = x
    def __dlpack__(self, **kw):
        cap = self.x.__dlpack__(**kw)
        self.m = versioned_of(cap)
        return cap
    def __dlpack_device__(self):
        return (1, 0)
""" % (os.path.join(HERE, ".."), HERE)

CASES = {
    # The producer rewrites its tensor after the import: the Array copied
    # what it needs (shape, strides, flags, data) when it took the tensor,
    # so it neither changes nor reads the rewritten struct; the producer's
    # deleter still runs once, at del.
    "producer changes its tensor": """
        x = np.arange(8.0); gc.collect(); r0 = refs(x)
        k = Kept(x)
        a = ub.from_dlpack(k)
        k.m.dl_tensor.shape[0] = -1
        k.m.dl_tensor.ndim = 7
        assert a.shape == (8,) and np.from_dlpack(a).tolist() == list(range(8))
        k.m.dl_tensor.shape[0] = 8; k.m.dl_tensor.ndim = 1  # what numpy's deleter frees
        del a, k
        gc.collect()
        assert refs(x) == r0
        """,
    # A capsule destructor that runs Python code (any producer may install
    # one) cannot reach the Array: it is made, and the capsule renamed,
    # before the capsule goes.
    "destructor runs Python": """
        calls = []
        DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the capsule is being freed: not touched
        @DESTRUCTOR
        def destroy(cap):
            calls.append(1)
            for _ in range(50):
                ub.from_dlpack(np.arange(4, dtype=np.int8))  # other imports meanwhile
        set_destructor = ctypes.pythonapi.PyCapsule_SetDestructor
        set_destructor.argtypes = [ctypes.py_object, ctypes.c_void_p]
        class Hostile:
            def __init__(self, x): self.x = x
            def __dlpack__(self, **kw):
                cap = self.x.__dlpack__(**kw)
                set_destructor(cap, ctypes.cast(destroy, ctypes.c_void_p))
                return cap
            def __dlpack_device__(self): return (1, 0)
        x = np.arange(6.0); gc.collect(); r0 = refs(x)
        a = ub.from_dlpack(Hostile(x))
        assert calls == [1]
        assert np.from_dlpack(a).tolist() == list(range(6)) and a.shape == (6,)
        del a; gc.collect()
        assert refs(x) == r0, "numpy's deleter ran once, at del"
        """,
    # The collector runs a finaliser at the first allocation after the
    # producer returned its capsule (the threshold is set so), and the
    # finaliser consumes the capsule as another consumer would: it takes
    # the tensor, renames the capsule and calls the deleter. C makes the
    # Array before it takes the capsule, so for a tensor of up to eight
    # dimensions nothing is allocated in between; one of nine needs a
    # larger Array, made after, and C looks at the capsule again before it
    # reads the tensor, so Go refuses the consumed capsule. Taking the
    # tensor anyway made an Array over it and called its deleter a second
    # time. (CPython 3.12 and later collect at the next eval breaker, not
    # inside the allocation: there both are imported.)
    "capsule consumed during the import": """
        from dlstructs import ManagedVersioned
        api = ctypes.pythonapi
        api.PyCapsule_New.restype = ctypes.py_object
        api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
        DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        deletes = []
        deleter = DELETER(deletes.append)
        x = np.arange(6.0)
        tensors = []
        def capsule(ndim):
            shape = (ctypes.c_int64 * ndim)(*([1] * (ndim - 1) + [6]))
            m = ManagedVersioned()
            m.version[0] = 1
            m.deleter = ctypes.cast(deleter, ctypes.c_void_p)
            m.dl_tensor.data, m.dl_tensor.device_type, m.dl_tensor.ndim = x.ctypes.data, 1, ndim
            m.dl_tensor.dtype = 2 | (64 << 8) | (1 << 16)  # float64
            m.dl_tensor.shape = ctypes.cast(shape, type(m.dl_tensor.shape))
            tensors.append((m, shape))
            return api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)
        stolen = []
        class Thief:
            def __init__(self, cap):
                self.cap, self.me = cap, self  # a cycle: only the collector frees it
            def __del__(self):
                if api.PyCapsule_IsValid(self.cap, b"dltensor_versioned"):
                    p = api.PyCapsule_GetPointer(self.cap, b"dltensor_versioned")
                    api.PyCapsule_SetName(self.cap, b"used_dltensor_versioned")
                    deleter(p)
                    stolen.append(1)
        class Producer:
            def __init__(self, ndim):
                self.ndim = ndim
            def __dlpack__(self, **kw):
                cap = capsule(self.ndim)
                Thief(cap)
                gc.set_threshold(gc.get_count()[0])  # the next tracked allocation collects
                return cap
            def __dlpack_device__(self):
                return (1, 0)
        outcomes = set()
        for ndim in (1, 9):
            for _ in range(5):
                deletes.clear(); stolen.clear()
                try:
                    a = ub.from_dlpack(Producer(ndim))
                except ValueError:
                    assert stolen, "refused a capsule nobody took"
                    outcomes.add((ndim, "refused"))
                else:
                    assert not stolen, "an Array over a tensor another consumer took"
                    assert a.shape[-1] == 6 and a.ndim == ndim
                    outcomes.add((ndim, "imported"))
                    del a
                gc.set_threshold(700); gc.collect()
                assert len(deletes) == 1, "the deleter ran %d times" % len(deletes)
        if sys.version_info < (3, 12):  # 3.12 on collect at the next eval breaker, never inside an allocation
            assert (9, "refused") in outcomes, "the finaliser never ran between the capsule and the Array: %s" % outcomes
        """,
    # Many, all released by C.
    "many": """
        x = np.arange(3.0); gc.collect(); r0 = refs(x); s0 = ub._stats()
        arrs = [ub.from_dlpack(x) for _ in range(5000)]
        assert refs(x) == r0 + 5000
        assert ub._stats()["c_imports"] - s0["c_imports"] == 5000
        del arrs
        assert refs(x) == r0
        s1 = ub._stats()
        assert s1["go_calls"] - s0["go_calls"] <= 2, "Go is entered for _stats only"
        assert (s1["live_imports"], s1["handles"]) == (s0["live_imports"], s0["handles"])
        """,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_in_child(case):
    code = PRELUDE + textwrap.dedent(CASES[case]) + "\nprint('ok')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


class Producer:
    """A host DLPack producer over a NumPy array (C's path takes it)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.parametrize("where", ["class", "base"])
@pytest.mark.parametrize("attr", ["__sycl_usm_array_interface__", "__dlpack_c_exchange_api__"])
def test_protocol_added_to_a_type_later_is_seen(where, attr):
    # C keeps what a type defines while CPython's version tag of the type
    # holds; a protocol added afterwards, to the class or to a base, sends
    # the next import to Go (which reads SUAI producers' queues and
    # exchange tables), as if it had been there from the start.
    Base = type("Base", (), {})
    P = type("P", (Base, Producer), {})
    p = P(np.arange(4.0))
    n0 = c_imports()
    for _ in range(3):
        assert ub.from_dlpack(p).shape == (4,)
    assert c_imports() - n0 == 3
    setattr(Base if where == "base" else P, attr, property(lambda self: (_ for _ in ()).throw(AttributeError(attr))))
    n1 = c_imports()
    try:
        ub.from_dlpack(p)
    except Exception:
        pass  # what Go makes of the broken attribute is not this test's
    assert c_imports() == n1, "C took a producer whose type now has " + attr
    delattr(Base if where == "base" else P, attr)
    ub.from_dlpack(p)
    assert c_imports() == n1 + 1


def test_numpy_subclass_is_asked_its_device():
    # NumPy's arrays are host memory, so C does not ask numpy.ndarray for
    # __dlpack_device__; a subclass may answer otherwise and is asked.
    calls = []

    class Sub(np.ndarray):
        def __dlpack_device__(self):
            calls.append(1)
            return super().__dlpack_device__()

    x = np.arange(3.0).view(Sub)
    n0 = c_imports()
    assert ub.from_dlpack(x).shape == (3,)
    assert calls and c_imports() - n0 == 1
