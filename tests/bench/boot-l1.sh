#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where the VMMs run (inside L1 for boot-vs-qemu.sh; busybox sh):
# boots the same guest RUNS times under microvm and under QEMU's microvm
# machine, alternating, each through boot-probe (exec to the /init
# marker, smaps overhead at idle and while the guest reads its disk). The
# disk is null_blk (1 GiB, no memory behind it) when it can be loaded,
# else none (then there is no "io" phase).
#
# Usage: boot-l1.sh RUNS PROBE MICROVM QEMU KERNEL INITRD MIB FW-KERNEL
#        FW-ROOT QEMU-FILES...
# (QEMU-FILES: the firmware QEMU reads, named only so that the harness
# copies them into L1.) FW-KERNEL and FW-ROOT: the project's kernel
# (firmware/kernel) and a firmware/rootfs image holding the boot-time
# /init, or "-": then each round also boots that kernel from that disk,
# with no initramfs, under both VMMs (records vmm=microvm_fw, qemu_fw).
# Stdout: boot-probe's records, plus per microvm run
#   mvstats vmm=microvm run=K first_kvm_run_ms=T boot_time_init_ms=T
# Exit status: 0, or 1 when a run gave no record.
runs=$1 probe=$2 microvm=$3 qemu=$4 kernel=$5 initrd=$6 mib=$7
fw_kernel=$8 fw_root=$9
cmdline="console=ttyS0 quiet panic=-1 microvm.boot.idle=1 microvm.boot.io=3"
# The disk root is mounted read-only, so every boot sees the same image.
fw_cmdline="console=ttyS0 quiet panic=-1 root=/dev/vda ro init=/boottime-init microvm.boot.idle=1"
tmp=${TMPDIR:-/tmp}/boot-l1.$$
mkdir -p "$tmp" || exit 1

disk=
if [ -f /lib/modules/nullblk.order ]; then
	for m in $(cat /lib/modules/nullblk.order); do
		if [ "$m" = null_blk ]; then
			insmod "/lib/modules/$m.ko" gb=1 bs=512 nr_devices=1 \
				memory_backed=0
		else
			insmod "/lib/modules/$m.ko"
		fi
	done
	i=0
	while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b /dev/nullb0 ] && disk=/dev/nullb0
fi
[ -n "$disk" ] || echo "note no_disk=1 (no null_blk here)"
echo "note disk=${disk:-none} mib=$mib runs=$runs cmdline=\"$cmdline\""

# The same disk, transport (virtio-mmio, one queue) and cache mode on both.
mv_disk=''
q_disk=''
if [ -n "$disk" ]; then
	mv_disk="--disk $disk,cache=none,transport=mmio"
	q_disk="-object iothread,id=io0 -drive file=$disk,format=raw,if=none,id=d0,cache=none,aio=io_uring -device virtio-blk-device,drive=d0,iothread=io0 -global virtio-mmio.force-legacy=false"
fi

fail=0
k=1
while [ "$k" -le "$runs" ]; do
	# shellcheck disable=SC2086
	"$probe" --vmm microvm --run "$k" --guest-mib "$mib" --maps 12 \
		--log "$tmp/mv$k.console" -- "$microvm" --kernel "$kernel" \
		--initrd "$initrd" --cmdline "$cmdline" --cpus 1 \
		--memory "${mib}M" --stats $mv_disk 2>"$tmp/mv$k.err" ||
		{ fail=1; echo "note vmm=microvm run=$k failed"; tail -n 20 "$tmp/mv$k.err"; tail -n 20 "$tmp/mv$k.console"; }
	r=$(sed -n 's/^microvm: stats startup: first KVM_RUN after \([0-9.]*\) ms$/\1/p' "$tmp/mv$k.err")
	b=$(sed -n 's/^microvm: boot-time: \([0-9.]*\) ms since microvm started (init reached)$/\1/p' "$tmp/mv$k.err")
	echo "mvstats vmm=microvm run=$k first_kvm_run_ms=${r:-?} boot_time_init_ms=${b:-?}"
	# shellcheck disable=SC2086
	"$probe" --vmm qemu --run "$k" --guest-mib "$mib" --maps 12 \
		--log "$tmp/q$k.console" -- "$qemu" -M microvm,acpi=on \
		-enable-kvm -cpu host -nodefaults -no-user-config -nographic \
		-serial stdio -m "$mib" -smp 1 -kernel "$kernel" \
		-initrd "$initrd" -append "$cmdline" $q_disk \
		2>"$tmp/q$k.err" ||
		{ fail=1; echo "note vmm=qemu run=$k failed"; tail -n 20 "$tmp/q$k.err"; tail -n 20 "$tmp/q$k.console"; }
	if [ "$fw_kernel" != - ]; then
		# The same kernel, disk image and transport (virtio-mmio) on both.
		"$probe" --vmm microvm_fw --run "$k" --guest-mib "$mib" \
			--log "$tmp/mvf$k.console" -- "$microvm" \
			--kernel "$fw_kernel" --cmdline "$fw_cmdline" --cpus 1 \
			--memory "${mib}M" --stats \
			--disk "$fw_root,readonly=on,transport=mmio" \
			2>"$tmp/mvf$k.err" ||
			{ fail=1; echo "note vmm=microvm_fw run=$k failed"; tail -n 20 "$tmp/mvf$k.err"; tail -n 20 "$tmp/mvf$k.console"; }
		"$probe" --vmm qemu_fw --run "$k" --guest-mib "$mib" \
			--log "$tmp/qf$k.console" -- "$qemu" -M microvm,acpi=on \
			-enable-kvm -cpu host -nodefaults -no-user-config \
			-nographic -serial stdio -m "$mib" -smp 1 \
			-kernel "$fw_kernel" -append "$fw_cmdline" \
			-drive "file=$fw_root,format=raw,if=none,id=r0,readonly=on" \
			-device virtio-blk-device,drive=r0 \
			-global virtio-mmio.force-legacy=false \
			2>"$tmp/qf$k.err" ||
			{ fail=1; echo "note vmm=qemu_fw run=$k failed"; tail -n 20 "$tmp/qf$k.err"; tail -n 20 "$tmp/qf$k.console"; }
	fi
	k=$((k + 1))
done
[ -z "$disk" ] || rmmod null_blk 2>/dev/null
rm -rf "$tmp"
exit $fail
