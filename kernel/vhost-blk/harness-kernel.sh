#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prints the kernel version the nested harness's L1 runs: what
# tests/e2e/prepare.sh recorded in ARTIFACTS/kernel.stamp, else the one it
# would download (the package linux-image-cloud-amd64 depends on, as
# prepare.sh picks it). Prints nothing when neither is known.
# Usage: harness-kernel.sh [ARTIFACTS]
art=${1:-}
if [ -n "$art" ] && [ -s "$art/kernel.stamp" ]; then
	head -n 1 "$art/kernel.stamp"
	exit 0
fi
apt-cache depends linux-image-cloud-amd64 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' | head -n 1
