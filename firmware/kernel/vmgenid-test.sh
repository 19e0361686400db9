#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM generation ID across snapshot restores, end to end with the
# project's kernel (the only guest kernel here with the vmgenid driver):
# a busybox initramfs whose /init reports the ID, the ACPI event
# device's interrupt count and the kernel's reseeds; vmgenid-l1.sh boots
# it through the API, snapshots it and restores it twice. Nested when
# there is no /dev/kvm.
#
# Usage: vmgenid-test.sh --microvm BIN --kernel-dir DIR --artifacts DIR
# Exit: 0 pass, 1 fail, 77 skipped (no curl or busybox-static, or the
# mode cannot run).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$(cd "$here/../../tests/e2e" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$E2E_DIR/lib.sh"
microvm=
kdir=
art=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--kernel-dir) kdir=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	*) echo "vmgenid-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -x "$microvm" ] && [ -f "$kdir/bzImage" ] && [ -d "$art" ] ||
	{ echo "vmgenid-test: --microvm BIN, --kernel-dir DIR (with bzImage) and --artifacts DIR are required" >&2; exit 1; }
microvm=$(realpath "$microvm") kernel=$(realpath "$kdir/bzImage")
curl=$(command -v curl) ||
	{ echo "vmgenid-test: SKIP: no curl (apt-get install curl)"; exit 77; }
e2e_static_busybox vmgenid-test
work=$(mktemp -d "${TMPDIR:-/tmp}/vmgenid-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

root=$work/initrd
e2e_busybox_tree "$root" ||
	{ echo "vmgenid-test: cannot make $root" >&2; exit 1; }
# The ID's 16 bytes at LAYOUT_VMGENID_ADDR (src/vmm/x86_64/layout.h),
# read through /dev/mem (reserved memory, which STRICT_DEVMEM allows).
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
if ls /sys/bus/acpi/drivers/vmgenid 2>/dev/null | grep -q ':'; then
	echo "VG-DRIVER: bound"
else
	echo "VG-DRIVER: none; ACPI drivers: $(ls /sys/bus/acpi/drivers | tr '\n' ' ')"
fi
# A fork reseeds only a ready RNG: /dev/random blocks until it is (the
# command line trusts the CPU's RDRAND; without it the kernel gathers
# timer jitter).
head -c 1 /dev/random >/dev/null
echo "VG-RNG: ready; rdrand $(grep -cw rdrand /proc/cpuinfo)"
last=
i=0
while :; do
	id="$(devmem 0xef000 64)-$(devmem 0xef008 64)"
	ev=$(awk '/ACPI:Ged/ { print $2 }' /proc/interrupts)
	now="id $id events ${ev:-none} reseeds $(dmesg | grep -c 'virtual machine fork') rngready $(dmesg | grep -c 'crng init done')"
	[ "$now" != "$last" ] && echo "VG-STATE $now" && last=$now
	echo "E2E-TICK $i"
	i=$((i + 1))
	sleep 0.1
done
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=1 \
		"$E2E_DIR/run-guest.sh" --artifacts "$art" --timeout 600 \
		--file "$curl" -- \
		/bin/sh "$here/vmgenid-l1.sh" "$microvm" "$curl" "$kernel" \
		"$work/initrd.gz" "$E2E_DIR/api-lib-l1.sh" >"$work/out" \
		2>"$work/err"
	status=$?
}
start=$SECONDS
e2e_boot vmgenid-test "$work/err"
cat "$work/out"
echo "vmgenid-test: status $status after $((SECONDS - start)) s; stderr:"
cat "$work/err"
[ "$status" -eq 77 ] && exit 77
grep -q '^VG-SUMMARY: 0 failure' "$work/out" && [ "$status" -eq 0 ] &&
	{ echo "vmgenid-test: PASS"; exit 0; }
echo "vmgenid-test: FAIL"
exit 1
