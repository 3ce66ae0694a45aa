#!/usr/bin/env bash
# Runs a command inside the Debian sid root that scripts/setup-46-sid.sh
# makes (CPython 3.14 and 3.15, which the host's Debian lacks), with the
# host's directories it needs visible at their own paths:
#
#   - this checkout, the current directory and ${TMPDIR:-/tmp}, so that a
#     path means the same file inside and out (test/pyversions_test.go
#     makes its venvs and source copies in a temporary directory and runs
#     them in the root);
#   - the host's Go toolchain (go env GOROOT), its module and build caches
#     (GOMODCACHE, GOCACHE) and ~/.cache (pip's cache), and the go env
#     settings a go.env file of the host's home would give (GOFLAGS,
#     GOTOOLCHAIN, GOPROXY, ...), so `go build` in the root is the host's;
#   - the host's CA bundle and pip configuration (/etc/ssl/certs/
#     ca-certificates.crt, the files SSL_CERT_FILE, PIP_CERT and
#     REQUESTS_CA_BUNDLE name, /etc/pip.conf), so that pip and go reach
#     the package registries as they do on the host, through whatever
#     proxy and certificate authority it trusts;
#   - /proc, /dev and /sys.
#
# The mounts are made in a mount namespace of the command's own (unshare
# -m): the host's mount table is never touched and nothing is left mounted
# when the command ends, so deleting .cache cannot reach through a bind
# mount into the host. Needs root (unshare and chroot).
#
#   scripts/sid-run.sh COMMAND [ARG...]     e.g. scripts/sid-run.sh python3.15 -V
#
# The root is $USMBRIDGE_SID_ROOT (setup-46-sid.sh prints it), else this
# checkout's .cache/sid/root. The command runs in the current directory
# with the caller's environment, plus the Go toolchain's bin on PATH.
set -euo pipefail

if [ "${1:-}" != --in-namespace ]; then
	if [ $# = 0 ]; then
		echo "usage: $0 COMMAND [ARG...]" >&2
		exit 2
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "sid-run: needs root (a mount namespace and chroot)" >&2
		exit 1
	fi
	checkout=$(cd "$(dirname "$0")/.." && pwd)
	root=${USMBRIDGE_SID_ROOT:-$checkout/.cache/sid/root}
	if ! [ -x "$root/usr/bin/env" ]; then
		echo "sid-run: $root is not a Debian root (scripts/setup-46-sid.sh makes it)" >&2
		exit 1
	fi
	export USMBRIDGE_SID_ROOT=$root USMBRIDGE_SID_CHECKOUT=$checkout
	exec unshare --mount --propagation private -- "$BASH" "$0" --in-namespace "$@"
fi
shift

root=$USMBRIDGE_SID_ROOT
binds=("$USMBRIDGE_SID_CHECKOUT" "$PWD" "${TMPDIR:-/tmp}" "${XDG_CACHE_HOME:-${HOME:-/root}/.cache}")
if go=$(command -v go); then
	# One value a line, in this order; GOFLAGS may hold spaces.
	mapfile -t v < <("$go" env GOROOT GOMODCACHE GOCACHE GOFLAGS GOTOOLCHAIN GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOINSECURE)
	export GOROOT=${v[0]} GOMODCACHE=${v[1]} GOCACHE=${v[2]} GOFLAGS=${v[3]} GOTOOLCHAIN=${v[4]} GOPROXY=${v[5]} \
		GOSUMDB=${v[6]} GONOSUMDB=${v[7]} GOPRIVATE=${v[8]} GONOPROXY=${v[9]} GOINSECURE=${v[10]}
	binds+=("$GOROOT" "$GOMODCACHE" "$GOCACHE")
	export PATH="$GOROOT/bin:$PATH"
fi
mkdir -p "$root/proc" "$root/dev" "$root/sys"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
# Directories of the root's own that no bind may cover (a command run from
# /, /usr or /opt would otherwise see the host's instead).
own=(/bin /dev /etc /lib /lib64 /opt/pyversions /proc /sbin /sys /usr/bin /usr/include /usr/lib /var)
for d in "${binds[@]}"; do
	# A directory that does not exist on the host is not bound (a cache
	# not made yet); the root's own stays.
	[ -n "$d" ] && [ -d "$d" ] || continue
	d=$(realpath "$d")
	covers=0
	for o in "${own[@]}"; do
		[[ "$o/" != "${d%/}/"* ]] || covers=1
	done
	if [ "$covers" = 1 ]; then
		echo "sid-run: not showing the host's $d in the root: it would cover the root's own" >&2
		continue
	fi
	mkdir -p "$root$d"
	mount --bind "$d" "$root$d"
done
files=(/etc/ssl/certs/ca-certificates.crt "${SSL_CERT_FILE:-}" "${PIP_CERT:-}" "${REQUESTS_CA_BUNDLE:-}" /etc/pip.conf)
seen=" "
for f in "${files[@]}"; do
	[ -n "$f" ] && [ -f "$f" ] || continue
	f=$(realpath "$f")
	[[ "$seen" != *" $f "* ]] || continue
	seen+="$f "
	mkdir -p "$(dirname "$root$f")"
	# The target of a file bind mount is a file; sid's own stays underneath.
	[ -e "$root$f" ] || : >"$root$f"
	mount --bind "$f" "$root$f"
done
export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
unset USMBRIDGE_SID_CHECKOUT
exec chroot "$root" /bin/sh -c 'cd "$0" && exec "$@"' "$(pwd -P)" "$@"
