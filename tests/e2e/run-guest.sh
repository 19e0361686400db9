#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs one KVM program (normally the microvm binary) and gives back its
# stdout (the guest console), its stderr and its exit status the same way
# whether it runs on this host's /dev/kvm (direct) or inside an emulated
# L1 machine whose own KVM runs it (nested, for hosts without /dev/kvm).
#
# Usage: run-guest.sh [options] -- PROGRAM [ARGS...]
#   --mode direct|nested|auto  default: $MICROVM_E2E_MODE, else auto
#                              (direct when /dev/kvm can create a VM and
#                              the CPU has vmx/svm, else nested)
#   --artifacts DIR            what prepare.sh made (default:
#                              $MICROVM_E2E_ARTIFACTS, else build/e2e-artifacts)
#   --stdin FILE|-             PROGRAM's stdin; "-" passes ours through
#                              (default /dev/null)
#   --timeout SECONDS          harness limit (default 300 direct, 600 nested)
#   --file PATH                nested: make PATH visible in L1 (repeatable)
#   --disk-file PATH           nested: as --file, and copy it back after
#                              the run (for files the guest writes)
#   --block-file PATH          nested: PATH (a raw image) becomes a virtio
#                              disk of L1 with serial e2e-blockN (N counts
#                              from 0 in option order), not copied: PROGRAM
#                              finds it by /sys/block/vd*/serial and uses
#                              the block device. L1's writes to it are
#                              dropped (snapshot=on). Direct mode: ignored
#                              (PROGRAM is given no such device).
# Exit status: PROGRAM's; 77 when the mode cannot run here; 255 when the
# harness itself failed (message on stderr).
#
# Nested mode, environment: MICROVM_E2E_L1_CPUS (default 1),
# MICROVM_E2E_L1_MEMORY (MiB, default 2048), MICROVM_E2E_L1_KERNEL (L1's
# kernel instead of the artifacts' vmlinuz: the KASAN tier's, with KVM
# built in), MICROVM_E2E_L1_APPEND (more of L1's command line),
# MICROVM_E2E_L1_LOG (a file that gets L1's whole console log).
#
# Nested mode: the L1 initramfs is prepare.sh's l1-base.cpio.gz with a
# small uncompressed cpio prepended that holds PROGRAM, the libraries ldd
# lists for it, input files (at their host paths) and /e2e/run.env. L1's
# ttyS0 is a log file that carries the exit status (guest/l1-init.sh);
# its ttyS1 is PROGRAM's stdout and is wired to our stdout. Files named by
# ARGS (split at ',' and '=') that exist here are copied in automatically
# (executables with their libraries);
# the PATH of each "--disk PATH,..." is treated as --disk-file. A disk file
# travels as a raw virtio-blk disk of L1, is copied into L1's RAM before
# PROGRAM starts and written back afterwards, so PROGRAM sees a regular
# file at the same path (limit: L1's RAM; sizes should be sector multiples).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HARNESS_ERROR=255
SKIP=77

mode=${MICROVM_E2E_MODE:-auto}
art=${MICROVM_E2E_ARTIFACTS:-}
stdin=/dev/null
limit=
files=()
disks=()
blocks=()

die()
{
	echo "run-guest: $*" >&2
	exit $HARNESS_ERROR
}

verbose()
{
	[ "${MICROVM_E2E_VERBOSE:-0}" = 0 ] || echo "run-guest: $*" >&2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--mode) mode=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--stdin) stdin=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--disk-file) disks+=("$2"); shift 2 ;;
	--block-file) blocks+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) die "unknown option '$1' (usage: see the head of $0)" ;;
	esac
done
[ $# -ge 1 ] || die "no PROGRAM after --"
if [ -z "$art" ]; then
	art=$E2E_DIR/../../build/e2e-artifacts
fi
art=$(cd "$art" 2>/dev/null && pwd -P) ||
	die "no artifacts directory (run tests/e2e/prepare.sh DIR first)"

# kvm_usable: whether this host's KVM device can create a VM.
kvm_usable()
{
	local dev=${MICROVM_KVM_DEVICE:-/dev/kvm}
	if [ -x "$art/bin/kvm-smoke" ]; then
		"$art/bin/kvm-smoke" --device "$dev" --check 2>/dev/null
	else
		[ -c "$dev" ] && [ -r "$dev" ] && [ -w "$dev" ]
	fi
}

# hw_virt: whether the CPU has hardware virtualization. A /dev/kvm without
# it is a software KVM (such as PVM) that does not boot stock kernels in
# reasonable time, so auto mode does not count it as usable.
hw_virt()
{
	grep -qwE 'vmx|svm' /proc/cpuinfo
}

case "$mode" in
auto)
	if ! kvm_usable; then
		mode=nested
	elif ! hw_virt; then
		verbose "auto: ${MICROVM_KVM_DEVICE:-/dev/kvm} works but the" \
			"CPU has no vmx/svm (software KVM): using nested"
		mode=nested
	else
		mode=direct
	fi
	;;
direct | nested) ;;
*) die "MICROVM_E2E_MODE/--mode must be direct, nested or auto, not '$mode'" ;;
esac
verbose "mode $mode"

# limited CMD...: run CMD with our stdin under the harness limit, in our
# process group, and stop it if we are stopped (CTest's timeout, ^C).
# silence_watch PID LOG SECONDS FLAG: end PID (timeout(1) around QEMU,
# which passes the signal on) when file LOG has not grown for SECONDS,
# and create FLAG. L1 writes a heartbeat to LOG every 15 s (E2E-L1-ALIVE,
# guest/l1-init.sh), so a silent LOG means the L1 kernel stopped running:
# its own watchdog and microvm's --timeout, both inside it, are then
# silent too, and waiting for the harness limit would only waste it.
# Before it ends PID it asks QEMU's monitor (MON.in/MON.out, a pipe
# chardev, when MON is set) for the emulated CPU's registers three times,
# a second apart, with QEMU's threads' states each time (qemu_threads),
# and then for the local APIC's state, into FLAG: where the silent L1 (or
# the L2 it was running) was, whether it still moved, whether the
# emulator's vCPU thread ran or slept, and the timer L1 had armed. It
# looks once already after $MICROVM_E2E_L1_STUCK s of silence (default
# 30; 0: never) and ends PID then if the emulator is livelocked
# (livelocked: no wait can end that), writing "STUCK SECONDS" to FLAG.
# It also ends PID, writing "NOINIT SECONDS" to FLAG, when L1 has not
# reached its /init (E2E-L1-START in LOG) $MICROVM_E2E_L1_BOOT s (default
# 180; 0: never) after the start: L1's kernel alone, before any program
# of ours ran, stuck in its boot (seen in a clean-clone CI run on
# 2026-12-06: soft lockups in cryptomgr_test from 26 s on, which kept
# the log growing, so no silence ended it). L1 reaches /init in 3-15 s.
silence_watch()
{
	local pid=$1 log=$2 quiet=$3 flag=$4 size=-1 now last=$SECONDS
	local stuck_at=${MICROVM_E2E_L1_STUCK:-30} looked=0 began=$SECONDS
	local boot_limit=${MICROVM_E2E_L1_BOOT:-180} booted=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		if [ $booted = 0 ] && grep -aq '^E2E-L1-START: ' "$log" 2>/dev/null; then
			booted=1
		fi
		if [ $booted = 0 ] && [ "$boot_limit" -gt 0 ] &&
		   [ $((SECONDS - began)) -ge "$boot_limit" ]; then
			monitor_dump "$pid" "$flag"
			echo "NOINIT $((SECONDS - began))" >>"$flag"
			end_pid "$pid"
			return 0
		fi
		now=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$now" != "$size" ]; then
			size=$now
			last=$SECONDS
			looked=0
		elif [ $((SECONDS - last)) -ge "$quiet" ] ||
		     { [ "$stuck_at" -gt 0 ] && [ $looked = 0 ] &&
		       [ $((SECONDS - last)) -ge "$stuck_at" ]; }; then
			# Early, one look: the emulator's livelock (livelocked)
			# ends the run now; anything else waits for the limit.
			looked=1
			monitor_dump "$pid" "$flag"
			if [ $((SECONDS - last)) -lt "$quiet" ]; then
				livelocked "$flag" "$log" || { rm -f "$flag"; continue; }
				echo "STUCK $((SECONDS - last))" >>"$flag"
			fi
			end_pid "$pid"
			return 0
		fi
	done
}

# end_pid PID: TERM, and 10 s later KILL.
end_pid()
{
	kill -TERM "$1" 2>/dev/null
	sleep 10
	kill -KILL "$1" 2>/dev/null
}

# monitor_dump PID FILE: the emulated CPU's registers three times, a
# second apart, with QEMU's threads' states each time (qemu_threads), then
# the local APIC's state, into FILE (empty without a monitor).
monitor_dump()
{
	: >"$2"
	[ -n "${mon:-}" ] && [ -p "$mon.in" ] || return 0
	timeout 9 cat "$mon.out" >"$2.mon" 2>/dev/null &
	for i in 1 2 3; do
		printf 'info registers\n' >"$mon.in"
		qemu_threads "$1" >>"$2"
		sleep 1
	done
	printf 'info lapic\n' >"$mon.in"
	sleep 4
	# The monitor's last prompt ends no line: end it here.
	{ cat "$2.mon" 2>/dev/null; echo; } >>"$2"
}

# livelocked FILE LOG: whether monitor_dump's FILE shows the emulator
# stuck: the CPU not halted and at one RIP in all three samples while its
# local APIC holds an interrupt above the processor priority, and that
# CPU either has interrupts on or is outside L1's kernel text (LOG's
# E2E-L1-KTEXT line: its start, and the physical range whose size it
# has): in L2, whose own interrupt flag does not mask L1's interrupts. A
# CPU takes such an interrupt within an instruction or two; L1's kernel
# spinning with interrupts off (a module's deadlock) is not counted. Seen
# 2026-12-06 in the distribution's boot (tests/e2e/README.md, "When the
# emulator, not microvm, fails"): the emulator's vCPU thread at 100% for
# 120 s, the CPU in L2's pause loop waiting for another vCPU, L1's timer
# vector pending all along, and an NMI sent through the monitor not
# taken either.
livelocked()
{
	local stuck ion rip off
	read -r stuck ion rip < <(tr -d '\r' <"$1" | awk '
	     function hex(h,  v, i) {
		     v = 0; h = tolower(h)
		     for (i = 1; i <= length(h); i++)
			     v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		     return v
	     }
	     /^RIP=/ { n++; rip[$1] = 1; if ($0 ~ /HLT=1/) halted = 1
		       a = substr($1, 5)
		       if (int(hex(substr($2, 5)) / 512) % 2) ion = 1 }
	     /^IRR/ { for (i = 2; i <= NF; i++) if ($i + 0 > irr) irr = $i + 0 }
	     /^APR / { for (i = 1; i < NF; i++) if ($i == "PPR") ppr = hex(substr($(i + 1), 3)) }
	     END { k = 0; for (r in rip) k++
		   print (n == 3 && k == 1 && !halted && int(irr / 16) > int(ppr / 16)) ? 1 : 0,
			 ion + 0, a }')
	[ "$stuck" = 1 ] || return 1
	[ "$ion" = 1 ] && return 0
	# Interrupts off: only outside L1's kernel text. Bash's 64-bit
	# arithmetic wraps the kernel's addresses alike, so their difference
	# holds.
	set -- $(tr -d '\r' <"$2" 2>/dev/null |
		sed -n 's/^E2E-L1-KTEXT: \([0-9a-f]\{1,16\}\) \([0-9a-f]\{1,16\}\)-\([0-9a-f]\{1,16\}\)$/\1 \2 \3/p' |
		tail -n 1)
	[ $# -eq 3 ] || return 1
	off=$((0x$rip - 0x$1))
	[ "$off" -lt 0 ] || [ "$off" -gt $((0x$3 - 0x$2)) ]
}

# qemu_threads PID: a "THREAD" line for each thread of PID's child (QEMU
# under timeout(1)): its name, state and CPU time in ticks. Sampled with
# each register dump: a vCPU thread that runs on ("R", its ticks growing)
# is spinning in the emulator; one asleep ("S") with its ticks still, and
# the CPU halted, waits for an interrupt the emulator never raised.
qemu_threads()
{
	local q t
	for q in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		for t in /proc/"$q"/task/*/stat; do
			awk '{ c = $0; sub(/^[^(]*\(/, "", c); sub(/\).*$/, "", c);
			       r = $0; sub(/^.*\) /, "", r); split(r, f, " ");
			       printf "THREAD %s: %s %d\n", c, f[1], f[12] + f[13] }' \
				"$t" 2>/dev/null
		done
	done
}

# limited PROGRAM ARGS...: run it under the harness limit; with $watch_log
# set, also under silence_watch (nested mode).
limited()
{
	local child rc watcher=
	timeout --foreground -k 10 "$limit" "$@" <&0 &
	child=$!
	if [ -n "${watch_log:-}" ]; then
		# Not on our stdout or stderr: a caller reading them through a
		# pipe (CTest) would wait for the watcher's last sleep to end.
		silence_watch "$child" "$watch_log" "$watch_quiet" \
			"$watch_flag" </dev/null >/dev/null 2>&1 &
		watcher=$!
	fi
	trap 'kill -TERM $child 2>/dev/null; wait $child; exit 143' TERM INT HUP
	wait $child
	rc=$?
	trap - TERM INT HUP
	[ -z "$watcher" ] || kill "$watcher" 2>/dev/null
	return $rc
}

run_direct()
{
	local start rc
	if ! kvm_usable; then
		echo "run-guest: direct mode needs a usable" \
			"${MICROVM_KVM_DEVICE:-/dev/kvm}; skipping" >&2
		exit $SKIP
	fi
	limit=${limit:-300}
	start=$SECONDS
	if [ "$stdin" = - ]; then
		limited "$@"
	else
		limited "$@" <"$stdin"
	fi
	rc=$?
	if [ $((SECONDS - start)) -ge "$limit" ] &&
	   { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
		die "'$1' still ran after the harness limit of $limit s"
	fi
	verbose "direct run took $((SECONDS - start)) s"
	exit $rc
}

# sq WORD: WORD quoted for a POSIX shell.
sq()
{
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

# stage PATH: copy host file PATH into the per-run tree at the same path.
stage()
{
	local src=$1 dst
	case "$src" in
	/*) ;;
	*) src=$PWD/$src ;;
	esac
	case "$src" in
	"$art/vmlinuz" | "$art/l2-initrd.cpio.gz" | "$art"/bin/*) return ;;
	esac
	dst=$work/root$src
	[ -e "$dst" ] && return
	mkdir -p "${dst%/*}"
	cp -L "$src" "$dst" || die "cannot copy '$src' into L1"
}

# stage_program PROGRAM: the program and every library it loads.
stage_program()
{
	local lib
	stage "$1"
	while read -r lib; do
		stage "$lib"
	done < <(ldd "$1" 2>/dev/null |
		 sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
}

# scan_args ARGS...: files the program will open; "--disk PATH,..." names
# a file it may write.
scan_args()
{
	local prev='' arg piece path
	for arg in "$@"; do
		path=
		case "$prev" in
		--disk) path=${arg%%,*} ;;
		esac
		case "$arg" in
		--disk=*) path=${arg#--disk=}; path=${path%%,*} ;;
		esac
		if [ -n "$path" ] && [ -f "$path" ] &&
		   [[ ",$arg," != *,readonly=on,* ]]; then
			disks+=("$path")
		fi
		IFS=',=' read -r -a pieces <<<"$arg"
		for piece in "${pieces[@]}"; do
			[ -n "$piece" ] && [ -f "$piece" ] || continue
			files+=("$piece")
			# A program run by a wrapper (timeout, env) needs its
			# libraries too.
			[ -x "$piece" ] && [ "$(head -c 4 "$piece")" = $'\x7fELF' ] &&
				stage_program "$piece"
		done
		prev=$arg
	done
}

write_env()
{
	local f arg name size abs
	{
		echo "E2E_CWD=$(sq "$PWD")"
		# L1's own limit, well inside ours: a program that hangs in a
		# live L1 is then reported with its threads' kernel stacks.
		echo "E2E_WATCHDOG=$((limit * 85 / 100 - 10))"
		if [ "$stdin" = - ]; then
			echo "E2E_STDIN=tty"
		else
			case "$stdin" in
			/*) abs=$stdin ;;
			*) abs=$PWD/$stdin ;;
			esac
			echo "E2E_STDIN=$(sq "$abs")"
		fi
		printf 'E2E_DISKS='
		local list=
		for f in "${disks[@]}"; do
			case "$f" in
			/*) abs=$f ;;
			*) abs=$PWD/$f ;;
			esac
			size=$(stat -c %s "$f") || die "cannot stat '$f'"
			list+="$size $abs"$'\n'
		done
		sq "$list"
		echo
		echo "E2E_BLOCKS=${#blocks[@]}"
		while IFS='=' read -r name _; do
			case "$name" in
			MICROVM_E2E_* | MICROVM_KVM_DEVICE) ;;
			MICROVM_* | ASAN_OPTIONS | UBSAN_OPTIONS | TSAN_OPTIONS)
				echo "export $name=$(sq "${!name}")" ;;
			esac
		done < <(env)
		echo "e2e_run()"
		echo "{"
		printf '\t'
		for arg in "$@"; do
			printf '%s ' "$(sq "$arg")"
		done
		echo
		echo "}"
	} >"$work/root/e2e/run.env"
}

run_nested()
{
	local prog qemu=qemu-system-x86_64 start rc i status drives=()
	command -v "$qemu" >/dev/null ||
		die "nested mode needs $qemu (apt-get install qemu-system-x86)"
	[ -f "$art/l1-base.cpio.gz" ] ||
		die "no $art/l1-base.cpio.gz (run tests/e2e/prepare.sh $art)"
	limit=${limit:-600}
	work=$(mktemp -d "${TMPDIR:-/tmp}/run-guest.XXXXXX") ||
		die "mktemp failed"
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/root/e2e"

	prog=$1
	if [[ "$prog" != */* ]]; then
		prog=$(command -v "$prog") || die "no program '$1'"
	fi
	[ -x "$prog" ] || die "'$prog' is not an executable file"
	case "$prog" in
	/*) ;;
	*) prog=$PWD/$prog ;;
	esac
	shift
	stage_program "$prog"
	scan_args "$@"
	[ "$stdin" = - ] || files+=("$stdin")
	local f d skip
	for f in "${files[@]}"; do
		skip=0
		[ "$f" != /dev/null ] || skip=1
		for d in "${disks[@]}"; do
			[ "$(realpath -m "$f")" != "$(realpath -m "$d")" ] || skip=1
		done
		[ $skip -eq 1 ] || stage "$f"
	done
	# l1_drive ID FILE KIND OPTS: FILE as a raw virtio disk of L1 whose
	# serial is e2e-ID (guest/l1-init.sh and PROGRAM find it by that).
	l1_drive()
	{
		[ -f "$2" ] || die "no $3 file '$2'"
		# shellcheck disable=SC2054
		drives+=(-drive
			 "file=${2//,/,,},format=raw,if=none,id=$1,cache=writeback$4"
			 -device "virtio-blk-pci,drive=$1,serial=e2e-$1")
	}
	for i in "${!disks[@]}"; do
		l1_drive "share$i" "${disks[$i]}" disk ""
	done
	for i in "${!blocks[@]}"; do
		l1_drive "block$i" "${blocks[$i]}" block ,snapshot=on
	done
	write_env "$prog" "$@"
	# Uncompressed per-run archive first, the big gzip'ed base after it:
	# the kernel unpacks concatenated archives in order.
	(cd "$work/root" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) >"$work/l1.cpio" ||
		die "cpio failed"
	cat "$art/l1-base.cpio.gz" >>"$work/l1.cpio"
	mon=$work/mon
	mkfifo "$mon.in" "$mon.out" || die "mkfifo failed"

	# shellcheck disable=SC2054
	local qemu_args=(-machine q35 -accel "tcg${MICROVM_E2E_TCG_OPTS:+,$MICROVM_E2E_TCG_OPTS}" -cpu max
		-smp "${MICROVM_E2E_L1_CPUS:-1}" -m "${MICROVM_E2E_L1_MEMORY:-2048}"
		-nodefaults -no-user-config -display none -no-reboot
		-kernel "${MICROVM_E2E_L1_KERNEL:-$art/vmlinuz}"
		-initrd "$work/l1.cpio"
		-append "console=ttyS0 quiet panic=-1${MICROVM_E2E_L1_APPEND:+ $MICROVM_E2E_L1_APPEND}"
		-chardev "file,id=l1con,path=$work/l1.log" -serial chardev:l1con
		-serial chardev:l2con "${drives[@]}"
		-chardev "pipe,id=l1mon,path=$mon" -mon chardev=l1mon
		-name l1,debug-threads=on)
	# ttyS1 reads our stdin only for "--stdin -"; otherwise it is a
	# write-only file chardev on our stdout.
	# shellcheck disable=SC2054
	if [ "$stdin" = - ]; then
		qemu_args+=(-chardev stdio,id=l2con)
	else
		qemu_args+=(-chardev file,id=l2con,path=/dev/stdout,append=on)
	fi
	start=$SECONDS
	watch_log=$work/l1.log
	watch_quiet=${MICROVM_E2E_L1_SILENCE:-120}
	watch_flag=$work/l1.silent
	if [ "$stdin" = - ]; then
		limited "$qemu" "${qemu_args[@]}"
	else
		limited "$qemu" "${qemu_args[@]}" </dev/null
	fi
	rc=$?
	tr -d '\r' <"$work/l1.log" >"$work/l1.txt"
	[ -z "${MICROVM_E2E_L1_LOG:-}" ] || cp "$work/l1.txt" "$MICROVM_E2E_L1_LOG"
	# L1's kernel locking up or stalling (its console shows errors only):
	# the evidence e2e_emulator_failure (lib.sh) needs to blame the
	# emulator for an L2 triple fault or --timeout.
	grep -aE 'soft lockup|hard LOCKUP|rcu: INFO: .*stall|rcu_(sched|preempt) (self-)?detected stall' \
		"$work/l1.txt" | head -n 5 | sed 's/^/run-guest: L1 kernel: /' >&2
	if grep -q '^E2E-L1-ERROR: ' "$work/l1.txt"; then
		echo "run-guest: L1 log:" >&2
		cat "$work/l1.txt" >&2
		die "nested: $(sed -n 's/^E2E-L1-ERROR: //p' "$work/l1.txt" | head -n 1)"
	fi
	if grep -q '^E2E-L1-HUNG: ' "$work/l1.txt"; then
		echo "run-guest: L1 log:" >&2
		cat "$work/l1.txt" >&2
		die "nested: '$prog' hung in L1:" \
			"$(sed -n 's/^E2E-L1-HUNG: //p' "$work/l1.txt" | head -n 1)"
	fi
	status=$(sed -n 's/^E2E-L1-EXIT-STATUS: \([0-9]*\)$/\1/p' "$work/l1.txt")
	if [ -z "$status" ]; then
		echo "run-guest: L1 log (tail):" >&2
		grep -v '^E2E-L1-ALIVE: ' "$work/l1.txt" | tail -n 40 >&2
		if [ -f "$watch_flag" ]; then
			# The emulated CPU's instruction pointer and mode, as the
			# monitor saw them when the silence was noticed (RIP in
			# L2's range: the CPU was running the nested guest).
			grep -aE '^(RIP|CS |CR0|EFER|THREAD|Timer|LVTT|ISR|IRR|APR)' "$watch_flag" | tr -d '\r' |
				sed 's/^/run-guest: L1 CPU when silent: /' >&2
			local noinit
			noinit=$(sed -n 's/^NOINIT \([0-9]*\)$/\1/p' "$watch_flag")
			[ -z "$noinit" ] ||
				die "nested: L1 never reached /init: its kernel still booted after $noinit s"
			# Ended early (silence_watch): the emulator's livelock.
			local silent="$watch_quiet s" stuck
			stuck=$(sed -n 's/^STUCK \([0-9]*\)$/\1/p' "$watch_flag")
			[ -z "$stuck" ] || silent="$stuck s with the emulated CPU livelocked (one RIP, not halted, an interrupt pending above its priority)"
			die "nested: L1 stopped answering: its log was silent for" \
				"$silent (last heartbeat:" \
				"$(sed -n 's/^E2E-L1-ALIVE: //p' "$work/l1.txt" | tail -n 1 | grep . || echo none) s L1 uptime," \
				"$((SECONDS - start)) s wall)"
		fi
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			die "nested: L1 still ran after the harness limit of $limit s"
		fi
		die "nested: L1 ended (qemu status $rc) without reporting a status"
	fi
	sed -n '/^E2E-L1-STDERR-BEGIN$/,/^E2E-L1-STDERR-END$/p' "$work/l1.txt" |
		sed '1d;$d' >&2
	verbose "nested: L1 reached /init at" \
		"$(sed -n 's/^E2E-L1-START: //p' "$work/l1.txt") s, program" \
		"ended at $(sed -n 's/^E2E-L1-END: //p' "$work/l1.txt") s" \
		"(L1 uptime), whole run $((SECONDS - start)) s wall"
	exit "$status"
}

case "$mode" in
direct) run_direct "$@" ;;
nested) run_nested "$@" ;;
esac
