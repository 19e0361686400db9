#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the credentials guest (tests/e2e/creds-test.sh appends it to
# the test initramfs): writes zeros over /dev/vda from its first byte,
# sequentially, O_DIRECT, 64 KiB a request, until the disk's end or the
# first error, and reports on the console, then powers off:
#   CREDS-GUEST: dd-status N records-out F+P error TEXT
#   CREDS-GUEST: ioerr-sector S   (the first "I/O error, dev vda, sector S"
#                                  in the kernel log; "none" when absent)
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run

. /e2e/scenarios.sh
e2e_load_modules
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -b /dev/vda ]; then
	dd if=/dev/zero of=/dev/vda bs=65536 oflag=direct conv=fsync \
		2>/tmp/dd.log
	rc=$?
	sed 's/^/creds-guest: dd: /' /tmp/dd.log
	out=$(sed -n 's/^\([0-9]*+[0-9]*\) records out$/\1/p' /tmp/dd.log)
	err=$(sed -n "s/^dd: error writing '[^']*': //p" /tmp/dd.log)
	echo "CREDS-GUEST: dd-status $rc records-out ${out:-?}" \
		"error ${err:-none}"
	sector=$(dmesg | sed -n 's/.*I\/O error, dev vda, sector \([0-9]*\) .*/\1/p' |
		head -n 1)
	echo "CREDS-GUEST: ioerr-sector ${sector:-none}"
else
	echo "CREDS-GUEST: no /dev/vda"
fi
poweroff -f
sleep 5
