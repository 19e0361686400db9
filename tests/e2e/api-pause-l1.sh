#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; run-guest.sh --nested, under vhost-l1.sh with
# the vhost-blk module loaded): pause/resume on virtio-pci with both
# engines. microvm --api-sock boots, through curl, a guest whose four
# drives are all virtio-pci: root and "data" on the io_uring engine,
# "vdata" and "spare" with engine=vhost. The guest runs fio write+verify
# rounds on data (vdb) and vdata (vdc) at once; the host pauses and
# resumes it API_CYCLES times (default 20), and each time the guest's
# tick and both data images stand still while paused, and the tick moves
# after resume. Then one drive swap on the paused machine (spare, 8 MiB,
# to a 48 MiB image): the machine stays paused, nothing moves, and after
# the resume the guest sees the new size. SendCtrlAltDel ends it with
# status 0; each fio loop must have run rounds during the cycles and
# none may have failed verify.
# Prints API-OK / API-FAIL lines; exit 0 when none failed.
#
# Usage: api-pause-l1.sh MICROVM CURL KERNEL INITRD ROOT_IMG DATA_IMG
#        VDATA_IMG SPARE_IMG SWAP_IMG
microvm=$1 curl=$2 kernel=$3 initrd=$4 root=$5 data=$6 vdata=$7 spare=$8
swap=$9
cycles=${API_CYCLES:-20}
work=${TMPDIR:-/tmp}/api-pause-l1.$$
mkdir -p "$work" || exit 1
sock=$work/fc.sock
API_TAG=API
# shellcheck source=api-lib-l1.sh
. "$(dirname "$0")/api-lib-l1.sh"

# rounds DEV: the guest's last finished fio round on DEV (0: none yet).
rounds()
{
	sed -n "s/^E2E-FIO-ROUND \([0-9]*\) bad [0-9]* on $1.*/\1/p" \
		"$work/console" | tail -n 1 | grep . || echo 0
}

# drive ID IMAGE ENGINE: a virtio-pci drive on ENGINE.
drive()
{
	expect 204 PUT "/drives/$1" '{"drive_id": "'"$1"'", "path_on_host": "'"$2"'", "is_root_device": '"$([ "$1" = rootfs ] && echo true || echo false)"', "is_read_only": false, "transport": "pci", "engine": "'"$3"'"}'
}

api_start e2e-pause

expect 204 PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "initrd_path": "'"$initrd"'", "boot_args": "console=ttyS0 reboot=k panic=1 microvm.test=api microvm.fio=/dev/vdb,/dev/vdc quiet"}'
expect 204 PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 256}'
drive rootfs "$root" io_uring
drive data "$data" io_uring
drive vdata "$vdata" vhost
drive spare "$spare" vhost
expect 204 PUT /actions '{"action_type": "InstanceStart"}'

if wait_for 'E2E-FIO-ROUND 1 .* on vdb' 1800 &&
   wait_for 'E2E-FIO-ROUND 1 .* on vdc' 600; then
	ok "guest ticking, a fio round done on vdb (io_uring) and vdc (vhost)"
else
	bad "no fio round on vdb and vdc"
	grep -v '^E2E-TICK' "$work/console" | tail -n 20
	tail -n 20 "$work/stderr"
fi

# Every cycle checked: the tick and both images still while paused.
b0=$(rounds vdb) c0=$(rounds vdc)
n=0
while [ $n -lt "$cycles" ] && kill -0 "$pid" 2>/dev/null; do
	api_pause "cycle $n"
	api_held "cycle $n" "$data" "$vdata"
	api_resume "cycle $n"
	n=$((n + 1))
done
b1=$(rounds vdb) c1=$(rounds vdc)
ok "$n pause/resume cycles; still while paused $still times, moving after resume $moved times"
[ "$still" = "$cycles" ] && [ "$moved" = "$cycles" ] ||
	bad "of $cycles cycles, $still held still and $moved moved on"
[ "$b1" -gt "$b0" ] && [ "$c1" -gt "$c0" ] &&
	ok "fio rounds during the cycles: vdb $b0 -> $b1, vdc $c0 -> $c1" ||
	bad "fio stalled during the cycles: vdb $b0 -> $b1, vdc $c0 -> $c1"

# A drive swap on the paused machine: it stays paused (nothing moves, GET
# / says so) until the resume; the guest finds the new size after it.
api_pause "swap"
expect 204 PATCH /drives/spare '{"drive_id": "spare", "path_on_host": "'"$swap"'"}'
api_says_paused "after the swap"
api_held "after the swap" "$data" "$vdata"
api_resume "after the swap"
[ "$still" = $((cycles + 1)) ] && [ "$moved" = $((cycles + 1)) ] &&
	ok "paused through the swap, moving after the resume"
c2=$(rounds vdc)
wait_for "E2E-FIO-ROUND $((c2 + 1)) .* on vdc" 600 &&
	ok "fio on vdc goes on after the swap" ||
	bad "no fio round on vdc after the swap"

api_end_cad
grep '^E2E-FIO-ROUNDS\|^E2E-RESULT\|^E2E-ROOT\|^E2E-CMDLINE\|^E2E-SIZE' \
	"$work/console.txt"
for d in vdb vdc; do
	grep -q "^E2E-FIO-ROUNDS: [1-9][0-9]* failed 0 on $d\$" \
		"$work/console.txt" && ok "fio verify on $d: no failure" ||
		bad "fio on $d: rounds missing or failed"
done
# Each drive where the guest sees it, by size; vdd has the swapped size.
for d in "vdb $data" "vdc $vdata" "vdd $swap"; do
	set -- $d
	want=$(($(stat -c %s "$2") / 512))
	grep -q "^E2E-SIZE: $1 $want\$" "$work/console.txt" &&
		ok "the guest's $1 has $want sectors" ||
		bad "the guest's $1 has not $want sectors ($2)"
done
grep -q '^E2E-RESULT: PASS$' "$work/console.txt" && ok "guest E2E-RESULT: PASS" ||
	bad "guest did not report E2E-RESULT: PASS"
api_finish
