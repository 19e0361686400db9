#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; run by vmgenid-test.sh through run-guest.sh):
# the VM generation ID across snapshot restores, with the project's
# kernel (its vmgenid driver and the ACPI generic event device). The
# guest's /init prints the ID (busybox devmem at its address), the count
# of the event device's interrupts and whether the kernel reseeded its
# random number generator "due to virtual machine fork", each time one
# of them changes, and ticks. The guest is booted through the API,
# paused, snapshotted and ended; the snapshot is restored twice, one
# after the other. Each restored guest must go on ticking, see one more
# event interrupt and an ID other than the booted guest's and the other
# restore's, and reseed its RNG (which the guest made ready before the
# snapshot).
# Prints VG-OK / VG-FAIL lines; exit 0 when none failed.
#
# Usage: vmgenid-l1.sh MICROVM CURL KERNEL INITRD API_LIB
# (API_LIB: tests/e2e/api-lib-l1.sh, the API checks it shares)
microvm=$1 curl=$2 kernel=$3 initrd=$4 api_lib=$5
base=${TMPDIR:-/tmp}/vmgenid-l1.$$
snap=$base/snap
API_TAG=VG
work=$base/orig
sock=$work/fc.sock
mkdir -p "$snap" "$work" || exit 1
# shellcheck source=../../tests/e2e/api-lib-l1.sh
. "$api_lib"

# state FILE: the guest's last "VG-STATE id I events E reseeds R" line.
state()
{
	tr -d '\r' <"$1" | sed -n 's/^VG-STATE //p' | tail -n 1
}
field() { echo "$1" | sed -n "s/.*$2 \([^ ]*\).*/\1/p"; }

api_start vmgenid
expect 204 PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "initrd_path": "'"$initrd"'", "boot_args": "console=ttyS0 panic=1 quiet random.trust_cpu=on"}'
expect 204 PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}'
expect 204 PUT /actions '{"action_type": "InstanceStart"}'
wait_for 'E2E-TICK 5' 1800 || bad "the guest never ticked"
grep -q '^VG-DRIVER: bound' "$work/console" &&
	ok "the vmgenid driver bound to the ID's device" ||
	bad "no vmgenid driver on the ID's device: $(grep '^VG-DRIVER' "$work/console")"
api_pause "snapshot"
expect 204 PUT /snapshot/create '{"snapshot_type": "Full", "snapshot_path": "'"$snap/state"'", "mem_file_path": "'"$snap/memory"'"}'
booted=$(state "$work/console")
kill "$pid"
wait "$pid"
rm -f "$sock"
boot_id=$(field "$booted" id) boot_ev=$(field "$booted" events)
echo "VG-BOOTED: $booted"
[ -n "$boot_id" ] && [ "$boot_id" != "0x0000000000000000-0x0000000000000000" ] &&
	ok "the booted guest reads an ID: $boot_id" ||
	bad "the booted guest reads no ID ($booted)"
# The guest waited for its RNG before ticking (a fork reseeds only a
# ready one), and a boot is no fork.
[ "$(field "$booted" rngready)" = 1 ] && [ "$(field "$booted" reseeds)" = 0 ] &&
	ok "the booted guest's RNG is ready, never reseeded for a fork" ||
	bad "the booted guest: $booted"

ids=$boot_id
for r in a b; do
	work=$base/$r
	sock=$work/fc.sock
	mkdir -p "$work"
	"$microvm" --restore "$snap" --api-sock "$sock" >"$work/console" \
		2>"$work/stderr" </dev/null &
	pid=$!
	# The guest prints its state when the ID or the count changes.
	i=0
	while [ $i -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
		now=$(state "$work/console")
		[ -n "$now" ] && [ "$(field "$now" events)" != "$boot_ev" ] &&
			break
		sleep 0.1
		i=$((i + 1))
	done
	wait_for 'E2E-TICK' 600 || bad "restore $r: no tick"
	sleep 1
	now=$(state "$work/console")
	kill "$pid"
	wait "$pid"
	rm -f "$sock"
	echo "VG-RESTORED $r: $now"
	grep -q 'Linux version' "$work/console" && bad "restore $r: the guest booted again"
	id=$(field "$now" id)
	[ "$(field "$now" events)" = $((boot_ev + 1)) ] &&
		ok "restore $r: one more event interrupt" ||
		bad "restore $r: events $(field "$now" events), booted with $boot_ev"
	case " $ids " in
	*" $id "*) bad "restore $r: the ID $id is not new" ;;
	*) [ -n "$id" ] && ok "restore $r: a new ID $id" || bad "restore $r: no ID" ;;
	esac
	ids="$ids $id"
	[ "$(field "$now" reseeds)" = 1 ] &&
		ok "restore $r: the kernel reseeded its RNG (virtual machine fork)" ||
		bad "restore $r: reseeds $(field "$now" reseeds), not 1"
	sed "s/^/VG-STDERR $r: /" "$work/stderr"
done
echo "VG-SUMMARY: $fails failure(s)"
[ "$fails" -eq 0 ]
