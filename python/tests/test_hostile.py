"""Hostile objects at the Python -> Go boundary: usmbridge.asarray and the
keywords of Array.__dlpack__ / usmbridge.from_dlpack.

Cases that crashed the process before (a stack overflow, a Go panic, a read
of freed memory) run in a child interpreter, so that a regression fails the
test instead of killing pytest.
"""
import os
import subprocess
import sys
import textwrap

import pytest
import usmbridge as ub

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")

PKG_DIR = os.path.join(os.path.dirname(__file__), "..")

PRELUDE = """
import sys
sys.path.insert(0, %r)
import dpctl, dpnp.tensor as dpt, usmbridge as ub
q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(32, dtype="f4", sycl_queue=q)
PTR = x.__sycl_usm_array_interface__["data"][0]
class S:
    def __init__(self, d): self.d = d
    @property
    def __sycl_usm_array_interface__(self): return self.d
def base(**kw):
    d = {"data": (PTR, False), "shape": (4,), "strides": None, "typestr": "<f4", "version": 1, "syclobj": q}
    d.update(kw)
    return d
def result(obj):
    try:
        a = ub.asarray(obj)
    except BaseException as e:
        return type(e).__name__
    return "ok %%r" %% (a.shape,)
""" % PKG_DIR


def in_child(code, debug_malloc=False):
    """Runs PRELUDE + code in a child interpreter and returns what it printed."""
    env = dict(os.environ)
    if debug_malloc:
        env["PYTHONMALLOC"] = "debug"
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, "child exited with %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr[-3000:])
    return p.stdout.strip()


# A container that holds itself is a value of the wrong type: dpctl's
# exception, never a stack overflow. (One child runs all the cases: a crash
# fails the test at the first case that crashed.)
RECURSIVE = [
    ("s = []; s.append(s); obj = S(base(shape=s))", "TypeError"),
    ("d = {}; d['d'] = d; obj = S(base(shape=(d,)))", "TypeError"),
    ("p = [0, False]; p[0] = p; obj = S(base(data=p))", "TypeError"),
    ("s = []; s.append(s); obj = S(base(shape=(1,), strides=s))", "TypeError"),
    ("o = []; o.append(o); obj = S(base(offset=o))", "TypeError"),
    ("v = []; v.append(v); obj = S(base(version=v))", "TypeError"),
    ("t = []; t.append(t); obj = S(base(typestr=t))", "ValueError"),
    ("d = base(); d['shape'] = d; obj = S(d)", "ValueError"),
    ("p = [PTR, 0]; p[1] = p; obj = S(base(data=p))", "ok (4,)"),
]

# Python code that runs while Go reads (here __index__ and __getattr__) may
# change or free the containers; Go reads them as they were when it first
# looked. PYTHONMALLOC=debug makes a read of freed memory fault.
MUTATING = [
    ("""
class Evil:
    def __index__(self): shape.clear(); return 3
shape = [Evil(), 5]
obj = S(base(shape=shape))
""", "ok (3, 5)"),
    ("""
class D(dict): pass
class Evil:
    def __index__(self): d["shape"] = (1,); return 3
d = D(base(shape=(Evil(),) + (1,) * 20))
obj = S(d)
""", "ok (3%s)" % (", 1" * 20)),
    ("""
class D(dict): pass
class Evil:
    def __index__(self): d["data"] = (0, False); return PTR
d = D(base(data=[Evil(), False]))
obj = S(d)
""", "ok (4,)"),
    ("""
class D(dict): pass
class Evil:
    def __getattr__(self, name):
        d.pop("syclobj", None)
        if name == "_get_capsule":
            return lambda: 42
        raise AttributeError(name)
d = D(base(syclobj=Evil()))
obj = S(d)
""", "ValueError"),
]


@pytest.mark.parametrize("cases,debug_malloc", [(RECURSIVE, False), (MUTATING, True)], ids=["recursive", "mutating"])
def test_crash_class_in_a_child(cases, debug_malloc):
    code = "".join("%s\nprint(result(obj), flush=True)\n" % setup for setup, _ in cases)
    assert in_child(code, debug_malloc).splitlines() == [want for _, want in cases]


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


@pytest.fixture
def base(q):
    x = dpt.arange(32, dtype="f4", sycl_queue=q)

    def make(**kw):
        d = {"data": (x.__sycl_usm_array_interface__["data"][0], False), "shape": (4,), "strides": None,
             "typestr": "<f4", "version": 1, "syclobj": q}
        d.update(kw)
        return d
    make.keep = x
    return make


class S:
    def __init__(self, d):
        self.d = d

    @property
    def __sycl_usm_array_interface__(self):
        return self.d


class Liar(int):
    def __str__(self):
        return "4"
    __repr__ = __str__


class Raises:
    def __index__(self):
        raise KeyError("from __index__")


def test_ints_are_read_by_value(base):
    with pytest.raises(OverflowError):
        ub.asarray(S(base(shape=(Liar(2 ** 70),))))
    with pytest.raises(OverflowError):
        ub.asarray(S(base(shape=(10 ** 5000,))))  # str() of it raises ValueError
    with pytest.raises(OverflowError):
        ub.asarray(S(base(offset=-10 ** 5000)))
    with pytest.raises(KeyError, match="from __index__"):  # propagates, not replaced
        ub.asarray(S(base(shape=(Raises(),))))
    a = ub.asarray(S(base(shape=(True, 3), strides=(3, True), version=True)))
    assert a.shape == (1, 3) and a.strides == (3, 1)


class Boom(Exception):
    pass


# A syclobj's own exceptions reach the caller as themselves, as dpctl's
# hasattr(syclobj, "_get_capsule") and its call let them through: one its
# attribute lookup raises (only AttributeError means "no such method")
# and one the call raises, KeyboardInterrupt and MemoryError included.
# (The lookup's were swallowed, and the call's became a ValueError.)
@pytest.mark.parametrize("exc", [Boom("mine"), KeyError("none"), KeyboardInterrupt("ctrl-c"), MemoryError("m")],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("where", ["lookup", "call"])
def test_syclobj_exceptions_propagate(base, exc, where):
    class Source:
        if where == "lookup":
            def __getattr__(self, name):
                raise exc
        else:
            def _get_capsule(self):
                raise exc

    for consumer in (dpt.asarray, ub.asarray):  # dpctl's parser first: the behaviour to match
        with pytest.raises(type(exc)) as info:
            consumer(S(base(syclobj=Source())))
        assert info.value is exc, consumer


# A producer's own exception from the lookup of __dlpack__ or
# __dlpack_device__ reaches the caller as itself, as from dpnp.tensor's
# getattr(x, name, None) (it became "does not implement `__dlpack__`", an
# AttributeError).
@pytest.mark.parametrize("name", ["__dlpack__", "__dlpack_device__"])
@pytest.mark.parametrize("device", [None, (14, 0)], ids=["where it is", "onto the device"])
def test_producer_lookup_exceptions_propagate(name, device):
    import numpy as np
    exc = Boom(name)
    host = np.arange(4.0)

    def boom(self):
        raise exc

    class P:
        def __dlpack__(self, **kw):
            return host.__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)
    setattr(P, name, property(boom))
    with pytest.raises(Boom) as peer:
        dpt.from_dlpack(P())
    assert peer.value is exc
    with pytest.raises(Boom) as info:
        ub.from_dlpack(P(), device=device)
    assert info.value is exc


def test_typestr_with_nul(base):
    with pytest.raises(ValueError):
        ub.asarray(S(base(typestr="<f4\x00junk")))


def test_memory_shaped_dict_keeps_its_flag(q):
    m = dpctl.memory.MemoryUSMShared(64, queue=q)
    assert ub.asarray(m).readonly is False  # dpctl.memory's True means "writable"
    d = dict(m.__sycl_usm_array_interface__)
    assert d["data"][1] is True and "offset" not in d and d["strides"] is None
    # Same shape, but not dpctl.memory: True means read-only, as the spec says.
    assert ub.asarray(S(d)).readonly is True


def test_syclobj_is_the_one_bound(base, q):
    # An __index__ run while parsing swaps the dict's syclobj; the array
    # re-exports the queue it was bound to, not the new value.
    q2 = dpctl.SyclQueue("opencl:cpu")

    class D(dict):
        pass

    class Swap:
        def __index__(self):
            d["syclobj"] = q2
            return 4

    d = D(base(shape=(Swap(),)))
    a = ub.asarray(S(d))
    assert a.__sycl_usm_array_interface__["syclobj"] is q


@pytest.mark.parametrize("kw,exc", [
    (dict(max_version=(1, 0), dl_device=(1, 2 ** 32)), BufferError),
    (dict(max_version=(1, 0), dl_device=(2 ** 32 + 1, 0)), BufferError),
    (dict(max_version=(1, 0), dl_device=(1, 10 ** 5000)), BufferError),
    (dict(max_version=(1, 0), dl_device=(1, Raises())), KeyError),
    (dict(max_version=(-1, 0)), ValueError),
    (dict(max_version=(Liar(2 ** 70), 0.5)), TypeError),
])
def test_dlpack_keywords_are_not_truncated(kw, exc):
    a = ub.from_dlpack(__import__("numpy").arange(3.0))
    with pytest.raises(exc):
        a.__dlpack__(**kw)


def test_dlpack_huge_max_version_asks_for_any():
    a = ub.from_dlpack(__import__("numpy").arange(3.0))
    cap = a.__dlpack__(max_version=(2 ** 40, 2 ** 70))
    assert repr(cap).split('"')[1] == "dltensor_versioned"


def test_from_dlpack_device_beyond_int32(q):
    x = dpt.arange(4, sycl_queue=q)
    with pytest.raises(BufferError):
        ub.from_dlpack(x, device=(14, 2 ** 32))
