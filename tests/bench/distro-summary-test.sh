#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# distro-summary.sh on made-up records: medians per VMM (odd and even
# counts), systemd-analyze's "1min 2.5s" and "812ms" forms, exits named
# by reason, interrupts per source and in all, a boot that gave no report
# (left out, not counted as a round), a warm-up boot (run 0, left out),
# and the rounds won.
S=$(dirname "$0")/distro-summary.sh
t=$(mktemp -d "${TMPDIR:-/tmp}/distro-summary-test.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
fail=0
check()
{
	if grep -qxF "$1" "$t/out"; then
		echo "ok: $1"
	else
		echo "FAIL: no line '$1'"
		fail=1
	fi
}
rec()
{
	v=$1 k=$2 mu=$3 sa=$4
	cat <<EOT
DREC vmm=$v run=$k kvm exits=$((k * 100)) halt_exits=7
DREC vmm=$v run=$k exit_reasons 120=$k 123=$((k * 2)) 4242=1
DREC vmm=$v run=$k user_exits 2=$((k * 2)) 6=3
DREC vmm=$v run=$k pio_ports 1021=$k 1016=4
DREC vmm=$v run=$k msr_exits 1760=9 2059=$k
DREC vmm=$v run=$k DBENCH multi_user_s=$mu
DREC vmm=$v run=$k DBENCH init_s=1.5 systemd_s=4.25
DREC vmm=$v run=$k DBENCH-SA-TIME Startup finished in $sa (kernel) + 812ms (initrd) + 1min 2.5s (userspace) = 1min 4.312s
DREC vmm=$v run=$k DBENCH-SA-TIME multi-user.target reached after 58.25s in userspace.
DREC vmm=$v run=$k DBENCH-IRQ 29 $((k * 10)) PCI-MSI 16385-edge virtio0-req.0
DREC vmm=$v run=$k DBENCH-IRQ LOC 5 Local timer interrupts
DREC vmm=$v run=$k DBENCH-DISK vda 100 0 800 50 2 0 0 0 0 0 0
EOT
}
{
	echo "DREC note disk=/dev/vda"
	rec microvm 0 1 0.5s	# the warm-up boot: not counted
	rec microvm 1 10.5 1.0s
	rec qemu 1 20 2.0s
	rec microvm 2 30 3.0s
	rec qemu 2 25 2.5s
	rec microvm 3 12 1.5s
	echo "DREC vmm=microvm run=1 DBENCH-CPUFLAGS fpu rdrand hypervisor x2apic"
	echo "DREC vmm=qemu run=1 DBENCH-CPUFLAGS fpu hypervisor svm x2apic"
	echo "DREC vmm=qemu run=3 note FAIL no report; console tail:"
	echo "not a record"
} >"$t/records"
"$S" "$t/records" "microvm qemu" >"$t/out" || { echo "FAIL: status $?"; fail=1; }
check "summary guest.multi_user_s vmm=microvm median=12 min=10.5 max=30 n=3"
check "summary guest.multi_user_s vmm=qemu median=22.5 min=20 max=25 n=2"
check "summary sa.kernel vmm=microvm median=1.5 min=1 max=3 n=3"
check "summary sa.initrd vmm=qemu median=0.812 min=0.812 max=0.812 n=2"
check "summary sa.userspace vmm=microvm median=62.5 min=62.5 max=62.5 n=3"
check "summary sa.total vmm=microvm median=64.312 min=64.312 max=64.312 n=3"
check "summary sa.multi_user vmm=qemu median=58.25 min=58.25 max=58.25 n=2"
check "summary exit.hlt vmm=microvm median=2 min=1 max=3 n=3"
check "summary exit.ioio vmm=qemu median=3 min=2 max=4 n=2"
check "summary exit.4242 vmm=qemu median=1 min=1 max=1 n=2"
check "summary exit.total vmm=microvm median=7 min=4 max=10 n=3"
check "summary uexit.io vmm=microvm median=4 min=2 max=6 n=3"
check "summary pio.0x3fd vmm=microvm median=2 min=1 max=3 n=3"
check "summary pio.0x3f8 vmm=qemu median=4 min=4 max=4 n=2"
check "summary msr.tsc_deadline vmm=microvm median=9 min=9 max=9 n=3"
check "summary msr.x2apic_eoi vmm=qemu median=1.5 min=1 max=2 n=2"
check "summary uexit.mmio vmm=microvm median=3 min=3 max=3 n=3"
check "summary irq.PCI-MSI_16385-edge_virtio0-req.0 vmm=qemu median=15 min=10 max=20 n=2"
check "summary irq.total vmm=microvm median=25 min=15 max=35 n=3"
check "summary disk.vda.read_latency_ms vmm=microvm median=0.5 min=0.5 max=0.5 n=3"
check "summary kvm.exits vmm=qemu median=150 min=100 max=200 n=2"
check "round 1 microvm_multi_user_s=10.5 qemu_multi_user_s=20"
check "round 2 microvm_multi_user_s=30 qemu_multi_user_s=25"
check "wins microvm_faster_to_multi_user=1 of 2 rounds"
check "| guest.multi_user_s | 12 | 22.5 | 0.53 |"
check "cpuflags only_microvm: rdrand"
check "cpuflags only_qemu: svm"
if grep -q "run=3.*qemu\|round 3" "$t/out"; then
	echo "FAIL: the boot without a report was counted"
	fail=1
fi
[ $fail = 0 ] || { echo "--- output:"; cat "$t/out"; }
exit $fail
