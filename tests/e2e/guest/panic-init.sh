#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of panic-test.sh's guest (appended to a busybox initramfs): loads
# the pvpanic driver where it is a module (/lib/modules/pvpanic.order,
# from prepare.sh; a kernel with it built in needs none), reports whether
# it bound to the ACPI QEMU0001 device and what it read from the port,
# then panics the kernel through sysrq. With panic=-1 the kernel reboots
# after the panic notifiers ran, so without pvpanic the VM ends with 0.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# say LINE: through the kernel log at KERN_CRIT, so that the line reaches
# the console whole and in order with the panic's own lines (a write to
# the tty is drained later and interleaves with them).
say()
{
	echo "<2>E2E-PANIC: $*" >/dev/kmsg
}

# A kernel with the driver built in has it registered already; modules
# of another kernel would not load into it.
if [ ! -d /sys/bus/platform/drivers/pvpanic-mmio ] &&
   [ -f /lib/modules/pvpanic.order ]; then
	for m in $(cat /lib/modules/pvpanic.order); do
		insmod "/lib/modules/$m.ko" || say "insmod $m.ko failed"
	done
fi
bound=
for d in /sys/bus/platform/drivers/pvpanic-mmio/QEMU0001:*; do
	[ -e "$d" ] && bound=$d
done
if [ -n "$bound" ]; then
	say "bound ${bound##*/} capability $(cat "$bound/capability")" \
		"events $(cat "$bound/events")"
else
	say "no pvpanic device bound"
fi
# The other vCPUs busy in user space when the panic comes: pvpanic must
# end the VM whatever they do.
n=$(nproc)
while [ "$n" -gt 1 ]; do
	(while :; do :; done) &
	n=$((n - 1))
done
say "trigger"
echo c >/proc/sysrq-trigger
sleep 10
say "still running after the panic"
poweroff -f
