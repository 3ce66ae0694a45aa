"""examples/rolling from Python (rolling_test.go builds it): a Window's
statistics against NumPy's on the samples pushed, on the host and on a
SYCL device (the ring in device USM, pushed to by a kernel from dpnp
arrays and from NumPy's), its static constructor, its exception, its
pickling, and rolling_mean over both float types with out= as given."""
import pickle

import numpy as np
import pytest

import rolling

dpctl = pytest.importorskip("dpctl")
dpnp = pytest.importorskip("dpnp")

DEVICES = ["cpu", "opencl:cpu"]


def last(samples, size):
    return np.asarray(samples, dtype=np.float32)[-size:]


@pytest.mark.parametrize("device", DEVICES)
def test_window_against_numpy(device):
    rng = np.random.default_rng(44)
    w = rolling.Window(5, device=device)
    assert len(w) == 0 and w.size == 5 and repr(w).startswith("Window(size=5, samples=0")
    pushed = []
    for n in (3, 1, 4, 0, 7, 2):
        x = rng.standard_normal(n).astype(np.float32)
        w.push(x)
        pushed.extend(x)
        want = last(pushed, 5)
        mean, var = w.stats()
        assert len(w) == len(want)
        np.testing.assert_allclose([mean, var], [want.mean(dtype=np.float64), want.var(dtype=np.float64)], rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(dpnp.asnumpy(w.values()) if device != "cpu" else w.values()), want)


def test_device_state_and_dpnp_samples():
    q = dpctl.SyclQueue("opencl:cpu")
    w = rolling.Window(4, device=q)
    x = dpnp.arange(6, dtype="f4", sycl_queue=q)
    w.push(x)            # USM of the ring's device: the kernel reads it in place
    w.push(x[::-2])      # strided, reversed
    w.push(np.ones(1, "f4"))  # host samples: staged to the device, then the kernel
    want = np.concatenate([np.arange(6, dtype="f4"), np.arange(6, dtype="f4")[::-2], np.ones(1, "f4")])[-4:]
    v = w.values()
    assert v.usm_type == "device" and v.sycl_queue == q  # where the window lives
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(v)), want)
    assert w.stats() == pytest.approx((want.mean(), want.var()))


def test_static_constructor_exception_and_pickle():
    x = np.array([1.0, 2.0, 4.0], "f4")
    w = rolling.Window.of(x)
    assert type(w) is rolling.Window and len(w) == 3 and w.stats() == pytest.approx((7 / 3, np.var(x)))
    with pytest.raises(rolling.WindowError, match="stats\\(\\) of a window without samples"):
        rolling.Window(3).stats()
    with pytest.raises(ValueError, match="at least 1 sample"):  # a ValueError to its users
        rolling.Window(0)
    with pytest.raises(TypeError, match=r"Window.push\(\) argument 'x' must be an array of float32, got float64"):
        w.push(np.ones(2))
    d = rolling.Window.of(dpnp.asarray(x, device="opencl:cpu"), device="opencl:cpu")
    for win in (w, d):
        c = pickle.loads(pickle.dumps(win))  # its samples, on the host
        assert type(c) is rolling.Window and len(c) == 3 and c.stats() == pytest.approx(win.stats())
        np.testing.assert_array_equal(np.asarray(c.values()), x)


@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_rolling_mean_against_numpy(dt):
    x = np.random.default_rng(1).standard_normal(10).astype(dt)
    want = np.convolve(x.astype("f8"), np.ones(3) / 3, "valid")
    r = rolling.rolling_mean(x, 3)
    assert np.asarray(r).dtype == np.dtype(dt)
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-5 if dt == "f4" else 1e-12)
    out = np.zeros(8, dt)
    assert rolling.rolling_mean(x, 3, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-5 if dt == "f4" else 1e-12)
    xd = dpnp.asarray(x, device="opencl:cpu")
    rd = rolling.rolling_mean(xd, 3)
    assert rd.sycl_queue == xd.sycl_queue
    np.testing.assert_allclose(dpnp.asnumpy(dpnp.asarray(rd)), want, rtol=1e-5 if dt == "f4" else 1e-12)
    with pytest.raises(ValueError, match=r"rolling_mean\(\) argument 'n' must be in 1..10"):
        rolling.rolling_mean(x, 11)
