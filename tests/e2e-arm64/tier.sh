#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Usage: tier.sh COMMAND [ARGS...]: runs COMMAND only in the full arm64
# tier (MICROVM_E2E_ARM64=full); otherwise exits 77, which CTest reports
# as a skip, with a line saying why. Every CI run has the arm64 disk tests
# (1 and 2 vCPUs: boot, CPUs online, a disk on each transport, poweroff
# status 0); the rest of the tier costs as much again under emulation
# (tests/README.md has the times) and runs on request.
if [ "${MICROVM_E2E_ARM64:-}" != full ]; then
	echo "tier: SKIP: in the full arm64 tier only; MICROVM_E2E_ARM64=full runs it"
	exit 77
fi
exec "$@"
