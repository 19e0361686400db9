#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CTest e2e-arm64.boot_*: the arm64 microvm boots a real L2 guest inside the
# arm64 L1 machine of l1-kvm-test.sh (QEMU TCG, virt with EL2 and GICv3,
# -cpu max, 2 vCPUs, 2 GiB, Debian's cloud arm64 kernel). L1's /init
# (guest/l1-boot-init.sh) runs
#   microvm --kernel vmlinuz --initrd l2.cpio.gz --cpus N --timeout S
# with the same Debian kernel for L2 and a busybox initramfs whose /init
# (guest/l2-init.sh) reports the CPUs online and powers off (PSCI
# SYSTEM_OFF). The test passes when L2's /init ran (its console output,
# through the PL011 and microvm's stdout, is in L1's console), all N CPUs
# came online and microvm exited 0; with --hang, L2 never powers off and
# microvm must end it with status 124 after its --timeout (L2's kernel
# must have written to the console by then, and --verbose's vCPU register
# dump must follow).
# Prints the L1 console, then:
#   E2E-ARM64: l2-init-at S   L2 kernel uptime when its /init ran
#   E2E-ARM64: microvm-wall S L1 seconds microvm ran
#   E2E-ARM64: boot-wall S    host seconds from QEMU start to its exit
# Exit status: 0 pass, 1 fail, 77 skip (no qemu-system-aarch64, no cross
# compiler, or prepare.sh cannot get its inputs).
#
# Usage: boot-test.sh --artifacts DIR --cross-build DIR [--cpus N]
#                     [--hang SECONDS] [--disk mmio|pci] [--queues N]
#                     [--maxcpus M] [--end poweroff|reset|exitN|cad|snap]
#                     [--quiet] [--l1-cpus N] [--timeout SECONDS]
#   --artifacts    prepare.sh's output (kernel, busybox)
#   --cross-build  where tests/cross-aarch64.sh --microvm-only builds the
#                  arm64 microvm
#   --hang S       L2 does not power off; microvm --timeout S --verbose
#                  must end it with 124 and dump the vCPUs
#   --disk T       L2 also gets a 16 MiB read-write disk of a known
#                  pattern on transport T: L2's md5 of /dev/vda must be
#                  L1's of the image; then 8 writers in L2 (writer i on
#                  CPU i mod N, O_DIRECT) each write their pattern to
#                  their 2 MiB, and L2's md5 of vda read back (page
#                  cache dropped) and L1's of the image after microvm
#                  exited must both be that of the 8 patterns; every
#                  queue L2 set up must have carried requests (microvm
#                  --stats)
#   --queues N     the disk's queues=N; L2 must set up N queues (Linux
#                  sets up at most one per possible CPU: with N > the
#                  CPUs to boot, --cpus N --maxcpus M boots M and L2's
#                  /init brings the rest online before writing)
#   --maxcpus M    maxcpus=M on L2's command line
#   --end E        how L2 ends: poweroff (PSCI SYSTEM_OFF, default) and
#                  reset (reboot -f, PSCI SYSTEM_RESET) must give status
#                  0, exitN (the exit register at 0xf0100000) status N;
#                  reset and exitN run microvm --verbose, whose "guest
#                  ended:" line must name the cause
#                  cad: microvm also serves its API (--api-sock) and
#                  L1 sends SendCtrlAltDel (guest/api-put.c, built here:
#                  L1's busybox has no curl) until it is taken: L2 loads
#                  virtio_input for microvm's keyboard, takes Ctrl-Alt-Del
#                  as SIGINT to its init, prints it and powers off; the
#                  answer must be 204 (before it only a 400 for want of
#                  the keyboard driver, or no socket yet), the keyboard
#                  must have sent its
#                  8 events (--stats), the status must be 0 and the
#                  cause "PSCI poweroff"
#                  snap: as cad, but L2 counts ticks meanwhile, and L1
#                  snapshots microvm at tick 5 (PATCH /vm Paused, PUT
#                  /snapshot/create), kills it and restores the snapshot
#                  into a fresh microvm (PUT /snapshot/load with
#                  track_dirty_pages and resume_vm): the restored L2 must
#                  go on from the snapshot's tick (the next one, or the
#                  one after when the pause cut a line), without booting,
#                  count 5 more and end on SendCtrlAltDel with status 0;
#                  with --disk, L2 reads the disk each tick and the
#                  restored microvm must have served some of them. Five
#                  ticks after the load L1 takes a Diff and a Full at one
#                  pause: the Full restored from with the Diff written
#                  over it (microvm --base-file/--diff-file) must equal
#                  the pause's Full byte for byte, the Diff smaller; then
#                  two clones of it at once (microvm --restore,
#                  --restore-drive disk0,snapshot=on) must each count on
#                  from the Diff's tick, share at least 8 MiB of their
#                  memory (Pss under Rss less a quarter of it) and end
#                  with 0; then six
#                  broken snapshots must each be refused with status 1
#                  and one line naming the fault: another CPU's MIDR_EL1
#                  (tests/e2e/snap-edit.c idreg, built here), a corrupt,
#                  truncated and other-version state file, a short
#                  memory file, a missing disk
#                  With --l2-kernel new, also the VM generation ID
#                  (microsoft,vmgenid in the device tree): L2's vmgenid
#                  driver must bind it at boot, and take its interrupt
#                  and reseed its random pool ("crng reseeded due to
#                  virtual machine fork") once per restore: once in the
#                  restored guest, twice in each clone (a restore of a
#                  restored guest's snapshot)
#   --l2-kernel K  L2's kernel: stable (default) is L1's own, Debian
#                  stable's cloud kernel; new is prepare.sh's newer one
#                  (bookworm-backports, 6.12), whose virtio modules it
#                  loads instead
#   --quiet        quiet on L2's command line (no boot log)
#   --l1-cpus N    L1's vCPUs (default 2)
#   --timeout      bound on the whole L1 run (default 480)
set -uo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
QEMU=${MICROVM_E2E_ARM64_QEMU:-qemu-system-aarch64}
art='' cross='' cpus=1 hang='' disk='' limit=480
queues='' maxcpus='' l2end=poweroff quiet=0 l1cpus=2 l2kernel=stable

die()
{
	echo "boot-test: FAIL: $*"
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--artifacts) art=$2; shift 2 ;;
	--cross-build) cross=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--hang) hang=$2; shift 2 ;;
	--disk) disk=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--queues) queues=$2; shift 2 ;;
	--maxcpus) maxcpus=$2; shift 2 ;;
	--end) l2end=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--l1-cpus) l1cpus=$2; shift 2 ;;
	--l2-kernel) l2kernel=$2; shift 2 ;;
	*) echo "boot-test: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$art" ] && [ -n "$cross" ] ||
	{ echo "boot-test: --artifacts and --cross-build are required" >&2; exit 2; }
case "$disk" in
''|mmio|pci) ;;
*) echo "boot-test: bad --disk '$disk' (mmio or pci)" >&2; exit 2 ;;
esac
case "$l2kernel" in
stable) l2dir=$art ;;
new) l2dir=$art/l2-new ;;
*) echo "boot-test: bad --l2-kernel '$l2kernel' (stable or new)" >&2; exit 2 ;;
esac
case "$l2end" in
poweroff|reset|cad|snap) want_status=0 ;;
exit[0-9]*) want_status=${l2end#exit} ;;
*) echo "boot-test: bad --end '$l2end' (poweroff, reset, exitN, cad or snap)" >&2; exit 2 ;;
esac
for v in "$cpus" "$limit" "$l1cpus" "$want_status" ${hang:+"$hang"} \
	${queues:+"$queues"} ${maxcpus:+"$maxcpus"}; do
	case "$v" in
	''|*[!0-9]*) echo "boot-test: bad number '$v'" >&2; exit 2 ;;
	esac
done

command -v "$QEMU" >/dev/null 2>&1 || {
	echo "boot-test: SKIP: no $QEMU (apt-get install qemu-system-arm)"
	exit 77
}
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || {
	echo "boot-test: SKIP: no aarch64-linux-gnu-gcc (tests/install-deps.sh)"
	exit 77
}
"$DIR/prepare.sh" "$art"
rc=$?
[ $rc -eq 77 ] && { echo "boot-test: SKIP: prepare.sh could not get its inputs"; exit 77; }
[ $rc -eq 0 ] || die "prepare.sh exited $rc"
"$ROOT/tests/cross-aarch64.sh" --microvm-only "$cross" >"$art/cross-build.log" 2>&1 ||
	{ tail -n 30 "$art/cross-build.log"; die "building the arm64 microvm failed"; }
vmm=$(realpath -m "$cross")/microvm
[ -x "$vmm" ] || die "no $vmm after the cross build"

work=$(mktemp -d "${TMPDIR:-/tmp}/e2e-arm64-boot.XXXXXX")
trap 'rm -rf "$work"' EXIT

# L2's initramfs: busybox and guest/l2-init.sh.
mkdir -p "$work/l2"/{bin,proc,sys,dev,tmp}
install -m 755 "$art/busybox" "$work/l2/bin/busybox"
ln -s busybox "$work/l2/bin/sh"
install -m 755 "$DIR/guest/l2-init.sh" "$work/l2/init"
mkdir -p "$work/l2/lib/modules"
cp "$l2dir"/modules/*.ko "$work/l2/lib/modules/" 2>/dev/null ||
	die "no virtio modules in $l2dir/modules (prepare.sh)"
(cd "$work/l2" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$work/l2.cpio.gz"

# L1's: busybox, guest/l1-boot-init.sh, microvm, and L2's kernel and
# initramfs (uncompressed cpio: the kernel is most of it and is itself
# an Image that gzip shrinks little worth the time).
mkdir -p "$work/l1"/{bin,proc,sys,dev,tmp,l2}
install -m 755 "$art/busybox" "$work/l1/bin/busybox"
ln -s busybox "$work/l1/bin/sh"
install -m 755 "$DIR/guest/l1-boot-init.sh" "$work/l1/init"
install -m 755 "$vmm" "$work/l1/bin/microvm"
if [ "$l2end" = cad ] || [ "$l2end" = snap ]; then
	aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror \
		-o "$work/l1/bin/api-put" "$DIR/guest/api-put.c" ||
		die "building guest/api-put.c failed"
fi
if [ "$l2end" = snap ]; then
	aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror \
		-I "$ROOT/src" -o "$work/l1/bin/snap-edit" \
		"$ROOT/tests/e2e/snap-edit.c" "$ROOT/src/snapshot/snap.c" ||
		die "building tests/e2e/snap-edit.c failed"
fi
cp "$l2dir/vmlinuz" "$work/l1/l2/vmlinuz"
cp "$work/l2.cpio.gz" "$work/l1/l2/initrd.cpio.gz"
(cd "$work/l1" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) >"$work/l1.cpio"

append="console=ttyAMA0 panic=-1 rdinit=/init l1.cpus=$cpus"
[ -z "$disk" ] || append+=" l1.disk=$disk"
[ -z "$queues" ] || append+=" l1.queues=$queues"
[ -z "$maxcpus" ] || append+=" l1.maxcpus=$maxcpus"
[ "$l2end" = poweroff ] || append+=" l1.end=$l2end"
[ "$quiet" = 0 ] || append+=" l1.quiet=1"
# The newer kernel would use 52-bit virtual addresses (FEAT_LPA2, which
# L1's emulated CPU has): after a restore, with no page in stage 2 yet,
# its first table walk faults at level -1, the stage-2 fault reaches L1
# with that level's code (FSC 0x2b), and L1's KVM (6.1, no LPA2) fails
# KVM_RUN with EFAULT ("Unsupported FSC" in L1's log; README).
# arm64.nolva keeps it at 48 bits, where the walks start at level 0.
[ "$l2kernel" = stable ] || append+=" l1.nolva=1"
if [ -n "$hang" ]; then
	append+=" l1.hang=1 l1.timeout=$hang"
else
	append+=" l1.timeout=$((limit > 60 ? limit - 30 : limit))"
fi
log=$work/console.log
run_l1()
{
	start=$(date +%s.%N)
	timeout -k 10 "$limit" "$QEMU" \
		-M virt,virtualization=on,gic-version=3 -cpu max -smp "$l1cpus" -m 2048 \
		-accel tcg -nographic -no-reboot -monitor none -serial stdio \
		-kernel "$art/vmlinuz" -initrd "$work/l1.cpio" \
		-append "$append" </dev/null >"$log" 2>&1
	qrc=$?
	end=$(date +%s.%N)
	cat "$log"
}

# stuck_in_l2: whether L2 never left KVM_RUN once it was entered: microvm's
# --timeout ended it (status 124) with no console byte from L2 and every
# vCPU at one exit at most, the kick of the timeout. microvm took no part
# after the start then, and its start is deterministic (the same kernel,
# initramfs, device tree and registers every run), so a run that does
# not repeat is the emulated L1's (seen once in a clean-clone CI run: L2
# at its first instructions after turning its MMU on for 450 s).
stuck_in_l2()
{
	[ -z "$hang" ] &&
		grep -q '^ARM64-L1: microvm status 124 ' "$log" &&
		grep -q '^microvm: stats console: output bytes 0 ' "$log" &&
		! grep -q '^ARM64-L2: init at' "$log" &&
		! grep -E '^microvm: stats vcpu [0-9]*: exits ' "$log" |
			awk '$6 > 1 { more = 1 } END { exit !more }'
}

run_l1
if stuck_in_l2; then
	# shellcheck source=../e2e/lib.sh
	. "$DIR/../e2e/lib.sh"
	e2e_count_retry boot-test "L2 made no exit and no console output until --timeout (an emulator stall): booting again"
	run_l1
fi
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
l2_at=$(sed -n 's/^ARM64-L2: init at \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
status=$(sed -n 's/^ARM64-L1: microvm status \([0-9]*\) .*/\1/p' "$log" | head -n 1)
mwall=$(sed -n 's/^ARM64-L1: microvm status [0-9]* after \([0-9.]*\) s.*/\1/p' "$log" | head -n 1)
echo "E2E-ARM64: l2-init-at ${l2_at:-none}"
echo "E2E-ARM64: microvm-wall ${mwall:-none}"
echo "E2E-ARM64: boot-wall $wall"

case $qrc in
124|137) die "L1 still ran after ${limit} s" ;;
esac
[ $qrc -eq 0 ] || die "qemu exited $qrc"
grep -q 'ARM64-L1: /dev/kvm missing' "$log" && die "no /dev/kvm in L1"
[ -n "$status" ] || die "microvm never finished in L1"
if [ -n "$hang" ]; then
	# L1's kernel says it once, L2's (through microvm's console) again;
	# where L2 got to by the timeout depends on the machine's load.
	[ "$(grep -c 'Booting Linux on physical CPU' "$log")" -ge 2 ] ||
		die "no console output from L2's kernel"
	[ "$status" = 124 ] || die "microvm --timeout $hang exited $status, want 124"
	grep -q 'vCPU 0: pc [0-9a-f]* ' "$log" ||
		die "no vCPU register dump (--verbose) after the timeout"
else
	[ -n "$l2_at" ] || die "L2 never reached /init (microvm status $status)"
	online=$(sed -n 's/^ARM64-L2: cpus online .* count \([0-9]*\).*/\1/p' "$log" | head -n 1)
	[ "$online" = "$cpus" ] || die "L2 has ${online:-no} CPUs online, want $cpus"
	[ "$status" = "$want_status" ] ||
		die "microvm exited $status after L2's $l2end, want $want_status"
	case "$l2end" in
	reset) cause='PSCI reset' ;;
	exit*) cause='guest exit register' ;;
	cad|snap) cause='PSCI poweroff' ;;
	*) cause='' ;;
	esac
	[ -z "$cause" ] || grep -q "^microvm: guest ended: $cause, exit status $status" "$log" ||
		die "microvm's last line does not name '$cause' as the cause"
	# L2's clock came from the PL031, which reads the host's wall
	# clock (L1's, which QEMU sets from ours): within the run's length.
	l2_clock=$(sed -n 's/^ARM64-L2: clock \([0-9]*\) .*/\1/p' "$log" | head -n 1)
	now=$(date +%s)
	[ -n "$l2_clock" ] && [ "$l2_clock" -ge $((now - limit - 60)) ] &&
		[ "$l2_clock" -le $((now + 60)) ] ||
		die "L2's clock is ${l2_clock:-missing}, the host's $now: not set from the RTC"
fi
if [ "$l2end" = cad ]; then
	grep -q '^ARM64-L2: input .*microvm keyboard' "$log" ||
		die "L2 has no 'microvm keyboard' input device"
	grep -q '^ARM64-L1: SendCtrlAltDel: API-PUT: 204' "$log" ||
		die "SendCtrlAltDel never answered 204"
	other=$(grep '^ARM64-L1: SendCtrlAltDel: ' "$log" |
		grep -v 'API-PUT: 204' | grep -v 'API-PUT: 400 .*keyboard driver' |
		grep -v 'SendCtrlAltDel: api-put: ' | head -n 1)
	[ -z "$other" ] || die "unexpected answer: $other"
	grep -q '^ARM64-L2: ctrl-alt-del seen' "$log" ||
		die "L2 never saw Ctrl-Alt-Del"
	grep -q '^microvm: stats kbd: events-sent 8 dropped 0 ' "$log" ||
		die "the keyboard did not send its 8 events: $(grep 'stats kbd' "$log")"
fi
if [ "$l2end" = snap ]; then
	# The restored guest goes on from the snapshot's tick, without a
	# boot, and ends on Ctrl-Alt-Del; its first whole tick line is the
	# next one (or the one after, when the pause cut a line in two).
	tr -d '\r' <"$log" >"$work/log"
	t0=$(sed -n 's/^ARM64-L1: snapshot at tick \([0-9]*\)$/\1/p' "$work/log" | head -n 1)
	[ -n "$t0" ] || die "no snapshot was written: $(grep -E '^ARM64-L1: (PUT|PATCH) ' "$work/log" | tr '\n' ';')"
	sed -n '/^ARM64-L1: console-begin restored$/,/^ARM64-L1: console-end restored$/p' \
		"$work/log" >"$work/restored"
	first=$(sed -n 's/^ARM64-L2: tick \([0-9]*\)$/\1/p' "$work/restored" | head -n 1)
	last=$(sed -n 's/^ARM64-L2: tick \([0-9]*\)$/\1/p' "$work/restored" | tail -n 1)
	echo "E2E-ARM64: snapshot at tick $t0, restored ticks ${first:-none} to ${last:-none}"
	[ -n "$first" ] && [ "$first" -gt "$t0" ] && [ "$first" -le $((t0 + 2)) ] ||
		die "the restored guest's first tick is ${first:-none}, the snapshot's $t0"
	[ "$last" -ge $((t0 + 5)) ] ||
		die "the restored guest counted to $last only (snapshot at $t0)"
	grep -q 'Booting Linux' "$work/restored" &&
		die "the restored guest booted again"
	grep -q '^ARM64-L2: ctrl-alt-del seen' "$work/restored" ||
		die "the restored guest never saw Ctrl-Alt-Del"
	grep -q '^ARM64-L2: read failed' "$work/log" &&
		die "$(grep '^ARM64-L2: read failed' "$work/log" | head -n 1)"
	# The restore was a PUT /snapshot/load with dirty pages tracked; its
	# Diff written over the Full it came from is the Full taken at the
	# same pause, byte for byte, and holds less.
	grep -q '^ARM64-L1: PUT /snapshot/load: API-PUT: 204' "$work/log" ||
		die "PUT /snapshot/load failed: $(grep '^ARM64-L1: PUT /snapshot/load' "$work/log")"
	tdiff=$(sed -n 's/^ARM64-L1: diff at tick \([0-9]*\)$/\1/p' "$work/log" | head -n 1)
	[ -n "$tdiff" ] || die "no Diff snapshot: $(grep -E '^ARM64-L1: (PUT|PATCH) ' "$work/log" | tr '\n' ';')"
	grep -q '^ARM64-L1: rebase status 0$' "$work/log" ||
		die "--base-file/--diff-file failed: $(grep '^ARM64-L1: rebase' "$work/log")"
	grep -q '^ARM64-L1: base + diff equals the full$' "$work/log" ||
		die "the Full with the Diff written over it is not the Full of the same pause"
	read -r dk fk <<<"$(sed -n 's/^ARM64-L1: diff KiB \([0-9]*\) full KiB \([0-9]*\)$/\1 \2/p' "$work/log")"
	echo "E2E-ARM64: Diff at tick $tdiff: ${dk:-?} KiB against a Full's ${fk:-?} KiB"
	[ -n "$dk" ] && [ -n "$fk" ] && [ "$dk" -lt "$fk" ] ||
		die "the Diff (${dk:-?} KiB) is not smaller than the Full (${fk:-?} KiB)"
	# Two clones of the Diff's snapshot at once (--restore, the disk
	# behind an overlay each): both count on from its tick, share the
	# memory file's pages, and end on Ctrl-Alt-Del with 0.
	for c in a b; do
		sed -n "/^ARM64-L1: console-begin clone-$c\$/,/^ARM64-L1: console-end clone-$c\$/p" \
			"$work/log" >"$work/clone-$c"
		cf=$(sed -n 's/^ARM64-L2: tick \([0-9]*\)$/\1/p' "$work/clone-$c" | head -n 1)
		cl=$(sed -n 's/^ARM64-L2: tick \([0-9]*\)$/\1/p' "$work/clone-$c" | tail -n 1)
		echo "E2E-ARM64: clone $c ticks ${cf:-none} to ${cl:-none}"
		[ -n "$cf" ] && [ "$cf" -gt "$tdiff" ] && [ "$cf" -le $((tdiff + 2)) ] &&
			[ "$cl" -ge $((tdiff + 3)) ] ||
			die "clone $c counted ${cf:-none} to ${cl:-none}, the Diff was at tick $tdiff"
		grep -q 'Booting Linux' "$work/clone-$c" && die "clone $c booted again"
		grep -q '^ARM64-L2: ctrl-alt-del seen' "$work/clone-$c" ||
			die "clone $c never saw Ctrl-Alt-Del"
		grep -q "^ARM64-L1: clone $c status 0\$" "$work/log" ||
			die "clone $c: $(grep "^ARM64-L1: clone $c status" "$work/log")"
		read -r rss pss shared <<<"$(sed -n "s/^ARM64-L1: clone $c Rss \([0-9]*\) kB Pss \([0-9]*\) kB shared \([0-9]*\) kB\$/\1 \2 \3/p" "$work/log")"
		echo "E2E-ARM64: clone $c Rss ${rss:-?} kB, Pss ${pss:-?} kB, shared ${shared:-?} kB"
		[ -n "$shared" ] && [ "$shared" -ge 8192 ] &&
			[ "$pss" -lt $((rss - shared / 4)) ] ||
			die "clone $c shares too little: Rss ${rss:-?} Pss ${pss:-?} shared ${shared:-?} kB"
	done
	# The VM generation ID: bound at boot; one interrupt and one
	# reseed per restore (the clones restore a restored guest).
	if [ "$l2kernel" = new ]; then
		grep -q '^ARM64-L2: vmgenid f0110000\.vmgenid$' "$work/log" ||
			die "L2's vmgenid driver did not bind the device: $(grep '^ARM64-L2: vmgenid' "$work/log" | head -n 1)"
		for v in restored:1 clone-a:2 clone-b:2; do
			f=$work/${v%:*}
			[ -f "$f" ] || sed -n "/^ARM64-L1: console-begin ${v%:*}\$/,/^ARM64-L1: console-end ${v%:*}\$/p" \
				"$work/log" >"$f"
			line=$(grep '^ARM64-L2: vmgenid interrupts' "$f" | tail -n 1)
			echo "E2E-ARM64: ${v%:*}: ${line#ARM64-L2: }"
			grep -q "^ARM64-L2: vmgenid interrupts ${v#*:} reseeds ${v#*:} at tick" <<<"$line" ||
				die "${v%:*}: want ${v#*:} vmgenid interrupts and reseeds, L2 says: ${line:-nothing}"
		done
	fi
	# The refusals: one line each, status 1.
	for r in 'cpu:MIDR_EL1 .*another CPU' 'corrupt:checksum mismatch' \
		'truncated:truncated' 'version:format version 9' \
		'short-memory:holds 1048576 bytes' 'missing-disk:/tmp/disk.raw'; do
		line=$(grep "^ARM64-L1: refused ${r%%:*}: " "$work/log" | head -n 1)
		echo "E2E-ARM64: $line"
		grep -q "status 1 lines [12]: .*${r#*:}" <<<"$line" ||
			die "not refused as it should be (${r#*:}): ${line:-no line}"
	done
	# With a disk: the restored microvm served the ticks' reads.
	if [ -n "$disk" ]; then
		after=$(sed -n '/^microvm: resumed$/,$p' "$work/log" | awk '
			/^microvm: stats vda queue [0-9]+: requests / { s += $7 }
			END { print s + 0 }')
		echo "E2E-ARM64: requests served after the restore: $after"
		[ "$after" -gt 0 ] ||
			die "the restored microvm served no disk request"
	fi
fi
if [ -n "$disk" ]; then
	want=$(sed -n 's/^ARM64-L1: disk md5 \([0-9a-f]*\).*/\1/p' "$log" | head -n 1)
	got=$(sed -n 's/^ARM64-L2: vda md5 \([0-9a-f]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$want" ] || die "L1 made no disk image"
	[ -n "$got" ] || die "L2 has no /dev/vda (transport $disk)"
	[ "$got" = "$want" ] || die "L2 read $got from vda, the image is $want"
	grep -q '^ARM64-L2: writer [0-9]* failed' "$log" &&
		die "$(grep '^ARM64-L2: writer [0-9]* failed' "$log" | head -n 1)"
	expect=$(sed -n 's/^ARM64-L1: expect md5 \([0-9a-f]*\).*/\1/p' "$log" | head -n 1)
	back=$(sed -n 's/^ARM64-L2: vda md5 after [0-9]* writers \([0-9a-f]*\).*/\1/p' "$log" | head -n 1)
	image=$(sed -n 's/^ARM64-L1: image md5 \([0-9a-f]*\) after microvm.*/\1/p' "$log" | head -n 1)
	[ -n "$expect" ] || die "L1 printed no md5 of what the writers must leave"
	[ "$back" = "$expect" ] ||
		die "L2 read back ${back:-nothing} after its writers, want $expect"
	[ "$image" = "$expect" ] ||
		die "the image in L1 is ${image:-missing} after microvm, want $expect"
	# The queues L2 set up, and those microvm saw requests on.
	nq=$(sed -n 's/^ARM64-L2: vda queues \([0-9]*\).*/\1/p' "$log" | head -n 1)
	# microvm's default: one per vCPU on pci, one on mmio.
	wantq=$queues
	[ -n "$wantq" ] || { [ "$disk" = pci ] && wantq=$cpus || wantq=1; }
	[ "$nq" = "$wantq" ] ||
		die "L2 set up ${nq:-no} queues on vda, want $wantq"
	used=$(grep -c '^microvm: stats vda queue [0-9]*: requests [1-9]' "$log")
	# snap: two microvms' stats, the original's and the restored's.
	[ "$used" = "$nq" ] || { [ "$l2end" = snap ] && [ "$used" -ge "$nq" ]; } ||
		die "microvm saw requests on $used of vda's $nq queues"
	echo "E2E-ARM64: vda queues $nq, with requests $used"
fi
echo "boot-test: PASS"
