"""usmbridge's own functions against the defects of issue 28 that a user
of the package meets (test/extmod/test_soundness.py has those of Go
functions): sizes that overflow, cycles the collector must see whole, dpnp
taking sliced views without a copy, a SUAI dict's own exception, and a
copy of a read-only producer that is the caller's to write."""
import ctypes
import gc
import weakref

import numpy as np
import pytest

import usmbridge as ub
from dlstructs import ManagedVersioned

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_kept = []


def broadcast_capsule(n):
    """A float64 tensor of n elements all on one (stride 0) over an 8-byte
    buffer: its count fits in an int64, its size in bytes need not."""
    buf = np.zeros(1)
    m = ManagedVersioned()
    m.version[0] = 1
    shape, strides = (ctypes.c_int64 * 1)(n), (ctypes.c_int64 * 1)(0)
    m.dl_tensor.data, m.dl_tensor.device_type, m.dl_tensor.ndim = buf.ctypes.data, 1, 1
    m.dl_tensor.dtype = 2 | (64 << 8) | (1 << 16)
    m.dl_tensor.shape, m.dl_tensor.strides = shape, strides
    _kept.append((m, shape, strides, buf))
    return _api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)


class Broadcast:
    def __init__(self, n):
        self.n = n

    def __dlpack__(self, **kw):
        return broadcast_capsule(self.n)

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("n", [2**61 + 1, 2**62, 2**63 - 1])
def test_size_in_bytes_overflows(n):
    # The C import (a host producer, no keywords) and Go's (device="cpu").
    for call in (lambda: ub.from_dlpack(Broadcast(n)), lambda: ub.from_dlpack(Broadcast(n), device="cpu")):
        with pytest.raises(OverflowError, match="size in bytes"):
            call()
    a = ub.from_dlpack(Broadcast(2**59))  # 2**62 bytes: fits
    assert a.nbytes == 2**62 and a.size == 2**59


def test_suai_key_that_raises_reaches_the_caller():
    pytest.importorskip("dpctl")

    class Boom(Exception):
        pass

    class Key(str):
        raised = False

        def __hash__(self):
            return str.__hash__(self)

        def __eq__(self, other):
            if not Key.raised:
                Key.raised = True
                raise Boom("eq")
            return str.__eq__(self, other)

    class Obj:
        @property
        def __sycl_usm_array_interface__(self):
            return {Key("shape"): (3,), "typestr": "<f8", "data": (0, False), "version": 1, "strides": None,
                    "syclobj": "opencl:cpu"}

    with pytest.raises(Boom):
        ub.asarray(Obj())


def test_copy_of_a_legacy_producer_is_writable():
    class Legacy:  # predates max_version: a legacy capsule, read-only
        def __init__(self):
            self.x = np.arange(4.0)

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert ub.from_dlpack(Legacy()).readonly
    c = ub.from_dlpack(Legacy(), copy=True)
    assert not c.readonly, "the copy is the caller's own memory"
    np.from_dlpack(c)[0] = 7  # and it can be written
    assert np.from_dlpack(c).tolist() == [7.0, 1.0, 2.0, 3.0]


def dpnp_tensor():
    pytest.importorskip("dpctl")
    return pytest.importorskip("dpnp.tensor")


@pytest.mark.parametrize("device", [None, (14, 0)])
def test_array_of_an_array_is_collected_in_one_pass(device):
    dpt = dpnp_tensor()
    b = ub.asarray(dpt.arange(10.0))
    a = ub.from_dlpack(b, device=device) if device else ub.from_dlpack(b)
    wa, wb = weakref.ref(a), weakref.ref(b)
    a.sycl_queue, b.sycl_queue  # each makes a cycle: Array -> usm_ndarray -> memory -> Array
    del a, b
    gc.collect()
    assert wa() is None and wb() is None, "a link of the chain outlived the collection"


VIEWS = {
    "slice": lambda x: x[1:, 1:, ::3],
    "element": lambda x: x[1, 2, 3],
    "reversed": lambda x: x[::-1, 1:, ::-2],
    "column": lambda x: x[:, 2],
    "whole": lambda x: x,
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("make", ["asarray", "from_dlpack"])
def test_dpnp_takes_views_without_a_copy(view, make):
    dpt = dpnp_tensor()
    import dpnp
    x = dpt.reshape(dpt.arange(60.0), (3, 4, 5))
    v = VIEWS[view](x)
    a = getattr(ub, make)(v)
    for consumer in (dpnp.asarray, dpt.asarray):
        r = consumer(a)
        assert np.array_equal(dpnp.asnumpy(r) if consumer is dpnp.asarray else dpt.asnumpy(r), dpt.asnumpy(v))
    if not a.readonly:  # dpnp exports a 0-d view read-only: the flag is kept
        r = dpnp.asarray(a)
        r[...] = -1
        assert (dpt.asnumpy(v) == -1).all(), "dpnp copied"
