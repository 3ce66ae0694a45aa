"""Who releases what, and when. An Array holds what keeps its memory
alive: the producer's tensor C imported (its deleter runs once, when the
Array goes, without Go), the producer object (asarray), or Go's state (a
copy, a USM import), which Go releases. Every count comes back to where it
was, and a consumer's view keeps the memory alive past the Array.

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
    s1 = ub._stats()
    for _ in range(5000):
        ub.from_dlpack(x)
    s2 = ub._stats()
    assert s2["c_imports"] - s1["c_imports"] == 5000, "C imported every one"
    # Go is not entered (but for _stats itself): nothing allocates there.
    assert s2["go_calls"] - s1["go_calls"] == s1["go_calls"] - s0["go_calls"]
    """

CASES = {
    # The deleter runs at `del a`: numpy's array is let go at once.
    "fresh import": """
        x = np.arange(8.0); r0 = refs(x); s0 = stats()
        a = ub.from_dlpack(x)
        assert refs(x) == r0 + 1
        s1 = stats()
        assert s1["live_imports"] - s0["live_imports"] == 1 and s1["c_imports"] - s0["c_imports"] == 1
        assert s1["handles"] == s0["handles"], "no Go state"
        del a
        assert refs(x) == r0, "the producer's deleter runs at del"
        s2 = stats()
        assert (s2["handles"], s2["live_imports"]) == (s0["handles"], s0["live_imports"])
        """,
    "many": """
        x = np.arange(8.0); r0 = refs(x); s0 = stats()
        arrs = [ub.from_dlpack(x) for _ in range(1000)]
        assert refs(x) == r0 + 1000
        del arrs
        assert refs(x) == r0
        s1 = stats()
        assert (s1["handles"], s1["live_imports"]) == (s0["handles"], s0["live_imports"])
        """,
    # Steady state allocates nothing in Go: Go is never entered.
    "no allocation": NO_ALLOCATION % {"x": "np.arange(8.0)"},
    "no allocation, 5-d": NO_ALLOCATION % {"x": "np.zeros((1, 2, 1, 2, 1))"},
    # Host memory with nothing to wait for (a producer's, imported in C, or
    # a copy) is exported by C alone: DLPack and the buffer protocol.
    "host exports in C": """
        arrays = [ub.from_dlpack(np.arange(8.0)), ub.from_dlpack(np.arange(8.0), copy=True)]
        s0 = ub._stats()
        s1 = ub._stats()
        for a in arrays:
            for _ in range(100):
                np.from_dlpack(a)
                a.__dlpack__(max_version=(1, 0))
                np.asarray(a)
                memoryview(a).tobytes()
        s2 = ub._stats()
        assert s2["go_calls"] - s1["go_calls"] == s1["go_calls"] - s0["go_calls"], "an export entered Go"
        """,
    # Exported again: the consumer's view outlives the array; the producer
    # is released once, when the view goes.
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
        assert (s1["handles"], s1["live_imports"], s1["live_exports"]) == (s0["handles"], s0["live_imports"], s0["live_exports"])
        """,
    # Whatever the array is used for, the producer is released once, when
    # the last holder goes.
    "every use": """
        x = np.arange(8.0); r0 = refs(x)
        def used(fn):
            a = ub.from_dlpack(x)
            fn(a); del a
            gc.collect()
            return refs(x) - r0
        for fn in (lambda a: a.shape, lambda a: np.from_dlpack(a), lambda a: np.asarray(a),
                   lambda a: a.__dlpack__(copy=True, max_version=(1, 0)), lambda a: a.__dlpack__(),
                   lambda a: bytes(memoryview(a)), lambda a: hasattr(a, "__sycl_usm_array_interface__")):
            assert used(fn) == 0
        """,
    # Long chains are freed without recursing on the C stack: views of
    # views hold their root (NumPy survives a million .T), and Arrays over
    # Arrays' exports go through CPython's trashcan.
    "a million views": """
        x = np.arange(6.0).reshape(2, 3)
        a = ub.from_dlpack(x)
        r0 = refs(a)
        v = a
        for _ in range(1000000):
            v = v.T
        assert v.shape == (2, 3) and refs(a) == r0 + 1, "a view of a view holds the root"
        del v
        assert refs(a) == r0
        """,
    "a long chain of imports": """
        x = np.arange(4.0)
        a = ub.from_dlpack(x)
        for _ in range(100000):
            a = ub.from_dlpack(a)
        assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0]
        r0 = refs(x)
        del a
        gc.collect()
        assert refs(x) == r0 - 1, "the whole chain went"
        """,
    # A producer whose deleter is Go's (an export Go made, imported back):
    # C imports it and calls Go's deleter (through the fork gate) once.
    "go deleter": """
        h = ub.from_dlpack(np.arange(4.0))
        class Ours:
            def __dlpack__(self, **kw): return h.__dlpack__(copy=True, **kw)
            def __dlpack_device__(self): return (1, 0)
        s0 = stats()
        a = ub.from_dlpack(Ours())
        s1 = stats()
        assert s1["live_exports"] - s0["live_exports"] == 1
        del a
        s2 = stats()
        assert (s2["handles"], s2["live_imports"], s2["live_exports"]) == (s0["handles"], s0["live_imports"], s0["live_exports"])
        """,
    # An Array with Go state: Go releases it at del.
    "go state": """
        x = np.arange(8.0); s0 = stats()
        a = ub.from_dlpack(x, copy=True)
        assert stats()["handles"] - s0["handles"] == 1
        del a
        s1 = stats()
        assert (s1["handles"], s1["live_imports"], s1["live_exports"]) == (s0["handles"], s0["live_imports"], s0["live_exports"])
        """,
    # asarray (DPCTL's x on q): the Array holds the producer and the
    # SyclQueue it was bound to, and drops them when it goes.
    "asarray fresh": """
        rx, rq = refs(x), refs(q); s0 = stats()
        a = ub.asarray(x)
        assert refs(x) == rx + 1
        del a
        assert (refs(x), refs(q)) == (rx, rq), "the references go at del"
        assert stats()["handles"] == s0["handles"]
        """,
    "asarray many": """
        rx, rq = refs(x), refs(q); s0 = stats()
        arrs = [ub.asarray(x) for _ in range(1000)]
        del arrs
        assert (refs(x), refs(q)) == (rx, rq)
        assert stats()["handles"] == s0["handles"]
        """,
    "asarray every use": """
        rx, rq = refs(x), refs(q)
        def used(fn):
            a = ub.asarray(x)
            fn(a); del a
            gc.collect()
        for fn in (lambda a: a.shape, lambda a: a.__sycl_usm_array_interface__,
                   lambda a: dpt.from_dlpack(a), lambda a: a.__dlpack__(stream=q)):
            used(fn)
        assert (refs(x), refs(q)) == (rx, rq)
        view = []
        used(lambda a: view.append(dpt.asarray(a)))
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
