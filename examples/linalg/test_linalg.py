"""examples/linalg from Python (linalg_test.go builds it): axpby on NumPy and
dpnp arrays of both float types, out= returned as given, results where x
is that dpnp combines with its own arrays without a copy, and the Moments
class."""
import gc
import inspect
import weakref

import numpy as np
import pytest

import linalg

dpctl = pytest.importorskip("dpctl")
dpnp = pytest.importorskip("dpnp")


@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_axpby_numpy(dt):
    x, y = np.arange(4, dtype=dt), np.ones(4, dtype=dt)
    r = linalg.axpby(2.0, x, 3.0, y)
    assert np.asarray(r).dtype == np.dtype(dt) and np.asarray(r).tolist() == [3, 5, 7, 9]
    out = np.zeros(4, dtype=dt)
    assert linalg.axpby(1.0, x, 1.0, y, out=out) is out
    assert out.tolist() == [1, 2, 3, 4]
    assert str(inspect.signature(linalg.axpby)) == "(alpha, x, beta, y, *, out=None)"


def test_axpby_refuses_mixed_and_other_types():
    with pytest.raises(TypeError, match=r"axpby\(\)"):
        linalg.axpby(1.0, np.ones(2, "f4"), 1.0, np.ones(2, "f8"))
    with pytest.raises(TypeError, match=r"axpby\(\) argument 'x' must be an array of float32 or float64, got int64"):
        linalg.axpby(1.0, np.ones(2, "i8"), 1.0, np.ones(2, "i8"))
    with pytest.raises(ValueError, match="differ in length"):
        linalg.axpby(1.0, np.ones(2), 1.0, np.ones(3))


@pytest.mark.parametrize("usm_type", ["device", "shared"])
@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_axpby_dpnp(dt, usm_type):
    q = dpctl.SyclQueue("opencl:cpu")
    x = dpnp.arange(4, dtype=dt, sycl_queue=q, usm_type=usm_type)
    y = dpnp.ones(4, dtype=dt, sycl_queue=q, usm_type=usm_type)
    r = linalg.axpby(2.0, x, 3.0, y)
    assert r.sycl_queue == q and r.usm_type == usm_type
    d = dpnp.asarray(r)  # no copy: the same memory
    assert d.get_array().__sycl_usm_array_interface__["data"][0] == r.__sycl_usm_array_interface__["data"][0]
    assert dpnp.asnumpy(d + x).tolist() == [3, 6, 9, 12]  # combines with x: one queue
    out = dpnp.zeros(4, dtype=dt, sycl_queue=q, usm_type=usm_type)
    assert linalg.axpby(1.0, x, 1.0, y, out=out) is out
    assert dpnp.asnumpy(out).tolist() == [1, 2, 3, 4]


def test_moments():
    m = linalg.Moments(3)
    assert m.count == 0
    with pytest.raises(ValueError, match="no rows yet"):
        m.mean()
    m.update(np.array([1.0, 2.0, 3.0]))
    m.update(np.array([3.0, 2.0, 1.0], dtype="f4"))
    assert m.count == 2 and np.asarray(m.mean()).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match=r"Moments.update\(\) argument 'x' must have 3 values, got 2"):
        m.update(np.ones(2))
    with pytest.raises(TypeError, match=r"argument 'x' must be an array of float32 or float64, got int32"):
        m.update(np.ones(3, "i4"))
    with pytest.raises(ValueError, match=r"argument 'n' must be positive"):
        linalg.Moments(0)
    w = weakref.ref(m)
    del m
    gc.collect()
    assert w() is None


def test_moments_on_a_device():
    q = dpctl.SyclQueue("opencl:cpu")
    m = linalg.Moments(2)
    x = dpnp.asarray([1.0, 3.0], sycl_queue=q)
    m.update(x)
    r = m.mean()
    assert r.sycl_queue == q and r.usm_type == "device"
    assert dpnp.asnumpy(dpnp.asarray(r) + x).tolist() == [2.0, 6.0]
