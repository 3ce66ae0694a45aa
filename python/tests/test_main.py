"""python -m usmbridge (usmbridge/__main__.py): it names what this Python
has (Python, numpy, dpctl, dpnp, Intel's CPU runtime from PyPI, the SYCL
devices), loads neither the extension module nor dpctl unless it must, and
where Intel's CPU device is hidden prints the environment line that brings
it, which the test then uses."""
import importlib.metadata
import importlib.util
import os
import platform
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# The package as the other tests import it: the source tree (conftest.py),
# or, for a copy of the tests, the installed package.
PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def child_env(env=None):
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PKG, env.get("PYTHONPATH")) if p)
    return env


def run_main(*args, env=None):
    p = subprocess.run([sys.executable, "-m", "usmbridge", *args], capture_output=True, text=True,
                       env=child_env(env), timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_names_what_this_python_has():
    out = run_main()
    assert "Python %s (%s)" % (platform.python_version(), os.path.normpath(sys.executable)) in out, out
    assert re.search(r"^numpy\s+%s$" % re.escape(np.__version__), out, re.M), out
    for name in ("dpctl", "dpnp", "intel-opencl-rt"):
        want = version(name) or "not installed"
        assert re.search(r"^%s\s+%s$" % (re.escape(name), re.escape(want)), out, re.M), (name, out)
    assert re.search(r"^  extension module: \S", out, re.M), out
    if importlib.util.find_spec("dpctl") is not None:
        import dpctl
        devices = dpctl.get_devices()
        assert devices, "dpctl sees no device: the environment has no OpenCL runtime"
        for d in devices:
            assert "%s" % d.filter_string in out and d.name in out, (d, out)


def test_loads_neither_the_extension_nor_dpctl_unasked():
    code = textwrap.dedent("""
        import runpy, sys
        sys.argv = ["usmbridge"] + sys.argv[1:]
        try:
            runpy.run_module("usmbridge", run_name="__main__")
        except SystemExit as e:
            assert not e.code, e.code
        assert "usmbridge._ext" not in sys.modules, "the report loaded the extension module"
        if "--no-devices" in sys.argv:
            assert "dpctl" not in sys.modules, "--no-devices imported dpctl"
        print("ok")
        """)
    for args in ([], ["--no-devices"]):
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                           env=child_env(), timeout=300)
        assert p.returncode == 0 and p.stdout.endswith("ok\n"), (args, p.stdout + p.stderr)


def test_ext_flag_loads_the_extension_module():
    out = run_main("--ext", "--no-devices")
    assert re.search(r"^  loaded: \S+", out, re.M), out


def test_works_when_dpctl_does_not_import():
    # dpctl installed but broken (here: made unimportable) is reported.
    code = "import sys, runpy; sys.modules['dpctl'] = None; runpy.run_module('usmbridge', run_name='__main__')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    if version("dpctl"):
        assert "dpctl failed: ModuleNotFoundError" in p.stdout, p.stdout
    else:
        assert re.search(r"^dpctl\s+not installed$", p.stdout, re.M), p.stdout


INTEL_CPU = "import dpctl; print([d.filter_string for d in dpctl.get_devices() if d.sycl_platform.name == 'Intel(R) OpenCL' and d.device_type.name == 'cpu'])"


def test_hidden_runtime_gets_the_line_that_brings_it(tmp_path):
    pytest.importorskip("dpctl")
    if not version("intel-opencl-rt"):
        pytest.skip("intel-opencl-rt (Intel's CPU OpenCL runtime from PyPI) is not installed")
    # An empty vendors directory hides every ICD the machine registers,
    # and no OCL_ICD_FILENAMES names Intel's.
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path))
    env.pop("OCL_ICD_FILENAMES", None)

    def intel_cpu_devices(env):
        p = subprocess.run([sys.executable, "-c", INTEL_CPU], capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout.strip()

    assert intel_cpu_devices(env) == "[]", "Intel's CPU device is visible with no ICD"
    out = run_main(env=env)
    lines = re.findall(r"^  (export OCL_ICD_FILENAMES=(\S+))$", out, re.M)
    assert len(lines) == 1, out
    line, value = lines[0]
    assert os.path.basename(value).startswith("libintelocl") and os.path.isfile(value), out
    assert run_main("--env", env=env) == line + "\n"
    # The line does what it says.
    assert intel_cpu_devices(dict(env, OCL_ICD_FILENAMES=value)).startswith("['opencl:cpu")
    # And where the device is visible, nothing is asked.
    assert run_main("--env", env=dict(env, OCL_ICD_FILENAMES=value)) == ""
