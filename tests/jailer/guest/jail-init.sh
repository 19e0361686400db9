#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the jailed-microvm guest (tests/jailer/e2e-test.sh appends it
# to the test initramfs): reads the first line of /dev/vda, which L1
# wrote ("JAIL-IN <marker>"), writes "JAIL-OUT <token>" at 1 MiB with
# fsync, drops the page cache, reads it back, reports on the console and
# powers off:
#   JAIL-GUEST: read <first line of vda>
#   JAIL-GUEST: wrote <token> readback <what sector 2048 holds>
# With "jail.kata" on the command line (Kata's jailed start; its console
# is /dev/null) it waits instead for /dev/vdb, an empty placeholder
# drive, to grow (L1 hot-plugs an image into it), then writes
# "JAIL-OUT <token> saw <the image's first line>" at 1 MiB of vdb and
# waits for SIGTERM's end.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run

. /e2e/scenarios.sh
e2e_load_modules
if grep -qw jail.kata /proc/cmdline; then
	i=0
	while [ "$(cat /sys/block/vdb/size 2>/dev/null || echo 0)" = 0 ] &&
	      [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	saw=$(head -c 512 /dev/vdb | head -n 1 | tr -cd 'A-Za-z0-9 -')
	token=$(tr -cd 'a-f0-9' </proc/sys/kernel/random/uuid)
	printf 'JAIL-OUT %s saw %s\n' "$token" "$saw" |
		dd of=/dev/vdb bs=512 seek=2048 conv=sync,fsync 2>/dev/null
	while :; do sleep 60; done
fi
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -b /dev/vda ]; then
	echo "JAIL-GUEST: read $(head -c 512 /dev/vda | head -n 1 | tr -cd 'A-Za-z0-9 :-')"
	token=$(tr -cd 'a-f0-9' </proc/sys/kernel/random/uuid)
	printf 'JAIL-OUT %s\n' "$token" |
		dd of=/dev/vda bs=512 seek=2048 conv=sync,fsync 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	back=$(dd if=/dev/vda bs=512 skip=2048 count=1 2>/dev/null |
		head -n 1 | tr -cd 'A-Za-z0-9 -')
	echo "JAIL-GUEST: wrote $token readback $back"
else
	echo "JAIL-GUEST: no /dev/vda"
fi
poweroff -f
sleep 5
