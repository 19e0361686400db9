#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the boot-time guest (tests/e2e/boottime-test.sh and
# tests/bench/boot-vs-qemu.sh append it to the test initramfs). Its first
# act is the "init reached" mark: a console line for any VMM and the byte
# 1 on microvm's boot-time port (0xf8, a no-op on other VMMs). Then, by
# kernel command line:
#   microvm.boot.idle=S   sleep S seconds, then "BOOT-MARK: idle"
#   microvm.boot.io=S     if there is a /dev/vda, read it with dd for S
#                         seconds; "BOOT-MARK: io" one second in
#   microvm.boot.tick=1   print "BOOT-TICK N" every 10 ms, for ever (the
#                         snapshot benchmark times a restore to the
#                         first tick after it)
# and "BOOT-MARK: done" before it powers off.
echo "BOOT-MARK: init"
/bin/outb 0xf8 1
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run

. /e2e/scenarios.sh
idle=$(e2e_param boot.idle) || idle=0
io=$(e2e_param boot.io) || io=0
tick=$(e2e_param boot.tick) || tick=0

if [ "$tick" = 1 ]; then
	i=0
	while :; do
		echo "BOOT-TICK $i"
		i=$((i + 1))
		sleep 0.01
	done
fi

if [ "$idle" -gt 0 ]; then
	sleep "$idle"
	echo "BOOT-MARK: idle"
fi
if [ "$io" -gt 0 ]; then
	e2e_load_modules
	i=0
	while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -b /dev/vda ]; then
		# Direct reads, so every block reaches the device: page cache
		# hits would leave the VMM idle.
		(
			end=$(($(cut -d. -f1 /proc/uptime) + io))
			while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
				dd if=/dev/vda of=/dev/null bs=64k count=256 \
					iflag=direct 2>/dev/null ||
					{ echo "BOOT-MARK: io-error"; break; }
			done
		) &
		sleep 1
		echo "BOOT-MARK: io"
		wait
	else
		echo "BOOT-MARK: no-disk"
	fi
fi
/bin/outb 0xf8 123
echo "BOOT-MARK: done"
poweroff -f
