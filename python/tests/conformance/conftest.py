"""Fixtures of the conformance suite; helpers are in peerkit.py."""
import pytest

from peerkit import usm_root_devices



@pytest.fixture(scope="session")
def root_devices():
    return usm_root_devices()


@pytest.fixture(scope="module")
def queue():
    """The default queue, as the peers' tests use it."""
    dpctl = pytest.importorskip("dpctl")
    return dpctl.SyclQueue()


@pytest.fixture(scope="module")
def sub_queues(queue):
    """Queues on two sub-devices of the default device, each in its own
    context (Intel's CPU OpenCL cannot make a queue for a sub-device in the
    platform's default context)."""
    dpctl = pytest.importorskip("dpctl")
    d = queue.sycl_device
    n = d.max_compute_units
    d0, d1 = d.create_sub_devices(partition=[n // 2, n - n // 2])
    return dpctl.SyclQueue(d0), dpctl.SyclQueue(d1)
