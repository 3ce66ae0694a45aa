"""The lifecycle of objects of classes whose Go values hold each other's, as
a stateful, model-based test (hypothesis's rule-based state machine, beside
test_lifecycle.py's over array arguments): random sequences of making a Box
(its Close counted per box), a Holder of a Box's value (Go's *Box, not the
object), a Holder of a Box Go made that no object holds yet, dropping
objects, dropping them into a reference cycle that only gc.collect() ends,
clearing an object as the collector does (its value closed while the
object lives on, unusable), asking a Holder for its Box after the Box's
object went, and objects of a zero-size class (issue 41).

The model says, after every step, which Box values are closed: exactly
those whose object went or was cleared. The test checks that Close ran once
on each of those and never on any other (never on a value an object still
holds), that a Holder returns its Box's own object while that lives, a new
object for a Box never wrapped, and a RuntimeError for a closed one (never
a closed value as alive), and that each Zero object is closed once.

SeriesLifecycle (issue 44) is the same for the rest of the class model,
where it meets arrays: Series made by an overloaded constructor, a static
method, a Python subclass (whose __dict__ may hold the object itself: a
cycle), pickle and copy; a Series' value that keeps an argument past the
call (Keep, with and without the GIL) and hands it back as a new Array;
methods that release the GIL and return a tuple with out= as given; Go
sequences dropped before their end. The model says which memory some owner
holds (the test, a live Series' value, an Array returned) and which Series
went; the test checks that every source lives exactly while it is owned,
that a stored array reads its values, and that each Series is closed once,
when its object went.

test/extension_test.go runs it (TestExtmod), and the sanitizer build
(TestSanitized) runs it under AddressSanitizer."""
import ctypes
import gc
import itertools
import os
import pickle
import copy

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, multiple, rule

import numpy as np

import extmod
import producers

STEPS = int(os.environ.get("USMBRIDGE_LIFECYCLE_STEPS", "40"))
EXAMPLES = int(os.environ.get("USMBRIDGE_LIFECYCLE_EXAMPLES", "60"))
IDS = itertools.count(1_000_000)  # Box numbers of this file's own (box_closes is per number)


def clear_slot(cls):
    """The class's tp_clear, called as the collector does, with the GIL:
    CPython's PyTypeObject on 64-bit builds from 3.10 on (as test_classes.py's
    CLEARED, which checks tp_flags first)."""
    assert ctypes.c_ulong.from_address(id(cls) + 168).value == cls.__flags__, "PyTypeObject layout"
    return ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(ctypes.c_void_p.from_address(id(cls) + 192).value)


CLEAR_BOX = clear_slot(extmod.Box)


class Value:
    """A Box's Go value, and the model of who holds its object."""

    def __init__(self, id):
        self.id = id
        self.wrapped = False  # an object of it was made
        self.closed = False   # its object went, or was cleared
        self.ref = None       # the Ref whose obj is the object
        self.cycles = 0       # garbage cycles that hold the object until gc.collect()

    def object_alive(self):
        return self.wrapped and (self.ref is not None or self.cycles > 0)

    def went(self):
        """The object lost a reference: it goes if that was the last."""
        if self.wrapped and not self.object_alive():
            self.closed = True


class Ref:
    """A reference to a Box object the test holds (None once dropped)."""

    def __init__(self, obj, value):
        self.obj, self.value = obj, value
        value.ref = self

    def __repr__(self):
        return "Ref(box %d%s)" % (self.value.id, "" if self.obj is not None else ", dropped")


class HolderRef:
    def __init__(self, obj, value):
        self.obj, self.value = obj, value

    def __repr__(self):
        return "HolderRef(box %s)" % (self.value.id if self.value else None)


class ClassLifecycle(RuleBasedStateMachine):
    boxes = Bundle("boxes")
    holders = Bundle("holders")

    def __init__(self):
        super().__init__()
        self.values = []
        self.zeros = []
        self.zero_closes = 0  # closes the model expects since start

    @initialize()
    def start(self):
        # The collector runs when the steps say (collect): a garbage cycle
        # it ended on its own would close a Box before the model did.
        gc.collect()
        gc.disable()
        self.zero_base = extmod.zero_closes()

    def _live(self, r):
        return r.obj is not None

    @rule(target=boxes)
    def make_box(self):
        v = Value(next(IDS))
        v.wrapped = True
        self.values.append(v)
        return Ref(extmod.Box(v.id), v)

    @rule(target=holders, b=boxes)
    def make_holder(self, b):
        if not self._live(b):
            return multiple()
        if b.value.closed:  # cleared: its value is gone
            try:
                extmod.Holder(b.obj)
            except TypeError as e:
                assert "Go value is gone" in str(e), e
            else:
                raise AssertionError("a Holder took a cleared Box")
            return multiple()
        return HolderRef(extmod.Holder(b.obj), b.value)

    @rule(target=holders)
    def holder_of_new(self):
        v = Value(next(IDS))
        self.values.append(v)
        return HolderRef(extmod.holder_of_new(v.id), v)

    @rule(target=boxes, h=holders)
    def box_of_holder(self, h):
        """The held value: its object while it lives, a new object for a
        value never wrapped, a RuntimeError for a closed one."""
        if h.obj is None:
            return multiple()
        v = h.value
        if v.closed:
            try:
                h.obj.box()
            except RuntimeError as e:
                assert "Holder.box() returned a Box whose object is gone" in str(e), e
            else:
                raise AssertionError("a closed Box was returned as alive")
            return multiple()
        got = h.obj.box()
        assert got.id == v.id
        if v.object_alive():
            if v.ref is not None:
                assert got is v.ref.obj, "a second object over one value"
                return multiple()
            return Ref(got, v)  # the object was only in a garbage cycle: held again
        assert not v.wrapped
        v.wrapped = True
        return Ref(got, v)

    @rule(b=consumes(boxes))
    def drop_box(self, b):
        b.obj = None
        b.value.ref = None
        b.value.went()

    @rule(b=consumes(boxes))
    def drop_box_into_cycle(self, b):
        cycle = [b.obj]
        cycle.append(cycle)
        b.obj = None
        b.value.ref = None
        b.value.cycles += 1
        del cycle

    @rule(h=consumes(holders))
    def drop_holder(self, h):
        h.obj = None

    @rule(b=boxes)
    def clear_box(self, b):
        """Close: the collector's clear of an object a cycle's finalizer
        still reaches. Its value is closed now; the object stays, and says
        its value is gone."""
        if not self._live(b):
            return
        assert CLEAR_BOX(b.obj) == 0
        b.value.closed = True
        try:
            b.obj.id
        except TypeError as e:
            assert "Go value is gone" in str(e), e
        else:
            raise AssertionError("a cleared Box was used")

    @rule()
    def collect(self):
        gc.collect()
        for v in self.values:
            if v.cycles:
                v.cycles = 0
                v.went()

    @rule(n=st.integers(1, 3))
    def make_zeros(self, n):
        made = [extmod.Zero() for _ in range(n)]
        assert len({id(z) for z in made}) == n, "two constructions of a zero-size class are one object"
        self.zeros.extend(made)

    @rule()
    def zero_itself(self):
        if not self.zeros:
            return
        z = self.zeros[-1]
        assert z.itself() is not z  # its own object, closed as it goes here
        self.zero_closes += 1

    @rule()
    def drop_zeros(self):
        self.zero_closes += len(self.zeros)
        self.zeros.clear()

    @invariant()
    def closed_exactly_once_when_its_object_went(self):
        for v in self.values:
            n = extmod.box_closes(v.id)
            if v.closed:
                assert n == 1, "box %d: closed %d times after its object went" % (v.id, n)
            else:
                assert n == 0, "box %d: closed while %s" % (v.id, "an object holds it" if v.object_alive() else
                                                            "only Go holds it")

    @invariant()
    def zero_closed_once_each(self):
        assert extmod.zero_closes() - self.zero_base == self.zero_closes

    def teardown(self):
        self.zero_closes += len(self.zeros)
        self.zeros.clear()
        for v in self.values:
            if v.ref is not None:
                v.ref.obj = None
                v.ref = None
        gc.collect()
        gc.enable()
        for v in self.values:
            v.cycles = 0
            v.went()
        self.closed_exactly_once_when_its_object_went()
        self.zero_closed_once_each()


ClassLifecycle.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                            suppress_health_check=list(HealthCheck))
test_class_lifecycle = ClassLifecycle.TestCase


HAVE_DPNP = producers.dpnp_source([1.0]) is not None
SOURCES = ["numpy"] + (["dpnp"] if HAVE_DPNP else [])
TAGS = itertools.count(1)


class SubSeries(extmod.Series):
    """A Python subclass of the Go class, with a __dict__."""

    def __init__(self, x):
        super().__init__(x)
        self.me = None


class ArraySource:
    """A producer's memory, and the model of who holds it."""

    def __init__(self, kind, values):
        self.kind, self.values, self.expect = kind, values, float(sum(values))
        make = producers.numpy_source if kind == "numpy" else producers.dpnp_source
        self.obj, self.weak = make(values)
        self.stored_by = set()  # tags of live Series whose values keep it
        self.results = 0        # Arrays returned over it, alive

    def owned(self):
        return self.obj is not None or bool(self.stored_by) or self.results > 0

    def alive(self):
        return self.weak() is not None


class ArrayResult:
    """An Array a Series handed back, over a source's memory."""

    def __init__(self, obj, source):
        self.obj, self.value = obj, source

    def __repr__(self):
        return "ArrayResult(%s)" % self.value.kind


class SeriesRef:
    def __init__(self, obj, tag):
        self.obj, self.tag = obj, tag
        self.stored = None  # the ArraySource its value keeps
        self.closed = False
        self.cycle = False  # its object is held only by a cycle, until collect


class SeriesLifecycle(RuleBasedStateMachine):
    series = Bundle("series")
    sources = Bundle("sources")
    results = Bundle("results")

    def __init__(self):
        super().__init__()
        self.all_series, self.all_sources, self.all_results = [], [], []

    @initialize()
    def start(self):
        gc.collect()
        gc.disable()

    def _new(self, obj):
        tag = next(TAGS)
        obj.tag = tag
        r = SeriesRef(obj, tag)
        self.all_series.append(r)
        return r

    def _went(self, r):
        """r's object went: its value is closed, and what it stored let go."""
        r.closed = True
        if r.stored is not None:
            r.stored.stored_by.discard(r.tag)
            r.stored = None

    @rule(target=sources, kind=st.sampled_from(SOURCES),
          values=st.lists(st.integers(-50, 50).map(float), min_size=1, max_size=16))
    def make_source(self, kind, values):
        src = ArraySource(kind, values)
        self.all_sources.append(src)
        return src

    @rule(target=series, how=st.sampled_from(["f64", "f32", "static", "sub", "pickle", "copy"]))
    def make_series(self, how):
        x = np.arange(3.0)
        if how == "f64":
            o = extmod.Series(x)
        elif how == "f32":
            o = extmod.Series(x.astype("f4"))
        elif how == "static":
            o = extmod.Series.ramp(3)
        elif how == "sub":
            o = SubSeries(x)
        elif how == "pickle":
            o = pickle.loads(pickle.dumps(extmod.Series(x)))
        else:
            o = copy.copy(extmod.Series(x))
        assert list(o) == [0.0, 1.0, 2.0]
        return self._new(o)

    @rule(s=series, src=sources, nogil=st.booleans())
    def store(self, s, src, nogil):
        """The Series' value keeps the argument past the call."""
        if s.obj is None or s.closed or src.obj is None:
            return
        (s.obj.store_nogil if nogil else s.obj.store)(src.obj)
        if s.stored is not None:
            s.stored.stored_by.discard(s.tag)
        s.stored = src
        src.stored_by.add(s.tag)

    @rule(target=results, s=series)
    def stored_out(self, s):
        """The stored array handed back as a new Array."""
        if s.obj is None or s.closed or s.stored is None:
            return multiple()
        a = s.obj.stored()
        assert type(a) is extmod.Array and float(np.asarray(a).sum()) == s.stored.expect if s.stored.kind == "numpy" else True
        s.stored.results += 1
        r = ArrayResult(a, s.stored)
        self.all_results.append(r)
        return r

    @rule(r=consumes(results))
    def drop_result(self, r):
        r.obj = None
        r.value.results -= 1

    @rule(s=series, src=sources, give_out=st.booleans())
    def scaled(self, s, src, give_out):
        """A method that releases the GIL and returns (Result, length), out= as given."""
        if s.obj is None or s.closed or src.obj is None or src.kind == "dpnp":
            return
        out = np.zeros(len(src.values)) if give_out else None
        r, n = s.obj.scaled(src.obj, 2.0, out=out)
        assert n == len(s.obj)
        assert np.asarray(r).tolist() == [2 * v for v in src.values]
        assert (r is out) == give_out

    @rule(s=series, steps=st.integers(0, 2))
    def iterate_partly(self, s, steps):
        """A Go sequence dropped before its end."""
        if s.obj is None or s.closed:
            return
        it = iter(s.obj)
        for _ in range(min(steps, len(s.obj))):
            next(it)
        del it

    @rule(s=consumes(series))
    def drop_series(self, s):
        if s.obj is None:
            return
        s.obj = None
        if not s.cycle and not s.closed:
            self._went(s)

    @rule(s=consumes(series))
    def drop_series_into_cycle(self, s):
        """A subclass's object that holds itself in its __dict__: only the collector ends it."""
        if s.obj is None or not isinstance(s.obj, SubSeries) or s.closed:
            return
        s.obj.me = s.obj
        s.obj = None
        s.cycle = True

    @rule(src=sources)
    def drop_source(self, src):
        src.obj = None

    @rule()
    def collect(self):
        gc.collect()
        for s in self.all_series:
            if s.cycle and not s.closed:
                s.cycle = False
                self._went(s)

    @invariant()
    def stored_arrays_read_their_values(self):
        for s in self.all_series:
            if s.obj is not None and not s.closed and s.stored is not None:
                assert s.obj.stored_sum() == s.stored.expect

    @invariant()
    def each_series_closed_once_when_its_object_went(self):
        for s in self.all_series:
            n = extmod.tag_closes(s.tag)
            assert n == (1 if s.closed else 0), "Series %d closed %d times (closed in the model: %s)" % (s.tag, n, s.closed)

    @invariant()
    def memory_held_exactly_while_owned(self):
        if any(not src.owned() and src.alive() for src in self.all_sources):
            gc.collect()  # a producer's own cycles (dpnp's) go with the collector
            for s in self.all_series:
                if s.cycle and not s.closed:
                    s.cycle = False
                    self._went(s)
        for src in self.all_sources:
            if src.owned():
                assert src.alive(), "%s memory freed while an owner lives" % src.kind
            else:
                assert not src.alive(), "%s memory held with no owner left" % src.kind

    def teardown(self):
        for r in self.all_results:
            r.obj = None
        for s in self.all_series:
            s.obj = None
        for src in self.all_sources:
            src.obj = None
        gc.collect()
        gc.enable()
        for s in self.all_series:
            if not s.closed:
                self._went(s)
        self.each_series_closed_once_when_its_object_went()
        for src in self.all_sources:
            assert not src.alive(), "%s memory outlived the test" % src.kind


SeriesLifecycle.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                             suppress_health_check=list(HealthCheck))
test_series_lifecycle = SeriesLifecycle.TestCase
