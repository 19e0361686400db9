#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CTest e2e-arm64.l1_kvm: boots the arm64 L1 machine the arm64 microvm will
# be tested in (QEMU TCG, virt with EL2 and GICv3, -cpu max, 2 vCPUs,
# 2 GiB, Debian's cloud arm64 kernel) and checks that inside it /dev/kvm
# exists and guest/kvm-probe.c gets a VM, an initialised vCPU and a GICv3.
# Prints the L1 console, then the costs it measured:
#   E2E-ARM64: init-at S      L1 kernel uptime when /init ran
#   E2E-ARM64: boot-wall S    host seconds from QEMU start to its exit
# Exit status: 0 pass, 1 fail, 77 skip (no qemu-system-aarch64, or the
# kernel, busybox or cross compiler cannot be had: prepare.sh).
#
# Usage: l1-kvm-test.sh --artifacts DIR [--timeout SECONDS] [--keep-log FILE]
#                       [--append KERNEL-ARGS]
# --append adds to L1's command line: `--append kvm-arm.mode=none` turns
# L1's KVM off, and the test must then fail ("no /dev/kvm in L1").
set -uo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QEMU=${MICROVM_E2E_ARM64_QEMU:-qemu-system-aarch64}
art='' limit=300 keep='' extra=''

die()
{
	echo "l1-kvm-test: FAIL: $*"
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--artifacts) art=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--keep-log) keep=$2; shift 2 ;;
	--append) extra=" $2"; shift 2 ;;
	*) echo "l1-kvm-test: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$art" ] || { echo "l1-kvm-test: --artifacts DIR is required" >&2; exit 2; }
case "$limit" in
''|*[!0-9]*) echo "l1-kvm-test: bad --timeout '$limit'" >&2; exit 2 ;;
esac

command -v "$QEMU" >/dev/null 2>&1 || {
	echo "l1-kvm-test: SKIP: no $QEMU (apt-get install qemu-system-arm)"
	exit 77
}
"$DIR/prepare.sh" "$art"
rc=$?
[ $rc -eq 77 ] && { echo "l1-kvm-test: SKIP: prepare.sh could not get its inputs"; exit 77; }
[ $rc -eq 0 ] || die "prepare.sh exited $rc"

log=$(mktemp "${TMPDIR:-/tmp}/e2e-arm64-l1.XXXXXX")
trap 'rm -f "$log"' EXIT
start=$(date +%s.%N)
# -no-reboot: a panic (panic=-1) or reset ends QEMU instead of looping.
timeout -k 10 "$limit" "$QEMU" \
	-M virt,virtualization=on,gic-version=3 -cpu max -smp 2 -m 2048 \
	-accel tcg -nographic -no-reboot -monitor none -serial stdio \
	-kernel "$art/vmlinuz" -initrd "$art/l1.cpio.gz" \
	-append "console=ttyAMA0 panic=-1 rdinit=/init$extra" </dev/null >"$log" 2>&1
qrc=$?
end=$(date +%s.%N)
[ -z "$keep" ] || cp "$log" "$keep"
cat "$log"
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
init_at=$(sed -n 's/^ARM64-L1: init at \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
echo "E2E-ARM64: init-at ${init_at:-none}"
echo "E2E-ARM64: boot-wall $wall"

case $qrc in
124|137) die "L1 still ran after ${limit} s" ;;
esac
[ $qrc -eq 0 ] || die "qemu exited $qrc"
[ -n "$init_at" ] || die "L1 never reached /init"
grep -q 'ARM64-L1: /dev/kvm present' "$log" || die "no /dev/kvm in L1"
grep -q '^KVM-PROBE: PASS' "$log" ||
	die "KVM probe: $(grep '^KVM-PROBE: FAIL' "$log" | head -n 1)"
grep -q 'ARM64-L1: probe status 0' "$log" || die "kvm-probe exited non-zero"
grep -q 'ARM64-L1: done' "$log" || die "L1 /init did not finish"
echo "l1-kvm-test: PASS"
