#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# firmware/rootfs/build.sh without a guest: builds images as a normal
# user would and reads them back with debugfs (no root, no mounts): the
# init, busybox and its applet links, the exit helper, --add'ed files and
# trees with their modes, --size, a clean e2fsck; then each bad input
# must fail with one message naming the value and leave no image.
# Usage: rootfs-build-test.sh BUILD.SH   Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail

build=$1
rootfs_dir=$(cd "$(dirname "$build")" && pwd)
MIB=1048576

skip()
{
	echo "rootfs-build-test: SKIP: $*"
	exit 77
}

for tool in mkfs.ext4 debugfs e2fsck dumpe2fs readelf; do
	command -v "$tool" >/dev/null 2>&1 || skip "no $tool"
done
[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q interpreter ||
	skip "no static /bin/busybox (busybox-static)"
[ -f "$(${CC:-cc} -print-file-name=libc.a)" ] || skip "no static libc"

work=$(mktemp -d "${TMPDIR:-/tmp}/rootfs-build-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fails=0
fail()
{
	echo "rootfs-build-test: FAIL: $*"
	fails=$((fails + 1))
}

ok()
{
	echo "rootfs-build-test: ok: $*"
}

# in_image IMG PATH OUT: dump PATH from the image to file OUT.
in_image()
{
	rm -f "$3"
	debugfs -R "dump -p $2 $3" "$1" >/dev/null 2>&1 && [ -f "$3" ]
}

# stat_image IMG PATH: debugfs's stat of PATH.
# stat_image IMG PATH: debugfs's stat of PATH, for "| grep -q": its
# status is always 0 (pipefail must not fail a check because grep -q
# stopped reading at its match; a failed debugfs prints nothing, so the
# grep fails).
stat_image()
{
	debugfs -R "stat $2" "$1" 2>/dev/null || true
}

# Things to add: an executable, a tree with a nested file and an empty
# directory, a file put into a directory by a DEST ending in /.
printf '#!/bin/sh\necho run\nexit 3\n' >run.sh
chmod 750 run.sh
mkdir -p tree/sub/deeper tree/empty
echo one >tree/a.txt
head -c 300000 /dev/urandom >tree/sub/deeper/blob
chmod 600 tree/a.txt
echo note >note.txt

if "$build" --size 16M --add run.sh:/etc/microvm/run --add tree:/opt/t \
	--add note.txt:/usr/share/ --add note.txt img.raw >build.log 2>&1; then
	ok "build with --size and --add"
else
	cat build.log
	fail "build.sh failed"
fi
[ "$(stat -c %s img.raw 2>/dev/null)" = $((16 * MIB)) ] &&
	ok "--size 16M gives 16 MiB" ||
	fail "img.raw is $(stat -c %s img.raw 2>/dev/null) bytes, not 16 MiB"
e2fsck -fn img.raw >fsck.log 2>&1 && ok "e2fsck -fn clean" ||
	{ cat fsck.log; fail "e2fsck -fn img.raw"; }
dumpe2fs -h img.raw 2>/dev/null >dumpe2fs.log
grep -q '^Filesystem features:.*has_journal.*extent' dumpe2fs.log &&
	grep -q '^Block size: *4096$' dumpe2fs.log &&
	ok "ext4 (journal, extents), 4 KiB blocks" ||
	{ cat dumpe2fs.log; fail "not ext4 with 4 KiB blocks"; }

in_image img.raw /sbin/init got-init && cmp -s got-init "$rootfs_dir/init.sh" &&
	ok "/sbin/init is init.sh" || fail "/sbin/init differs from init.sh"
stat_image img.raw /sbin/init | grep -q 'Mode:  0755' ||
	fail "/sbin/init is not mode 0755"
stat_image img.raw /init | grep -q 'Fast link dest: "sbin/init"' &&
	ok "/init -> sbin/init" || fail "/init is not a link to sbin/init"
in_image img.raw /bin/busybox got-bb && cmp -s got-bb /bin/busybox &&
	ok "/bin/busybox" || fail "/bin/busybox differs"
for applet in /bin/sh /bin/mount /sbin/poweroff /bin/cttyhack /sbin/devmem; do
	stat_image img.raw "$applet" |
		grep -q 'Fast link dest: "/bin/busybox"' ||
		fail "$applet is not a link to /bin/busybox"
done
n=$(debugfs -R "ls -l /bin" img.raw 2>/dev/null | grep -c ' 120777 ')
want=$(/bin/busybox --list-full | grep -c '^bin/')
[ "$n" -ge $((want - 1)) ] && ok "$n applet links in /bin" ||
	fail "$n applet links in /bin, busybox has $want"
in_image img.raw /sbin/microvm-exit got-exit &&
	[ "$(head -c 4 got-exit)" = $'\x7fELF' ] &&
	! readelf -l got-exit | grep -q interpreter &&
	ok "/sbin/microvm-exit is a static ELF" ||
	fail "/sbin/microvm-exit missing or not static"
stat_image img.raw /dev/console | grep -q 'Type: character special' &&
	stat_image img.raw /dev/console | grep -q 'Device major/minor number: 05:01' &&
	ok "/dev/console c 5 1" || fail "no /dev/console c 5 1"
stat_image img.raw /tmp | grep -q 'Mode:  01777' || fail "/tmp is not 1777"

in_image img.raw /etc/microvm/run got-run && cmp -s got-run run.sh &&
	stat_image img.raw /etc/microvm/run | grep -q 'Mode:  0750' &&
	ok "--add run.sh:/etc/microvm/run (content, mode 0750)" ||
	fail "/etc/microvm/run wrong"
in_image img.raw /opt/t/a.txt got-a && cmp -s got-a tree/a.txt &&
	stat_image img.raw /opt/t/a.txt | grep -q 'Mode:  0600' &&
	in_image img.raw /opt/t/sub/deeper/blob got-blob &&
	cmp -s got-blob tree/sub/deeper/blob &&
	stat_image img.raw /opt/t/empty | grep -q 'Type: directory' &&
	ok "--add tree:/opt/t (files, modes, empty directory)" ||
	fail "the tree under /opt/t is wrong"
in_image img.raw /usr/share/note.txt got-n1 && cmp -s got-n1 note.txt &&
	in_image img.raw /note.txt got-n2 && cmp -s got-n2 note.txt &&
	ok "--add note.txt:/usr/share/ and --add note.txt" ||
	fail "note.txt not at /usr/share/note.txt and /note.txt"

# The helper the first build compiled serves the others (saves a static
# link each).
chmod 755 got-exit
helper=(--exit-helper "$work/got-exit")

# Default size: the contents plus 32 MiB, at least 64 MiB.
"$build" "${helper[@]}" --add tree/sub/deeper/blob:/blob def.raw >build.log 2>&1 ||
	{ cat build.log; fail "build.sh without --size"; }
[ "$(stat -c %s def.raw 2>/dev/null)" = $((64 * MIB)) ] &&
	ok "default size 64 MiB" ||
	fail "default size $(stat -c %s def.raw 2>/dev/null), not 64 MiB"
head -c $((40 * MIB)) /dev/zero >big
"$build" "${helper[@]}" --add big:/big big.raw >build.log 2>&1 ||
	{ cat build.log; fail "build.sh with a 40 MiB file"; }
sz=$(stat -c %s big.raw 2>/dev/null || echo 0)
[ "$sz" -gt $((72 * MIB)) ] && [ "$sz" -le $((80 * MIB)) ] &&
	ok "default size grows with the contents ($((sz / MIB)) MiB)" ||
	fail "default size with 40 MiB of contents is $sz"
rm -f big.raw def.raw

# Bad input: exit 1, one line on stderr naming the value, no image.
bad()
{
	local want=$1 out=bad.raw rc
	shift
	rm -f "$out" ./*.tmp.*
	"$build" "${helper[@]}" "$@" "$out" >bad.out 2>bad.err
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "'$*': exit $rc, not 1"
	elif [ "$(wc -l <bad.err)" -ne 1 ] || ! grep -qF -- "$want" bad.err; then
		fail "'$*': stderr '$(cat bad.err)' does not name '$want' in one line"
	elif [ -e "$out" ] || ls ./*.tmp.* >/dev/null 2>&1; then
		fail "'$*': left an image behind"
	else
		ok "bad input '$*': $(cat bad.err)"
	fi
}
bad "--size 'abc'" --size abc
bad "--size '4M'" --size 4M
bad "--size '10001K'" --size 10001K
bad "--size '99999999999G'" --size 99999999999G
bad "no such file or directory 'nothere'" --add nothere
bad "destination 'etc/x' is not an absolute path" --add note.txt:etc/x
bad "'/a/../b' has . or .." --add note.txt:/a/../b
bad "a file cannot replace the image's /" --add note.txt:/
bad "--busybox '/nonexistent/busybox'" --busybox /nonexistent/busybox
dyn=$(command -v ls)
bad "--busybox '$dyn' is dynamically linked" --busybox "$dyn"
bad "--exit-helper 'nothere'" --exit-helper nothere
bad "unknown option '--frob'" --frob
head -c $((10 * MIB)) /dev/urandom >ten
bad "--size 8M: the contents take" --size 8M --add ten:/ten
bad "unexpected argument 'bad.raw'" second.raw
"$build" --size 16M nodir/x.raw >/dev/null 2>bad.err
[ $? -eq 1 ] && grep -qF "no directory 'nodir'" bad.err &&
	ok "missing output directory named" ||
	fail "missing output directory: '$(cat bad.err)'"
"$build" >/dev/null 2>bad.err
[ $? -eq 2 ] && grep -q '^Usage:' bad.err && ok "no OUT: usage, exit 2" ||
	fail "no OUT: '$(cat bad.err)'"

[ $fails -eq 0 ] && { echo "rootfs-build-test: PASS"; exit 0; }
echo "rootfs-build-test: $fails failure(s)"
exit 1
