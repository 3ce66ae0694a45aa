#!/usr/bin/env bash
# Installs what usmbridge's tests need, then runs them in both cgo modes
# (and with the race detector, which needs cgo). This is README's test
# command; .ci/run calls it.
#
# Each native runtime has its own setup script, scripts/setup-*.sh, which
# installs it (apt-get, pip into the git-ignored .venv) and prints
# "export NAME=value" lines for the environment the tests need. A setup
# script that cannot install its runtime exits non-zero; the tests of that
# runtime then skip locally and fail where USMBRIDGE_REQUIRE names it (CI).
#
# Before the tests it runs golangci-lint (.golangci.yml), which
# scripts/setup-05-lint.sh installs.
#
# Options: --no-setup  run the lint and tests only; --quick  one cgo mode, no race.
set -uo pipefail
cd "$(dirname "$0")/.."

setup=1 quick=0
for a in "$@"; do
	case "$a" in
	--no-setup) setup=0 ;;
	--quick) quick=1 ;;
	*) echo "usage: $0 [--no-setup] [--quick]" >&2; exit 2 ;;
	esac
done

env_file=.cache/test-env.sh
mkdir -p .cache
if [ "$setup" = 1 ]; then
	: >"$env_file"
	for s in scripts/setup-*.sh; do
		[ -e "$s" ] || continue
		echo "== $s"
		if ! bash "$s" >>"$env_file"; then
			echo "!! $s could not install its runtime; its tests will skip (or fail under USMBRIDGE_REQUIRE)" >&2
		fi
	done
fi
# shellcheck disable=SC1090
[ -f "$env_file" ] && . "$env_file"

status=0
run() {
	echo "== $*"
	"$@" || status=1
}
# Lint first (.golangci.yml): golangci-lint as installed by
# scripts/setup-05-lint.sh. Missing, it is skipped locally and a failure
# where USMBRIDGE_REQUIRE names "lint" (CI).
# The modules nested in the repository: gonum (a module of its own, so
# that gonum stays out of the module graph of programs that do not use it)
# and the example that uses it; go test ./... of the root does not enter
# them.
nested="gonum examples/ndarray"
if [ -n "${USMBRIDGE_GOLANGCI_LINT:-}" ] && [ -x "$USMBRIDGE_GOLANGCI_LINT" ]; then
	run "$USMBRIDGE_GOLANGCI_LINT" run ./...
	for m in $nested; do
		run env -C "$m" "$USMBRIDGE_GOLANGCI_LINT" run ./...
	done
elif [[ ",${USMBRIDGE_REQUIRE:-}," == *,lint,* || ",${USMBRIDGE_REQUIRE:-}," == *,all,* ]]; then
	echo "!! golangci-lint is required (USMBRIDGE_REQUIRE) but scripts/setup-05-lint.sh did not install it" >&2
	status=1
else
	echo "== golangci-lint not installed (scripts/setup-05-lint.sh); lint skipped"
fi
# test/ builds the wheels and runs the Python package's suite once per
# supported CPython, about 8 minutes on two busy cores (3.14 and 3.15, in
# the Debian sid root, take under 2 of them): -timeout keeps it
# clear of go test's default 10-minute limit for the package.
run env CGO_ENABLED=0 go test -count=1 -shuffle=on -timeout 30m ./...
for m in $nested; do
	run env CGO_ENABLED=0 go -C "$m" test -count=1 ./...
done
# pybridge again with every C API call checked for a pending Python
# exception (internal/pyapi, errcheck.go): such a call fails the run.
run env CGO_ENABLED=0 go test -count=1 -tags usmbridge_errcheck ./pybridge/
# The performance table's page and its regression check
# (python/bench/test_bench_page.py): pure Python, nothing built; pytest
# is the venv's (requirements-dpctl.txt, scripts/setup-40-python.sh).
if [ -n "${USMBRIDGE_PYTHON:-}" ]; then
	run "$USMBRIDGE_PYTHON" -m pytest -q -p no:cacheprovider python/bench
fi
if [ "$quick" = 0 ]; then
	run env CGO_ENABLED=1 go test -count=1 -shuffle=on -race ./...
	for m in $nested; do
		run env CGO_ENABLED=1 go -C "$m" test -count=1 -race ./...
	done
	# Smoke-run every benchmark once so they cannot rot.
	run env CGO_ENABLED=0 go test -count=1 -run '^$' -bench . -benchtime=1x ./...
	# The same for the performance table's command (docs/performance.md):
	# one short round per row.
	if [ -n "${USMBRIDGE_PYTHON:-}" ]; then
		run scripts/bench.sh --smoke
	fi
	# A bounded fuzz of the Python boundary (hostile objects); the seed
	# corpus already ran as tests above.
	run env CGO_ENABLED=0 go test -count=1 -run '^$' -fuzz '^FuzzBoundary$' -fuzztime 10s ./pybridge
	# C's host import held to dlpack.Import over hostile tensors (cgo: the
	# C half is compiled into the test).
	run env CGO_ENABLED=1 go test -count=1 -run '^$' -fuzz '^FuzzHostImport$' -fuzztime 15s ./pyext
	# The SPIR-V check held to the reader over malformed modules (a
	# dropped check of the checker is found within a second).
	run env CGO_ENABLED=0 go test -count=1 -run '^$' -fuzz '^FuzzSPIRVMalformed$' -fuzztime 10s ./internal/kernelparams
fi
exit "$status"
