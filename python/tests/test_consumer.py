"""usmbridge as a DLPack consumer and as a describer of memory it does not
own (docs/python.md, "from_dlpack"; RATIONALE.md, "A consumer for pre-2023.12
producers")."""
import numpy as np
import pytest
import usmbridge as ub

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")


@pytest.fixture(scope="module")
def q():
    return dpctl.SyclQueue("opencl:cpu")


class Legacy:
    """A producer that knows only the pre-2023.12 __dlpack__(stream=None)."""

    def __init__(self, a):
        self.a, self.calls = a, []

    def __dlpack__(self, stream=None):
        self.calls.append(stream)
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_legacy_producer_copy_true_is_a_copy():
    h = np.arange(4.0)
    a = ub.from_dlpack(Legacy(h), copy=True)
    h[:] = -1
    assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("kw", [dict(copy=False), dict(device=(1, 0)), dict(device=(1, 0), copy=False), {}])
def test_legacy_producer_zero_copy_where_it_can(kw):
    h = np.arange(4.0)
    a = ub.from_dlpack(Legacy(h), **kw)
    assert a.data == h.ctypes.data and a.device == (1, 0)


def test_legacy_producer_device_to_host(q):
    x = dpt.arange(4, dtype="f8", sycl_queue=q, usm_type="device")
    # Legacy has no sycl_queue for from_dlpack to wait on, and dpnp's
    # __dlpack__() does not wait: ordering against the producer's queue is
    # the stream protocol's business (issue 11, queue ordering).
    q.wait()
    p = Legacy(x)
    a = ub.from_dlpack(p, device=(1, 0))
    assert a.device == (1, 0) and np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(BufferError):
        ub.from_dlpack(p, device=(1, 0), copy=False)
    c = ub.from_dlpack(p, copy=True)
    assert c.device == x.__dlpack_device__() and c.data != x.__sycl_usm_array_interface__["data"][0]
    assert dpt.asnumpy(dpt.asarray(c)).tolist() == [0.0, 1.0, 2.0, 3.0]
    # The retries reach it with stream=None for the host (the standard
    # asks for None with kDLCPU), and with the queue the import lands on
    # for a kDLOneAPI result (dpctl's convention; this producer ignores it).
    assert p.calls[:2] == [None, None] and type(p.calls[2]) is dpctl.SyclQueue, p.calls


def test_keywords_reach_the_producer_in_one_order():
    # A producer's TypeError names the first keyword it did not expect:
    # the same one on every call.
    class Recorder:
        seen = []

        def __dlpack__(self, **kw):
            self.seen.append(list(kw))
            raise TypeError("unexpected keyword argument %r" % next(iter(kw), None))

        def __dlpack_device__(self):
            return (1, 0)

    for _ in range(10):
        with pytest.raises(TypeError):
            ub.from_dlpack(Recorder(), copy=True, device=(1, 0))
    assert Recorder.seen == [["copy", "dl_device", "max_version"], []] * 10


@pytest.fixture(scope="module")
def sub_q():
    """A queue on a sub-device of the CPU: its own context, not the platform's default."""
    sub = dpctl.SyclDevice("opencl:cpu").create_sub_devices(partition=1)[0]
    q = dpctl.SyclQueue(sub)
    assert q.sycl_context != dpctl.SyclQueue("opencl:cpu").sycl_context
    return q


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
def test_sub_device_context_host_copy(sub_q, usm_type):
    x = dpt.reshape(dpt.arange(6, dtype="f4", sycl_queue=sub_q, usm_type=usm_type), (2, 3))[:, ::-1]
    a = ub.asarray(x)
    cap = a.__dlpack__(dl_device=(1, 0), max_version=(1, 0))
    assert np.from_dlpack(Capsule(cap, (1, 0))).tolist() == dpt.asnumpy(x).tolist()
    with pytest.raises(BufferError):
        a.__dlpack__(max_version=(1, 0))  # as kDLOneAPI: no consumer could find the context
    if usm_type == "device":
        with pytest.raises(BufferError):
            a.__dlpack__(dl_device=(1, 0), max_version=(1, 0), copy=False)


class Capsule:
    def __init__(self, cap, dev):
        self.cap, self.dev = cap, dev

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return self.dev


def test_usm_type_of_host_memory_is_none(q, sub_q):
    h = ub.from_dlpack(np.arange(3.0))
    assert h.usm_type is None and "usm_type" not in repr(h)  # host memory: no USM kind shown
    with pytest.raises(AttributeError, match=r"not USM \(it lives on \(kDLCPU, 0\)\); exchange it through DLPack"):
        h.__sycl_usm_array_interface__  # the same refusal as usm.Array.SUAI in Go
    x = dpt.arange(3, dtype="f8", sycl_queue=sub_q, usm_type="device")
    assert ub.from_dlpack(ub.asarray(x), device=(1, 0)).usm_type is None  # a host copy
    for kind in ("device", "shared", "host"):
        assert ub.asarray(dpt.ones(2, sycl_queue=q, usm_type=kind)).usm_type == kind


def test_host_producer_onto_a_sycl_device(q):
    # usmbridge copies host memory onto the device itself: it asks the
    # producer for its device first, and what that call raises is the
    # caller's to see.
    dev = dpt.empty(0, sycl_queue=q).__dlpack_device__()
    p = Legacy(np.arange(4.0))
    a = ub.from_dlpack(p, device=dev)
    assert a.device == dev and a.usm_type == "device" and p.calls == [None]
    assert dpt.asnumpy(dpt.from_dlpack(a)).tolist() == [0.0, 1.0, 2.0, 3.0]

    class Boom(Exception):
        pass

    class BadDevice(Legacy):
        def __init__(self, a, dev):
            super().__init__(a)
            self.dev = dev

        def __dlpack_device__(self):
            if isinstance(self.dev, Exception):
                raise self.dev
            return self.dev

    err = Boom("no device for you")
    with pytest.raises(Boom) as info:
        ub.from_dlpack(BadDevice(np.arange(4.0), err), device=dev)
    assert info.value is err
    for bad in [None, (1,), "cpu", (1, 2 ** 40)]:
        with pytest.raises(TypeError):
            ub.from_dlpack(BadDevice(np.arange(4.0), bad), device=dev)
    with pytest.raises(BufferError):
        ub.from_dlpack(np.arange(4.0), device=(14, 2 ** 20))  # no such SYCL device
class Recorder:
    """A producer that records the keywords of each __dlpack__ call and
    hands over a, or raises exc."""

    def __init__(self, a, exc=None):
        self.a, self.exc, self.calls = a, exc, []

    def __dlpack__(self, **kw):
        self.calls.append(sorted(kw))
        if self.exc is not None and len(self.calls) == 1:
            raise self.exc
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def _view(a):
    return (a.shape, a.strides, a.dtype, a.offset, a.data, a.readonly, a.usm_type, a.device, a.__dlpack_device__())


def _host_arrays():
    base = np.arange(2 * 3 * 4, dtype="f4").reshape(2, 3, 4)
    ro = np.arange(5, dtype="i8")
    ro.flags.writeable = False
    return {
        "contiguous": base,
        "strided": base[:, ::2, 1:],
        "negative": base[::-1, :, ::-2],
        "0-d": np.array(7, dtype="u2"),
        "empty": np.empty((0, 3), dtype="c8"),
        "read-only": ro,
        "bool": np.array([True, False]),
    }


@pytest.mark.parametrize("name", sorted(_host_arrays()))
def test_from_dlpack_fast_path_agrees_with_go(name):
    # from_dlpack(x) is served by ext.c's fast path; with device=(1, 0) the
    # same import goes through Go's FromDLPack all the way (pybridge/ext).
    x = _host_arrays()[name]
    fast, slow = ub.from_dlpack(x), ub.from_dlpack(x, device=(1, 0))
    assert _view(fast) == _view(slow)
    assert np.from_dlpack(fast).tolist() == x.tolist()


@pytest.mark.parametrize("make", [
    lambda: object(),
    lambda: type("NoDevice", (), {"__dlpack__": lambda self, **kw: None})(),
    lambda: type("NotCallable", (), {"__dlpack__": 1, "__dlpack_device__": lambda self: (1, 0)})(),
    lambda: Recorder(np.arange(3.0), ValueError("producer refuses")),
    lambda: type("NotACapsule", (), {"__dlpack__": lambda self, **kw: 1, "__dlpack_device__": lambda self: (1, 0)})(),
])
def test_from_dlpack_fast_path_errors_agree_with_go(make):
    errs = []
    for kw in ({}, {"copy": None, "device": (1, 0)}):
        with pytest.raises(Exception) as e:
            ub.from_dlpack(make(), **kw)
        errs.append((type(e.value), str(e.value)))
    assert errs[0] == errs[1]


def test_from_dlpack_fast_path_retries_legacy_producers_as_go_does():
    calls = []
    for kw in ({}, {"device": (1, 0)}):
        r = Recorder(np.arange(3.0), TypeError("unexpected keyword"))
        assert np.from_dlpack(ub.from_dlpack(r, **kw)).tolist() == [0.0, 1.0, 2.0]
        calls.append(r.calls)
    assert calls[0] == [["max_version"], []]
    assert calls[1] == [["dl_device", "max_version"], []]


def test_from_dlpack_fast_path_consumes_the_capsule_once():
    caps = []

    class Keep:
        def __dlpack__(self, **kw):
            caps.append(np.arange(2.0).__dlpack__(**kw))
            return caps[-1]

        def __dlpack_device__(self):
            return (1, 0)

    ub.from_dlpack(Keep())
    with pytest.raises(ValueError, match="consumed multiple times"):
        ub.from_dlpack(type("Again", (), {"__dlpack__": lambda self, **kw: caps[0],
                                          "__dlpack_device__": lambda self: (1, 0)})())
