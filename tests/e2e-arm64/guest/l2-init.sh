#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the L2 guest the arm64 microvm boots (boot-test.sh): reports
# that it ran and which CPUs are online, then powers off (PSCI
# SYSTEM_OFF), or with l2.hang=1 on its command line waits forever.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
echo "ARM64-L2: init at $(cut -d' ' -f1 /proc/uptime) s"
echo "ARM64-L2: cpus online $(cat /sys/devices/system/cpu/online)" \
	"count $(grep -c ^processor /proc/cpuinfo)"
if grep -q 'l2.hang=1' /proc/cmdline; then
	echo "ARM64-L2: hanging"
	while :; do sleep 3600; done
fi
poweroff -f
