#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Real-guest network benchmark: iperf3 between L1 and an L2 guest on a
# virtio-net-pci device with 2 queue pairs over a multi-queue tap, under
# microvm (its own queue workers, and engine=vhost) and under QEMU's
# microvm machine (vhost=off and vhost=on), side by side in ONE L1 (nested
# mode of tests/e2e/run-guest.sh). Per (VMM, direction, repeat) one
# "net-bench: ..." line (net-bench-l1.sh), then a table of the means with
# their range over the repeats: Mbit/s, KVM exits and interrupts injected
# per packet (L1's debugfs; the tap's rx + tx packets), and each of
# microvm's figures over QEMU's with the same engine. Under emulation
# only ratios and counts per packet mean anything, never Mbit/s itself.
# Then, in the same L1 (vsock-bench-l1.sh), vsock: one connection echoing
# 16 MiB both ways at once and 2000 round trips of 64 bytes from L1
# through the guest's echo, under microvm's hybrid vsock, microvm with
# engine=vhost and QEMU's vhost-vsock-pci: MB/s and the mean round trip,
# and microvm's over QEMU's.
#
# Usage: net-bench.sh [--microvm BIN] [--artifacts DIR] [--runtime S]
#        [--repeat N] [--vmms "microvm microvm-vhost qemu qemu-vhost"]
#        [--vsock-vmms "microvm microvm-vhost qemu-vhost"] (none: "")
#        [--raw FILE] [--mode MODE]
# Environment: run-guest.sh's MICROVM_E2E_L1_CPUS (default 1).
# Exit: 0 every run measured; 1 a run failed; 77 it cannot run here (no
# QEMU, iperf3 or artifacts).
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$BENCH_DIR/../e2e
microvm=$BENCH_DIR/../../build/microvm
art=$BENCH_DIR/../../build/e2e-artifacts
runtime=10
repeat=2
vmms="microvm microvm-vhost qemu qemu-vhost"
vsock_vmms="microvm microvm-vhost qemu-vhost"
raw=
mode_args=()

die()
{
	echo "net-bench: $*" >&2
	exit 1
}

skip()
{
	echo "net-bench: $*; skipping" >&2
	exit 77
}

while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--vmms) vmms=$2; shift 2 ;;
	--vsock-vmms) vsock_vmms=$2; shift 2 ;;
	--raw) raw=$2; shift 2 ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) die "unknown option '$1'" ;;
	esac
done
[ -x "$microvm" ] || die "no microvm binary '$microvm' (build it, or --microvm)"
microvm=$(realpath "$microvm")
qemu=$(command -v qemu-system-x86_64) ||
	skip "needs qemu-system-x86_64 (apt-get install qemu-system-x86)"
iperf=$(command -v iperf3) || skip "needs iperf3 (apt-get install iperf3)"
for f in vmlinuz l2-initrd.cpio.gz l1-base.cpio.gz; do
	[ -f "$art/$f" ] || skip "no $art/$f (run tests/e2e/prepare.sh $art)"
done
art=$(cd "$art" && pwd -P)
firmware=()
for f in bios-microvm.bin qboot.rom linuxboot_dma.bin pvh.bin; do
	[ -f "/usr/share/qemu/$f" ] && firmware+=(--file "/usr/share/qemu/$f")
done
[ ${#firmware[@]} -gt 0 ] || skip "no QEMU firmware in /usr/share/qemu"
vsock_args=()
if [ -n "$vsock_vmms" ]; then
	[ -x "$art/bin/vsockpeer" ] || skip "no $art/bin/vsockpeer (prepare.sh)"
	vsock_args=("$BENCH_DIR/vsock-bench-l1.sh" "$art/bin/vsockpeer" 16777216
		    2000 "$vsock_vmms")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/net-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The guest's initramfs: the test guest's, then iperf3 and every library
# ldd lists at their paths (microvm.test=netbench starts its server).
mkdir -p "$work/root"
for f in "$iperf" $(ldd "$iperf" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p
	s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
	mkdir -p "$work/root$(dirname "$f")"
	cp -L "$f" "$work/root$f" || die "cannot copy $f"
done
cp "$art/l2-initrd.cpio.gz" "$work/bench-initrd" || die "no l2 initrd"
(cd "$work/root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) >>"$work/bench-initrd" ||
	die "cpio failed"
cp "$art/vmlinuz" "$work/vmlinuz" || die "cannot copy $art/vmlinuz"

nruns=$(( $(echo $vmms $vsock_vmms | wc -w) * repeat ))
limit=$((300 + nruns * (120 + runtime * 4)))
echo "net-bench: $nruns runs ($vmms x $repeat), iperf3 -P 2 for" \
	"$runtime s each way, L1 ${MICROVM_E2E_L1_CPUS:-1} vCPU(s), L2 2" \
	"vCPUs; harness limit $limit s" >&2
MICROVM_E2E_L1_MEMORY=${MICROVM_E2E_L1_MEMORY:-3072} \
	"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
	--timeout "$limit" "${firmware[@]}" -- /bin/sh \
	"$E2E_DIR/netns-l1.sh" /bin/sh \
	"$BENCH_DIR/net-bench-l1.sh" "$microvm" "$qemu" "$iperf" \
	"$work/vmlinuz" "$work/bench-initrd" "$runtime" "$repeat" "$vmms" \
	"${vsock_args[@]}" >"$work/l1.out"
rc=$?
[ -z "$raw" ] || cp "$work/l1.out" "$raw"
grep '^net-bench: \|^vsock-bench: ' "$work/l1.out"
[ "$rc" -eq 77 ] && exit 77

# The table: per VMM and direction, the mean (min-max) of each figure;
# then microvm over QEMU, engine for engine.
awk '
/^net-bench: vmm=/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	k = f["vmm"] " " f["dir"]
	if (!(k in n)) order[++nk] = k
	n[k]++
	v["mbits"] = f["mbits"]
	v["exits/pkt"] = f["packets"] ? f["exits"] / f["packets"] : 0
	v["irqs/pkt"] = f["packets"] ? f["irq_injections"] / f["packets"] : 0
	for (m in v) {
		s[k, m] += v[m]
		if (n[k] == 1 || v[m] < lo[k, m]) lo[k, m] = v[m]
		if (n[k] == 1 || v[m] > hi[k, m]) hi[k, m] = v[m]
	}
}
END {
	split("mbits exits/pkt irqs/pkt", ms, " ")
	printf "%-16s %-4s %-22s %-22s %-22s\n", "vmm", "dir", "Mbit/s",
		"KVM exits/packet", "interrupts/packet"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, p, " ")
		printf "%-16s %-4s", p[1], p[2]
		for (j = 1; j <= 3; j++) {
			m = ms[j]
			mean[k, m] = s[k, m] / n[k]
			printf " %-22s", sprintf("%.3f (%.3f-%.3f)", mean[k, m],
				lo[k, m], hi[k, m])
		}
		printf "\n"
	}
	printf "\nmicrovm / QEMU, same engine (Mbit/s: above 1 is faster; per packet: below 1 is fewer)\n"
	split("microvm:qemu microvm-vhost:qemu-vhost", pairs, " ")
	for (i = 1; i <= 2; i++) {
		split(pairs[i], pq, ":")
		for (d = 1; d <= 2; d++) {
			dir = d == 1 ? "h2g" : "g2h"
			a = pq[1] " " dir; b = pq[2] " " dir
			if (!(a in n) || !(b in n)) continue
			printf "%-26s %-4s", pairs[i], dir
			for (j = 1; j <= 3; j++) {
				m = ms[j]
				printf " %s %.2f", m, mean[b, m] ? mean[a, m] / mean[b, m] : 0
			}
			printf "\n"
		}
	}
}' "$work/l1.out"
# vsock: per VMM the mean (min-max) MB/s and round trip; microvm's over
# QEMU's vhost-vsock.
awk '
/^vsock-bench: vmm=/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	k = f["vmm"]
	if (!(k in n)) order[++nk] = k
	n[k]++
	v["MB/s"] = f["mbytes_s"]; v["rtt_us"] = f["rtt_us"]
	for (m in v) {
		s[k, m] += v[m]
		if (n[k] == 1 || v[m] < lo[k, m]) lo[k, m] = v[m]
		if (n[k] == 1 || v[m] > hi[k, m]) hi[k, m] = v[m]
	}
}
END {
	if (!nk) exit
	printf "\n%-16s %-24s %-24s\n", "vsock vmm", "MB/s (echo, both ways)",
		"round trip, us"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		printf "%-16s", k
		for (j = 1; j <= 2; j++) {
			m = j == 1 ? "MB/s" : "rtt_us"
			mean[k, m] = s[k, m] / n[k]
			printf " %-24s", sprintf("%.2f (%.2f-%.2f)", mean[k, m],
				lo[k, m], hi[k, m])
		}
		printf "\n"
	}
	if (!(("qemu-vhost") in n)) exit
	printf "\nvsock, microvm / QEMU vhost-vsock (MB/s: above 1 is faster; round trip: below 1 is shorter)\n"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		if (k == "qemu-vhost") continue
		printf "%-16s MB/s %.2f round trip %.2f\n", k,
			mean[k, "MB/s"] / mean["qemu-vhost", "MB/s"],
			mean[k, "rtt_us"] / mean["qemu-vhost", "rtt_us"]
	}
}' "$work/l1.out"
grep '^NETNS-L1: FAIL' "$work/l1.out" >&2
grep -q '^net-bench: FAIL\|^vsock-bench: FAIL\|^NETNS-L1: FAIL' "$work/l1.out" &&
	exit 1
[ "$rc" -eq 0 ] || { echo "net-bench: L1 status $rc" >&2; exit 1; }
exit 0
