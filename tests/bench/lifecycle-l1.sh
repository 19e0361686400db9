#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where the VMMs run (inside L1 for lifecycle-bench.sh; busybox sh):
# RUNS rounds, each through lifecycle-probe, alternating: microvm with
# --api-sock booted by InstanceStart, QEMU's microvm machine started with
# -S and a QMP socket then "cont", and microvm booted from its command
# line without the API (its memory beside the API's). The same kernel,
# initramfs (/init: tests/e2e/guest/boottime-init.sh, told to sleep),
# RAM and one vCPU on all three, no disk.
#
# Usage: lifecycle-l1.sh RUNS PROBE MICROVM QEMU KERNEL INITRD MIB CYCLES
#        QEMU-FILES...
# (QEMU-FILES: the firmware QEMU reads, named only so that the harness
# copies them into L1.)
# Stdout: lifecycle-probe's "lc" records. Exit: 0, or 1 when a run failed.
runs=$1 probe=$2 microvm=$3 qemu=$4 kernel=$5 initrd=$6 mib=$7 cycles=$8
cmdline="console=ttyS0 quiet panic=-1 microvm.boot.idle=600"
tmp=${TMPDIR:-/tmp}/lifecycle-l1.$$
mkdir -p "$tmp" || exit 1
sock=$tmp/ctl.sock
echo "note mib=$mib runs=$runs cycles=$cycles cmdline=\"$cmdline\""

fail=0
k=1
while [ "$k" -le "$runs" ]; do
	rm -f "$sock"
	"$probe" --vmm microvm --run "$k" --api http --sock "$sock" \
		--guest-mib "$mib" --cycles "$cycles" --log "$tmp/mv$k.console" \
		--boot "{\"kernel_image_path\": \"$kernel\", \"initrd_path\": \"$initrd\", \"boot_args\": \"$cmdline\"}" \
		--machine "{\"vcpu_count\": 1, \"mem_size_mib\": $mib}" \
		-- "$microvm" --api-sock "$sock" --id bench 2>"$tmp/mv$k.err" ||
		{ fail=1; tail -n 20 "$tmp/mv$k.err" "$tmp/mv$k.console"; }
	rm -f "$sock"
	"$probe" --vmm qemu --run "$k" --api qmp --sock "$sock" \
		--guest-mib "$mib" --cycles "$cycles" --log "$tmp/q$k.console" \
		-- "$qemu" -M microvm,acpi=on -enable-kvm -cpu host -nodefaults \
		-no-user-config -nographic -serial stdio -m "$mib" -smp 1 \
		-kernel "$kernel" -initrd "$initrd" -append "$cmdline" -S \
		-qmp "unix:$sock,server,nowait" 2>"$tmp/q$k.err" ||
		{ fail=1; tail -n 20 "$tmp/q$k.err" "$tmp/q$k.console"; }
	rm -f "$sock"
	"$probe" --vmm microvm_noapi --run "$k" --api none --guest-mib "$mib" \
		--log "$tmp/mvn$k.console" -- "$microvm" --kernel "$kernel" \
		--initrd "$initrd" --cmdline "$cmdline" --cpus 1 \
		--memory "${mib}M" 2>"$tmp/mvn$k.err" ||
		{ fail=1; tail -n 20 "$tmp/mvn$k.err" "$tmp/mvn$k.console"; }
	k=$((k + 1))
done
rm -rf "$tmp"
exit $fail
