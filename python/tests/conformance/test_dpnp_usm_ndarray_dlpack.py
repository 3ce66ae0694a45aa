"""dpnp's dpnp/tests/tensor/test_usm_ndarray_dlpack.py (dpnp 0.20.0), re-expressed against usmbridge.

There the peer object is dpnp.tensor.usm_ndarray, a DLPack producer of
kDLOneAPI tensors and (dpt.from_dlpack, _dlpack.from_dlpack_capsule) a
consumer. Here usmbridge takes both roles: usmbridge.from_dlpack consumes
usm_ndarrays, NumPy arrays and capsules, and usmbridge.Array's
``__dlpack__``/``__dlpack_device__`` produce what dpnp's consumers (and
NumPy's) take back. Every import is checked against the peer's own view of
the memory (pointer, layout, device, USM kind), every export by the peer
consuming it.

Our test                                     re-expresses (dpnp test)
-------------------------------------------  ----------------------------------------------
test_dlpack_device                           test_dlpack_device
test_dlpack_exporter                         test_dlpack_exporter
test_dlpack_exporter_empty                   test_dlpack_exporter_empty
test_dlpack_exporter_stream                  test_dlpack_exporter_stream
test_from_dlpack                             test_from_dlpack
test_from_dlpack_strides                     test_from_dlpack_strides
test_from_dlpack_input_validation            test_from_dlpack_input_validation (see below)
test_fortran_contig_roundtripping            test_from_dlpack_fortran_contig_array_roundtripping
test_dlpack_from_subdevice                   test_dlpack_from_subdevice (see below)
test_legacy_dlpack_capsule                   test_legacy_dlpack_capsule
test_versioned_dlpack_capsule                test_versioned_dlpack_capsule
test_from_dlpack_kwargs                      test_from_dlpack_kwargs
test_dlpack_deleters                         test_dlpack_deleters
test_from_dlpack_device                      test_from_dlpack_device (see below)
test_used_dlpack_capsule                     test_used_dlpack_capsule
test_dlpack_size_0                           test_dlpack_size_0
test_dlpack_max_version_validation           test_dlpack_max_version_validation
test_dlpack_kwargs                           test_dlpack_kwargs (see below)
test_dlpack_dl_device                        test_dlpack_dl_device (see below)
test_from_dlpack_kdlcpu_interop_numpy        test_from_dlpack_kdlcpu_interop_numpy
test_from_dlpack_to_kdlcpu                   test_from_dlpack_to_kdlcpu
test_from_dlpack_to_kdlcpu_strides           test_from_dlpack_to_kdlcpu_strides
test_dlpack_from_subdevice_to_kdlcpu         test_dlpack_from_subdevice_to_kdlcpu
test_legacy_dlpack_capsule_from_numpy        test_legacy_dlpack_capsule_from_numpy
test_readonly_array_to_kdlcpu                test_dlpack_capsule_readonly_array_to_kdlcpu
test_to_dlpack_capsule_c_and_f_contig        test_to_dlpack_capsule_c_and_f_contig
test_to_dlpack_versioned_c_and_f_contig      test_to_dlpack_versioned_capsule_c_and_f_contig
test_used_dlpack_capsule_from_numpy          test_used_dlpack_capsule_from_numpy
test_dlpack_size_0_on_kdlcpu                 test_dlpack_size_0_on_kdlcpu
test_copy_via_host                           test_copy_via_host (see below)
test_copy_via_host_to_device                 test_copy_via_host (host to USM)
test_copy_via_host_gh_1789                   test_copy_via_host_gh_1789
test_generic_container[LegacyContainer-*]    test_generic_container_legacy
test_generic_container_legacy_np             test_generic_container_legacy_np
test_generic_container_legacy_np_to_device   test_generic_container_legacy_np (host to USM)
test_generic_container[Container-*]          test_generic_container
test_peer_aborts_without_usm_aspects         (shows why root_devices leaves devices out)

Not applicable, with the reason:
- test_sycl_device_to_dldevice, test_dldevice_to_sycl_device,
  test_dldevice_conversion_arg_validation: dpnp.tensor's helper functions
  between dpctl.SyclDevice and DLPack device tuples; usmbridge has no
  SyclDevice type of its own. What they check, that a root device's DLPack
  id is its dpctl device id, is part of test_dlpack_device.
- get_build_dlpack_version (in test_from_dlpack_input_validation): a dpnp
  helper; usmbridge's version shows as the version its versioned capsules
  carry, which dpnp and numpy accept (test_versioned_dlpack_capsule).
- numpy_to_dlpack_versioned_capsule (in
  test_dlpack_capsule_readonly_array_to_kdlcpu): a dpnp internal; the
  read-only round trip is made with usmbridge as the producer instead.

Where we re-express rather than repeat, and what we decided:
- The peer's all_root_devices takes every root device; on this machine's
  PoCL CPU device (no USM aspects) dpctl aborts the process allocating host
  USM, so the peer's own file dies there. Ours takes the root devices with
  the USM aspects (peerkit.usm_root_devices).
- test_dlpack_from_subdevice(_to_kdlcpu): the peer skips here, since Intel's
  CPU OpenCL cannot make a queue for a sub-device in the platform's default
  context. Ours uses a sub-device queue in its own context: usmbridge views
  the memory through SUAI, refuses it as kDLOneAPI (a consumer would find
  the wrong context), makes the kDLCPU host copy, and passes on dpnp's own
  refusal of the kDLOneAPI export as the very exception dpnp raised.
- test_from_dlpack_input_validation: dpnp raises TypeError for an object
  without __dlpack__/__dlpack_device__; the array API asks for
  AttributeError, which usmbridge raises. An object that has both but whose
  __dlpack__ returns something that is not a DLPack capsule is a TypeError,
  as in dpnp.
- device= takes DLPack device tuples (usmbridge's device objects, what
  Array.device returns), not dpctl.SyclDevice or dpnp's Device. A value of
  another type is a TypeError (dpnp: ValueError for a tuple of the wrong
  length), a device type neither side handles is the producer's BufferError
  (dpnp: ValueError), as the array API's table for from_dlpack gives it.
- dl_device=("kDLCPU", 0): dpnp accepts the enum's name; usmbridge takes
  the integers the array API specifies and refuses the name with TypeError.
- test_versioned_dlpack_capsule: a copy (copy=True, or the kDLCPU host
  copy) of a read-only array is flagged read-only, as dpnp flags it (NumPy's
  copies are writable); the copy usmbridge makes of host memory for a SYCL
  device keeps the flag too.
- test_dlpack_kwargs: dpnp ignores copy=True when it returns a legacy
  capsule; usmbridge honours it (copy=True always copies).
- test_copy_via_host, test_generic_container_legacy_np: a host (NumPy)
  array with device=(kDLOneAPI, id) is copied to device USM, as dpnp does.
  usmbridge asks the producer for the data where it is (a host producer
  cannot make that move) and copies it itself; copy=False is BufferError.
  The device-side parts are test_copy_via_host_to_device and
  test_generic_container_legacy_np_to_device.
- dpnp's own dpt.asarray cannot take a SUAI with negative strides (its
  usm_ndarray "can not accommodate the requested array", dpnp's own dicts
  included), so layouts with negative strides go back to dpnp through
  dpt.from_dlpack here.
"""
import ctypes
import gc
import signal
import subprocess
import sys

import numpy as np
import pytest

import usmbridge as ub
from peerkit import Capsule, host_values, usm_root_devices

dpctl = pytest.importorskip("dpctl")
dpt = pytest.importorskip("dpnp.tensor")
_dlp = pytest.importorskip("dpnp.tensor._dlpack")

KDLCPU, KDLONEAPI = 1, 14
USM_TYPES = ["shared", "device", "host"]
TYPESTRS = ["b1", "u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f2", "f4", "f8", "c8", "c16"]
LEGACY, VERSIONED = (0, 8), (1, 0)


@pytest.fixture(params=USM_TYPES)
def usm_type(request):
    return request.param


@pytest.fixture(params=TYPESTRS)
def typestr(request):
    return request.param


def capsule_name(cap):
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    for name in (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned"):
        if is_valid(cap, name):
            return name.decode()
    return None


def same_values(a, ref):
    """a (a usmbridge.Array) holds what the dpnp array ref holds."""
    return np.array_equal(host_values(a), dpt.asnumpy(ref))


def test_dlpack_device(usm_type, root_devices):
    for dev in root_devices:
        a = ub.asarray(dpt.empty((64,), dtype="u1", usm_type=usm_type, device=dev))
        d = a.__dlpack_device__()
        assert type(d) is tuple and len(d) == 2 and all(type(v) is int for v in d)
        assert d == (KDLONEAPI, dev.get_device_id()) == a.device


def test_dlpack_exporter(typestr, usm_type, root_devices):
    for dev in root_devices:
        x = dpt.empty((64,), dtype=typestr, usm_type=usm_type, device=dev)
        assert capsule_name(ub.asarray(x).__dlpack__()) == "dltensor"
        assert capsule_name(ub.asarray(x[::2]).__dlpack__()) == "dltensor"
        assert capsule_name(ub.asarray(x[::2]).__dlpack__(max_version=VERSIONED)) == "dltensor_versioned"


def test_dlpack_exporter_empty(typestr, usm_type):
    dev = dpctl.select_default_device()
    for shape in [(0,), (1, 0)]:
        a = ub.asarray(dpt.empty(shape, dtype=typestr, usm_type=usm_type, device=dev))
        assert capsule_name(a.__dlpack__()) == "dltensor"
        assert dpt.from_dlpack(a).shape == shape


def test_dlpack_exporter_stream():
    q1, q2 = dpctl.SyclQueue(), dpctl.SyclQueue()
    a = ub.asarray(dpt.empty((64,), dtype="u1", sycl_queue=q1))
    c1 = a.__dlpack__(stream=q1)
    c2 = a.__dlpack__(stream=q2)
    assert type(c1) is type(c2) and capsule_name(c1) == capsule_name(c2) == "dltensor"


def check_import(x, a):
    """a = usmbridge.from_dlpack(x) describes x's memory exactly."""
    assert a.shape == x.shape
    assert np.dtype(a.dtype) == np.dtype(x.dtype)
    assert a.usm_type == x.usm_type
    assert a.data == x._pointer
    # the kind of memory decides which device it belongs to (host USM
    # belongs to the context): usmbridge names the same device as dpnp
    assert a.device == x.__dlpack_device__()
    back = dpt.from_dlpack(a)
    assert back._pointer == x._pointer and back.usm_type == x.usm_type
    assert back.usm_type == "host" or back.sycl_device == x.sycl_device
    if x.ndim:
        v = dpt.from_dlpack(a)[::-1]
        w = ub.from_dlpack(v)
        assert w.shape == v.shape and w.data == v._pointer
        assert w.strides == tuple(v.strides) or (w.strides is None and v.flags.c_contiguous)


@pytest.mark.parametrize("shape", [(), (2,), (3, 0, 1), (2, 2, 2)])
def test_from_dlpack(shape, typestr, usm_type, root_devices):
    for dev in root_devices:
        x = dpt.empty(shape, dtype=typestr, usm_type=usm_type, device=dev)
        check_import(x, ub.from_dlpack(x))


@pytest.mark.parametrize("mod", [2, 5])
def test_from_dlpack_strides(mod, typestr, usm_type, root_devices):
    for dev in root_devices:
        x0 = dpt.empty(3 * mod, dtype=typestr, usm_type=usm_type, device=dev)
        for start in range(mod):
            x = x0[slice(-start - 1, None, -mod)]
            a = ub.from_dlpack(x)
            check_import(x, a)
            assert a.strides == x.strides


def test_from_dlpack_input_validation():
    with pytest.raises(AttributeError):
        ub.from_dlpack(None)

    class PropertyOnly:
        @property
        def __dlpack__(self):
            return None

    with pytest.raises(AttributeError):
        ub.from_dlpack(PropertyOnly())

    class MethodOnly:
        def __dlpack__(self):
            return None

    with pytest.raises(AttributeError):
        ub.from_dlpack(MethodOnly())

    class ReturnsNone(MethodOnly):
        def __dlpack__(self, **kw):
            return None

        def __dlpack_device__(self):
            return (KDLCPU, 0)

    with pytest.raises(TypeError):
        ub.from_dlpack(ReturnsNone())


def test_fortran_contig_roundtripping():
    c = dpt.reshape(dpt.arange(15, dtype="i4"), (3, 5), order="C")
    f = dpt.asarray(c, order="F")
    a = ub.from_dlpack(f)
    assert a.strides == (1, 3)
    r = dpt.from_dlpack(a)
    assert bool(dpt.all(dpt.equal(f, r))) and bool(dpt.all(dpt.equal(c, r)))
    assert host_values(a).tolist() == dpt.asnumpy(c).tolist()


def test_dlpack_from_subdevice(sub_queues):
    q = sub_queues[0]
    x = dpt.arange(64, dtype=dpt.int32, sycl_queue=q)
    a = ub.asarray(x)
    assert dpt.asarray(a).sycl_device == q.sycl_device
    with pytest.raises(BufferError):
        a.__dlpack__(max_version=VERSIONED)  # no consumer could find its context
    raised = []

    class Watch:
        def __dlpack__(self, **kw):
            try:
                return x.__dlpack__(**kw)
            except Exception as e:
                raised.append(e)
                raise

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    with pytest.raises(Exception) as info:
        ub.from_dlpack(Watch())
    assert raised and info.value is raised[-1]


def test_legacy_dlpack_capsule():
    cases = [dpt.arange(100, dtype="i4"),
             dpt.reshape(dpt.arange(100, dtype="u4"), (10, 10)).mT,
             dpt.asarray(dpt.reshape(dpt.arange(100, dtype="f4"), (10, 10)), order="F"),
             dpt.arange(100, dtype="c8")[::-2],
             dpt.ones(100, dtype="?")[::-2]]
    for x in cases:
        # dpnp as producer, usmbridge as consumer
        cap = x.__dlpack__(max_version=LEGACY)
        assert capsule_name(cap) == "dltensor"
        a = ub.from_dlpack(Capsule(cap, x.__dlpack_device__()))
        assert a.data == x._pointer and a.shape == x.shape
        assert capsule_name(cap) == "used_dltensor"
        del cap
        # usmbridge as producer, dpnp as consumer
        cap = ub.asarray(x).__dlpack__(max_version=LEGACY)
        assert capsule_name(cap) == "dltensor"
        y = _dlp.from_dlpack_capsule(cap)
        del cap
        assert y._pointer == x._pointer and y.strides == x.strides
        assert np.array_equal(dpt.asnumpy(y), dpt.asnumpy(x))


def test_versioned_dlpack_capsule():
    x = dpt.arange(100, dtype="i4")
    for v in (x, dpt.asarray(dpt.reshape(x, (10, 10)), order="F"), x[::-2]):
        cap = ub.asarray(v).__dlpack__(max_version=VERSIONED)
        assert capsule_name(cap) == "dltensor_versioned"
        y = _dlp.from_dlpack_capsule(cap)
        del cap
        assert y._pointer == v._pointer and y.strides == v.strides
        a = ub.from_dlpack(Capsule(v.__dlpack__(max_version=VERSIONED), v.__dlpack_device__()))
        assert a.data == v._pointer
    ro = dpt.arange(100, dtype="i4")
    ro.flags["W"] = False
    a = ub.asarray(ro)
    assert a.readonly and ub.from_dlpack(ro).readonly
    y = _dlp.from_dlpack_capsule(a.__dlpack__(max_version=VERSIONED))
    assert y._pointer == ro._pointer and not y.flags.writable
    # a copy of read-only memory stays read-only, as dpnp's does
    y = _dlp.from_dlpack_capsule(a.__dlpack__(max_version=VERSIONED, copy=True))
    assert y._pointer != ro._pointer and not y.flags.writable
    c = ub.from_dlpack(ro, copy=True)
    assert c.data != ro._pointer and c.readonly  # a versioned producer said read-only


def test_from_dlpack_kwargs():
    x = dpt.arange(100, dtype="i4")
    a = ub.from_dlpack(x, copy=True)
    assert a.data != x._pointer and same_values(a, x)
    assert ub.from_dlpack(x, device=x.__dlpack_device__()).data == x._pointer
    # and dpnp consuming usmbridge's export
    b = ub.asarray(x)
    assert dpt.from_dlpack(b, copy=True)._pointer != x._pointer
    assert dpt.from_dlpack(b, device=x.sycl_device)._pointer == x._pointer


def test_dlpack_deleters():
    x = dpt.arange(100, dtype="i4")
    a = ub.asarray(x)
    gc.collect()
    before = ub._stats()

    def exports(s):
        # one count for Go's exports and those ext.c makes from Go's
        # template (a plain export of an array on a dpctl queue is C's)
        return s["live_exports"]

    for mv in (LEGACY, VERSIONED):
        cap = a.__dlpack__(max_version=mv)
        assert exports(ub._stats()) == exports(before) + 1
        del cap  # never consumed: the capsule's destructor runs the deleter
        assert exports(ub._stats()) == exports(before)
    # and tensors usmbridge imported go when their Array goes
    for mv in (LEGACY, VERSIONED):
        t = ub.from_dlpack(Capsule(x.__dlpack__(max_version=mv), x.__dlpack_device__()))
        assert ub._stats()["live_imports"] == before["live_imports"] + 1
        del t
        assert ub._stats()["live_imports"] == before["live_imports"]
    assert ub._stats()["stray_deletes"] == before["stray_deletes"]


def test_from_dlpack_device():
    x = dpt.arange(100, dtype="i4")
    for dev in (x.__dlpack_device__(), ub.asarray(x).device):
        out = ub.from_dlpack(x, device=dev)
        assert out.device == x.__dlpack_device__() and out.data == x._pointer
    b = ub.asarray(x)
    for dev in (b.__dlpack_device__(), x.device, x.sycl_device):
        out = dpt.from_dlpack(b, device=dev)
        assert out.device == x.device and out._pointer == x._pointer


def test_used_dlpack_capsule():
    x = dpt.arange(100, dtype="i4")
    for mv in (LEGACY, VERSIONED):
        h = Capsule(x.__dlpack__(max_version=mv), x.__dlpack_device__())
        ub.from_dlpack(h)
        with pytest.raises(ValueError, match="A DLPack tensor object can not be consumed multiple times"):
            ub.from_dlpack(h)
        cap = ub.asarray(x).__dlpack__(max_version=mv)
        _dlp.from_dlpack_capsule(cap)
        with pytest.raises(ValueError, match="can not be consumed multiple times"):
            _dlp.from_dlpack_capsule(cap)


def test_dlpack_size_0():
    x = dpt.ones(0, dtype="i4")
    for mv in (LEGACY, VERSIONED):
        a = ub.from_dlpack(Capsule(x.__dlpack__(max_version=mv), x.__dlpack_device__()))
        assert a.data == x._pointer and a.shape == (0,)
        y = _dlp.from_dlpack_capsule(ub.asarray(x).__dlpack__(max_version=mv))
        assert y._pointer == x._pointer and y.shape == (0,)


def test_dlpack_max_version_validation():
    a = ub.asarray(dpt.ones(100, dtype="i4"))
    with pytest.raises(TypeError, match=r"`__dlpack__` expects `max_version` to be a "
                                        r"2-tuple of integers `\(major, minor\)`, instead got .*"):
        a.__dlpack__(max_version=1)


def test_dlpack_kwargs():
    q1, q2 = dpctl.SyclQueue(), dpctl.SyclQueue()
    x = dpt.arange(100, dtype="i4", sycl_queue=q1)
    a = ub.asarray(x)
    cap = a.__dlpack__(stream=q2, max_version=LEGACY, copy=True)
    y = _dlp.from_dlpack_capsule(cap)
    assert y._pointer != x._pointer and np.array_equal(dpt.asnumpy(y), dpt.asnumpy(x))  # usmbridge honours copy
    y = _dlp.from_dlpack_capsule(a.__dlpack__(stream=q2, max_version=VERSIONED, copy=False))
    assert y._pointer == x._pointer
    y = _dlp.from_dlpack_capsule(a.__dlpack__(stream=q2, max_version=VERSIONED, copy=True))
    assert y._pointer != x._pointer and np.array_equal(dpt.asnumpy(y), dpt.asnumpy(x))
    # the consumer side: usmbridge reads a dpnp export made for a stream
    t = ub.from_dlpack(Capsule(x.__dlpack__(stream=q2, max_version=VERSIONED, copy=True), x.__dlpack_device__()))
    assert t.data != x._pointer and same_values(t, x)


def _is_capsule(o):
    return type(o).__module__ == "builtins" and type(o).__name__ == "PyCapsule"


def test_dlpack_dl_device():
    x = dpt.arange(100, dtype="i4")
    a = ub.asarray(x)
    assert _is_capsule(a.__dlpack__(dl_device=a.__dlpack_device__(), max_version=VERSIONED))
    for cpu in ((1, 0), (dpt.DLDeviceType.kDLCPU, 0)):
        cap = a.__dlpack__(dl_device=cpu, max_version=VERSIONED)
        assert _is_capsule(cap)
        assert np.from_dlpack(Capsule(cap, (KDLCPU, 0))).tolist() == list(range(100))
    with pytest.raises(TypeError):
        a.__dlpack__(dl_device=("kDLCPU", 0), max_version=VERSIONED)
    with pytest.raises(TypeError):
        a.__dlpack__(dl_device=a.__dlpack_device__, max_version=VERSIONED)
    with pytest.raises(TypeError):
        a.__dlpack__(dl_device=(3,), max_version=VERSIONED)


def test_from_dlpack_kdlcpu_interop_numpy():
    x = dpt.empty(5, dtype=dpt.int32)
    y = ub.from_dlpack(x, device=np.empty(()).__dlpack_device__())
    assert y.device == (KDLCPU, 0) and y.usm_type is None
    assert (y.shape, np.dtype(y.dtype)) == (x.shape, x.dtype)
    v = ub.from_dlpack(y)
    assert v.device == (KDLCPU, 0) and (v.shape, v.dtype) == (y.shape, y.dtype)
    assert isinstance(np.from_dlpack(v), np.ndarray)


@pytest.mark.parametrize("shape", [(), (2,), (3, 0, 1), (2, 2, 2)])
def test_from_dlpack_to_kdlcpu(shape, typestr):
    q = dpctl.SyclQueue()
    x = dpt.asarray(np.arange(int(np.prod(shape))).reshape(shape).astype(typestr), sycl_queue=q)
    y = ub.from_dlpack(x, device=(KDLCPU, 0))
    assert y.device == (KDLCPU, 0)
    assert (y.shape, np.dtype(y.dtype)) == (x.shape, x.dtype)
    assert np.array_equal(np.from_dlpack(y), dpt.asnumpy(x))
    # and the same host copy made by usmbridge as the producer
    assert np.array_equal(np.from_dlpack(ub.asarray(x), device="cpu"), dpt.asnumpy(x))
    if x.ndim and x.size:
        v = np.from_dlpack(y)[::-1]
        w = ub.from_dlpack(v)
        assert w.strides == tuple(s // v.itemsize for s in v.strides)


@pytest.mark.parametrize("mod", [2, 5])
def test_from_dlpack_to_kdlcpu_strides(mod, typestr):
    q = dpctl.SyclQueue()
    x0 = dpt.asarray(np.arange(3 * mod).astype(typestr), sycl_queue=q)
    for start in range(mod):
        x = x0[slice(-start - 1, None, -mod)]
        y = ub.from_dlpack(x, device=(KDLCPU, 0))
        assert (y.shape, np.dtype(y.dtype)) == (x.shape, x.dtype)
        assert np.array_equal(np.from_dlpack(y), dpt.asnumpy(x))
        v = np.from_dlpack(y)[::-1]
        assert ub.from_dlpack(v).strides == tuple(s // v.itemsize for s in v.strides)


def test_dlpack_from_subdevice_to_kdlcpu(sub_queues):
    x = dpt.arange(64, dtype=dpt.int32, sycl_queue=sub_queues[0])
    y = ub.from_dlpack(x, device=(KDLCPU, 0))
    assert y.device == (KDLCPU, 0) and np.from_dlpack(y).tolist() == list(range(64))
    z = np.from_dlpack(ub.asarray(x), device="cpu")
    assert z.tolist() == list(range(64))


def test_legacy_dlpack_capsule_from_numpy():
    cases = [np.arange(100, dtype="i4"),
             np.arange(100, dtype="u4").reshape((10, 10)).T,
             np.arange(100, dtype="f4").reshape((10, 10), order="F"),
             np.arange(100, dtype="c8")[::-2],
             np.ones(100, dtype="?")[::-2]]
    for x in cases:
        a = ub.from_dlpack(Capsule(x.__dlpack__(), (KDLCPU, 0)))
        assert a.data == x.ctypes.data and a.shape == x.shape
        assert np.array_equal(np.from_dlpack(a), x)


def test_readonly_array_to_kdlcpu():
    x = dpt.arange(100, dtype="i4")
    x.flags["W"] = False
    a = ub.asarray(x)
    cap = a.__dlpack__(max_version=VERSIONED, dl_device=(KDLCPU, 0))
    y = np.from_dlpack(Capsule(cap, (KDLCPU, 0)))
    assert np.array_equal(y, dpt.asnumpy(x)) and not y.flags.writeable
    h = ub.from_dlpack(x, device=(KDLCPU, 0))
    assert h.readonly
    with pytest.raises(BufferError):
        h.__dlpack__()  # read-only cannot travel as a legacy capsule
    y1 = _dlp.from_dlpack_capsule(h.__dlpack__(max_version=VERSIONED))
    assert not y1.flags["W"]


def test_to_dlpack_capsule_c_and_f_contig():
    x = dpt.asarray(np.random.default_rng(0).random((2, 3)))
    for v in (x, x.T):
        y = _dlp.from_dlpack_capsule(ub.asarray(v).__dlpack__())
        assert np.allclose(dpt.asnumpy(v), dpt.asnumpy(y))
        assert v.strides == y.strides


def test_to_dlpack_versioned_c_and_f_contig():
    x = dpt.asarray(np.random.default_rng(1).random((2, 3)))
    for v in (x, x.T):
        y = _dlp.from_dlpack_capsule(ub.asarray(v).__dlpack__(max_version=VERSIONED))
        assert np.allclose(dpt.asnumpy(v), dpt.asnumpy(y))
        assert v.strides == y.strides
        a = ub.from_dlpack(v)
        assert a.strides == v.strides


def test_used_dlpack_capsule_from_numpy():
    x_np = np.arange(100, dtype="i4")
    h = Capsule(x_np.__dlpack__(), (KDLCPU, 0))
    ub.from_dlpack(h)
    with pytest.raises(ValueError, match="A DLPack tensor object can not be consumed multiple times"):
        ub.from_dlpack(h)
    a = ub.asarray(dpt.asarray(x_np))
    h = Capsule(a.__dlpack__(max_version=VERSIONED, dl_device=(KDLCPU, 0)), (KDLCPU, 0))
    ub.from_dlpack(h)
    with pytest.raises(ValueError, match="can not be consumed multiple times"):
        ub.from_dlpack(h)


def test_dlpack_size_0_on_kdlcpu():
    x_np = np.ones(0, dtype="i4")
    a = ub.from_dlpack(Capsule(x_np.__dlpack__(), (KDLCPU, 0)))
    assert a.data == x_np.ctypes.data and a.shape == (0,)


def test_copy_via_host():
    x = dpt.ones(1, dtype="i4")
    x_np = np.ones(1, dtype="i4")
    with pytest.raises(TypeError):
        ub.from_dlpack(x_np, device=(1, 0, 0))  # not a DLPack device
    with pytest.raises(BufferError):
        ub.from_dlpack(x, device=(2, 0))  # a device nobody here handles
    # the other direction, USM to host, is always possible
    assert ub.from_dlpack(x, device=(KDLCPU, 0)).device == (KDLCPU, 0)


def test_copy_via_host_to_device():
    x = dpt.ones(1, dtype="i4")
    dev = x.__dlpack_device__()
    y = ub.from_dlpack(np.ones(1, dtype="i4"), device=dev)
    assert y.device == dev and y.usm_type == "device"
    assert dpt.from_dlpack(y).sycl_device == x.sycl_device
    # any layout: the window is copied, strides and offset kept
    h = np.arange(24, dtype="f4").reshape(4, 6)[::-1, 1::2]
    z = ub.from_dlpack(h, device=dev)
    assert (z.shape, z.strides, z.usm_type) == (h.shape, (-6, 2), "device")
    assert np.array_equal(host_values(z), h)
    assert np.array_equal(dpt.asnumpy(dpt.from_dlpack(z)), h)
    with pytest.raises(BufferError):
        ub.from_dlpack(h, device=dev, copy=False)


def test_copy_via_host_gh_1789():
    x_np = np.ones((10, 10), dtype="i4")
    x_np = np.lib.stride_tricks.as_strided(x_np, shape=x_np.shape, strides=(x_np.strides[0] - 1, x_np.strides[1]))
    with pytest.raises(BufferError):
        ub.from_dlpack(x_np)
    with pytest.raises(BufferError):
        ub.from_dlpack(x_np, device=(KDLONEAPI, 0))


class LegacyContainer:
    """A producer with the pre-2023.12 signature."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Container(LegacyContainer):
    """A producer with the 2023.12 signature, passing every keyword on."""

    def __dlpack__(self, max_version=None, dl_device=None, copy=None, stream=None):
        return self.array.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy, stream=stream)


@pytest.mark.parametrize("wrap", [LegacyContainer, Container])
@pytest.mark.parametrize("around", ["dpnp", "usmbridge"])
def test_generic_container(wrap, around):
    x = dpt.linspace(0, 100, num=20, dtype="int16")
    src = ub.asarray(x) if around == "usmbridge" else x
    c = wrap(src)
    a = ub.from_dlpack(c)
    assert a.data == x._pointer and a.device == x.__dlpack_device__()
    assert np.dtype(a.dtype) == x.dtype
    h = ub.from_dlpack(c, device=(KDLCPU, 0))
    assert h.device == (KDLCPU, 0) and np.dtype(h.dtype) == x.dtype
    assert np.from_dlpack(h).tolist() == dpt.asnumpy(x).tolist()
    z = ub.from_dlpack(c, device=a.device)
    assert z.data == x._pointer and z.device == a.device
    # dpnp as the consumer of the same container
    assert dpt.from_dlpack(c)._pointer == x._pointer


def test_generic_container_legacy_np():
    x = np.linspace(0, 100, num=20, dtype="int16")
    c = LegacyContainer(x)
    a = ub.from_dlpack(c)
    assert a.data == x.ctypes.data and np.dtype(a.dtype) == x.dtype and a.device == (KDLCPU, 0)
    h = ub.from_dlpack(c, device=(KDLCPU, 0))
    assert h.device == (KDLCPU, 0) and np.dtype(h.dtype) == x.dtype


def test_generic_container_legacy_np_to_device():
    x = np.linspace(0, 100, num=20, dtype="int16")
    dev = dpt.empty(0).__dlpack_device__()
    z = ub.from_dlpack(LegacyContainer(x), device=dev)
    assert z.device == dev and z.usm_type == "device"
    assert np.array_equal(host_values(z), x)


def test_peer_aborts_without_usm_aspects():
    # The peer's all_root_devices keeps devices without the USM aspects;
    # dpctl allocating host USM on one (PoCL's CPU device here) aborts the
    # process, so the peer's own test_dlpack_device dies there. Shown in a
    # child, for each such device this machine has.
    for d in dpctl.get_devices():
        if d.has_aspect_usm_host_allocations:
            continue
        code = ("import dpnp.tensor as dpt\n"
                "dpt.empty((64,), dtype='u1', usm_type='host', device=%r)\n" % d.filter_string)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
        assert p.returncode == -signal.SIGABRT, (d.filter_string, p.returncode, p.stderr[-500:])
