"""The fork rule (docs/python.md, "fork"): in a child created by fork() from a
process that had used usmbridge, every call raises ForkError instead of
hanging in the Go runtime, and releasing what the parent made never enters
Go; 'spawn' and 'forkserver' workers work. Each scenario runs forkcheck.py
in its own interpreter, so a hang or a crash fails the test instead of the
test run."""
import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_scenario(scenario, timeout=600):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "forkcheck.py"), scenario], cwd=HERE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail("forkcheck.py %s hung:\n%s" % (scenario, out))
    return p.returncode, out


@pytest.mark.parametrize("scenario", ["mp-fork", "os-fork"])
def test_forked_child_raises_fork_error(scenario):
    # The parent's objects include USM arrays (forkcheck.py): skips without dpctl.
    pytest.importorskip("dpctl")
    pytest.importorskip("dpnp.tensor")
    code, out = run_scenario(scenario)
    assert code == 0, out
    assert "every call raised ForkError" in out and "parent: child exit 0" in out, out


@pytest.mark.parametrize("scenario", ["spawn", "forkserver"])
def test_spawn_and_forkserver_work(scenario):
    code, out = run_scenario(scenario)
    assert code == 0, out
    assert "workers returned [6.0, 10.0, 15.0]" in out, out


def test_forkserver_that_used_usmbridge_gives_fork_error():
    code, out = run_scenario("forkserver-preloaded")
    assert code == 0, out
    assert "ForkError" in out, out


def test_import_loads_nothing():
    # The package loads the library on first use, so that a process that
    # only imports it (a forkserver preloading the main module) forks
    # children that can use it.
    code = ("import sys; sys.path.insert(0, %r); import usmbridge; "
            "assert 'usmbridge._ext' not in sys.modules; usmbridge.asarray; "
            "assert 'usmbridge._ext' in sys.modules" % os.path.join(HERE, ".."))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
