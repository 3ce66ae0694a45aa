"""The saxpy example, as a Python user meets it: every result asserted,
with NumPy, dpnp (SYCL USM), jax (CPU) and tvm-ffi on either side.
saxpy_test.go builds the module with `python -m usmbridge.build` and runs
this file with it on the path."""
import gc
import sys

import numpy as np
import pytest

import saxpy


def test_numpy_in_place():
    x = np.arange(1000, dtype="f4")
    y = np.ones(1000, dtype="f4")
    before = y.ctypes.data
    assert saxpy.saxpy(2.0, x, y) is None
    assert y.ctypes.data == before
    np.testing.assert_array_equal(y, 1 + 2 * np.arange(1000, dtype="f4"))


def test_strided_and_reversed():
    x = np.arange(20, dtype="f4")[::2]
    y = np.zeros(20, dtype="f4")[::-2]
    saxpy.saxpy(3.0, x, y)
    np.testing.assert_array_equal(y, 3 * np.arange(20, dtype="f4")[::2])


def test_wrong_arguments_name_the_parameter():
    x, y = np.ones(4, "f4"), np.zeros(4, "f4")
    with pytest.raises(TypeError, match=r"saxpy\(\) argument 'x' must be an array of float32, got float64"):
        saxpy.saxpy(2.0, x.astype("f8"), y)
    with pytest.raises(ValueError, match=r"argument 'y' must have 1 dimension, got 2"):
        saxpy.saxpy(2.0, x, np.zeros((2, 2), "f4"))
    ro = np.zeros(4, "f4")
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 'y' must be writable"):
        saxpy.saxpy(2.0, x, ro)
    with pytest.raises(ValueError, match="differ in length"):
        saxpy.saxpy(2.0, x, np.zeros(5, "f4"))
    with pytest.raises(TypeError, match=r"argument 'a' must be float, not str"):
        saxpy.saxpy("2", x, y)
    with pytest.raises(TypeError, match=r"argument 'x' .*array"):
        saxpy.saxpy(2.0, [1.0, 2.0], y)
    with pytest.raises(TypeError, match="missing required argument 'y'"):
        saxpy.saxpy(2.0, x)
    assert saxpy.saxpy(a=2.0, y=y, x=x) is None
    np.testing.assert_array_equal(y, [2, 2, 2, 2])


def test_ramp_on_the_host():
    z = saxpy.ramp(5)
    assert (z.shape, z.device, z.usm_type) == ((5,), (1, 0), None)
    v = np.asarray(z)
    assert v.ctypes.data == z.data, "np.asarray is a view"
    np.testing.assert_array_equal(v, np.arange(5, dtype="f4"))
    w = np.from_dlpack(z)
    assert w.ctypes.data == z.data
    del z, v
    gc.collect()
    np.testing.assert_array_equal(w, np.arange(5, dtype="f4")), "the view keeps Go's memory alive"
    assert saxpy.ramp(0).shape == (0,)
    with pytest.raises(ValueError, match="must not be negative"):
        saxpy.ramp(-1)
    with pytest.raises(ValueError, match=r"ramp\(\) argument 'device'"):
        saxpy.ramp(3, device="no such device")


def test_signatures():
    import inspect
    assert str(inspect.signature(saxpy.saxpy)) == "(a, x, y)"
    assert str(inspect.signature(saxpy.ramp)) == "(n, device='cpu')"
    assert "y += a*x" in saxpy.saxpy.__doc__


def test_dpnp():
    dpnp = pytest.importorskip("dpnp")
    for usm_type in ("device", "shared", "host"):
        x = dpnp.arange(1000, dtype="f4", usm_type=usm_type)
        y = dpnp.ones(1000, dtype="f4", usm_type=usm_type)
        saxpy.saxpy(2.0, x, y)
        np.testing.assert_array_equal(dpnp.asnumpy(y), 1 + 2 * np.arange(1000, dtype="f4"))
    # one USM, one host array
    x = dpnp.arange(8, dtype="f4")
    y = np.ones(8, dtype="f4")
    saxpy.saxpy(1.0, x, y)
    np.testing.assert_array_equal(y, 1 + np.arange(8, dtype="f4"))


def test_ramp_on_a_sycl_device_for_dpnp():
    dpnp = pytest.importorskip("dpnp")
    dpctl = pytest.importorskip("dpctl")
    z = saxpy.ramp(5, device="opencl:cpu")
    assert (z.shape, z.device[0], z.usm_type) == ((5,), 14, "device")
    w = dpnp.asarray(z)
    assert w.__sycl_usm_array_interface__["data"][0] == z.__sycl_usm_array_interface__["data"][0], "zero-copy"
    np.testing.assert_array_equal(dpnp.asnumpy(w), np.arange(5, dtype="f4"))
    q = dpctl.SyclQueue("opencl:cpu")
    for device in (q, q.sycl_device, z.device):
        np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(saxpy.ramp(3, device=device))), [0, 1, 2])


def test_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = jnp.arange(6, dtype=jnp.float32)
    y = np.zeros(6, dtype="f4")
    saxpy.saxpy(2.0, x, y)  # jax arrays are read-only: fine for x
    np.testing.assert_array_equal(y, 2 * np.arange(6, dtype="f4"))
    with pytest.raises(ValueError, match=r"argument 'y' must be writable"):
        saxpy.saxpy(2.0, y, jnp.zeros(6, dtype=jnp.float32))
    z = saxpy.ramp(4)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(z)), np.arange(4, dtype="f4"))


def test_tvm_ffi():
    tvm_ffi = pytest.importorskip("tvm_ffi")
    x = np.arange(5, dtype="f4")
    y = np.ones(5, dtype="f4")
    tx, ty = tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y)
    saxpy.saxpy(1.0, tx, ty)  # through tvm-ffi's DLPack C exchange table, into y's memory
    np.testing.assert_array_equal(y, 1 + np.arange(5, dtype="f4"))
    t = tvm_ffi.from_dlpack(saxpy.ramp(3))
    np.testing.assert_array_equal(np.from_dlpack(t), [0, 1, 2])


def test_no_leaks():
    x = np.arange(100, dtype="f4")
    y = np.ones(100, dtype="f4")
    rx, ry = sys.getrefcount(x), sys.getrefcount(y)
    for _ in range(10_000):
        saxpy.saxpy(0.0, x, y)
        saxpy.ramp(10)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(y)) == (rx, ry)


def test_dpnp_kernel_on_the_arrays_queue():
    """USM the host does not read in place (device USM, strided views of
    any USM) is computed on by the OpenCL C kernel on y's queue, in place,
    with no copy through the host; host memory keeps the Go loop."""
    dpnp = pytest.importorskip("dpnp")
    n = 1 << 12
    x = dpnp.arange(n, dtype="f4")
    y = dpnp.ones(n, dtype="f4")
    assert saxpy.path(x, y) == "kernel"
    saxpy.saxpy(2.0, x, y)
    np.testing.assert_array_equal(dpnp.asnumpy(y), 1 + 2 * np.arange(n, dtype="f4"))
    z = y + 1  # dpnp's next operation sees the result
    np.testing.assert_array_equal(dpnp.asnumpy(z), 2 + 2 * np.arange(n, dtype="f4"))

    # strided and reversed views, of device and of shared USM
    for usm_type in ("device", "shared"):
        xb = dpnp.arange(3 * n, dtype="f4", usm_type=usm_type)
        yb = dpnp.zeros(2 * n, dtype="f4", usm_type=usm_type, sycl_queue=xb.sycl_queue)
        xv, yv = xb[::3], yb[::-2]
        assert saxpy.path(xv, yv) == "strided kernel"
        saxpy.saxpy(3.0, xv, yv)
        want = np.zeros(2 * n, dtype="f4")
        want[::-2] = 3 * np.arange(3 * n, dtype="f4")[::3]
        np.testing.assert_array_equal(dpnp.asnumpy(yb), want)

    # contiguous shared USM and NumPy: the host loop; USM beside NumPy: copies
    xs = dpnp.arange(8, dtype="f4", usm_type="shared")
    ys = dpnp.ones(8, dtype="f4", usm_type="shared", sycl_queue=xs.sycl_queue)
    assert saxpy.path(xs, ys) == "host"
    assert saxpy.path(np.ones(8, "f4"), np.ones(8, "f4")) == "host"
    assert saxpy.path(x, np.ones(n, "f4")) == "copy"
    assert saxpy.path(np.ones(8, "f4")[::2], np.ones(4, "f4")) == "copy"
    # empty arrays launch nothing
    saxpy.saxpy(2.0, dpnp.ones(0, dtype="f4"), dpnp.ones(0, dtype="f4"))


def test_kernel_per_layout():
    """Contiguous arrays take the plain kernel, any other stride the
    strided one; an array of one element either (its stride is never
    read)."""
    dpnp = pytest.importorskip("dpnp")
    x = dpnp.arange(64, dtype="f4")
    y = dpnp.zeros(64, dtype="f4", sycl_queue=x.sycl_queue)
    assert saxpy.path(x, y) == "kernel"
    assert saxpy.path(x[::2], y[:32]) == "strided kernel"
    assert saxpy.path(x[:32], y[::-2]) == "strided kernel"
    assert saxpy.path(x[3:4], y[::-64]) == "kernel"
    saxpy.saxpy(1.0, x[3:4], y[::-64])
    saxpy.saxpy(2.0, x[:32], y[1::2])
    want = np.zeros(64, "f4")
    want[-1] = 3
    want[1::2] += 2 * np.arange(32, dtype="f4")
    np.testing.assert_array_equal(dpnp.asnumpy(y), want)


def test_returns_before_its_kernel_and_dpnp_sees_the_result():
    """saxpy on device USM returns once its kernel is submitted (NoWait):
    its event is among those dpnp's next operation on the queue depends
    on, and dpnp's operations, dpnp.asnumpy and NumPy see the result."""
    dpnp = pytest.importorskip("dpnp")
    n = 1 << 22
    x = dpnp.ones(n, dtype="f4")
    for read in ("dpnp op", "dpnp.asnumpy", "numpy.from_dlpack"):
        y = dpnp.zeros(n, dtype="f4", sycl_queue=x.sycl_queue)
        saxpy.saxpy(3.0, x, y)
        if read == "dpnp op":
            got = dpnp.asnumpy(dpnp.copy(y) * 2) / 2
        elif read == "dpnp.asnumpy":
            got = dpnp.asnumpy(y)
        else:
            got = np.from_dlpack(y, device="cpu")
        np.testing.assert_array_equal(got, 3.0, err_msg=read)


@pytest.mark.parametrize("step", [1, 3])
def test_a_chain_of_calls(step):
    """Fifty calls in a row, none waiting for its kernel, on dpnp's
    out-of-order queue: each kernel follows the one before (a kernel run
    beside another would lose its additions), and dpnp's next operation
    follows the last."""
    dpnp = pytest.importorskip("dpnp")
    n = 4096
    x = dpnp.ones(n * step, dtype="f4")[::step]
    yb = dpnp.zeros(n * step, dtype="f4", sycl_queue=x.sycl_queue)
    y = yb[::step]
    for _ in range(50):
        saxpy.saxpy(1.0, x, y)
    np.testing.assert_array_equal(dpnp.asnumpy(y + 0), 50.0)
