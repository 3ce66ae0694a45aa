"""pyext's contract, from Python: arguments and results of every kind,
errors as the exceptions their kinds say, Python exceptions coming back as
the same object, panics as RuntimeError, the GIL released around Go work
that asks for it, goroutines calling back into Python, and arrays kept past
the call. test/extension_test.go builds extmod and runs this file."""
import gc
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import extmod


def test_scalars():
    assert extmod.scalars(3, 2.5, True, "x") == (3, 2.5, True, "x")
    assert extmod.scalars(3, 2, False) == (3, 2.0, False, "default")
    assert extmod.scalars(np.int64(4), np.float32(1.5), b=True, s="é") == (4, 1.5, True, "é")
    with pytest.raises(TypeError, match=r"scalars\(\) argument 'i' must be int, not float"):
        extmod.scalars(1.5, 1.0, True)
    with pytest.raises(TypeError, match=r"argument 'b' must be bool, not int"):
        extmod.scalars(1, 1.0, 1)
    with pytest.raises(TypeError, match=r"argument 's' must be str, not bytes"):
        extmod.scalars(1, 1.0, True, b"x")
    with pytest.raises(OverflowError, match=r"argument 'i'"):
        extmod.scalars(2**70, 1.0, True)
    with pytest.raises(OverflowError, match=r"scalars\(\) argument 'f' is too large for a float") as info:
        extmod.scalars(1, 10**400, True)
    assert isinstance(info.value.__cause__, OverflowError), "CPython's own error is chained, not dropped"

    class HugeFloat:
        def __float__(self):
            raise OverflowError("its own")
    with pytest.raises(OverflowError, match="^its own$"):  # a __float__'s own exception, as itself
        extmod.scalars(1, HugeFloat(), True)
    with pytest.raises(TypeError, match="got multiple values for argument 'i'"):
        extmod.scalars(1, 1.0, True, i=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        extmod.scalars(1, 1.0, True, z=2)
    with pytest.raises(TypeError, match="at most 4 positional arguments"):
        extmod.scalars(1, 1.0, True, "s", 5)


def test_narrow_ints():
    assert extmod.narrow(-128, 65535) == 65407
    with pytest.raises(OverflowError, match=r"argument 'i' .*int8"):
        extmod.narrow(128, 0)
    with pytest.raises(OverflowError, match=r"argument 'u' .*uint16"):
        extmod.narrow(0, -1)


def test_array_arguments():
    x = np.arange(12, dtype="f8").reshape(3, 4)
    assert extmod.total(x) == x.sum()
    assert extmod.total(x[::-1, ::2]) == x[::-1, ::2].sum()
    assert extmod.total(x.T) == x.sum()
    assert extmod.total(memoryview(np.ones(3))) == 3.0  # any buffer
    assert extmod.total(np.ones(3).__dlpack__()) == 3.0  # a capsule
    with pytest.raises(TypeError, match=r"total\(\) argument 'x' must be an array of float64, got float32"):
        extmod.total(np.ones(3, "f4"))
    with pytest.raises(TypeError, match=r"argument 'x' .*array"):
        extmod.total(3.0)
    assert extmod.first(np.array([7, 8], dtype="i4")) == 7
    assert extmod.first(None) == -1 and extmod.first() == -1
    with pytest.raises(ValueError, match="must be C-contiguous"):
        extmod.first(np.arange(4, dtype="i4")[::2])
    with pytest.raises(ValueError, match="x is empty"):
        extmod.first(np.zeros(0, "i4"))
    assert extmod.kind(np.ones(2)) == "host"
    with pytest.raises(ValueError, match=r"argument 'shape' must have shape \(2, any\)"):
        extmod.same(np.ones(2), np.ones((3, 1)))


def test_array_results():
    x = np.arange(6.0)
    r0 = sys.getrefcount(x)
    a = extmod.same(x)
    assert a.data == x.ctypes.data and np.from_dlpack(a).tolist() == x.tolist()
    del a
    gc.collect()
    assert sys.getrefcount(x) == r0
    h = extmod.halves(5)
    v = np.asarray(h)
    assert v.tolist() == [0, 0.5, 1, 1.5, 2] and v.ctypes.data == h.data
    del h
    gc.collect()
    assert v.tolist() == [0, 0.5, 1, 1.5, 2], "numpy's view keeps the Go slice alive"
    assert np.asarray(extmod.halves(0)).shape == (0,)


def test_errors_and_exceptions():
    for kind, exc in [("value", ValueError), ("type", TypeError), ("buffer", BufferError),
                      ("kind", OverflowError), ("none", RuntimeError)]:
        with pytest.raises(exc):
            extmod.fail(kind)
    # usmbridge's error reads without the Go function that made it
    # (usm.ParseJSON), as every message Python reads of a Go error
    with pytest.raises(ValueError) as info:
        extmod.fail("usm")
    assert str(info.value).startswith("not a JSON object: "), str(info.value)
    err = KeyError("raised in Python")

    def raiser():
        raise err
    with pytest.raises(KeyError) as info:
        extmod.call(raiser)
    assert info.value is err, "the same exception object came back"
    with pytest.raises(RuntimeError, match=r"Go panic in panic\(\): boom"):
        extmod.panic()
    assert extmod.total(np.ones(2)) == 2.0, "the module works after a panic"


# An exception Go handles and drops goes at once with ReleaseError: the
# frame its traceback keeps, and the array in it, are freed when the call
# returns, not at Go's next collection (helper-found: 60 dropped callback
# exceptions held 60 such arrays until Go collected).
def test_a_dropped_exception_goes_at_once():
    class Big:
        pass
    gone = []

    def raiser():
        big = Big()
        weakref.finalize(big, gone.append, 1)
        raise ValueError("dropped by Go")
    assert extmod.call_and_drop(raiser) is True
    assert gone == [1], "the raising frame's local is still held"
    assert extmod.call_and_drop(lambda: None) is False


def test_gil_released_around_go_work():
    # Two threads each sleep 300 ms in Go: with the GIL released they
    # overlap; holding it they take turns.
    def run(fn):
        ts = [threading.Thread(target=fn, args=(300,)) for _ in range(2)]
        t0 = time.monotonic()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return time.monotonic() - t0
    assert run(extmod.sleep) < 0.55
    assert run(extmod.sleep_held) >= 0.6


def test_goroutines_call_back():
    seen = []
    extmod.from_goroutines(seen.append, 50)
    assert sorted(seen) == list(range(50))
    err = ValueError("from a goroutine's callback")

    def raiser(i):
        if i == 3:
            raise err
    with pytest.raises(ValueError) as info:
        extmod.from_goroutines(raiser, 8)
    assert info.value is err


def test_threads_call_concurrently():
    x = np.arange(1000.0)
    want = x.sum()
    errors = []

    def work():
        try:
            for _ in range(2000):
                assert extmod.total(x) == want
                extmod.sleep(0)
        except BaseException as e:
            errors.append(e)
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_keep_past_the_call():
    x = np.arange(5.0)
    extmod.keep(x[::-1])
    r = sys.getrefcount(x)
    assert extmod.kept_sum() == 10.0
    del x
    gc.collect()
    assert extmod.kept_sum() == 10.0, "the kept array holds the memory"
    extmod.drop()
    with pytest.raises(ValueError):
        extmod.kept_sum()


# A view stored past its call has no Device: Empty of it is refused, where
# it allocated on the host (a dpnp argument's result would silently have
# left its device).
def test_a_stale_views_device_is_refused():
    extmod.stash(np.arange(3.0))
    with pytest.raises(ValueError, match="no device"):
        extmod.empty_like_stashed()


def test_cpu_backend_results_export_in_c():
    # An array of usmbridge's cpu backend, whose queue is never busy, is
    # exported by the C half alone: no export enters Go.
    a = extmod.host_ramp(5)
    assert np.from_dlpack(a).tolist() == [0, 1, 2, 3, 4]
    c0 = extmod.go_calls()
    c1 = extmod.go_calls()
    for _ in range(20):
        np.from_dlpack(a)
        np.asarray(a)
        a.__dlpack__(max_version=(1, 0))
    c2 = extmod.go_calls()
    assert c2 - c1 == c1 - c0, "an export entered Go"
