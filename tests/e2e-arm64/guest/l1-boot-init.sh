#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: Apache-2.0
# /init of the arm64 L1 for boot-test.sh: runs the arm64 microvm on the
# L2 kernel and initramfs it carries and reports microvm's exit status.
# What to run comes from L1's command line:
#   l1.cpus=N       --cpus N
#   l1.timeout=S    --timeout S
#   l1.hang=1       L2 init waits forever instead of powering off (so
#                   --timeout must end it); microvm runs with --verbose,
#                   which dumps the vCPUs' registers at the timeout
#   l1.disk=T       a 16 MiB image of a known pattern on transport T
#                   (mmio or pci) as L2's vda, read-write, with --stats
#                   (its per-queue counters); the md5s of the image
#                   before, of what L2's writers must leave (guest/
#                   l2-init.sh's patterns) and of the image after
#                   microvm exited are printed
#   l1.queues=N     the disk's queues=N
#   l1.maxcpus=M    maxcpus=M on L2's command line (L2's /init brings
#                   the rest online)
#   l1.end=E        how L2 ends (l2-init.sh's l2.end=); with reset or
#                   exitN microvm runs with --verbose, whose last line
#                   names the exit's cause; with cad microvm also serves
#                   its API (--api-sock, --stats) and this script sends
#                   SendCtrlAltDel (bin/api-put) once a second until it
#                   is taken (204), printing each distinct answer;
#                   L2's console goes to a file, printed at the end
#                   between console-begin l2/console-end l2 lines
#   l1.quiet=1      quiet on L2's command line (no boot log on the
#                   console: each byte is a nested exit)
#   l1.nolva=1      arm64.nolva on L2's command line (boot-test.sh says
#                   why)
#   l1.end=snap     a snapshot and its restore: L2 counts (l2-init.sh's
#                   l2.end=snap); at tick 5 this script pauses microvm
#                   (PATCH /vm), writes a Full snapshot to /tmp/snap
#                   (PUT /snapshot/create) and kills it, then loads it
#                   into a fresh microvm (PUT /snapshot/load, dirty
#                   pages tracked), waits for 5 more ticks, takes a
#                   Diff (/tmp/d2) and a Full (/tmp/f2) at one pause,
#                   resumes and ends L2 with SendCtrlAltDel; writes the
#                   Diff over the Full it came from (--base-file,
#                   --diff-file) and compares it with /tmp/f2; runs two
#                   clones of the result at once (--restore,
#                   --restore-drive disk0,snapshot=on), prints their
#                   memory and ends them the same way; then restores six
#                   broken copies ("ARM64-L1: refused WHAT: status S
#                   lines N: MESSAGE"). Each microvm's console goes to a
#                   file, printed after it between ARM64-L1:
#                   console-begin/console-end lines, and the snapshot's
#                   last tick is "ARM64-L1: snapshot at tick N"
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "ARM64-L1: init at $(cut -d' ' -f1 /proc/uptime) s"
cpus=1 limit=240 hang=0 disk='' queues='' maxcpus='' end='' quiet=0 nolva=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	l1.cpus=*) cpus=${arg#l1.cpus=} ;;
	l1.timeout=*) limit=${arg#l1.timeout=} ;;
	l1.hang=*) hang=${arg#l1.hang=} ;;
	l1.disk=*) disk=${arg#l1.disk=} ;;
	l1.queues=*) queues=${arg#l1.queues=} ;;
	l1.maxcpus=*) maxcpus=${arg#l1.maxcpus=} ;;
	l1.end=*) end=${arg#l1.end=} ;;
	l1.quiet=*) quiet=${arg#l1.quiet=} ;;
	l1.nolva=*) nolva=${arg#l1.nolva=} ;;
	esac
done
if [ ! -c /dev/kvm ]; then
	echo "ARM64-L1: /dev/kvm missing"
	poweroff -f
fi
set -- --kernel /l2/vmlinuz --initrd /l2/initrd.cpio.gz --cpus "$cpus" \
	--timeout "$limit"
l2args=''
[ "$hang" = 1 ] && l2args=" l2.hang=1" && set -- "$@" --verbose
case "$end" in
reset|exit*) set -- "$@" --verbose ;;
cad|snap) set -- "$@" --verbose --stats --api-sock /tmp/api.sock ;;
esac
[ -n "$end" ] && l2args="$l2args l2.end=$end"
[ -n "$disk" ] && l2args="$l2args l2.disk=1"
[ -n "$maxcpus" ] && l2args="$l2args maxcpus=$maxcpus"
[ "$quiet" = 1 ] && l2args="$l2args quiet"
[ "$nolva" = 1 ] && l2args="$l2args arm64.nolva"
set -- "$@" --cmdline "console=ttyAMA0$l2args"
if [ -n "$disk" ]; then
	mount -t tmpfs tmpfs /tmp
	yes 'microvm arm64 disk pattern 0123456789abcdef' |
		head -c 16777216 >/tmp/disk.raw
	echo "ARM64-L1: disk md5 $(md5sum /tmp/disk.raw | cut -d' ' -f1)"
	# What L2's 8 writers leave: writer i's pattern in the i-th 2 MiB.
	i=0
	while [ $i -lt 8 ]; do
		yes "microvm arm64 writer $i wrote this 0123456789abcdef" |
			head -c 2097152
		i=$((i + 1))
	done >/tmp/expect.raw
	echo "ARM64-L1: expect md5 $(md5sum /tmp/expect.raw | cut -d' ' -f1)"
	rm -f /tmp/expect.raw
	spec="/tmp/disk.raw,transport=$disk"
	[ -n "$queues" ] && spec="$spec,queues=$queues"
	set -- "$@" --stats --disk "$spec"
fi
echo "ARM64-L1: microvm $*"
start=$(cut -d' ' -f1 /proc/uptime)

# ticks FILE: the tick numbers L2 printed to FILE, one per line.
ticks()
{
	tr -d '\r' <"$1" | sed -n 's/^ARM64-L2: tick \([0-9]*\)$/\1/p'
}
# wait_tick FILE N LIMIT PID: until FILE has tick N or more (0), or LIMIT
# seconds passed or PID ended (1).
wait_tick()
{
	w=0
	while [ $w -lt "$3" ] && kill -0 "$4" 2>/dev/null; do
		t=$(ticks "$1" | tail -n 1)
		[ -n "$t" ] && [ "$t" -ge "$2" ] && return 0
		sleep 1
		w=$((w + 1))
	done
	return 1
}
# api SOCKET PATH JSON [METHOD]: one request, its answer on the log.
api()
{
	a=$(/bin/api-put "$@" 2>&1)
	echo "ARM64-L1: ${4:-PUT} $2: $a"
	[ "${a#API-PUT: 204}" != "$a" ]
}
# reap PID: microvm's status; killed first (and said so) if it still runs.
reap()
{
	kill -0 "$1" 2>/dev/null && echo "ARM64-L1: microvm still runs:" \
		"killed" && kill "$1"
	wait "$1"
}
# api_up SOCKET PID: until SOCKET answers (0), or 30 s passed or PID
# ended (1).
api_up()
{
	w=0
	while [ $w -lt 30 ] && kill -0 "$2" 2>/dev/null; do
		/bin/api-put "$1" /vm '{}' PATCH >/dev/null 2>&1
		[ $? != 2 ] && return 0
		sleep 1
		w=$((w + 1))
	done
	return 1
}
# end_cad SOCKET PID: SendCtrlAltDel until it is taken, then up to 60 s
# for PID to end.
end_cad()
{
	n=0
	while [ $n -lt 30 ] && kill -0 "$2" 2>/dev/null &&
		! api "$1" /actions '{"action_type": "SendCtrlAltDel"}'; do
		sleep 1
		n=$((n + 1))
	done
	n=0
	while [ $n -lt 60 ] && kill -0 "$2" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
	done
}
# smaps KEY PID: KEY's kB in PID's smaps_rollup.
smaps()
{
	sed -n "s/^$1: *\([0-9]*\) kB/\1/p" "/proc/$2/smaps_rollup"
}
# clones: two restores of /tmp/d2 at once (microvm --restore), the disk
# behind a throwaway overlay in each; both go on counting from the
# Diff's tick, their memory shared, and end on Ctrl-Alt-Del.
clones()
{
	for c in a b; do
		/bin/microvm --restore /tmp/d2 --api-sock /tmp/clone-$c.sock \
			--restore-drive disk0,snapshot=on --stats \
			--timeout "$limit" >/tmp/con-$c 2>&1 &
		eval "cpid_$c=\$!"
	done
	for c in a b; do
		eval "p=\$cpid_$c"
		wait_tick /tmp/con-$c $((${tdiff:-0} + 3)) 120 "$p" ||
			echo "ARM64-L1: clone $c did not count on"
	done
	for c in a b; do
		eval "p=\$cpid_$c"
		if kill -0 "$p" 2>/dev/null; then
			rss=$(smaps Rss "$p") pss=$(smaps Pss "$p")
			priv=$(($(smaps Private_Clean "$p") + $(smaps Private_Dirty "$p")))
			echo "ARM64-L1: clone $c Rss $rss kB Pss $pss kB shared $((rss - priv)) kB"
		fi
	done
	for c in a b; do
		eval "p=\$cpid_$c"
		end_cad /tmp/clone-$c.sock "$p"
		reap "$p"
		echo "ARM64-L1: clone $c status $?"
		show clone-$c /tmp/con-$c
	done
}
# refused WHAT: microvm --restore /tmp/bad, which must exit 1 with one
# line: its status and that line on the log.
refused()
{
	/bin/microvm --restore /tmp/bad >/dev/null 2>/tmp/bad.err
	echo "ARM64-L1: refused $1: status $? lines $(wc -l </tmp/bad.err): $(head -n 1 /tmp/bad.err)"
}
# refusals: snapshots a restore must refuse, each with one clear line:
# another CPU's ID registers (snap-edit), a corrupt, truncated or
# other-version state file, a short memory file, a missing disk.
refusals()
{
	size=$(wc -c </tmp/d2/state)
	ln /tmp/d2/memory /tmp/bad/memory
	cp /tmp/d2/state /tmp/bad/state
	/bin/snap-edit /tmp/bad/state idreg && refused cpu
	cp /tmp/d2/state /tmp/bad/state
	printf '\377' | dd of=/tmp/bad/state bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	refused corrupt
	head -c $((size - 100)) /tmp/d2/state >/tmp/bad/state
	refused truncated
	cp /tmp/d2/state /tmp/bad/state
	printf '\011' | dd of=/tmp/bad/state bs=1 seek=16 conv=notrunc 2>/dev/null
	refused version
	cp /tmp/d2/state /tmp/bad/state
	rm /tmp/bad/memory
	head -c 1048576 /tmp/d2/memory >/tmp/bad/memory
	refused short-memory
	rm /tmp/bad/memory
	ln /tmp/d2/memory /tmp/bad/memory
	mv /tmp/disk.raw /tmp/disk.away
	refused missing-disk
	mv /tmp/disk.away /tmp/disk.raw
}
# show NAME FILE: a console file on L1's log.
show()
{
	echo "ARM64-L1: console-begin $1"
	tr -d '\r' <"$2"
	echo "ARM64-L1: console-end $1"
}

if [ "$end" = snap ]; then
	grep -q ' /tmp ' /proc/mounts || mount -t tmpfs tmpfs /tmp
	mkdir -p /tmp/snap /tmp/d2 /tmp/f2 /tmp/bad
	/bin/microvm "$@" >/tmp/con1 &
	pid=$!
	if wait_tick /tmp/con1 5 "$limit" $pid &&
		api /tmp/api.sock /vm '{"state": "Paused"}' PATCH &&
		api /tmp/api.sock /snapshot/create \
			'{"snapshot_type": "Full", "snapshot_path": "/tmp/snap/state", "mem_file_path": "/tmp/snap/memory"}'; then
		echo "ARM64-L1: snapshot at tick $(ticks /tmp/con1 | tail -n 1)"
		echo "ARM64-L1: snapshot files $(ls -ls /tmp/snap | tr '\n' ' ')"
	fi
	kill $pid 2>/dev/null
	wait $pid
	echo "ARM64-L1: original status $?"
	show original /tmp/con1
	# The restore: PUT /snapshot/load into a fresh microvm, with dirty
	# pages tracked from there on; 5 ticks later a Diff (what changed
	# since the load) and a Full at one pause, then Ctrl-Alt-Del.
	set -- --api-sock /tmp/api2.sock --stats --verbose --timeout "$limit"
	echo "ARM64-L1: microvm $*"
	start=$(cut -d' ' -f1 /proc/uptime)
	/bin/microvm "$@" >/tmp/con2 &
	pid=$!
	t0=$(ticks /tmp/con1 | tail -n 1)
	if [ -f /tmp/snap/state ] && api_up /tmp/api2.sock $pid &&
		api /tmp/api2.sock /snapshot/load \
			'{"snapshot_path": "/tmp/snap/state", "mem_backend": {"backend_type": "File", "backend_path": "/tmp/snap/memory"}, "track_dirty_pages": true, "resume_vm": true}' &&
		wait_tick /tmp/con2 $((${t0:-0} + 5)) 120 $pid &&
		api /tmp/api2.sock /vm '{"state": "Paused"}' PATCH &&
		api /tmp/api2.sock /snapshot/create \
			'{"snapshot_type": "Diff", "snapshot_path": "/tmp/d2/state", "mem_file_path": "/tmp/d2/memory"}' &&
		api /tmp/api2.sock /snapshot/create \
			'{"snapshot_type": "Full", "snapshot_path": "/tmp/f2/state", "mem_file_path": "/tmp/f2/memory"}'; then
		tdiff=$(ticks /tmp/con2 | tail -n 1)
		echo "ARM64-L1: diff at tick $tdiff"
		api /tmp/api2.sock /vm '{"state": "Resumed"}' PATCH
	fi
	end_cad /tmp/api2.sock $pid
	reap $pid
	rc=$?
	show restored /tmp/con2
	# The Diff over the Full it was restored from must be the Full taken
	# at the same pause, byte for byte; it is then the snapshot that the
	# clones restore.
	if [ -f /tmp/d2/state ] && [ -f /tmp/f2/state ]; then
		echo "ARM64-L1: diff KiB $(du -k /tmp/d2/memory | cut -f1) full KiB $(du -k /tmp/f2/memory | cut -f1)"
		cp /tmp/snap/memory /tmp/d2/merged
		/bin/microvm --base-file /tmp/d2/merged --diff-file /tmp/d2/memory
		echo "ARM64-L1: rebase status $?"
		if cmp -s /tmp/d2/merged /tmp/f2/memory; then
			echo "ARM64-L1: base + diff equals the full"
		else
			echo "ARM64-L1: base + diff differs from the full"
		fi
		mv /tmp/d2/merged /tmp/d2/memory
		rm -f /tmp/f2/memory /tmp/snap/memory
		clones
		refusals
	fi
elif [ "$end" = cad ]; then
	# L2's console to a file, shown at the end: on L1's one console an
	# "ARM64-L1:" line written while L2 was mid-line would not start a
	# line (seen once in four runs on 2026-12-06).
	grep -q ' /tmp ' /proc/mounts || mount -t tmpfs tmpfs /tmp
	/bin/microvm "$@" >/tmp/con1 &
	pid=$!
	# 400 until L2's virtio_input set DRIVER_OK, then 204 once; any
	# other answer ends the tries. L2 then has 60 s to power off.
	last='' n=0 wait=$limit
	while [ $n -lt "$wait" ] && kill -0 $pid 2>/dev/null; do
		if [ -z "$last" ] || [ "${last#API-PUT: 400}" != "$last" ] ||
			[ "${last#api-put:}" != "$last" ]; then
			a=$(/bin/api-put /tmp/api.sock /actions \
				'{"action_type": "SendCtrlAltDel"}' 2>&1)
			[ "$a" = "$last" ] ||
				echo "ARM64-L1: SendCtrlAltDel: $a"
			last=$a
			case "$a" in
			'API-PUT: 204'*) wait=$((n + 60)) ;;
			'API-PUT: 400'*'keyboard driver'*|api-put:*) ;;
			*) break ;;
			esac
		fi
		sleep 1
		n=$((n + 1))
	done
	reap $pid
	rc=$?
	show l2 /tmp/con1
else
	/bin/microvm "$@"
	rc=$?
fi
stop=$(cut -d' ' -f1 /proc/uptime)
echo "ARM64-L1: microvm status $rc after $(awk -v a="$start" -v b="$stop" \
	'BEGIN { printf "%.1f", b - a }') s"
[ -n "$disk" ] &&
	echo "ARM64-L1: image md5 $(md5sum /tmp/disk.raw | cut -d' ' -f1) after microvm"
echo "ARM64-L1: done"
poweroff -f
