"""The extension API a module author reaches for (issue 29): any number of
parameters, one name over several element types, an argument returned as
given (out=), results made where an argument is (its device, queue and USM
kind) so that dpnp combines them with the caller's arrays, and a
dpctl.SyclQueue named as the device."""
import inspect

import numpy as np
import pytest

import extmod


def test_five_parameters():
    a = np.arange(6.0).reshape(2, 3)
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, -1.0])
    r = extmod.gemv(2.0, a, x, 0.5, y)
    assert r is y, "y is returned as given"
    assert y.tolist() == [2 * 8 + 0.5, 2 * 26 - 0.5]
    assert str(inspect.signature(extmod.gemv)) == "(alpha, a, x, beta, y)"
    with pytest.raises(TypeError, match=r"gemv\(\) missing required argument 'y'"):
        extmod.gemv(1.0, a, x, 1.0)
    with pytest.raises(ValueError, match=r"gemv\(\) argument 'y' must be writable"):
        ro = y.copy()
        ro.flags.writeable = False
        extmod.gemv(1.0, a, x, 1.0, ro)


def test_one_name_over_element_types():
    for dt in ("f4", "f8", "i4"):
        x = np.arange(6, dtype=dt).reshape(2, 3)
        r = np.asarray(extmod.colsum(x))
        assert r.dtype == np.dtype(dt) and r.tolist() == [3, 5, 7]
    with pytest.raises(TypeError, match=r"colsum\(\) argument 'x' must be an array of float32 or float64 or int32, got int16"):
        extmod.colsum(np.zeros((2, 2), "i2"))
    with pytest.raises(ValueError, match="must have 2 dimensions"):
        extmod.colsum(np.zeros(3, "f4"))
    assert extmod.dtype_of(np.zeros(2, "f4")) == "float32"
    assert extmod.dtype_of(np.zeros(2, "c16")) == "complex128"


def test_out_is_returned_as_given():
    x = np.arange(4.0)
    out = np.zeros(4)
    assert extmod.scale(x, 2.0, out=out) is out
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
    r = extmod.scale(x, 3.0)
    assert r is not x and np.asarray(r).tolist() == [0.0, 3.0, 6.0, 9.0]
    assert extmod.scale(x, 1.0, out=None) is not None
    with pytest.raises(TypeError, match=r"scale\(\) argument 'x' must be an array of float64, got int64"):
        extmod.scale(np.arange(3), 1.0)


def dpnp_stack():
    pytest.importorskip("dpctl")
    return pytest.importorskip("dpnp")


def test_results_on_the_callers_queue():
    dpnp = dpnp_stack()
    import dpctl
    for usm_type in ("device", "shared"):
        q = dpctl.SyclQueue("opencl:cpu")  # a queue of the caller's own, not the device's default
        x = dpnp.arange(5.0, sycl_queue=q, usm_type=usm_type)
        r = extmod.scale(x, 2.0)
        assert r.sycl_queue == q and r.usm_type == usm_type
        s = dpnp.asarray(r) + x  # dpnp combines them: one queue (no ExecutionPlacementError)
        assert dpnp.asnumpy(s).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]
        z = extmod.zeros_like(x)
        assert z.sycl_queue == q and z.usm_type == usm_type and z.shape == (5,)
        # out= as given: the very dpnp array, written on its queue
        out = dpnp.zeros(5, sycl_queue=q)
        assert extmod.scale(x, 3.0, out=out) is out
        assert dpnp.asnumpy(out).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]


def test_a_queue_as_the_device():
    dpnp = dpnp_stack()
    import dpctl
    q = dpctl.SyclQueue("opencl:cpu", property="in_order")
    z = extmod.zeros_on(4, q)
    assert z.sycl_queue == q and z.usm_type == "device"
    y = dpnp.ones(4, sycl_queue=q)
    assert dpnp.asnumpy(dpnp.asarray(z) + y).tolist() == [1.0] * 4
    h = extmod.zeros_on(3)
    assert h.usm_type is None and np.asarray(h).tolist() == [0.0] * 3
