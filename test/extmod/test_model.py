"""The rest of the class and function model (issue 44): the module's own
exceptions and attributes, a str chosen from a set, optional scalars,
several results, Go sequences, static and class methods, overloaded
constructors and static methods, the special methods Python calls, Python
subclasses of a Go class, and pickling. test/extension_test.go builds
extmod and runs this file (TestExtmod)."""
import copy
import gc
import inspect
import pickle
import weakref

import numpy as np
import pytest

import extmod


def test_module_attributes():
    assert extmod.__version__ == "1.0"
    assert extmod.MODES == ("mean", "max") and extmod.LIMIT == 3 and extmod.EPS == 0.5


def test_exceptions_of_the_module():
    assert issubclass(extmod.Error, ValueError) and issubclass(extmod.ShapeError, extmod.Error)
    assert extmod.Error.__module__ == "extmod" and extmod.Error.__doc__ == "extmod's own error: a ValueError."
    with pytest.raises(extmod.Error, match="^extmod says no$") as e:
        extmod.raise_error("error")
    assert type(e.value) is extmod.Error
    with pytest.raises(extmod.ShapeError, match="^length 2, want 3$"):
        extmod.raise_error("shape")
    with pytest.raises(ValueError):  # a user's except ValueError catches it too
        extmod.raise_error("shape")
    with pytest.raises(extmod.ShapeError, match="^splitting: length 4, want 5$"):
        extmod.raise_error("wrapped")  # behind fmt.Errorf's %w: the chain's message
    with pytest.raises(ValueError) as e:  # behind an error of a kind of its own: that kind's
        extmod.raise_error("kinded")
    assert type(e.value) is ValueError
    with pytest.raises(IndexError, match="^no item 3$"):
        extmod.raise_error("index")
    with pytest.raises(KeyError) as e:
        extmod.raise_error("key")
    assert type(e.value) is extmod.MissingKey and issubclass(extmod.MissingKey, KeyError)
    with pytest.raises(extmod.Error, match=r"reduce\(\) of an empty array"):
        extmod.reduce(np.zeros(0))


def test_a_str_chosen_from_a_set():
    x = np.array([1.0, 5.0, 3.0])
    assert extmod.reduce(x) == 3.0 and extmod.reduce(x, "max") == 5.0 and extmod.reduce(x, mode="mean") == 3.0
    with pytest.raises(ValueError, match=r"^reduce\(\) argument 'mode' must be one of 'mean' or 'max', got 'median'$"):
        extmod.reduce(x, "median")
    with pytest.raises(TypeError, match=r"reduce\(\) argument 'mode' must be str, not int"):
        extmod.reduce(x, 1)


def test_optional_scalars_tell_none_from_zero():
    assert extmod.twice(None) is None and extmod.twice() is None
    assert extmod.twice(0.0) == 0.0 and extmod.twice(0) == 0.0 and extmod.twice(2.5) == 5.0
    assert extmod.opt_name(None) == "<none>/7" and extmod.opt_name("a", n=None) == "a" and extmod.opt_name("") == "/7"
    with pytest.raises(TypeError, match=r"missing required argument 'name'"):
        extmod.opt_name()  # a *string may be None, and is required without Optional
    with pytest.raises(TypeError, match=r"twice\(\) argument 'x' must be float, not str"):
        extmod.twice("1")
    assert str(inspect.signature(extmod.twice)) == "(x=None)"


def test_several_results_are_a_tuple():
    assert extmod.minmax(np.array([3.0, -1.0, 2.0])) == (-1.0, 3.0)
    x = np.arange(5.0)
    a, b, same = extmod.split(x)
    assert np.asarray(a).tolist() == [0.0, 1.0] and np.asarray(b).tolist() == [2.0, 3.0, 4.0]
    assert np.shares_memory(np.asarray(same), x)
    with pytest.raises(extmod.ShapeError):
        extmod.minmax(np.zeros(0))


def test_a_tuple_that_cannot_be_made_lets_its_values_go():
    b = extmod.Box(99)
    extmod.keep_box(b)
    del b
    gc.collect()
    before = extmod.live_arrays()
    for _ in range(3):
        with pytest.raises(RuntimeError, match="returned a Box whose object is gone"):
            extmod.split_fails(np.arange(3.0))
    assert extmod.live_arrays() == before


def test_out_and_results_in_a_tuple():
    x = np.arange(3.0)
    out = np.zeros(3)
    t, n, r = extmod.stats_into(x, 2.0, out=out)
    assert (t, n) == (3.0, 3) and r is out and out.tolist() == [0.0, 2.0, 4.0]
    t, n, r = extmod.stats_into(x, 3.0)
    assert type(r) is extmod.Array and np.asarray(r).tolist() == [0.0, 3.0, 6.0]


def test_go_sequences_are_iterators():
    it = extmod.count_up(4)
    assert iter(it) is it and next(it) == 0 and list(it) == [1, 2, 3]
    with pytest.raises(StopIteration):
        next(it)
    assert list(extmod.count_up(0)) == []
    assert "_GoIterator" not in dir(extmod)
    it = extmod.panicky()
    assert next(it) == 1
    with pytest.raises(RuntimeError, match=r"Go panic in _GoIterator.__next__\(\): the sequence's own"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_static_and_class_methods():
    s = extmod.Series.ramp(3)
    assert type(s) is extmod.Series and list(s) == [0.0, 1.0, 2.0]
    assert s.ramp(2) == extmod.Series.ramp(2)  # on an object too, without it
    assert extmod.Series.total(np.ones(3, "f4")) == 3.0 and extmod.Series.total(np.arange(3.0)) == 3.0
    with pytest.raises(TypeError, match=r"Series.total\(\) argument 'x' must be an array of float32 or float64, got int64"):
        extmod.Series.total(np.ones(2, "i8"))
    assert extmod.Series.kind() == "Series" and s.kind() == "Series"
    assert str(inspect.signature(extmod.Series.ramp)) == "(n)"
    assert str(inspect.signature(extmod.Series.kind)) == "()"
    assert extmod.Series.ramp.__qualname__ == "Series.ramp"


def test_overloaded_constructor():
    assert list(extmod.Series(np.array([1.5, 2.0]))) == [1.5, 2.0]
    assert list(extmod.Series(np.array([1.5, 2.0], "f4"))) == [1.5, 2.0]
    with pytest.raises(TypeError, match=r"Series\(\) argument 'x' must be an array of float64 or float32, got int32"):
        extmod.Series(np.ones(2, "i4"))


def test_special_methods():
    s = extmod.Series(np.array([1.0, 2.0, 3.0]))
    assert len(s) == 3 and s[0] == 1.0 and s[-1] == 3.0 and 2.0 in s and 4.0 not in s
    with pytest.raises(IndexError, match="Series index out of range"):
        s[3]
    assert list(s) == [1.0, 2.0, 3.0] and [x for x in s] == [1.0, 2.0, 3.0]
    assert repr(s) == "Series([1, 2, 3])"
    assert s == extmod.Series(np.array([1.0, 2.0, 3.0])) and s != extmod.Series(np.array([1.0])) and s != 3
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)
    with s as t:
        assert t is s and s.open
    assert not s.open and s.entered == 1
    with pytest.raises(KeyError):
        with s:
            raise KeyError("the with block's own")  # __exit__ returns False: not swallowed
    assert s.entered == 2 and not s.open


def test_an_iterator_dropped_early_stops_its_go_loop():
    s = extmod.Series.ramp(5)
    before = extmod.stopped_seqs()
    it = iter(s)
    assert next(it) == 0.0
    del it
    gc.collect()
    assert extmod.stopped_seqs() == before + 1


def test_pickle_and_copy():
    s = extmod.Series(np.array([1.0, 2.0, 4.0]))
    t = pickle.loads(pickle.dumps(s))
    assert type(t) is extmod.Series and t == s and t is not s
    c = copy.copy(s)
    assert c == s and c is not s
    d = copy.deepcopy([s, s])
    assert d[0] is d[1] and d[0] == s
    # __setstate__ on an object with a value sets it, as Python's does.
    s.__setstate__(np.array([7.0]))
    assert list(s) == [7.0]
    # A failing __setstate__ leaves the object without a value.
    bad = extmod.Series.__new__(extmod.Series)
    with pytest.raises(ValueError, match="starts with nan"):
        bad.__setstate__(np.array([np.nan]))
    with pytest.raises(TypeError, match="has no Go value"):
        len(bad)
    # The Array a Go function returns pickles as a NumPy array of its data.
    a = extmod.host_ramp(3)
    assert pickle.loads(pickle.dumps(a)).tolist() == [0.0, 1.0, 2.0]
    # A class without __getstate__ does not pickle: the constructor needs its arguments.
    with pytest.raises(TypeError, match="cannot pickle 'extmod.Plan' object"):
        pickle.dumps(extmod.Plan(1))
    with pytest.raises(TypeError):
        copy.copy(extmod.Plan(1))


class Sub(extmod.Series):
    """A Python subclass: its __init__ calls the Go constructor."""

    def __init__(self, n, label):
        super().__init__(np.arange(float(n)))
        self.label = label

    def __repr__(self):
        return "Sub(%s, %r)" % (self.label, list(self))

    def total(self):  # overrides the static method, for Python's callers
        return sum(self)


def test_python_subclass_of_a_go_class():
    s = Sub(3, "three")
    assert isinstance(s, extmod.Series) and type(s) is Sub
    assert len(s) == 3 and s[1] == 1.0 and s.label == "three" and repr(s) == "Sub(three, [0.0, 1.0, 2.0])"
    assert s.total() == 3.0 and Sub.kind() == "Sub" and s.kind() == "Sub"
    assert extmod.Series.__len__(s) == 3
    with s as t:  # Go's __enter__ returns the *Series: its object is s
        assert t is s
    r = weakref.ref(s)
    s.cycle = s  # a cycle through the subclass's __dict__: the collector ends it
    closes = extmod.series_closes()
    del s, t
    gc.collect()
    assert r() is None and extmod.series_closes() == closes + 1


def test_subclass_without_the_base_constructor():
    class NoInit(extmod.Series):
        def __init__(self):
            pass

    o = NoInit()
    with pytest.raises(TypeError, match=r"Series.__len__\(\): the .*NoInit object has no Go value: extmod.Series.__init__ did not run"):
        len(o)
    with pytest.raises(TypeError, match=r"series_len\(\) argument 's' is a .*NoInit object without its Go value"):
        extmod.series_len(o)
    extmod.Series.__init__(o, np.arange(2.0))  # usable once the base constructor ran
    assert len(o) == 2
    with pytest.raises(TypeError, match="that has had its Go value"):
        extmod.Series.__init__(o, np.arange(2.0))


def test_what_a_subclass_cannot_be_is_python_s_refusal():
    with pytest.raises(TypeError, match="lay-out conflict"):
        type("Both", (extmod.Series, extmod.Plan), {})  # two Go values in one object
    p = extmod.Plan(1.0)
    with pytest.raises(TypeError, match="__class__ assignment"):
        p.__class__ = extmod.Series  # another class's methods over a *Plan
    with pytest.raises(TypeError):
        extmod.Series.__new__(extmod.Plan)
    with pytest.raises(TypeError):
        extmod.Series.__init__(p, np.ones(1))


def test_pickle_a_subclass():
    s = Sub(2, "two")
    t = pickle.loads(pickle.dumps(s))
    # The state is Go's (__getstate__): the subclass's __dict__ is its own
    # to add, as any __getstate__ override does.
    assert type(t) is Sub and list(t) == [0.0, 1.0] and not hasattr(t, "label")


def test_definition_refuses_what_python_cannot_call():
    assert extmod.Series.__init__ is not object.__init__
    with pytest.raises(TypeError, match="cannot create 'extmod.Token' instances"):
        extmod.Token()
    with pytest.raises(TypeError):
        extmod.Token.__new__(extmod.Token)


def test_a_device_usmbridge_cannot_use_is_refused_at_the_argument():
    dpctl = pytest.importorskip("dpctl")
    unusable = [i for i, d in enumerate(dpctl.get_devices()) if not d.has_aspect_usm_device_allocations]
    if not unusable:
        pytest.skip("every SYCL device here allocates device USM")
    d = dpctl.get_devices()[unusable[0]]
    for dev in (d, d.filter_string, (14, unusable[0])):
        with pytest.raises(ValueError, match=r"^zeros_on\(\) argument 'device' is not a device usmbridge can use: "
                                             r"SYCL device \(kDLOneAPI, %d\) allocates no device USM$" % unusable[0]):
            extmod.zeros_on(2, dev)
    with pytest.raises(TypeError, match=r"where\(\) argument 'd'"):
        extmod.where(3.5)


def test_what_an_array_pickle_cannot_carry_is_refused():
    a = extmod.halves(3)  # a Go slice: host memory, writable
    assert pickle.loads(pickle.dumps(a)).tolist() == [0.0, 0.5, 1.0]
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="cannot pickle 'extmod.Array' object: it is read-only"):
        pickle.dumps(extmod.same(ro))
    dpnp = pytest.importorskip("dpnp")
    with pytest.raises(TypeError, match="cannot pickle 'extmod.Array' object: its memory is USM"):
        pickle.dumps(extmod.same(dpnp.arange(3.0, device="opencl:cpu")))


# An iterator advanced and dropped on other threads than the one that made
# it (Python hands iterators from thread to thread): the values come in
# order, a next while another runs is Python's ValueError, and the process
# lives (iter.Pull's coroutine ended it: "coro: OS thread locking must match
# locking at coroutine creation"). In a child process: that was a crash.
THREADS = """
import gc, threading
import extmod
it = extmod.count_up(1000)
got, errors = [], []
def step():
    for _ in range(50):
        try:
            got.append(next(it))
        except ValueError as e:
            assert "already executing" in str(e), e
            errors.append(e)
ts = [threading.Thread(target=step) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
assert got == sorted(got) and len(set(got)) == len(got) and len(got) + len(errors) == 200, (got, len(errors))
made = []
t = threading.Thread(target=lambda: made.append(iter(extmod.Series.ramp(5))))
t.start(); t.join()
it2 = made.pop()
assert next(it2) == 0.0
stopped = extmod.stopped_seqs()
t = threading.Thread(target=lambda: it2.__next__())
t.start(); t.join()
del it2
gc.collect()
# The Go loop ends in its own goroutine once yield returned false: the
# iterator's Close does not wait for it (pyext/iter.go, puller.stop).
import time
deadline = time.monotonic() + 60
while extmod.stopped_seqs() != stopped + 1 and time.monotonic() < deadline:
    time.sleep(0.01)
assert extmod.stopped_seqs() == stopped + 1
print("ok")
"""


def test_iterators_cross_threads():
    import subprocess, sys, textwrap, os
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(THREADS)], env=dict(os.environ), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
