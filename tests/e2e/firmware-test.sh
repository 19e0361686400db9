#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project's guest kernel boots from a firmware/rootfs image with no
# initramfs (e2e.firmware.*): builds root.raw with build.sh, the guest
# check (guest/firmware-check.sh) as /etc/microvm/run and what the default
# boot must see in /e2e/expect; one run-guest.sh run (one L1 boot when
# nested) of firmware-l1.sh boots it three times, on 8 vCPUs with microvm's
# default command line, on 1 vCPU with a command after "--", and on 2 vCPUs
# with a command that panics the kernel (pvpanic). Checks the three exit
# statuses (3, 7, 122), every FW-CHECK line, the panic's pvpanic line, and on the host that
# the image is clean (init synced and remounted it read-only before the
# exit) and holds what the guest wrote.
#
# Usage: firmware-test.sh --microvm BIN --artifacts DIR --kernel BZIMAGE
#        --exit-helper BIN [--transport pci|mmio] [--require-kernel]
#        [--mode MODE]
#   --require-kernel  a missing kernel fails the test (the project builds
#                     it: target guest-kernel); without it the test skips
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
BUILD_SH=$E2E_DIR/../../firmware/rootfs/build.sh

microvm='' art='' kernel='' helper='' transport=pci require=0
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--exit-helper) helper=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--require-kernel) require=1; shift ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	# An empty word: CMake's $<TARGET_EXISTS:...> found no guest-kernel.
	'') shift ;;
	*) echo "firmware-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ -n "$kernel" ] && [ -n "$helper" ] ||
	{ echo "firmware-test: --microvm, --artifacts, --kernel and --exit-helper are required" >&2
	  exit 1; }
case "$transport" in
pci | mmio) ;;
*) echo "firmware-test: --transport pci|mmio, not '$transport'" >&2; exit 1 ;;
esac
if [ ! -f "$kernel" ]; then
	if [ $require = 1 ]; then
		echo "firmware-test: FAIL: no guest kernel '$kernel' (target guest-kernel)"
		exit 1
	fi
	echo "firmware-test: SKIP: no guest kernel '$kernel' (build target" \
		"guest-kernel, or set MICROVM_E2E_FIRMWARE_KERNEL)"
	exit 77
fi
microvm=$(realpath "$microvm") && kernel=$(realpath "$kernel") &&
	helper=$(realpath "$helper") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/firmware-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
fail()
{
	echo "firmware-test: FAIL: $*"
	fails=$((fails + 1))
}
pass()
{
	echo "firmware-test: ok: $*"
}

token=fw$$x$RANDOM
cat >expect <<EXPECT
cpus=8
transport=$transport
cmdline='console=ttyS0 root=/dev/vda rw'
status=3
EXPECT
"$BUILD_SH" --size 16M --exit-helper "$helper" \
	--add "$E2E_DIR/guest/firmware-check.sh:/etc/microvm/run" \
	--add expect:/e2e/expect "$work/root.raw" ||
	{ echo "firmware-test: FAIL: build.sh"; exit 1; }

run_guest()
{
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 500 --disk-file "$work/root.raw" \
		--file "$E2E_DIR/lost-wakeup.awk" \
		-- /bin/sh "$E2E_DIR/firmware-l1.sh" "$microvm" "$kernel" \
		"$work/root.raw" "$transport" "$token" >out.log 2>err.log
	status=$?
	sed 's/^/  | /' out.log
	sed 's/^/  ! /' err.log
}
start=$SECONDS
e2e_boot firmware-test err.log
[ $status -eq 77 ] && { echo "firmware-test: SKIP: run-guest.sh skipped"; exit 77; }
echo "firmware-test: run-guest.sh status $status after $((SECONDS - start)) s"

tr -d '\r' <out.log >out.txt
for run in default:3 cmdline:7 panic:122; do
	got=$(sed -n "s/^FW-RUN: ${run%:*} status \([0-9]*\) in .*/\1/p" out.txt |
		tail -n 1)
	[ "$got" = "${run#*:}" ] &&
		pass "${run%:*} boot: microvm exit status $got" ||
		fail "${run%:*} boot: microvm exit status '${got:-none}', want ${run#*:}"
done
[ $status -eq 0 ] || fail "firmware-l1.sh status $status"
n=$(grep -c '^FW-CHECK-END: 0 failed$' out.txt)
[ "$n" -ge 2 ] && pass "both guests passed every FW-CHECK" ||
	fail "FW-CHECK-END: 0 failed $n times, want 2"
grep '^FW-CHECK: FAIL' out.txt | while read -r line; do
	echo "firmware-test: FAIL: guest: ${line#FW-CHECK: FAIL }"
done
grep -q '^FW-CHECK: FAIL' out.txt && fails=$((fails + 1))
grep -q '^FW-PANIC: ok' out.txt && pass "panic boot: pvpanic line and a kernel panic on the console" ||
	fail "panic boot: $(grep '^FW-PANIC:' out.txt | tail -n 1)"
grep -q 'Kernel panic' out.txt && fail "a guest kernel panicked outside the panic boot"
grep '^FW-RUN-RETRY: ' out.txt | while read -r line; do
	e2e_count_retry firmware-test "boot in L1 again: ${line#FW-RUN-RETRY: }"
done

e2fsck -fn root.raw >fsck.log 2>&1 && pass "e2fsck -fn: image clean after both boots" ||
	{ sed 's/^/  fsck: /' fsck.log; fail "e2fsck -fn root.raw"; }
written=$(debugfs -R "cat /root/fw-written" root.raw 2>/dev/null)
[ "$written" = "$token and spaces" ] &&
	pass "/root/fw-written in the image: '$written'" ||
	fail "/root/fw-written is '$written', want '$token and spaces'"

[ $fails -eq 0 ] && { echo "firmware-test: PASS"; exit 0; }
echo "firmware-test: $fails failure(s)"
exit 1
