#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Renders docs/cli.txt, the one source of microvm's command-line
# documentation (docs/cli-doc.awk does the work):
#   cli-doc.sh help-c VERSION_H       cli.c's usage text (C), to stdout
#   cli-doc.sh help VERSION_H         --help's text, to stdout
#   cli-doc.sh man VERSION_H          the man page microvm.1, to stdout
#   cli-doc.sh completion VERSION_H   bash completion, to stdout
#   cli-doc.sh readme VERSION_H [README]
#                                     README.md with its cli-doc regions
#                                     rendered, to stdout
#   cli-doc.sh update VERSION_H       rewrite README.md's regions in place
# VERSION_H: the build's gen/microvm_version.h (MICROVM_VERSION).
# AWK: the awk to run (default awk; the build passes the one CMake found).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$dir")
[ $# -ge 2 ] || {
	echo "usage: cli-doc.sh help-c|help|man|completion|readme|update VERSION_H [README]" >&2
	exit 2
}
mode=$1 version_h=$2
[ -f "$version_h" ] || { echo "cli-doc.sh: no $version_h" >&2; exit 2; }
headers="$version_h $top/src/vmm/config.h $top/src/api/fc_config.h"
case $mode in
update)
	tmp=$(mktemp "$top/README.md.XXXXXX")
	if "${AWK:-awk}" -v mode=readme -f "$dir/cli-doc.awk" $headers "$dir/cli.txt" \
		"$top/README.md" >"$tmp"; then
		if cmp -s "$tmp" "$top/README.md"; then
			rm -f "$tmp"
		else
			chmod 644 "$tmp"
			mv "$tmp" "$top/README.md"
			echo "cli-doc.sh: README.md updated"
		fi
	else
		rm -f "$tmp"
		exit 1
	fi
	;;
readme)
	exec "${AWK:-awk}" -v mode=readme -f "$dir/cli-doc.awk" $headers "$dir/cli.txt" \
		"${3:-$top/README.md}"
	;;
help-c|help|man|completion)
	exec "${AWK:-awk}" -v mode="$mode" -f "$dir/cli-doc.awk" $headers "$dir/cli.txt"
	;;
*)
	echo "cli-doc.sh: unknown mode '$mode'" >&2
	exit 2
	;;
esac
