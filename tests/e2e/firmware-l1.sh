#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The firmware boots of firmware-test.sh, where microvm runs (inside L1 in
# nested mode, which then boots once for all of them). POSIX sh. Boots the
# guest kernel from IMAGE with no initramfs, three times:
#   default: microvm --kernel K --disk IMAGE --cpus 8 (the command as a
#            user types it; mmio adds ,transport=mmio): the default
#            command line, init runs /etc/microvm/run, status 3
#   cmdline: --cpus 1 and a --cmdline whose words after "--" are the
#            command, one of them quoted with spaces, status 7
#   panic:   --cpus 2, panic=-1, root read-only, the command
#            "echo c > /proc/sysrq-trigger": the guest's pvpanic driver
#            (built into the project's kernel) must end microvm with the
#            panic status 122 and its "guest panicked" line (without the
#            device the panic would reboot: status 0). Its console and
#            stderr are kept out of the test's output (the panic trace would
#            read as a failure there); "FW-PANIC: ok" or "FW-PANIC: FAIL why"
# Prints "FW-RUN: NAME status S in T s" after each. In nested L1 only, a
# run that the emulator broke (triple fault 123, --timeout 124) boots
# once more after a "FW-RUN-RETRY:" line. Exit 0 when both gave their
# status, else 1.
#
# Usage: firmware-l1.sh MICROVM KERNEL IMAGE pci|mmio TOKEN
set -u
[ $# -eq 5 ] || { echo "usage: $0 MICROVM KERNEL IMAGE pci|mmio TOKEN" >&2; exit 2; }
microvm=$1 kernel=$2 image=$3 transport=$4 token=$5
disk=$image
[ "$transport" = pci ] || disk=$image,transport=$transport
retries=0
[ -f /e2e/run.env ] && retries=1

fails=0
# boot NAME WANT ARGS...: one microvm run that must exit WANT; its console
# and stderr go to $boot_out and $boot_err when those are set.
boot()
{
	name=$1 want=$2
	shift 2
	tries=$((retries + 1))
	while :; do
		start=$(date +%s)
		if [ -n "${boot_out:-}" ]; then
			"$microvm" "$@" >"$boot_out" 2>"$boot_err"
		else
			"$microvm" "$@"
		fi
		st=$?
		echo "FW-RUN: $name status $st in $(( $(date +%s) - start )) s"
		tries=$((tries - 1))
		case "$st" in
		123 | 124) [ $tries -gt 0 ] || break ;;
		*) break ;;
		esac
		echo "FW-RUN-RETRY: $name status $st (emulator), booting again"
	done
	[ "$st" = "$want" ] || fails=$((fails + 1))
}

boot default 3 --kernel "$kernel" --disk "$disk" --cpus 8 --timeout 150
boot cmdline 7 --kernel "$kernel" --disk "$disk" --cpus 1 --timeout 150 \
	--cmdline "console=ttyS0 root=/dev/vda rw microvm.fw=$token -- /etc/microvm/run 1 $transport \"$token and spaces\" 7"
tmp=${TMPDIR:-/tmp}
boot_out=$tmp/fw-panic.out boot_err=$tmp/fw-panic.err
boot panic 122 --kernel "$kernel" --disk "$disk" --cpus 2 --timeout 150 \
	--cmdline "console=ttyS0 root=/dev/vda ro panic=-1 -- /bin/sh -c \"echo c > /proc/sysrq-trigger\""
if ! grep -q 'microvm: guest panicked (pvpanic)' "$tmp/fw-panic.err"; then
	echo "FW-PANIC: FAIL no 'guest panicked (pvpanic)' line; stderr:"
	tail -n 5 "$tmp/fw-panic.err"
	fails=$((fails + 1))
elif ! tr -d '\r' <"$tmp/fw-panic.out" | grep -q 'Kernel panic - not syncing'; then
	echo "FW-PANIC: FAIL the console shows no kernel panic; its end:"
	tail -n 5 "$tmp/fw-panic.out"
	fails=$((fails + 1))
else
	echo "FW-PANIC: ok"
fi
[ $fails -eq 0 ]
