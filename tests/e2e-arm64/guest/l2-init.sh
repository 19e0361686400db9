#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the L2 guest the arm64 microvm boots (boot-test.sh): reports
# that it ran, which CPUs are online and the md5 of /dev/vda if there
# is one, then powers off (PSCI
# SYSTEM_OFF), or with l2.hang=1 on its command line waits forever.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The cloud kernel's virtio drivers are modules (prepare.sh), in order.
for m in virtio_ring virtio virtio_mmio virtio_pci_modern_dev \
	virtio_pci_legacy_dev virtio_pci virtio_blk; do
	[ -f "/lib/modules/$m.ko" ] && insmod "/lib/modules/$m.ko"
done
# virtio-blk probes asynchronously: give vda a moment to appear.
n=0
while [ ! -b /dev/vda ] && [ $n -lt 50 ] && grep -q 'l2.disk=1' /proc/cmdline; do
	sleep 0.1
	n=$((n + 1))
done
echo "ARM64-L2: init at $(cut -d' ' -f1 /proc/uptime) s"
# The wall clock, which the kernel set at boot from the PL031 (hctosys).
echo "ARM64-L2: clock $(date +%s) rtc $(cat /sys/class/rtc/rtc0/name 2>/dev/null)"
echo "ARM64-L2: cpus online $(cat /sys/devices/system/cpu/online)" \
	"count $(grep -c ^processor /proc/cpuinfo)"
if [ -b /dev/vda ]; then
	echo "ARM64-L2: vda md5 $(md5sum /dev/vda | cut -d' ' -f1)"
fi
if grep -q 'l2.hang=1' /proc/cmdline; then
	echo "ARM64-L2: hanging"
	while :; do sleep 3600; done
fi
poweroff -f
