#!/usr/bin/env bash
# Makes the CPythons of the support matrix that the host's Debian and pyenv
# lack, 3.14 and 3.15 (README.md, "What runs where"), from Debian sid's
# packages: a minimal sid root made by debootstrap under the git-ignored
# .cache/sid/root, with python3.X, -dev and -venv and a C compiler for cgo,
# which scripts/sid-run.sh runs commands in with the host's Go toolchain,
# this checkout and the temporary directory visible at their own paths
# (in a mount namespace of each command's own; nothing stays mounted).
#
# In the root, one venv per version, /opt/pyversions/3.X, with the pins of
# requirements-pyversions.txt (numpy, pytest, hypothesis) and, where dpctl
# and dpnp ship wheels for that version (3.14, not 3.15: the list below and
# test/pyversions_test.go's withoutDpctl say the same), the dpctl stack of
# requirements-dpctl.txt and the venv's own OpenCL vendors directory,
# <venv>/opencl-vendors, with that venv's Intel CPU runtime (as
# scripts/setup-45-pyversions.sh does); a check in a fresh process makes
# an opencl:cpu queue with it. test/pyversions_test.go installs the package
# into a new venv of each and runs its pytest suite there, in the root.
#
# Made once and kept: the root is made again only when its package list
# changes, a venv only when its interpreter or a requirements file does;
# a second run takes seconds. sid moves daily; the root stays the sid of
# the day it was made (delete .cache/sid to take a newer one).
#
# Prints "export USMBRIDGE_SID_ROOT=<root>" and "export
# USMBRIDGE_SID_PYVERSIONS=<venv>:<venv>" (paths inside the root, of the
# venvs it completed) on stdout; progress goes to stderr. Exits non-zero
# when the root or a venv could not be made, after printing what it did
# make. Needs root (debootstrap, chroot, mount namespaces) and a Debian
# package mirror: the one the machine's apt already uses
# (scripts/apt-mirror.sh), or $USMBRIDGE_DEBIAN_MIRROR.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2
# shellcheck source=scripts/apt-mirror.sh
. scripts/apt-mirror.sh

# The versions made here; README.md states them and test/pyversions_test.go
# holds CI to them.
minors=(3.14 3.15)
# Those dpctl 0.22.1 and dpnp 0.20.0 (requirements-dpctl.txt) have wheels for.
dpctl_minors=(3.14)

packages=(ca-certificates gcc libc6-dev)
for minor in "${minors[@]}"; do
	packages+=("python$minor" "python$minor-dev" "python$minor-venv")
done

dir="$PWD/.cache/sid"
root="$dir/root"
mkdir -p "$dir"
# One setup at a time in a checkout.
exec 9>"$dir/.lock"
flock 9

say() { echo "setup-46-sid: $*"; }

# apt-get, waiting for another apt-get or dpkg of the machine (another
# developer's setup) to let go of its lock instead of failing.
apt_get() {
	local i err
	err=$(mktemp)
	for i in $(seq 1 30); do
		if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=60 "$@" 2>"$err"; then
			rm -f "$err"
			return 0
		fi
		cat "$err"
		if ! grep -qiE 'could not get lock|unable to acquire|is held by process' "$err"; then
			break # failed for another reason than a lock
		fi
		say "apt-get $1: waiting for another apt-get or dpkg ($i)"
		sleep 10
	done
	rm -f "$err"
	return 1
}

if [ "$(id -u)" != 0 ]; then
	say "needs root (debootstrap, chroot, mount namespaces)"
	exit 1
fi
if ! command -v debootstrap >/dev/null; then
	say "installing debootstrap"
	if ! apt_get update -qq || ! apt_get install -y -qq debootstrap >/dev/null; then
		say "could not install debootstrap"
		exit 1
	fi
fi

# Bind mounts are never left behind (scripts/sid-run.sh mounts in a
# namespace of its own), so a mount under .cache/sid is someone else's:
# deleting through it would delete the host's files.
mounted() { awk -v d="$dir/" 'index($2 "/", d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; }

# What the root is made from: the suite and the packages. Not the mirror,
# which serves the same sid whichever it is; a root made when the stamp
# named it too ("<mirror> sid" on its first line) counts as made from sid.
stamp=$(printf '%s\n' sid "${packages[@]}")
installed=$(sed '1s/^.* sid$/sid/' "$dir/root.installed" 2>/dev/null || true)
if ! [ -x "$root/usr/bin/env" ] || [ "$stamp" != "$installed" ]; then
	if mounted; then
		say "something is mounted under $dir; not replacing the root"
		exit 1
	fi
	mirror=${USMBRIDGE_DEBIAN_MIRROR:-}
	if [ -z "$mirror" ] && ! mirror=$(apt_mirror /etc/apt "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"); then
		say "no Debian mirror in the machine's apt sources (/etc/apt); set USMBRIDGE_DEBIAN_MIRROR to one"
		exit 1
	fi
	say "making a Debian sid root in $root from $mirror (${packages[*]})"
	rm -rf "$root" "$dir/root.new" "$dir/root.installed"
	if ! debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
		sid "$dir/root.new" "$mirror" >"$dir/debootstrap.log" 2>&1; then
		tail -n 20 "$dir/debootstrap.log"
		say "debootstrap failed (the log is $dir/debootstrap.log)"
		rm -rf "$dir/root.new"
		exit 1
	fi
	rm -rf "$dir/root.new/var/cache/apt/archives/"*.deb
	mv "$dir/root.new" "$root"
	printf '%s' "$stamp" >"$dir/root.installed"
fi
# pip and go need names resolved as the host does now.
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
echo "export USMBRIDGE_SID_ROOT=$root" >&3

run() { USMBRIDGE_SID_ROOT=$root bash scripts/sid-run.sh "$@"; }

venvs=() status=0
for minor in "${minors[@]}"; do
	venv="/opt/pyversions/$minor"
	reqs=("$PWD/requirements-pyversions.txt")
	dpctl=0
	if [[ " ${dpctl_minors[*]} " == *" $minor "* ]]; then
		dpctl=1
		reqs+=("$PWD/requirements-dpctl.txt")
	fi
	if ! version=$(run "python$minor" -c 'import sys; print(sys.version)'); then
		say "the root has no python$minor"
		status=1
		continue
	fi
	# What the venv was made from: the interpreter and its pin files.
	stamp=$(printf '%s\n' "$version" && cat "${reqs[@]}")
	# (bin/python is a link to /usr/bin/python3.X, which only the root has.)
	if ! [ -f "$root$venv/pyvenv.cfg" ] || [ "$stamp" != "$(cat "$root$venv/.installed" 2>/dev/null)" ]; then
		say "making $venv in the root from python$minor"
		rm -rf "${root:?}$venv"
		if ! run "python$minor" -m venv "$venv" ||
			! run "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: "${reqs[@]/#/-r}"; then
			say "could not install the pinned packages into $venv"
			status=1
			continue
		fi
		printf '%s' "$stamp" >"$root$venv/.installed"
	fi
	if [ "$dpctl" = 1 ]; then
		vendors="$venv/opencl-vendors"
		rm -rf "$root$vendors" && mkdir -p "$root$vendors"
		echo "$venv/lib/libintelocl.so" >"$root$vendors/10-intel-cpu.icd"
		check='
import sys, numpy, dpctl, dpnp.tensor as dpt
q = dpctl.SyclQueue("opencl:cpu")
x = dpt.arange(4, sycl_queue=q)
assert x.__sycl_usm_array_interface__["shape"] == (4,)
print("setup-46-sid: CPython %s, numpy %s, dpctl %s on %s" % (
    sys.version.split()[0], numpy.__version__, dpctl.__version__, q.sycl_device.name))
'
	else
		vendors=
		check='
import sys, numpy
print("setup-46-sid: CPython %s, numpy %s (no dpctl wheels for it)" % (sys.version.split()[0], numpy.__version__))
'
	fi
	if ! OCL_ICD_VENDORS="$vendors" run "$venv/bin/python" -c "$check"; then
		say "the check of $venv failed"
		status=1
		continue
	fi
	venvs+=("$venv")
done
list=$(IFS=:; echo "${venvs[*]}")
echo "export USMBRIDGE_SID_PYVERSIONS=$list" >&3
exit "$status"
