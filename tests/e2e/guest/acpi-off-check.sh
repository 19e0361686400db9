#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The check that acpi-off-test.sh puts into root.raw as /etc/microvm/run:
# the guest booted with Kata Containers' kernel parameters (acpi=off among
# them), so it found its CPUs through the MP table and its virtio-mmio
# disks through virtio_mmio.device= on the command line, not through
# ACPI. Prints "ACPIOFF-CHECK: ok|FAIL what" lines and a last line
# "ACPIOFF-CHECK-END: N failed"; exits 0 when all passed, else 1.
#
# Expects (file /e2e/expect, written by the host): cpus, disks (how many
# vd* there must be), token (the first line of the last disk, the one on
# an ISA interrupt line), gsi (that disk's interrupt), word (what to write
# on it).
# Checks: nproc and the online CPUs; the kernel says ACPI is off, read
# the MP table and logged no firmware complaint; exactly DISKS disks, all
# virtio-mmio devices from the command line (under virtio-mmio-cmdline,
# not ACPI's LNRO0005); the last disk is found by its token, written at
# 1 MiB and read back past the page cache, and its interrupt line GSI
# counted interrupts.
fails=0
check()
{
	if [ "$1" = 0 ]; then
		echo "ACPIOFF-CHECK: ok $2"
	else
		echo "ACPIOFF-CHECK: FAIL $2"
		fails=$((fails + 1))
	fi
}

. /e2e/expect || { echo "ACPIOFF-CHECK: FAIL no /e2e/expect"; exit 1; }

n=$(nproc)
check "$([ "$n" = "$cpus" ]; echo $?)" "nproc $n, want $cpus"
online=$(cat /sys/devices/system/cpu/online)
check "$([ "$online" = "0-$((cpus - 1))" ]; echo $?)" "cpus online: $online"
check "$(grep -qw 'acpi=off' /proc/cmdline; echo $?)" \
	"acpi=off on /proc/cmdline: $(cat /proc/cmdline)"
nparam=$(tr ' ' '\n' </proc/cmdline | grep -c '^virtio_mmio\.device=')
check "$([ "$nparam" = "$disks" ]; echo $?)" \
	"$nparam virtio_mmio.device= parameters, want $disks"
check "$([ ! -d /sys/firmware/acpi/tables ]; echo $?)" \
	"no ACPI tables in use (/sys/firmware/acpi/tables absent)"
mp=$(dmesg | grep -m 1 'MPTABLE: OEM ID: MICROVM')
check "$([ -n "$mp" ]; echo $?)" "the kernel read the MP table: '$mp'"
bad=$(dmesg | grep -E 'FW_BUG|Firmware Bug|BIOS bug|broken BIOS|BUG:|WARNING:|Oops' |
	head -n 3)
check "$([ -z "$bad" ]; echo $?)" "no firmware complaint in dmesg${bad:+: $bad}"

set -- /sys/block/vd*
[ -e "$1" ] || set --
check "$([ $# = "$disks" ]; echo $?)" "$# disks (/sys/block/vd*), want $disks"
last=
for b in "$@"; do
	name=${b##*/}
	path=$(readlink -f "$b")
	case "$path" in
	*/virtio-mmio-cmdline/virtio-mmio.*) ;;
	*) check 1 "$name is not a command-line virtio-mmio device: $path" ;;
	esac
	first=$(head -c 64 "/dev/$name" 2>/dev/null | head -n 1)
	[ "$first" = "$token" ] && last=$name
done
check "$([ -n "$last" ]; echo $?)" "the last disk (token $token) is ${last:-missing}"

if [ -n "$last" ]; then
	echo "$word" | dd of="/dev/$last" bs=512 seek=2048 conv=fsync \
		2>/dev/null
	check $? "wrote '$word' at 1 MiB of $last"
	echo 3 >/proc/sys/vm/drop_caches
	got=$(dd if="/dev/$last" bs=512 skip=2048 count=1 2>/dev/null |
		head -n 1)
	check "$([ "$got" = "$word" ]; echo $?)" \
		"read back '$got' from $last, want '$word'"
	# "  5:  12  0  IO-APIC  5-edge  virtio8": one count per CPU.
	line=$(grep "^ *$gsi:" /proc/interrupts)
	count=$(echo "$line" | awk -v n="$cpus" '{ s = 0
		for (i = 2; i <= n + 1; i++) s += $i; print s }')
	check "$(echo "$line" | grep -q 'edge.*virtio' &&
		[ "${count:-0}" -gt 0 ]; echo $?)" \
		"interrupt line $gsi: '$(echo "$line" | tr -s ' ')'"
fi

echo "ACPIOFF-CHECK-END: $fails failed"
[ $fails -eq 0 ]
