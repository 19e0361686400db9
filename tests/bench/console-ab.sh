#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The console's cost, two microvm binaries side by side in one L1: the
# test guest (Debian's kernel, the test initramfs's boot scenario) prints
# its kernel messages on ttyS0, booted RUNS times under each binary,
# alternating (tests/bench/console-ab-l1.sh). Made to measure coalesced
# port I/O for the UART's transmit register (README "Console"): B runs
# with MICROVM_COALESCED_PIO=on, A with it off, unless --microvm-a names
# another binary (one built before the change). Per binary: the median guest time to /init
# and to its power-down, the console's bytes, the port reads and writes
# that exited to microvm and the writes KVM queued (--stats). Through
# tests/e2e/run-guest.sh: directly on a KVM host, else in one emulated L1
# (times then mean little alone; the two binaries' in one L1 compare).
#
# Usage: console-ab.sh [--microvm BIN] [--microvm-a BIN] [--runs N]
#        [--artifacts DIR] [--records FILE]
#   --microvm: B (default build/microvm)
# Stdout: the records, then a Markdown table. Exit: run-guest.sh's status.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"
art=$HERE/../../build/e2e-artifacts
a='' b=$HERE/../../build/microvm runs=4 records=''
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm-a) a=$2; shift 2 ;;
	--microvm) b=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--records) records=$2; shift 2 ;;
	*) echo "console-ab: unknown option '$1'" >&2; exit 1 ;;
	esac
done
e2e_need_counts console-ab "runs:$runs"
work=$(mktemp -d "${TMPDIR:-/tmp}/console-ab.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# B runs with the knob on (a TCG host's default is off), A with it off,
# or another binary as it is; distinct names in L1 (run-guest.sh copies
# each at its own path).
cp "$(realpath "$b")" "$work/microvm-b" || exit 1
if [ -n "$a" ]; then
	cp "$(realpath "$a")" "$work/microvm-a" && ka="a=$work/microvm-a" ||
		exit 1
else
	ka="a=$work/microvm-b=off"
fi
art=$(cd "$art" && pwd -P) || exit 1
MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --artifacts "$art" \
	--timeout $((300 + runs * 120)) -- "$HERE/console-ab-l1.sh" "$runs" \
	"$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$ka" \
	"b=$work/microvm-b=on" 2>"$work/stderr" | tr -d '\r' | grep '^AB ' |
	tee "$work/records"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || { echo "console-ab: status $status" >&2; tail -n 20 "$work/stderr" >&2; }
[ -z "$records" ] || cp "$work/records" "$records"
echo
echo "| median of the runs | A | B | B / A |"
echo "| --- | --- | --- | --- |"
for key in init end bytes io_in io_out coalesced; do
	for bin in a b; do
		awk -v bin="$bin" -v key="$key" '{
			ok = 0; v = ""
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "bin" && kv[2] == bin) ok = 1
				if (kv[1] == key) v = kv[2]
			}
			if (ok && v ~ /^[0-9.]+$/) print v
		}' "$work/records" | sort -g | awk '{ v[NR] = $1 } END {
			if (!NR) { print "-"; exit }
			print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
	done | paste -sd' ' | awk -v key="$key" '{
		r = "-"
		if ($1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $1 > 0)
			r = sprintf("%.3f", $2 / $1)
		printf "| %s | %s | %s | %s |\n", key, $1, $2, r }'
done
exit "$status"
