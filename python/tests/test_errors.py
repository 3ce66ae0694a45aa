"""Exceptions propagate: a Python exception that crosses Go and comes back
to Python is the same object, with its class, message and traceback
(docs/python.md, "Errors")."""
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest
import usmbridge as ub


class MyBufferError(BufferError):
    pass


class Custom(Exception):
    pass


class Producer:
    """A DLPack producer whose __dlpack__ raises the exception it is given."""

    def __init__(self, exc, keywords=True):
        self.exc, self.keywords, self.calls = exc, keywords, 0

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kw):
        self.calls += 1
        raise self.exc


def frames(e):
    return [f.name for f in traceback.extract_tb(e.__traceback__)]


@pytest.mark.parametrize("exc", [MyBufferError("no export today"), Custom("mine"), BufferError("plain"),
                                 TypeError("bad keyword"), KeyError("k")],
                         ids=lambda e: type(e).__name__)
def test_producer_exception_is_the_same_object(exc):
    p = Producer(exc)
    with pytest.raises(type(exc)) as info:
        ub.from_dlpack(p)
    assert info.value is exc
    assert str(info.value) == str(exc), "no prefixed message"
    assert "__dlpack__" in frames(info.value), "the producer's frame is kept in the traceback"


def test_suai_property_exception_is_the_same_object():
    raised = Custom("no interface")

    class V:
        @property
        def __sycl_usm_array_interface__(self):
            raise raised

    with pytest.raises(Custom) as info:
        ub.asarray(V())
    assert info.value is raised
    assert "__sycl_usm_array_interface__" in frames(info.value)


def test_suai_property_exception_without_dpctl():
    # A numpy-only install (the package's own dependencies): the object's
    # exception comes back, not "cannot import dpctl". A fresh interpreter,
    # where import dpctl fails as it does without dpctl.
    code = textwrap.dedent("""
        import sys, traceback
        sys.modules["dpctl"] = None
        sys.path.insert(0, %r)
        import usmbridge as ub

        class Custom(Exception):
            pass

        raised = Custom("no interface")

        class V:
            @property
            def __sycl_usm_array_interface__(self):
                raise raised

        try:
            ub.asarray(V())
        except Custom as e:
            assert e is raised, repr(e)
            assert "__sycl_usm_array_interface__" in [f.name for f in traceback.extract_tb(e.__traceback__)]
        else:
            raise AssertionError("no exception")
        print("ok")
        """ % os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr


def test_type_error_retry_propagates_the_second_exception():
    # The array API consumer retries __dlpack__ without keywords after a
    # TypeError; what the retry raises is what the caller sees.
    second = MyBufferError("second call")

    class Old:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            raise second

    with pytest.raises(MyBufferError) as info:
        ub.from_dlpack(Old())
    assert info.value is second


def test_go_errors_keep_their_classes_and_messages():
    a = ub.from_dlpack(np.arange(3.0))
    with pytest.raises(TypeError) as info:
        a.__dlpack__(max_version=1)
    assert not str(info.value).startswith("TypeError:")
    with pytest.raises(AttributeError):
        a.__sycl_usm_array_interface__
    with pytest.raises(AttributeError):
        ub.from_dlpack(object())


class HostProducer:
    """A host producer (__dlpack_device__ is kDLCPU) whose __dlpack__ is
    whatever a case makes it."""

    def __dlpack_device__(self):
        return (1, 0)


def _raising_property(exc):
    def get(self):
        raise exc
    return property(get)


@pytest.mark.parametrize("dunder", [
    pytest.param(5, id="not callable"),
    pytest.param(None, id="None"),
    pytest.param(_raising_property(Custom("no method")), id="property raises"),
    pytest.param(lambda self, **kw: 3, id="returns an int"),
    pytest.param(lambda self, **kw: np.arange(2.0), id="returns an array"),
    pytest.param(lambda self, **kw: np.arange(2.0).__dlpack__().__class__, id="returns a type"),
])
def test_fast_path_and_go_agree(dunder):
    # from_dlpack(x) of a host producer makes its calls in C and enters Go
    # once; with copy=False Go makes every call itself. What the caller
    # sees must not depend on which did.
    cls = type("P", (HostProducer,), {"__dlpack__": dunder})
    seen = []
    for kw in [{}, {"copy": False}]:
        with pytest.raises(Exception) as info:
            ub.from_dlpack(cls(), **kw)
        seen.append((type(info.value), str(info.value)))
    assert seen[0] == seen[1]


def test_fast_path_without_dunder_dlpack():
    for kw in [{}, {"copy": False}]:
        with pytest.raises(AttributeError, match="__dlpack__"):
            ub.from_dlpack(HostProducer(), **kw)



class QueueRaises:
    """A kDLOneAPI producer (a dpnp.tensor array's protocol) whose
    sycl_queue property raises the exception it is given (AttributeError:
    a producer without a queue) and counts its reads; legacy: __dlpack__
    knows only the pre-2023.12 stream keyword."""

    def __init__(self, x, exc, legacy):
        self.x, self.exc, self.reads = x, exc, 0
        if legacy:
            self.__dlpack__ = lambda stream=None: x.__dlpack__()

    @property
    def sycl_queue(self):
        self.reads += 1
        raise self.exc

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.parametrize("legacy", [False, True], ids=["2023.12", "legacy"])
@pytest.mark.parametrize("kw", [{}, {"device": (14, 0)}, {"copy": False}], ids=["plain", "device", "copy=False"])
def test_producer_sycl_queue_exception_propagates(kw, legacy):
    # from_dlpack reads a SYCL producer's sycl_queue to choose the stream,
    # and to wait on it where no stream orders the producer (a legacy
    # producer ignores it); with device= and a producer that takes the
    # stream, dpctl's queue of the device is the stream and nothing is
    # read. Each read raises what the property raises, as itself: only
    # AttributeError means "no queue".
    dpt = pytest.importorskip("dpnp.tensor")
    pytest.importorskip("dpctl")
    x = dpt.arange(4, dtype="f8")
    reads_queue = legacy or "device" not in kw
    exc = Custom("queue boom")
    p = QueueRaises(x, exc, legacy)
    if reads_queue:
        with pytest.raises(Custom) as info:
            ub.from_dlpack(p, **kw)
        assert info.value is exc
    else:
        ub.from_dlpack(p, **kw)
    assert (p.reads > 0) == reads_queue
    a = ub.from_dlpack(QueueRaises(x, AttributeError("no queue"), legacy), **kw)
    assert dpt.asnumpy(dpt.from_dlpack(a)).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_stream_class_exception_propagates():
    # __dlpack__(stream=s) of a USM array asks isinstance(s, SyclQueue),
    # which reads s.__class__: what that raises is the caller's, as itself.
    dpt = pytest.importorskip("dpnp.tensor")
    pytest.importorskip("dpctl")
    a = ub.asarray(dpt.arange(4, dtype="f8"))
    exc = Custom("class boom")

    class Stream:
        @property
        def __class__(self):
            raise exc

    with pytest.raises(Custom) as info:
        a.__dlpack__(stream=Stream())
    assert info.value is exc
    with pytest.raises(TypeError):
        a.__dlpack__(stream="q")


def test_suai_type_lookup_exception_propagates():
    # A read-only SUAI is asked whether dpctl.memory made it (dpctl.memory
    # inverts the flag) by looking the attribute up on the object's type:
    # what a metaclass raises there is the caller's, as itself.
    dpt = pytest.importorskip("dpnp.tensor")
    pytest.importorskip("dpctl")
    x = dpt.arange(4, dtype="f8")
    exc = Custom("type lookup boom")

    class Meta(type):
        def __getattribute__(cls, name):
            if name == "__sycl_usm_array_interface__":
                raise exc
            return super().__getattribute__(name)

    class Holder(metaclass=Meta):
        pass

    o = Holder()
    d = x.__sycl_usm_array_interface__
    o.__sycl_usm_array_interface__ = dict(d, data=(d["data"][0], True))
    with pytest.raises(Custom) as info:
        ub.asarray(o)
    assert info.value is exc
