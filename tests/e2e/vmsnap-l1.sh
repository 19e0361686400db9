#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside L1 (busybox sh; run-guest.sh --nested) or on a host with KVM:
# snapshots of a running guest. microvm --api-sock boots the API guest
# (its tick counter and fio write+verify rounds on the data drive),
# which is paused mid-run and written out with PUT /snapshot/create;
# the original is ended. Then the snapshot is restored twice, one after
# the other, each time onto copies of the disks as they were at the
# snapshot: with `microvm --restore DIR` and with PUT /snapshot/load
# into a fresh microvm. Each restore must go on counting from the saved
# tick (no restart: no boot messages again), finish a new fio verify
# round with no bad block, and end cleanly on SendCtrlAltDel. Then two
# clones at once, each with its disks behind a throwaway overlay
# (--restore-drive ID,snapshot=on): both go on and verify, the base
# images stay as they were, and the guest RAM they both read is shared
# (page cache of the memory file, not copied per clone). Last the
# refusals: a corrupt, truncated or other-version state file, another
# CPU's features, a device state that does not fit the device, a memory
# file too short or missing, a missing disk, a load after configuration,
# a create while running; each a one-line message and no guest run.
# Then Diff snapshots, on a guest with track_dirty_pages: a Full S1, the
# guest runs on (fio writes through the device), then a Diff D2 and a
# Full F2 at one pause: S1's memory with D2 written over it
# (--base-file, --diff-file) must be F2's byte for byte (every page the
# guest or a device wrote was tracked), and it restores with D2's state.
# Prints SNAP-OK / SNAP-FAIL lines; exit 0 when none failed.
#
# Usage: vmsnap-l1.sh MICROVM CURL KERNEL INITRD ROOT_IMG DATA_IMG SNAPEDIT
microvm=$1 curl=$2 kernel=$3 initrd=$4 root=$5 data=$6 snapedit=$7
base=${TMPDIR:-/tmp}/vmsnap-l1.$$
snap=$base/snap
mkdir -p "$snap" || exit 1
API_TAG=SNAP
work=$base/orig
sock=$work/fc.sock
mkdir -p "$work"
# shellcheck source=api-lib-l1.sh
. "$(dirname "$0")/api-lib-l1.sh"

# ---- the original: boot, fio running, pause, snapshot, end ----
api_start e2e-snap
refuse PUT /snapshot/load '{"snapshot_path": "'"$snap/state"'", "mem_backend": {"backend_type": "File", "backend_path": "'"$snap/memory"'"}, "bogus": 1}'
expect 204 PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "initrd_path": "'"$initrd"'", "boot_args": "console=ttyS0 reboot=k panic=1 microvm.test=api microvm.fio=/dev/vdb quiet"}'
# One vCPU here: two clones of it run at once in a one-vCPU L1 (the
# Diff guest below has two).
expect 204 PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}'
expect 204 PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "'"$root"'", "is_root_device": true, "is_read_only": false}'
# The data drive on virtio-pci with MSI-X, the root on virtio-mmio: both
# transports in one snapshot.
expect 204 PUT /drives/data '{"drive_id": "data", "path_on_host": "'"$data"'", "is_root_device": false, "is_read_only": false, "transport": "pci"}'
# Configured: a load is refused from now on (Firecracker's rule).
refuse PUT /snapshot/load '{"snapshot_path": "'"$snap/state"'", "mem_backend": {"backend_type": "File", "backend_path": "'"$snap/memory"'"}}'
expect 204 PUT /actions '{"action_type": "InstanceStart"}'
if wait_for 'E2E-FIO-ROUND 1 ' 1800; then
	ok "guest ticking, a fio round done"
else
	bad "no fio round on vdb"
fi
refuse PUT /snapshot/create '{"snapshot_path": "'"$snap/state"'", "mem_file_path": "'"$snap/memory"'"}'
api_pause "snapshot"
t0=$(date +%s)
expect 204 PUT /snapshot/create '{"snapshot_type": "Full", "snapshot_path": "'"$snap/state"'", "mem_file_path": "'"$snap/memory"'"}'
echo "SNAP-TIME: create $(($(date +%s) - t0)) s"
refuse PUT /snapshot/create '{"snapshot_type": "Diff", "snapshot_path": "'"$snap/state2"'", "mem_file_path": "'"$snap/memory2"'"}'
api_held "after the snapshot"
tick0=$(last_tick)
snap_console=$work/console
rounds0=$(sed -n 's/^E2E-FIO-ROUND \([0-9]*\) .*/\1/p' "$work/console" | tail -n 1)
ls -ls "$snap" | sed 's/^/SNAP-FILES: /'
du -k "$snap/memory" | sed 's/^/SNAP-MEM-KIB: /'
# The disks as the snapshot has them (no device writes while paused).
cp "$root" "$snap/root.img" && cp "$data" "$snap/data.img" ||
	bad "cannot copy the disks"
kill "$pid"
wait "$pid"
ok "original ended (status $?) at tick $tick0, fio round $rounds0"
rm -f "$sock"

# tick_evidence: the consoles' lines around a tick that did not go on
# (the snapshot's guest's last ones, the restored guest's first ones),
# control characters shown.
tick_evidence()
{
	echo "SNAP-CONSOLE snapshot's guest ($snap_console): $(grep -c '^E2E-TICK' "$snap_console") tick lines, $(grep -c 'E2E-TICK' "$snap_console") with a tick anywhere; last lines:"
	tail -n 12 "$snap_console" | cat -v | sed 's/^/SNAP-CONSOLE < /'
	head -n 12 "$work/console" | cat -v | sed 's/^/SNAP-CONSOLE > /'
}

# restored_checks WHAT: the restored guest goes on from tick0 (its first
# tick right after it, no boot again), finishes a new fio round, and
# ends on SendCtrlAltDel with no failed verify.
restored_checks()
{
	if wait_for 'E2E-TICK' 600; then
		first=$(sed -n 's/^E2E-TICK \([0-9]*\).*/\1/p' "$work/console" |
			head -n 1)
		if [ "$first" -gt "$tick0" ] && [ "$first" -le $((tick0 + 3)) ]; then
			ok "$1: counting on from tick $tick0 ($first)"
		else
			bad "$1: first tick $first after the snapshot's $tick0"
			tick_evidence
		fi
	else
		bad "$1: no tick after restore"
	fi
	grep -q 'Linux version' "$work/console" &&
		bad "$1: the guest booted again"
	next=$((rounds0 + 1))
	if wait_for "E2E-FIO-ROUND $next bad 0 " 1800; then
		ok "$1: fio round $next verified after restore"
	else
		bad "$1: no verified fio round $next after restore"
	fi
	api_end_cad
	grep -q 'E2E-FIO-ROUNDS: [0-9]* failed 0 ' "$work/console.txt" &&
		ok "$1: no fio round failed" ||
		bad "$1: $(grep 'E2E-FIO-ROUNDS' "$work/console.txt")"
}

reset_disks()
{
	cp "$snap/root.img" "$root" && cp "$snap/data.img" "$data" ||
		bad "cannot reset the disks"
}

# ---- restore 1: the command line ----
work=$base/r1
sock=$work/fc.sock
mkdir -p "$work"
reset_disks
t0=$(date +%s)
"$microvm" --restore "$snap" --api-sock "$sock" >"$work/console" \
	2>"$work/stderr" </dev/null &
pid=$!
restored_checks "--restore"
echo "SNAP-TIME: --restore run $(($(date +%s) - t0)) s"
cat "$work/stderr"

# ---- restore 2: PUT /snapshot/load into a fresh microvm ----
work=$base/r2
sock=$work/fc.sock
mkdir -p "$work"
reset_disks
api_start e2e-load
expect 204 PUT /snapshot/load '{"snapshot_path": "'"$snap/state"'", "mem_backend": {"backend_type": "File", "backend_path": "'"$snap/memory"'"}, "resume_vm": true}'
call GET /
case "$body" in
*'"state":"Running"'*) ok "GET / after load: Running" ;;
*) bad "GET / after load: $body" ;;
esac
refuse PUT /snapshot/load '{"snapshot_path": "'"$snap/state"'", "mem_backend": {"backend_type": "File", "backend_path": "'"$snap/memory"'"}}'
restored_checks "PUT /snapshot/load"

# ---- two clones at once, each disk behind its own overlay ----
reset_disks
base_sums=$(md5sum "$root" "$data" | cut -d' ' -f1)
for c in a b; do
	mkdir -p "$base/clone-$c"
	"$microvm" --restore "$snap" --api-sock "$base/clone-$c/fc.sock" \
		--restore-drive rootfs,snapshot=on \
		--restore-drive data,snapshot=on \
		>"$base/clone-$c/console" 2>"$base/clone-$c/stderr" </dev/null &
	eval "pid_$c=\$!"
done
# smaps KEY PID: KEY's kB in PID's /proc smaps_rollup.
smaps() { sed -n "s/^$1: *\([0-9]*\) kB/\1/p" "/proc/$2/smaps_rollup"; }
for c in a b; do
	work=$base/clone-$c
	sock=$work/fc.sock
	eval "pid=\$pid_$c"
	if wait_for "E2E-FIO-ROUND $((rounds0 + 1)) bad 0 " 1800; then
		ok "clone $c: counting on and fio round $((rounds0 + 1)) verified"
	else
		bad "clone $c: no verified fio round after restore"
	fi
done
for c in a b; do
	eval "pid=\$pid_$c"
	rss=$(smaps Rss "$pid") pss=$(smaps Pss "$pid")
	priv=$(($(smaps Private_Clean "$pid") + $(smaps Private_Dirty "$pid")))
	# Shared: pages the other clone maps too (the memory file's page
	# cache; on L1's RAM file system those count as dirty).
	shared=$((rss - priv))
	echo "SNAP-CLONE-MEM: clone $c Rss $rss kB Pss $pss kB shared $shared kB private $priv kB"
	# Pages both clones map count half in each one's Pss.
	[ "$shared" -ge 16384 ] && [ "$pss" -lt $((rss - shared / 4)) ] &&
		ok "clone $c shares $shared kB of its $rss kB with the other" ||
		bad "clone $c: Rss $rss Pss $pss shared $shared kB"
done
for c in a b; do
	work=$base/clone-$c
	sock=$work/fc.sock
	eval "pid=\$pid_$c"
	f0=$fails
	api_end_cad
	if [ "$fails" -ne "$f0" ]; then
		echo "SNAP-CONSOLE clone $c (last 30 lines without ticks):"
		grep -v '^E2E-TICK' "$work/console.txt" | tail -n 30
		tail -n 10 "$work/stderr"
	fi
done
[ "$(md5sum "$root" "$data" | cut -d' ' -f1)" = "$base_sums" ] &&
	ok "the clones' writes stayed in their overlays" ||
	bad "a clone wrote to the base images"

# ---- refusals: one line each, exit status 1, no guest ----
work=$base/bad
mkdir -p "$work/d"
# refused WHAT PATTERN: microvm --restore $work/d $refused_args exits 1
# with PATTERN.
refused_args=
refused()
{
	# shellcheck disable=SC2086
	timeout 120 "$microvm" --restore "$work/d" $refused_args \
		>"$work/out" 2>"$work/err" </dev/null
	st=$?
	if [ "$st" = 1 ] && grep -q "$2" "$work/err" &&
	   [ "$(wc -l <"$work/err")" -le 2 ]; then
		ok "$1 refused: $(head -n 1 "$work/err")"
	else
		bad "$1: status $st: $(cat "$work/err")"
	fi
}
size=$(wc -c <"$snap/state")
cp "$snap/memory" "$work/d/memory"
# A byte of the body flipped: the checksum finds it.
cp "$snap/state" "$work/d/state"
printf '\377' | dd of="$work/d/state" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
refused "a corrupt state file" "checksum mismatch"
cp "$snap/state" "$work/d/state"
"$snapedit" "$work/d/state" cpuid && refused "another CPU's features" "taken on another CPU: CPUID leaf 0x1.0 ecx"
cp "$snap/state" "$work/d/state"
# vdb's blk_size (virtio 1.2 §5.2.4): after the core's 35 bytes, 35 per
# queue (one per vCPU: 1) and the configuration's length, 20 bytes in.
"$snapedit" "$work/d/state" device vdb $((35 + 35 * 1 + 4 + 20)) &&
	refused "a device state that does not fit" "vdb: .*other limits"
head -c $((size - 100)) "$snap/state" >"$work/d/state"
refused "a truncated state file" "truncated"
cp "$snap/state" "$work/d/state"
printf '\011' | dd of="$work/d/state" bs=1 seek=16 conv=notrunc 2>/dev/null
refused "another format version" "format version 9"
printf 'not a snapshot at all, but long enough for a header.....' >"$work/d/state"
refused "not a snapshot" "not a microvm snapshot"
cp "$snap/state" "$work/d/state"
head -c 1048576 "$snap/memory" >"$work/d/memory"
refused "a memory file too short" "memory file .* holds 1048576 bytes"
cp "$snap/memory" "$work/d/memory"
mv "$data" "$data.away"
refused "a missing disk" "$data"
mv "$data.away" "$data"
# Another size for a drive (--restore-drive ID=PATH): the guest's file
# systems were sized for the other.
dd if=/dev/zero of="$work/small.img" bs=1M count=8 2>/dev/null
refused_args="--restore-drive data=$work/small.img"
refused "a drive of another size" "vdb: the snapshot's disk has 65536 sectors, this image 16384"
refused_args=
rm -f "$work/d/memory"
refused "no memory file" "memory file .*No such file"
rm -rf "$work"

# ---- Diff snapshots: S1 Full, the guest runs on, D2 Diff and F2 Full
# at one pause; S1's memory with D2 written over it (--base-file,
# --diff-file) is F2's memory byte for byte, and restores ----
work=$base/diff
sock=$work/fc.sock
mkdir -p "$work" "$base/s1" "$base/d2" "$base/f2"
reset_disks
rm -rf "$snap"
api_start e2e-diff
expect 204 PUT /boot-source '{"kernel_image_path": "'"$kernel"'", "initrd_path": "'"$initrd"'", "boot_args": "console=ttyS0 reboot=k panic=1 microvm.test=api microvm.fio=/dev/vdb quiet"}'
expect 204 PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 256, "track_dirty_pages": true}'
expect 204 PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "'"$root"'", "is_root_device": true, "is_read_only": false}'
expect 204 PUT /drives/data '{"drive_id": "data", "path_on_host": "'"$data"'", "is_root_device": false, "is_read_only": false}'
expect 204 PUT /actions '{"action_type": "InstanceStart"}'
wait_for 'E2E-FIO-ROUND 1 ' 1800 || bad "diff: no fio round"
api_pause "diff S1"
refuse PUT /snapshot/create '{"snapshot_type": "Diff", "snapshot_path": "'"$base/d2/state"'", "mem_file_path": "'"$base/d2/memory"'"}'
expect 204 PUT /snapshot/create '{"snapshot_type": "Full", "snapshot_path": "'"$base/s1/state"'", "mem_file_path": "'"$base/s1/memory"'"}'
r1=$(sed -n 's/^E2E-FIO-ROUND \([0-9]*\) .*/\1/p' "$work/console" | tail -n 1)
api_resume "diff S1"
wait_for "E2E-FIO-ROUND $((r1 + 1)) " 1800 || bad "diff: no fio round after S1"
api_pause "diff D2"
expect 204 PUT /snapshot/create '{"snapshot_type": "Diff", "snapshot_path": "'"$base/d2/state"'", "mem_file_path": "'"$base/d2/memory"'"}'
expect 204 PUT /snapshot/create '{"snapshot_type": "Full", "snapshot_path": "'"$base/f2/state"'", "mem_file_path": "'"$base/f2/memory"'"}'
tick0=$(last_tick)
snap_console=$work/console
rounds0=$(sed -n 's/^E2E-FIO-ROUND \([0-9]*\) .*/\1/p' "$work/console" | tail -n 1)
cp "$root" "$snap.root.img" && cp "$data" "$snap.data.img"
kill "$pid"
wait "$pid"
rm -f "$sock"
echo "SNAP-DIFF-KIB: full S1 $(du -k "$base/s1/memory" | cut -f1) diff D2 $(du -k "$base/d2/memory" | cut -f1) full F2 $(du -k "$base/f2/memory" | cut -f1)"
cp "$base/s1/memory" "$base/d2/merged"
if "$microvm" --base-file "$base/d2/merged" --diff-file "$base/d2/memory"; then
	ok "--base-file/--diff-file wrote D2 over S1"
else
	bad "rebase failed"
fi
m_sum=$(md5sum <"$base/d2/merged") f_sum=$(md5sum <"$base/f2/memory")
[ "$m_sum" = "$f_sum" ] &&
	ok "S1 + D2 is F2's memory byte for byte" ||
	bad "S1 + D2 differs from F2 ($m_sum, $f_sum)"
[ "$(du -k "$base/d2/memory" | cut -f1)" -lt "$(du -k "$base/f2/memory" | cut -f1)" ] &&
	ok "the Diff holds less than a Full" ||
	bad "the Diff is not smaller than a Full"
rm -f "$base/d2/memory" "$base/s1/memory" "$base/f2/memory"
mv "$base/d2/merged" "$base/d2/memory"
cp "$snap.root.img" "$root" && cp "$snap.data.img" "$data"
rm -f "$snap.root.img" "$snap.data.img"
work=$base/diff-restore
sock=$work/fc.sock
mkdir -p "$work"
"$microvm" --restore "$base/d2" --api-sock "$sock" >"$work/console" \
	2>"$work/stderr" </dev/null &
pid=$!
restored_checks "restore of S1 + D2"

echo "SNAP-SUMMARY: $fails failure(s)"
[ "$fails" -eq 0 ]
