#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs.cli: microvm's command-line documentation has one source,
# docs/cli.txt, and everything made from it agrees with it and with the
# program:
#   - README.md's cli-doc regions are what docs/cli-doc.sh renders now
#     (after an edit of docs/cli.txt: docs/cli-doc.sh update VERSION_H);
#   - `microvm --help` prints what docs/cli-doc.sh renders;
#   - every long option of cli.c's getopt table and every --disk key its
#     parser takes is documented there, and nothing there is unknown to
#     the program;
#   - the man page has each option and renders without a groff warning;
#   - the bash completion completes an option, an option's values, a
#     --disk key.
# Usage: cli-doc-test.sh MICROVM GEN_DIR
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: cli-doc-test.sh MICROVM GEN_DIR" >&2; exit 2; }
microvm=$1 gen=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/docs/cli-doc.sh
src=$top/docs/cli.txt
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# README.md's regions.
if sh "$doc" readme "$gen/microvm_version.h" >"$tmp/README.md" &&
	cmp -s "$tmp/README.md" "$top/README.md"; then
	ok "README.md's usage regions match docs/cli.txt"
else
	diff -u "$top/README.md" "$tmp/README.md" | head -n 40
	bad "README.md's usage regions differ from docs/cli.txt (run: docs/cli-doc.sh update $gen/microvm_version.h)"
fi

# --help.
"$microvm" --help >"$tmp/help.txt"
sh "$doc" help "$gen/microvm_version.h" >"$tmp/help.want"
if cmp -s "$tmp/help.txt" "$tmp/help.want"; then
	ok "microvm --help is docs/cli.txt's ($(wc -l <"$tmp/help.txt") lines)"
else
	diff -u "$tmp/help.want" "$tmp/help.txt" | head -n 20
	bad "microvm --help differs from docs/cli.txt's rendering"
fi

# The program's options and disk keys against the source's.
sed -n 's/^[[:space:]]*{ "\([a-z0-9-]*\)", \(required\|no\)_argument.*/\1/p' \
	"$top/src/vmm/cli.c" | sort -u >"$tmp/prog-opts"
grep '^%option ' "$src" | grep -o -- '--[a-z0-9-]*' | sed 's/^--//' |
	sort -u >"$tmp/doc-opts"
sed -n '/^static int disk_rl_key(/,/^static int memory_keys(/p' \
	"$top/src/vmm/cli.c" | grep -o 'strcmp(key, "[a-z0-9-]*")' |
	sed 's/.*"\(.*\)")/\1/' | sort -u >"$tmp/prog-keys"
grep '^%key ' "$src" | sed 's/^%key //' | tr ',' '\n' |
	sed -n 's/^ *\[*\([a-z0-9-]*\)=.*/\1/p' | sort -u >"$tmp/doc-keys"
for kind in opts keys; do
	[ -s "$tmp/prog-$kind" ] || bad "no $kind found in src/vmm/cli.c (has its shape changed?)"
	missing=$(comm -23 "$tmp/prog-$kind" "$tmp/doc-$kind" | tr '\n' ' ')
	extra=$(comm -13 "$tmp/prog-$kind" "$tmp/doc-$kind" | tr '\n' ' ')
	[ -z "$missing" ] || bad "in cli.c, not in docs/cli.txt ($kind): $missing"
	[ -z "$extra" ] || bad "in docs/cli.txt, unknown to cli.c ($kind): $extra"
	[ -n "$missing$extra" ] ||
		ok "$(wc -l <"$tmp/prog-$kind") $kind of cli.c, each documented"
done

# The man page.
man=$gen/microvm.1
if [ ! -s "$man" ]; then
	bad "no man page $man"
else
	missing=
	sed 's/\\-/-/g' "$man" >"$tmp/man.txt"
	while read -r o; do
		grep -q -- "--$o\\b" "$tmp/man.txt" || missing="$missing --$o"
	done <"$tmp/prog-opts"
	[ -z "$missing" ] && ok "the man page names every option" ||
		bad "the man page lacks$missing"
	grep -q "^\.TH MICROVM 1 .*microvm $("$microvm" --version |
		sed -n 's/^microvm v\([0-9.]*\) .*/\1/p')" "$man" &&
		ok "the man page carries --version's version" ||
		bad "the man page's .TH has not --version's version"
	if command -v groff >/dev/null; then
		w=$(groff -man -ww -z "$man" 2>&1)
		[ -z "$w" ] && ok "groff -man -ww: no warning" ||
			bad "groff warns: $w"
		n=$(groff -man -Tutf8 "$man" 2>/dev/null | grep -c -- '--disk')
		[ "$n" -gt 2 ] && ok "the man page renders ($n lines name --disk)" ||
			bad "the rendered man page names --disk $n times"
	else
		bad "no groff to check the man page with (tests/install-deps.sh installs groff-base)"
	fi
fi

# Bash completion: COMPREPLY for a few command lines.
comp=$gen/microvm.bash-completion
complete_line()
{
	bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_microvm
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" 2>&1 | tr '\n' ' '
}
if ! bash -n "$comp"; then
	bad "the completion script does not parse"
else
	got=$(complete_line microvm --ker)
	[ "$got" = "--kernel " ] && ok "completion: --ker -> $got" ||
		bad "completion: --ker gave '$got'"
	got=$(complete_line microvm --seccomp "")
	[ "$got" = "on kill log off " ] && ok "completion: --seccomp -> $got" ||
		bad "completion: --seccomp gave '$got'"
	got=$(complete_line microvm --disk root.raw,cache=none,que)
	[ "$got" = "root.raw,cache=none,queues= root.raw,cache=none,queue-size= " ] &&
		ok "completion: --disk ...,que -> $got" ||
		bad "completion: --disk root.raw,cache=none,que gave '$got'"
fi

[ $fails -eq 0 ] || { echo "docs.cli: $fails failed"; exit 1; }
echo "docs.cli: PASS"
