#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The L1 side of net-bench.sh (where the VMMs run; POSIX sh), run by
# tests/e2e/netns-l1.sh (a network and mount namespace of its own). Per
# repeat and VMM: the VMM boots the
# guest (microvm.test=netbench: iperf3 -s on 10.0.2.2) on 2 vCPUs with a
# 2-queue-pair virtio-net-pci device on the multi-queue tap mvtap0, which
# the VMM creates; the tap gets 10.0.2.1/24; then per direction one
# `iperf3 -c 10.0.2.2 -P 2 -t RUNTIME` (h2g: L1 sends; g2h: -R, the
# guest sends), KVM's statistics (debugfs, this L1's only VM) and the
# tap's packet counters sampled right before and after it. Prints one
# line per run:
#   net-bench: vmm=V dir=D rep=R mbits=M packets=P exits=E io_exits=I
#     mmio_exits=X irq_injections=J
# (the counters are the run's deltas), "net-bench: FAIL ..." lines, and
# exits 0 when every run was measured. With the VSOCK arguments it then
# runs vsock-bench-l1.sh (its path) with VSOCKPEER BYTES N VSOCK_VMMS, the
# same kernel, initramfs and repeats, in this L1.
#
# Usage: net-bench-l1.sh MICROVM QEMU IPERF3 KERNEL INITRD RUNTIME REPEAT VMMS
#        [VSOCK_L1 VSOCKPEER BYTES N VSOCK_VMMS]
#   VMMS: "microvm microvm-vhost qemu qemu-vhost" (any of them, in order)
set -u
[ $# -eq 8 ] || [ $# -eq 13 ] ||
	{ echo "usage: $0 MICROVM QEMU IPERF3 KERNEL INITRD RUNTIME REPEAT VMMS [VSOCK_L1 VSOCKPEER BYTES N VSOCK_VMMS]" >&2
	  exit 2; }
microvm=$1 qemu=$2 iperf=$3 kernel=$4 initrd=$5 runtime=$6 repeat=$7
vmms=$8
tap=mvtap0
cpus=2
work=${TMPDIR:-/tmp}/net-bench
DBG=/sys/kernel/debug/kvm
result=0
mkdir -p $work
mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -f $DBG/exits ] || { echo "net-bench: FAIL no $DBG/exits"; exit 1; }
cmdline="console=ttyS0 reboot=k panic=1 quiet microvm.test=netbench"

# counters: KVM's and the tap's, space-separated, in a fixed order.
counters()
{
	for f in exits io_exits mmio_exits irq_injections; do
		printf '%s ' "$(cat $DBG/$f 2>/dev/null || echo 0)"
	done
	echo $(($(cat /sys/class/net/$tap/statistics/rx_packets) +
		$(cat /sys/class/net/$tap/statistics/tx_packets)))
}

# start VMM: the guest in the background, its pid in $pid.
start()
{
	case "$1" in
	microvm | microvm-vhost)
		engine=user
		[ "$1" = microvm ] || engine=vhost
		"$microvm" --kernel "$kernel" --initrd "$initrd" --cpus $cpus \
			--memory 512M --cmdline "$cmdline" \
			--net "tap=$tap,transport=pci,queues=2,engine=$engine" \
			--console $work/console </dev/null 2>$work/stderr &
		;;
	qemu | qemu-vhost)
		vhost=off
		[ "$1" = qemu ] || vhost=on
		"$qemu" -M microvm,acpi=on,pcie=on -enable-kvm -cpu host \
			-smp $cpus -m 512 -nodefaults -no-user-config \
			-nographic -serial file:$work/console \
			-kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
			-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no,queues=2,vhost=$vhost" \
			-device virtio-net-pci,netdev=n0,mq=on,vectors=6,romfile= \
			</dev/null >/dev/null 2>$work/stderr &
		;;
	esac
	pid=$!
}

# one VMM REP: boot, both directions, stop.
one()
{
	vmm=$1 rep=$2
	rm -f $work/console
	start "$vmm"
	i=0
	while ! ip link show $tap >/dev/null 2>&1 && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ip addr add 10.0.2.1/24 dev $tap 2>/dev/null
	ip link set $tap up
	i=0
	while ! grep -q NETBENCH-READY $work/console 2>/dev/null &&
	      [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do
		sleep 1
		i=$((i + 1))
	done
	if ! grep -q NETBENCH-READY $work/console 2>/dev/null ||
	   ! ping -c 2 -W 5 10.0.2.2 >/dev/null 2>&1; then
		echo "net-bench: FAIL vmm=$vmm rep=$rep: the guest is not up"
		tail -n 20 $work/console $work/stderr 2>/dev/null
		result=1
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
		return
	fi
	for dir in h2g g2h; do
		flag=
		[ $dir = h2g ] || flag=-R
		set -- $(counters)
		"$iperf" -c 10.0.2.2 -P 2 -t "$runtime" -f m $flag \
			>$work/iperf 2>&1
		st=$?
		set -- "$@" $(counters)
		mbits=$(sed -n 's/^\[SUM\].* \([0-9.]*\) Mbits\/sec.*receiver$/\1/p' \
			$work/iperf | tail -n 1)
		if [ $st != 0 ] || [ -z "$mbits" ]; then
			echo "net-bench: FAIL vmm=$vmm dir=$dir rep=$rep: iperf3 status $st"
			tail -n 5 $work/iperf
			result=1
			continue
		fi
		echo "net-bench: vmm=$vmm dir=$dir rep=$rep mbits=$mbits" \
			"packets=$((${10} - $5)) exits=$(($6 - $1))" \
			"io_exits=$(($7 - $2)) mmio_exits=$(($8 - $3))" \
			"irq_injections=$(($9 - $4))"
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	# The tap goes with the VMM that made it.
	i=0
	while ip link show $tap >/dev/null 2>&1 && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

"$iperf" -v >/dev/null 2>&1 || { echo "net-bench: FAIL no $iperf"; exit 1; }
r=1
while [ $r -le "$repeat" ]; do
	for v in $vmms; do
		one "$v" $r
	done
	r=$((r + 1))
done
if [ $# -eq 13 ]; then
	/bin/sh "$9" "$microvm" "$qemu" "${10}" "$kernel" "$initrd" "${11}" \
		"${12}" "$repeat" "${13}" || result=1
fi
exit $result
