"""The lifecycle of an array argument, as a stateful, model-based test
(hypothesis's rule-based state machine): random sequences of calls, Keep,
a second Keep, Keep in a function that released the GIL or in a goroutine,
returning an argument (alone, or in a tuple beside new Arrays), a tuple
with out= as given from a function that released the GIL, passing a
result back, Release (on the calling
thread, from a goroutine, without the GIL), del and gc.collect(), over
NumPy arrays, DLPack capsules with a counting deleter and dpnp arrays in
device USM; and, on dpnp arrays, kernels launched by functions that
return before them (pyext.NoWait: extmod's gated_fill, held back by a
gate until the step opens it), kept or returned by the function, the
caller letting the array go while the kernel waits, and the array read
by each consumer after. After every step the model says which memory
some owner still holds, and the test checks exactly that: every kept view
still reads its values (a launch's included), a producer is alive exactly
while an owner lives (a kernel not yet done is one), and a capsule's
deleter runs once, and only after its last owner went.

test/extension_test.go runs it (TestExtmod), and the sanitizer build
(TestExtmodSanitized) runs it under AddressSanitizer, where a read of
freed memory by Go or C is a report, not luck."""
import gc
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, rule

import numpy as np

import extmod
import producers

HAVE_DPNP = producers.dpnp_source([1.0]) is not None
KINDS = ["numpy", "capsule"] + (["dpnp"] if HAVE_DPNP else [])
STEPS = int(os.environ.get("USMBRIDGE_LIFECYCLE_STEPS", "40"))
EXAMPLES = int(os.environ.get("USMBRIDGE_LIFECYCLE_EXAMPLES", "60"))


class Source:
    """One producer's memory and the model of who holds it."""

    def __init__(self, kind, values):
        self.kind, self.values = kind, values
        self.expect = float(sum(values))
        if kind == "capsule":
            self.obj, self.addr = producers.counting_capsule(values)
            self.weak = None
        elif kind == "numpy":
            self.obj, self.weak = producers.numpy_source(values)
        else:
            self.obj, self.weak = producers.dpnp_source(values)
        self.consumed = False  # a capsule, once a call took its tensor
        self.kept = set()      # ids of kept views
        self.results = 0       # result objects over the memory, alive in the model
        self.launched = False  # a kernel launched on it may still hold it (until the model settles)

    def owned(self):
        holds_obj = self.obj is not None and not (self.kind == "capsule" and self.consumed)
        return holds_obj or bool(self.kept) or self.results > 0 or self.launched

    def fill(self, v):
        self.values = [v] * len(self.values)
        self.expect = float(sum(self.values))

    def alive(self):
        if self.kind == "capsule":
            return producers.deletes[self.addr] == 0
        return self.weak() is not None


class Result:
    def __init__(self, obj, source):
        self.obj, self.source = obj, source


class Lifecycle(RuleBasedStateMachine):
    sources = Bundle("sources")
    results = Bundle("results")
    kept = Bundle("kept")

    def __init__(self):
        super().__init__()
        self.all_sources, self.all_results = [], []
        self.kept_of = {}  # id -> Source

    @initialize()
    def start(self):
        gc.collect()

    @rule(target=sources, kind=st.sampled_from(KINDS),
          values=st.lists(st.integers(-100, 100).map(float), min_size=1, max_size=64))
    def make_source(self, kind, values):
        s = Source(kind, values)
        self.all_sources.append(s)
        return s

    def _argument(self, s):
        """The object to pass for s, or None when s has none to pass."""
        if s.obj is None or (s.kind == "capsule" and s.consumed):
            return None
        return s.obj

    def _took(self, s):
        if s.kind == "capsule":
            s.consumed = True

    def _record(self, s, ids):
        for i in ids:
            assert i not in self.kept_of
            self.kept_of[i] = s
            s.kept.add(i)
        return ids

    @rule(target=kept, s=sources, how=st.sampled_from(["plain", "twice", "goroutine"]), nogil=st.booleans())
    def hold(self, s, how, nogil):
        x = self._argument(s)
        if x is None:
            return []
        ids = (extmod.hold_nogil if nogil else extmod.hold)(x, how)
        self._took(s)
        assert len(ids) == (2 if how == "twice" else 1)
        return self._record(s, ids)

    @rule(target=kept, r=results, how=st.sampled_from(["plain", "twice", "goroutine"]), nogil=st.booleans())
    def hold_result(self, r, how, nogil):
        if r.obj is None:
            return []
        ids = (extmod.hold_nogil if nogil else extmod.hold)(r.obj, how)
        return self._record(r.source, ids)

    @rule(target=results, s=sources, keep_first=st.booleans())
    def return_argument(self, s, keep_first):
        x = self._argument(s)
        if x is None:
            return Result(None, s)
        if keep_first:
            r = extmod.hold_return(x)
            self._took(s)
            self._record(s, [extmod.last_kept()])  # the view hold_return kept
        else:
            r = extmod.same(x)
            self._took(s)
        s.results += 1
        res = Result(r, s)
        self.all_results.append(res)
        return res

    @rule(target=results, s=sources)
    def return_in_a_tuple(self, s):
        """An argument returned inside a tuple, beside new Arrays (issue 44)."""
        x = self._argument(s)
        if x is None:
            return Result(None, s)
        a, b, r = extmod.split(x)
        self._took(s)
        if s.kind != "dpnp":
            assert float(np.asarray(a).sum() + np.asarray(b).sum()) == s.expect
        s.results += 1
        res = Result(r, s)
        self.all_results.append(res)
        return res

    @rule(s=sources, o=sources)
    def tuple_with_out_nogil(self, s, o):
        """A function that releases the GIL and returns (sum, count, out as given)."""
        x, out = self._argument(s), self._argument(o)
        if x is None or out is None or s.kind != "numpy" or o.kind != "numpy" or len(s.values) != len(o.values) or x is out:
            return
        t, n, r = extmod.stats_into(x, 1.0, out=out)
        assert r is out and t == s.expect and n == len(s.values)
        o.expect = s.expect  # out now holds x's values

    @rule(r=results)
    def pass_result(self, r):
        if r.obj is not None and r.source.kind != "dpnp":
            assert extmod.total(r.obj) == r.source.expect

    @rule(s=sources)
    def plain_call(self, s):
        x = self._argument(s)
        if x is None or s.kind == "dpnp":
            return
        assert extmod.total(x) == s.expect
        self._took(s)

    @rule(i=consumes(kept), how=st.sampled_from(["plain", "goroutine"]), nogil=st.booleans())
    def release(self, i, how, nogil):
        for k in i:
            s = self.kept_of.pop(k)
            s.kept.discard(k)
            (extmod.unhold_nogil if nogil else extmod.unhold)(k, how)

    def _gate(self, x):
        """A shut gate in the context of x's queue, on a queue of its own."""
        import dpctl
        import dpnp.tensor as dpt
        q = dpctl.SyclQueue(x.sycl_queue.sycl_context, x.sycl_device)
        return dpt.zeros(1, dtype="i4", usm_type="shared", sycl_queue=q)

    def _launched(self, s, v, gate, drop):
        """After a launch that returned with its gate shut: the kernel
        cannot have run, so the call holds the memory; the caller may let
        its array go meanwhile. Then the gate opens."""
        assert extmod.launch_holds() >= 1, "the call returned before its kernel, holding its arguments"
        if drop:
            s.obj = None
            gc.collect()
            assert s.alive(), "the memory went while its kernel waits"
        s.fill(v)
        s.launched = True
        extmod.open_gate(gate, 2)

    @rule(target=kept, s=sources, v=st.integers(-50, 50).map(float), keep=st.booleans(), drop=st.booleans())
    def launch(self, s, v, keep, drop):
        x = self._argument(s)
        if x is None or s.kind != "dpnp":
            return []
        gate = self._gate(x)
        ids = []
        if keep:  # gated_fill_keep keeps x before the launch for v < 0, after it otherwise
            ids = self._record(s, [extmod.gated_fill_keep(gate, x, v)])
        else:
            assert extmod.gated_fill(gate, x, v) is None
        del x
        self._launched(s, v, gate, drop)
        return ids

    @rule(target=results, s=sources, v=st.integers(-50, 50).map(float), drop=st.booleans())
    def launch_returning(self, s, v, drop):
        x = self._argument(s)
        if x is None or s.kind != "dpnp":
            return Result(None, s)
        gate = self._gate(x)
        r = extmod.gated_fill_same(gate, x, v)
        del x
        s.results += 1
        res = Result(r, s)
        self.all_results.append(res)
        self._launched(s, v, gate, drop)
        return res

    @rule(s=sources, consumer=st.sampled_from(["dpnp.asnumpy", "dpnp op", "Go copy"]))
    def read_source(self, s, consumer):
        x = self._argument(s)
        if x is None or s.kind != "dpnp":
            return
        import dpnp.tensor as dpt
        if consumer == "dpnp.asnumpy":
            got = dpt.asnumpy(x)
        elif consumer == "dpnp op":
            got = dpt.asnumpy(x * 1)
        else:
            got = np.asarray(extmod.copy_out(x))
        assert float(got.sum()) == s.expect, consumer

    @rule(r=results, consumer=st.sampled_from(["numpy.asarray", "SUAI", "Go copy"]))
    def read_result(self, r, consumer):
        if r.obj is None:
            return
        if consumer == "numpy.asarray":
            got = np.asarray(r.obj)
        elif consumer == "SUAI":
            import dpnp.tensor as dpt
            if r.source.kind != "dpnp":
                return
            got = dpt.asnumpy(dpt.asarray(r.obj))
        else:
            got = np.asarray(extmod.copy_out(r.obj))
        assert float(got.sum()) == r.source.expect, consumer

    def _settle(self):
        """The launches are done and what they held let go (settle_launches
        returns once the calls hold nothing; its return drops what the
        keeper released): the model's launched sources are owned by
        their other owners only."""
        if any(s.launched for s in self.all_sources):
            extmod.settle_launches()
            for s in self.all_sources:
                s.launched = False

    @rule(r=consumes(results))
    def drop_result(self, r):
        if r.obj is not None:
            r.obj = None
            r.source.results -= 1

    @rule(s=sources)
    def drop_source(self, s):
        s.obj = None

    @rule()
    def collect(self):
        gc.collect()

    @invariant()
    def kept_views_read_their_values(self):
        for k, s in self.kept_of.items():
            assert extmod.held_sum(k) == s.expect, "kept view %d no longer reads its memory" % k

    @invariant()
    def memory_held_exactly_while_owned(self):
        self._settle()
        unowned_alive = [s for s in self.all_sources if not s.owned() and s.alive()]
        if unowned_alive:
            gc.collect()  # a producer's own cycles (dpnp's) go with the collector
        for s in self.all_sources:
            if s.owned():
                assert s.alive(), "%s memory freed while an owner lives" % s.kind
            else:
                assert not s.alive(), "%s memory held with no owner left" % s.kind
            if s.kind == "capsule":
                assert producers.deletes[s.addr] <= 1, "a deleter ran twice"

    def teardown(self):
        self._settle()
        for k in list(self.kept_of):
            extmod.unhold(k)
        self.kept_of.clear()
        for r in self.all_results:
            r.obj = None
        for s in self.all_sources:
            s.obj = None
        gc.collect()
        assert extmod.held_count() == 0
        for s in self.all_sources:
            assert not s.alive(), "%s memory outlived the test" % s.kind


Lifecycle.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                       suppress_health_check=list(HealthCheck))
test_lifecycle = Lifecycle.TestCase
