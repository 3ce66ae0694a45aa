#!/usr/bin/env bash
# Compiles OpenCL C to SPIR-V with Debian's tools: clang's SPIR target
# (spir64) to LLVM bitcode, then llvm-spirv to a SPIR-V module. The kernel
# tests run it on internal/testutil/testdata/kernels.cl at test time, so
# the repository keeps the source and never a binary.
#
#   scripts/spirv.sh in.cl out.spv [clang options...]
#
# CLANG and LLVM_SPIRV name the tools (scripts/setup-25-spirv.sh prints
# them); by default the LLVM 15 pair of Debian 12.
set -euo pipefail
in=$1 out=$2
shift 2
clang=${CLANG:-clang-15}
spirv=${LLVM_SPIRV:-llvm-spirv-15}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$clang" -c -target spir64 -O2 -emit-llvm -cl-std=CL1.2 -Xclang -finclude-default-header "$@" -o "$tmp/k.bc" "$in"
"$spirv" "$tmp/k.bc" -o "$out"
