"""An array argument's __sycl_usm_array_interface__, read two ways: C
looks the keys of an exact dict up (pyext/read_suai.c, read_suai) and hands
Go the values, where a dict subclass is looked up by Go alone
(pybridge.SUAIDict). Over SUAI dicts spoiled one or two fields at a time,
a function sees the same array either way, or the caller gets the same
exception: a lookup C skipped, added or read wrong fails this test."""
import copy

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import extmod

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")

Q = dpctl.SyclQueue("opencl:cpu")
X = dpt.arange(32, dtype="f4", sycl_queue=Q)
PTR = X.__sycl_usm_array_interface__["data"][0]
GOOD = {"data": (PTR, False), "shape": (4,), "strides": None, "typestr": "<f4", "version": 1, "syclobj": Q,
        "offset": 0}


class Raised(Exception):
    pass


class RaiseIndex:
    def __index__(self):
        raise Raised("index")


class EqRaises:
    """A key that hashes as a SUAI key and, once armed, raises when
    compared: the lookup of that key raises, as dpctl's dict.get does."""

    def __init__(self, key):
        self.key, self.armed = key, False

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        if self.armed:
            raise Raised("eq " + self.key)
        return NotImplemented


class SubDict(dict):
    pass


class S:
    def __init__(self, d):
        self.d = d

    @property
    def __sycl_usm_array_interface__(self):
        return self.d


atoms = st.one_of(
    st.integers(-2, 2**65), st.booleans(), st.none(), st.floats(allow_nan=False), st.text(max_size=4),
    st.builds(RaiseIndex), st.sampled_from([PTR, PTR + 4, PTR - 4096, Q, "opencl:cpu", "<f4", "|f8", "<i4"]))
values = st.recursive(atoms, lambda ch: st.one_of(st.lists(ch, max_size=3), st.lists(ch, max_size=3).map(tuple)),
                      max_leaves=6)


def spoil(recipe, cls=dict):
    """A SUAI dict of type cls from recipe (changed, dropped, clash): its
    own copy of the values, as reading may change them."""
    changed, dropped, clash = recipe
    d, key = cls(), None
    if clash:  # first: the lookup of the key it clashes with meets it first
        key = EqRaises(clash)
        d[key] = 0
    d.update(GOOD, **copy.deepcopy(changed, {id(Q): Q}))
    for k in dropped:
        d.pop(k, None)
    if key is not None:
        key.armed = True
    return d


recipes = st.tuples(st.dictionaries(st.sampled_from(list(GOOD)), values, max_size=2),
                    st.sets(st.sampled_from(list(GOOD)), max_size=1),
                    st.one_of(st.none(), st.sampled_from(list(GOOD))))


def seen(d):
    """What extmod.same sees of an object with SUAI d: the array's layout,
    memory and USM kind, or the exception's type and text."""
    try:
        r = extmod.same(S(d))
    except BaseException as e:  # noqa: B036 - the exception is the outcome
        return ("raised", type(e).__name__, str(e))
    s = r.__sycl_usm_array_interface__
    return ("ok", s["shape"], s["strides"], s["typestr"], s["data"], s.get("offset", 0), r.usm_type)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(recipes)
def test_exact_dict_as_subclass(recipe):
    assert seen(spoil(recipe)) == seen(spoil(recipe, SubDict))


class HostOnly:
    """A type with __sycl_usm_array_interface__ whose instance in host
    memory has none (AttributeError) and is a DLPack producer; it counts
    the getter's calls."""

    calls = 0

    def __init__(self, x):
        self.x = x

    @property
    def __sycl_usm_array_interface__(self):
        HostOnly.calls += 1
        raise AttributeError("host memory")

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_attribute_error_reads_dlpack_once():
    """An AttributeError from the getter makes the argument a DLPack
    producer, and the getter is not asked again."""
    import numpy as np
    HostOnly.calls = 0
    r = extmod.same(HostOnly(np.arange(6.0)))
    assert r.shape == (6,) and HostOnly.calls == 1


def test_outcomes():
    """The property is not vacuous: the good SUAI gives the array, a
    spoiled one the reader's error, a raising lookup its exception."""
    assert seen(spoil(({}, (), None)))[:2] == ("ok", (4,))
    assert seen(spoil(({"shape": (2, 2)}, (), None)))[:2] == ("ok", (2, 2))
    assert seen(spoil(({}, ("typestr",), None)))[:2] == ("raised", "ValueError")
    assert seen(spoil(({}, (), "shape")))[:3] == ("raised", "Raised", "eq shape")
