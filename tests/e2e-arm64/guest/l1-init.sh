#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the arm64 L1 (tests/e2e-arm64): busybox applets, /proc, /sys,
# /dev; reports how long the kernel took to get here, whether /dev/kvm
# exists and what the KVM probe got, then powers off. QEMU runs with
# -no-reboot, so a panic or a failed poweroff ends it too.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "ARM64-L1: init at $(cut -d' ' -f1 /proc/uptime) s"
dmesg | grep -iE 'kvm|vhe|hyp mode' | sed 's/^/ARM64-L1: dmesg: /'
if [ -c /dev/kvm ]; then
	echo "ARM64-L1: /dev/kvm present"
	/bin/kvm-probe
	echo "ARM64-L1: probe status $?"
else
	echo "ARM64-L1: /dev/kvm missing"
fi
echo "ARM64-L1: done"
poweroff -f
