# Sourced by scripts/setup-46-sid.sh: the Debian mirror the machine's own
# apt already uses, so that the project names no host. test/scripts_test.go
# runs apt_mirror on sample sources.

# apt_sources prints "URI SUITE" for every source of type deb in the apt
# configuration directory $1 (/etc/apt), in apt's order: sources.list, then
# sources.list.d/*.list and *.sources by name. One-line entries are
# "deb [options] URI SUITE [COMPONENT...]"; deb822 stanzas (*.sources) give
# Types, URIs and Suites, and "Enabled: no" turns one off. Comments and
# deb-src entries are skipped, and so are files apt ignores (other names).
apt_sources() {
	local dir=$1 f
	for f in "$dir/sources.list" "$dir"/sources.list.d/*; do
		[ -f "$f" ] || continue
		case $f in
		*.list)
			awk '{ sub(/#.*/, "") }
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) {
					while (i <= NF && $i !~ /\]$/)
						i++
					i++
				}
				if (i + 1 <= NF)
					print $i, $(i + 1)
			}' "$f"
			;;
		*.sources)
			awk 'function flush(  n, m, i, j, u, s) {
				if (types ~ /(^| )deb( |$)/ && enabled != "no") {
					n = split(uris, u, " ")
					m = split(suites, s, " ")
					for (i = 1; i <= n; i++)
						for (j = 1; j <= m; j++)
							print u[i], s[j]
				}
				types = uris = suites = enabled = field = ""
			}
			{ gsub(/\t/, " ") }
			/^ *#/ { next }
			/^ *$/ { flush(); next }
			/^[A-Za-z0-9-]+:/ {
				field = tolower(substr($0, 1, index($0, ":") - 1))
				val = substr($0, index($0, ":") + 1)
				if (field == "types") types = val
				else if (field == "uris") uris = val
				else if (field == "suites") suites = val
				else if (field == "enabled") { gsub(/ /, "", val); enabled = tolower(val) }
				next
			}
			/^ / {
				if (field == "types") types = types " " $0
				else if (field == "uris") uris = uris " " $0
				else if (field == "suites") suites = suites " " $0
			}
			END { flush() }' "$f"
			;;
		esac
	done
}

# apt_mirror prints the Debian archive the apt configuration in $1
# (default /etc/apt) uses: the URI, without a trailing slash, of the first
# deb source (apt_sources' order) whose suite is the release $2 (the
# host's codename: bookworm) or one of Debian's suite names (stable,
# testing, unstable, sid); the security, updates and backports suites and
# other vendors' repositories are not it. Only http, https and file URIs,
# which debootstrap reads. Fails, printing nothing, when there is none.
apt_mirror() {
	local dir=${1:-/etc/apt} codename=${2:-} uri suite
	while read -r uri suite; do
		case $uri in
		http://* | https://* | file:*) ;;
		*) continue ;;
		esac
		if [ "$suite" = "$codename" ] || [[ " stable testing unstable sid " == *" $suite "* ]]; then
			echo "${uri%/}"
			return 0
		fi
	done < <(apt_sources "$dir")
	return 1
}
