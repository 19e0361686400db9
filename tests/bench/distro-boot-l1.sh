#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where the VMMs run (inside L1 for distro-boot.sh; busybox sh):
# boots the distribution image (distro-image.sh) RUNS times under each VMM
# of VMMS, the order turning each round, from the same block device, and
# for each boot prints the guest's report (tests/bench/distro/
# bench-report.sh: its "DBENCH" lines) and what L1 saw while the guest
# ran, sampled when the guest says DBENCH-DONE: KVM's statistics (debugfs,
# summed over live VMs: only this one), KVM exits by reason, exits to
# userspace by reason, MSR accesses by MSR and port I/O by port (hist
# triggers on kvm_exit, kvm_userspace_exit, kvm_msr and kvm_pio),
# and the VMM's threads' CPU time (vCPU threads and the rest).
#
# Usage: distro-boot-l1.sh MICROVM MICROVM_B QEMU KERNEL INITRD RUNS CPUS
#        MIB VMMS
#   VMMS: "microvm qemu"; "microvm-b" is MICROVM_B ("-": none) with the
#   same arguments, for a change measured side by side.
# Environment: MICROVM_DISTRO_CMDLINE (the guest's command line after
# "root=/dev/vda ro"), MICROVM_DISTRO_ROOT_MODE (rw: the root is mounted
# read-write, so the journal is kept on it and each boot finds the last
# one's unclean file system, as a real VM's would; the disk is L1's copy,
# dropped with L1), MICROVM_DISTRO_ARGS (more microvm arguments),
# MICROVM_DISTRO_BOOT_LIMIT (s per boot, default 400),
# MICROVM_DISTRO_WARMUP (uncounted boots first, default 1),
# MICROVM_DISTRO_TIMELINE (1: a "tl" record a second, timeline below).
# Stdout: "DREC vmm=V run=K <line>" records. Exit 0 when every boot
# reported, 1 otherwise.
microvm=$1 microvm_b=$2 qemu=$3 kernel=$4 initrd=$5 runs=$6 cpus=$7 mib=$8
vmms=$9
extra=${MICROVM_DISTRO_CMDLINE:-console=ttyS0 panic=-1}
cmdline="root=/dev/vda ${MICROVM_DISTRO_ROOT_MODE:-ro} $extra"
limit=${MICROVM_DISTRO_BOOT_LIMIT:-400}
DBG=/sys/kernel/debug/kvm
TR=/sys/kernel/debug/tracing
# The hist triggers, as RECORD:EVENT:KEY (events of tracefs's kvm group):
# each boot's counts by KEY are printed as "RECORD KEY=N ...".
HISTS="exit_reasons:kvm_exit:exit_reason user_exits:kvm_userspace_exit:reason
msr_exits:kvm_msr:ecx pio_ports:kvm_pio:port"
# hist_set "" | "!": add or remove every trigger of HISTS.
hist_set()
{
	for h in $HISTS; do
		ev=${h#*:}
		echo "${1}hist:keys=${ev#*:}:vals=hitcount:size=256" \
			>$TR/events/kvm/${ev%%:*}/trigger 2>/dev/null
	done
}

work=${TMPDIR:-/tmp}/distro-boot.$$
mkdir -p $work || exit 1
trap 'hist_set !; rm -rf "$work"' EXIT

disk=
for s in /sys/block/vd*/serial; do
	[ -f "$s" ] && [ "$(cat "$s")" = e2e-block0 ] &&
		{ d=${s%/serial}; disk=/dev/${d##*/}; }
done
# Without L1 (run-guest's direct mode) there is no such device: the image
# file itself is the disk, a copy of it when the root is read-write.
in_l1=1
if [ ! -b "$disk" ] && [ -f "${MICROVM_DISTRO_IMAGE:-}" ]; then
	in_l1=0
	disk=$MICROVM_DISTRO_IMAGE
	if [ "${MICROVM_DISTRO_ROOT_MODE:-ro}" = rw ]; then
		cp --sparse=always "$disk" "$work/root.raw" || exit 1
		disk=$work/root.raw
	fi
fi
[ -e "$disk" ] || { echo "DREC note FAIL no block device e2e-block0 and no MICROVM_DISTRO_IMAGE"; exit 1; }
[ -d $DBG ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -f $DBG/exits ] || { echo "DREC note FAIL no $DBG/exits"; exit 1; }
[ -d $TR/events ] || mount -t tracefs none $TR 2>/dev/null
echo "DREC note disk=$disk cmdline=\"$cmdline\" cpus=$cpus mib=$mib l1_cpus=$(grep -c ^processor /proc/cpuinfo) halt_poll_ns=$(cat /sys/module/kvm/parameters/halt_poll_ns 2>/dev/null)"

# hist_line EVENT KEY: "KEY=N KEY=N ..." of a hist file.
hist_line()
{
	sed -n "s/^{ $2: *\([^ }]*\) *} hitcount: *\([0-9]*\)/\1=\2/p" \
		$TR/events/kvm/$1/hist 2>/dev/null | tr '\n' ' '
}

# sample V K PID: the records L1 can give while the guest runs.
sample()
{
	sv=$1 sk=$2
	# First the VMM's threads, which end with the guest's poweroff:
	# utime + stime (ticks) of the vCPU threads and of the others.
	vc=0 other=0 nthreads=0
	for t in /proc/$3/task/*; do
		st=$(cat "$t/stat" 2>/dev/null) || continue
		comm=$(cat "$t/comm" 2>/dev/null)
		set -- ${st#*) }
		ticks=$(( ${12} + ${13} ))
		nthreads=$((nthreads + 1))
		case "$comm" in
		vcpu* | CPU*) vc=$((vc + ticks)) ;;
		*) other=$((other + ticks)) ;;
		esac
	done
	echo "DREC vmm=$sv run=$sk cpu vcpu_ticks=$vc other_ticks=$other threads=$nthreads hz=100"
	# KVM's counters in one process: "PATH:VALUE" lines.
	line=$(grep -H . $DBG/* 2>/dev/null |
		sed -n 's|^.*/\([a-z0-9_]*\):\([0-9][0-9]*\)$|\1=\2|p' | tr '\n' ' ')
	echo "DREC vmm=$sv run=$sk kvm $line"
	# L1's huge pages for guest RAM since the boot started: faults
	# served by one, fallen back to small pages, stalls for compaction.
	echo "DREC vmm=$sv run=$sk vmstat $(vmstat_now | awk 'NR == FNR { b[$1] = $2; next } { printf "%s=%d ", $1, $2 - b[$1] }' $work/vmstat0 -)"
	for h in $HISTS; do
		ev=${h#*:}
		echo "DREC vmm=$sv run=$sk ${h%%:*} $(hist_line ${ev%%:*} ${ev#*:})"
	done
}

vmstat_now()
{
	grep -E '^(thp_fault_alloc|thp_fault_fallback|compact_stall) ' /proc/vmstat
}

# timeline V K PID: with MICROVM_DISTRO_TIMELINE=1, once a second while
# PID runs, one record of what L1 saw in that second: the time since the
# boot began, L1's idle ticks, KVM's exits, HLT exits and halt wakeups,
# and each vCPU thread's state and ticks (name:state+ticks; the other
# threads' ticks summed). Set against the guest's kernel log, it tells a
# guest that waits with its vCPUs asleep (a wakeup that did not come) from
# one whose vCPUs spin. One awk a second, so that L1 is barely disturbed.
timeline()
{
	while kill -0 "$3" 2>/dev/null; do
		awk -v v="$1" -v k="$2" -v t0="$t0" '
		FILENAME == "/proc/uptime" { t = $1 - t0; next }
		FILENAME == "/proc/stat" { if ($1 == "cpu") idle = $5; next }
		FILENAME ~ /kvm\/[a-z_]*$/ { n = FILENAME; sub(/.*\//, "", n); kv[n] = $1; next }
		{
			c = $0; sub(/^[^(]*\(/, "", c); sub(/\).*$/, "", c)
			r = $0; sub(/^.*\) /, "", r); split(r, f, " ")
			if (c ~ /^(vcpu|CPU)/) { gsub(/[^0-9]/, "", c); th = th " " c ":" f[1] (f[12] + f[13]) }
			else other += f[12] + f[13]
		}
		END {
			printf "DREC vmm=%s run=%s tl t=%.1f idle=%d exits=%d halt=%d wake=%d other=%d%s\n",
				v, k, t, idle, kv["exits"], kv["halt_exits"], kv["halt_wakeup"], other, th
		}' /proc/uptime /proc/stat $DBG/exits $DBG/halt_exits $DBG/halt_wakeup \
			/proc/"$3"/task/*/stat 2>/dev/null
		sleep 1
	done
}

fail=0
boot()
{
	V=$1 K=$2
	con=$work/$V.$K.console err=$work/$V.$K.err
	case "$V" in
	microvm | microvm-b)
		bin=$microvm
		[ "$V" = microvm ] || bin=$microvm_b
		# shellcheck disable=SC2086
		set -- "$bin" --kernel "$kernel" --initrd "$initrd" \
			--cmdline "$cmdline" --cpus "$cpus" --memory "${mib}M" \
			--disk "$disk" ${MICROVM_DISTRO_ARGS:-}
		;;
	qemu)
		set -- "$qemu" -M microvm,acpi=on,pcie=on -enable-kvm -cpu host \
			-name distro,debug-threads=on -nodefaults -no-user-config \
			-nographic -serial stdio -smp "$cpus" -m "$mib" \
			-kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
			-drive "file=$disk,format=raw,if=none,id=d0,cache=none,aio=io_uring" \
			-device "virtio-blk-pci,drive=d0,num-queues=$cpus"
		;;
	esac
	# Every boot from the same L1 state: the page cache dropped and free
	# memory compacted, so that neither VMM's guest RAM meets the huge
	# page shortage (direct compaction on its first touches) the boot
	# before it left. Not on a host of one's own (direct mode).
	if [ $in_l1 = 1 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
		echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
	fi
	vmstat_now >$work/vmstat0
	hist_set !
	hist_set ""
	read -r t0 _ </proc/uptime
	"$@" </dev/null >"$con" 2>"$err" &
	pid=$!
	tlpid=
	if [ "${MICROVM_DISTRO_TIMELINE:-0}" = 1 ]; then
		timeline "$V" "$K" $pid >"$work/$V.$K.tl" &
		tlpid=$!
	fi
	seen=0
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt "$limit" ]; do
		if [ $seen = 0 ] && grep -q 'DBENCH-DONE' "$con"; then
			seen=1
			read -r t1 _ </proc/uptime
			sample "$V" "$K" $pid
			echo "DREC vmm=$V run=$K l1_wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
		fi
		sleep 1
		i=$((i + 1))
	done
	kill -0 $pid 2>/dev/null && { kill -9 $pid; echo "DREC vmm=$V run=$K note FAIL still running after $limit s"; }
	wait $pid
	rc=$?
	[ -z "$tlpid" ] || { wait $tlpid; cat "$work/$V.$K.tl"; }
	hist_set !
	tr -d '\r' <"$con" >"$con.txt"
	# A report line can follow console output that lacked its newline.
	sed -n "s/^.*\(DBENCH\)/DREC vmm=$V run=$K \1/p" "$con.txt"
	echo "DREC vmm=$V run=$K exit_status=$rc console_bytes=$(wc -c <"$con")"
	# The kernel's console lines, with their timestamps: where a slow
	# boot's kernel phase went.
	grep -a '^\[ *[0-9][0-9.]*\]' "$con.txt" |
		sed "s/^/DREC vmm=$V run=$K kmsg /"
	if [ $seen = 0 ]; then
		fail=1
		echo "DREC vmm=$V run=$K note FAIL no report; console tail:"
		tail -n 30 "$con.txt" | sed "s/^/DREC vmm=$V run=$K console /"
		tail -n 10 "$err" | sed "s/^/DREC vmm=$V run=$K stderr /"
	fi
}

# The first boot of an L1 ran its kernel phase 1.5-2.5 times as fast as
# the later ones (2026-12-06), and the first VMM of VMMS always had it:
# warm-up boots of that VMM come first, as run 0, which the summary
# leaves out.
w=0
while [ "$w" -lt "${MICROVM_DISTRO_WARMUP:-1}" ]; do
	echo "DREC note warm-up boot $((w + 1)) (${vmms%% *}), not counted"
	boot "${vmms%% *}" 0
	w=$((w + 1))
done
k=1
while [ "$k" -le "$runs" ]; do
	order=$vmms
	# Every other round the other way round: neither VMM always goes first.
	[ $((k % 2)) = 1 ] || order=$(echo "$vmms" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	for v in $order; do
		boot "$v" "$k"
	done
	k=$((k + 1))
done
exit $fail
