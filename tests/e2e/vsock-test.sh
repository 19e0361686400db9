#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# e2e.vsock.*: the virtio-vsock device with Firecracker's hybrid host side
# against a real guest (the project's kernel, its AF_VSOCK driver built
# in) and real Unix-socket peers, one L1 boot (vsock-l1.sh), one microvm
# run per transport. Host-initiated: the Kata agent's "CONNECT 1024\n"
# replayed, 4 MiB echoed both ways, 64 connections at once, and a
# connection whose guest side never reads, which must push back within
# the guest's credit plus the Unix socket's buffer without growing
# microvm's memory. Guest-initiated: CID 2 port 1025 reaches the Unix
# listener <uds>_1025, 4 MiB both ways. Every byte is checked (the
# vsockpeer helper, guest/vsockpeer*.c); the guest checks itself too
# (guest/vsock-run.sh). Wants for each transport: microvm's status 0,
# "VSOCK-CHECK-END: 0 failed", every host check ok, the stall's bound and
# RSS growth, and --stats with no invalid packet, credit violation or
# bad buffer.
#
# Usage: vsock-test.sh --microvm BIN --artifacts DIR --kernel BZIMAGE
#        --exit-helper BIN [--transport T]... [--require-kernel]
#        [--mode MODE]
#   --transport  pci, mmio, pci-vhost or mmio-vhost (engine=vhost: the
#                kernel's vhost_vsock, AF_VSOCK on the host side);
#                repeatable, in order (default mmio)
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
BUILD_SH=$E2E_DIR/../../firmware/rootfs/build.sh
GUEST_BYTES=4194304
CREDIT=262144       # a Linux guest's vsock buf_alloc (its credit to us)
RSS_GROWTH_KB=4096  # microvm's VmRSS growth allowed across the stall

microvm='' art='' kernel='' helper='' require=0
transports=()
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--exit-helper) helper=$2; shift 2 ;;
	--transport) transports+=("$2"); shift 2 ;;
	--require-kernel) require=1; shift ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	# An empty word: CMake's $<TARGET_EXISTS:...> found no guest-kernel.
	'') shift ;;
	*) echo "vsock-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ -n "$kernel" ] && [ -n "$helper" ] ||
	{ echo "vsock-test: --microvm, --artifacts, --kernel and --exit-helper are required" >&2
	  exit 1; }
[ ${#transports[@]} -gt 0 ] || transports=(mmio)
if [ ! -f "$kernel" ]; then
	if [ $require = 1 ]; then
		echo "vsock-test: FAIL: no guest kernel '$kernel' (target guest-kernel)"
		exit 1
	fi
	echo "vsock-test: SKIP: no guest kernel '$kernel' (build target" \
		"guest-kernel, or set MICROVM_E2E_FIRMWARE_KERNEL)"
	exit 77
fi
microvm=$(realpath "$microvm") && kernel=$(realpath "$kernel") &&
	helper=$(realpath "$helper") && art=$(realpath "$art") || exit 1
peer=$art/bin/vsockpeer
[ -x "$peer" ] || { echo "vsock-test: FAIL: no $peer (prepare.sh)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vsock-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
fail()
{
	echo "vsock-test: FAIL: $*"
	fails=$((fails + 1))
}
pass()
{
	echo "vsock-test: ok: $*"
}

# One image for every transport: the guest reads its transport from
# /e2e/expect, so each run gets its own copy.
for t in "${transports[@]}"; do
	cat >"expect-$t" <<EXPECT
transport=${t%-vhost}
cid=3
bytes=$GUEST_BYTES
wait_s=300
EXPECT
	"$BUILD_SH" --size 16M --exit-helper "$helper" \
		--add "$E2E_DIR/guest/vsock-run.sh:/etc/microvm/run" \
		--add "$peer:/usr/bin/vsockpeer" \
		--add "expect-$t:/e2e/expect" "$work/root-$t.raw" >/dev/null ||
		{ echo "vsock-test: FAIL: build.sh"; exit 1; }
done

run_guest()
{
	local t args=()
	for t in "${transports[@]}"; do
		args+=(--disk-file "$work/root-$t.raw")
	done
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 800 "${args[@]}" \
		-- /bin/sh "$E2E_DIR/vsock-l1.sh" "$microvm" "$kernel" \
		"$work/root-@.raw" "$peer" "${transports[@]}" \
		>out.log 2>err.log
	status=$?
	sed 's/^/  | /' out.log
	sed 's/^/  ! /' err.log
}
start=$SECONDS
e2e_boot vsock-test err.log
[ $status -eq 77 ] && { echo "vsock-test: SKIP: run-guest.sh skipped"; exit 77; }
echo "vsock-test: run-guest.sh status $status after $((SECONDS - start)) s"

tr -d '\r' <out.log >out.txt
tr -d '\r' <err.log >err.txt
[ $status -eq 0 ] || fail "vsock-l1.sh status $status"
# check_run T: one microvm run's lines (they follow each other: the runs
# are in sequence).
check_run()
{
	local t=$1 got n line took wmem a b max
	# This run's lines: those after the run before's VSOCK-RUN.
	awk -v t="$t" '/^VSOCK-RUN: / { if ($2 == t) { printf "%s", buf
		print; exit } buf = ""; next } { buf = buf $0 "\n" }' \
		out.txt >"run-$t.txt"
	got=$(sed -n "s/^VSOCK-RUN: $t status \([0-9]*\) in .*/\1/p" "run-$t.txt")
	[ "$got" = 0 ] && pass "$t: microvm exit status 0" ||
		fail "$t: microvm exit status '${got:-none}', want 0"
	# engine=vhost: AF_VSOCK from L1, no CONNECT line to answer.
	local answered="answered OK <port>"
	[ "${t%-vhost}" = "$t" ] || answered=connected
	for what in "connect cid 2 port 1025: $GUEST_BYTES bytes" \
		"hwait port 1024:" \
		"hconnect port 1024: 1 connection(s) $answered" \
		"hconnect port 1024: 64 connection(s)" \
		"hconnect port 1030: 1 connection(s)"; do
		n=$(grep -cF "VSOCK-CHECK: ok $what" "run-$t.txt")
		[ "$n" -ge 1 ] && pass "$t: $what" ||
			fail "$t: no 'VSOCK-CHECK: ok $what'"
	done
	line=$(grep "^VSOCK-STALL-RSS: $t " "run-$t.txt")
	read -r took wmem a b < <(echo "$line" | sed -n \
		's/.* accepted \([0-9]*\) wmem \([0-9]*\) rss-before \([0-9]*\) rss-after \([0-9]*\)$/\1 \2 \3 \4/p')
	if [ -z "${b:-}" ]; then
		fail "$t: no stall measurement ('${line:-none}')"
		return
	fi
	# The guest never reads: the device may hand it its credit, the
	# Unix socket holds about one send buffer (unix_stream_sendmsg
	# overshoots it by up to a write), no more.
	max=$((CREDIT + 2 * wmem + 65536))
	[ "$took" -ge $CREDIT ] && [ "$took" -le $max ] &&
		pass "$t: the stalled connection took $took bytes ($CREDIT..$max)" ||
		fail "$t: the stalled connection took $took bytes, want $CREDIT..$max"
	[ $((b - a)) -le $RSS_GROWTH_KB ] &&
		pass "$t: microvm VmRSS $a -> $b kB across the stall" ||
		fail "$t: microvm VmRSS grew $a -> $b kB across the stall (> $RSS_GROWTH_KB kB)"
}
for t in "${transports[@]}"; do
	check_run "$t"
done
n=$(grep -c '^VSOCK-CHECK-END: 0 failed$' out.txt)
[ "$n" = ${#transports[@]} ] && pass "every guest passed every VSOCK-CHECK" ||
	fail "'VSOCK-CHECK-END: 0 failed' $n times, want ${#transports[@]}"
grep -h 'VSOCK-CHECK: FAIL\|VSOCK-ECHO: .* FAIL' out.txt | while read -r line; do
	echo "vsock-test: FAIL: $line"
done
grep -q 'VSOCK-CHECK: FAIL\|VSOCK-ECHO: .* FAIL' out.txt && fails=$((fails + 1))
grep -q 'Kernel panic' out.txt && fail "the guest kernel panicked"
n=$(grep -c 'VSOCK-ECHO: \(unix .*\|vsock port 1025\) echoed '"$GUEST_BYTES"' bytes' out.txt)
[ "$n" = ${#transports[@]} ] && pass "the Unix listener echoed the guest's $GUEST_BYTES bytes" ||
	fail "the Unix listener echoed $GUEST_BYTES bytes $n times, want ${#transports[@]}"
stats=$(grep 'microvm: stats vsock vsock: rst-sent' err.txt)
n=$(echo "$stats" | grep -c ' invalid 0 credit-violations 0 .* bad-bufs 0 ')
[ "$n" = ${#transports[@]} ] && pass "--stats: no invalid packet, credit violation or bad buffer" ||
	fail "--stats: $n clean vsock lines, want ${#transports[@]}: $stats"

[ $fails -eq 0 ] && { echo "vsock-test: PASS"; exit 0; }
echo "vsock-test: $fails failure(s)"
exit 1
