#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the nested harness's L1 (busybox, root) for e2e-test.sh:
# microvm started by microvm-jailer as Kata and firecracker-go-sdk start
# Firecracker's: the kernel, initramfs and disk hard-linked into
# <base>/microvm/<id>/root beforehand, uid/gid 1000, a cgroup v2 with
# pids.max, an rlimit, the VMM's own arguments after "--". While the
# guest runs, the jailed process is looked at from L1 (/proc/PID); after
# it, the disk image is read back. Then a second jail as Kata starts
# one: uid 0, --daemonize, the VM tracked by its pid file.
# L1's root is the initramfs (rootfs), which pivot_root cannot leave (a
# host's root is a real mount): so the jailer runs chrooted in a tmpfs
# that holds the jailer, /proc, /dev and the cgroup2 mount, as a host's
# root would.
# Usage: e2e-l1.sh --jailer BIN --microvm BIN --kernel K --initrd I
# Stdout: the guest's console and microvm's stderr (prefixed) and
#   JAIL: pidfile PID
#   JAIL: status Uid:... / Gid:... / NSpid:... / Groups:... / CapEff:...
#   JAIL: ns NAME new|shared       (mnt pid ipc uts net against L1's)
#   JAIL: sees ENTRIES...          (ls -A /proc/PID/root/)
#   JAIL: mounts N MOUNTPOINTS...  (/proc/PID/mountinfo)
#   JAIL: exe the jail's copy      (else: exe PATH)
#   JAIL: cgroup LINE              (/proc/PID/cgroup)
#   JAIL: fd N in-jail|stdio|anon|outside TARGET  (every fd of microvm)
#   JAIL: status=S                 (the jailer's exit status)
#   JAIL: disk-out LINE            (sector 2048 of the image afterwards)
#   then Kata's start, --uid 0 --gid 0 --daemonize, into its own jail:
#   JAIL: daemon jailer-status=S after T (started T0)
#   JAIL: daemon pidfile PID
#   JAIL: daemon status Uid:... / NSpid:...
#   JAIL: daemon own-session yes|no / stdout TYPE MAJOR:MINOR / ended yes|no
#   JAIL: daemon disk-out LINE
#   JAIL: done
# Exit: 0 when every step ran (the verdict is e2e-test.sh's); 1 when the
# setup failed ("JAIL: FAIL why").
ID=e2e-jail-1
ID2=e2e-jail-2
RUN_UID=1000
jailer=
microvm=
kernel=
initrd=
while [ $# -gt 0 ]; do
	case "$1" in
	--jailer) jailer=$2; shift 2 ;;
	--microvm) microvm=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	*) echo "JAIL: FAIL unknown option '$1'"; exit 1 ;;
	esac
done

fail()
{
	echo "JAIL: FAIL $*"
	exit 1
}

host=/jailhost
root=$host/srv/jailer/microvm/$ID/root
mkdir -p $host && mount -t tmpfs -o mode=755 jailhost $host ||
	fail "tmpfs at $host"
mkdir -p $host/proc $host/dev $host/sys/fs/cgroup $host/images "$root" &&
	mount -t proc proc $host/proc && mount -o bind /dev $host/dev &&
	mount -t cgroup2 cgroup2 $host/sys/fs/cgroup ||
	fail "proc, dev and cgroup2 below $host"
cp "$jailer" $host/microvm-jailer && cp "$microvm" $host/images/microvm &&
	cp "$kernel" $host/images/vmlinuz && cp "$initrd" $host/images/initrd ||
	fail "copying the binaries and the guest into $host"
dd if=/dev/zero of=$host/images/disk.raw bs=1M count=8 2>/dev/null &&
	printf 'JAIL-IN marker-%s\n' "$$" |
	dd of=$host/images/disk.raw conv=notrunc 2>/dev/null ||
	fail "the disk image"
echo "JAIL: marker marker-$$"
chown $RUN_UID:$RUN_UID $host/images/disk.raw &&
	chmod 600 $host/images/disk.raw &&
	chmod 644 $host/images/vmlinuz $host/images/initrd || fail "chown/chmod"
# As Firecracker's jailer documentation says: the images are hard links
# in the jail's root, made before the jailer runs.
for f in vmlinuz initrd disk.raw; do
	ln $host/images/$f "$root/$f" || fail "ln $f into $root"
done

chroot $host /microvm-jailer --id $ID --exec-file /images/microvm \
	--uid $RUN_UID --gid $RUN_UID --chroot-base-dir /srv/jailer \
	--cgroup-version 2 --parent-cgroup microvm-e2e \
	--cgroup pids.max=64 --resource-limit no-file=1024 -- \
	--kernel /vmlinuz --initrd /initrd --cpus 1 --memory 256M \
	--cmdline "console=ttyS0 quiet panic=-1" --disk /disk.raw \
	--timeout 240 >/tmp/console 2>/tmp/stderr &
jpid=$!

i=0
while [ ! -s "$root/microvm.pid" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
pid=$(cat "$root/microvm.pid" 2>/dev/null)
echo "JAIL: pidfile ${pid:-none}"
if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
	grep -E '^(Uid|Gid|NSpid|Groups|CapEff):' "/proc/$pid/status" |
		tr -s ' \t' ' ' | sed 's/^/JAIL: status /'
	for ns in mnt pid ipc uts net; do
		if [ "$(readlink "/proc/$pid/ns/$ns")" = \
		     "$(readlink "/proc/$$/ns/$ns")" ]; then
			echo "JAIL: ns $ns shared"
		else
			echo "JAIL: ns $ns new"
		fi
	done
	# Its "/" through /proc/PID/root, its mounts as it sees them, and
	# whether its binary is the jail's copy (by inode: paths across
	# mount namespaces print differently from kernel to kernel).
	echo "JAIL: sees $(ls -A "/proc/$pid/root/" | sort | tr '\n' ' ')"
	echo "JAIL: mounts $(wc -l <"/proc/$pid/mountinfo")" \
		"$(cut -d' ' -f5 "/proc/$pid/mountinfo" | tr '\n' ' ')"
	ino()
	{
		stat -L -c '%d:%i' "$1" 2>/dev/null
	}
	[ "$(ino "/proc/$pid/exe")" = "$(ino "$root/microvm")" ] &&
		echo "JAIL: exe the jail's copy" ||
		echo "JAIL: exe $(readlink "/proc/$pid/exe")"
	sed 's/^/JAIL: cgroup /' "/proc/$pid/cgroup"
	# Every fd: in the jail when its inode is one of the jail's files.
	find "$root" | while read -r f; do ino "$f"; done >/tmp/jail-inodes
	for fd in /proc/$pid/fd/*; do
		t=$(readlink "$fd")
		case "$t" in
		anon_inode:* | pipe:* | socket:*) where=anon ;;
		*)
			i=$(ino "$fd")
			if grep -qxF "$i" /tmp/jail-inodes; then
				where=in-jail
			elif [ "$i" = "$(ino "/proc/$pid/fd/0")" ] ||
			     [ "$i" = "$(ino "/proc/$pid/fd/1")" ] ||
			     [ "$i" = "$(ino "/proc/$pid/fd/2")" ]; then
				where=stdio # a copy of what the caller gave
			else
				where=outside
			fi
			;;
		esac
		echo "JAIL: fd ${fd##*/} $where $t"
	done
fi
wait $jpid
status=$?
sed 's/^/jail-l1: console: /' /tmp/console
sed 's/^/jail-l1: stderr: /' /tmp/stderr
echo "JAIL: status=$status"
echo "JAIL: disk-out $(dd if=$host/images/disk.raw bs=512 skip=2048 count=1 2>/dev/null |
	head -n 1 | tr -cd 'A-Za-z0-9 -')"

# Kata's start: --uid 0 --gid 0 --daemonize, no cgroup; the jailer
# leaves once microvm runs, and the pid file is what tracks it. The
# console goes to /dev/null: the disk says whether the guest ran.
root2=$host/srv/jailer/microvm/$ID2/root
mkdir -p "$root2" && ln $host/images/vmlinuz $host/images/initrd "$root2/" &&
	dd if=/dev/zero of="$root2/disk.raw" bs=1M count=8 2>/dev/null ||
	fail "the second jail"
t0=$(cut -d' ' -f1 /proc/uptime)
chroot $host /microvm-jailer --id $ID2 --exec-file /images/microvm \
	--uid 0 --gid 0 --chroot-base-dir /srv/jailer --daemonize -- \
	--kernel /vmlinuz --initrd /initrd --cpus 1 --memory 256M \
	--cmdline "console=ttyS0 quiet panic=-1" --disk /disk.raw \
	--timeout 240 >/tmp/console2 2>/tmp/stderr2
echo "JAIL: daemon jailer-status=$? after $(cut -d' ' -f1 /proc/uptime) (started $t0)"
sed 's/^/jail-l1: daemon: jailer output: /' /tmp/console2 /tmp/stderr2
pid=$(cat "$root2/microvm.pid" 2>/dev/null)
echo "JAIL: daemon pidfile ${pid:-none}"
state()
{
	sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null
}
if [ -n "$pid" ] && [ -n "$(state "$pid")" ]; then
	grep -E '^(Uid|NSpid):' "/proc/$pid/status" | tr -s ' \t' ' ' |
		sed 's/^/JAIL: daemon status /'
	# Its own session: field 6 of stat is the session id.
	echo "JAIL: daemon own-session $([ "$(cut -d' ' -f6 "/proc/$pid/stat")" = \
		"$(cut -d' ' -f1 "/proc/$pid/stat")" ] && echo yes || echo no)"
	echo "JAIL: daemon stdout $(stat -L -c '%F %t:%T' "/proc/$pid/fd/1")"
	i=0
	while [ -n "$(state "$pid")" ] && [ "$(state "$pid")" != Z ] &&
	      [ $i -lt 3000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "JAIL: daemon ended $([ -n "$(state "$pid")" ] &&
		[ "$(state "$pid")" != Z ] && echo no || echo yes)"
fi
echo "JAIL: daemon disk-out $(dd if="$root2/disk.raw" bs=512 skip=2048 count=1 2>/dev/null |
	head -n 1 | tr -cd 'A-Za-z0-9 -')"
echo "JAIL: done"
