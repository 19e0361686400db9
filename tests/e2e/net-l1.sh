#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The host side of e2e.net.*, where microvm runs (inside L1 in nested
# mode). POSIX sh, run by netns-l1.sh (the modules loaded, a network
# namespace of its own). For each RUN (NAME:OPTS), in sequence: one
# receiver per guest CPU (netpeer recv, ports 6001 + CPU), microvm with
# the test kernel and
# initramfs (microvm.test=net), CPUS vCPUs, --stats and
# --net tap=mvtap0,mac=MAC,OPTS (microvm creates the multi-queue tap,
# one queue pair per vCPU unless OPTS says otherwise); once the tap
# exists it gets 10.0.2.1/24; then ping to the guest (10.0.2.2) and one
# sender per guest CPU (ports 5001 + CPU). OPTS "config-file,rate=R"
# boots from a Firecracker config file instead, no --net: its interface
# has rx and tx bandwidth limiters of R bytes/s (a bucket of R/2 bytes
# refilled every 500 ms: a sender starved of CPU for less than that loses
# none of the rate). "bytes=N" in OPTS: N bytes per flow in this
# run instead of BYTES.
# Prints per run "NET-L1: NAME: ..." lines, the guest console between
# "NET-CONSOLE-BEGIN: NAME" and "NET-CONSOLE-END: NAME", microvm's
# stderr between "NET-STDERR-BEGIN: NAME" and "NET-STDERR-END: NAME",
# and "NET-RUN: NAME status S in T s"; exits 0 when every microvm and
# every host-side step succeeded.
#
# Usage: net-l1.sh MICROVM KERNEL INITRD CPUS BYTES MAC NAME:OPTS...
set -u
[ $# -ge 7 ] ||
	{ echo "usage: $0 MICROVM KERNEL INITRD CPUS BYTES MAC NAME:OPTS..." >&2
	  exit 2; }
microvm=$1 kernel=$2 initrd=$3 cpus=$4 all_bytes=$5 mac=$6
shift 6
tmp=${TMPDIR:-/tmp}
tap=mvtap0
result=0

# shellcheck source=mmds-lib-l1.sh
. "$(dirname "$0")/mmds-lib-l1.sh"

# The config-file run also serves MMDS (V2) on eth0: an EC2-shaped store
# from --metadata, and what the guest reads of it.
mmds_cmdline="microvm.mmds=V2 microvm.mmdsget=/latest/meta-data,/latest/meta-data/ami-id,json:/latest/meta-data/network,/latest/nope"
mmds_metadata()
{
	echo '{"latest": {"meta-data": {"ami-id": "ami-12345678", "local-hostname": "mvm-net", "network": {"mac": "'"$mac"'", "subnet": "10.0.2.0/24"}}}}' >"$1"
}
mmds_checks()
{
	for row in "notoken:/latest 401" "token 200" \
		"/latest/meta-data 200 ami-id\nlocal-hostname\nnetwork/" \
		"/latest/meta-data/ami-id 200 ami-12345678" \
		"json:/latest/meta-data/network 200 {\"mac\":\"$mac\",\"subnet\":\"10.0.2.0/24\"}" \
		"/latest/nope 404"; do
		# shellcheck disable=SC2086
		set -- $row
		if [ $# -ge 3 ]; then
			mmds_expect "$tmp/console" "$1" "$2" "$3"
		else
			mmds_expect "$tmp/console" "$1" "$2"
		fi && say "$mmds_msg" || bad "$mmds_msg"
	done
	# The stack's counters: a connection per request, all closed.
	line=$(grep 'mmds: rx-frames' "$tmp/stderr")
	case "$line" in
	*" connections 6 closed 6"*) say "mmds stats: ${line#*mmds: }" ;;
	*) bad "mmds stats: '$line' (want 6 connections, 6 closed)" ;;
	esac
}

# run_one NAME OPTS: one microvm run, its checks' lines printed.
run_one()
{
	name=$1 opts=$2
	bytes=$(echo "$opts" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
	bytes=${bytes:-$all_bytes}
	opts=$(echo "$opts" | sed 's/,*bytes=[0-9]*//')
	say() { echo "NET-L1: $name: $*"; }
	bad() { echo "NET-L1: $name: FAIL: $*"; result=1; }
	cmdline="console=ttyS0 reboot=k panic=1 quiet microvm.test=net microvm.netbytes=$bytes"
	rm -f "$tmp"/recv-*.log "$tmp"/send-*.log
	pids=
	c=0
	while [ $c -lt "$cpus" ]; do
		netpeer recv $((6001 + c)) "$bytes" $((21 + c)) \
			>"$tmp/recv-$c.log" 2>&1 &
		pids="$pids $!"
		c=$((c + 1))
	done
	start=$(date +%s)
	case "$opts" in
	*config-file*)
		rate=$(echo "$opts" | sed -n 's/.*rate=\([0-9]*\).*/\1/p')
		rl="{\"bandwidth\": {\"size\": $((${rate:-0} / 2)), \"refill_time\": 500}}"
		mmds_metadata "$tmp/metadata.json"
		cat >"$tmp/vm.json" <<JSON
{
  "boot-source": { "kernel_image_path": "$kernel", "initrd_path": "$initrd",
                   "boot_args": "$cmdline $mmds_cmdline" },
  "machine-config": { "vcpu_count": $cpus, "mem_size_mib": 256 },
  "network-interfaces": [ { "iface_id": "eth0", "host_dev_name": "$tap",
                            "guest_mac": "$mac",
                            "rx_rate_limiter": $rl, "tx_rate_limiter": $rl } ],
  "mmds-config": { "version": "V2", "network_interfaces": [ "eth0" ] }
}
JSON
		"$microvm" --config-file "$tmp/vm.json" --no-api --stats \
			--metadata "$tmp/metadata.json" \
			--timeout 400 --console "$tmp/console" </dev/null \
			2>"$tmp/stderr" &
		;;
	*)
		"$microvm" --kernel "$kernel" --initrd "$initrd" --cpus "$cpus" \
			--memory 256M --timeout 400 --stats \
			--console "$tmp/console" --cmdline "$cmdline" \
			--net "tap=$tap,mac=$mac${opts:+,$opts}" </dev/null \
			2>"$tmp/stderr" &
		;;
	esac
	vm=$!
	i=0
	while [ ! -e "/sys/class/net/$tap" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -e "/sys/class/net/$tap" ]; then
		say "tap $tap after $i tenths:" \
			"$(ls -d /sys/class/net/$tap/queues/tx-* | wc -l) queues"
		# A queue the limited run's 2 MiB per direction cannot fill:
		# the rx limiter holds packets in it, and a full one drops
		# them, which TCP answers by slowing down on its own.
		echo 10000 >"/sys/class/net/$tap/tx_queue_len" &&
			ip addr add 10.0.2.1/24 dev "$tap" &&
			ip link set "$tap" up || bad "cannot configure $tap"
		i=0
		while ! ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 &&
		      [ $i -lt 60 ]; do
			i=$((i + 1))
		done
		if ping -c 3 -W 5 10.0.2.2 >"$tmp/ping" 2>&1; then
			say "ping 10.0.2.2: $(grep 'packets transmitted' "$tmp/ping")"
		else
			bad "ping 10.0.2.2: $(tail -n 2 "$tmp/ping" | tr '\n' ' ')"
		fi
		c=0
		while [ $c -lt "$cpus" ]; do
			netpeer send 10.0.2.2 $((5001 + c)) "$bytes" \
				$((11 + c)) >"$tmp/send-$c.log" 2>&1 &
			pids="$pids $!"
			c=$((c + 1))
		done
	else
		bad "no $tap after 30 s (microvm did not open it)"
	fi
	wait $vm
	st=$?
	# A microvm that failed leaves peers waiting for nobody.
	[ "$st" = 0 ] || kill $pids 2>/dev/null
	for p in $pids; do
		wait "$p" || result=1
	done
	cat "$tmp"/recv-*.log "$tmp"/send-*.log 2>/dev/null |
		sed "s/^/NET-L1: $name: /"
	echo "NET-CONSOLE-BEGIN: $name"
	tr -d '\r' <"$tmp/console"
	echo "NET-CONSOLE-END: $name"
	echo "NET-STDERR-BEGIN: $name"
	cat "$tmp/stderr"
	echo "NET-STDERR-END: $name"
	case "$opts" in *config-file*) mmds_checks ;; esac
	echo "NET-RUN: $name status $st in $(($(date +%s) - start)) s"
	[ "$st" = 0 ] || result=1
}

for run in "$@"; do
	run_one "${run%%:*}" "${run#*:}"
done
exit $result
