#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Boots the project's own guest kernel and root image the way a user types
# it, with no initramfs:
#   microvm --kernel build/firmware/kernel/bzImage \
#           --disk build/firmware/rootfs/root.raw --cpus 8
# Builds microvm and the targets guest-kernel (firmware/kernel) and
# guest-rootfs (firmware/rootfs) first. The image's init finds no command
# and starts a shell on the console: type commands, 'exit N' ends the VM
# with status N. Runs on /dev/kvm when it works, else nested inside an
# emulated machine (tests/e2e/run-guest.sh). Exits with microvm's status.
#   FIRMWARE_KERNEL=PATH   boot this bzImage instead of building one
#   MICROVM_E2E_MODE=...   direct | nested | auto (default)
# Not a terminal on stdin: the shell reads its commands from there, but
# what arrives before the shell starts (about 20 s nested) is lost:
#   (sleep 60; echo 'cat /proc/cmdline; nproc; exit 3') | examples/firmware.sh
# For unattended runs put the command in the image or on the command line
# (firmware/rootfs/README.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/tests/install-deps.sh"

cmake -S "$root" -B "$build" >/dev/null
targets=(microvm guest-rootfs)
kernel=${FIRMWARE_KERNEL:-}
if [ -z "$kernel" ]; then
	targets+=(guest-kernel)
	kernel=$build/firmware/kernel/bzImage
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
"$root/tests/e2e/prepare.sh" "$build/e2e-artifacts" >/dev/null
[ -f "$kernel" ] || { echo "firmware: no kernel '$kernel'" >&2; exit 1; }

disk=$build/firmware/rootfs/root.raw
echo "firmware: microvm --kernel $kernel --disk $disk --cpus 8"
status=0
MICROVM_E2E_VERBOSE=1 "$root/tests/e2e/run-guest.sh" \
	--artifacts "$build/e2e-artifacts" --stdin - -- \
	"$build/microvm" --kernel "$kernel" --disk "$disk" --cpus 8 ||
	status=$?
echo "firmware: the guest exited with status $status"
exit "$status"
