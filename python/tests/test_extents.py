"""No byte outside the producer's allocation reaches a consumer: windows
of dpctl/dpnp memory on opencl:cpu are measured against the allocation
(through the OpenCL context under dpctl's SYCL context)."""

import numpy as np
import pytest
import usmbridge as ub
from dlstructs import versioned_of

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


@pytest.fixture
def shared(q):
    """16 int32 of shared USM, 0..15: one 64-byte allocation. The fill is
    waited for here: the windows below are read through other queues (and
    Tampered has no sycl_queue for the importer to wait on)."""
    x = dpt.arange(16, dtype="i4", sycl_queue=q, usm_type="shared")
    q.wait()
    return x


SYCLOBJ = {
    "queue": lambda q: q,
    "context": lambda q: q.sycl_context,
    "filter": lambda q: "opencl:cpu",
    "qcap": lambda q: q._get_capsule(),
    "ccap": lambda q: q.sycl_context._get_capsule(),
}


class Win:
    """A SUAI describing any int32 window of x's allocation."""

    def __init__(self, x, so, shape, strides=None, offset=0):
        self.d = dict(data=(x.__sycl_usm_array_interface__["data"][0], False), shape=shape,
                      strides=strides, offset=offset, typestr="<i4", version=1)
        self.so = so

    @property
    def __sycl_usm_array_interface__(self):
        return dict(self.d, syclobj=self.so())


OUTSIDE = [
    pytest.param((1,), None, -1, id="one element below the base"),
    pytest.param((16,), None, -4096, id="far below the base"),
    pytest.param((17,), None, 0, id="one element past the end"),
    pytest.param((4,), None, 13, id="offset one element too far"),
    pytest.param((16,), (-1,), 14, id="negative strides reaching below"),
    pytest.param((1 << 20,), (-1,), -1, id="a MiB backwards from below"),
    pytest.param((1,), None, 1 << 40, id="huge offset"),
]

INSIDE = [
    pytest.param((16,), None, 0, list(range(16)), id="whole allocation"),
    pytest.param((4,), None, 12, [12, 13, 14, 15], id="sub-window ending at the end"),
    pytest.param((16,), (-1,), 15, list(range(15, -1, -1)), id="negative strides inside"),
]


@pytest.mark.parametrize("form", sorted(SYCLOBJ))
@pytest.mark.parametrize("shape,strides,offset", OUTSIDE)
def test_window_outside_is_refused(q, shared, form, shape, strides, offset):
    with pytest.raises(ValueError, match="outside its allocation"):
        ub.asarray(Win(shared, lambda: SYCLOBJ[form](q), shape, strides, offset))


@pytest.mark.parametrize("form", sorted(SYCLOBJ))
@pytest.mark.parametrize("shape,strides,offset,want", INSIDE)
def test_exact_fits_read_the_right_bytes(q, shared, form, shape, strides, offset, want):
    a = ub.asarray(Win(shared, lambda: SYCLOBJ[form](q), shape, strides, offset))

    class Host:
        def __dlpack__(self, **kw):
            return a.__dlpack__(max_version=(1, 0), dl_device=(1, 0))

        def __dlpack_device__(self):
            return (1, 0)

    assert np.from_dlpack(Host()).tolist() == want


class Tampered:
    """dpnp's own kDLOneAPI export with the DLTensor rewritten, as a hostile
    or buggy producer would send it."""

    def __init__(self, x, byte_offset, shape, stride):
        self.x, self.edit = x, (byte_offset, shape, stride)

    def __dlpack__(self, **kw):
        cap = self.x.__dlpack__(max_version=(1, 0))
        t = versioned_of(cap).dl_tensor
        t.byte_offset, t.shape[0], t.strides[0] = self.edit
        return cap

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.parametrize("byte_offset,shape,stride", [
    pytest.param(64, 1, 1, id="byte_offset one past the end"),
    pytest.param(0, 17, 1, id="one element too many"),
    pytest.param(0, 2, -1, id="negative strides below the base"),
    pytest.param(1 << 40, 1, 1, id="byte_offset 2^40"),
    pytest.param(1 << 63, 1, 1, id="byte_offset 2^63"),
])
def test_dlpack_window_outside_is_refused(shared, byte_offset, shape, stride):
    with pytest.raises(BufferError):
        ub.from_dlpack(Tampered(shared, byte_offset, shape, stride))


@pytest.mark.parametrize("byte_offset,shape,stride,want", [
    pytest.param(0, 16, 1, list(range(16)), id="whole"),
    pytest.param(60, 1, 1, [15], id="last element through byte_offset"),
    pytest.param(60, 16, -1, list(range(15, -1, -1)), id="negative strides inside"),
])
def test_dlpack_exact_fits(shared, byte_offset, shape, stride, want):
    a = ub.from_dlpack(Tampered(shared, byte_offset, shape, stride))
    assert dpt.asnumpy(dpt.from_dlpack(a)).tolist() == want
