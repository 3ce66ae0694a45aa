"""Launches that return before their kernel ends (pyext.NoWait), read by
every consumer: each test launches a kernel that fills an array with v,
held back by a gate (an int in shared USM that it spins on: extmod's
gated_fill) until a goroutine opens it, returns while the gate is still
shut, and then has a consumer read the array, with the gate opening a
moment after the read has begun. A consumer that did not wait for the
kernel would read the array as it was; a call that waited for it when it
should not have would see the gate's timeout (the kernel writes -1 when
its gate stays shut for seconds). The gate lies on a queue of its own, so
that reading it never waits for the kernel behind it."""
import threading

import numpy as np
import pytest

import extmod

dpctl = pytest.importorskip("dpctl")
dpnp = pytest.importorskip("dpnp")
import dpctl.utils  # noqa: E402
import dpnp.tensor as dpt  # noqa: E402

N = 1024
OPEN_MS = 50  # the gate opens this long after the read began


@pytest.fixture
def q():
    """An out-of-order queue, as dpnp's are."""
    try:
        return dpctl.SyclQueue("opencl:cpu")
    except Exception as e:  # no OpenCL CPU device
        pytest.skip(str(e))


@pytest.fixture
def gate(q):
    """A shut gate in shared USM of q's context, on a queue of its own."""
    return dpnp.zeros(1, dtype="i4", usm_type="shared", sycl_queue=dpctl.SyclQueue(q.sycl_context, q.sycl_device))


def shared(q, n=N, fill=0.0):
    return dpnp.full(n, fill, dtype="f8", usm_type="shared", sycl_queue=q)


def open_from_python(gate, ms=OPEN_MS):
    """Open the gate from a Python thread, which needs the GIL: a reader
    that waits for the kernel holding the GIL keeps it shut, and reads the
    -1s of its timeout."""
    def store():
        raw(gate)[0] = 1
    t = threading.Timer(ms / 1000, store)
    t.start()
    return t


def raw(y):
    """y's memory as the host sees it now, without waiting for anything
    (its dpctl Memory's buffer)."""
    return np.frombuffer(y.get_array().usm_data, dtype=y.dtype)


def unfinished(q):
    """How many of the events dpnp's next operation on q depends on are
    not complete."""
    done = dpctl.event_status_type.complete
    return sum(e.execution_status != done for e in dpctl.utils.SequentialOrderManager[q].submitted_events)


def test_returns_before_the_kernel_runs(q, gate):
    y = shared(q)
    assert extmod.gated_fill(gate, y, 7.0) is None  # returns with the gate shut
    assert (raw(y) == 0).all(), "the kernel ran: the call waited, or the gate did not hold it"
    assert unfinished(q) == 1, "the launch is among the events dpnp's next operation depends on"
    extmod.open_gate(gate)
    np.testing.assert_array_equal(dpnp.asnumpy(y), 7.0)


@pytest.mark.parametrize("opener", ["goroutine", "python"])
def test_default_waits(q, gate, opener):
    """Without NoWait the call returns once the kernel is done: a host
    read of the memory right after it, which waits for nothing, sees it.
    The call waits without the GIL (a Python thread opens the gate)."""
    y = shared(q)
    if opener == "python":
        t = open_from_python(gate)
    else:
        extmod.open_gate(gate, OPEN_MS)
    extmod.gated_fill_waited(gate, y, 7.0)
    np.testing.assert_array_equal(raw(y), 7.0)
    if opener == "python":
        t.join()


# Consumers of a dpnp array the kernel wrote in place. Not among them:
# dpnp.tensor.from_dlpack of a dpnp array, which with dpnp 0.20 reads its
# memory without waiting for the work pending on it (a dpnp operation's as
# much as a Go kernel's), on another queue.
def _dpnp_op(y):
    return dpnp.asnumpy(y + 1) - 1


def _dpnp_copy(y):
    """dpnp's copy of a contiguous array is a memcpy, which an out-of-order
    queue runs at once unless it depends on the kernel's event."""
    return dpnp.asnumpy(dpnp.copy(y))


def _asnumpy(y):
    return dpnp.asnumpy(y)


def _from_dlpack_stream(y):
    """y's memory handed to an in-order queue as the DLPack stream, then
    copied through that queue: the copy follows the kernel on the device."""
    s = dpctl.SyclQueue(y.sycl_context, y.sycl_device, property="in_order")
    cap = y.__dlpack__(stream=s)
    del cap
    out = np.empty(y.shape, dtype=y.dtype)
    dst = dpctl.memory.MemoryUSMHost(out.nbytes, queue=s)
    s.memcpy(dst, y.get_array().usm_data, out.nbytes)
    return np.frombuffer(dst, dtype=y.dtype).copy()


def _usm_ndarray_suai(y):
    """A usm_ndarray made from y's __sycl_usm_array_interface__."""
    return dpnp.asnumpy(dpt.asarray(y.get_array()))


def _go_reads(y):
    """A Go function's own read of the argument: usm.CopyToSlice."""
    return extmod.copy_out(y)


IN_PLACE = {
    "dpnp op": _dpnp_op,
    "dpnp.copy": _dpnp_copy,
    "dpnp.asnumpy": _asnumpy,
    "__dlpack__(stream=q)": _from_dlpack_stream,
    "SUAI read by dpnp.tensor": _usm_ndarray_suai,
    "a Go function": _go_reads,
}


@pytest.mark.parametrize("consumer", sorted(IN_PLACE))
@pytest.mark.parametrize("usm_type", ["shared", "device"])
def test_in_place_result_read_by(q, gate, consumer, usm_type):
    y = dpnp.zeros(N, dtype="f8", usm_type=usm_type, sycl_queue=q)
    extmod.gated_fill(gate, y, 7.0)
    extmod.open_gate(gate, OPEN_MS)
    np.testing.assert_array_equal(IN_PLACE[consumer](y), 7.0)


def test_result_over_the_argument(q, gate):
    """The Array a NoWait function returns over its argument's memory."""
    y = shared(q)
    a = extmod.gated_fill_same(gate, y, 7.0)
    extmod.open_gate(gate, OPEN_MS)
    np.testing.assert_array_equal(np.asarray(a), 7.0)


# Consumers of a new Array the kernel wrote (the function's result).
def _np_asarray(r):
    return np.asarray(r)


def _memoryview(r):
    try:
        m = memoryview(r)
    except (BufferError, TypeError) as e:  # no buffer protocol for this memory
        pytest.skip("memoryview: %s" % e)
    return np.asarray(m)


def _np_from_dlpack(r):
    return np.from_dlpack(r, device="cpu")


def _dpnp_from_dlpack(r):
    return dpnp.asnumpy(dpnp.from_dlpack(r))


def _dpnp_asarray(r):
    return dpnp.asnumpy(dpnp.asarray(r))


def _dpnp_op_of_result(r):
    return dpnp.asnumpy(dpnp.asarray(r) + 1) - 1


def _result_stream(r):
    s = dpctl.SyclQueue(r.sycl_queue.sycl_context, r.sycl_queue.sycl_device, property="in_order")
    cap = r.__dlpack__(stream=s)
    del cap
    out = np.empty(r.shape, dtype=np.float64)
    dst = dpctl.memory.MemoryUSMHost(out.nbytes, queue=s)
    src = dpctl.memory.as_usm_memory(r)
    s.memcpy(dst, src, out.nbytes)
    return np.frombuffer(dst, dtype=np.float64).copy()


NEW = {
    "numpy.asarray": _np_asarray,
    "memoryview": _memoryview,
    "numpy.from_dlpack": _np_from_dlpack,
    "dpnp.from_dlpack": _dpnp_from_dlpack,
    "SUAI read by dpnp.asarray": _dpnp_asarray,
    "dpnp op": _dpnp_op_of_result,
    "__dlpack__(stream=q)": _result_stream,
}


@pytest.mark.parametrize("consumer", sorted(NEW))
@pytest.mark.parametrize("usm_type", ["shared", "device"])
def test_new_array_read_by(q, gate, consumer, usm_type):
    like = dpnp.zeros(N, dtype="f8", usm_type=usm_type, sycl_queue=q)
    r = extmod.gated_new(gate, like, 7.0)  # the gate is shut: it returns before the kernel runs
    extmod.open_gate(gate, OPEN_MS)
    np.testing.assert_array_equal(NEW[consumer](r), 7.0)


@pytest.mark.parametrize("consumer", ["numpy.asarray", "memoryview", "numpy.from_dlpack", "dpnp.from_dlpack",
                                      "SUAI read by dpnp.asarray"])
def test_new_array_read_without_the_gil(q, gate, consumer):
    """The Array's own readers wait for its kernel with the GIL released:
    here the gate is opened by a Python thread."""
    like = shared(q)
    r = extmod.gated_new(gate, like, 7.0)
    t = open_from_python(gate)
    np.testing.assert_array_equal(NEW[consumer](r), 7.0)
    t.join()
    assert r.sycl_queue == q  # (its __usm_ndarray__ reads the SUAI, which waits)


def test_tuple_of_new_arrays(q, gate):
    """A NoWait function of several results: the Arrays of the tuple carry
    their kernels' pending work, and the call holds its arguments for it."""
    like = shared(q)
    holds = extmod.launch_holds()
    a, b = extmod.gated_pair(gate, like, 7.0)
    assert extmod.launch_holds() == holds + 1, "the call holds its arguments for the tuple's kernels"
    extmod.open_gate(gate, OPEN_MS)
    np.testing.assert_array_equal(np.asarray(a), 7.0)
    np.testing.assert_array_equal(np.from_dlpack(b, device="cpu"), -7.0)


def test_new_array_dropped_before_the_kernel_ends(q, gate):
    """An Array nobody read, let go while its kernel waits: its memory
    goes once the kernel is done, not under it."""
    like = shared(q)
    r = extmod.gated_new(gate, like, 7.0)
    holds = extmod.launch_holds()
    del r
    assert extmod.launch_holds() == holds + 1, "the Array's memory is held for its kernel"
    extmod.open_gate(gate, OPEN_MS)
    extmod.settle_launches()
    q.wait()
    assert extmod.launch_holds() == 0


@pytest.mark.parametrize("keep_first", [False, True])
@pytest.mark.parametrize("reader", ["usm.CopyToSlice", "usm.View"])
def test_kept_view_waits_for_the_work(q, gate, keep_first, reader):
    """A view kept by the NoWait function, before or after it recorded the
    launch, carries the launch's pending work: Go's readers of it wait."""
    usm_type = "shared" if reader == "usm.View" else "device"  # View reads host-accessible memory in place
    y = dpnp.zeros(N, dtype="f8", usm_type=usm_type, sycl_queue=q)
    v = -7.0 if keep_first else 7.0  # gated_fill_keep keeps y before the launch for v < 0
    k = extmod.gated_fill_keep(gate, y, v)
    try:
        del y  # the kept view and the launch hold the memory
        extmod.open_gate(gate, OPEN_MS)
        read = extmod.kept_view if reader == "usm.View" else extmod.kept_read
        np.testing.assert_array_equal(read(k), v)
    finally:
        extmod.unhold(k)


def test_arguments_held_until_the_kernel_ends(q, gate):
    """Arguments the caller lets go at once stay alive until the kernel
    that writes them is done: their memory is not freed under it."""
    import gc
    import weakref
    y = dpt.zeros(N, dtype="f8", usm_type="device", sycl_queue=q)
    w = weakref.ref(y)
    extmod.gated_fill(gate, y, 7.0)
    del y
    gc.collect()
    assert w() is not None, "the argument went while its kernel waits"
    assert extmod.launch_holds() >= 1
    extmod.open_gate(gate)
    extmod.settle_launches()
    extmod.total(np.zeros(1))  # a call: its return drops what the keeper let go
    gc.collect()
    assert w() is None, "the argument outlived its kernel"


def test_kernel_per_layout(q):
    """extmod.scale_kernel builds its source once per layout (-DUNIT_STRIDE for a
    contiguous array), and waits for its kernel (no NoWait): a host read
    that waits for nothing sees the result right after the call."""
    y = shared(q, 8, 1.0)
    assert extmod.scale_kernel(y, 3.0) == "unit"
    np.testing.assert_array_equal(raw(y), 3.0)
    assert extmod.scale_kernel(y[::2], 2.0) == "strided"
    assert extmod.scale_kernel(y[::-3], -1.0) == "strided"
    assert extmod.scale_kernel(y[5:6], 10.0) == "unit"
    want = np.full(8, 3.0)
    want[::2] *= 2
    want[::-3] *= -1
    want[5] *= 10
    np.testing.assert_array_equal(raw(y), want)
