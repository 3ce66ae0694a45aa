"""__dlpack__(stream=queue) orders the consumer's queue after the array's
on the device and returns without waiting (RATIONALE.md, "Queue ordering
on the device"). Each case runs in a child process (orderingcheck.py) with
work held back on the producer's queue by an OpenCL user event that is
completed only after the hand-off returned: a hand-off that waited on the
host would block until the timeout, and the test fails instead of hanging."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("dpctl")
pytest.importorskip("dpnp.tensor")

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 30


def _run(*args):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "orderingcheck.py"), *args], cwd=HERE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("the hand-off blocked while the producer's work was pending: it waited on the host")
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_stream_orders_consumer_on_device():
    r = _run("stream", "in_order")
    assert r["before"] == 0, "the consumer's copy ran before the producer's work"
    assert r["all_seven"], r


def test_stream_same_queue():
    r = _run("same_queue", "in_order")
    assert r["all_seven"], r


@pytest.mark.parametrize("consumer", ["in_order", "out_of_order"])
def test_without_ordering_the_consumer_reads_early(consumer):
    # The control that shows the setup can fail: with stream=-1 nothing
    # orders the consumer's copy, and it reads the memory before the
    # producer's pending copy wrote it.
    r = _run("nosync", consumer)
    assert r["first"] == 0 and not r["all_seven"], r


@pytest.mark.parametrize("producer", ["import_dpnp", "import_wrapper"])
def test_from_dlpack_passes_its_queue_as_stream(producer):
    # from_dlpack of a dpnp array (which has a sycl_queue) used to wait on
    # the host; of a wrapper without sycl_queue it did not order anything,
    # so a later command could read the memory early. Now both pass the
    # queue the import lands on as the stream, and the producer orders it.
    r = _run(producer, "in_order")
    assert r["before"] == 0, "the consumer's copy ran before the producer's work"
    assert r["all_seven"], r


@pytest.mark.parametrize("how", ["stream", "import"])
@pytest.mark.parametrize("producer", ["in_order", "out_of_order"])
@pytest.mark.parametrize("consumer", ["in_order", "out_of_order"])
def test_consumer_sees_kernel_result(how, producer, consumer):
    # A dpnp fill kernel on the producer's queue, the hand-off, and the
    # consumer's next command (a memcpy to the host). On an out-of-order
    # consumer SYCL's barrier pair (dpnp's hand-off) lets the memcpy read
    # before the fill finished; usmbridge waits on the host there instead
    # (RATIONALE.md, "Queue ordering on the device"), and orders in-order
    # consumers on the device.
    r = _run("kernel", how, producer, consumer)
    assert r["stale"] == 0, r


@pytest.mark.parametrize("producer", ["in_order", "out_of_order"])
def test_copy_from_producer_queue_is_complete(producer):
    # from_dlpack(x, copy=True) passes the consumer's queue as the stream
    # and asks dpnp for a copy; dpnp 0.20 does not order that queue after
    # the copy it makes (about 1 import in 10 read stale data), so the
    # producer's queue is also waited for, as for a pre-2023.12 producer.
    r = _run("import_copy", producer)
    assert r["stale"] == 0, r


def test_legacy_producer_with_sycl_queue_is_waited_for():
    # It gets the stream but may ignore it (this one does): its
    # sycl_queue is waited on before from_dlpack copies the data.
    assert _run("legacy")["all_seven"]
