#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A guest kernel panic must not look like success: the guest loads the
# pvpanic driver, binds it to microvm's ACPI QEMU0001 device (capability
# 3 read from port 0x505), then panics (`echo c > /proc/sysrq-trigger`)
# with panic=-1 on its command line, so that a VMM without pvpanic sees a
# reboot and exits 0. Checks: microvm's exit status (122 by default), the
# line "microvm: guest panicked (pvpanic)" on stderr (when 122 is
# expected), the guest's panic on the console, and the driver binding.
# The kernel and initramfs are parameters, so the same test runs with
# Debian's modular kernel (pvpanic.order in prepare.sh's initramfs) and
# with a kernel that has the driver built in.
#
# Usage: panic-test.sh --microvm BIN --artifacts DIR [--kernel FILE]
#        [--initrd FILE] [--cpus N] [--status N] [--mode MODE]
#   --kernel, --initrd  default: DIR/vmlinuz and DIR/l2-initrd.cpio.gz;
#                       the initrd needs busybox at /bin/busybox with its
#                       applet links; guest/panic-init.sh becomes /init
#   --status N          expected exit status (default 122; 0 shows what a
#                       VMM without pvpanic does: the panic reboots)
# Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
PANIC_LINE="microvm: guest panicked (pvpanic)"

microvm=
art=
kernel=
initrd=
cpus=2
want_status=122
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--status) want_status=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "panic-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "panic-test: --microvm and --artifacts are required" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
kernel=$(realpath "${kernel:-$art/vmlinuz}") || exit 1
initrd=$(realpath "${initrd:-$art/l2-initrd.cpio.gz}") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/panic-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# The initramfs with panic-init.sh as /init (the kernel unpacks
# concatenated archives, later files win).
mkdir -p "$work/extra"
install -m 755 "$E2E_DIR/guest/panic-init.sh" "$work/extra/init"
cp "$initrd" "$work/initrd.cpio.gz"
(cd "$work/extra" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip >>"$work/initrd.cpio.gz"

# No "quiet": the panic's own lines are part of what is checked.
cmdline="console=ttyS0 panic=-1 loglevel=4"
vm_args=(--kernel "$kernel" --initrd "$work/initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus "$cpus" --memory 256M --timeout 240)
# --verbose twice: "exit: seen by main at T ms" and "exit: teardown done
# at T ms", reported below (emulated timings: for information only).
[ "$want_status" -ne 122 ] || vm_args+=(--verbose --verbose)

run_guest()
{
	echo "panic-test: $microvm ${vm_args[*]}"
	start=$(date +%s.%N)
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" "${mode_args[@]}" \
		--artifacts "$art" --timeout 420 -- "$microvm" "${vm_args[@]}" \
		2> >(tee "$work/stderr" >&2) | tee "$work/console"
	status=${PIPESTATUS[0]}
	wait
	elapsed=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
	echo "panic-test: exit status $status after $elapsed s"
}

e2e_boot panic-test "$work/stderr"
[ "$status" -ne 77 ] || exit 77
fails=0
fail()
{
	echo "panic-test: FAIL: $*"
	fails=$((fails + 1))
}

tr -d '\r' <"$work/console" >"$work/console.txt"
console=$work/console.txt
[ "$status" -eq "$want_status" ] ||
	fail "exit status $status, expected $want_status"
# The guest's lines come through the kernel log: "[ T] E2E-PANIC: ...".
grep -q 'E2E-PANIC: trigger$' "$console" &&
	grep -q 'sysrq: Trigger a crash' "$console" ||
	fail "the guest did not reach the panic trigger"
grep -q 'Kernel panic - not syncing: sysrq triggered crash' "$console" ||
	fail "no kernel panic on the console"
if grep -q 'E2E-PANIC: still running' "$console"; then
	fail "the guest kept running after the panic"
fi
if [ "$want_status" -eq 122 ]; then
	grep -q 'E2E-PANIC: bound QEMU0001:[0-9]* capability 3 events 3$' \
		"$console" ||
		fail "the pvpanic driver did not bind with capability 3:" \
			"$(grep 'E2E-PANIC: bound\|E2E-PANIC: no' "$console")"
	[ "$(grep -cxF "$PANIC_LINE" "$work/stderr")" -eq 1 ] ||
		fail "stderr lacks exactly one \"$PANIC_LINE\""
else
	if grep -qF "$PANIC_LINE" "$work/stderr"; then
		fail "\"$PANIC_LINE\" with status $status"
	fi
fi

seen=$(sed -n 's/^microvm: exit: seen by main at \([0-9.]*\) ms$/\1/p' \
	"$work/stderr")
done_ms=$(sed -n 's/^microvm: exit: teardown done at \([0-9.]*\) ms$/\1/p' \
	"$work/stderr")
if [ -n "$seen" ] && [ -n "$done_ms" ]; then
	echo "panic-test: exit request seen at $seen ms, teardown done at" \
		"$done_ms ms: $(awk "BEGIN { printf \"%.1f\", $done_ms - $seen }")" \
		"ms to leave"
fi

if [ $fails -ne 0 ]; then
	echo "panic-test: $fails check(s) failed"
	exit 1
fi
echo "panic-test: PASS"
