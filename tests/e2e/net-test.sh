#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# e2e.net.*: microvm's virtio-net device against a real guest (the test
# kernel's virtio_net driver) and a real multi-queue tap on the host, one
# L1 boot when nested (net-l1.sh, in a network namespace of its own), the
# guest's side in guest/scenarios.sh (microvm.test=net). Each --run
# NAME:OPTS is one microvm run with --net tap=...,OPTS. Wants for each:
# microvm's status 0; ping both ways; BYTES each way per guest CPU over
# TCP, every byte checked at both ends (guest/netpeer.c), one flow per
# CPU and direction; the guest MAC given; --stats: every queue pair
# carried packets both ways (engine=vhost: its rings' used indices moved),
# the guest's VQ_PAIRS_SET acked, no rx or tx error; the guest's
# E2E-RESULT: PASS.
#
# Usage: net-test.sh --microvm BIN --artifacts DIR [--cpus N]
#        [--bytes N] [--mode MODE] --run NAME:OPTS...
# Exit: 0 pass, 1 fail, 77 skipped (direct mode without root).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MAC=06:00:0a:00:02:02

microvm='' art='' cpus=2 all_bytes=4194304
mode_args=()
runs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--bytes) all_bytes=$2; shift 2 ;;
	--run) runs+=("$2"); shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "net-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ ${#runs[@]} -gt 0 ] ||
	{ echo "net-test: --microvm, --artifacts and --run are required" >&2
	  exit 1; }
microvm=$(realpath "$microvm") && art=$(realpath "$art") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/net-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
fail()
{
	echo "net-test: FAIL: $*"
	fails=$((fails + 1))
}
pass()
{
	echo "net-test: ok: $*"
}

run_guest()
{
	MICROVM_E2E_VERBOSE=1 MICROVM_E2E_L1_CPUS=${MICROVM_E2E_L1_CPUS:-1} \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		--timeout 600 --file "$E2E_DIR/mmds-lib-l1.sh" \
		-- /bin/sh "$E2E_DIR/netns-l1.sh" \
		/bin/sh "$E2E_DIR/net-l1.sh" "$microvm" \
		"$art/vmlinuz" "$art/l2-initrd.cpio.gz" "$cpus" "$all_bytes" \
		"$MAC" "${runs[@]}" >out.log 2>err.log
	status=$?
}
# Direct mode runs net-l1.sh here: it makes a tap, which takes root.
if [ ! -e /dev/kvm ] || [ "${mode_args[1]:-}" = nested ]; then
	:
elif [ "$(id -u)" != 0 ]; then
	echo "net-test: SKIP: direct mode creates a tap device: run as root"
	exit 77
fi
start=$SECONDS
e2e_boot net-test err.log
sed 's/^/  | /' out.log
sed 's/^/  ! /' err.log
[ $status -eq 77 ] && { echo "net-test: SKIP: run-guest.sh skipped"; exit 77; }
echo "net-test: run-guest.sh status $status after $((SECONDS - start)) s"

tr -d '\r' <out.log >out.txt
[ $status -eq 0 ] || fail "net-l1.sh status $status"
grep '^NET-L1: FAIL\|^NETNS-L1: FAIL' out.txt | sed 's/^/net-test: /'
grep -q '^NET-L1: FAIL\|^NETNS-L1: FAIL' out.txt && fails=$((fails + 1))

# check_run NAME OPTS: one run's lines.
check_run()
{
	local n=$1 opts=$2 got c what p line rx tx rxe txe con stats bytes
	bytes=$(echo "$opts" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
	bytes=${bytes:-$all_bytes}
	got=$(sed -n "s/^NET-RUN: $n status \([0-9]*\) .*/\1/p" out.txt)
	[ "$got" = 0 ] && pass "$n: microvm exit status 0" ||
		fail "$n: microvm exit status '${got:-none}', want 0"
	con=$(sed -n "/^NET-CONSOLE-BEGIN: $n\$/,/^NET-CONSOLE-END: $n\$/p" out.txt)
	stats=$(sed -n "/^NET-STDERR-BEGIN: $n\$/,/^NET-STDERR-END: $n\$/p" out.txt)
	grep -q "^NET-L1: $n: ping 10.0.2.2: 3 packets transmitted, 3 packets received" out.txt &&
		pass "$n: host -> guest ping" || fail "$n: host -> guest ping"
	grep -q '^E2E-CHECK: ping 10.0.2.1: 3 packets transmitted, 3 packets received' <<<"$con" &&
		pass "$n: guest -> host ping" || fail "$n: guest -> host ping"
	for c in $(seq 0 $((cpus - 1))); do
		for what in "NET-L1: $n: NETPEER: ok send port $((5001 + c)): $bytes bytes" \
			"NET-L1: $n: NETPEER: ok recv port $((6001 + c)): $bytes bytes"; do
			grep -q "^$what" out.txt && pass "$what" || fail "no '$what'"
		done
		for what in "NETPEER: ok recv port $((5001 + c)): $bytes bytes" \
			"NETPEER: ok send port $((6001 + c)): $bytes bytes"; do
			grep -q "^$what" <<<"$con" && pass "$n: guest $what" ||
				fail "$n: no guest '$what'"
		done
	done
	echo "$con$(grep "^NET-L1: $n: " out.txt)" | grep 'NETPEER: FAIL' |
		sed "s/^/net-test: FAIL: $n: /"
	grep -qi "^E2E-NET-MAC: $MAC\$" <<<"$con" &&
		pass "$n: the guest's MAC is $MAC" ||
		fail "$n: the guest's MAC is not $MAC: $(echo "$con" | grep '^E2E-NET-MAC')"
	# --stats, a line per pair: "microvm: stats eth0 net: pair N ..."
	for p in $(seq 0 $((cpus - 1))); do
		line=$(echo "$stats" | grep " net: pair $p ")
		case "$opts" in
		*engine=vhost*)
			rx=$(echo "$line" | sed -n 's/.* rx-used \([0-9]*\) .*/\1/p')
			tx=$(echo "$line" | sed -n 's/.* tx-used \([0-9]*\) .*/\1/p')
			rxe=0 txe=0 ;;
		*)
			rx=$(echo "$line" | sed -n 's/.* rx-packets \([0-9]*\) .*/\1/p')
			tx=$(echo "$line" | sed -n 's/.* tx-packets \([0-9]*\) .*/\1/p')
			rxe=$(echo "$line" | sed -n 's/.* rx-errors \([0-9]*\) .*/\1/p')
			txe=$(echo "$line" | sed -n 's/.* tx-errors \([0-9]*\) .*/\1/p') ;;
		esac
		if [ "${rx:-0}" -gt 0 ] && [ "${tx:-0}" -gt 0 ] &&
		   [ "${rxe:-1}" = 0 ] && [ "${txe:-1}" = 0 ]; then
			pass "$n: pair $p: $rx in, $tx out, no error"
		else
			fail "$n: pair $p: want traffic both ways, no error: '${line:-none}'"
		fi
	done
	# The guest's VQ_PAIRS_SET, acked (at exit the count is back to one:
	# the guest's poweroff resets the device).
	if [ "$cpus" -gt 1 ]; then
		grep -q " net: control ok [1-9][0-9]* err 0 " <<<"$stats" &&
			pass "$n: the guest's control commands acked" ||
			fail "$n: control queue: $(echo "$stats" | grep ' net: control ')"
	fi
	case "$opts" in
	*rate=*) check_rate "$n" "$(echo "$opts" | sed -n 's/.*rate=\([0-9]*\).*/\1/p')" "$stats" ;;
	esac
	grep -q '^E2E-RESULT: PASS$' <<<"$con" &&
		pass "$n: guest E2E-RESULT: PASS" ||
		fail "$n: guest did not report E2E-RESULT: PASS"
	echo "$con" | grep '^E2E-RESULT: FAIL' | sed "s/^/net-test: $n: guest: /"
}
# rate_of DIRECTION_LINES: bytes per second of flows that ran at once,
# from their "N bytes in T ms" lines: all their bytes over the longest.
rate_of()
{
	sed -n 's/.*: \([0-9]*\) bytes in \([0-9]*\) ms$/\1 \2/p' |
		awk '{ b += $1; if ($2 > t) t = $2 } END { if (t) printf "%d", b * 1000 / t }'
}

# check_rate NAME R STATS: the limiters held each direction to R bytes/s:
# at most 10% over, at least 80% of it (host -> guest: the host senders'
# times; guest -> host: the host receivers'), and --stats counted
# throttling both ways. Over the limit is always the limiter's fault;
# under it, a sender starved of the emulated CPU for longer than the
# bucket's refill loses that rate for good (0.88-0.895 of the limit on
# rx beside the whole suite), so the floor only catches a limiter that
# throttles well below its rate.
check_rate()
{
	local n=$1 r=$2 stats=$3 rx tx got
	rx=$(grep "^NET-L1: $n: NETPEER: ok send port 50" out.txt | rate_of)
	tx=$(grep "^NET-L1: $n: NETPEER: ok recv port 60" out.txt | rate_of)
	for got in "rx $rx" "tx $tx"; do
		set -- $got
		if [ -n "${2:-}" ] && [ $(($2 * 100)) -ge $((r * 80)) ] &&
		   [ $(($2 * 100)) -le $((r * 110)) ]; then
			pass "$n: $1 at $2 bytes/s, limit $r (0.8 to 1.1 of it)"
		else
			fail "$n: $1 at ${2:-?} bytes/s, limit $r: not 0.8 to 1.1 of it"
		fi
	done
	grep -q ' rx-throttled [1-9].* tx-throttled [1-9]' <<<"$stats" &&
		pass "$n: --stats counted throttling both ways" ||
		fail "$n: no rx-throttled and tx-throttled in --stats"
}

for r in "${runs[@]}"; do
	check_run "${r%%:*}" "${r#*:}"
done

[ $fails -eq 0 ] && { echo "net-test: PASS"; exit 0; }
echo "net-test: $fails failure(s)"
exit 1
