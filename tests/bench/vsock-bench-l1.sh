#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The L1 side of vsock-bench.sh (where the VMMs run; POSIX sh). Per repeat
# and VMM: the VMM boots the guest (microvm.test=vsockbench: an echo on
# vsock port 1024) on 2 vCPUs with a vsock device on virtio-pci, guest
# CID 3; then from L1 one connection echoes BYTES both ways at once
# (vsockpeer hconnect) and one does N round trips of 64 bytes (vsockpeer
# hping), each byte checked. microvm: its hybrid vsock (L1 speaks the
# CONNECT protocol on the Unix socket), and engine=vhost (L1 on AF_VSOCK
# to CID 3, as for QEMU's vhost-vsock-pci). Prints one line per run:
#   vsock-bench: vmm=V rep=R mbytes_s=T rtt_us=L
# ("FAIL" lines otherwise) and exits 0 when every run was measured.
#
# Usage: vsock-bench-l1.sh MICROVM QEMU VSOCKPEER KERNEL INITRD BYTES N REPEAT VMMS
#   VMMS: "microvm microvm-vhost qemu-vhost" (any, in order)
set -u
[ $# -eq 9 ] ||
	{ echo "usage: $0 MICROVM QEMU VSOCKPEER KERNEL INITRD BYTES N REPEAT VMMS" >&2
	  exit 2; }
microvm=$1 qemu=$2 peer=$3 kernel=$4 initrd=$5 bytes=$6 n=$7 repeat=$8
vmms=$9
work=${TMPDIR:-/tmp}/vsock-bench
result=0
mkdir -p $work
if [ -f /lib/modules/vsock.order ]; then
	for m in $(cat /lib/modules/vsock.order); do
		[ -d "/sys/module/$m" ] || insmod "/lib/modules/$m.ko" ||
			echo "vsock-bench: FAIL insmod $m.ko"
	done
else
	modprobe vhost_vsock || echo "vsock-bench: FAIL modprobe vhost_vsock"
fi
cmdline="console=ttyS0 reboot=k panic=1 quiet microvm.test=vsockbench"

# one VMM REP: boot, the echo and the round trips, stop.
one()
{
	vmm=$1 rep=$2
	rm -f $work/console $work/v.sock
	case "$vmm" in
	microvm | microvm-vhost)
		if [ "$vmm" = microvm ]; then
			vs="cid=3,uds=$work/v.sock,transport=pci"
			addr=$work/v.sock
		else
			vs="cid=3,engine=vhost,transport=pci"
			addr=cid:3
		fi
		"$microvm" --kernel "$kernel" --initrd "$initrd" --cpus 2 \
			--memory 512M --cmdline "$cmdline" --vsock "$vs" \
			--console $work/console </dev/null 2>$work/stderr &
		;;
	qemu-vhost)
		addr=cid:3
		"$qemu" -M microvm,acpi=on,pcie=on -enable-kvm -cpu host \
			-smp 2 -m 512 -nodefaults -no-user-config -nographic \
			-serial file:$work/console -kernel "$kernel" \
			-initrd "$initrd" -append "$cmdline" \
			-device vhost-vsock-pci,guest-cid=3 \
			</dev/null >/dev/null 2>$work/stderr &
		;;
	esac
	pid=$!
	i=0
	while ! grep -q VSOCKBENCH-READY $work/console 2>/dev/null &&
	      [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do
		sleep 1
		i=$((i + 1))
	done
	if ! grep -q VSOCKBENCH-READY $work/console 2>/dev/null; then
		echo "vsock-bench: FAIL vmm=$vmm rep=$rep: the guest is not up"
		tail -n 20 $work/console $work/stderr 2>/dev/null
		result=1
	elif "$peer" hconnect "$addr" 1024 "$bytes" >$work/echo &&
	     "$peer" hping "$addr" 1024 "$n" 64 >$work/ping; then
		ms=$(sed -n 's/.* echoed byte-exact in \([0-9]*\) ms$/\1/p' $work/echo)
		us=$(sed -n 's/.* mean \([0-9]*\) us$/\1/p' $work/ping)
		echo "vsock-bench: vmm=$vmm rep=$rep" \
			"mbytes_s=$(awk -v b="$bytes" -v t="$ms" 'BEGIN { printf "%.2f", t ? 2 * b / t / 1000 : 0 }')" \
			"rtt_us=$us"
	else
		echo "vsock-bench: FAIL vmm=$vmm rep=$rep:" \
			"$(cat $work/echo $work/ping 2>/dev/null | tail -n 2)"
		result=1
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

r=1
while [ $r -le "$repeat" ]; do
	for v in $vmms; do
		one "$v" $r
	done
	r=$((r + 1))
done
exit $result
