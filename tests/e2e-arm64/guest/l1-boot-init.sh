#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the arm64 L1 for boot-test.sh: runs the arm64 microvm on the
# L2 kernel and initramfs it carries and reports microvm's exit status.
# What to run comes from L1's command line:
#   l1.cpus=N       --cpus N
#   l1.timeout=S    --timeout S
#   l1.hang=1       L2 init waits forever instead of powering off (so
#                   --timeout must end it); microvm runs with --verbose,
#                   which dumps the vCPUs' registers at the timeout
#   l1.disk=T       a 16 MiB image of a known pattern on transport T
#                   (mmio or pci) as L2's vda; its md5 is printed
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "ARM64-L1: init at $(cut -d' ' -f1 /proc/uptime) s"
cpus=1 limit=240 hang=0 disk=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	l1.cpus=*) cpus=${arg#l1.cpus=} ;;
	l1.timeout=*) limit=${arg#l1.timeout=} ;;
	l1.hang=*) hang=${arg#l1.hang=} ;;
	l1.disk=*) disk=${arg#l1.disk=} ;;
	esac
done
if [ ! -c /dev/kvm ]; then
	echo "ARM64-L1: /dev/kvm missing"
	poweroff -f
fi
set -- --kernel /l2/vmlinuz --initrd /l2/initrd.cpio.gz --cpus "$cpus" \
	--timeout "$limit"
l2args=''
[ "$hang" = 1 ] && l2args=" l2.hang=1" && set -- "$@" --verbose
[ -n "$disk" ] && l2args="$l2args l2.disk=1"
[ -n "$l2args" ] && set -- "$@" --cmdline "console=ttyAMA0$l2args"
if [ -n "$disk" ]; then
	mount -t tmpfs tmpfs /tmp
	yes 'microvm arm64 disk pattern 0123456789abcdef' |
		head -c 16777216 >/tmp/disk.raw
	echo "ARM64-L1: disk md5 $(md5sum /tmp/disk.raw | cut -d' ' -f1)"
	set -- "$@" --disk "/tmp/disk.raw,transport=$disk,readonly=on"
fi
echo "ARM64-L1: microvm $*"
start=$(cut -d' ' -f1 /proc/uptime)
/bin/microvm "$@"
rc=$?
end=$(cut -d' ' -f1 /proc/uptime)
echo "ARM64-L1: microvm status $rc after $(awk -v a="$start" -v b="$end" \
	'BEGIN { printf "%.1f", b - a }') s"
echo "ARM64-L1: done"
poweroff -f
