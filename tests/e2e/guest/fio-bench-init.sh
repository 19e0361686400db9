#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /sbin/init on the root disk that tests/e2e/poll-bench.sh builds: fio 4k
# randread at the queue depth of "bench.qd=N" for "bench.rt=S" seconds on
# /dev/vdb (one job, O_DIRECT, libaio), framed by console markers that the
# L1 side samples KVM's counters at, then the guest interrupts of vdb
# (/proc/interrupts delta) and fio's completed I/Os, then power-off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
[ -e /proc/self ] || mount -t proc proc /proc
[ -e /sys/block ] || mount -t sysfs sysfs /sys
[ -e /dev/console ] || mount -t devtmpfs devtmpfs /dev
qd=32 rt=8
for w in $(cat /proc/cmdline); do
	case "$w" in
	bench.qd=*) qd=${w#bench.qd=} ;;
	bench.rt=*) rt=${w#bench.rt=} ;;
	esac
done
dev=$(basename "$(readlink /sys/block/vdb/device)")
irqs()
{
	awk -v d="$dev" -v n="$(nproc)" '$NF ~ "^" d "(-|$)" {
		for (i = 2; i <= n + 1; i++) s += $i } END { print s + 0 }' \
		/proc/interrupts
}
i0=$(irqs)
echo "BENCH-START"
fio --name=rr --filename=/dev/vdb --ioengine=libaio --direct=1 \
	--rw=randread --bs=4k --iodepth="$qd" --numjobs=1 --time_based \
	--runtime="$rt" --size=512m >/tmp/fio.out 2>&1
echo "BENCH-END"
i1=$(irqs)
ios=$(sed -n 's/.*issued rwts: total=\([0-9]*\),.*/\1/p' /tmp/fio.out)
iops=$(sed -n 's/.*read: IOPS=\([^,]*\),.*/\1/p' /tmp/fio.out)
echo "BENCH-GUEST: dev=$dev ios=$ios iops=$iops irqs=$((i1 - i0))"
grep -q 'err= 0' /tmp/fio.out || sed 's/^/BENCH-FIO: /' /tmp/fio.out
poweroff -f
