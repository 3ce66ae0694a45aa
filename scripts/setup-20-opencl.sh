#!/usr/bin/env bash
# Sets up the two real OpenCL runtimes the opencl/ tests run on, both CPU
# devices, so no GPU is needed:
#   1. PoCL 3.1 from Debian (pocl-opencl-icd) with the ocl-icd loader
#      (ocl-icd-libopencl1): no cl_intel_unified_shared_memory, so the SVM
#      path runs on it.
#   2. Intel's CPU runtime (intel-opencl-rt, installed into .venv by
#      setup-10-venv.sh): the USM path.
# Both must appear in one process. Debian's ocl-icd 2.3.1 ignores
# OCL_ICD_FILENAMES (only the Khronos loader reads it), but both loaders
# read OCL_ICD_VENDORS as a directory of .icd files, so this script writes
# .cache/opencl-vendors/ with one .icd per runtime (the Intel one by
# absolute path; libintelocl.so finds tbb and its other libraries through
# its RUNPATH $ORIGIN, so no LD_LIBRARY_PATH is needed, and none is set:
# it would put the wheel's own libOpenCL.so.1 in front of Debian's).
# The Intel runtime is listed first: dpctl's SYCL runtime reads the same
# directory (through the wheel's Khronos loader) and Intel's is the device
# SYCL can use, so "opencl:cpu" must find it first.
# Idempotent: apt runs only when a package is missing.
# Prints "export NAME=value" lines on stdout; progress goes to stderr.
# Exits non-zero when a runtime could not be set up (after printing what
# it could), so tests skip locally and fail under USMBRIDGE_REQUIRE.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

pkgs=(ocl-icd-libopencl1 pocl-opencl-icd clinfo)
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "setup-20-opencl: installing ${missing[*]}"
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

vendors="$PWD/.cache/opencl-vendors"
mkdir -p "$vendors"
rm -f "$vendors"/*.icd
status=0
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
	cp /etc/OpenCL/vendors/pocl.icd "$vendors/20-pocl.icd"
else
	echo "setup-20-opencl: PoCL's /etc/OpenCL/vendors/pocl.icd is missing" >&2
	status=1
fi
intel="$PWD/.venv/lib/libintelocl.so"
if [ -f "$intel" ]; then
	echo "$intel" >"$vendors/10-intel-cpu.icd"
else
	echo "setup-20-opencl: $intel is missing (run scripts/setup-10-venv.sh)" >&2
	status=1
fi
if command -v clinfo >/dev/null; then
	OCL_ICD_VENDORS="$vendors" clinfo -l >&2 || true
fi
echo "export OCL_ICD_VENDORS=$vendors" >&3
exit "$status"
