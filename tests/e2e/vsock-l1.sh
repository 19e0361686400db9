#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The host side of e2e.vsock.hybrid, where microvm runs (inside L1 in
# nested mode). POSIX sh. For each TRANSPORT, in sequence: a Unix echo
# listener at <uds>_1025 (vsockpeer hlisten, the target of the guest's
# own connection), then microvm with the project's kernel, ROOT, 2 vCPUs,
# --stats and --vsock cid=3,uds=<uds>,transport=TRANSPORT in the
# background, and while its guest (guest/vsock-run.sh) runs:
#   hwait     CONNECT 1024 until the guest's echo listener answers OK
#   hconnect  CONNECT 1024 (exactly Kata's agent client's line), 4 MiB
#             both ways, byte-exact
#   hmany     64 connections to 1024 at once, 64 KiB each
#   hstall    a connection to 1026, whose guest side never reads: the
#             bytes the host could write before the socket stayed
#             blocked, with microvm's VmRSS before and after
#   hconnect  to 1030: the guest's cue to finish
# Prints "VSOCK-STALL-RSS: T accepted N wmem W rss-before A rss-after B"
# (kB) and "VSOCK-RUN: T status S in T s" after each run; exits 0 when
# every microvm exited 0 and every host check passed, else 1.
# A TRANSPORT of T-vhost is transport T with engine=vhost: the kernel's
# vhost_vsock (loaded here), the host side AF_VSOCK to the guest's CID
# ("cid:3" for vsockpeer's host commands) and an AF_VSOCK echo listener
# on port 1025 for the guest's connection.
#
# Usage: vsock-l1.sh MICROVM KERNEL ROOT VSOCKPEER TRANSPORT...
#   ROOT: the root image; an '@' in it stands for the TRANSPORT
set -u
[ $# -ge 5 ] ||
	{ echo "usage: $0 MICROVM KERNEL ROOT VSOCKPEER TRANSPORT..." >&2; exit 2; }
microvm=$1 kernel=$2 root=$3 peer=$4
shift 4
tmp=${TMPDIR:-/tmp}
result=0

rss()
{
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status" \
		2>/dev/null
}

# host_checks T PID UDS: the checks above against microvm PID.
host_checks()
{
	t=$1 pid=$2 uds=$3
	"$peer" hwait "$uds" 1024 240 || return 1
	"$peer" hconnect "$uds" 1024 4194304 || result=1
	"$peer" hmany "$uds" 1024 64 65536 || result=1
	before=$(rss "$pid")
	"$peer" hstall "$uds" 1026 3 >"$tmp/vsock-stall.log" &
	stall=$!
	i=0
	while ! grep -q 'VSOCK-STALL:\|VSOCK-CHECK:' "$tmp/vsock-stall.log" &&
	      [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	after=$(rss "$pid")
	wait $stall || result=1
	cat "$tmp/vsock-stall.log"
	took=$(sed -n 's/^VSOCK-STALL: port 1026 accepted \([0-9]*\) .*/\1/p' \
		"$tmp/vsock-stall.log")
	echo "VSOCK-STALL-RSS: $t accepted ${took:-none}" \
		"wmem $(cat /proc/sys/net/core/wmem_default)" \
		"rss-before ${before:-none} rss-after ${after:-none}"
}

for t in "$@"; do
	uds=$tmp/vsock-$t.sock
	rm -f "$uds" "${uds}_1025"
	case "$t" in
	*-vhost)
		# The kernel's vhost_vsock and its dependencies, once.
		for m in $(cat /lib/modules/vsock.order 2>/dev/null); do
			[ -d "/sys/module/$m" ] ||
				insmod "/lib/modules/$m.ko" ||
				echo "VSOCK-CHECK: FAIL insmod $m.ko"
		done
		[ -f /lib/modules/vsock.order ] || modprobe vhost_vsock
		"$peer" listen 1025 >"$tmp/vsock-hlisten.log" 2>&1 &
		vsock="cid=3,engine=vhost,transport=${t%-vhost}"
		uds=cid:3 ;;
	*)
		"$peer" hlisten "${uds}_1025" >"$tmp/vsock-hlisten.log" 2>&1 &
		vsock="cid=3,uds=$uds,transport=$t" ;;
	esac
	hl=$!
	start=$(date +%s)
	"$microvm" --kernel "$kernel" --cpus 2 --timeout 400 --stats \
		--disk "$(echo "$root" | sed "s/@/$t/g"),transport=${t%-vhost}" \
		--vsock "$vsock" </dev/null &
	vm=$!
	host_checks "$t" "$vm" "$uds" || result=1
	# Done: the guest powers off after this connection, or on its own
	# after its wait.
	"$peer" hconnect "$uds" 1030 0 || result=1
	wait $vm
	st=$?
	kill $hl 2>/dev/null
	wait $hl 2>/dev/null
	cat "$tmp/vsock-hlisten.log"
	echo "VSOCK-RUN: $t status $st in $(( $(date +%s) - start )) s"
	[ "$st" = 0 ] || result=1
	rm -f "$tmp/vsock-$t.sock" "$tmp/vsock-$t.sock_1025"
done
exit $result
