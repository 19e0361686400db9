#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Tests run-guest.sh itself, without the VMM under test: the "program" is
# a busybox script that runs guest/kvm-smoke.c's tiny guest (which must
# exit through port 0xf4 with 42) and exercises every channel the
# harness offers: arguments, stdin, an input file, stdout, stderr, a disk
# file written in place, and the exit status.
#
# Usage: harness-test.sh --artifacts DIR [--mode direct|nested|auto]
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
art=
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--artifacts) art=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "harness-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$art" ] || { echo "harness-test: --artifacts is required" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/harness-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cat >"$work/payload.sh" <<'PAYLOAD'
smoke=$1
input=$2
disk=$3
shift 3
"$smoke" 42
echo "smoke=$?"
IFS= read -r line
echo "stdin=[$line]"
echo "input=[$(cat "$input")]"
echo "args=[$1|$2]"
echo "to-stderr" >&2
printf 'WRITTEN-BY-GUEST' | dd of="$disk" conv=notrunc 2>/dev/null
exit 42
PAYLOAD
printf 'line one\nline two\n' >"$work/stdin"
echo "input file content" >"$work/input"
head -c 1048576 /dev/zero >"$work/disk.img"

cd "$work" || exit 1
"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
	--stdin stdin --disk-file disk.img -- \
	/bin/busybox sh payload.sh "$art/bin/kvm-smoke" "$work/input" \
	disk.img "two words" "it's" >out 2>err
status=$?
echo "harness-test: status $status; stdout:"
cat out
echo "harness-test: stderr:"
cat err
[ $status -ne 77 ] || exit 77

fails=0
expect()
{
	if ! grep -qxF -- "$2" "$1"; then
		echo "harness-test: FAIL: no line '$2' in $1"
		fails=$((fails + 1))
	fi
}
[ $status -eq 42 ] ||
	{ echo "harness-test: FAIL: status $status, expected 42"; fails=1; }
expect out "kvm-smoke: guest wrote 42 to port 0xf4"
expect out "smoke=42"
expect out "stdin=[line one]"
expect out "input=[input file content]"
expect out "args=[two words|it's]"
expect err "to-stderr"
if [ "$(head -c 16 disk.img)" != WRITTEN-BY-GUEST ]; then
	echo "harness-test: FAIL: the disk file did not come back written"
	fails=$((fails + 1))
fi
if [ "$(stat -c %s disk.img)" -ne 1048576 ]; then
	echo "harness-test: FAIL: the disk file changed size"
	fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "harness-test: PASS"
