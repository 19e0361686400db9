#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project's test command: configure with warnings as errors, build,
# and run every CTest test (unit, fuzz smoke, e2e real-guest tests, ...).
# Extra arguments go to ctest (e.g. -L unit, -R e2e.boot, -j1); a filter
# that matches no test is an error (ctest --no-tests=error). Tests run
# two at a time (MICROVM_CTEST_JOBS, default 2): one real guest and one
# host-side test at most, by resource locks (tests/lanes.cmake); a nested
# guest keeps one core busy, the host lane takes the other.
# BUILD_DIR overrides the build directory (default: build/). Missing
# Debian packages are installed first (tests/install-deps.sh).
#
# A green run means every test ran and passed. After CTest this prints
#   run-all: skipped: N          and each skipped or disabled test, with
#                                its entry of tests/expected-skips.txt or
#                                "NOT EXPECTED";
#   run-all: retries: N          and each retry a test made after an
#                                emulator failure ($build/retries.log,
#                                tests/e2e/lib.sh's e2e_count_retry);
# and fails (status 1) on any skip not on the expected list, even when
# CTest passed. The last line printed is CTest's "N% tests passed"
# summary (CI reads it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
expected=${MICROVM_EXPECTED_SKIPS:-$root/tests/expected-skips.txt}

# skip_reason NAME: the reason tests/expected-skips.txt gives for NAME
# (an entry whose glob matches and whose when: condition holds), or
# nothing and status 1.
skip_reason()
{
	local name=$1 pat cond rest var
	while read -r pat cond rest; do
		case "$pat" in '' | '#'*) continue ;; esac
		if [[ "$cond" == when:*=* ]]; then
			var=${cond#when:}
			[ "$(printenv "${var%%=*}" || true)" = "${var#*=}" ] ||
				continue
		else
			rest="$cond${rest:+ $rest}"
		fi
		# shellcheck disable=SC2053
		if [[ $name == $pat ]]; then
			echo "$rest"
			return 0
		fi
	done <"$expected"
	return 1
}

# report LOG: the skip and retry summary of a CTest log; status 1 when a
# skip is not on the expected list.
report()
{
	local log=$1 skipped name why bad=0 n
	# CTest's closing list: "  12 - name (Skipped)" / "(Disabled)",
	# after its last "N% tests passed" line only: a failed test's
	# output (a sanitizer tier's own CTest run) has lists of its own.
	skipped=$(awk '/^[0-9]+% tests passed/ { n = NR } { line[NR] = $0 }
		END { for (i = n + 1; n && i <= NR; i++) print line[i] }' "$log" |
		sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(Skipped\|Disabled\))$/\1 \2/p')
	n=$(printf '%s' "$skipped" | grep -c . || true)
	echo "run-all: skipped: $n"
	while read -r name kind; do
		[ -n "$name" ] || continue
		if why=$(skip_reason "$name"); then
			echo "run-all:   $name ($kind): expected: $why"
		else
			echo "run-all:   $name ($kind): NOT EXPECTED" \
			     "(not in ${expected#"$root"/})"
			bad=$((bad + 1))
		fi
	done <<<"$skipped"
	n=0
	[ ! -s "$build/retries.log" ] || n=$(wc -l <"$build/retries.log")
	echo "run-all: retries: $n"
	[ "$n" -eq 0 ] || sed 's/^/run-all:   /' "$build/retries.log"
	if [ $bad -gt 0 ]; then
		echo "run-all: FAIL: $bad skip(s) not on the expected list"
		return 1
	fi
}

"$root/tests/install-deps.sh"
cmake -S "$root" -B "$build" -DMICROVM_WERROR=ON
cmake --build "$build" -j "$(nproc)"

# What the expected list's when:MICROVM_HOST_KVM=none entries test:
# "hw" where /dev/kvm exists and the CPU has vmx/svm (run-guest.sh's
# direct mode can run), else "none" (a software /dev/kvm counts as none).
if [ -e /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	export MICROVM_HOST_KVM=hw
else
	export MICROVM_HOST_KVM=none
fi

status=0
rm -f "$build/retries.log"
(cd "$build" && ctest --output-on-failure --no-tests=error \
	-j "${MICROVM_CTEST_JOBS:-2}" "$@") 2>&1 |
	tee "$build/ctest.log" || status=$?
summary=$(grep -E '^[0-9]+% tests passed' "$build/ctest.log" |
	  tail -n 1 || true)
echo
report "$build/ctest.log" || { [ "$status" -ne 0 ] || status=1; }
echo "${summary:-ctest printed no summary (status $status)}"
exit "$status"
