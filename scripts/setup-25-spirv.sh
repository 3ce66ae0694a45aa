#!/usr/bin/env bash
# Installs what makes SPIR-V for the kernel tests (scripts/spirv.sh):
# clang with the SPIR target and llvm-spirv, the LLVM 15 pair of Debian 12
# (clang-15, llvm-spirv-15). Idempotent: apt-get runs only when one is
# missing, and retries while another apt-get holds the dpkg lock. Progress
# goes to stderr; stdout carries "export NAME=value" lines for
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

need=()
command -v clang-15 >/dev/null 2>&1 || need+=(clang-15)
command -v llvm-spirv-15 >/dev/null 2>&1 || need+=(llvm-spirv-15)
if [ "${#need[@]}" -gt 0 ]; then
	echo "setup-25-spirv: installing ${need[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	for try in 1 2 3 4 5 6 7 8 9 10; do
		if $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; then
			break
		fi
		[ "$try" = 10 ] && exit 1
		echo "setup-25-spirv: apt-get failed (another one holding the dpkg lock?); retrying in 15 s"
		sleep 15
	done
fi

# Fail (so test.sh reports it) if the tools still do not make SPIR-V.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bash scripts/spirv.sh internal/testutil/testdata/kernels.cl "$out"
echo "setup-25-spirv: $(clang-15 --version | head -1); $(llvm-spirv-15 --version | head -1)"
echo "export CLANG=$(command -v clang-15)" >&3
echo "export LLVM_SPIRV=$(command -v llvm-spirv-15)" >&3
