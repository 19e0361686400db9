#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the nested harness's L1 (busybox), for module-test.sh:
# insmods the vhost core (--core KO, in order) and vhost_blk.ko, runs
# vhost_blk_selftest on an ext2 file (O_DIRECT) with a null_blk device and
# a SIGKILLed child and the polling tests, again on a tmpfs file (buffered,
# byte splits; --quick: no polling tests), rmmods,
# then N insmod/rmmod cycles (--quick); after each step the kernel log must hold no
# "BUG:", "Oops" or "WARNING:".
# Usage: module-l1.sh --core KO... --module KO --selftest BIN [--cycles N]
# Prints "MODULE-TEST: PASS" last on success; exit status 1 on failure.
core=
ko=
selftest=
cycles=5
while [ $# -gt 0 ]; do
	case "$1" in
	--core) core="$core $2"; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--selftest) selftest=$2; shift 2 ;;
	--cycles) cycles=$2; shift 2 ;;
	*) echo "module-l1: unknown option '$1'"; exit 1 ;;
	esac
done

fail()
{
	echo "MODULE-TEST: FAIL $*"
	echo "--- dmesg (last 40 lines)"
	dmesg | tail -n 40
	exit 1
}

# later STEP...: a check that failed but need not stop the others (the
# script fails at the end).
later=
later()
{
	echo "module-l1: FAIL (the run goes on): $*"
	later="$later; $*"
}

# oops_check STEP: the kernel reported nothing bad so far.
oops_check()
{
	if dmesg | grep -E 'BUG:|Oops|WARNING:|general protection'; then
		fail "kernel problem after: $1"
	fi
}

now()
{
	cut -d' ' -f1 /proc/uptime
}

# wait_dev PATH: up to 5 s for PATH to appear (its own counter: the
# cycle loop below counts in $i).
wait_dev()
{
	w=0
	while [ ! -e "$1" ] && [ $w -lt 50 ]; do
		sleep 0.1
		w=$((w + 1))
	done
	[ -e "$1" ]
}

for m in $core; do
	insmod "$m" || fail "insmod $m"
done
insmod "$ko" || fail "insmod $ko"
wait_dev /dev/vhost-blk || fail "no /dev/vhost-blk after insmod"
grep -q '^vhost_blk ' /proc/modules || fail "vhost_blk not in /proc/modules"
echo "module-l1: vhost_blk loaded ($(now) s)"

# null_blk: nullb0 raw for the block-device checks, nullb1 holds ext2.
for m in $(cat /lib/modules/nullblk.order); do
	if [ "$m" = null_blk ]; then
		insmod "/lib/modules/$m.ko" nr_devices=2 gb=1 bs=512 \
			memory_backed=1 discard=1 || fail "insmod null_blk"
	else
		insmod "/lib/modules/$m.ko" || fail "insmod $m"
	fi
done
wait_dev /dev/nullb1 || fail "no /dev/nullb1"
fsdir=/tmp
mkdir -p /mnt/fs
if mke2fs -F /dev/nullb1 65536 >/dev/null 2>&1 &&
   mount -t ext2 /dev/nullb1 /mnt/fs 2>/dev/null; then
	fsdir=/mnt/fs
else
	echo "module-l1: no ext2 on nullb1; the file checks run on tmpfs only"
fi

echo "module-l1: selftest on $fsdir and /dev/nullb0 ($(now) s)"
"$selftest" --dir "$fsdir" --blockdev /dev/nullb0 --kill ||
	fail "selftest on $fsdir + /dev/nullb0 (exit $?)"
oops_check "selftest on $fsdir"

# A null_blk with 4096-byte logical blocks (configfs): the selftest's
# 512-byte requests take the module's bounce read-modify-write, and a
# one-sector DISCARD must be refused with the page cache untouched.
cfg=/sys/kernel/config
[ -d $cfg/nullb ] || mount -t configfs none $cfg 2>/dev/null
if [ -d $cfg/nullb ] && mkdir $cfg/nullb/nb4k 2>/dev/null; then
	nb=$cfg/nullb/nb4k
	before=$(ls /dev/nullb* 2>/dev/null)
	{ echo 4096 >$nb/blocksize && echo 64 >$nb/size &&
	  echo 1 >$nb/memory_backed && echo 1 >$nb/discard &&
	  echo 1 >$nb/power; } || fail "configfs null_blk with 4096-byte blocks"
	# 6.1 names the disk after the configfs directory; older
	# kernels nullbN.
	wait_dev /dev/nb4k
	dev4k=/dev/nb4k
	if [ ! -b $dev4k ]; then
		for b in /dev/nullb*; do
			case " $(echo $before) " in
			*" $b "*) ;;
			*) dev4k=$b ;;
			esac
		done
	fi
	[ -b "$dev4k" ] || fail "no block device for the 4096-byte null_blk"
	echo "module-l1: selftest on $dev4k, 4096-byte blocks ($(now) s)"
	"$selftest" --dir /tmp --quick --blockdev "$dev4k" ||
		later "selftest on $dev4k (exit $?)"
	oops_check "selftest on $dev4k"
	echo 0 >$nb/power
	rmdir $nb
else
	fail "no null_blk configfs for a 4096-byte-block device"
fi
if [ "$fsdir" != /tmp ]; then
	echo "module-l1: selftest on tmpfs ($(now) s)"
	"$selftest" --dir /tmp --quick || fail "selftest on tmpfs (exit $?)"
	oops_check "selftest on tmpfs"
	umount /mnt/fs
	# Credentials: ext2 of 14 MiB with half its blocks reserved for
	# root, where uid 1000 may write less than the selftest's 8 MiB
	# image and root more: the module's writes for uid 1000 must stop
	# where uid 1000's own writes do.
	echo "module-l1: selftest --fill as uid 1000 ($(now) s)"
	mke2fs -F -m 50 /dev/nullb1 14336 >/dev/null 2>&1 &&
		mount -t ext2 /dev/nullb1 /mnt/fs ||
		fail "ext2 with reserved blocks on /dev/nullb1"
	chmod 1777 /mnt/fs
	chmod 666 /dev/vhost-blk
	"$selftest" --fill /mnt/fs --uid 1000 ||
		later "selftest --fill as uid 1000 (exit $?)"
	chmod 600 /dev/vhost-blk
	oops_check "selftest --fill"
	umount /mnt/fs
fi

rmmod vhost_blk || fail "rmmod vhost_blk after the selftests"
[ ! -e /dev/vhost-blk ] || fail "/dev/vhost-blk still there after rmmod"
echo "module-l1: rmmod done ($(now) s)"
i=0
while [ $i -lt "$cycles" ]; do
	insmod "$ko" || fail "insmod, cycle $i"
	wait_dev /dev/vhost-blk || fail "no /dev/vhost-blk, cycle $i"
	"$selftest" --dir /tmp --quick >/tmp/cycle.log 2>&1 ||
		{ cat /tmp/cycle.log; fail "selftest, cycle $i"; }
	rmmod vhost_blk || fail "rmmod, cycle $i"
	echo "module-l1: cycle $i done ($(now) s)"
	i=$((i + 1))
done
oops_check "$cycles insmod/rmmod cycles"
echo "module-l1: $cycles insmod/selftest/rmmod cycles ($(now) s)"
[ -z "$later" ] || fail "${later#; }"
echo "MODULE-TEST: PASS"
