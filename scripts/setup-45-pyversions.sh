#!/usr/bin/env bash
# Makes one venv per CPython of the Python package's support matrix that
# pyenv provides (README.md, "What runs where": 3.10, 3.11, 3.12 and 3.13;
# scripts/setup-46-sid.sh makes 3.14 and 3.15 in a Debian sid root) under the
# git-ignored .cache/pyversions/, from pyenv's builds of those versions
# (part of the machine image; nothing is installed into them), with the
# pinned numpy, pytest and hypothesis of requirements-pyversions.txt and the
# dpctl stack of requirements-dpctl.txt (dpctl, dpnp and Intel's SYCL and
# CPU OpenCL runtimes; their pins have wheels for each of these versions).
# Each venv gets its own OpenCL vendors directory, <venv>/opencl-vendors:
# that venv's Intel CPU runtime first (as in scripts/setup-20-opencl.sh),
# then PoCL when Debian's is installed; a check in a fresh process makes an
# opencl:cpu queue with it. test/pyversions_test.go installs the package
# into each venv and runs its pytest suite there.
#
# A venv is made again when its pyenv build or a requirements file changes.
# Prints "export USMBRIDGE_PYVERSIONS=<venv>:<venv>:..." (the venvs it
# completed) on stdout; progress goes to stderr. Exits non-zero when a
# version of the matrix could not be set up (pyenv lacks it, or an install
# or the check failed), after printing the venvs it did make.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

# The support matrix; README.md states it and test/pyversions_test.go holds
# CI to it.
minors=(3.10 3.11 3.12 3.13)

if command -v pyenv >/dev/null; then
	root=$(pyenv root)
else
	root=${PYENV_ROOT:-$HOME/.pyenv}
fi
dir="$PWD/.cache/pyversions"
mkdir -p "$dir"
venvs=() status=0
for minor in "${minors[@]}"; do
	# The newest pyenv build of this minor version (3.10.13, not 3.10.9).
	base=$(find "$root/versions" -mindepth 1 -maxdepth 1 -name "$minor.*" 2>/dev/null |
		grep -E "/$minor\.[0-9]+$" | sort -V | tail -n 1 || true)
	if [ -z "$base" ] || ! [ -x "$base/bin/python3" ]; then
		echo "setup-45-pyversions: pyenv ($root) has no CPython $minor"
		status=1
		continue
	fi
	venv="$dir/$minor"
	# What the venv was made from: the interpreter and both pin files.
	stamp=$(printf '%s\n' "$base" && cat requirements-pyversions.txt requirements-dpctl.txt)
	if ! [ -x "$venv/bin/python" ] || [ "$stamp" != "$(cat "$venv/.installed" 2>/dev/null)" ]; then
		echo "setup-45-pyversions: making $venv from $base"
		rm -rf "$venv"
		if ! "$base/bin/python3" -m venv "$venv" ||
			! "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: \
				-r requirements-pyversions.txt -r requirements-dpctl.txt; then
			echo "setup-45-pyversions: could not install the pinned packages into $venv"
			status=1
			continue
		fi
		printf '%s' "$stamp" >"$venv/.installed"
	fi
	vendors="$venv/opencl-vendors"
	rm -rf "$vendors" && mkdir -p "$vendors"
	echo "$venv/lib/libintelocl.so" >"$vendors/10-intel-cpu.icd"
	if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
		cp /etc/OpenCL/vendors/pocl.icd "$vendors/20-pocl.icd"
	fi
	if ! OCL_ICD_VENDORS="$vendors" "$venv/bin/python" -c '
import sys, numpy, dpctl, dpnp.tensor as dpt
q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(4, sycl_queue=q)
assert x.__sycl_usm_array_interface__["shape"] == (4,)
print("setup-45-pyversions: CPython %s, numpy %s, dpctl %s on %s" % (
    sys.version.split()[0], numpy.__version__, dpctl.__version__, q.sycl_device.name))
'; then
		echo "setup-45-pyversions: dpctl in $venv cannot make an opencl:cpu queue"
		status=1
		continue
	fi
	venvs+=("$venv")
done
list=$(IFS=:; echo "${venvs[*]}")
echo "export USMBRIDGE_PYVERSIONS=$list" >&3
exit "$status"
