#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The boots of acpi-off-test.sh, where microvm runs (inside L1 in nested
# mode). POSIX sh. Makes MIDDLE empty 1 MiB disks in $TMPDIR, then boots
# the project's kernel twice on 2 vCPUs from ROOT with Kata Containers'
# kernel parameters (acpi=off among them) and 2 + MIDDLE virtio-mmio
# disks: ROOT first (slot 0, /dev/vda), the middle ones, LAST in the last
# slot (on an ISA interrupt line):
#   cli:    the command line (--kernel, --disk ...,transport=mmio,
#           --cmdline)
#   config: the same machine from a Firecracker config file (--no-api
#           --config-file: boot_args and drives, virtio-mmio by default),
#           as Kata's and flintlock's
# Prints "ACPIOFF-RUN: NAME status S in T s" after each; exits 0 when
# both gave status 0, else the first other status.
#
# Usage: acpi-off-l1.sh MICROVM KERNEL ROOT LAST MIDDLE
set -u
[ $# -eq 5 ] || { echo "usage: $0 MICROVM KERNEL ROOT LAST MIDDLE" >&2; exit 2; }
microvm=$1 kernel=$2 root=$3 last=$4 middle=$5
tmp=${TMPDIR:-/tmp}

# Kata's Firecracker kernel parameters (fc.go), console=ttyS0 as in its
# debug mode.
kata="pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on acpi=off console=ttyS0"
disks=
i=1
while [ $i -le "$middle" ]; do
	dd if=/dev/zero of="$tmp/acpi-off-$i.raw" bs=1048576 count=1 \
		2>/dev/null || { echo "ACPIOFF-RUN: cannot make disk $i"; exit 1; }
	disks="$disks $tmp/acpi-off-$i.raw"
	i=$((i + 1))
done
disks="$disks $last"

result=0
# boot NAME ARGS...: one microvm run, which must end with status 0.
boot()
{
	name=$1
	shift
	start=$(date +%s)
	"$microvm" "$@"
	st=$?
	echo "ACPIOFF-RUN: $name status $st in $(( $(date +%s) - start )) s"
	[ "$st" = 0 ] || [ "$result" != 0 ] || result=$st
}

set -- --kernel "$kernel" --cpus 2 --timeout 240 \
	--cmdline "$kata root=/dev/vda rw" --disk "$root,transport=mmio"
for d in $disks; do
	set -- "$@" --disk "$d,transport=mmio"
done
boot cli "$@"

# The config file: root=/dev/vda rw comes from is_root_device.
cfg=$tmp/acpi-off.json
{
	printf '{"boot-source": {"kernel_image_path": "%s", "boot_args": "%s"},\n' \
		"$kernel" "$kata"
	printf ' "machine-config": {"vcpu_count": 2, "mem_size_mib": 256},\n'
	printf ' "drives": [{"drive_id": "rootfs", "path_on_host": "%s", "is_root_device": true, "is_read_only": false}' \
		"$root"
	n=0
	for d in $disks; do
		printf ',\n  {"drive_id": "drive_%s", "path_on_host": "%s", "is_root_device": false, "is_read_only": false}' \
			"$n" "$d"
		n=$((n + 1))
	done
	printf ']}\n'
} >"$cfg"
boot config --no-api --config-file "$cfg" --timeout 240

rm -f "$tmp"/acpi-off-*.raw "$cfg"
exit $result
