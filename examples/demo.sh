#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The first thing to run: installs what is missing (Debian/Ubuntu), builds
# microvm, fetches Debian's cloud kernel, and boots it with a busybox
# initramfs on 2 vCPUs, showing the guest console. Runs on /dev/kvm when
# it works, else nested inside an emulated machine (slower; see
# tests/e2e/README.md). Exits with the guest's exit status.
#   DEMO_SHELL=1          an interactive guest shell instead ('exit' ends it)
#   MICROVM_E2E_MODE=...  direct | nested | auto (default)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
art=$build/e2e-artifacts
"$root/tests/install-deps.sh"

cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)" --target microvm
"$root/tests/e2e/prepare.sh" "$art"

test=demo
stdin=/dev/null
if [ "${DEMO_SHELL:-0}" = 1 ]; then
	test=shell
	stdin=-
fi
echo "demo: booting the Debian cloud kernel on 2 vCPUs"
status=0
MICROVM_E2E_VERBOSE=1 "$root/tests/e2e/run-guest.sh" --artifacts "$art" \
	--stdin "$stdin" -- "$build/microvm" \
	--kernel "$art/vmlinuz" --initrd "$art/l2-initrd.cpio.gz" \
	--cpus 2 --memory 512M \
	--cmdline "console=ttyS0 quiet panic=-1 microvm.test=$test" || status=$?
echo "demo: the guest exited with status $status"
exit "$status"
