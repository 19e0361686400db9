#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Host side of the crash and host-fault tests, run where microvm runs (in
# nested mode inside L1, as root, by run-guest.sh): sets up the storage
# under the guest's disks, runs microvm with its console through a FIFO
# and acts on what the guest prints there. POSIX sh (busybox in L1).
#
# Usage: blk-ctl.sh [--kill-after MARKER --delay-ms MS] [--loop IMAGE]
#                   [--dm] [--full] [--dmsetup PATH] -- MICROVM ARGS...
#   --kill-after M   SIGKILL microvm MS ms after the console shows M
#   --loop IMAGE     where IMAGE's file system refuses O_DIRECT (L1's
#                    tmpfs), put it on a loop device and give microvm that
#   --dm             @DM@ in ARGS: a device-mapper device, linear over a
#                    loop device on a 32 MiB image in tmpfs; the guest's
#                    "E2E-FAULT: want error|flakey|linear" reloads its table
#   --full           @FULL@ in ARGS: a sparse 16 MiB image on a 4 MiB tmpfs
#                    that a filler file has filled; "want space" removes it
# Exit: microvm's status; 77 when the storage cannot be set up here (not
# root, no dmsetup); 125 when setting it up failed.
set -u

kill_marker=
delay_ms=0
loop_img=
use_dm=0
use_full=0
dmsetup=dmsetup
while [ $# -gt 0 ]; do
	case "$1" in
	--kill-after) kill_marker=$2; shift 2 ;;
	--delay-ms) delay_ms=$2; shift 2 ;;
	--loop) loop_img=$2; shift 2 ;;
	--dm) use_dm=1; shift ;;
	--full) use_full=1; shift ;;
	--dmsetup) dmsetup=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "blk-ctl: unknown option '$1'" >&2; exit 125 ;;
	esac
done

say()
{
	echo "E2E-BLKCTL: $*"
}

die()
{
	echo "blk-ctl: $*" >&2
	cleanup
	exit 125
}

skip()
{
	echo "blk-ctl: $*; skipping" >&2
	exit 77
}

work=$(mktemp -d /tmp/blk-ctl.XXXXXX) || exit 125
DM_NAME=e2e-fault-$$
DM_SECTORS=65536
loop_dev=
dm_dev=
cleanup()
{
	[ -z "$dm_dev" ] || "$dmsetup" remove "$DM_NAME" >/dev/null 2>&1
	[ -z "$loop_dev" ] || losetup -d "$loop_dev" 2>/dev/null
	[ "$use_full" = 0 ] || umount "$work/full" 2>/dev/null
	rm -rf "$work"
}

# load_modules: the loop and device-mapper modules (prepare.sh's
# fault.order in L1; elsewhere whatever the host has).
load_modules()
{
	[ -f /lib/modules/fault.order ] || return 0
	for m in $(cat /lib/modules/fault.order); do
		[ -d "/sys/module/$(echo "$m" | tr - _)" ] ||
			insmod "/lib/modules/$m.ko" || die "insmod $m.ko"
	done
	i=0
	while [ ! -e /dev/loop0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# new_loop FILE: attach FILE to a free loop device, print the device.
new_loop()
{
	for d in /dev/loop[0-9]*; do
		losetup "$d" "$1" 2>/dev/null && { echo "$d"; return 0; }
	done
	return 1
}

dm_table()
{
	case "$1" in
	linear) echo "0 $DM_SECTORS linear $loop_dev 0" ;;
	error) echo "0 $DM_SECTORS error" ;;
	# Never up, and then writes fail while reads pass (without features
	# dm-flakey fails both, like the error target).
	flakey) echo "0 $DM_SECTORS flakey $loop_dev 0 0 1 1 error_writes" ;;
	esac
}

dm_set()
{
	"$dmsetup" suspend --noudevsync "$DM_NAME" &&
	"$dmsetup" reload --noudevsync "$DM_NAME" --table "$(dm_table "$1")" &&
	"$dmsetup" resume --noudevsync "$DM_NAME"
}

setup_dm()
{
	command -v "$dmsetup" >/dev/null 2>&1 || skip "no dmsetup"
	truncate -s $((DM_SECTORS * 512)) "$work/dm.img" || die "truncate"
	loop_dev=$(new_loop "$work/dm.img") || die "no free loop device"
	"$dmsetup" create --noudevsync "$DM_NAME" --table "$(dm_table linear)" ||
		die "dmsetup create failed"
	"$dmsetup" mknodes "$DM_NAME" 2>/dev/null
	dm_dev=/dev/mapper/$DM_NAME
	[ -b "$dm_dev" ] || die "no $dm_dev after dmsetup create"
	say "$dm_dev: linear over $loop_dev"
}

setup_full()
{
	mkdir -p "$work/full" &&
		mount -t tmpfs -o size=4m tmpfs "$work/full" ||
		die "mounting a 4 MiB tmpfs failed"
	truncate -s 16M "$work/full/img" || die "truncate"
	dd if=/dev/zero of="$work/full/filler" bs=65536 2>/dev/null
	say "$work/full/img: sparse 16 MiB on a full 4 MiB tmpfs" \
		"($(df -k "$work/full" | awk 'NR == 2 { print $4 }') KiB free)"
}

# setup_loop: IMAGE on a loop device where its file system lacks O_DIRECT.
setup_loop()
{
	loop_dev=$(new_loop "$loop_img") || die "no free loop device"
	say "$loop_img: on $loop_dev (its file system refuses O_DIRECT)"
}

if [ -n "$loop_img" ] &&
   dd if="$loop_img" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	loop_img=
fi
if [ "$use_dm" = 1 ] || [ "$use_full" = 1 ] || [ -n "$loop_img" ]; then
	[ "$(id -u)" = 0 ] || skip "needs root for loop, dm and mounts"
	load_modules
fi
[ "$use_dm" = 0 ] || setup_dm
[ "$use_full" = 0 ] || setup_full
[ -z "$loop_img" ] || setup_loop

# The program's arguments with the placeholders and the image replaced.
for a in "$@"; do
	shift
	case "$a" in
	*@DM@*) a=$(printf '%s' "$a" | sed "s|@DM@|$dm_dev|") ;;
	*@FULL@*) a=$(printf '%s' "$a" | sed "s|@FULL@|$work/full/img|") ;;
	esac
	if [ -n "$loop_img" ] && [ -n "$loop_dev" ]; then
		case "$a" in
		"$loop_img"*) a=$loop_dev${a#"$loop_img"} ;;
		esac
	fi
	set -- "$@" "$a"
done

act()
{
	case "$1" in
	error | flakey | linear)
		if dm_set "$1"; then
			say "dm table now $1"
		else
			say "FAILED to load the $1 table"
		fi ;;
	space)
		rm -f "$work/full/filler" && say "filler removed" ;;
	*) say "unknown request '$1'" ;;
	esac
}

mkfifo "$work/console" || die "mkfifo"
"$@" >"$work/console" &
pid=$!
killer=
while IFS= read -r line; do
	printf '%s\n' "$line"
	case "$line" in
	*"E2E-FAULT: want "*)
		want=${line#*E2E-FAULT: want }
		act "$(printf '%s' "$want" | tr -d '\r')" ;;
	esac
	if [ -n "$kill_marker" ] && [ -z "$killer" ]; then
		case "$line" in
		*"$kill_marker"*)
			secs=$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))
			(sleep "$secs"; kill -KILL "$pid") &
			killer=$! ;;
		esac
	fi
done <"$work/console"
wait "$pid"
rc=$?
[ -z "$killer" ] || kill "$killer" 2>/dev/null
sync
cleanup
exit $rc
