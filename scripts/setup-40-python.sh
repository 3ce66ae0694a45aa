#!/usr/bin/env bash
# Installs pybridge's Python runtime into the git-ignored .venv: dpctl with
# Intel's SYCL runtime, dpnp (whose dpnp.tensor is the usm_ndarray
# producer) and pytest, pinned in requirements-dpctl.txt, then checks that
# dpctl.SyclQueue("opencl:cpu") works on Intel's CPU OpenCL runtime.
# Needs scripts/setup-10-venv.sh to have made .venv (numpy, intel-opencl-rt).
# Prints the environment for the tests on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

py=.venv/bin/python
if ! [ -x "$py" ]; then
	echo "setup-40-python: .venv is missing (scripts/setup-10-venv.sh makes it)"
	exit 1
fi
if ! cmp -s requirements-dpctl.txt .venv/.installed-dpctl 2>/dev/null; then
	"$py" -m pip install -q --disable-pip-version-check -r requirements-dpctl.txt
	cp requirements-dpctl.txt .venv/.installed-dpctl
fi

# dpctl's SYCL runtime finds OpenCL devices through the wheel's Khronos ICD
# loader, which reads the same vendors directory as Debian's loader
# (scripts/setup-20-opencl.sh writes it, Intel's CPU runtime first).
vendors="$PWD/.cache/opencl-vendors"
if ! [ -f "$vendors/10-intel-cpu.icd" ]; then
	echo "setup-40-python: $vendors/10-intel-cpu.icd is missing (scripts/setup-20-opencl.sh writes it)"
	exit 1
fi
# The check runs in a fresh process with the same environment the tests get.
if ! OCL_ICD_VENDORS="$vendors" "$py" -c '
import dpctl, dpnp.tensor as dpt
q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(4, sycl_queue=q)
assert x.__sycl_usm_array_interface__["shape"] == (4,)
print("setup-40-python: dpctl", dpctl.__version__, "on", q.sycl_device.name)
'; then
	echo "setup-40-python: dpctl cannot make an opencl:cpu queue"
	exit 1
fi
echo "export OCL_ICD_VENDORS=$vendors" >&3
echo "export USMBRIDGE_PYTHON=$PWD/.venv/bin/python" >&3
