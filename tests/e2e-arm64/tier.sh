#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Usage: tier.sh COMMAND [ARGS...]: runs COMMAND, the arm64 tier's tests
# beyond the two disk tests, unless MICROVM_E2E_ARM64=quick; then it exits
# 77, which CTest reports as a skip, with a line saying why. Every CI run
# has the whole tier: about 190 s more than the disk tests alone, on the
# second guest lane (tests/README.md has the times).
if [ "${MICROVM_E2E_ARM64:-}" = quick ]; then
	echo "tier: SKIP: MICROVM_E2E_ARM64=quick runs only the arm64 disk tests"
	exit 77
fi
exec "$@"
