"""Host imports C replays (pybridge/ext/ext.h, "Host imports C replays").

When Go accepts a fresh kDLCPU tensor and lets C call its producer's
deleter, it writes the decision down: every field Import read but the data
pointer, and the data pointers it accepts for them. from_dlpack's fast path
makes the next array of an equal tensor without entering Go ("pending"),
and Go imports it, with all its checks again, at the first use that needs
Go. These tests hold the replay to Go's own decisions: same values, same
flags, Go's errors for a tensor Go would refuse, Go's errors again for a
producer that changes its tensor after the import, and exactly one call of
the deleter either way.

Cases that can free memory under a live view run in a fresh interpreter."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import usmbridge as ub
from dlstructs import versioned_of

HERE = os.path.dirname(os.path.abspath(__file__))


def replays():
    return ub._stats()["c_imports"]


# Layouts numpy exports with a C deleter; the last has more dimensions than
# Go's table holds (UB_HOST_LAYOUT_NDIM), so it is never replayed.
MAKERS = {
    "1d": (lambda: np.arange(8.0), True),
    "strided3d": (lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4)[:, ::-1, 1::2], True),
    "negative": (lambda: np.arange(10, dtype=np.float32)[::-3], True),
    "0d": (lambda: np.array(7.5), True),
    "size0": (lambda: np.zeros((3, 0), dtype=np.complex64), True),
    "transposed": (lambda: np.arange(6, dtype=np.uint16).reshape(2, 3).T, True),
    "bool": (lambda: np.array([True, False, True]), True),
    "5d": (lambda: np.zeros((1, 2, 1, 2, 1), dtype=np.int8), False),
}


def props(a):
    return (a.shape, a.dtype, a.strides, a.offset, a.usm_type, a.device, a.readonly)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_replayed_array_is_gos(name):
    make, replayed = MAKERS[name]
    first, second = make(), make()
    a = ub.from_dlpack(first)  # Go decides (or has decided before)
    n0 = replays()
    b = ub.from_dlpack(second)
    assert replays() - n0 == (1 if replayed else 0)
    assert props(b) == props(a)
    assert b.data == second.__array_interface__["data"][0]
    view = np.from_dlpack(b)
    assert view.tolist() == second.tolist()
    assert second.size == 0 or np.shares_memory(view, second)


def test_flags_are_part_of_the_layout():
    """A read-only tensor is never taken for a writable one of the same
    layout, nor the other way round: the first read-only import of a layout
    Go has accepted writable is Go's to decide, and the array's flag is
    Go's either way (Go reads it when it imports a pending array)."""
    w = np.arange(5, dtype=np.uint64)  # a layout no other test imports read-only
    r = np.arange(5, dtype=np.uint64)
    r.flags.writeable = False
    assert ub.from_dlpack(w).readonly is False
    n0 = replays()
    assert ub.from_dlpack(w).readonly is False
    assert replays() - n0 == 1, "an equal writable tensor is replayed"
    assert ub.from_dlpack(r).readonly is True
    assert replays() - n0 == 1, "the read-only flag is a different layout: Go decides"
    assert ub.from_dlpack(r).readonly is True
    assert replays() - n0 == 2
    v = np.from_dlpack(ub.from_dlpack(r))
    assert v.flags.writeable is False
    with pytest.raises(ValueError):
        v[0] = 1.0


class Legacy:
    """A producer that predates max_version: a DLManagedTensor capsule."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        return self.x.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def test_legacy_capsules_replay_too():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    a = ub.from_dlpack(Legacy(x))
    n0 = replays()
    b = ub.from_dlpack(Legacy(x))
    assert replays() - n0 == 1
    assert props(b) == props(a) and b.readonly is True  # a legacy tensor cannot say it is writable
    assert np.from_dlpack(b).tolist() == x.tolist()


def test_sizes_that_vary_replay():
    """Go's decision covers a box of extents around the tensor it judged
    (up to 2^20 times each), so a producer whose sizes vary stays in C."""
    ub.from_dlpack(np.zeros((3, 5), dtype=np.uint32))
    n0 = replays()
    for n in range(0, 200, 7):
        x = np.arange(n * 5, dtype=np.uint32).reshape(n, 5)
        a = ub.from_dlpack(x)
        assert a.shape == (n, 5) and np.from_dlpack(a).tolist() == x.tolist()
    assert replays() - n0 == len(range(0, 200, 7))


def test_outside_the_box_go_decides():
    """An extent beyond the box is Go's to judge (host memory has no extent
    Go could check, so it takes the tensor as given)."""
    x = np.arange(8.0)
    ub.from_dlpack(x), ub.from_dlpack(x)
    n0 = replays()
    a = ub.from_dlpack(Reshaped(x, 8 << 21))
    assert replays() == n0
    assert a.shape == (8 << 21,)


def test_more_layouts_than_the_table_holds():
    dtypes = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]
    xs = [np.arange(n, dtype=d) for d in dtypes for n in (3, 4)]
    for _ in range(3):
        for x in xs:
            a = ub.from_dlpack(x)
            assert a.shape == x.shape and np.dtype(a.dtype) == x.dtype
            assert np.from_dlpack(a).tolist() == x.tolist()


class Tampered:
    """numpy's own capsule (its C deleter) with the DLTensor's data pointer
    rewritten, as a buggy producer would send it."""

    def __init__(self, x, data):
        self.x, self.data = x, data

    def __dlpack__(self, **kw):
        cap = self.x.__dlpack__(**kw)
        versioned_of(cap).dl_tensor.data = self.data
        return cap

    def __dlpack_device__(self):
        return (1, 0)


class Reshaped:
    """numpy's capsule with its first extent rewritten (never read)."""

    def __init__(self, x, n):
        self.x, self.n = x, n

    def __dlpack__(self, **kw):
        cap = self.x.__dlpack__(**kw)
        versioned_of(cap).dl_tensor.shape[0] = self.n
        return cap

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("data,message", [
    (None, "data is NULL"),
    ((1 << 56) - 8, "beyond any process memory"),
    ((1 << 64) - 8, "wrap around the address space"),
], ids=["null", "above-user-space", "wraps"])
def test_pointers_go_would_refuse_are_refused(data, message):
    """The layout is in Go's table, the pointer is not one Go accepts for
    it: Go decides, and raises what it always raises."""
    x = np.arange(8.0)
    ub.from_dlpack(x), ub.from_dlpack(x)
    n0 = replays()
    with pytest.raises(BufferError, match=message):
        ub.from_dlpack(Tampered(x, data))
    assert replays() == n0
    assert np.from_dlpack(ub.from_dlpack(x)).tolist() == x.tolist()


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
    # Made and dropped without Go: numpy's deleter runs at del, once, and
    # the counts say so.
    "pending released": """
        x = np.arange(8.0); ub.from_dlpack(x)
        gc.collect(); r0 = refs(x); s0 = ub._stats()
        a = ub.from_dlpack(x)
        s1 = ub._stats()
        assert s1["c_imports"] - s0["c_imports"] == 1
        assert s1["live_imports"] - s0["live_imports"] == 1
        assert s1["handles"] == s0["handles"], "Go has not seen it"
        assert refs(x) == r0 + 1
        del a
        assert refs(x) == r0, "the deleter runs at del"
        s2 = ub._stats()
        assert s2["c_releases"] - s0["c_releases"] == 1
        assert (s2["live_imports"], s2["handles"]) == (s0["live_imports"], s0["handles"])
        """,
    # Go imports it at the first use that needs Go, and from then on its
    # release is Go's to decide, as for any import.
    "pending then seen by Go": """
        x = np.arange(8.0); ub.from_dlpack(x)
        gc.collect(); r0 = refs(x)
        a = ub.from_dlpack(x)
        s0 = ub._stats()
        v = np.from_dlpack(a)
        s1 = ub._stats()
        assert s1["handles"] - s0["handles"] == 1
        assert s1["live_imports"] == s0["live_imports"], "one import either way"
        del a; gc.collect()
        assert refs(x) == r0 + 1, "the view still reads x"
        assert v.tolist() == list(range(8))
        del v
        assert refs(x) == r0
        """,
    # The producer changes its tensor after the import: Go's checks run
    # again when Go imports it, and the array gives Go's error, not a view
    # of what changed; the deleter still runs once.
    "producer changes shape": """
        x = np.arange(8.0); ub.from_dlpack(x)
        gc.collect(); r0 = refs(x); n0 = ub._stats()["c_imports"]
        k = Kept(x)
        a = ub.from_dlpack(k)
        assert ub._stats()["c_imports"] - n0 == 1
        k.m.dl_tensor.shape[0] = -1
        for get in (lambda: a.shape, lambda: np.from_dlpack(a), lambda: a.__dlpack__()):
            try:
                get()
            except BufferError as e:
                assert "negative" in str(e), e
            else:
                raise AssertionError("no error")
        k.m.dl_tensor.shape[0] = 8  # the deleter frees what numpy gave
        del a, k
        gc.collect()
        assert refs(x) == r0
        """,
    "producer changes data": """
        x = np.arange(8.0); ub.from_dlpack(x)
        gc.collect(); r0 = refs(x)
        k = Kept(x)
        a = ub.from_dlpack(k)
        k.m.dl_tensor.data = None
        try:
            a.readonly
        except BufferError as e:
            assert "NULL" in str(e), e
        else:
            raise AssertionError("no error")
        del a, k
        gc.collect()
        assert refs(x) == r0
        """,
    # Many pending arrays, all released by C; then the same through Go.
    "many pending": """
        x = np.arange(3.0); ub.from_dlpack(x)
        gc.collect(); r0 = refs(x); s0 = ub._stats()
        arrs = [ub.from_dlpack(x) for _ in range(5000)]
        assert refs(x) == r0 + 5000
        assert ub._stats()["c_imports"] - s0["c_imports"] == 5000
        del arrs
        assert refs(x) == r0
        s1 = ub._stats()
        assert s1["go_heap_allocs"] - s0["go_heap_allocs"] < 500
        assert (s1["live_imports"], s1["handles"]) == (s0["live_imports"], s0["handles"])
        """,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pending_in_child(case):
    code = PRELUDE + textwrap.dedent(CASES[case]) + "\nprint('ok')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)
