#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs where the VMMs run (inside L1 for snapshot-bench.sh; busybox sh):
# RUNS rounds through snapshot-probe, each timing, on the same kernel,
# initramfs (/init: tests/e2e/guest/boottime-init.sh with
# microvm.boot.tick=1), RAM and one vCPU: a cold boot under microvm and
# under QEMU's microvm machine; a snapshot of the ticking guest (microvm:
# PUT /snapshot/create on the paused guest; QEMU: migrate to a file, as
# its -incoming reads it back); and the restore of each to its first tick
# (microvm: --restore and PUT /snapshot/load; QEMU: -incoming). Then, once,
# the memory of CLONES restores of one snapshot of an idle guest against
# CLONES cold boots of it, all running at once.
#
# Usage: snapshot-bench-l1.sh RUNS CLONES PROBE MICROVM QEMU KERNEL INITRD
#        MIB QEMU-FILES...
# Stdout: the probe's "snap" records and "mem" records. Exit: 0, or 1
# when a measurement failed.
runs=$1 clones=$2 probe=$3 microvm=$4 qemu=$5 kernel=$6 initrd=$7 mib=$8
tick="console=ttyS0 quiet panic=-1 microvm.boot.tick=1"
idle="console=ttyS0 quiet panic=-1 microvm.boot.idle=600"
tmp=${TMPDIR:-/tmp}/snapshot-bench.$$
mkdir -p "$tmp/s" "$tmp/i" || exit 1
echo "note mib=$mib runs=$runs clones=$clones"
fail=0
qemu_args="-M microvm,acpi=on -enable-kvm -cpu host -nodefaults -no-user-config -nographic -serial stdio -m $mib -smp 1 -kernel $kernel -initrd $initrd"
boot_json() { echo "{\"kernel_image_path\": \"$kernel\", \"initrd_path\": \"$initrd\", \"boot_args\": \"$1\"}"; }
machine="{\"vcpu_count\": 1, \"mem_size_mib\": $mib}"

# rec VMM WHAT PROBE-ARGS...: one probe run, its record tagged.
rec()
{
	v=$1 w=$2
	shift 2
	out=$("$probe" "$@" 2>"$tmp/err") || {
		fail=1
		echo "note FAILED $v $w: $(tail -n 3 "$tmp/err" | tr '\n' ' ')"
		return 1
	}
	echo "$out vmm=$v what=$w run=$k"
}

k=1
while [ "$k" -le "$runs" ]; do
	rm -f "$tmp/s/"* "$tmp/fc.sock" "$tmp/q.sock"
	rec microvm boot boot -- "$microvm" --kernel "$kernel" \
		--initrd "$initrd" --cmdline "$tick" --cpus 1 --memory "${mib}M"
	rec microvm save fc-save --sock "$tmp/fc.sock" --boot "$(boot_json "$tick")" \
		--machine "$machine" --state "$tmp/s/state" --mem "$tmp/s/memory" \
		-- "$microvm" --api-sock "$tmp/fc.sock"
	echo "size vmm=microvm run=$k state_b=$(wc -c <"$tmp/s/state") mem_alloc_kb=$(du -k "$tmp/s/memory" | cut -f1) mem_b=$(wc -c <"$tmp/s/memory")"
	# L1 frees the saved VM in the background for a while after its
	# exit; the first restore after a save ran about twice as long.
	sleep 3
	# Both ways to restore, first one then the other, by run.
	if [ $((k % 2)) = 1 ]; then
		rec microvm restore restore --mem "$tmp/s/memory" --hold 1 \
			-- "$microvm" --restore "$tmp/s"
	fi
	rm -f "$tmp/fc.sock"
	rec microvm load fc-load --sock "$tmp/fc.sock" --state "$tmp/s/state" \
		--mem "$tmp/s/memory" --hold 1 -- "$microvm" --api-sock "$tmp/fc.sock"
	if [ $((k % 2)) = 0 ]; then
		rec microvm restore restore --mem "$tmp/s/memory" --hold 1 \
			-- "$microvm" --restore "$tmp/s"
	fi
	# shellcheck disable=SC2086
	rec qemu boot boot -- "$qemu" $qemu_args -append "$tick"
	# shellcheck disable=SC2086
	rec qemu save qmp-save --sock "$tmp/q.sock" --mem "$tmp/s/qemu.mig" \
		-- "$qemu" $qemu_args -append "$tick" -S \
		-qmp "unix:$tmp/q.sock,server,nowait"
	echo "size vmm=qemu run=$k mem_alloc_kb=$(du -k "$tmp/s/qemu.mig" | cut -f1) mem_b=$(wc -c <"$tmp/s/qemu.mig")"
	sleep 3
	# shellcheck disable=SC2086
	rec qemu restore restore -- "$qemu" $qemu_args -append "$tick" \
		-incoming "exec:cat $tmp/s/qemu.mig"
	k=$((k + 1))
done

# pss_sum PIDS...: the sum of their Pss, KiB.
pss_sum()
{
	t=0
	for p in "$@"; do
		v=$(sed -n 's/^Pss: *\([0-9]*\) kB/\1/p' "/proc/$p/smaps_rollup")
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
# wait_all PATTERN FILES...: each file shows PATTERN within 600 s.
wait_all()
{
	pat=$1
	shift
	j=0
	for f in "$@"; do
		while ! grep -q "$pat" "$f" 2>/dev/null; do
			j=$((j + 1))
			[ $j -gt 6000 ] && return 1
			sleep 0.1
		done
	done
}

# Memory: CLONES restores of one idle snapshot against CLONES cold boots.
k=0
rm -f "$tmp/fc.sock"
rec microvm idle-save fc-save --sock "$tmp/fc.sock" --boot "$(boot_json "$idle")" \
	--machine "$machine" --state "$tmp/i/state" --mem "$tmp/i/memory" \
	--ready "BOOT-MARK: init" -- "$microvm" --api-sock "$tmp/fc.sock"
pids= logs=
c=1
while [ $c -le "$clones" ]; do
	"$microvm" --restore "$tmp/i" >"$tmp/clone$c.log" 2>&1 </dev/null &
	pids="$pids $!"
	c=$((c + 1))
done
sleep 5
# shellcheck disable=SC2086
echo "mem what=restored clones=$clones pss_kb=$(pss_sum $pids)"
# shellcheck disable=SC2086
kill $pids; wait
pids=
c=1
while [ $c -le "$clones" ]; do
	"$microvm" --kernel "$kernel" --initrd "$initrd" --cmdline "$idle" \
		--cpus 1 --memory "${mib}M" >"$tmp/boot$c.log" 2>&1 </dev/null &
	pids="$pids $!"
	logs="$logs $tmp/boot$c.log"
	c=$((c + 1))
done
# shellcheck disable=SC2086
if wait_all "BOOT-MARK: init" $logs; then
	sleep 5
	# shellcheck disable=SC2086
	echo "mem what=booted clones=$clones pss_kb=$(pss_sum $pids)"
else
	echo "note FAILED: the cold boots did not all reach /init"
	fail=1
fi
# shellcheck disable=SC2086
kill $pids; wait
rm -rf "$tmp"
exit $fail
