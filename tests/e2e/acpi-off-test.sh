#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A guest booted as Kata Containers boots Firecracker's (e2e.firmware.
# acpi_off): the project's kernel, 2 vCPUs, Kata's kernel parameters
# (acpi=off among them) and 9 virtio-mmio disks (the root, 7 empty ones
# and a last one, whose slot sits on an ISA interrupt line), booted twice
# in one L1 (acpi-off-l1.sh): from microvm's command line and from a
# Firecracker config file (--no-api --config-file). With ACPI off
# the guest must find its CPUs in the MP table and its disks through the
# virtio_mmio.device= parameters microvm appends. guest/acpi-off-check.sh
# checks inside (ACPIOFF-CHECK lines); this script wants each boot's
# status 0 together with "ACPIOFF-CHECK-END: 0 failed" (a kernel panic with
# panic=1 reboot=k would also end with status 0, through the i8042
# reset), no kernel panic, and on the host the word the guest wrote on
# the last disk.
#
# Usage: acpi-off-test.sh --microvm BIN --artifacts DIR --kernel BZIMAGE
#        --exit-helper BIN [--require-kernel] [--mode MODE]
#   --require-kernel  a missing kernel fails the test (the project builds
#                     it: target guest-kernel); without it the test skips
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
BUILD_SH=$E2E_DIR/../../firmware/rootfs/build.sh
MIDDLE=7       # empty disks between the root and the last one
LAST_GSI=5     # slot 8's interrupt (src/vmm/x86_64/layout.h)

microvm='' art='' kernel='' helper='' require=0
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--exit-helper) helper=$2; shift 2 ;;
	--require-kernel) require=1; shift ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	# An empty word: CMake's $<TARGET_EXISTS:...> found no guest-kernel.
	'') shift ;;
	*) echo "acpi-off-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ -n "$kernel" ] && [ -n "$helper" ] ||
	{ echo "acpi-off-test: --microvm, --artifacts, --kernel and --exit-helper are required" >&2
	  exit 1; }
if [ ! -f "$kernel" ]; then
	if [ $require = 1 ]; then
		echo "acpi-off-test: FAIL: no guest kernel '$kernel' (target guest-kernel)"
		exit 1
	fi
	echo "acpi-off-test: SKIP: no guest kernel '$kernel' (build target" \
		"guest-kernel, or set MICROVM_E2E_FIRMWARE_KERNEL)"
	exit 77
fi
microvm=$(realpath "$microvm") && kernel=$(realpath "$kernel") &&
	helper=$(realpath "$helper") && art=$(realpath "$art") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/acpi-off-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
fail()
{
	echo "acpi-off-test: FAIL: $*"
	fails=$((fails + 1))
}
pass()
{
	echo "acpi-off-test: ok: $*"
}

token=acpioff$$x$RANDOM
word="written-$token"
cat >expect <<EXPECT
cpus=2
disks=$((MIDDLE + 2))
token=$token
gsi=$LAST_GSI
word=$word
EXPECT
"$BUILD_SH" --size 16M --exit-helper "$helper" \
	--add "$E2E_DIR/guest/acpi-off-check.sh:/etc/microvm/run" \
	--add expect:/e2e/expect "$work/root.raw" ||
	{ echo "acpi-off-test: FAIL: build.sh"; exit 1; }
{ echo "$token"; } | dd of=last.raw conv=notrunc 2>/dev/null &&
	truncate -s 2M last.raw || { echo "acpi-off-test: FAIL: last.raw"; exit 1; }

run_guest()
{
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 500 \
		--disk-file "$work/root.raw" --disk-file "$work/last.raw" \
		-- /bin/sh "$E2E_DIR/acpi-off-l1.sh" "$microvm" "$kernel" \
		"$work/root.raw" "$work/last.raw" "$MIDDLE" >out.log 2>err.log
	status=$?
	sed 's/^/  | /' out.log
	sed 's/^/  ! /' err.log
}
start=$SECONDS
e2e_boot acpi-off-test err.log
[ $status -eq 77 ] && { echo "acpi-off-test: SKIP: run-guest.sh skipped"; exit 77; }
echo "acpi-off-test: run-guest.sh status $status after $((SECONDS - start)) s"

tr -d '\r' <out.log >out.txt
[ $status -eq 0 ] || fail "acpi-off-l1.sh status $status"
for run in cli config; do
	got=$(sed -n "s/^ACPIOFF-RUN: $run status \([0-9]*\) in .*/\1/p" out.txt)
	[ "$got" = 0 ] && pass "$run boot: microvm exit status 0" ||
		fail "$run boot: microvm exit status '${got:-none}', want 0"
done
n=$(grep -c '^ACPIOFF-CHECK-END: 0 failed$' out.txt)
[ "$n" = 2 ] && pass "both guests passed every ACPIOFF-CHECK" ||
	fail "'ACPIOFF-CHECK-END: 0 failed' $n times, want 2 (the guests' checks did not all run and pass)"
grep '^ACPIOFF-CHECK: FAIL' out.txt | while read -r line; do
	echo "acpi-off-test: FAIL: guest: ${line#ACPIOFF-CHECK: FAIL }"
done
grep -q '^ACPIOFF-CHECK: FAIL' out.txt && fails=$((fails + 1))
grep -q 'Kernel panic' out.txt && fail "the guest kernel panicked"
got=$(dd if=last.raw bs=512 skip=2048 count=1 2>/dev/null | tr -d '\0' |
	head -n 1)
[ "$got" = "$word" ] && pass "last.raw holds '$got' at 1 MiB" ||
	fail "last.raw holds '$got' at 1 MiB, want '$word'"

[ $fails -eq 0 ] && { echo "acpi-off-test: PASS"; exit 0; }
echo "acpi-off-test: $fails failure(s)"
exit 1
