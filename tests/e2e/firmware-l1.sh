#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The firmware boots of firmware-test.sh, where microvm runs (inside L1 in
# nested mode, which then boots once for all of them). POSIX sh. Boots the
# guest kernel from IMAGE with no initramfs, twice:
#   default: microvm --kernel K --disk IMAGE --cpus 8 (the command as a
#            user types it; mmio adds ,transport=mmio): the default
#            command line, init runs /etc/microvm/run, status 3
#   cmdline: --cpus 1 and a --cmdline whose words after "--" are the
#            command, one of them quoted with spaces, status 7
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
# boot NAME WANT ARGS...: one microvm run that must exit WANT.
boot()
{
	name=$1 want=$2
	shift 2
	tries=$((retries + 1))
	while :; do
		start=$(date +%s)
		"$microvm" "$@"
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
[ $fails -eq 0 ]
