#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; run-guest.sh --nested) or on a host with KVM:
# starts microvm with only --api-sock and drives it with curl through
# Firecracker's documented requests, as its getting-started guide makes
# them: boot source, machine config, a root drive and a data drive,
# metrics, InstanceStart; then 50 pause/resume cycles while the guest
# runs fio write+verify rounds (its tick counter must stand still while
# paused and move after resume), refusals of wrong requests (each a 400
# with a fault_message, nothing changed), FlushMetrics, a drive swap,
# and SendCtrlAltDel, which must end microvm with status 0.
# Prints API-OK / API-FAIL lines; exit 0 when none failed.
#
# Usage: api-l1.sh MICROVM CURL KERNEL INITRD ROOT_IMG DATA_IMG SPARE_IMG
#        SWAP_IMG
microvm=$1 curl=$2 kernel=$3 initrd=$4 root=$5 data=$6 spare=$7 swap=$8
cycles=${API_CYCLES:-50}
work=${TMPDIR:-/tmp}/api-l1.$$
mkdir -p "$work" || exit 1
sock=$work/fc.sock
API_TAG=API
# shellcheck source=api-lib-l1.sh
. "$(dirname "$0")/api-lib-l1.sh"

api_start e2e-api

expect 200 GET /
case "$body" in
*'"state":"Not started"'*'"id"'* | *'"id":"e2e-api"'*) ok "GET / says Not started" ;;
*) bad "GET / before boot: $body" ;;
esac
refuse PATCH /vm '{"state": "Paused"}'
refuse PUT /actions '{"action_type": "InstanceStart"}'
refuse PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "bogus": 1}'
refuse PUT /machine-config '{"vcpu_count": 0, "mem_size_mib": 256}'
refuse PUT /drives/rootfs '{"drive_id": "other", "path_on_host": "'"$root"'", "is_root_device": true, "is_read_only": false}'
refuse PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/nonexistent", "is_root_device": true, "is_read_only": false, "unknown": true}'
refuse GET /no-such-path
refuse PUT /network-interfaces/eth0 '{"iface_id": "eth0", "host_dev_name": "tap0", "guest_mac": "not-a-mac"}'
refuse PUT /actions 'not json'

expect 204 PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "initrd_path": "'"$initrd"'", "boot_args": "console=ttyS0 reboot=k panic=1 pci=off microvm.test=api microvm.fio=/dev/vdb quiet"}'
expect 204 PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 256}'
expect 200 GET /machine-config
expect 204 PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "'"$root"'", "is_root_device": true, "is_read_only": false}'
expect 204 PUT /drives/data '{"drive_id": "data", "path_on_host": "'"$data"'", "is_root_device": false, "is_read_only": false}'
expect 204 PUT /drives/spare '{"drive_id": "spare", "path_on_host": "'"$spare"'", "is_root_device": false, "is_read_only": false}'
expect 204 PUT /metrics '{"metrics_path": "'"$work/metrics.json"'"}'
expect 200 GET /vm/config
case "$body" in
*'"drive_id":"rootfs"'*'"drive_id":"data"'*) ok "GET /vm/config lists both drives" ;;
*) bad "GET /vm/config: $body" ;;
esac
expect 204 PUT /actions '{"action_type": "InstanceStart"}'
expect 200 GET /
case "$body" in
*'"state":"Running"'*) ok "GET / says Running" ;;
*) bad "GET / after InstanceStart: $body" ;;
esac
refuse PUT /boot-source '{"kernel_image_path": "'"$kernel"'"}'
refuse PUT /actions '{"action_type": "InstanceStart"}'
refuse PATCH /vm '{"state": "Sleeping"}'
refuse PATCH /vm '{"state": "Resumed"}'

if wait_for 'E2E-TICK 3' 1200; then
	ok "guest ticking"
else
	bad "the guest never ticked"
	tail -n 20 "$work/console" "$work/stderr"
fi

# Pause/resume cycles; every 10th checks the guest stands still.
n=0
while [ $n -lt "$cycles" ]; do
	if [ $((n % 10)) -ne 0 ]; then
		# Up to the next checked cycle in one curl (--next): the
		# same requests, without a process start per request, which
		# costs most under emulation.
		k=0 args=
		while [ $((n + k)) -lt "$cycles" ] && [ $(((n + k) % 10)) -ne 0 ]; do
			for st in Paused Resumed; do
				args="$args --next --unix-socket $sock -o /dev/null -w %{http_code}\n -X PATCH http://localhost/vm -H Content-Type:application/json -d {\"state\":\"$st\"}"
			done
			k=$((k + 1))
		done
		# shellcheck disable=SC2086 # the words are the requests
		codes=$("$curl" -sS ${args# --next})
		good=$(echo "$codes" | grep -c '^204$')
		[ "$good" -eq $((2 * k)) ] ||
			bad "cycles $n-$((n + k - 1)): $good of $((2 * k)) answered 204: $codes"
		n=$((n + k))
		continue
	fi
	# Every 10th cycle: the guest stands still while paused, and
	# moves again after the resume.
	api_pause "cycle $n"
	api_held "cycle $n"
	api_resume "cycle $n"
	n=$((n + 1))
done
ok "$n pause/resume cycles; still while paused $still times, moving after resume $moved times"

expect 204 PUT /actions '{"action_type": "FlushMetrics"}'
if grep -q '"block_data"' "$work/metrics.json" &&
   grep -q '"utc_timestamp_ms"' "$work/metrics.json"; then
	ok "metrics line: $(tail -c 300 "$work/metrics.json")"
else
	bad "metrics file: $(head -c 300 "$work/metrics.json")"
fi

# A rate limit set on the running data drive, then lifted (0: none).
expect 204 PATCH /drives/data '{"drive_id": "data", "rate_limiter": {"ops": {"size": 1000, "refill_time": 100}, "bandwidth": {"size": 10485760, "refill_time": 100}}}'
refuse PATCH /drives/data '{"drive_id": "data", "rate_limiter": {"ops": {"size": -1, "refill_time": 100}}}'
expect 204 PATCH /drives/data '{"drive_id": "data", "rate_limiter": {"ops": {"size": 0, "refill_time": 0}}}'

# Drive swap under load: the spare drive's image changes while fio
# verifies on the data drive; the guest must see the new size (at its end,
# E2E-SIZE lines) and fio must not notice.
expect 204 PATCH /drives/spare '{"drive_id": "spare", "path_on_host": "'"$swap"'"}'
refuse PATCH /drives/nodrive '{"drive_id": "nodrive", "path_on_host": "'"$swap"'"}'
refuse PATCH /drives/spare '{"drive_id": "spare", "path_on_host": "/nonexistent"}'
sleep 2

api_end_cad
grep '^E2E-FIO-ROUNDS\|^E2E-RESULT\|^E2E-ROOT\|^E2E-CMDLINE\|^E2E-KBD\|^E2E-SIZE' \
	"$work/console.txt"
# The metrics lines (deltas: FlushMetrics's, the 60 s ones, the one at
# exit) add up to exactly what the guest's fio wrote to the data drive:
# each round 512 writes of 4 KiB.
rounds=$(sed -n 's/^E2E-FIO-ROUNDS: \([0-9]*\) .*/\1/p' "$work/console.txt")
sums=$(awk '{
	if (!match($0, /"block_data":\{[^}]*\}/)) next
	s = substr($0, RSTART, RLENGTH)
	if (match(s, /"write_count":[0-9]+/)) wc += substr(s, RSTART + 14, RLENGTH - 14)
	if (match(s, /"write_bytes":[0-9]+/)) wb += substr(s, RSTART + 14, RLENGTH - 14)
	n++
} END { print n + 0, wc + 0, wb + 0 }' "$work/metrics.json")
set -- $sums
if [ -n "$rounds" ] && [ "$1" -ge 2 ] && [ "$2" = $((rounds * 512)) ] &&
   [ "$3" = $((rounds * 2097152)) ]; then
	ok "metrics: $1 lines, block_data writes $2 / $3 bytes = $rounds fio rounds"
else
	bad "metrics: lines/writes/bytes '$sums' for ${rounds:-?} fio rounds"
fi
# The spare drive (vdc) now has the swapped image's size.
want=$(( $(stat -c %s "$swap") / 512 ))
grep -q "^E2E-SIZE: vdc $want\$" "$work/console.txt" &&
	ok "the guest sees the swapped image's $want sectors" ||
	bad "the guest's vdc size is not $want after the swap"
grep -q '^E2E-RESULT: PASS$' "$work/console.txt" && ok "guest E2E-RESULT: PASS" ||
	bad "guest did not report E2E-RESULT: PASS"
api_finish
