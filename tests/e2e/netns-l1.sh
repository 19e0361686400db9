#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Where microvm runs (inside L1 in nested mode; POSIX sh): loads the tap
# and vhost_net modules (L1's initramfs has them from prepare.sh; a host
# its own), then runs PROGRAM in a network namespace and a mount
# namespace of its own (unshare -n -m), with its own sysfs so that
# /sys/class/net shows the namespace's interfaces: the taps the VMMs make
# and every address live there only. For e2e.net.* (net-l1.sh) and the
# net benchmark (tests/bench/net-bench-l1.sh). A failure prints
# "NETNS-L1: FAIL: ..."; the status is PROGRAM's.
#
# Usage: netns-l1.sh PROGRAM [ARGS...]
if [ -f /lib/modules/net.order ]; then
	for m in $(cat /lib/modules/net.order); do
		[ -d "/sys/module/$m" ] || insmod "/lib/modules/$m.ko" ||
			echo "NETNS-L1: FAIL: insmod $m.ko"
	done
else
	modprobe tun && modprobe vhost_net ||
		echo "NETNS-L1: FAIL: modprobe tun vhost_net"
fi
exec unshare -n -m /bin/sh -c \
	'mount -t sysfs sysfs /sys || echo "NETNS-L1: FAIL: sysfs"
	 ip link set lo up
	 exec "$@"' netns-l1 "$@"
