#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; tests/bench/console-ab.sh) or on a host with
# KVM: boots the test guest (Debian's kernel and the test initramfs, its
# boot scenario, kernel messages on the console) ROUNDS times under each
# microvm binary given, alternating, with --stats; one record per boot:
#   AB round=R bin=NAME init=S end=S bytes=N io_in=N io_out=N coalesced=N
# init and end: the guest kernel's timestamps of "Run /init" and of its
# power-down line; bytes: the console's output; io_in, io_out: the port
# reads and writes that exited to microvm, all vCPUs; coalesced: the
# writes KVM queued without an exit (--stats "coalesced:"; "-" without).
#
# Usage: console-ab-l1.sh ROUNDS KERNEL INITRD NAME=BIN[=on|off]...
#   on|off: MICROVM_COALESCED_PIO for that binary
rounds=$1 kernel=$2 initrd=$3
shift 3
cmdline="console=ttyS0 panic=-1 microvm.test=boot microvm.cpus=2"
cmdline="$cmdline microvm.mem=256 microvm.end=poweroff microvm.marker=ab"
out=${TMPDIR:-/tmp}/console-ab.out err=${TMPDIR:-/tmp}/console-ab.err
r=1
while [ "$r" -le "$rounds" ]; do
	for nb in "$@"; do
		bin=${nb#*=} knob=''
		case "$bin" in
		*=on | *=off) knob=${bin##*=} bin=${bin%=*} ;;
		esac
		env ${knob:+MICROVM_COALESCED_PIO=$knob} "$bin" \
			--kernel "$kernel" --initrd "$initrd" \
			--cmdline "$cmdline" --cpus 2 --memory 256M --stats \
			>"$out" 2>"$err"
		stamp()
		{
			tr -d '\r' <"$out" |
				sed -n "s|^\[ *\([0-9.]*\)\] $1.*|\1|p" | head -n 1
		}
		io=$(awk '/^microvm: stats vcpu [0-9]+: / {
			for (i = 1; i < NF; i++) {
				if ($i == "io-in") a += $(i + 1)
				if ($i == "io-out") b += $(i + 1)
			} }
			END { printf "io_in=%d io_out=%d", a, b }' "$err")
		coal=$(sed -n 's/^microvm: stats coalesced: .* writes \([0-9]*\)$/\1/p' "$err")
		echo "AB round=$r bin=${nb%%=*} init=$(stamp 'Run /init')" \
			"end=$(stamp 'reboot: Power down') bytes=$(wc -c <"$out")" \
			"$io coalesced=${coal:--}"
	done
	r=$((r + 1))
done
