#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Throwaway disks in a real guest: the disk scenario (guest/scenarios-disk.sh:
# an ext4 root on vda that it writes and syncs, patterns written through
# O_DIRECT and the page cache and read back, fio randwrite + crc32c verify
# on every queue of vdb) runs with both disks --disk PATH,snapshot=on; the
# host images must be byte-identical afterwards (sha256 before and after).
# With --pair two microvms run at once on the same two base images (one L1
# when nested, through snapshot-pair.sh): both must pass, both must have
# been running together, holding shared (read) OFD locks.
#
# Usage: snapshot-test.sh --microvm BIN --artifacts DIR [--transport pci|mmio]
#        [--cpus N] [--pair] [--mode MODE]
# MICROVM_SNAPSHOT_REFLINK=off is set, so the overlay is the cluster map
# (and --stats must show copy-ups) wherever this runs.
# Exit: 0 pass, 1 fail, 77 skipped (the mode cannot run here).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576
DATA_SIZE=$((32 * MIB))
PAT_A_OFF=$((MIB + 12288))
PAT_A_LEN=$MIB
PAT_B_OFF=$((3 * MIB + 1000))
PAT_B_LEN=$((MIB + 300))
FIO_OFF=$((8 * MIB))
FIO_SIZE=$((4 * MIB))
ROOT_SIZE=$((128 * MIB))
SERIAL=e2e-snap-1

microvm=
art=
transport=pci
cpus=2
pair=0
mode_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--transport) transport=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--pair) pair=1; shift ;;
	--mode) mode_args=(--mode "$2"); shift 2 ;;
	*) echo "snapshot-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "snapshot-test: --microvm and --artifacts are required" >&2; exit 1; }
case "$transport" in
pci) queues=$cpus ;;
mmio) queues=1 ;;
*) echo "snapshot-test: --transport pci|mmio, not '$transport'" >&2; exit 1 ;;
esac
jobs=$queues
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
for tool in mkfs.ext4 fio sha256sum; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "snapshot-test: needs $tool (apt-get install e2fsprogs fio)" >&2
		exit 1
	}
done

work=$(mktemp -d "${TMPDIR:-/tmp}/snapshot-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fails=0
fail()
{
	echo "snapshot-test: FAIL: $*"
	fails=$((fails + 1))
}

pass()
{
	echo "snapshot-test: ok: $*"
}

token=e2e-token-$$-$RANDOM
head -c $PAT_A_LEN /dev/urandom >pattern-a
head -c $PAT_B_LEN /dev/urandom >pattern-b
head -c $DATA_SIZE /dev/urandom >data.raw
head -c $MIB /dev/urandom >ro-content
# The root file system disk-test.sh builds.
e2e_disk_root "$art" "$token" ro-content $ROOT_SIZE root.raw ||
	{ echo "snapshot-test: building root.raw failed"; exit 1; }
sha256sum root.raw data.raw >images.sha256
cat images.sha256

bus=
[ "$transport" = mmio ] && bus=,transport=mmio
root_q=$cpus
[ "$transport" = mmio ] && root_q=1
disks="vda:$((ROOT_SIZE / 512)):rw:$SERIAL:$root_q"
disks+=",vdb:$((DATA_SIZE / 512)):rw:-:$queues"
cmdline="console=ttyS0 quiet panic=-1 root=/dev/vda microvm.test=disk"
cmdline+=" microvm.cpus=$cpus microvm.token=$token microvm.transport=$transport"
cmdline+=" microvm.disks=$disks microvm.pattern=vdb:$PAT_A_OFF:$PAT_B_OFF"
cmdline+=" microvm.fio=vdb:$jobs:$FIO_OFF:$FIO_SIZE microvm.end=poweroff"
vm_args=(--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz"
	 --cmdline "$cmdline" --cpus "$cpus" --memory 384M --stats
	 --timeout 400
	 --disk "$work/root.raw,serial=$SERIAL,snapshot=on$bus"
	 --disk "$work/data.raw,snapshot=on$bus")
wrap=()
[ $pair -eq 1 ] && wrap=(/bin/sh "$E2E_DIR/snapshot-pair.sh")

run_guest()
{
	echo "snapshot-test: ${wrap[*]} $microvm ${vm_args[*]}"
	start=$SECONDS
	# run-guest.sh carries every --disk file into L1 and back: a byte
	# written to an image in L1 would show here.
	MICROVM_SNAPSHOT_REFLINK=off MICROVM_E2E_VERBOSE=1 \
		"$E2E_DIR/run-guest.sh" "${mode_args[@]}" --artifacts "$art" \
		-- "${wrap[@]}" "$microvm" "${vm_args[@]}" 2>stderr | tee console
	status=${PIPESTATUS[0]}
	echo "snapshot-test: exit status $status after $((SECONDS - start)) s; stderr:"
	cat stderr
}

e2e_boot snapshot-test stderr
[ "$status" -ne 77 ] || exit 77
tr -d '\r' <console >console.txt

want=1
[ $pair -eq 1 ] && want=2
[ "$status" -eq 0 ] && pass "exit status 0" ||
	fail "exit status $status, expected 0"
n=$(grep -cE '^(SNAP-[ab]: )?E2E-RESULT: PASS$' console.txt)
[ "$n" -eq $want ] && pass "$n guest(s) reported E2E-RESULT: PASS" ||
	fail "$n guest(s) reported E2E-RESULT: PASS, expected $want"
grep -E '^(SNAP-[ab]: )?E2E-RESULT: FAIL' console.txt &&
	fail "a guest reported a failure"
grep -E '^(SNAP-[ab]: )?E2E-FIO: ' console.txt | head -n 8

# The overlay was used: clusters copied up on both disks, per microvm.
for d in vda vdb; do
	c=$(sed -n "s/^\(SNAP-[ab]-err: \)\{0,1\}microvm: stats $d disk: .* copy-ups \([0-9]*\)\$/\2/p" stderr |
	    tr '\n' ' ')
	echo "snapshot-test: $d copy-ups per microvm: $c"
	[ "$(echo $c | wc -w)" -eq $want ] &&
		! echo " $c " | grep -q ' 0 ' &&
		pass "$d: clusters copied to the overlay ($c)" ||
		fail "$d: copy-ups '$c', expected $want non-zero counts"
done

if [ $pair -eq 1 ]; then
	line=$(grep '^SNAPSHOT-PAIR: ' console.txt)
	echo "snapshot-test: $line"
	set -- $line
	# Two microvms x two images, each a shared (READ) OFD lock.
	[ "${3:-0}" = 1 ] && [ "${5:-0}" -ge 4 ] &&
		pass "two microvms ran at once on one base, $5 read locks held" ||
		fail "pair: '$line', expected both-running 1 and >= 4 read locks"
fi

# The images are exactly what they were.
if sha256sum -c --quiet images.sha256; then
	pass "root.raw and data.raw byte-identical afterwards (sha256)"
else
	fail "a base image changed"
fi

[ $fails -eq 0 ] || { echo "snapshot-test: $fails failure(s)"; exit 1; }
echo "snapshot-test: PASS"
