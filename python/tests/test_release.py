"""Releases C makes with Go's leave (pybridge/ext/ext.h, "Releases C
replays"). A fresh import of a host producer whose deleter is a C function
is released by the array's deallocator itself, without entering Go; Go
counts it on its next entry. Go's leave ends as soon as C passes the array
to Go for anything that could take another reference to the tensor (an
export above all), so a producer's deleter still runs exactly once and
never while a consumer can read the memory.

Each case runs in a fresh interpreter: a deleter called twice, or early,
frees numpy memory under a live view, which may crash instead of fail."""
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

def stats():
    gc.collect()
    return ub._stats()

def refs(x):
    return sys.getrefcount(x)
""" % os.path.join(HERE, "..")

DPCTL = """
import dpctl, dpnp.tensor as dpt
q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(8, dtype="f4", sycl_queue=q)
ub.asarray(x)  # caches q (its facts hold a reference for the process)
"""

NO_ALLOCATION = """
    x = %(x)s
    for _ in range(100):
        ub.from_dlpack(x)
    s0 = ub._stats()
    for _ in range(5000):
        ub.from_dlpack(x)
    s1 = ub._stats()
    assert s1["c_imports"] - s0["c_imports"] %(replayed)s
    assert s1["c_releases"] - s0["c_releases"] >= 4900, "the C release was not taken"
    assert s1["go_heap_allocs"] - s0["go_heap_allocs"] < 500, s1["go_heap_allocs"] - s0["go_heap_allocs"]
    """

CASES = {
    # The deleter runs at `del a`, before Go has run again: numpy's array is
    # let go at once, and Go's counts catch up at _stats().
    "fresh import": """
        x = np.arange(8.0); r0 = refs(x); s0 = stats()
        a = ub.from_dlpack(x)
        assert refs(x) == r0 + 1
        del a
        assert refs(x) == r0, "the producer's deleter runs at del"
        s1 = stats()
        assert s1["c_releases"] - s0["c_releases"] == 1
        assert (s1["handles"], s1["live_imports"]) == (s0["handles"], s0["live_imports"])
        """,
    # More releases than C's list holds: the overflow goes through Go.
    "many": """
        x = np.arange(8.0); r0 = refs(x); s0 = stats()
        arrs = [ub.from_dlpack(x) for _ in range(1000)]
        del arrs
        assert refs(x) == r0
        s1 = stats()
        assert 0 < s1["c_releases"] - s0["c_releases"] <= 1000
        assert (s1["handles"], s1["live_imports"]) == (s0["handles"], s0["live_imports"])
        """,
    # Steady state allocates nothing in Go: each release leaves its entry
    # and Tensor for the next import (README.md, "Performance"). The
    # bound leaves room for _stats() itself, far below one per import.
    # x's layout is in Go's table of decisions, so C replays them (ext.h,
    # "Host imports C replays"); "no allocation in Go's import" takes Go's
    # path.
    "no allocation": NO_ALLOCATION % {"x": "np.arange(8.0)", "replayed": ">= 4900"},
    # A layout of more dimensions than the table holds is never replayed:
    # each import enters Go and reuses what the last left.
    "no allocation in Go's import": NO_ALLOCATION % {"x": "np.zeros((1, 2, 1, 2, 1))", "replayed": "== 0"},
    # Exported again: the consumer's view outlives the array; the producer
    # is released once, when the view goes, and by Go.
    "exported then dropped": """
        x = np.arange(8.0); r0 = refs(x); s0 = stats()
        a = ub.from_dlpack(x)
        v = np.from_dlpack(a)
        del a
        gc.collect()
        assert refs(x) == r0 + 1, "a consumer still reads x's memory"
        assert v.tolist() == list(range(8))
        del v
        assert refs(x) == r0
        s1 = stats()
        assert s1["c_releases"] == s0["c_releases"]
        assert (s1["handles"], s1["live_imports"], s1["live_exports"]) == (s0["handles"], s0["live_imports"], s0["live_exports"])
        """,
    # Every way Go can be handed the array ends C's leave; a property read
    # (ub_info, which takes nothing) does not.
    "go has seen it": """
        x = np.arange(8.0); r0 = refs(x)
        def seen(fn):
            a = ub.from_dlpack(x); s0 = stats()
            fn(a); del a
            return stats()["c_releases"] - s0["c_releases"]
        assert seen(lambda a: a.shape) == 1
        assert seen(lambda a: np.from_dlpack(a)) == 0
        assert seen(lambda a: a.__dlpack__(copy=True, max_version=(1, 0))) == 0
        assert seen(lambda a: a.__dlpack__()) == 0
        def suai(a):
            try:
                a.__sycl_usm_array_interface__
            except AttributeError:
                pass
        assert seen(suai) == 0
        assert refs(x) == r0
        """,
    # A producer whose deleter is Go's (an export of ours, imported back)
    # is released by Go.
    "go deleter": """
        h = ub.from_dlpack(np.arange(4.0))
        class Ours:
            def __dlpack__(self, **kw): return h.__dlpack__(copy=True, **kw)
            def __dlpack_device__(self): return (1, 0)
        s0 = stats()
        a = ub.from_dlpack(Ours())
        del a
        s1 = stats()
        assert s1["c_releases"] == s0["c_releases"]
        assert (s1["handles"], s1["live_imports"], s1["live_exports"]) == (s0["handles"], s0["live_imports"], s0["live_exports"])
        """,
    # asarray (DPCTL's x on q): Go leaves C the array's Python references
    # (the producer, and the SyclQueue it was bound to), which the
    # deallocator drops.
    "asarray fresh": """
        rx, rq = refs(x), refs(q); s0 = stats()
        a = ub.asarray(x)
        assert refs(x) == rx + 1
        del a
        assert (refs(x), refs(q)) == (rx, rq), "the references go at del"
        s1 = stats()
        assert s1["c_releases"] - s0["c_releases"] == 1
        assert s1["handles"] == s0["handles"]
        """,
    "asarray many": """
        rx, rq = refs(x), refs(q); s0 = stats()
        arrs = [ub.asarray(x) for _ in range(1000)]
        del arrs
        assert (refs(x), refs(q)) == (rx, rq)
        s1 = stats()
        assert 0 < s1["c_releases"] - s0["c_releases"] <= 1000
        assert s1["handles"] == s0["handles"]
        """,
    "asarray go has seen it": """
        rx, rq = refs(x), refs(q)
        def seen(fn):
            a = ub.asarray(x); s0 = stats()
            fn(a); del a
            return stats()["c_releases"] - s0["c_releases"]
        assert seen(lambda a: a.shape) == 1
        assert seen(lambda a: a.__sycl_usm_array_interface__) == 0
        assert seen(lambda a: dpt.from_dlpack(a)) == 0
        assert seen(lambda a: a.__dlpack__(stream=q)) == 0
        view = []
        assert seen(lambda a: view.append(dpt.asarray(a))) == 0
        assert refs(x) == rx + 1, "the view keeps x alive"
        assert dpt.asnumpy(view[0]).tolist() == list(range(8))
        view.clear()
        gc.collect()
        assert (refs(x), refs(q)) == (rx, rq)
        """,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_release(case):
    if case.startswith("asarray"):
        pytest.importorskip("dpctl")
        pytest.importorskip("dpnp.tensor")
    setup = DPCTL if case.startswith("asarray") else ""
    code = PRELUDE + setup + textwrap.dedent(CASES[case]) + "\nprint('ok')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
