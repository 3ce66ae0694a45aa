#!/usr/bin/env bash
# The performance table (README.md, "Performance"): builds the extension
# module into .cache/, then runs python/bench/bench.py, which times every
# exchange beside its peer, one process per row, and prints peer,
# usmbridge and their ratio. Arguments go to bench.py: --smoke for one
# short round per row (scripts/test.sh), or row names to run only those.
#
# Needs what scripts/test.sh installs (its environment is read from
# .cache/test-env.sh when present): Go, a C compiler, the venv's Python
# with dpctl and dpnp, the OpenCL runtimes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
[ -f .cache/test-env.sh ] && . .cache/test-env.sh
py=${USMBRIDGE_PYTHON:-python3}
include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
mkdir -p .cache
lib=$PWD/.cache/bench-libusmbridge.so
(cd pybridge/ext && CGO_ENABLED=1 CGO_CFLAGS="-I$include ${CGO_CFLAGS:-}" go build -buildmode=c-shared -o "$lib" .)
USMBRIDGE_LIB=$lib exec "$py" python/bench/bench.py "$@"
