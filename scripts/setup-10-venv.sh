#!/usr/bin/env bash
# Creates the git-ignored .venv from the system CPython 3.11 (Debian's, which
# ships the shared libpython3.11.so.1.0 that pybridge embeds) and installs
# the pinned Python packages the tests use: numpy, and Intel's CPU OpenCL
# runtime (intel-opencl-rt + tbb) that the OpenCL and dpctl tests run on,
# and Python's headers for the extension module (pybridge/ext).
# Prints the environment for the tests on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

py=/usr/bin/python3.11
# libpython3.11-dev: Python.h, for the extension module (pybridge/ext).
if ! [ -x "$py" ] || ! "$py" -c 'import ensurepip, venv' 2>/dev/null || ! [ -f /usr/include/python3.11/Python.h ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv libpython3.11 libpython3.11-dev
fi
if ! [ -x .venv/bin/python ]; then
	"$py" -m venv .venv
fi
if ! cmp -s requirements-test.txt .venv/.installed-requirements 2>/dev/null; then
	.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt
	cp requirements-test.txt .venv/.installed-requirements
fi
echo "export USMBRIDGE_PYTHON=$PWD/.venv/bin/python" >&3
