#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the L1 machine in nested mode (see ../run-guest.sh). Loads KVM,
# copies shared disk files in from virtio disks, runs the command that
# /e2e/run.env describes with its stdout on ttyS1 (the host's stdout),
# copies the disk files back, reports on ttyS0 and powers off.
# ttyS0 protocol, read by run-guest.sh:
#   E2E-L1-ERROR: why           the harness itself failed
#   E2E-L1-START: UPTIME        L1 reached the command (L1 seconds)
#   E2E-L1-KTEXT: START P0-P1   L1's kernel text: _stext, and the
#                               kernel code's physical range (its size):
#                               where the emulated CPU is in L1's kernel
#   E2E-L1-ALIVE: uptime        every 15 s while the command runs: the
#                               harness (run-guest.sh) takes a silent L1
#                               log for an L1 kernel that stopped running
#   E2E-L1-HUNG: why            the command outlived E2E_WATCHDOG seconds:
#                               every task's kernel stack follows, then
#                               the command is killed
#   E2E-L1-STDERR-BEGIN ... E2E-L1-STDERR-END   the command's stderr
#   E2E-L1-EXIT-STATUS: N       the command's exit status
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
# "quiet" leaves only errors on ttyS0: lockups and oopses show up in the
# log that run-guest.sh prints when something goes wrong.

l1_fail()
{
	echo "E2E-L1-ERROR: $*"
	dmesg | tail -n 40
	poweroff -f
	sleep 60
}

# l1_load SET: insmod the modules of /lib/modules/SET.order, in order,
# each with the parameters L1's command line gives it as modprobe would
# pass them ("kvm_amd.vgif=0": MICROVM_E2E_L1_APPEND).
l1_load()
{
	read -r cmdline </proc/cmdline
	for m in $(cat "/lib/modules/$1.order"); do
		n=${m##*/} args=
		for a in $cmdline; do
			p=${a%%.*}
			[ "$p" != "$a" ] && [ "${p//-/_}" = "${n//-/_}" ] &&
				args="$args ${a#*.}"
		done
		# shellcheck disable=SC2086
		insmod "/lib/modules/$m.ko" $args || l1_fail "insmod $m.ko$args"
	done
}

# A kernel with KVM built in (MICROVM_E2E_L1_KERNEL) has /dev/kvm already.
[ -c /dev/kvm ] || l1_load kvm
[ -c /dev/kvm ] || l1_fail "no /dev/kvm after loading kvm-amd"

[ -f /e2e/run.env ] || l1_fail "no /e2e/run.env in the initramfs"
. /e2e/run.env

# E2E_DISKS: "SIZE PATH" lines; disk N is the virtio disk with serial
# e2e-shareN and holds the contents of host file PATH.
l1_disk_dev()
{
	for s in /sys/block/vd*/serial; do
		[ -f "$s" ] && [ "$(cat "$s")" = "e2e-share$1" ] &&
			{ d=${s%/serial}; echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

l1_disks()
{
	n=0
	echo "$E2E_DISKS" | while read -r size path; do
		[ -n "$path" ] || continue
		dev=$(l1_disk_dev $n) || l1_fail "no virtio disk e2e-share$n"
		if [ "$1" = in ]; then
			mkdir -p "${path%/*}"
			dd if="$dev" of="$path" bs=1M count="$size" \
				iflag=count_bytes,fullblock 2>/dev/null ||
				l1_fail "copying $dev to $path"
		else
			dd if="$path" of="$dev" bs=1M conv=notrunc 2>/dev/null ||
				l1_fail "copying $path back to $dev"
		fi
		n=$((n + 1))
	done
}

if [ -n "$E2E_DISKS" ] || [ "${E2E_BLOCKS:-0}" -gt 0 ]; then
	l1_load virtio
	# Every disk: the shared files' and run-guest's --block-file ones.
	want=$(( $(echo "$E2E_DISKS" | grep -c .) + ${E2E_BLOCKS:-0} ))
	i=0
	while [ "$(ls -d /sys/block/vd* 2>/dev/null | wc -l)" -lt "$want" ] &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	l1_disks in
fi

mkdir -p "$E2E_CWD" && cd "$E2E_CWD" || l1_fail "cd $E2E_CWD"
stty -F /dev/ttyS1 raw -echo || l1_fail "stty ttyS1"
case "$E2E_STDIN" in
tty) E2E_STDIN=/dev/ttyS1 ;;
esac

# l1_children PID: the processes whose parent is PID.
l1_children()
{
	for st in /proc/[0-9]*/status; do
		[ "$(sed -n 's/^PPid:[[:space:]]*//p' "$st" 2>/dev/null)" = "$1" ] &&
			{ p=${st%/status}; echo "${p#/proc/}"; }
	done
}

# l1_tasks PID: PID and its descendants, each thread with its kernel stack.
l1_tasks()
{
	for t in /proc/"$1"/task/*; do
		echo "task ${t##*/} ($(cat "$t/comm" 2>/dev/null))" \
			"$(sed -n 's/^State:[[:space:]]*//p' "$t/status" 2>/dev/null)" \
			"wchan=$(cat "$t/wchan" 2>/dev/null)"
		sed 's/^/    /' "$t/stack" 2>/dev/null
	done
	for c in $(l1_children "$1"); do
		l1_tasks "$c"
	done
}

l1_kill_tree()
{
	for c in $(l1_children "$1"); do
		l1_kill_tree "$c"
	done
	kill -KILL "$1" 2>/dev/null
}

# l1_watchdog SECONDS PID: tell what a command that hangs inside L1 is
# doing (a hung L1 says nothing at all), then end it.
l1_watchdog()
{
	sleep "$1"
	kill -0 "$2" 2>/dev/null || return 0
	echo "E2E-L1-HUNG: the command still ran after $1 s (L1 watchdog)"
	l1_tasks "$2"
	echo "E2E-L1-HUNG-DMESG:"
	dmesg | tail -n 40
	l1_kill_tree "$2"
}

echo "E2E-L1-START: $(cut -d' ' -f1 /proc/uptime)"
# _stext is near kallsyms' top (line 361 of 93,000); _etext, 44,000 lines
# down, took 0.3 s to reach under emulation, so the text's size comes from
# /proc/iomem's "Kernel code" range instead.
echo "E2E-L1-KTEXT: $(awk '$3 == "_stext" { print $1; exit }' /proc/kallsyms)" \
	"$(awk '/ : Kernel code$/ { print $1; exit }' /proc/iomem)"
e2e_run >/dev/ttyS1 2>/tmp/e2e-stderr <"$E2E_STDIN" &
pid=$!
(
	while sleep 15; do
		echo "E2E-L1-ALIVE: $(cut -d' ' -f1 /proc/uptime)"
	done
) &
alive=$!
wd=
if [ "${E2E_WATCHDOG:-0}" -gt 0 ]; then
	l1_watchdog "$E2E_WATCHDOG" "$pid" &
	wd=$!
fi
wait "$pid"
rc=$?
[ -z "$wd" ] || kill "$wd" 2>/dev/null
kill "$alive" 2>/dev/null
ttydrain 30 /dev/ttyS1
echo "E2E-L1-END: $(cut -d' ' -f1 /proc/uptime)"

if [ -n "$E2E_DISKS" ]; then
	l1_disks out
	sync
fi
echo "E2E-L1-STDERR-BEGIN"
cat /tmp/e2e-stderr
echo "E2E-L1-STDERR-END"
echo "E2E-L1-EXIT-STATUS: $rc"
poweroff -f
