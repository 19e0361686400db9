#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the nested harness's L1 (busybox, root) for e2e-test.sh:
# microvm started by microvm-jailer as Kata and firecracker-go-sdk start
# Firecracker's: the kernel, initramfs and disk hard-linked into
# <base>/microvm/<id>/root beforehand, uid/gid 1000, a cgroup v2 with
# pids.max, an rlimit, the VMM's own arguments after "--". While the
# guest runs, the jailed process is looked at from L1 (/proc/PID); after
# it, the disk image is read back. Then a second jail as Kata's fc.go
# starts one, call for call: uid 0, --daemonize, its config file, the
# default API socket, its pid file, an image hot-plugged over a
# placeholder drive, SIGTERM.
# L1's root is the initramfs (rootfs), which pivot_root cannot leave (a
# host's root is a real mount): so the jailer runs chrooted in a tmpfs
# that holds the jailer, /proc, /dev and the cgroup2 mount, as a host's
# root would.
# Usage: e2e-l1.sh --jailer BIN --microvm BIN --curl BIN --kernel K --initrd I
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
#   then Kata's jailed start (below), into its own jail:
#   JAIL: kata marker M
#   JAIL: daemon jailer-status=S after T (started T0)
#   JAIL: kata running yes|no / kata state BODY (GET /)
#   JAIL: daemon pidfile PID          (<root>/firecracker.pid)
#   JAIL: daemon status Uid:... / NSpid:...
#   JAIL: daemon own-session yes|no / stdout TYPE MAJOR:MINOR
#   JAIL: kata patch-in CODE BODY / rescan CODE BODY / patch-out CODE BODY
#   JAIL: kata after BODY
#   JAIL: kata log now PATH, N bytes  (each swap's line from the log FIFO)
#   JAIL: kata logline LINE           (the first of them as written)
#   JAIL: daemon ended yes|no         (after SIGTERM)
#   JAIL: daemon disk-out LINE        (sector 2048 of the hot-plugged image)
#   JAIL: kata log-fifo BYTES metrics-fifo LINES
#   JAIL: done
# Exit: 0 when every step ran (the verdict is e2e-test.sh's); 1 when the
# setup failed ("JAIL: FAIL why").
ID=e2e-jail-1
ID2=e2e-jail-2
RUN_UID=1000
jailer=
microvm=
curl=
kernel=
initrd=
while [ $# -gt 0 ]; do
	case "$1" in
	--jailer) jailer=$2; shift 2 ;;
	--microvm) microvm=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--curl) curl=$2; shift 2 ;;
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
		t=$(readlink "$fd") || continue # closed meanwhile
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

# Kata's jailed start, as its fc.go makes it (fcInitConfiguration,
# fcInit, hotplugBlockDevice, fcEnd): the exec file named firecracker,
# chroot base /run/vc, the jail root bound on itself and made shared,
# every resource bound over a file of that root (the kernel as vmlinux,
# the read-only rootfs drive, 8 empty placeholder drives, FIFOs for log
# and metrics, the config file), then `--uid 0 --gid 0 --daemonize --
# --config-file /fcConfig.json`: no --api-sock, so the API answers on
# <root>/run/firecracker.socket, polled with GET / until Running; the
# pid from <root>/firecracker.pid. The container image is hot-plugged
# by binding it over the placeholder drive_0 and PATCHing that drive to
# the same path; removed by unbinding and PATCHing again; SIGTERM ends
# it. Two departures, both the test's: an initrd (Kata boots the rootfs
# drive) and no "vsock" object (in e2e.replay.kata instead). The console is
# /dev/null: the guest's token on the hot-plugged image says it ran.
kroot=$host/run/vc/firecracker/$ID2/root
kvm=${kroot%/root}
sock2=$kroot/run/firecracker.socket
mkdir -p "$kroot/run" && mount -o bind "$kroot" "$kroot" &&
	mount --make-shared "$kroot" || fail "Kata's shared jail root"
cp "$microvm" $host/images/firecracker || fail "the exec file"
# fcJailResource: a bind mount over a file of the jail's root.
jail_res()
{
	{ [ -e "$kroot/$2" ] || : >"$kroot/$2"; } &&
		mount -o bind "$1" "$kroot/$2" || fail "binding $1 over $2"
}
jail_res $host/images/vmlinuz vmlinux
jail_res $host/images/initrd initrd
dd if=/dev/zero of=$host/images/rootfs.raw bs=1M count=1 2>/dev/null &&
	jail_res $host/images/rootfs.raw rootfs
n=0
while [ $n -lt 8 ]; do
	: >"$kroot/drive_$n" || fail "placeholder drive_$n"
	n=$((n + 1))
done
for f in logs.fifo metrics.fifo; do
	mkfifo "$kvm/$f" && jail_res "$kvm/$f" "$f"
done
# fc.go opens them O_RDONLY|O_NONBLOCK before the start; a read-write
# open stands in for that (microvm's writer never waits).
cat "$kvm/logs.fifo" >/tmp/kata-logs &
cat "$kvm/metrics.fifo" >/tmp/kata-metrics &
exec 7<>"$kvm/logs.fifo" 8<>"$kvm/metrics.fifo"
{
	printf '{\n\t"boot-source": {\n\t\t"boot_args": "%s",\n' \
		"console=ttyS0 quiet jail.kata pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on"
	printf '\t\t"initrd_path": "/initrd",\n'
	printf '\t\t"kernel_image_path": "/vmlinux"\n\t},\n'
	printf '\t"machine-config": {\n\t\t"mem_size_mib": 256,\n'
	printf '\t\t"smt": false,\n\t\t"vcpu_count": 1\n\t},\n'
	printf '\t"drives": [\n\t\t{\n\t\t\t"drive_id": "rootfs",\n'
	printf '\t\t\t"is_read_only": true,\n\t\t\t"is_root_device": false,\n'
	printf '\t\t\t"path_on_host": "/rootfs"\n\t\t}'
	n=0
	while [ $n -lt 8 ]; do
		printf ',\n\t\t{\n\t\t\t"drive_id": "drive_%s",\n' $n
		printf '\t\t\t"is_read_only": false,\n\t\t\t"is_root_device": false,\n'
		printf '\t\t\t"path_on_host": "/drive_%s"\n\t\t}' $n
		n=$((n + 1))
	done
	printf '\n\t],\n\t"logger": {\n\t\t"level": "Debug",\n'
	printf '\t\t"log_path": "/logs.fifo"\n\t},\n'
	printf '\t"metrics": {\n\t\t"metrics_path": "/metrics.fifo"\n\t}\n}'
} >"$kvm/fcConfig.json" && jail_res "$kvm/fcConfig.json" fcConfig.json
# The container image: L1's marker, then room for the guest's token.
dd if=/dev/zero of=$host/images/kata.raw bs=1M count=4 2>/dev/null &&
	printf 'JAIL-IN kata-%s\n' "$$" |
	dd of=$host/images/kata.raw conv=notrunc 2>/dev/null || fail "kata.raw"
echo "JAIL: kata marker kata-$$"

t0=$(cut -d' ' -f1 /proc/uptime)
chroot $host /microvm-jailer --id $ID2 --exec-file /images/firecracker \
	--uid 0 --gid 0 --chroot-base-dir /run/vc --daemonize -- \
	--config-file /fcConfig.json >/tmp/console2 2>/tmp/stderr2
echo "JAIL: daemon jailer-status=$? after $(cut -d' ' -f1 /proc/uptime) (started $t0)"
sed 's/^/jail-l1: daemon: jailer output: /' /tmp/console2 /tmp/stderr2
# call METHOD PATH [BODY]: fc.go's go-swagger client on the jail's socket.
call()
{
	code=$("$curl" -sS --unix-socket "$sock2" -o /tmp/kata-body \
		-w '%{http_code}' -X "$1" "http://localhost$2" \
		-H 'Accept: application/json' ${3+-H} \
		${3+'Content-Type: application/json'} ${3+-d} ${3+"$3"})
	body=$(cat /tmp/kata-body 2>/dev/null)
}
# waitVMMRunning: GET / every 10 ms.
i=0
running=no
while [ $i -lt 3000 ]; do
	if [ -S "$sock2" ] && call GET /; then
		case "$body" in *'"state":"Running"'*) running=yes; break ;; esac
	fi
	sleep 0.01
	i=$((i + 1))
done
echo "JAIL: kata running $running"
echo "JAIL: kata state $body"
pid=$(cat "$kroot/firecracker.pid" 2>/dev/null)
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
	# hotplugBlockDevice(AddDevice): bind over the placeholder, PATCH.
	jail_res $host/images/kata.raw drive_0
	call PATCH /drives/drive_0 '{"drive_id":"drive_0","path_on_host":"/drive_0"}'
	echo "JAIL: kata patch-in $code $body"
	i=0
	while ! dd if=$host/images/kata.raw bs=512 skip=2048 count=1 2>/dev/null |
	      grep -q '^JAIL-OUT' && [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# Firecracker's rescan: the image grows to 5 MiB, the drive is
	# PATCHed to the file it has (the same inode through the bind).
	dd if=/dev/zero of=$host/images/kata.raw bs=1M seek=4 count=1 \
		conv=notrunc 2>/dev/null
	call PATCH /drives/drive_0 '{"drive_id":"drive_0","path_on_host":"/drive_0"}'
	echo "JAIL: kata rescan $code $body"
	# HotplugRemoveDevice: a lazy unbind (fc.go's umountResource:
	# MNT_DETACH, microvm still has the image open), PATCH back to the
	# placeholder.
	umount -l "$kroot/drive_0" || echo "JAIL: kata umount drive_0 failed"
	call PATCH /drives/drive_0 '{"drive_id":"drive_0","path_on_host":"/drive_0"}'
	echo "JAIL: kata patch-out $code $body"
	call GET /
	echo "JAIL: kata after $body"
	# fcEnd: SIGTERM, then wait for the process to go.
	kill -TERM "$pid"
	i=0
	while [ -n "$(state "$pid")" ] && [ "$(state "$pid")" != Z ] &&
	      [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "JAIL: daemon ended $([ -n "$(state "$pid")" ] &&
		[ "$(state "$pid")" != Z ] && echo no || echo yes)"
fi
echo "JAIL: daemon disk-out $(dd if=$host/images/kata.raw bs=512 skip=2048 count=1 2>/dev/null |
	head -n 1 | tr -cd 'A-Za-z0-9 -')"
exec 7<&- 8<&-
sleep 0.2
grep 'drive drive_0: now' /tmp/kata-logs | sed 's/^.*drive drive_0: /JAIL: kata log /'
echo "JAIL: kata logline $(grep -m 1 'drive drive_0: now' /tmp/kata-logs)"
echo "JAIL: kata log-fifo $(wc -c </tmp/kata-logs) metrics-fifo $(wc -l </tmp/kata-metrics)"
echo "JAIL: done"
