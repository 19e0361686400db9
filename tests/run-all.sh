#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project's test command: configure with warnings as errors, build,
# and run every CTest test (unit, fuzz smoke, e2e real-guest tests, ...).
# Extra arguments go to ctest (e.g. -L unit, -R e2e.boot, -j1). Tests run
# two at a time (MICROVM_CTEST_JOBS, default 2): one real guest and one
# host-side test at most, by resource locks (tests/lanes.cmake); a nested
# guest keeps one core busy, the host lane takes the other.
# BUILD_DIR overrides the build directory (default: build/). Missing
# Debian packages are installed first (tests/install-deps.sh).
# The last line printed is CTest's "N% tests passed" summary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/tests/install-deps.sh"
cmake -S "$root" -B "$build" -DMICROVM_WERROR=ON
cmake --build "$build" -j "$(nproc)"

status=0
(cd "$build" && ctest --output-on-failure -j "${MICROVM_CTEST_JOBS:-2}" "$@") 2>&1 |
	tee "$build/ctest.log" || status=$?
summary=$(grep -E '^[0-9]+% tests passed' "$build/ctest.log" |
	  tail -n 1 || true)
echo
echo "${summary:-ctest printed no summary (status $status)}"
exit "$status"
