"""The first use of usmbridge in a process loads dpctl (Go's side of it:
import dpctl, bind its C library). A failure of that load is not kept: a
call that fails while it loads dpctl, or before, leaves the next call
working. Each scenario must be the first use in its process, so it runs
in an interpreter of its own."""
import os
import signal
import subprocess
import sys

import pytest

# Every scenario ends with a dpnp array on opencl:cpu: skips without them.
pytest.importorskip("dpctl")
pytest.importorskip("dpnp.tensor")

HERE = os.path.dirname(os.path.abspath(__file__))

PRELUDE = """
import sys
sys.path.insert(0, %r)
import usmbridge as ub

def dpnp_array():
    import dpnp.tensor as dpt
    return dpt.arange(3, dtype="f4", device="opencl:cpu")

def works():
    x = dpnp_array()
    a = ub.asarray(x)
    assert a.shape == (3,) and a.device == x.__dlpack_device__(), (a.shape, a.device)
    print("a later asarray works")
""" % os.path.join(HERE, "..")

SCENARIOS = {
    # The reported case: the first asarray is of an object without
    # __sycl_usm_array_interface__, before anything imported dpctl.
    "missing-suai-first": """
try:
    ub.asarray(object())
except ValueError as e:
    print("ValueError:", e)
works()
""",
    # The same with dpctl already imported by the program.
    "missing-suai-after-dpnp": """
x = dpnp_array()
try:
    ub.asarray(object())
except ValueError as e:
    print("ValueError:", e)
works()
""",
    # Ctrl-C while usmbridge imports dpctl, in the middle of dpctl's own
    # modules: the KeyboardInterrupt reaches the caller as itself.
    "keyboard-interrupt": """
class InterruptOnce:
    fired = False
    def find_spec(self, name, path=None, target=None):
        if name == "dpctl._sycl_queue" and not InterruptOnce.fired:
            InterruptOnce.fired = True
            raise KeyboardInterrupt
sys.meta_path.insert(0, InterruptOnce())

class HasSUAI:  # a SUAI dict; reading it needs dpctl
    __sycl_usm_array_interface__ = {"data": (1, False), "shape": (1,), "typestr": "<f4",
                                     "version": 1, "syclobj": "opencl:cpu"}
try:
    ub.asarray(HasSUAI())
except KeyboardInterrupt:
    print("KeyboardInterrupt")
assert "dpctl" not in sys.modules
works()
""",
    # A Python without dpctl: a device keyword naming a SYCL device is a
    # device this Python cannot provide, a ValueError as NumPy's, chained
    # to the ImportError; once dpctl can be imported, the same call works.
    "no-dpctl-device": """
import numpy as np

class NoDpctl:
    def find_spec(self, name, path=None, target=None):
        if name == "dpctl":
            raise ModuleNotFoundError("No module named 'dpctl'", name="dpctl")
blocker = NoDpctl()
sys.meta_path.insert(0, blocker)
try:
    ub.from_dlpack(np.arange(3.0), device="opencl:cpu", copy=True)
except ValueError as e:
    assert isinstance(e.__cause__, ImportError), repr(e.__cause__)
    print("ValueError:", e)
sys.meta_path.remove(blocker)
assert ub.from_dlpack(np.arange(3.0), device="opencl:cpu", copy=True).device[0] == 14
works()
""",
}


def run_scenario(name, timeout=300):
    p = subprocess.Popen([sys.executable, "-c", PRELUDE + SCENARIOS[name]], cwd=HERE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail("scenario %s hung:\n%s" % (name, out))
    return p.returncode, out


MISSING = ("ValueError:", "does not expose `__sycl_usm_array_interface__`")


@pytest.mark.parametrize("scenario,first", [
    ("missing-suai-first", MISSING),
    ("missing-suai-after-dpnp", MISSING),
    ("keyboard-interrupt", ("KeyboardInterrupt",)),
    ("no-dpctl-device", ("ValueError:", "opencl:cpu", "no SYCL runtime")),
])
def test_failed_first_call_leaves_dpctl_usable(scenario, first):
    code, out = run_scenario(scenario)
    assert code == 0, out
    assert all(s in out for s in first) and "a later asarray works" in out, out
