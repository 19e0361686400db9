#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /sbin/init (and /init) of the root image that firmware/rootfs/build.sh
# makes. It mounts the usual file systems, runs one command, hands the
# command's exit status to microvm through the exit device and powers off.
# The command is, in order:
#   - init's arguments: the kernel passes every word after "--" on its
#     command line to init as argv ("... root=/dev/vda rw -- sh -c 'x'");
#     double quotes keep spaces in one word: -- sh -c "exit 7"
#   - /etc/microvm/run in the image (executable, or a shell script)
#   - else a shell on the console; its exit status is the VM's.
# Status: the command's (127 not found, 128+N killed by signal N), or
# 125 when init itself could not set up. Where the status cannot reach
# microvm (a kernel with neither ioperm nor /dev/mem), a non-zero one
# panics the kernel rather than power off with 0.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
umask 022

init_mount()
{
	# Already there (devtmpfs when the kernel mounts it itself).
	grep -q "^[^ ]* $3 " /proc/mounts 2>/dev/null && return 0
	mkdir -p "$3" && mount -t "$1" -o "$4" "$2" "$3" && return 0
	echo "init: cannot mount $1 on $3" >&2
	return 1
}

# init_end STATUS: no process may still write when the image is remounted
# read-only and synced (microvm ends the VM at the exit write, so whatever
# sits in the guest's page cache would be lost), then the exit device.
init_end()
{
	kill -KILL -1 2>/dev/null
	sync
	mount -o remount,ro / 2>/dev/null
	sync
	microvm-exit "$1"
	# Not under microvm, or neither ioperm nor /dev/mem in this kernel.
	devmem 0xf0100000 8 "$1" 2>/dev/null
	if [ "$1" = 0 ]; then
		poweroff -f
	else
		# A power-off would end the VM with status 0: a failed
		# command must never look like a success. A panic ends
		# it with the panic status (pvpanic), or leaves it to
		# --timeout.
		echo "init: could not hand status $1 to the VMM: panicking" \
		     "the kernel instead of powering off with status 0" >&2
		echo c >/proc/sysrq-trigger
	fi
	while :; do
		sleep 3600
	done
}

ok=1
init_mount proc proc /proc nosuid,nodev,noexec || ok=0
init_mount sysfs sysfs /sys nosuid,nodev,noexec || ok=0
init_mount devtmpfs devtmpfs /dev nosuid,mode=0755 || ok=0
init_mount tmpfs tmpfs /tmp nosuid,nodev,mode=1777 || ok=0
init_mount tmpfs tmpfs /run nosuid,nodev,mode=0755 || ok=0
init_mount devpts devpts /dev/pts nosuid,noexec,gid=5,mode=620 2>/dev/null
[ "$ok" = 1 ] || init_end 125
hostname microvm 2>/dev/null
cd / || init_end 125

# The console as the command's controlling terminal, so that ^C on the
# host's terminal reaches it as SIGINT and a shell has job control:
# setsid makes a session without one (our child is no group leader, so it
# execs rather than forks, and the status is the command's), then
# cttyhack opens the console's real tty, which becomes the session's.
# The session leader is a shell around the command, not the command: when
# a session leader exits, the kernel hangs its terminal up and throws away
# what the UART has not sent yet, so the leader waits for the console to
# drain first. It survives ^C (a handler, which the command does not
# inherit) so that it still drains and passes the status on.
run()
{
	setsid cttyhack /bin/sh -c \
		'trap : INT QUIT; "$@"; s=$?; microvm-exit --drain; exit $s' \
		microvm-run "$@"
}

if [ $# -gt 0 ]; then
	run "$@"
elif [ -x /etc/microvm/run ]; then
	run /etc/microvm/run
elif [ -f /etc/microvm/run ]; then
	run /bin/sh /etc/microvm/run
else
	echo "init: no command after -- on the kernel command line and no" \
	     "/etc/microvm/run: starting a shell (its exit status ends the VM)"
	run /bin/sh -l
fi
init_end $?
