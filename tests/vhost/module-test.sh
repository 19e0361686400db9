#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The vhost-blk module in the nested harness's L1 (no L2 guest): copies
# vhost_blk.ko, the vhost core's modules of L1's kernel and
# vhost_blk_selftest into L1, where module-l1.sh loads them, runs the
# selftest on a file system file, a tmpfs file and a null_blk device
# (SIGKILL of a child mid-I/O included), rmmods, runs insmod/rmmod
# cycles and fails on any kernel "BUG:", "Oops" or "WARNING:".
# A module bug may take L1 down: that is a failure here, never retried.
#
# Usage: module-test.sh --module KO --selftest BIN [--artifacts DIR]
#                       [--cycles N]
# Exit status: 0 passed; 1 failed; 77 no module built for L1's kernel,
# no selftest, or no nested harness here.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$HERE/../e2e
art=$HERE/../../build/e2e-artifacts
ko=
selftest=
cycles=5

while [ $# -gt 0 ]; do
	case "$1" in
	--module) ko=$2; shift 2 ;;
	--selftest) selftest=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--cycles) cycles=$2; shift 2 ;;
	*) echo "module-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done

skip()
{
	echo "module-test: SKIP: $*"
	exit 77
}

[ -f "$art/kernel.stamp" ] ||
	skip "no nested-harness artifacts in $art (tests/e2e/prepare.sh)"
kver=$(head -n 1 "$art/kernel.stamp")
[ -n "$ko" ] && [ -f "$ko" ] ||
	skip "no vhost_blk.ko ('$ko'): cmake --build build --target" \
		"vhost-blk-module with linux-headers-$kver installed" \
		"(tests/install-deps.sh)"
[ -n "$selftest" ] && [ -x "$selftest" ] || skip "no selftest '$selftest'"
have=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
[ "$have" = "$kver" ] ||
	skip "$ko is built for '$have', L1 runs $kver (configure with" \
		"-DKERNEL_VERSION=$kver)"
core=$art/kernel/lib/modules/$kver/kernel/drivers/vhost
for m in vhost_iotlb vhost; do
	[ -f "$core/$m.ko" ] || skip "no $core/$m.ko in the artifacts"
done
command -v qemu-system-x86_64 >/dev/null ||
	skip "no qemu-system-x86_64 for the nested harness"

t0=$(date +%s.%N)
err=$(mktemp "${TMPDIR:-/tmp}/module-test.XXXXXX")
out=$(mktemp "${TMPDIR:-/tmp}/module-test.XXXXXX")
trap 'rm -f "$err" "$out"' EXIT
MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --mode nested \
	--artifacts "$art" --timeout 600 -- \
	"$HERE/module-l1.sh" --core "$core/vhost_iotlb.ko" \
	--core "$core/vhost.ko" --module "$ko" --selftest "$selftest" \
	--cycles "$cycles" >"$out" 2>"$err"
status=$?
t1=$(date +%s.%N)
cat "$out"
sed 's/^/module-test: stderr: /' "$err" >&2
echo "module-test: nested run took $(echo "$t1 - $t0" | bc) s" \
	"(status $status)"
case $status in
0) ;;
77) echo "module-test: SKIP: the nested harness cannot run here"; exit 77 ;;
255) if grep -q 'hung in L1' "$err"; then
		echo "module-test: FAIL: module-l1.sh hung in L1 (L1 watchdog)"
	else
		echo "module-test: FAIL: L1 died or stopped answering" \
			"(harness status 255; a module bug takes L1 down)"
	fi
	exit 1 ;;
*) echo "module-test: FAIL: module-l1.sh exited $status"; exit 1 ;;
esac
grep -q '^MODULE-TEST: PASS$' "$out" ||
	{ echo "module-test: FAIL: no PASS line from L1"; exit 1; }
echo "module-test: PASS"
