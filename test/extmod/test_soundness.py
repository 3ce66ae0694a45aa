"""pyext as a hostile or careless user meets it: the defects of issue 28,
each as a case that crashed, leaked, hung or lied before the fix. Every
case runs in a fresh interpreter (a use of freed memory may take the
process down), and asserts on what the user sees."""
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE = """
import gc, sys, weakref, threading
import numpy as np
import extmod, producers
"""

CASES = {
    # Keep twice: each kept view holds the memory until it is released.
    "keep twice": """
        x, w = producers.numpy_source(np.arange(1 << 16))
        a, b = extmod.hold(x, "twice")
        del x; gc.collect()
        extmod.unhold(a)
        assert w() is not None, "the second kept view holds the array"
        assert extmod.held_sum(b) == sum(range(1 << 16))
        extmod.unhold(b)
        assert w() is None, "released by the last kept view"
        """,
    "keep twice, capsule": """
        cap, addr = producers.counting_capsule(range(10))
        a, b = extmod.hold(cap, "twice")
        del cap
        extmod.unhold(b)
        assert producers.deletes[addr] == 0
        assert extmod.held_sum(a) == 45
        extmod.unhold(a)
        assert producers.deletes[addr] == 1, "the deleter ran once, after the last kept view"
        """,
    # Keep, then return the argument: the result and the kept view each
    # hold the memory.
    "keep then return": """
        x, w = producers.numpy_source(np.arange(1 << 16))
        r = extmod.hold_return(x)
        k = extmod.last_kept()
        del x; gc.collect()
        extmod.unhold(k)
        assert w() is not None, "the result holds the array"
        assert float(np.asarray(r).sum()) == sum(range(1 << 16))
        del r
        assert w() is None
        """,
    # Keep in a function that released the GIL, and in goroutines: no
    # Python object without a thread state; release from goroutines of a
    # function that holds the GIL and waits for them: no deadlock.
    "keep without the GIL": """
        x = np.arange(1024.0)
        for i in range(2000):
            for how in ("plain", "twice", "goroutine"):
                for k in extmod.hold_nogil(x, how):
                    extmod.unhold(k, "goroutine")
                for k in extmod.hold(x, how):
                    extmod.unhold_nogil(k, "goroutine")
        assert extmod.held_count() == 0
        """,
    "keep from threads": """
        x = np.arange(1024.0)
        def work():
            for _ in range(500):
                for k in extmod.hold_nogil(x, "goroutine"):
                    assert extmod.held_sum(k) == 1023 * 512
                    extmod.unhold_nogil(k, "goroutine")
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert extmod.held_count() == 0
        """,
    # A cycle through an Array that holds its argument's buffer is found
    # by the collector (memoryview's is).
    "buffer cycle": """
        class Sub(np.ndarray):
            pass
        for _ in range(3):
            x = np.zeros(1 << 20).view(Sub)
            x.v = extmod.same(x)
            w = weakref.ref(x)
            del x
            gc.collect()
            assert w() is None, "the cycle through the Array was not collected"
        """,
    # A tensor whose element count fits but whose size in bytes does not:
    # refused as NumPy refuses such a shape (OverflowError), never an
    # nbytes that wraps.
    "size in bytes overflows": """
        for n in (2**61 + 1, 2**62, 2**63 - 1):
            try:
                extmod.total(producers.broadcast_capsule(n))
            except OverflowError as e:
                assert "total() argument 'x'" in str(e), e
            else:
                raise AssertionError("an array of %d float64 was taken" % n)
        assert extmod.kind(producers.broadcast_capsule(2**59)) == "host"  # 2**62 bytes fit
        """,
    # A call that fails after it took a producer's tensor: the deleter (here
    # Python code) runs once, with no exception in its way, and the caller
    # gets the call's own TypeError, not a SystemError.
    "deleter of a failed call": """
        log = []
        cap = producers.python_deleter_capsule(range(4), log)
        try:
            extmod.same(cap, "not an array")
        except TypeError as e:
            assert "same() argument 'shape'" in str(e), e
        else:
            raise AssertionError("no TypeError")
        assert log == [None], log
        log.clear()
        try:
            extmod.first(producers.python_deleter_capsule(range(4), log))  # float64, not int32: Go refuses
        except TypeError as e:
            assert "first() argument 'x' must be an array of int32" in str(e), e
        else:
            raise AssertionError("no TypeError")
        assert log == [None], log
        """,
    # Buffer-protocol objects whose type has a metaclass other than type
    # (ctypes arrays, an ABCMeta bytearray subclass) are arrays like any.
    "metaclasses": """
        import abc, ctypes
        assert extmod.total((ctypes.c_double * 3)(1, 2, 3)) == 6.0
        class B(bytearray, metaclass=abc.ABCMeta):
            pass
        assert extmod.kind(B(b"abcd")) == "host"
        """,
    # Exceptions the caller's objects raise reach the caller: a producer's
    # __dlpack_device__ (KeyboardInterrupt included), a device argument's
    # own code; a TypeError of __float__/__index__ is the cause of the
    # TypeError that names the parameter.
    "exceptions reach the caller": """
        class Boom(Exception):
            pass
        class Producer:
            def __init__(self, exc):
                self.exc, self.x = exc, np.arange(3.0)
            def __dlpack__(self, **kw):
                return self.x.__dlpack__(**kw)
            def __dlpack_device__(self):
                raise self.exc
        for exc in (Boom("device"), KeyboardInterrupt()):
            try:
                extmod.total(Producer(exc))
            except BaseException as e:
                assert e is exc, repr(e)
            else:
                raise AssertionError("the exception was cleared")
        class Index:
            def __index__(self):
                raise Boom("index")
        class Queue:
            @property
            def sycl_device(self):
                raise Boom("sycl_device")
        for bad in ((Index(), 0), Queue()):
            try:
                extmod.where(bad)
            except Boom:
                pass
            else:
                raise AssertionError("not the device's own exception")
        class TI:
            def __index__(self):
                raise TypeError("mine")
        class TF:
            def __float__(self):
                raise TypeError("fmine")
        for call, name in ((lambda: extmod.narrow(TI(), 0), "narrow() argument 'i'"),
                           (lambda: extmod.scalars(1, TF(), True), "scalars() argument 'f'")):
            try:
                call()
            except TypeError as e:
                assert name in str(e) and isinstance(e.__cause__, TypeError) and "mine" in str(e.__cause__), repr(e)
            else:
                raise AssertionError("no TypeError")
        """,
    # uint64 takes and returns the whole range.
    "uint64": """
        assert extmod.wide(2**64 - 2, 1) == 2**64 - 1 and extmod.wide(2**63 - 1) == 2**64 - 1
        assert extmod.wide(1, 2) == 3 and extmod.wide(2**63, 2**63) == 0
        for bad in (-1, 2**64):
            try:
                extmod.wide(bad)
            except OverflowError as e:
                assert "wide() argument 'u'" in str(e)
            else:
                raise AssertionError("took %d" % bad)
        """,
    # Element types DLPack cannot carry: a TypeError that names the
    # function and the parameter, caused by NumPy's own refusal.
    "dtypes DLPack cannot carry": """
        for dt in ("M8[ns]", ">f8", object, "i4,f4", "U3"):
            try:
                extmod.total(np.zeros(3, dt))
            except TypeError as e:
                assert "total() argument 'x'" in str(e), e
                assert isinstance(e.__cause__, BufferError), repr(e.__cause__)
            else:
                raise AssertionError("took " + str(dt))
        """,
    # Signatures read back: every default, escapes included.
    "signatures": """
        import inspect
        assert str(inspect.signature(extmod.same)) == "(x, shape=None)"
        assert str(inspect.signature(extmod.where)) == "(d='cpu')"
        assert inspect.signature(extmod.echo).parameters["s"].default == extmod.echo()
        assert extmod.echo() == "a\\\\b'c\\"\\n\\x00\\u00e9\\u2028"
        assert inspect.signature(extmod.wide).parameters["v"].default == 2**63
        """,
    # A Go error's message reaches Python whole, NUL bytes included.
    "messages with NUL": """
        try:
            extmod.fail_with("before\\x00after")
        except RuntimeError as e:
            assert str(e) == "before\\x00after", repr(str(e))
        """,
    # Functions of any arity (issue 41): more parameters than the C half's
    # inline room, bound by position and keyword, missing ones, arrays
    # held for the call. A stack array of 64 was written past (SIGSEGV
    # at 70 parameters, AddressSanitizer reports from 65).
    "any arity": """
        for n in (9, 70, 126):
            total, count = getattr(extmod, "sum_%d" % n), getattr(extmod, "arrays_%d" % n)
            assert total() == sum(range(n))
            assert total(*([1.0] * n)) == n
            assert total(**{"x%d" % (n - 1): 0.0}) == sum(range(n - 1))
            assert count() == 0
            xs = [np.ones(i + 1) for i in range(n)]
            assert count(*xs) == n
            assert count(a0=xs[0], **{"a%d" % (n - 1): xs[1]}) == 2
            try:
                total(*([0.0] * (n + 1)))
            except TypeError as e:
                assert "at most %d positional" % n in str(e), e
            else:
                raise AssertionError("took %d arguments" % (n + 1))
            try:
                total(**{"x%d" % n: 1.0})
            except TypeError as e:
                assert "unexpected keyword argument 'x%d'" % n in str(e), e
            else:
                raise AssertionError("took x%d" % n)
            try:
                count(*xs[:-1], "not an array")
            except TypeError as e:
                assert "argument 'a%d'" % (n - 1) in str(e), e
            else:
                raise AssertionError("took a str")
        """,
    # A value Go returns after its object went and closed it (issue 41: a
    # Holder's *Box, its Box object deleted): refused with a RuntimeError
    # naming the method and the class, never wrapped in a new object that
    # would pass a closed value off as alive and close it a second time
    # (a Close that frees native memory freed it twice). A Box Go made
    # before any object held it is wrapped once, and closed once; a value
    # of a type without Close is wrapped again, harmlessly.
    "value returned after its object went": """
        b = extmod.Box(101)
        c = extmod.Holder(b)
        assert c.box() is b
        del b
        assert extmod.box_closes(101) == 1
        for _ in range(2):
            try:
                r = c.box()
            except RuntimeError as e:
                assert "Holder.box() returned a Box whose object is gone" in str(e), e
            else:
                raise AssertionError("a closed Box was returned as alive")
        del c
        gc.collect()
        assert extmod.box_closes(101) == 1, "closed %d times" % extmod.box_closes(101)
        h = extmod.holder_of_new(102)
        b = h.box()
        assert b.id == 102 and h.box() is b and extmod.box_closes(102) == 0
        del b
        gc.collect()
        assert extmod.box_closes(102) == 1
        try:
            h.box()
        except RuntimeError:
            pass
        else:
            raise AssertionError("a closed Box was returned as alive")
        t = extmod.token(5)
        extmod.keep_token(t)
        del t
        assert extmod.kept_token().id == 5
        """,
    # A method's receiver cleared while a later argument is read (its
    # __float__ runs Python: here it calls the class's tp_clear, as the
    # collector does to a cycle, and makes a new object). The call keeps
    # the object's value until it ends: the method runs on it, not on the
    # new object that took its handle (it returned 999, the intruder's),
    # and Close runs once, after the call. tp_clear is called through
    # ctypes as in test_classes.py's CLEARED.
    "receiver cleared during the call": """
        import ctypes
        T = extmod.Plan
        assert ctypes.c_ulong.from_address(id(T) + 168).value == T.__flags__, "PyTypeObject layout"
        clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(ctypes.c_void_p.from_address(id(T) + 192).value)
        p = T(1.0)
        closed = extmod.closed_plans()
        seen = []
        class Clears:
            def __float__(self):
                clear(p)
                seen.append(extmod.closed_plans())
                seen.append(T(999.0))
                return 1.0
        got = p.poly(0.0, Clears(), 0.0, 0.0)
        assert got == 1.0, "the method ran on another object's value: %r" % got
        assert seen[0] == closed, "closed while the call ran on it"
        assert extmod.closed_plans() == closed + 1, "not closed once when the call ended"
        try:
            p.a
        except TypeError as e:
            assert "Go value is gone" in str(e), e
        else:
            raise AssertionError("a cleared object was used")
        assert seen[1].a == 999.0 and seen[1].itself() is seen[1]
        del p, seen
        gc.collect()
        assert extmod.closed_plans() == closed + 2
        """,
    # 20,000 goroutines waiting for the GIL at once: each waits in Go, not
    # on an OS thread of its own.
    "many goroutines": """
        seen = []
        extmod.from_goroutines(seen.append, 20000)
        assert sorted(seen) == list(range(20000))
        """,
}

DPNP_CASES = {
    # An argument Go imported (dpnp USM) returned as the result: a whole
    # array, with its queue, SUAI and exports.
    "dpnp argument returned": """
        import dpnp.tensor as dpt
        for usm_type in ("device", "shared"):
            x = dpt.arange(10.0, usm_type=usm_type)
            r = extmod.same(x)
            assert r.usm_type == usm_type and r.shape == (10,)
            assert r.__sycl_usm_array_interface__["data"][0] == x.__sycl_usm_array_interface__["data"][0]
            assert r.sycl_queue == x.sycl_queue
            assert np.from_dlpack(r, device="cpu").tolist() == list(range(10))
            if usm_type == "device":
                try:
                    memoryview(r)
                except BufferError:
                    pass
                else:
                    raise AssertionError("memoryview of device USM")
            del x; gc.collect()
            assert dpt.asnumpy(dpt.asarray(r)).sum() == 45, "the result holds the memory"
        """,
}


def run(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([HERE, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    run(CASES[name])


def have_dpnp():
    try:
        import dpnp.tensor  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.parametrize("name", sorted(DPNP_CASES))
def test_dpnp_case(name):
    if not have_dpnp():
        pytest.skip("dpnp is not installed")
    run(DPNP_CASES[name])
