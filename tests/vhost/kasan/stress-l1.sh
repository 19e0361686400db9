#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the KASAN L1 (run.sh boots it through run-guest.sh): the
# vhost-blk module's stop paths with I/O in flight, many times, on a
# kernel that reports a use-after-free the moment it happens.
#  1. Simulated rounds: vhost_blk_stress in batches, alternating a
#     null_blk that completes from a timer (hard irq) and one that
#     completes from softirq; each round resets, closes, exits or is
#     SIGKILLed with every slot busy, and the module is unloaded and
#     loaded again every 5 rounds.
#  2. Real-guest rounds: microvm (engine=vhost) boots a guest whose
#     writer keeps O_DIRECT writes and flushes in flight on a null_blk;
#     blk-ctl.sh SIGKILLs microvm a random delay after the first
#     acknowledged flush; the module is then unloaded at once and loaded
#     again.
# After every batch and every guest round the kernel log must hold no
# BUG, WARNING, Oops, KASAN or lockdep report.
#
# Usage: stress-l1.sh [--core KO...] --module KO --stress BIN --rounds N
#                     --seed S
#                     [--guest-rounds G --ctl BLK-CTL.SH -- MICROVM ARGS...]
#   --core KO   the vhost core's modules, in order, where it is not built in
#   ARGS: @DISK@ is replaced by the guest's null_blk device.
# null_blk: built in (the KASAN kernel) or loaded from the initramfs's
# /lib/modules/nullblk.order with no device of its own (the harness's
# kernel); the devices are made through configfs either way.
# Prints "KASAN-STRESS: PASS ..." last on success; exit status 1 on
# failure.
core=
ko=
stress=
rounds=0
seed=1
grounds=0
ctl=
while [ $# -gt 0 ]; do
	case "$1" in
	--core) core="$core $2"; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--stress) stress=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--guest-rounds) grounds=$2; shift 2 ;;
	--ctl) ctl=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "stress-l1: unknown option '$1'"; exit 1 ;;
	esac
done

BAD='BUG:|WARNING:|Oops|KASAN|general protection|possible circular|possible recursive|inconsistent lock|suspicious RCU|sleeping function called'

fail()
{
	echo "KASAN-STRESS: FAIL $*"
	echo "--- kernel log (reports)"
	dmesg | grep -E -A 40 "$BAD" | head -n 120
	echo "--- kernel log (last 30 lines)"
	dmesg | tail -n 30
	exit 1
}

log_check()
{
	dmesg | grep -qE "$BAD" && fail "kernel report after: $1"
	return 0
}

now()
{
	cut -d' ' -f1 /proc/uptime
}

wait_dev()
{
	w=0
	while [ ! -e "$1" ] && [ $w -lt 50 ]; do
		sleep 0.1
		w=$((w + 1))
	done
	[ -e "$1" ]
}

# nullb NAME IRQMODE MEMORY_BACKED SIZE_MIB: a configfs null_blk at
# /dev/NAME (6.1 names the disk after the directory).
nullb()
{
	d=/sys/kernel/config/nullb/$1
	mkdir "$d" || fail "configfs null_blk $1"
	{ echo 512 >"$d/blocksize" && echo "$4" >"$d/size" &&
	  echo "$2" >"$d/irqmode" && echo 20000 >"$d/completion_nsec" &&
	  echo "$3" >"$d/memory_backed" && echo 2 >"$d/submit_queues" &&
	  echo 64 >"$d/hw_queue_depth" && echo 1 >"$d/power"; } ||
		fail "configuring null_blk $1"
	wait_dev "/dev/$1" || fail "no /dev/$1"
}

[ -n "$ko" ] && [ -n "$stress" ] || fail "--module and --stress are needed"
for m in $core; do
	insmod "$m" || fail "insmod $m"
done
if [ ! -d /sys/module/null_blk ]; then
	for m in $(cat /lib/modules/nullblk.order); do
		if [ "$m" = null_blk ]; then
			insmod "/lib/modules/$m.ko" nr_devices=0 ||
				fail "insmod null_blk"
		else
			insmod "/lib/modules/$m.ko" || fail "insmod $m"
		fi
	done
fi
grep -q ' /sys/kernel/config ' /proc/mounts ||
	mount -t configfs none /sys/kernel/config || fail "mount configfs"
nullb nbt 2 0 64	# completions from an hrtimer: hard irq
nullb nbs 1 0 64	# completions from softirq
insmod "$ko" || fail "insmod $ko"
wait_dev /dev/vhost-blk || fail "no /dev/vhost-blk"
log_check insmod
echo "stress-l1: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs; module loaded ($(now) s)"

batch=20
done_rounds=0
b=0
while [ $done_rounds -lt "$rounds" ]; do
	n=$batch
	[ $((rounds - done_rounds)) -lt $n ] && n=$((rounds - done_rounds))
	dev=/dev/nbt
	[ $((b % 2)) -eq 1 ] && dev=/dev/nbs
	"$stress" --blockdev $dev --rounds $n --seed $((seed + b)) \
		--module "$ko" --reload-every 5 ||
		fail "vhost_blk_stress batch $b on $dev (seed $((seed + b)), exit $?)"
	log_check "batch $b on $dev"
	done_rounds=$((done_rounds + n))
	b=$((b + 1))
done
echo "stress-l1: $done_rounds simulated rounds in $b batches ($(now) s)"

# guest_run DELAY ARGS...: microvm under blk-ctl.sh, killed DELAY ms
# after the first acknowledged flush, @DISK@ in ARGS filled in (the
# function's own positional parameters: ours stay as given).
guest_run()
{
	d=$1
	shift
	for a in "$@"; do
		shift
		case "$a" in
		*@DISK@*) a=$(printf '%s' "$a" | sed 's|@DISK@|/dev/nbg|g') ;;
		esac
		set -- "$@" "$a"
	done
	/bin/sh "$ctl" --kill-after "E2E-ACK: " --delay-ms "$d" -- "$@" \
		>/tmp/guest.console 2>/tmp/guest.stderr
}

g=0
if [ "$grounds" -gt 0 ]; then
	[ -n "$ctl" ] && [ $# -gt 0 ] || fail "--guest-rounds needs --ctl and -- MICROVM ARGS"
	nullb nbg 2 1 64
	while [ $g -lt "$grounds" ]; do
		delay=$(((seed * 104729 + g * 7919) % 1500))
		guest_run $delay "$@"
		st=$?
		grep -q 'E2E-ACK: ' /tmp/guest.console ||
			{ tail -n 20 /tmp/guest.console /tmp/guest.stderr
			  fail "guest round $g: no acknowledged write before the end (status $st)"; }
		[ $st -ge 128 ] ||
			{ tail -n 20 /tmp/guest.stderr
			  fail "guest round $g: microvm was not killed (status $st)"; }
		i=0
		while ! rmmod vhost_blk 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 500 ] || fail "guest round $g: rmmod vhost_blk"
			sleep 0.01
		done
		insmod "$ko" || fail "guest round $g: insmod"
		wait_dev /dev/vhost-blk || fail "no /dev/vhost-blk"
		log_check "guest round $g (killed $delay ms after the first ack)"
		echo "stress-l1: guest round $g: killed $delay ms after the first ack, module reloaded ($(now) s)"
		g=$((g + 1))
	done
fi
rmmod vhost_blk || fail "final rmmod"
log_check "final rmmod"
echo "KASAN-STRESS: PASS $done_rounds simulated rounds, $g guest rounds"
