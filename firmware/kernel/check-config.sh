#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Lists every option of a Kconfig fragment whose value did not survive
# "make olddefconfig": Kconfig silently drops an option it does not know
# (a typo) or whose dependencies are not met, and resets a value outside
# its range, so a fragment can ask for a driver the built kernel lacks.
# Run after olddefconfig; a non-empty list fails the build.
#
# Usage: check-config.sh FRAGMENT DOTCONFIG [SRCDIR]
#   SRCDIR: the kernel source tree; when given, a dropped option is
#   reported as "no such option" or "dependencies not met".
# Fragment lines: CONFIG_X=VALUE, CONFIG_X=n or "# CONFIG_X is not set";
# other lines and comments are ignored.
# Exit status: 0 every option has its value; 1 some did not (one line
# each on stderr); 2 bad usage or an unreadable file.
set -uo pipefail

prog=check-config
usage()
{
	echo "usage: $0 FRAGMENT DOTCONFIG [SRCDIR]" >&2
	exit 2
}

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	usage
fi
frag=$1
dotconfig=$2
srcdir=${3:-}
for f in "$frag" "$dotconfig"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		echo "$prog: cannot read '$f'" >&2
		exit 2
	fi
done
if [ -n "$srcdir" ] && [ ! -f "$srcdir/Kconfig" ]; then
	echo "$prog: '$srcdir' is not a kernel source tree (no Kconfig)" >&2
	exit 2
fi

# One awk pass: read .config into a map (a "not set" line and no line at
# all both mean n), then compare each fragment option. Prints
# "NAME<TAB>WANTED<TAB>GOT" for each mismatch, "!DUP..." for an option the
# fragment sets twice to different values, "!BAD..." for a malformed line.
mismatches=$(awk '
	FNR == NR {
		if (match($0, /^CONFIG_[A-Za-z0-9_]+=/)) {
			name = substr($0, 1, RLENGTH - 1)
			have[name] = substr($0, RLENGTH + 1)
		} else if (match($0, /^# CONFIG_[A-Za-z0-9_]+ is not set$/)) {
			have[$2] = "n"
		}
		next
	}
	{
		line = $0
		sub(/[ \t\r]+$/, "", line)
		if (match(line, /^CONFIG_[A-Za-z0-9_]+=/)) {
			name = substr(line, 1, RLENGTH - 1)
			want = substr(line, RLENGTH + 1)
		} else if (match(line, /^# CONFIG_[A-Za-z0-9_]+ is not set$/)) {
			split(line, w, " ")
			name = w[2]
			want = "n"
		} else if (line ~ /^CONFIG_/) {
			printf "!BAD\t%d\t%s\n", FNR, line
			next
		} else {
			next
		}
		if ((name in seen) && seen[name] != want)
			printf "!DUP\t%s\t%s\t%s\n", name, seen[name], want
		seen[name] = want
		got = (name in have) ? have[name] : "n"
		if (got != want)
			printf "%s\t%s\t%s\t%s\n", name, want, got, \
				(name in have) ? "set" : "absent"
	}' "$dotconfig" "$frag") || { echo "$prog: awk failed" >&2; exit 2; }

[ -z "$mismatches" ] && exit 0

# why NAME: for an option missing from .config, whether Kconfig knows it.
why()
{
	local sym=${1#CONFIG_}
	[ -n "$srcdir" ] || { echo "unknown option or dependencies not met"; return; }
	if grep -rqE --include='Kconfig*' "^[[:space:]]*(menu)?config[[:space:]]+${sym}[[:space:]]*\$" \
		"$srcdir"; then
		echo "dependencies not met"
	else
		echo "no such option (typo?)"
	fi
}

n=0
while IFS=$'\t' read -r name want got state; do
	case "$name" in
	'!BAD') echo "$prog: $frag:$want: not an option line: $got" >&2 ;;
	'!DUP') echo "$prog: $want set twice in $frag ($got, then $state)" >&2 ;;
	*)
		if [ "$state" = absent ] && [ "$want" != n ]; then
			echo "$prog: $name: wanted $want, not in .config: $(why "$name")" >&2
		else
			echo "$prog: $name: wanted $want, got $got" >&2
		fi
		;;
	esac
	n=$((n + 1))
done <<<"$mismatches"
echo "$prog: $n option(s) of $frag did not survive in $dotconfig" >&2
exit 1
