#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where microvm runs (inside L1 in nested mode, on the host in direct
# mode), for evil-test.sh: provides the block device that needs O_DIRECT
# alignment (null_blk, 1 GiB, 512-byte blocks, no memory behind it), puts
# its path where the arguments say @NULLB@, runs PROGRAM and samples its
# peak RSS (VmHWM) twice a second while it runs.
#
# Usage: evil-l1.sh -- PROGRAM ARGS...
# Stderr: "EVIL-L1: VmHWM N kB" (the last sample), "EVIL-L1: ..." notes.
# Exit status: PROGRAM's; 77 when a @NULLB@ argument has no null_blk here
# (on a host: one this script may load, use and unload, none already there).

[ "$1" = -- ] && shift

unload=0
nullb_load()
{
	if [ -f /lib/modules/nullblk.order ]; then
		# L1's initramfs (prepare.sh's NULLBLK_MODULES), busybox insmod.
		for m in $(cat /lib/modules/nullblk.order); do
			if [ "$m" = null_blk ]; then
				insmod "/lib/modules/$m.ko" gb=1 bs=512 \
					nr_devices=1 memory_backed=0 || return 1
			else
				insmod "/lib/modules/$m.ko" || return 1
			fi
		done
	else
		# A host's own null_blk may hold someone's test data.
		if [ -e /dev/nullb0 ] || grep -q '^null_blk ' /proc/modules; then
			echo "EVIL-L1: null_blk already loaded here; not" \
				"touching it" >&2
			return 1
		fi
		modprobe null_blk gb=1 bs=512 nr_devices=1 memory_backed=0 \
			2>/dev/null || return 1
		unload=1
	fi
	i=0
	while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b /dev/nullb0 ]
}

case " $* " in
*@NULLB@*)
	if ! nullb_load; then
		echo "EVIL-L1: no null_blk here (needs L1's initramfs or root" \
			"with the null_blk module); skipping" >&2
		exit 77
	fi
	;;
esac

# Rebuild the argument list with @NULLB@ replaced.
n=$#
while [ "$n" -gt 0 ]; do
	a=$1
	shift
	case "$a" in
	*@NULLB@*) a="/dev/nullb0${a#*@NULLB@}" ;;
	esac
	set -- "$@" "$a"
	n=$((n - 1))
done

"$@" &
pid=$!
hwm=
while kill -0 "$pid" 2>/dev/null; do
	v=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p' \
		"/proc/$pid/status" 2>/dev/null)
	[ -n "$v" ] && hwm=$v
	sleep 0.5
done
wait "$pid"
rc=$?
[ $unload -eq 0 ] || modprobe -r null_blk
echo "EVIL-L1: VmHWM ${hwm:-?} kB" >&2
exit $rc
