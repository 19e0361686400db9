#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /sbin/init on the root disk that tests/e2e/ratelimit-test.sh builds: fio
# 4k randread on /dev/vdb (the rate-limited disk; one job, O_DIRECT,
# libaio, queue depth 8) for "rl.ramp=S" seconds of ramp, in which the
# limit's full bucket is spent and not counted, then "rl.rt=S" seconds
# measured; then the same for "rl.free=S" seconds on /dev/vdc, a disk
# without a limit, for what this guest reaches at all where it runs;
# prints fio's read IOPS and I/O counts, then powers off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
[ -e /proc/self ] || mount -t proc proc /proc
[ -e /sys/block ] || mount -t sysfs sysfs /sys
[ -e /dev/console ] || mount -t devtmpfs devtmpfs /dev
ramp=3 rt=10 free=4
for w in $(cat /proc/cmdline); do
	case "$w" in
	rl.ramp=*) ramp=${w#rl.ramp=} ;;
	rl.rt=*) rt=${w#rl.rt=} ;;
	rl.free=*) free=${w#rl.free=} ;;
	esac
done
# measure TAG DEV RAMP RUNTIME: one fio run, one "TAG: rc= iops= ios=" line.
measure()
{
	fio --name=rr --filename="$2" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth=8 --numjobs=1 --time_based \
		--ramp_time="$3" --runtime="$4" --size=32m \
		--output-format=json >/tmp/fio.json 2>/tmp/fio.err
	rc=$?
	iops=$(sed -n 's/.*"iops" : \([0-9.]*\),.*/\1/p' /tmp/fio.json |
	       head -n 1)
	ios=$(sed -n 's/.*"total_ios" : \([0-9]*\),.*/\1/p' /tmp/fio.json |
	      head -n 1)
	echo "$1: rc=$rc iops=$iops ios=$ios"
	[ "$rc" = 0 ] ||
		sed 's/^/RL-FIO: /' /tmp/fio.err /tmp/fio.json | head -n 20
}
echo "RL-START"
measure RL-GUEST /dev/vdb "$ramp" "$rt"
measure RL-FREE /dev/vdc 1 "$free"
poweroff -f
