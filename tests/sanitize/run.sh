#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One sanitizer build and its tests (see tests.cmake beside this file).
# Usage: run.sh asan|tsan|asan-microvm SOURCE_DIR BUILD_DIR C_COMPILER
# asan-microvm builds only the ASan+UBSan microvm binary, for real guests.
# MICROVM_JOBS: compilers at once (default nproc; CTest's host lane sets 1,
# tests/lanes.cmake).
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: run.sh asan|tsan SRC BUILD CC" >&2; exit 2; }
kind=$1 src=$2 build=$3 cc=$4

case $kind in
asan|asan-microvm)
	flags=(-DMICROVM_SANITIZE=ON)
	select=(-L 'unit|crash')
	# Any report fails its test: UBSan does not recover, ASan halts,
	# leaks are reported at exit.
	export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	;;
tsan)
	flags=(-DMICROVM_TSAN=ON)
	select=(-L threads)
	export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
	;;
*)
	echo "run.sh: unknown sanitizer '$kind' (asan or tsan)" >&2
	exit 2
	;;
esac

cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DMICROVM_WERROR=ON \
	-DMICROVM_SANITIZE_TIER=OFF "${flags[@]}" >"$build.configure.log" 2>&1 || {
	cat "$build.configure.log"
	exit 1
}
if [ "$kind" = asan-microvm ]; then
	exec cmake --build "$build" -j "${MICROVM_JOBS:-$(nproc)}" --target microvm
fi
# Build only what the selected tests run: unit.test_X (and its tmpfs
# run, unit.test_X_shm) runs target test_X; the crash tier's tests all
# run crash_blk.
mapfile -t targets < <(cd "$build" && ctest -N "${select[@]}" |
	sed -n -e 's/^ *Test *#[0-9]*: unit\.\(test_[a-z0-9_]*\)$/\1/p' \
	       -e 's/^ *Test *#[0-9]*: crash\..*$/crash_blk/p' |
	sed 's/_shm$//' | sort -u)
if [ ${#targets[@]} -eq 0 ]; then
	echo "run.sh: no tests selected by ${select[*]}" >&2
	exit 1
fi
echo "run.sh: $kind build of ${#targets[@]} test programs: ${targets[*]}"
cmake --build "$build" -j "${MICROVM_JOBS:-$(nproc)}" --target "${targets[@]}"
cd "$build"
exec ctest --output-on-failure "${select[@]}"
