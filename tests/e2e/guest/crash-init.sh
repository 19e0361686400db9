#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the L2 guest of the crash and host-fault tests (crash-test.sh,
# fault-test.sh append it, with blkcrash, to the test initramfs). Scenario
# by microvm.test= on the kernel command line:
#   crash  microvm.seed=S microvm.count=N: blkcrash writes N random blocks
#          to /dev/vda with O_DIRECT, "E2E-ACK: K" after each completed
#          flush; the host kills microvm meanwhile, so this never ends by
#          itself (after the writes it waits).
#   fault  /dev/vda on a device-mapper target, /dev/vdb an image on a full
#          file system: each step prints "E2E-FAULT: want STATE" for the
#          host-side blk-ctl.sh, then retries one O_DIRECT transfer until
#          it gives the outcome that STATE must give (the host acts
#          asynchronously), and reports E2E-RESULT as scenarios.sh does.
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

scenario_crash()
{
	# shellcheck disable=SC2046 # microvm.broken=1: one word or none
	blkcrash write /dev/vda "$(e2e_param seed)" "$(e2e_param count)" \
		$([ "$(e2e_param broken)" = 1 ] && echo broken-ack)
	while :; do sleep 3600; done
}

# fault_expect WHAT WANT DEV read|write OFFSET LEN SEED: retry the
# transfer (every 0.5 s, up to 60 s) until blkcrash probe prints WANT.
fault_expect()
{
	what=$1 want=$2
	shift 2
	n=0
	while [ $n -lt 120 ]; do
		got=$(blkcrash probe "$@")
		if [ "$got" = "$want" ]; then
			e2e_ok "$what: $got after $n retries"
			return 0
		fi
		n=$((n + 1))
		sleep 0.5
	done
	e2e_fail "$what: $* gives '$got', expected '$want' (60 s)"
}

fault_want()
{
	echo "E2E-FAULT: want $1"
}

MIB=1048576
LEN=65536

scenario_fault()
{
	fault_expect "linear: write" ok /dev/vda write $MIB $LEN 1
	fault_expect "linear: read back" ok /dev/vda read $MIB $LEN 1
	fault_want error
	# Until the host has switched, this write may still pass: away from
	# the data checked later.
	fault_expect "error target: write fails" EIO \
		/dev/vda write $((5 * MIB)) $LEN 2
	fault_expect "error target: read fails" EIO /dev/vda read $MIB $LEN 1
	fault_want flakey
	# dm-flakey down all the time with error_writes: reads pass again
	# (once the table is in), writes fail.
	fault_expect "flakey: read passes" ok /dev/vda read $MIB $LEN 1
	fault_expect "flakey: write fails" EIO /dev/vda write $((2 * MIB)) $LEN 3
	fault_want linear
	fault_expect "linear again: data from before the faults" ok \
		/dev/vda read $MIB $LEN 1
	fault_expect "linear again: the failed write left nothing" mismatch \
		/dev/vda read $((2 * MIB)) $LEN 3
	fault_expect "linear again: write" ok /dev/vda write $((3 * MIB)) $LEN 4
	fault_expect "linear again: read back" ok /dev/vda read $((3 * MIB)) $LEN 4
	# vdb: a sparse image on a file system the host has filled.
	fault_expect "full fs: write into a hole fails" EIO \
		/dev/vdb write $((4 * MIB)) $LEN 5
	fault_want space
	fault_expect "space again: write" ok /dev/vdb write $((4 * MIB)) $LEN 6
	fault_expect "space again: read back" ok /dev/vdb read $((4 * MIB)) $LEN 6
	e2e_report
}

case "$(e2e_param test)" in
crash) scenario_crash ;;
fault) scenario_fault ;;
*) e2e_fail "unknown scenario '$(e2e_param test)'" ;;
esac
e2e_end "$(e2e_param end || echo poweroff)"
