#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the L2 guest the arm64 microvm boots (boot-test.sh): reports
# that it ran, brings the CPUs a maxcpus= left offline online (PSCI
# CPU_ON after boot), reports which are online, then with a disk checks
# it: the md5 of /dev/vda as it came, then WRITERS writers in parallel,
# writer i pinned to CPU i mod the CPUs online (so each CPU's blk-mq
# queue carries writes), each writing its own pattern with O_DIRECT to
# its 2 MiB of the disk, then the md5 of vda read back after dropping
# the page cache. It ends as its command line says:
#   l2.end=poweroff (default)  poweroff -f: PSCI SYSTEM_OFF
#   l2.end=reset               reboot -f: PSCI SYSTEM_RESET
#   l2.end=exitN               writes N to the exit register (README
#                              "Exit status"): microvm exits N
#   l2.end=cad                 waits for Ctrl-Alt-Del from the
#                              virtio-input keyboard (SendCtrlAltDel):
#                              as an init does, it takes it as SIGINT
#                              (ctrl-alt-del sysctl 0, set before the
#                              keyboard's driver loads), and once its
#                              checks have reported prints it and
#                              powers off
#   l2.end=snap                as cad, but counts meanwhile: "ARM64-L2:
#                              tick N" every 0.2 s (what a snapshot must
#                              carry across: the restored guest goes on
#                              from the saved N), with a disk reading a
#                              block of it each tick (O_DIRECT), and
#                              "ARM64-L2: vmgenid interrupts N reseeds
#                              M at tick T" whenever the VM generation
#                              ID's interrupt count changes
#   l2.hang=1                  waits forever (for microvm's --timeout)
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
disk=0 end=poweroff
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	l2.disk=1) disk=1 ;;
	l2.end=*) end=${arg#l2.end=} ;;
	esac
done
input_names()
{
	echo "ARM64-L2: input $(sed -n 's/^N: Name=//p' \
		/proc/bus/input/devices 2>/dev/null | tr '\n' ' ')"
}
# The trap only notes the SIGINT: it may come while the checks below
# still run (the API's first 204 can come as soon as the keyboard's
# driver is up), and they must all report before the poweroff.
cad=0
if [ "$end" = cad ] || [ "$end" = snap ]; then
	echo 0 >/proc/sys/kernel/ctrl-alt-del
	trap 'cad=1' INT
fi
# The cloud kernel's virtio drivers are modules (prepare.sh), in order.
for m in virtio_ring virtio virtio_mmio virtio_pci_modern_dev \
	virtio_pci_legacy_dev virtio_pci virtio_blk virtio_input; do
	[ -f "/lib/modules/$m.ko" ] && insmod "/lib/modules/$m.ko"
done
# virtio-blk probes asynchronously: give vda a moment to appear.
n=0
while [ ! -b /dev/vda ] && [ $n -lt 50 ] && [ $disk = 1 ]; do
	sleep 0.1
	n=$((n + 1))
done
echo "ARM64-L2: init at $(cut -d' ' -f1 /proc/uptime) s"
# The VM generation ID's device, if the kernel's vmgenid driver bound it
# (Linux 6.10 and later find it in the device tree).
genid=$(ls /sys/bus/platform/drivers/vmgenid 2>/dev/null | grep vmgenid |
	head -n 1)
echo "ARM64-L2: vmgenid ${genid:-none}"
# The wall clock, which the kernel set at boot from the PL031 (hctosys).
echo "ARM64-L2: clock $(date +%s) rtc $(cat /sys/class/rtc/rtc0/name 2>/dev/null)"
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ -f "$c" ] && [ "$(cat "$c")" = 0 ] && echo 1 >"$c"
done
echo "ARM64-L2: cpus online $(cat /sys/devices/system/cpu/online)" \
	"count $(grep -c ^processor /proc/cpuinfo)"

# The pattern writer $1 writes (l1-boot-init.sh makes the same one).
pattern()
{
	yes "microvm arm64 writer $1 wrote this 0123456789abcdef" |
		head -c 2097152
}

WRITERS=8
if [ -b /dev/vda ]; then
	echo "ARM64-L2: vda md5 $(md5sum /dev/vda | cut -d' ' -f1)"
	echo "ARM64-L2: vda queues $(ls /sys/block/vda/mq | wc -l)"
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	i=0
	while [ $i -lt $WRITERS ]; do
		pattern $i >/tmp/w$i
		i=$((i + 1))
	done
	i=0
	while [ $i -lt $WRITERS ]; do
		# 2 MiB = 32 blocks of 64 KiB at block 32 * i.
		(taskset -c $((i % ncpu)) dd if=/tmp/w$i of=/dev/vda bs=64k \
			seek=$((32 * i)) oflag=direct conv=notrunc,fsync \
			2>/tmp/e$i ||
			echo "ARM64-L2: writer $i failed: $(tail -n 1 /tmp/e$i)") &
		i=$((i + 1))
	done
	wait
	rm -f /tmp/w* /tmp/e*
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo "ARM64-L2: vda md5 after $WRITERS writers" \
		"$(md5sum /dev/vda | cut -d' ' -f1)"
fi
if grep -q 'l2.hang=1' /proc/cmdline; then
	echo "ARM64-L2: hanging"
	while :; do sleep 3600; done
fi
echo "ARM64-L2: end $end"
if [ "$end" = snap ]; then
	n=0 lastg=''
	while [ $cad = 0 ]; do
		n=$((n + 1))
		echo "ARM64-L2: tick $n"
		# The vmgenid interrupts taken (all CPUs) and the reseeds
		# they made, whenever the count changes: one per restore.
		g=$(awk 'NR == 1 { n = NF } /vmgenid/ { s = 0
			for (i = 2; i <= n + 1; i++) s += $i; print s }' \
			/proc/interrupts)
		if [ -n "$g" ] && [ "$g" != "$lastg" ]; then
			echo "ARM64-L2: vmgenid interrupts $g reseeds" \
				"$(dmesg | grep -c 'crng reseeded due to virtual machine fork') at tick $n"
			lastg=$g
		fi
		# With a disk, a read through the device each tick: after a
		# restore its queues and interrupts (MSI-X through the ITS
		# on pci) must still work.
		if [ -b /dev/vda ] && ! dd if=/dev/vda of=/dev/null bs=4k \
			count=1 skip=$((n % 4096)) iflag=direct 2>/dev/null; then
			echo "ARM64-L2: read failed at tick $n"
		fi
		sleep 0.2
	done
	echo "ARM64-L2: ctrl-alt-del seen at tick $n"
	poweroff -f
fi
if [ "$end" = cad ]; then
	# SIGINT from the kernel's ctrl_alt_del() ends it.
	while [ $cad = 0 ]; do sleep 1; done
	input_names
	echo "ARM64-L2: ctrl-alt-del seen"
	poweroff -f
fi
case "$end" in
reset) reboot -f ;;
exit[0-9]*) devmem 0xf0100000 8 "${end#exit}" ;;
esac
poweroff -f
