#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad microvm-jailer command lines, one table row each: the jailer must
# exit non-zero with exactly one stderr line, "microvm-jailer: ...",
# holding the row's text (which names the bad value), and leave no jail
# behind. @EXEC@ is a regular file, @BASE@ an empty directory; rows
# marked root get past parsing into the steps that need root (skipped
# without it). --help must exit 0 with the usage on stdout.
# Usage: bad-args.sh --jailer BIN
# Exit: 0 pass, 1 fail.
set -uo pipefail

[ "${1:-}" = --jailer ] && [ -n "${2:-}" ] ||
	{ echo "bad-args: usage: $0 --jailer BIN" >&2; exit 1; }
jailer=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/jailer-bad-args.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/base"
printf '#!/bin/sh\n' >"$work/exec"
chmod 755 "$work/exec"
long=$(printf 'a%.0s' {1..65})
ok="--exec-file @EXEC@ --uid 1000 --gid 1000 --chroot-base-dir @BASE@"

# name|root|args|expected text in the one line
rows=(
"no-args|-||--id is required"
"unknown-option|-|--id a --bogus $ok|unknown option '--bogus'"
"id-bad-char|-|--id a_b $ok|--id: 'a_b' may hold only letters, digits and '-'"
"id-too-long|-|--id $long $ok|--id: '$long' must be 1 to 64 characters"
"id-empty|-|--id= $ok|--id: '' must be 1 to 64 characters"
"id-twice|-|--id a --id b $ok|--id given twice ('--id')"
"uid-not-number|-|--id a --exec-file x --uid abc --gid 1|--uid: 'abc' is not a number"
"uid-negative|-|--id a --exec-file x --uid -1 --gid 1|--uid: '-1' is not a number"
"uid-max|-|--id a --exec-file x --uid 4294967295 --gid 1|--uid: '4294967295' is not a number"
"gid-overflow|-|--id a --exec-file x --uid 1 --gid 99999999999|--gid: '99999999999' is not a number"
"gid-missing|-|--id a --exec-file x --uid 1|--gid is required"
"exec-missing|-|--id a --uid 1 --gid 1|--exec-file is required"
"exec-trailing-slash|-|--id a --exec-file /bin/ --uid 1 --gid 1|--exec-file: '/bin/' does not name a file"
"value-missing|-|--id a $ok --netns|--netns needs a value"
"flag-with-value|-|--id a $ok --daemonize=yes|--daemonize takes no value ('--daemonize=yes')"
"cgroup-version-3|-|--id a $ok --cgroup-version 3|--cgroup-version: '3' is not 1 or 2"
"cgroup-no-value|-|--id a $ok --cgroup cpu.shares|--cgroup: 'cpu.shares' is not <controller>.<file>=<value>"
"cgroup-no-controller|-|--id a $ok --cgroup shares=5|--cgroup: 'shares=5' is not <controller>.<file>=<value>"
"cgroup-path|-|--id a $ok --cgroup ../cpu.shares=5|--cgroup: '../cpu.shares=5' is not <controller>.<file>=<value>"
"parent-cgroup-absolute|-|--id a $ok --parent-cgroup /x|--parent-cgroup: '/x' must be a relative path"
"parent-cgroup-dotdot|-|--id a $ok --parent-cgroup a/../b|--parent-cgroup: 'a/../b' has an empty, '.' or '..' component"
"rlimit-unknown|-|--id a $ok --resource-limit memlock=5|--resource-limit: unknown resource in 'memlock=5'"
"rlimit-not-number|-|--id a $ok --resource-limit fsize=1k|--resource-limit: 'fsize=1k' is not <resource>=<number>"
"rlimit-nofile-zero|-|--id a $ok --resource-limit no-file=0|--resource-limit: 'no-file=0' leaves no file descriptor"
"exec-file-absent|-|--id a --exec-file @BASE@/none --uid 1 --gid 1 --chroot-base-dir @BASE@|--exec-file: '@BASE@/none': No such file or directory"
"exec-file-directory|-|--id a --exec-file @BASE@ --uid 1 --gid 1 --chroot-base-dir @BASE@|--exec-file: '@BASE@' is not a regular file"
"base-absent|-|--id a --exec-file @EXEC@ --uid 1 --gid 1 --chroot-base-dir @BASE@/none|--chroot-base-dir: '@BASE@/none': No such file or directory"
"base-file|-|--id a --exec-file @EXEC@ --uid 1 --gid 1 --chroot-base-dir @EXEC@|--chroot-base-dir: '@EXEC@' is not a directory"
"netns-absent|-|--id a $ok --netns @BASE@/none|--netns: '@BASE@/none': No such file or directory"
"netns-not-a-namespace|-|--id a $ok --netns @EXEC@|--netns: '@EXEC@' is not a network namespace"
"cgroup-v1-no-hierarchy|root|--id a $ok --cgroup nosuch.knob=1|--cgroup nosuch.knob: no cgroup v1 hierarchy has the 'nosuch' controller"
)

fails=0
for row in "${rows[@]}"; do
	IFS='|' read -r name needs args want <<<"$row"
	if [ "$needs" = root ] && [ "$(id -u)" != 0 ]; then
		echo "bad-args: $name: skipped (needs root)"
		continue
	fi
	args=${args//@EXEC@/$work/exec}
	args=${args//@BASE@/$work/base}
	want=${want//@EXEC@/$work/exec}
	want=${want//@BASE@/$work/base}
	# shellcheck disable=SC2086 # the row's words, on purpose
	"$jailer" $args >"$work/out" 2>"$work/err"
	st=$?
	lines=$(wc -l <"$work/err")
	if [ "$st" -ne 0 ] && [ "$lines" = 1 ] &&
		grep -qF "microvm-jailer: $want" "$work/err" &&
		[ ! -s "$work/out" ]; then
		echo "bad-args: $name: ok ($(cat "$work/err"))"
	else
		echo "bad-args: $name: FAIL: status $st, $lines line(s): $(cat "$work/err")"
		fails=$((fails + 1))
	fi
	# A parse error touches nothing; a later failure leaves at most
	# the jail's directory, never a pid file.
	if [ -n "$(find "$work/base" -name '*.pid')" ]; then
		echo "bad-args: $name: FAIL: a pid file was left"
		fails=$((fails + 1))
	fi
	rm -rf "${work:?}/base" && mkdir "$work/base"
done

"$jailer" --help >"$work/out" 2>"$work/err"
st=$?
if [ "$st" = 0 ] && grep -q '^usage: microvm-jailer --id ID' "$work/out" &&
	[ ! -s "$work/err" ]; then
	echo "bad-args: help: ok"
else
	echo "bad-args: help: FAIL: status $st"
	fails=$((fails + 1))
fi
if [ "$fails" -gt 0 ]; then
	echo "bad-args: $fails of $((${#rows[@]} + 1)) failed"
	exit 1
fi
echo "bad-args: PASS (${#rows[@]} rows and --help)"
