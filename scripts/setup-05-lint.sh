#!/usr/bin/env bash
# Installs golangci-lint, the version pinned below, into .cache/bin for
# scripts/test.sh's lint step (configuration: .golangci.yml).
#
# Why `go install` and not a release archive: the linter type-checks the
# module and the standard library with the go/types it was compiled with,
# so it is built by the Go toolchain that builds usmbridge; a release
# binary built by an older Go cannot analyse a newer standard library.
# The module proxy serves the pinned version and the go command checks it
# against the checksum database (sum.golang.org), as for any dependency.
# The binary is kept in .cache/bin (git-ignored) and rebuilt only when the
# pin changes; the first build takes a few minutes on two cores.
#
# Prints "export NAME=value" lines on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

version=v2.15.0
# The module's hash (go.sum form): what the checksum database vouched for
# when the pin was set; a build from anything else is refused.
sum=h1:w94zf8HAYI7hm3164kwKsvZRuqXvY+YxeFoTbu1OLg8=
bin="$PWD/.cache/bin"
exe="$bin/golangci-lint"
if ! [ -x "$exe" ] || ! "$exe" version 2>/dev/null | grep -E "version v?${version#v}( |$)" >/dev/null; then
	echo "setup-05-lint: building golangci-lint $version"
	mkdir -p "$bin"
	GOFLAGS= GOBIN="$bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
fi
if ! "$exe" version | grep -F "mod sum: \"$sum\"" >/dev/null; then
	echo "setup-05-lint: $exe is not golangci-lint $version ($sum):" >&2
	"$exe" version >&2
	exit 1
fi
"$exe" version
echo "export USMBRIDGE_GOLANGCI_LINT=$exe" >&3
