#!/usr/bin/env bash
# The performance table (docs/performance.md): builds what the rows time
# into .cache/bench, then runs python/bench/bench.py, which times every
# exchange beside its peer, one process per row, and prints peer,
# usmbridge and their ratio. Arguments go to bench.py:
#
#   scripts/bench.sh                              # every row
#   scripts/bench.sh --smoke                      # one short round per row (scripts/test.sh)
#   scripts/bench.sh f_numpy f_dpnp               # only the rows named
#   scripts/bench.sh --write docs/performance.md  # every row, and the page made of them
#   scripts/bench.sh --write docs/performance.md --accept-regressions
#
# --write compares the new ratios with the page's: a row whose ratio is
# more than 10% above the page's is printed, the exit status is 1 and the
# page is kept as it was, unless --accept-regressions is given (then the
# page is written anyway).
#
# What it builds, each the way its users build it:
# - usmbridge._ext, from python/ext with `python -m usmbridge.build`
#   (loaded through $USMBRIDGE_LIB), and the Go bench module benchmod
#   (python/bench/benchmod) and examples/saxpy, the same way;
# - the peers of benchmod.f and saxpy (python/bench/peers): a nanobind
#   module, with nanobind's CMake package from the nanobind that
#   requirements-test.txt pins into the venv, and a C-API module, with the
#   C compiler (the rows' floors are made of it and benchmod); CMake and
#   Ninja keep their build in .cache/bench/peers, so a second run only
#   relinks what changed.
#
# Needs what scripts/test.sh installs (its environment is read from
# .cache/test-env.sh when present): Go, a C and a C++ compiler, cmake and
# ninja, the venv's Python with nanobind, dpctl and dpnp, the OpenCL
# runtimes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
[ -f .cache/test-env.sh ] && . .cache/test-env.sh
py=${USMBRIDGE_PYTHON:-python3}
out=$PWD/.cache/bench
mkdir -p "$out"
for arg in "$@"; do
	case $arg in -h | --help) exec "$py" python/bench/bench.py --help ;; esac
done

PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m usmbridge.build python/ext --name usmbridge._ext -o "$out" >/dev/null
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m usmbridge.build python/bench/benchmod -o "$out" >/dev/null
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m usmbridge.build examples/saxpy -o "$out" >/dev/null

if ! nanobind=$("$py" -c 'import nanobind; print(nanobind.__version__); print(nanobind.cmake_dir())' 2>/dev/null); then
	echo "scripts/bench.sh: nanobind is not installed for $py: scripts/setup-10-venv.sh installs" \
		"requirements-test.txt, which pins it" >&2
	exit 1
fi
nanobind_version=${nanobind%%$'\n'*}
nanobind_dir=${nanobind#*$'\n'}
for tool in cmake ninja; do
	if ! command -v "$tool" >/dev/null; then
		echo "scripts/bench.sh: $tool is missing, which builds the nanobind peer (Debian: apt-get install cmake ninja-build)" >&2
		exit 1
	fi
done
# Configured every run (a second configure is quick), so a changed
# nanobind or Python is picked up; the log is shown only on failure.
if ! cmake -S python/bench/peers -B "$out/peers" -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DPython_EXECUTABLE="$py" -Dnanobind_DIR="$nanobind_dir" \
	-DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$out" >"$out/peers.log" 2>&1 ||
	! cmake --build "$out/peers" >>"$out/peers.log" 2>&1; then
	cat "$out/peers.log" >&2
	echo "scripts/bench.sh: building the peers (python/bench/peers) failed" >&2
	exit 1
fi

suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
USMBRIDGE_LIB=$out/_ext$suffix USMBRIDGE_BENCH_DIR=$out USMBRIDGE_BENCH_NANOBIND=$nanobind_version \
	exec "$py" python/bench/bench.py "$@"
