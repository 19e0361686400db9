#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# microvm under microvm-jailer in a real guest. One nested boot: in L1
# (e2e-l1.sh) the jailer starts microvm as Firecracker's jailer starts
# Firecracker (images hard-linked into the jail's root, uid/gid 1000,
# cgroup v2, the VMM's arguments after "--"); the guest
# (guest/jail-init.sh) reads what L1 wrote on its disk and writes a token
# back. Checks: microvm (through the jailer) exits 0; it ran as
# 1000:1000 with no groups and no capabilities, as pid 1 of a new PID
# namespace, in new mount, IPC and UTS namespaces, its "/" holding only
# the jail's entries and one mount, its binary the jail's copy, in
# <cgroup2>/microvm-e2e/<id>; every fd above 2 is an anonymous inode, a
# pipe, a socket, a file of the jail (by inode) or a copy of the stdio
# the caller gave; the
# guest read L1's marker and its token is in the image afterwards.
# Then Kata's jailed start, call for call as its fc.go makes it (uid 0,
# --daemonize, its config file, GET / on the default socket, the pid
# file, an image bound over a placeholder drive and PATCHed in, SIGTERM):
# the jailer exits 0 at once, the pid file names microvm, pid 1 in its
# own session, stdout /dev/null, and the guest reads the hot-plugged
# image and writes its token into it.
#
# Usage: e2e-test.sh --jailer BIN --microvm BIN --artifacts DIR
# Exit: 0 pass, 1 fail, 77 skipped (no nested harness; or a microvm or
# jailer that is not static: the jail holds no shared libraries).
set -uo pipefail

JAIL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_DIR=$JAIL_DIR/../e2e
# shellcheck source=../e2e/lib.sh
. "$E2E_DIR/lib.sh"

jailer=
microvm=
art=
curl=$(command -v curl) ||
	{ echo "jail-e2e: SKIP: no curl (apt-get install curl)"; exit 77; }
while [ $# -gt 0 ]; do
	case "$1" in
	--jailer) jailer=$2; shift 2 ;;
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	*) echo "jail-e2e: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$jailer" ] && [ -n "$microvm" ] && [ -n "$art" ] || {
	echo "jail-e2e: --jailer, --microvm and --artifacts are required" >&2
	exit 1
}
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") && jailer=$(realpath "$jailer") || exit 1
for b in "$microvm" "$jailer"; do
	if ldd "$b" >/dev/null 2>&1; then
		echo "jail-e2e: SKIP: $b is dynamically linked (MICROVM_STATIC=OFF);" \
			"the jail holds no shared libraries"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/jail-e2e.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/extra"
cp "$JAIL_DIR/guest/jail-init.sh" "$work/extra/init" &&
	chmod 755 "$work/extra/init" &&
	cp "$art/l2-initrd.cpio.gz" "$work/initrd.cpio.gz" &&
	(cd "$work/extra" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip >>"$work/initrd.cpio.gz" ||
	{ echo "jail-e2e: building the guest initramfs failed"; exit 1; }

run_guest()
{
	local start=$SECONDS
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --mode nested \
		--artifacts "$art" --timeout 600 --file "$curl" -- \
		/bin/sh "$JAIL_DIR/e2e-l1.sh" --jailer "$jailer" \
		--microvm "$microvm" --curl "$curl" --kernel "$art/vmlinuz" \
		--initrd "$work/initrd.cpio.gz" \
		2> >(tee "$work/stderr" >&2) | tee "$work/out"
	status=${PIPESTATUS[0]}
	wait
	echo "jail-e2e: exit status $status after $((SECONDS - start)) s"
}
e2e_boot jail-e2e "$work/stderr"
[ "$status" -ne 77 ] || exit 77

fails=0
fail()
{
	echo "jail-e2e: FAIL: $*"
	fails=$((fails + 1))
}
# want LINE: L1 printed "JAIL: LINE" exactly.
want()
{
	out | grep -qxF "JAIL: $1" ||
		fail "no 'JAIL: $1' ($(out | grep -m 1 "^JAIL: ${1%% *}" ||
			echo none))"
}
# out: L1's output without CRs. Its status is always 0: "out | grep -q"
# must not fail (pipefail) because grep -q stopped reading at its match
# and tr died of SIGPIPE writing the rest.
out()
{
	tr -d '\r' <"$work/out" || true
}
[ "$status" -eq 0 ] || fail "L1's script exited $status"
out | grep -q '^JAIL: FAIL' && fail "$(out | grep -m 1 '^JAIL: FAIL')"
want "done"
want "status=0"
want "status Uid: 1000 1000 1000 1000"
want "status Gid: 1000 1000 1000 1000"
want "status CapEff: 0000000000000000"
out | grep -qxE 'JAIL: status Groups: ?' ||
	fail "groups: $(out | grep -m 1 '^JAIL: status Groups')"
out | grep -qxE 'JAIL: status NSpid: [0-9]+ 1' ||
	fail "not pid 1 of its own PID namespace: $(out | grep -m 1 NSpid)"
for ns in mnt pid ipc uts; do
	want "ns $ns new"
done
# Its "/" holds the jail's entries only, one mount, its own binary.
want "sees dev disk.raw initrd microvm microvm.pid run vmlinuz "
want "mounts 1 / "
want "exe the jail's copy"
want "cgroup 0::/microvm-e2e/e2e-jail-1"
# Every fd above 2 is anonymous, a file of the jail or a copy of 0-2.
leaks=$(out | sed -n 's/^JAIL: fd \([0-9]*\) \([a-z-]*\) \(.*\)$/\1 \2 \3/p' |
	while read -r fd where target; do
		[ "$fd" -gt 2 ] && [ "$where" = outside ] && echo "$fd=$target"
	done)
[ -z "$leaks" ] || fail "fds from outside the jail: $leaks"
out | grep -qE '^JAIL: fd 3 (in-jail|anon) ' || fail "no fd 3 of microvm listed"
marker=$(out | sed -n 's/^JAIL: marker //p')
out | grep -q "JAIL-GUEST: read JAIL-IN $marker\$" ||
	fail "the guest did not read L1's marker '$marker':" \
		"$(out | grep -m 1 'JAIL-GUEST: read' || echo none)"
token=$(out | sed -n 's/.*JAIL-GUEST: wrote \([0-9a-f]*\) readback.*/\1/p' |
	head -n 1)
[ -n "$token" ] && out | grep -q "JAIL-GUEST: wrote $token readback JAIL-OUT $token\$" ||
	fail "the guest's write did not read back: $(out | grep -m 1 'JAIL-GUEST: wrote' || echo none)"
want "disk-out JAIL-OUT $token"

# Kata's jailed start (--uid 0 --gid 0 --daemonize -- --config-file):
# the jailer is gone at once, GET / on the jail's default socket says
# Running, the pid file names microvm, pid 1 in its own session with
# stdout on /dev/null; the image bound over placeholder drive_0 reached
# the guest through PATCH /drives (it read L1's marker from it and wrote
# its token back), a PATCH to the same file after it grew re-read its
# size (Firecracker's rescan), the unplug PATCH and SIGTERM ended it.
want "daemon jailer-status=0$(out | sed -n 's/^JAIL: daemon jailer-status=0\( after .*\)$/\1/p')"
want "kata running yes"
out | grep -qxE 'JAIL: daemon pidfile [0-9]+' || fail "daemon: no pid file"
want "daemon status Uid: 0 0 0 0"
out | grep -qxE 'JAIL: daemon status NSpid: [0-9]+ 1' ||
	fail "daemon: not pid 1: $(out | grep -m 1 'daemon status NSpid')"
want "daemon own-session yes"
want "daemon stdout character special file 1:3"
out | grep -qxE 'JAIL: kata patch-in 204 ?' ||
	fail "hot-plug PATCH: $(out | grep -m 1 'kata patch-in' || echo none)"
out | grep -qxE 'JAIL: kata rescan 204 ?' ||
	fail "rescan PATCH (the drive's own file): $(out | grep -m 1 'kata rescan' || echo none)"
out | grep -qE '^JAIL: kata logline [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9} \[e2e-jail-2:[^]:]+\] drive drive_0: now /drive_0, ' ||
	fail "the log FIFO's line is not in Firecracker's format: $(out | grep -m 1 'kata logline' || echo none)"
want "kata log now /drive_0, 4194304 bytes"
want "kata log now /drive_0, 5242880 bytes"
want "kata log now /drive_0, 0 bytes"
out | grep -qxE 'JAIL: kata patch-out 204 ?' ||
	fail "unplug PATCH: $(out | grep -m 1 'kata patch-out' || echo none)"
want "daemon ended yes"
kmarker=$(out | sed -n 's/^JAIL: kata marker //p')
out | grep -qxE "JAIL: daemon disk-out JAIL-OUT [0-9a-f]{32} saw JAIL-IN $kmarker" ||
	fail "daemon: the guest did not read the hot-plugged image ('$kmarker') and write its token: $(out | grep -m 1 'daemon disk-out')"

if [ "$fails" -gt 0 ]; then
	echo "jail-e2e: $fails check(s) failed"
	exit 1
fi
echo "jail-e2e: PASS (uid 1000, pid 1, cgroup, disk token $token)"
