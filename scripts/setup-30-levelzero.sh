#!/usr/bin/env bash
# Installs what the Level Zero tests need: Debian's loader (libze1, which
# also ships the validation and tracing layers), its headers (libze-dev,
# which the fake driver in levelzero/testdata/fakedriver is compiled
# against at test time) and a C compiler for that fixture. Idempotent: it
# only runs apt-get when something is missing. Progress goes to stderr;
# stdout carries "export NAME=value" lines for scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

need=()
dpkg -s libze1 >/dev/null 2>&1 || need+=(libze1)
dpkg -s libze-dev >/dev/null 2>&1 || need+=(libze-dev)
command -v "$(go env CC 2>/dev/null || echo gcc)" >/dev/null 2>&1 || need+=(gcc)
if [ "${#need[@]}" -gt 0 ]; then
	echo "setup-30-levelzero: installing ${need[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi

# Fail (so test.sh reports it) if the pieces are still not there. No
# `grep -q` after a pipe: under pipefail, grep leaving at the first match
# can kill the writer with SIGPIPE and fail the check that matched (it
# did, now and then, with ldconfig's long list).
test -e /usr/include/level_zero/ze_api.h
loader=""
for f in /usr/lib/*/libze_loader.so.1 /usr/lib/libze_loader.so.1; do
	[ -e "$f" ] && loader=$f
done
[ -n "$loader" ] ||
	{ PATH="$PATH:/sbin:/usr/sbin" ldconfig -p | grep 'libze_loader\.so\.1 ' >/dev/null; }
echo "setup-30-levelzero: loader $(dpkg-query -W -f='${Version}' libze1), headers in /usr/include/level_zero"

# The tests find the loader by SONAME and build the fake driver themselves;
# no environment is needed. ZE_ENABLE_ALT_DRIVERS is deliberately NOT
# exported: each test configuration sets it in its own child process.
: >&3
