"""Errors speak Python: every exception usmbridge raises from Go says what
was wrong with the argument, and no message names a Go package or
function (RATIONALE.md, "Error messages: Go's text and Python's").

Each case provokes one error of one Go path (the provocations are those of
the other test files, gathered here so that every message is checked) and
asserts its class and that its message carries no Go name, wherever in a
chain of causes the name would sit."""
import ctypes
import re

import numpy as np
import pytest
import usmbridge as ub
from dlstructs import numpy_stream_error, versioned_of

# A Go name: a package of this module qualified by one of its identifiers
# (pybridge.FromDLPack, dlpack.Import, syclobj.capsuleSource), a package's
# label leading a message or a cause ("usm: ...", "syclobj: filter ..."),
# or what Go's fmt prints of a nil or a bad verb. dpctl is also the Python
# package: its classes (dpctl.SyclQueue) and modules are Python's names.
GO_PACKAGES = "pybridge|dlpack|usm|pyext|errkind|boundary|ffi|typestr|dtype|cpu|opencl|levelzero|syclobj|dlabi|pyapi"
GO_NAME = re.compile(
    r"\b(?:%s)\.\w"
    r"|\bdpctl\.(?!Sycl|memory|tensor|program|utils|_)\w"
    r"|(?:^|: |; )(?:%s|dpctl)(?: [a-z]+)?: "
    r"|<nil>|%%!" % (GO_PACKAGES, GO_PACKAGES))

# The SUAI keys a message about a malformed dict names first, as the user
# wrote them ("syclobj", "typestr" are keys as well as Go packages).
SUAI_FIELD = re.compile(r"^__sycl_usm_array_interface__ is malformed: [\w\[\]/]+: ")


def go_names(message):
    """The Go names in message (empty if it speaks Python only)."""
    return GO_NAME.findall(SUAI_FIELD.sub("", message))


@pytest.mark.parametrize("message,names", [
    ("pybridge.FromDLPack: the argument", ["pybridge.F"]),
    ("the tensor: dlpack.Import: data is NULL", ["dlpack.I"]),
    ("bad: usm: array touches bytes", [": usm: "]),
    ("usm layout: shape[0] is negative", ["usm layout: "]),
    ("syclobj: filter selector \"gpu\": no device matches", ["syclobj: "]),
    ("syclobj of type syclobj.capsuleSource", ["syclobj.c"]),
    ("dpctl.BindRef: not a USM pointer", ["dpctl.B"]),
    ("derived from dict('syclobj': <nil>)", ["<nil>"]),
    ("expected a dpctl.SyclQueue, got int", []),
    ("__sycl_usm_array_interface__ is malformed: syclobj: 'data' field is not consistent", []),
    ("__dlpack__: `copy` must be True, False or None", []),
    ("usmbridge.Array is read-only", []),
])
def test_the_check_finds_go_names(message, names):
    assert go_names(message) == names


def check(exc_type, fn):
    with pytest.raises(exc_type) as info:
        fn()
    message = str(info.value)
    assert message, "an empty message says nothing about the argument"
    assert go_names(message) == [], message
    cause = info.value.__cause__
    if cause is not None:  # a Python exception Go gave another meaning keeps its own text
        assert go_names(str(cause)) == [], str(cause)
    return message


# ---- host arrays (numpy): from_dlpack, __dlpack__, the buffer protocol ----

class Producer:
    """A host producer whose __dlpack__ and __dlpack_device__ are what a
    case makes them."""

    def __init__(self, dlpack=None, device=(1, 0), x=None):
        self.x = np.arange(8.0) if x is None else x
        self._dlpack, self._device = dlpack, device

    def __dlpack__(self, **kw):
        if self._dlpack is not None:
            return self._dlpack(self.x, kw)
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._device


def tampered(**fields):
    """numpy's capsule with DLTensor fields rewritten, as a buggy producer
    sends it."""
    def make(x, kw):
        cap = x.__dlpack__(**kw)
        t = versioned_of(cap).dl_tensor
        for k, v in fields.items():
            setattr(t, k, v)
        return cap
    return make


BFLOAT16 = 4 | 16 << 8 | 1 << 16  # DLDataType: code, bits, lanes


def read_only():
    x = np.arange(4.0)
    x.flags.writeable = False
    return ub.from_dlpack(x)


def consume_twice(cap):
    """from_dlpack of a producer that hands out the same capsule twice."""
    p = Producer(dlpack=lambda x, kw: cap)
    ub.from_dlpack(p)
    ub.from_dlpack(p)


def exchange_capsule_named(name):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    name = ctypes.create_string_buffer(name)
    _names.append(name)  # the capsule keeps the pointer
    return new(ub.Array.__c_dlpack_exchange_api__, ctypes.addressof(name), None)


_names = []


def with_table(value):
    base = np.arange(3.0)
    return type("P", (), {"__dlpack_c_exchange_api__": value,
                          "__dlpack__": lambda self, **kw: base.__dlpack__(**kw),
                          "__dlpack_device__": lambda self: (1, 0)})()


HOST = {
    # from_dlpack's argument
    "no __dlpack__": (AttributeError, lambda: ub.from_dlpack(object())),
    "__dlpack__ returns an int": (TypeError, lambda: ub.from_dlpack(Producer(dlpack=lambda x, kw: 3))),
    "__dlpack__ returns another capsule": (
        TypeError, lambda: ub.from_dlpack(Producer(dlpack=lambda x, kw: ub.Array.__dlpack_c_exchange_api__))),
    "a used capsule": (ValueError, lambda: consume_twice(np.arange(2.0).__dlpack__())),
    "data NULL": (BufferError, lambda: ub.from_dlpack(Producer(dlpack=tampered(data=None)))),
    "data beyond user space": (BufferError, lambda: ub.from_dlpack(Producer(dlpack=tampered(data=(1 << 56) - 8)))),
    "bytes wrap around": (BufferError, lambda: ub.from_dlpack(Producer(dlpack=tampered(data=(1 << 64) - 8)))),
    "tensor on kDLCUDA": (BufferError, lambda: ub.from_dlpack(Producer(dlpack=tampered(device_type=2)))),
    "tensor on kDLCUDA, Go's path": (
        BufferError, lambda: ub.from_dlpack(Producer(dlpack=tampered(device_type=2)), copy=False)),
    "device beyond 32 bits": (BufferError, lambda: ub.from_dlpack(np.arange(3.0), device=(14, 1 << 32))),
    "device kDLCUDA": (BufferError, lambda: ub.from_dlpack(ub.from_dlpack(np.arange(3.0)), device=(2, 0))),
    "device no SYCL device": (BufferError, lambda: ub.from_dlpack(np.arange(3.0), device=(14, 1 << 20))),
    "device malformed selector": (ValueError, lambda: ub.from_dlpack(np.arange(3.0), device="opencl:opencl")),
    "device of the wrong type": (TypeError, lambda: ub.from_dlpack(np.arange(3.0), device=2.5)),
    # the exchange API another producer offers
    "exchange capsule misnamed": (TypeError, lambda: ub.from_dlpack(with_table(exchange_capsule_named(b"other")))),
    "exchange neither capsule nor int": (TypeError, lambda: ub.from_dlpack(with_table("dlpack_exchange_api"))),
    "our table on a foreign object": (TypeError, lambda: ub.from_dlpack(with_table(
        ub.Array.__dlpack_c_exchange_api__))),
    # Array.__dlpack__'s keywords
    "read-only as a legacy capsule": (BufferError, lambda: read_only().__dlpack__()),
    "max_version not a pair": (TypeError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(max_version=1)),
    "max_version negative": (ValueError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(max_version=(-1, 0))),
    "dl_device not a pair": (TypeError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(
        max_version=(1, 0), dl_device=(1,))),
    "dl_device beyond 32 bits": (BufferError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(
        max_version=(1, 0), dl_device=(1, 1 << 32))),
    "dl_device kDLCUDA": (BufferError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(
        max_version=(1, 0), dl_device=(2, 0))),
    "copy not a bool": (ValueError, lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(copy="yes")),
    "stream on the host": (numpy_stream_error(), lambda: ub.from_dlpack(np.arange(3.0)).__dlpack__(stream=1)),
    # attributes and protocols of a host array
    "SUAI of host memory": (AttributeError, lambda: ub.from_dlpack(np.arange(3.0)).__sycl_usm_array_interface__),
    "sycl_queue of host memory": (AttributeError, lambda: ub.from_dlpack(np.arange(3.0)).sycl_queue),
    "buffer of a dtype without a format": (BufferError, lambda: memoryview(ub.from_dlpack(
        Producer(dlpack=tampered(dtype=BFLOAT16), x=np.zeros(3, np.uint16))))),
    # asarray's argument without dpctl's objects
    "asarray of an object": (ValueError, lambda: ub.asarray(object())),
    "asarray SUAI not a dict": (ValueError, lambda: ub.asarray(
        type("S", (), {"__sycl_usm_array_interface__": 5})())),
    # a function of the extension module
    "extension argument type": (TypeError, lambda: ub._inject_panic(5)),
}


@pytest.mark.parametrize("name", sorted(HOST))
def test_host_errors_speak_python(name):
    exc, fn = HOST[name]
    check(exc, fn)


def test_read_only_export_says_what_to_ask_for():
    m = check(BufferError, lambda: read_only().__dlpack__())
    assert "read-only" in m and "max_version" in m


# ---- USM (dpctl): asarray's dict, from_dlpack of USM, __dlpack__ of USM ----

class USM:
    """What the USM cases provoke errors with: a queue on opencl:cpu, 16
    float32 of shared USM in one allocation (x) and SUAI dicts over it,
    device USM, and an array on a sub-device (outside the platform's
    default context)."""

    def __init__(self):
        dpctl = pytest.importorskip("dpctl")
        dpt = pytest.importorskip("dpnp.tensor")
        self.q = q = dpctl.SyclQueue("opencl:cpu")
        self.x = dpt.arange(16, dtype="f4", sycl_queue=q, usm_type="shared")
        q.wait()
        self.dev = ub.asarray(dpctl.memory.MemoryUSMDevice(64, queue=q))
        d = q.sycl_device
        n = d.max_compute_units
        self.sub = dpctl.SyclQueue(d.create_sub_devices(partition=[n // 2, n - n // 2])[0])
        self.on_sub = dpt.arange(4, dtype="f4", sycl_queue=self.sub)

    def suai(self, **kw):
        """An object whose SUAI is a view of x, with kw changed."""
        d = {"data": (self.x.__sycl_usm_array_interface__["data"][0], False), "shape": (4,), "strides": None,
             "typestr": "<f4", "version": 1, "syclobj": self.q}
        d.update(kw)
        return type("S", (), {"__sycl_usm_array_interface__": property(lambda _: d)})()

    def used_queue_capsule(self):
        cap = self.q._get_capsule()
        type(self.q)(cap)  # dpctl renames the capsule it took
        return cap


@pytest.fixture(scope="module")
def usm():
    return USM()


class CapsuleSource:
    """A syclobj that is neither a queue nor a context: dpctl's duck type,
    whose _get_capsule is what a case makes it."""

    def __init__(self, get):
        self._get_capsule = get


USM_CASES = {
    # asarray's dict, field by field
    "shape negative": (ValueError, lambda u: ub.asarray(u.suai(shape=(-3,)))),
    "shape missing": (ValueError, lambda u: ub.asarray(u.suai(shape=None))),
    "shape beyond int64": (OverflowError, lambda u: ub.asarray(u.suai(shape=(1 << 63,)))),
    "shape not ints": (TypeError, lambda u: ub.asarray(u.suai(shape=("a",)))),
    "offset below int64": (OverflowError, lambda u: ub.asarray(u.suai(offset=-(1 << 64)))),
    "typestr invalid": (ValueError, lambda u: ub.asarray(u.suai(typestr="invalid"))),
    "typestr object": (ValueError, lambda u: ub.asarray(u.suai(typestr="|O8"))),
    "version 0": (ValueError, lambda u: ub.asarray(u.suai(version=0))),
    "data missing": (ValueError, lambda u: ub.asarray(u.suai(data=None))),
    "data not a pair": (TypeError, lambda u: ub.asarray(u.suai(data=5))),
    "strides of another length": (ValueError, lambda u: ub.asarray(u.suai(strides=(1, 1)))),
    "syclobj of the wrong type": (ValueError, lambda u: ub.asarray(u.suai(syclobj=[]))),
    "syclobj None": (ValueError, lambda u: ub.asarray(u.suai(syclobj=None))),
    "syclobj malformed selector": (ValueError, lambda u: ub.asarray(u.suai(syclobj="opencl:opencl"))),
    "syclobj _get_capsule returns an int": (ValueError, lambda u: ub.asarray(u.suai(syclobj=CapsuleSource(lambda: 5)))),
    "syclobj _get_capsule returns a used capsule": (
        ValueError, lambda u: ub.asarray(u.suai(syclobj=CapsuleSource(u.used_queue_capsule)))),
    # the pointer's binding and extent
    "pointer of another context": (ValueError, lambda u: ub.asarray(u.suai(syclobj=u.sub))),
    "pointer not USM": (ValueError, lambda u: ub.asarray(u.suai(data=(np.arange(4.0).ctypes.data, False)))),
    "window outside the allocation": (ValueError, lambda u: ub.asarray(u.suai(shape=(17,)))),
    "DLPack window outside the allocation": (BufferError, lambda u: ub.from_dlpack(
        Producer(dlpack=tampered(byte_offset=64), x=u.x, device=(14, 0)))),
    # from_dlpack onto a SYCL device
    "__dlpack_device__ beyond 32 bits": (
        TypeError, lambda u: ub.from_dlpack(Producer(device=(1, 1 << 40)), device=(14, 0))),
    "__dlpack_device__ not a pair": (TypeError, lambda u: ub.from_dlpack(Producer(device=(1,)), device=(14, 0))),
    "host memory onto a device without a copy": (
        BufferError, lambda u: ub.from_dlpack(np.arange(3.0), device=(14, 0), copy=False)),
    "device no such filter": (ValueError, lambda u: ub.from_dlpack(np.arange(3.0), device="level_zero:gpu:7")),
    # a USM array's protocols
    "buffer of device USM": (BufferError, lambda u: memoryview(u.dev)),
    "device USM to the host without a copy": (
        BufferError, lambda u: u.dev.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)),
    "stream not a queue": (TypeError, lambda u: u.dev.__dlpack__(stream="q")),
    "stream an int other than -1": (ValueError, lambda u: u.dev.__dlpack__(stream=3)),
    "stream onto the host": (ValueError, lambda u: u.dev.__dlpack__(stream=1, max_version=(1, 0), dl_device=(1, 0))),
    "export outside the default context": (BufferError, lambda u: ub.asarray(u.on_sub).__dlpack__(
        max_version=(1, 0))),
}


@pytest.mark.parametrize("name", sorted(USM_CASES))
def test_usm_errors_speak_python(usm, name):
    exc, fn = USM_CASES[name]
    check(exc, lambda: fn(usm))


# A caller's string of 100 kB is quoted at most 200 bytes of it at a time,
# as CPython's "%.200s" quotes (errkind.Quote): an unknown device string of
# 100 kB made a message of 200 kB.
BIG = 100_000
BOUNDED = {
    "device string": (ValueError, lambda u: ub.from_dlpack(np.arange(3.0), device="x" * BIG)),
    "device filters matching nothing": (ValueError, lambda u: ub.from_dlpack(
        np.arange(3.0), device=",".join(["level_zero:gpu:7"] * (BIG // 17)))),
    "typestr": (ValueError, lambda u: ub.asarray(u.suai(typestr="<f" + "9" * BIG))),
    "syclobj filter string": (ValueError, lambda u: ub.asarray(u.suai(syclobj="x" * BIG))),
    "class name": (AttributeError, lambda u: ub.from_dlpack(type("T" * BIG, (), {})())),
}


@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_quoted_strings_are_bounded(usm, name):
    exc, fn = BOUNDED[name]
    with pytest.raises(exc) as info:
        fn(usm)
    message = str(info.value)
    assert len(message) < 2000, "%d bytes: %.300s..." % (len(message), message)
    assert " bytes)" in message, message
    check(exc, lambda: fn(usm))


# ---- our DLPack exchange table, called as a C consumer calls it ----

def test_exchange_table_errors_speak_python():
    """Each function of the table refuses a bad argument with an exception
    (or, the allocator, through SetError); a child interpreter runs the
    calls, as test_exchange.py does, and prints each class and message."""
    code = """
    import ctypes, numpy as np, usmbridge as ub
    class Header(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p)]
    class API(ctypes.Structure):
        _fields_ = [("header", Header), ("allocator", ctypes.c_void_p), ("from_py", ctypes.c_void_p),
                    ("to_py", ctypes.c_void_p), ("dltensor_from_py", ctypes.c_void_p), ("stream", ctypes.c_void_p)]
    api = API.from_address(ub.Array.__c_dlpack_exchange_api__)
    P = ctypes.PYFUNCTYPE  # keeps the GIL and raises the exception left set
    from_py = P(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(api.from_py)
    to_py = P(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(api.to_py)
    stream = P(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(api.stream)
    def show(f, *a):
        try:
            f(*a)
            print("no error")
        except BaseException as e:
            print("%s\\t%s" % (type(e).__name__, e))
    out = ctypes.c_void_p(0)
    show(from_py, np.arange(3.0), ctypes.byref(out))
    show(from_py, ub.from_dlpack(np.arange(3.0)), None)
    show(to_py, None, ctypes.byref(out))
    x = np.arange(3.0); x.flags.writeable = False
    show(from_py, ub.from_dlpack(x), ctypes.byref(out))
    show(stream, 7, 0, ctypes.byref(out))
    SETERR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
    got = []
    seterr = SETERR(lambda ctx, kind, msg: got.append((kind.decode(), msg.decode())))
    alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, SETERR)(api.allocator)
    shape = (ctypes.c_int64 * 2)(2, 3)
    proto = (ctypes.c_char * 48)()
    ctypes.c_int32.from_buffer(proto, 8).value = 1     # kDLCPU
    ctypes.c_int32.from_buffer(proto, 16).value = 2    # ndim
    proto[20], proto[21], proto[22] = 99, 32, 1        # no such dtype code
    ctypes.c_void_p.from_buffer(proto, 24).value = ctypes.addressof(shape)
    m = ctypes.c_void_p(0)
    alloc(ctypes.addressof(proto), ctypes.byref(m), None, seterr)
    proto[20] = 2                                      # float32, on device 1 of kDLCPU
    ctypes.c_int32.from_buffer(proto, 12).value = 1
    alloc(ctypes.addressof(proto), ctypes.byref(m), None, seterr)
    ctypes.c_int32.from_buffer(proto, 16).value = -1   # a negative ndim
    alloc(ctypes.addressof(proto), ctypes.byref(m), None, seterr)
    for kind, msg in got:
        print("%s\\t%s" % (kind, msg))
    """
    import os
    import subprocess
    import sys
    import textwrap
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(here, ".."), here, env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    lines = [line.split("\t", 1) for line in p.stdout.strip().splitlines()]
    assert [kind for kind, _ in lines] == ["TypeError", "ValueError", "ValueError", "BufferError", "BufferError",
                                          "BufferError", "BufferError", "ValueError"], p.stdout
    for _, message in lines:
        assert message and go_names(message) == [], message
