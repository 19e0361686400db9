#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the nested harness's L1 for disk-test.sh --vhost: insmods
# the vhost core (--core KO, in order) and vhost_blk.ko, runs microvm
# (the rest of the arguments) with /dev/vhost-blk there, then rmmods
# vhost_blk: a VM that has exited must leave the module unloadable. After
# each step the kernel log must hold no BUG, Oops or WARNING.
# Usage: vhost-l1.sh --core KO... --module KO [--rmmod-wait S]
#                    [--hold-open] -- MICROVM [ARGS...]
#   --rmmod-wait S  try rmmod again every 0.1 s for up to S seconds (a
#                   killed VMM's last file references go with its exit,
#                   the module's in-flight requests with their completion);
#                   default 0: one try
#   --hold-open     self-check of the callers: keep /dev/vhost-blk open in
#                   another process across the rmmod, which must then fail
# Exit: microvm's status; 1 when loading, unloading or the kernel log
# failed (a "vhost-l1: FAIL" line on stderr says which).
core=
ko=
rmmod_wait=0
hold_open=0
holder=
while [ $# -gt 0 ]; do
	case "$1" in
	--core) core="$core $2"; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--rmmod-wait) rmmod_wait=$2; shift 2 ;;
	--hold-open) hold_open=1; shift ;;
	--) shift; break ;;
	*) echo "vhost-l1: unknown option '$1'" >&2; exit 1 ;;
	esac
done

fail()
{
	[ -z "$holder" ] || kill "$holder" 2>/dev/null
	echo "vhost-l1: FAIL: $*" >&2
	dmesg | tail -n 30 | sed 's/^/vhost-l1: dmesg: /' >&2
	exit 1
}

oops_check()
{
	dmesg | grep -E 'BUG:|Oops|WARNING:|general protection' >&2 &&
		fail "kernel problem after: $1"
	return 0
}

for m in $core; do
	grep -q "^$(basename "$m" .ko) " /proc/modules ||
		insmod "$m" || fail "insmod $m"
done
insmod "$ko" || fail "insmod $ko"
i=0
while [ ! -e /dev/vhost-blk ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -e /dev/vhost-blk ] || fail "no /dev/vhost-blk after insmod $ko"
echo "vhost-l1: vhost_blk loaded" >&2
oops_check insmod

if [ $hold_open = 1 ]; then
	# The open file is the point (a module reference), not the input.
	# shellcheck disable=SC2217
	sleep 100000 </dev/vhost-blk &
	holder=$!
	echo "vhost-l1: self-check: /dev/vhost-blk held open by $holder" >&2
fi

"$@"
status=$?
echo "vhost-l1: microvm exited with status $status" >&2
oops_check "the VM"

# Centiseconds since boot: busybox date has no sub-second format.
uptime_cs()
{
	awk '{ printf "%d", $1 * 100 }' /proc/uptime
}
start=$(uptime_cs)
tries=1
while ! rmmod vhost_blk 2>/dev/null; do
	took=$((($(uptime_cs) - start) * 10))
	if [ $took -ge $((rmmod_wait * 1000)) ]; then
		rmmod vhost_blk
		fail "rmmod vhost_blk after the VM exited ($tries tries in" \
			"$took ms)"
	fi
	sleep 0.1
	tries=$((tries + 1))
done
took=$((($(uptime_cs) - start) * 10))
grep -q '^vhost_blk ' /proc/modules && fail "vhost_blk still loaded"
echo "vhost-l1: rmmod vhost_blk ok ($tries tries, ${took} ms after the VM exited)" >&2
oops_check rmmod
[ -z "$holder" ] || kill "$holder" 2>/dev/null
exit $status
