"""jax (CPU) as a DLPack peer, both ways.

jax takes kDLCPU tensors only, and shares memory that is 64-byte aligned
(it copies other memory): USM reaches it through
usmbridge.from_dlpack(x, device=(1, 0)), zero-copy for host-accessible USM
and a host copy for device USM.
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# jax is not in every venv of the CPython support matrix (README.md,
# "What runs where"; its pin has no 3.10 wheel): without it, or without
# dpctl, the module skips.
dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import usmbridge as ub  # noqa: E402

CPU = (1, 0)


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


@pytest.mark.parametrize("dtype", ["f4", "i4", "u1", "?", "c8"])
def test_ours_of_jax_is_zero_copy(dtype):
    j = jnp.arange(12).astype(dtype).reshape(3, 4)
    a = ub.from_dlpack(j)
    assert a.device == CPU and a.shape == (3, 4)
    assert a.data == j.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.from_dlpack(a), np.asarray(j))


def aligned(values, align=64):
    """values copied into host memory aligned as jax needs to share it
    (XLA's CPU client copies a buffer that is not 64-byte aligned)."""
    buf = np.empty(values.nbytes + align, np.uint8)
    off = -buf.ctypes.data % align
    out = buf[off:off + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


@pytest.mark.parametrize("dtype", ["f4", "i4", "u1", "?", "c8"])
def test_jax_of_ours_is_zero_copy(dtype):
    h = aligned(np.arange(12).astype(dtype).reshape(3, 4))
    j = jnp.from_dlpack(ub.from_dlpack(h))
    assert j.unsafe_buffer_pointer() == h.ctypes.data
    np.testing.assert_array_equal(np.asarray(j), h)


def test_jax_of_a_transposed_array():
    h = np.arange(12, dtype="f4").reshape(3, 4).T  # strides jax accepts: a transposition
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(ub.from_dlpack(h))), h)


def test_jax_of_shared_usm_through_the_host(q):
    x = dpt.arange(16, dtype="f4", sycl_queue=q, usm_type="shared")
    q.wait()
    u = ub.asarray(x)
    with pytest.raises(TypeError, match="DLDeviceType: 14"):
        jnp.from_dlpack(u)  # jax knows no kDLOneAPI
    j = jnp.from_dlpack(ub.from_dlpack(u, device=CPU))
    assert j.unsafe_buffer_pointer() == x.__sycl_usm_array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(j), np.arange(16, dtype="f4"))


def test_jax_of_device_usm_is_a_host_copy(q):
    x = dpt.arange(16, dtype="f4", sycl_queue=q, usm_type="device")
    q.wait()
    h = ub.from_dlpack(ub.asarray(x), device=CPU)
    assert h.usm_type is None and h.data != x.__sycl_usm_array_interface__["data"][0]
    with pytest.raises(BufferError):
        ub.from_dlpack(ub.asarray(x), device=CPU, copy=False)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(h)), np.arange(16, dtype="f4"))


def test_jax_arrays_survive_the_round_trip():
    j = jnp.arange(8, dtype=jnp.float32)
    a = ub.from_dlpack(j)
    assert a.readonly  # jax's legacy capsule cannot say the memory may be written
    with pytest.raises(BufferError):
        jnp.from_dlpack(a)  # jax asks for a legacy capsule, which cannot say read-only (numpy refuses too)
    view = np.from_dlpack(a)  # numpy asks for a versioned capsule: READ_ONLY
    assert not view.flags.writeable
    back = jnp.from_dlpack(ub.from_dlpack(view.copy()))  # a writable copy goes back
    del j, a
    np.testing.assert_array_equal(view, np.arange(8, dtype="f4"))
    np.testing.assert_array_equal(np.asarray(back), np.arange(8, dtype="f4"))
    assert jax.devices()[0].platform == "cpu"


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_jax_dtypes_numpy_lacks(dtype):
    """DLPack dtypes with no NumPy typestring come in zero-copy (read-only:
    jax's capsules are legacy), named, and have no SUAI."""
    j = jnp.arange(6, dtype=dtype).reshape(2, 3)
    a = ub.from_dlpack(j)
    assert a.shape == (2, 3) and a.data == j.unsafe_buffer_pointer() and a.readonly
    assert a.dtype == dtype
    with pytest.raises(AttributeError):
        a.__sycl_usm_array_interface__  # host memory: no SUAI at all
    with pytest.raises(BufferError):
        jnp.from_dlpack(a)
