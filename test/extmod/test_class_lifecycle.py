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

test/extension_test.go runs it (TestExtmod), and the sanitizer build
(TestSanitized) runs it under AddressSanitizer."""
import ctypes
import gc
import itertools
import os

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, multiple, rule

import extmod

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
