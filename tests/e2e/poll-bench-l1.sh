#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where microvm runs (in L1 when nested), for poll-bench.sh: loads
# null_blk (1 GiB, 512-byte blocks, no memory behind it), mounts debugfs,
# and for each ROUND and each configuration boots the fio guest once with
# /dev/nullb0 as vdb. KVM's global counters (/sys/kernel/debug/kvm) are
# read when the guest's console prints BENCH-START and BENCH-END.
#
# Usage: poll-bench-l1.sh ROUNDS MICROVM KERNEL INITRD ROOT CONFIG...
#   CONFIG: TRANSPORT:QUEUES:POLL (POLL "-" = the default)
# Stdout: the guest console, "BENCH-KVM: ..." and "BENCH-STATS: ..." lines.
rounds=$1 microvm=$2 kernel=$3 initrd=$4 root=$5
shift 5
if [ -f /lib/modules/nullblk.order ]; then
	for m in $(cat /lib/modules/nullblk.order); do
		a=
		[ "$m" = null_blk ] &&
			a="gb=1 bs=512 nr_devices=1 memory_backed=0"
		insmod "/lib/modules/$m.ko" $a
	done
fi
i=0
while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/nullb0 ] || { echo "BENCH: no null_blk" >&2; exit 77; }
mkdir -p /sys/kernel/debug
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
K=/sys/kernel/debug/kvm
cmdline="console=ttyS0 quiet root=/dev/vda bench.qd=32 bench.rt=8"
CTRS="exits io_exits mmio_exits irq_exits halt_exits irq_injections"
echo "BENCH-CTRS: $CTRS"
snap()
{
	for c in $CTRS; do
		[ -r $K/$c ] && printf '%s ' "$(cat $K/$c)" || printf '0 '
	done
}
r=1
while [ $r -le "$rounds" ]; do
	for cfg in "$@"; do
		t=${cfg%%:*} rest=${cfg#*:}
		q=${rest%%:*} p=${rest#*:}
		pa=
		[ "$p" = - ] || pa=",poll-us=$p"
		rm -f /tmp/k0 /tmp/k1
		"$microvm" --kernel "$kernel" --initrd "$initrd" --cpus 2 \
			--memory 512M --timeout 240 --stats \
			--cmdline "$cmdline" \
			--disk "$root,transport=$t$pa" \
			--disk "/dev/nullb0,cache=none,transport=$t,queues=$q$pa"\
			2>/tmp/stderr | while IFS= read -r line; do
			case "$line" in
			*BENCH-START*) snap >/tmp/k0 ;;
			*BENCH-END*) snap >/tmp/k1 ;;
			esac
			echo "$line"
		done
		echo "BENCH-KVM0: round=$r cfg=$cfg $(cat /tmp/k0)"
		echo "BENCH-KVM1: round=$r cfg=$cfg $(cat /tmp/k1)"
		grep 'stats vdb' /tmp/stderr |
			sed "s/^/BENCH-STATS: round=$r cfg=$cfg /"
		grep -v 'stats' /tmp/stderr | tail -n 5 | sed 's/^/BENCH-ERR: /'
	done
	r=$((r + 1))
done
