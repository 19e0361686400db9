#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The check that firmware-test.sh puts into root.raw as /etc/microvm/run:
# runs in the guest under firmware/rootfs's init, booted from --disk with
# no initramfs. Prints "FW-CHECK: ok|FAIL what" lines and a last line
# "FW-CHECK-END: N failed", then exits with STATUS when all passed, else 1.
#
# Usage: firmware-check.sh                 (init ran /etc/microvm/run:
#            what to expect is in /e2e/expect, written by the host)
#        firmware-check.sh CPUS TRANSPORT WORD STATUS   (init ran the
#            command after "--" on the kernel command line; WORD holds
#            spaces, so it tells whether the quoting survived)
# Checks: nproc; /proc/cmdline; the console is our controlling terminal
# (^C reaches the command); init is PID 1 and mounted /proc, /sys,
# /dev, /tmp and /run; / is ext4, rw, on vda (device numbers, since
# /proc/mounts names it /dev/root), vda sits on TRANSPORT; the guest can
# write its root (the file /root/fw-written, read back by the host).
fails=0
check()
{
	if [ "$1" = 0 ]; then
		echo "FW-CHECK: ok $2"
	else
		echo "FW-CHECK: FAIL $2"
		fails=$((fails + 1))
	fi
}

if [ $# -eq 0 ]; then
	. /e2e/expect || { echo "FW-CHECK: FAIL no /e2e/expect"; exit 1; }
	cmdline_ok=$([ "$(cat /proc/cmdline)" = "$cmdline" ]; echo $?)
	check "$cmdline_ok" "/proc/cmdline is '$(cat /proc/cmdline)', want '$cmdline'"
	word=default
elif [ $# -eq 4 ]; then
	cpus=$1 transport=$2 word=$3 status=$4
	# The marker the host put before "--" names the word it put after.
	mark=$(sed -n 's/.*microvm\.fw=\([^ ]*\).*/\1/p' /proc/cmdline)
	check "$([ -n "$mark" ] && [ "$word" = "$mark and spaces" ]; echo $?)" \
		"argv[3] is '$word' (microvm.fw=$mark on /proc/cmdline: $(cat /proc/cmdline))"
	check "$(grep -q ' root=/dev/vda rw ' /proc/cmdline; echo $?)" \
		"root=/dev/vda rw on /proc/cmdline"
else
	echo "FW-CHECK: FAIL usage: $0 [CPUS TRANSPORT WORD STATUS]"
	exit 1
fi

n=$(nproc)
check "$([ "$n" = "$cpus" ]; echo $?)" "nproc $n, want $cpus"
online=$(cat /sys/devices/system/cpu/online)
check "$([ "$cpus" = 1 ] && [ "$online" = 0 ] ||
	[ "$online" = "0-$((cpus - 1))" ]; echo $?)" "cpus online: $online"

# Fields after "(comm) ": state ppid pgrp session tty_nr tpgid.
set -- $(sed 's/.*) //' /proc/$$/stat)
check "$([ "$5" != 0 ] && [ "$3" = "$6" ] && [ "$4" != 0 ]; echo $?)" \
	"the console is our terminal, we are its foreground (pgrp $3, session $4, tty_nr $5, tpgid $6)"
init1=$(tr '\0' ' ' </proc/1/cmdline)
check "$(case "$init1" in *sbin/init*) echo 0 ;; *) echo 1 ;; esac)" \
	"PID 1 is '$init1'"
for m in /proc:proc /sys:sysfs /dev:devtmpfs /tmp:tmpfs /run:tmpfs; do
	check "$(grep -q "^[^ ]* ${m%%:*} ${m#*:} " /proc/mounts; echo $?)" \
		"${m%%:*} is ${m#*:}"
done

root=$(awk '$2 == "/" { print $1, $3, $4 }' /proc/mounts | tail -n 1)
set -- $root
check "$([ "$2" = ext4 ] && case ",$3," in *,rw,*) true ;; *) false ;; esac
	echo $?)" "/ is '$root' in /proc/mounts, want ext4 rw"
dev=$(stat -c %d /)
majmin=$(( (dev >> 8) & 0xfff )):$(( (dev & 0xff) | ((dev >> 12) & 0xfff00) ))
vda=$(cat /sys/block/vda/dev 2>/dev/null)
check "$([ -n "$vda" ] && [ "$majmin" = "$vda" ]; echo $?)" \
	"/ is on device $majmin, vda is '$vda'"
path=$(readlink -f /sys/block/vda)
case "$transport" in
pci) want='/pci[0-9]' ;;
mmio) want='LNRO0005' ;;
*) want='?' ;;
esac
check "$(echo "$path" | grep -q "$want"; echo $?)" \
	"vda is on $transport: $path"
check "$([ ! -e /sys/block/vdb ]; echo $?)" "one disk only"

echo "$word" >/root/fw-written && sync
check $? "wrote /root/fw-written"

echo "FW-CHECK-END: $fails failed"
[ $fails -eq 0 ] || exit 1
exit "$status"
