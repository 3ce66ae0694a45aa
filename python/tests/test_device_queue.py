"""from_dlpack(x, device=q) with a dpctl.SyclQueue binds the Array to q
(issue 29): dpnp then combines it with the caller's arrays on q, which it
refuses for arrays of two queues (ExecutionPlacementError)."""
import numpy as np
import pytest

import usmbridge as ub

dpctl = pytest.importorskip("dpctl")
dpnp = pytest.importorskip("dpnp")


@pytest.mark.parametrize("in_order", [True, False])
@pytest.mark.parametrize("source", ["dpnp", "numpy"])
def test_from_dlpack_binds_to_the_queue_named(source, in_order):
    q = dpctl.SyclQueue("opencl:cpu", property="in_order") if in_order else dpctl.SyclQueue("opencl:cpu")
    x = dpnp.arange(6.0) if source == "dpnp" else np.arange(6.0)
    a = ub.from_dlpack(x, device=q)
    assert a.sycl_queue == q and a.usm_type in ("device", "shared")
    y = dpnp.ones(6, sycl_queue=q)
    assert dpnp.asnumpy(dpnp.asarray(a) + y).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_a_queue_of_another_device_kind_is_refused():
    q = dpctl.SyclQueue("opencl:cpu")
    with pytest.raises((ValueError, BufferError)):
        ub.from_dlpack(np.arange(3.0), device=q, copy=False)


# A dpctl.SyclDevice or SyclQueue given as device= is held by no one after
# the calls: the AttributeErrors of the probes that tell its kind (each
# holds the object as its .obj) are let go at once, not when Go's
# collector runs, which an idle program may never see. (100 calls held
# 100 references.)
@pytest.mark.parametrize("make", [lambda: dpctl.SyclDevice("opencl:cpu"), lambda: dpctl.SyclQueue("opencl:cpu")],
                         ids=["SyclDevice", "SyclQueue"])
def test_a_device_object_is_not_held_after_the_calls(make):
    import sys
    x = np.arange(4.0)
    dev = make()
    ub.from_dlpack(x, device=dev)  # dpctl's own cache of a device's queue keeps one, as dpnp.asarray's does
    before = sys.getrefcount(dev)
    for _ in range(50):
        ub.from_dlpack(x, device=dev)
    assert sys.getrefcount(dev) == before


# A device= that is nothing a device is names from_dlpack's keyword, not
# the __dlpack__ keyword (dl_device) the pair goes on to.
@pytest.mark.parametrize("device", [3, (1,), 2.5])
def test_a_bad_device_names_from_dlpacks_keyword(device):
    with pytest.raises(TypeError, match=r"^from_dlpack\(\) argument 'device' must be \"cpu\"") as info:
        ub.from_dlpack(np.arange(2.0), device=device)
    assert "dl_device" not in str(info.value) and "__dlpack__" not in str(info.value)
