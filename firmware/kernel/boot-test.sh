#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Proves the project's guest kernel boots under microvm: a tiny busybox
# initramfs whose /init prints what it finds (console, nproc, the virtio
# disk and the transport it sits on, ext4 on it, kvm-clock, TSC-deadline,
# sysrq, /dev/mem) as "KCHECK:" lines, then ends the guest with ACPI
# power-off (or the exit device through /dev/mem). Runs through
# tests/e2e/run-guest.sh, so it works direct or nested.
#
# Usage: boot-test.sh --microvm BIN --kernel-dir DIR [--artifacts DIR]
#                     [--cpus N] [RUN...]
#   RUN: IMAGE:TRANSPORT[:END], IMAGE bzImage|vmlinux, TRANSPORT pci|mmio,
#   END poweroff (default; microvm must exit 0), exit:N (busybox devmem
#   writes N to the exit device; microvm must exit N) or diskroot (no
#   initramfs: the same /init on the ext4 disk, root=/dev/vda; exit 0).
#   Default runs: bzImage:pci vmlinux:mmio bzImage:mmio:exit:7 vmlinux:pci
#   bzImage:pci:diskroot vmlinux:mmio:diskroot
# Exit status: 0 every run passed; 1 a run failed; 77 cannot run here.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
e2e=$here/../../tests/e2e
# shellcheck source=../../tests/e2e/lib.sh
. "$e2e/lib.sh"
microvm=
kdir=
art=
cpus=8
runs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--kernel-dir) kdir=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	-*) echo "boot-test: unknown option '$1'" >&2; exit 1 ;;
	*) runs+=("$1"); shift ;;
	esac
done
[ -x "$microvm" ] || { echo "boot-test: no microvm binary at '$microvm'" >&2; exit 1; }
for f in bzImage vmlinux; do
	[ -f "$kdir/$f" ] ||
		{ echo "boot-test: no $kdir/$f (run firmware/kernel/build.sh)" >&2; exit 1; }
done
[ ${#runs[@]} -gt 0 ] ||
	runs=(bzImage:pci vmlinux:mmio bzImage:mmio:exit:7 vmlinux:pci
	      bzImage:pci:diskroot vmlinux:mmio:diskroot)
e2e_static_busybox boot-test
command -v mkfs.ext4 >/dev/null ||
	{ echo "boot-test: no mkfs.ext4 (e2fsprogs)" >&2; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The initramfs: busybox and an /init; no modules (the kernel has none).
root=$tmp/initrd
e2e_busybox_tree "$root" || { echo "boot-test: cannot make $root" >&2; exit 1; }
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
export PATH=/bin
mount -t proc proc /proc
# On a disk root the kernel has mounted devtmpfs itself (DEVTMPFS_MOUNT).
grep -q '^devtmpfs /dev ' /proc/mounts && echo "KCHECK: devtmpfs mounted by the kernel"
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo "KCHECK: root $(awk '$2 == "/" { d = $1 } END { print d }' /proc/mounts)"
param() { for w in $(cat /proc/cmdline); do case $w in kt.$1=*) echo "${w#*=}";; esac; done; }
echo "KCHECK: console"
echo "KCHECK: release $(uname -r)"
echo "KCHECK: nproc $(nproc)"
echo "KCHECK: cmdline $(cat /proc/cmdline)"
if [ -b /dev/vda ]; then
	echo "KCHECK: vda sectors $(cat /sys/block/vda/size)"
	echo "KCHECK: vda path $(readlink -f /sys/block/vda)"
	echo "KCHECK: vda queues $(ls /sys/block/vda/mq | wc -l)"
	mount -t ext4 -o ro /dev/vda /mnt &&
		echo "KCHECK: ext4 $(cat /mnt/hello)" && umount /mnt
fi
echo "KCHECK: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
grep -qw tsc_deadline_timer /proc/cpuinfo && echo "KCHECK: tsc_deadline_timer"
dmesg | grep -q 'TSC deadline timer' && echo "KCHECK: lapic tsc-deadline in use"
[ -w /proc/sysrq-trigger ] && echo "KCHECK: sysrq-trigger"
[ -c /dev/mem ] && echo "KCHECK: /dev/mem"
dmesg | grep -E 'ACPI Error|ACPI BIOS Error|FW_BUG|Firmware Bug|BUG:|WARNING:|Oops' |
	sed 's/^/KCHECK: bad dmesg: /'
echo "KCHECK: done"
end=$(param end)
case "$end" in
exit:*) devmem 0xf0100000 8 "${end#exit:}" ;;
*) poweroff -f ;;
esac
sleep 5
echo "KCHECK: end action '$end' did not stop the VM"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz"

# The disk: a marker file, and the same busybox and /init for the runs
# that boot from it with no initramfs.
cp -a "$root" "$tmp/diskroot"
echo "hello-from-vda" >"$tmp/diskroot/hello"
mkfs.ext4 -q -F -d "$tmp/diskroot" "$tmp/disk.raw" 16M >/dev/null ||
	{ echo "boot-test: mkfs.ext4 failed" >&2; exit 1; }

fails=0
fail()
{
	echo "FAIL $run: $*"
	fails=$((fails + 1))
}

# where_vcpus FILE: the kernel function each "vCPU N: rip X" line of FILE
# (microvm logs them after --timeout) points into, from vmlinux's symbols
# (the kernel has no KASLR, so bzImage runs at the same addresses).
where_vcpus()
{
	local syms=$tmp/vmlinux.syms
	[ -s "$syms" ] || nm -n "$kdir/vmlinux" 2>/dev/null |
		awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' >"$syms"
	grep -ao 'vCPU [0-9]*: rip [0-9a-f]*' "$1" | while read -r _ n _ rip; do
		awk -v n="${n%:}" -v rip="$rip" '
			function hex(s,  i, v) {
				v = 0; s = tolower(s)
				for (i = 1; i <= length(s); i++)
					v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v
			}
			# Kernel text is at ffffffff8xxxxxxx: the low 32 bits
			# compare exactly (awk numbers are doubles).
			BEGIN { r = hex(substr(rip, length(rip) - 7)) }
			length($1) == 16 && substr($1, 1, 8) == "ffffffff" {
				a = hex(substr($1, 9))
				if (a > r) exit
				best = $2; off = r - a
			}
			END { printf "vCPU %s at %s+0x%x\n", n, best ? best : "?", off }' "$syms"
	done
}

# want PATTERN WHAT: the console holds a line matching the grep -E PATTERN.
want()
{
	grep -qE -- "$1" "$tmp/console" || fail "$2"
}

for run in "${runs[@]}"; do
	IFS=: read -r image transport end status <<<"$run"
	case "$end" in
	exit) end=exit:$status; want_rc=$status ;;
	'' | poweroff | diskroot) want_rc=0 ;;
	*) echo "boot-test: bad run '$run'" >&2; exit 1 ;;
	esac
	marker=kt$RANDOM$RANDOM
	cmdline="console=ttyS0 panic=-1 kt.end=${end:-poweroff} kt.marker=$marker"
	args=(--kernel "$kdir/$image" --cpus "$cpus" --memory 512M
	      --disk "$tmp/disk.raw,readonly=on,transport=$transport" --timeout 240)
	if [ "$end" = diskroot ]; then
		args+=(--cmdline "$cmdline root=/dev/vda ro rootfstype=ext4 init=/init")
	else
		args+=(--initrd "$tmp/initrd.gz" --cmdline "$cmdline")
	fi
	echo "=== $run: microvm ${args[*]}"
	for try in 1 2; do
		MICROVM_E2E_VERBOSE=1 "$e2e/run-guest.sh" ${art:+--artifacts "$art"} \
			--timeout 600 -- "$microvm" "${args[@]}" \
			>"$tmp/console.raw" 2>"$tmp/stderr"
		rc=$?
		# Booted again once, and only for a failure of the emulated
		# machines, on lib.sh's evidence: L1 died or fell silent, L1's
		# kernel reported a lockup or stall, or microvm's vCPU dump
		# after --timeout shows KVM itself lost a wakeup.
		[ $try -eq 1 ] && e2e_emulator_failure "$tmp/stderr" $rc || break
		tail -n 20 "$tmp/stderr"
		where_vcpus "$tmp/stderr"
		e2e_count_retry boot-test "$run: nested-mode emulator failure (status $rc); booting again"
	done
	tr -d '\r' <"$tmp/console.raw" >"$tmp/console"
	grep -a 'KCHECK:' "$tmp/console"
	if [ $rc -eq 77 ]; then
		cat "$tmp/stderr" >&2
		exit 77
	fi
	if [ $rc -ne "$want_rc" ]; then
		fail "microvm exit status $rc, expected $want_rc"
		tail -n 40 "$tmp/stderr"
		where_vcpus "$tmp/stderr"
		tail -n 40 "$tmp/console"
	fi
	want '^KCHECK: console' "no console output from /init"
	want "^KCHECK: nproc $cpus\$" "nproc is not $cpus"
	want "^KCHECK: cmdline .*kt.marker=$marker" "no command line marker"
	want '^KCHECK: ext4 hello-from-vda' "/dev/vda missing or its ext4 unreadable"
	case "$transport" in
	pci) want '^KCHECK: vda path .*/pci0000:00/' "vda not on virtio-pci" ;;
	mmio) want '^KCHECK: vda path .*LNRO0005' "vda not on an ACPI LNRO0005 virtio-mmio device" ;;
	esac
	want '^KCHECK: clocksource kvm-clock' "clocksource is not kvm-clock"
	want '^KCHECK: tsc_deadline_timer' "no tsc_deadline_timer"
	want '^KCHECK: sysrq-trigger' "no /proc/sysrq-trigger"
	want '^KCHECK: /dev/mem' "no /dev/mem"
	want '^KCHECK: done' "/init did not finish"
	if [ "$end" = diskroot ]; then
		want '^KCHECK: root /dev/root$|^KCHECK: root /dev/vda$' "/ is not the virtio disk"
		want '^KCHECK: devtmpfs mounted by the kernel' "the kernel did not mount devtmpfs on /dev"
	else
		want '^KCHECK: root rootfs$' "/ is not the initramfs"
	fi
	if grep -q '^KCHECK: bad dmesg' "$tmp/console"; then
		fail "kernel complained (bad dmesg lines above)"
	fi
	echo "--- $run: status $rc, $(grep -ac 'KCHECK:' "$tmp/console") check lines"
done
if [ $fails -ne 0 ]; then
	echo "boot-test: $fails failure(s)"
	exit 1
fi
echo "boot-test: all ${#runs[@]} run(s) passed"
