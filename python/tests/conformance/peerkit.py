"""Helpers of the conformance suite (the peers' test files re-expressed
against usmbridge; see each test module's docstring). Fixtures are in
conftest.py."""
import numpy as np


class Capsule:
    """Hands a capsule made earlier to a consumer's from_dlpack, the way the
    peers' tests call their capsule readers directly."""

    def __init__(self, cap, dev):
        self.cap, self.dev = cap, dev

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return self.dev


def host_values(a):
    """The elements of a usmbridge.Array as a NumPy array: a host copy made by
    usmbridge's own __dlpack__(dl_device=(kDLCPU, 0)) for USM, the memory
    itself for host arrays."""
    return np.from_dlpack(a, device="cpu")


def usm_root_devices():
    """Root devices dpctl can allocate every USM kind on, at most two per
    platform (the peers' all_root_devices, minus devices without the USM
    aspects: dpctl aborts the process allocating host USM on them)."""
    import dpctl
    by_platform = {}
    for d in dpctl.get_devices():
        if d.has_aspect_usm_device_allocations and d.has_aspect_usm_shared_allocations and d.has_aspect_usm_host_allocations:
            by_platform.setdefault(d.sycl_platform.name, []).append(d)
    devs = [d for ds in by_platform.values() for d in ds[:2]]
    assert devs, "no SYCL device with USM allocations: the conformance suite needs one"
    return devs
