"""NumPy arrays read in place by the C half (RATIONALE.md, "NumPy arrays
read in place"), held to NumPy's own account of them: over arrays of every
dtype the read covers, and others it leaves to the buffer protocol, in
every layout (views, reversed and broadcast strides, 0-d, empty,
Fortran order) and flag (read-only), what Go sees is the address of
element 0, the shape, the strides in elements, the read-only flag and the
element type NumPy says. A misread field of the array or its descriptor
fails this test."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import extmod

# What the in-place read maps (bool, the C integers, float16/32/64,
# complex64/128), and one it leaves to the buffer protocol.
DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "l", "L", "q", "Q", "f2", "f4", "f8", "c8", "c16"]
NAMES = {"?": "bool", "f2": "float16", "c8": "complex64", "c16": "complex128"}


def name(dt):
    d = np.dtype(dt)
    return NAMES.get(dt) or {"b": "int", "i": "int", "u": "uint", "f": "float"}[d.kind] + str(d.itemsize * 8)


def numpy_view(x):
    isz = x.itemsize
    return (x.__array_interface__["data"][0], tuple(x.shape), tuple(s // isz for s in x.strides), not x.flags.writeable)


@st.composite
def arrays(draw):
    dt = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    x = np.arange(int(np.prod(shape)) if shape else 1).astype(dt).reshape(shape)
    how = draw(st.sampled_from(["as is", "reversed", "transposed", "fortran", "sliced", "broadcast"]))
    if how == "reversed" and x.ndim:
        x = x[::-1]
    elif how == "transposed":
        x = x.T
    elif how == "fortran":
        x = np.asfortranarray(x)
    elif how == "sliced" and x.ndim:
        x = x[..., ::2]
    elif how == "broadcast" and x.ndim:
        x = np.broadcast_to(x[..., :1], x.shape)
    if draw(st.booleans()) and x.flags.writeable:
        x.flags.writeable = False
    return dt, x


@settings(max_examples=300, deadline=None)
@given(arrays())
def test_in_place_read_is_numpys_view(case):
    dt, x = case
    before = extmod._c_stats()["numpy_reads"]
    addr, shape, strides, ro, dtype = extmod.describe(x)
    assert extmod._c_stats()["numpy_reads"] == before + 1, "not read in place"
    want = numpy_view(x)
    if x.size == 0:  # an empty array's pointer and strides say nothing
        assert (shape, ro) == (want[1], want[3])
    else:
        assert (addr, shape, strides, ro) == want
    assert dtype == name(dt)


@pytest.mark.parametrize("dt", [">f8", "M8[ns]", "g", "O", "U2"])
def test_what_the_read_leaves_is_not_read_in_place(dt):
    x = np.zeros(3, dt)
    before = extmod._c_stats()["numpy_reads"]
    try:
        extmod.describe(x)
    except TypeError:
        pass  # DLPack cannot carry it: refused, naming the parameter
    assert extmod._c_stats()["numpy_reads"] == before


def test_a_subclass_takes_the_buffer_protocol():
    class Sub(np.ndarray):
        pass
    x = np.arange(4.0).view(Sub)
    before = extmod._c_stats()["numpy_reads"]
    assert extmod.describe(x)[1] == (4,)
    assert extmod._c_stats()["numpy_reads"] == before
