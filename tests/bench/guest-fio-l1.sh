#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where the VMMs run (inside L1 in nested mode; busybox sh), for
# guest-fio.sh: loads null_blk, mounts debugfs, then for each repeat, each
# transport:queues pair and each VMM boots the fio guest on /dev/nullb0,
# answers its two console handshakes (guest-fio-init.sh) and samples, at
# each, KVM's debugfs counters (summed over live VMs, so sampled while the
# VM runs), and the VMM's own counters: microvm's --stats (SIGUSR1 prints
# them), QEMU's exits to userspace (its kvm_run_exit trace events).
#
# Usage: guest-fio-l1.sh MICROVM QEMU KERNEL INITRD RUNTIME REPEAT PLAN VMMS
#        [VHOST [MICROVM_B]]
#   MICROVM_B  the binary of VMM "microvm-b" ("-": none)
#   PLAN   "pci:1 pci:2 mmio:1 ..."   VMMS  "microvm qemu", where
#          "microvm+K=V" is microvm with ",K=V" added to its --disk
#          (a variant measured side by side, e.g. microvm+poll-us=0) and
#          "microvm-vhost" is microvm with engine=vhost on it
#          ("microvm-vhost+K=V" adds ,K=V)
#   VHOST  "-" or the modules to insmod first, comma-separated, the
#          vhost core then vhost_blk.ko; rmmod vhost_blk after the last run
#          (it must succeed, and the kernel log hold no BUG/Oops/WARNING)
# Kernel-side signals: a kprobe on eventfd_signal() with a hist trigger
# keyed on the calling task counts, per window, the calls made by the
# module's workers (tasks "vblk-*": with engine=vhost they write the call
# eventfd, which is the irqfd, themselves) and by every task; KVM's
# kvm_msi_set_irq event counts the MSIs KVM delivered (irqfd or not).
# Stdout: "BENCH-RAW: key=value ..." per run (raw counter deltas; the host
# computes per-I/O figures), "BENCH-L1: ..." notes. Exit 0 when every run
# produced its line, 1 otherwise, 77 when no null_blk can be had here.
# Environment: MICROVM_BENCH_CPUS (L2 vCPUs, 2), MICROVM_BENCH_MEM (L2 MiB, 512),
# MICROVM_BENCH_DEPTH (32), MICROVM_BENCH_ENGINE (io_uring), MICROVM_BENCH_BOOT_LIMIT (s, 300),
# MICROVM_BENCH_QEMU_TRACE (1: count QEMU's exits to userspace), MICROVM_BENCH_DISK_OPTS
# (extra microvm --disk options, e.g. ",poll-us=50").

microvm=$1 qemu=$2 kernel=$3 initrd=$4 runtime=$5 repeat=$6 plan=$7 vmms=$8
vhost_mods=${9:--}
microvm_b=${10:--} # VMM "microvm-b": a second microvm binary
cpus=${MICROVM_BENCH_CPUS:-2}
mem=${MICROVM_BENCH_MEM:-512}
depth=${MICROVM_BENCH_DEPTH:-32}
engine=${MICROVM_BENCH_ENGINE:-io_uring}
boot_limit=${MICROVM_BENCH_BOOT_LIMIT:-300}
qtrace=${MICROVM_BENCH_QEMU_TRACE:-1}
KVM_STATS="exits io_exits mmio_exits halt_exits irq_injections irq_exits
irq_window_exits request_irq_exits signal_exits halt_wakeup
host_state_reload"
DBG=/sys/kernel/debug/kvm
work=/tmp/guest-fio
mkdir -p $work

note()
{
	echo "BENCH-L1: $*"
}

nullb_load()
{
	if [ -b /dev/nullb0 ]; then
		# Only ever one we loaded ourselves before (L1 is fresh);
		# on a host, someone's device: leave it.
		[ -f /lib/modules/nullblk.order ] && return 0
		note "null_blk already loaded here; not touching it"
		return 1
	fi
	if [ -f /lib/modules/nullblk.order ]; then
		for m in $(cat /lib/modules/nullblk.order); do
			if [ "$m" = null_blk ]; then
				insmod "/lib/modules/$m.ko" nr_devices=1 gb=1 \
					queue_mode=2 irqmode=0 || return 1
			else
				insmod "/lib/modules/$m.ko" || return 1
			fi
		done
	else
		modprobe null_blk nr_devices=1 gb=1 queue_mode=2 irqmode=0 \
			2>/dev/null || return 1
	fi
	i=0
	while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b /dev/nullb0 ]
}

if ! nullb_load; then
	note "no null_blk here (needs L1's initramfs or root with the" \
		"null_blk module); skipping"
	exit 77
fi
[ -d $DBG ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ ! -f $DBG/exits ]; then
	note "FAIL no $DBG/exits (debugfs with KVM's statistics)"
	exit 1
fi

# engine=vhost: the vhost core and the module, before any run.
vhost_loaded=0
oops_check()
{
	if dmesg | grep -E 'BUG:|Oops|WARNING:|general protection'; then
		note "FAIL kernel problem after: $1"
		return 1
	fi
	return 0
}
if [ "$vhost_mods" != - ]; then
	for m in $(echo "$vhost_mods" | tr , ' '); do
		grep -q "^$(basename "$m" .ko) " /proc/modules ||
			insmod "$m" || { note "FAIL insmod $m"; exit 1; }
	done
	i=0
	while [ ! -e /dev/vhost-blk ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e /dev/vhost-blk ] || { note "FAIL no /dev/vhost-blk"; exit 1; }
	vhost_loaded=1
	note "vhost_blk loaded ($vhost_mods)"
	oops_check insmod || exit 1
fi

# The kernel-side signal counters (see the head); "na" where tracefs or
# kprobes are missing.
TR=/sys/kernel/debug/tracing
[ -d $TR/events ] || mount -t tracefs none $TR 2>/dev/null
ktrace=0
if [ -w $TR/kprobe_events ] &&
   echo 'p:mvbench/evsig eventfd_signal' >>$TR/kprobe_events 2>/dev/null &&
   echo 'hist:keys=common_pid.execname:vals=hitcount:size=2048' \
	>$TR/events/mvbench/evsig/trigger 2>/dev/null; then
	ktrace=1
	[ -d $TR/events/kvm/kvm_msi_set_irq ] &&
		echo 'hist:keys=common_pid.execname:vals=hitcount:size=2048' \
			>$TR/events/kvm/kvm_msi_set_irq/trigger 2>/dev/null
else
	note "no kprobe on eventfd_signal (tracefs $TR): kernel signals na"
fi

# hist_sum FILE [PATTERN]: the hitcounts of FILE's entries whose task
# name matches PATTERN (every entry without one).
hist_sum()
{
	[ -r "$1" ] || { echo na; return; }
	awk -v pat="${2:-.}" '
	/hitcount:/ {
		# "{ common_pid: NAME [ PID] } hitcount: N"
		name = $0
		sub(/^.*common_pid: */, "", name)
		sub(/ *\[.*$/, "", name)
		if (name ~ pat) s += $NF
	}
	END { print s + 0 }' "$1"
}

# trace_sample PREFIX: the kernel-side signal counters, now.
trace_sample()
{
	[ $ktrace = 1 ] || return 0
	h=$TR/events/mvbench/evsig/hist
	printf '%sksig_vblk=%s %sksig_all=%s ' "$1" "$(hist_sum $h '^vblk-')" \
		"$1" "$(hist_sum $h)"
	[ -r $TR/events/kvm/kvm_msi_set_irq/hist ] &&
		printf '%skmsi=%s ' "$1" \
			"$(hist_sum $TR/events/kvm/kvm_msi_set_irq/hist)"
}

# kvm_sample PREFIX: "PREFIXname=value" for each KVM statistic present.
kvm_sample()
{
	for s in $KVM_STATS; do
		[ -f $DBG/$s ] && printf '%s%s=%s ' "$1" "$s" "$(cat $DBG/$s)"
	done
}

# mv_stats FILE: microvm's last complete --stats block in FILE as
# "requests= batches= signals= kicks= uexits= uio= ummio= uintr= uother=",
# each summed over the disk's queues or over the vCPUs.
mv_stats()
{
	awk -v last="stats vcpu $((cpus - 1)):" '
	/microvm: stats .* queue [0-9]+:/ {
		for (i = 1; i < NF; i++) {
			if ($i == "requests") q += $(i + 1)
			if ($i == "batches") b += $(i + 1)
			if ($i == "irq-signals") s += $(i + 1)
			if ($i == "kicks") k += $(i + 1)
		}
	}
	/microvm: stats vcpu [0-9]+:/ {
		for (i = 1; i < NF; i++) {
			if ($i == "exits") e += $(i + 1)
			if ($i == "io") io += $(i + 1)
			if ($i == "mmio") mm += $(i + 1)
			if ($i == "intr") it += $(i + 1)
			if ($i == "other") ot += $(i + 1)
		}
		if (index($0, last)) {
			out = sprintf("requests=%d batches=%d signals=%d " \
				"kicks=%d uexits=%d uio=%d ummio=%d uintr=%d " \
				"uother=%d", q, b, s, k, e, io, mm, it, ot)
			q = b = s = k = e = io = mm = it = ot = 0
		}
	}
	END { print out }' "$1"
}

# vmm_sample VMM PID ERRFILE PREFIX: the VMM's own counters, now.
vmm_sample()
{
	case "$1" in
	microvm*)
		n=$(grep -c "stats vcpu $((cpus - 1)):" "$3")
		kill -USR1 "$2"
		i=0
		while [ "$(grep -c "stats vcpu $((cpus - 1)):" "$3")" -le "$n" ] &&
		      [ $i -lt 100 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		mv_stats "$3" | sed "s/\([a-z]*=\)/$4\1/g"
		;;
	qemu)
		[ "$qtrace" -ge 1 ] &&
			echo "${4}uexits=$(grep -c kvm_run_exit $work/qemu-trace)"
		[ "$qtrace" -ge 2 ] &&
			echo "${4}qnotify=$(grep -c virtio_notify_irqfd $work/qemu-trace)" \
				"${4}qirq_raise=$(grep -c 'virtio_mmio setting IRQ 1' $work/qemu-trace)" \
				"${4}qcomplete=$(grep -c virtio_blk_req_complete $work/qemu-trace)"
		;;
	esac
}

# wait_for FILE PATTERN LIMIT PID: until PATTERN is in FILE; 1 when PID
# ended first or LIMIT seconds passed.
wait_for()
{
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		kill -0 "$4" 2>/dev/null || return 1
		[ $i -lt $(($3 * 10)) ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# abandon WHY: one_run's VMM is given up on: say why, show the ends of its
# output, stop it and close the guest's console pipe (one_run's $tag,
# $out, $err, $pid).
abandon()
{
	note "FAIL $tag: $1"
	tail -n 20 $out $err
	kill $pid 2>/dev/null
	wait $pid
	exec 3>&-
}

# one_run VMM TRANSPORT QUEUES REP: boot, measure, print BENCH-RAW.
one_run()
{
	vmm=$1 tr=$2 q=$3 rep=$4
	extra=
	case "$vmm" in
	microvm+*) extra=",${vmm#microvm+}" ;;
	microvm-vhost) extra=",engine=vhost" ;;
	microvm-vhost+*) extra=",engine=vhost,${vmm#microvm-vhost+}" ;;
	esac
	out=$work/out err=$work/err fifo=$work/in
	rm -f $out $err $fifo $work/qemu-trace
	mkfifo $fifo
	cmdline="console=ttyS0 quiet rdinit=/bench/init bench.runtime=$runtime"
	cmdline="$cmdline bench.iodepth=$depth bench.engine=$engine"
	cmdline="$cmdline bench.cpu=${MICROVM_BENCH_FIO_CPU:-free}"
	[ -z "${MICROVM_BENCH_IRQ_CPU:-}" ] ||
		cmdline="$cmdline bench.irqcpu=$MICROVM_BENCH_IRQ_CPU"
	[ -z "${MICROVM_BENCH_RQ_AFFINITY:-}" ] ||
		cmdline="$cmdline bench.rqaff=$MICROVM_BENCH_RQ_AFFINITY"
	case "$vmm" in
	microvm*)
		bin=$microvm
		[ "$vmm" != microvm-b ] || bin=$microvm_b
		"$bin" --kernel "$kernel" --initrd "$initrd" \
			--cpus "$cpus" --memory "$mem" --cmdline "$cmdline" \
			--disk "/dev/nullb0,transport=$tr,queues=$q,cache=none${MICROVM_BENCH_DISK_OPTS:-}$extra" \
			--stats --timeout $((boot_limit + runtime * 3)) \
			<$fifo >$out 2>$err &
		;;
	qemu | qemu-notrace)
		if [ "$tr" = pci ]; then
			machine=microvm,acpi=on,pcie=on
			dev=virtio-blk-pci,drive=d0,iothread=io0,num-queues=$q
		else
			machine=microvm,acpi=on
			dev=virtio-blk-device,drive=d0,iothread=io0,num-queues=$q
		fi
		set --
		# qemu-notrace: none. 1: kvm_run_exit, the userspace exits.
		# 2: also the device's notifications (virtio_notify_irqfd,
		# from its iothread), the mmio line raised and the requests
		# completed. Each event costs QEMU a line written: with 2,
		# QEMU's mmio interrupts per I/O fell to a quarter (BENCHMARKS.md
		# section 2, "QEMU's trace").
		if [ "$vmm" = qemu ] && [ "$qtrace" -ge 1 ]; then
			set -- -trace kvm_run_exit
			[ "$qtrace" -lt 2 ] ||
				set -- "$@" -trace virtio_notify_irqfd \
					-trace virtio_mmio_setting_irq \
					-trace virtio_blk_req_complete
			set -- "$@" -D $work/qemu-trace
		fi
		"$qemu" -M $machine -enable-kvm -cpu host -smp "$cpus" \
			-m "$mem" -nodefaults -no-user-config -nographic \
			-serial stdio -kernel "$kernel" -initrd "$initrd" \
			-append "$cmdline" -object iothread,id=io0 \
			-drive file=/dev/nullb0,if=none,id=d0,format=raw,cache=none,aio=io_uring \
			-global virtio-mmio.force-legacy=false -device "$dev" \
			"$@" <$fifo >$out 2>$err &
		;;
	esac
	pid=$!
	exec 3>$fifo
	tag="vmm=$vmm transport=$tr queues=$q rep=$rep"
	if ! wait_for $out BENCH-FIO-START "$boot_limit" $pid; then
		abandon "no BENCH-FIO-START (boot or warm-up failed)"
		return 1
	fi
	k0="$(kvm_sample k0_)$(trace_sample k0_)"
	v0=$(vmm_sample $vmm $pid $err v0_)
	echo go >&3
	if ! wait_for $out '^#E' $((runtime * 4 + 60)) $pid; then
		abandon "no end of fio (#E)"
		return 1
	fi
	k1="$(kvm_sample k1_)$(trace_sample k1_)"
	v1=$(vmm_sample $vmm $pid $err v1_)
	echo ack >&3
	wait_for $out BENCH-GUEST-DONE 60 $pid
	# The guest powers off; a VMM that does not end is stopped.
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $pid 2>/dev/null
	wait $pid
	rc=$?
	exec 3>&-
	terse=$(sed -n 's/^BENCH-FIO-TERSE: //p' $out | tr -d '\r' | tail -n 1)
	irqs=$(sed -n 's/^BENCH-IRQ-TOTAL: //p' $out | tr -d '\r' | tail -n 1)
	if [ -z "$terse" ] || [ -z "$irqs" ]; then
		note "FAIL $tag: no fio result (VMM status $rc)"
		tail -n 20 $out $err
		return 1
	fi
	# terse v3: field 6 read KiB, 8 read IOPS, 9 read runtime (ms).
	fio=$(echo "$terse" | awk -F';' \
		'{ printf "iops=%s read_kib=%s runtime_ms=%s", $8, $6, $9 }')
	echo "BENCH-RAW: $tag status=$rc $fio guest_irqs=$irqs $k0 $k1 $v0 $v1" |
		tr -s ' '
	sed -n 's/^BENCH-IRQ: /BENCH-IRQ: '"$tag"' /p; s/^BENCH-IPI: /BENCH-IPI: '"$tag"' /p; s/^BENCH-GUEST: /BENCH-GUEST: '"$tag"' /p; s/^BENCH-TOPO: /BENCH-TOPO: '"$tag"' /p' $out |
		tr -d '\r'
	# microvm's --stats at exit (per queue, disk, vCPU): for reading.
	sed -n 's/^microvm: stats /BENCH-STATS: '"$tag"' /p' $err | tail -n 12
}

# The repeats of one plan entry back to back, the VMMs alternating: a run
# cut short still has the first entries complete, with their spread.
fails=0
for p in $plan; do
	r=1
	while [ $r -le "$repeat" ]; do
		for vmm in $vmms; do
			one_run "$vmm" "${p%:*}" "${p#*:}" $r ||
				fails=$((fails + 1))
		done
		r=$((r + 1))
	done
done
# engine=vhost: every VM is gone, so the module must unload (at once:
# rmmod fails while a reference is held).
if [ $vhost_loaded = 1 ]; then
	if ! rmmod vhost_blk; then
		note "FAIL rmmod vhost_blk after the last VM"
		fails=$((fails + 1))
	elif grep -q '^vhost_blk ' /proc/modules; then
		note "FAIL vhost_blk still in /proc/modules after rmmod"
		fails=$((fails + 1))
	else
		note "rmmod vhost_blk ok"
	fi
	oops_check "the runs and rmmod" || fails=$((fails + 1))
fi
[ $fails -eq 0 ] || { note "FAIL $fails runs without a result"; exit 1; }
exit 0
