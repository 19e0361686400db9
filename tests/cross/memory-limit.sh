#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The arm64 microvm refuses a --memory its guest memory map cannot hold
# (510G: RAM from 1 GiB below the device hole, then from 4 GiB up to the
# 64-bit PCI window at 512 GiB) with one line naming the value and status
# 1, before it opens /dev/kvm, so it runs under qemu-user. 510G itself
# must get past that check (it then fails on the host's RAM or KVM).
# Usage: memory-limit.sh MICROVM [EMULATOR...]
set -u
vmm=$1
shift
fail()
{
	echo "memory-limit: FAIL: $*"
	exit 1
}
run()
{
	out=$("$@" "$vmm" --kernel /nonexistent --memory "$size" 2>&1)
	rc=$?
	echo "--memory $size: status $rc: $out"
}
size=600G
run "$@"
[ $rc -eq 1 ] || fail "status $rc, want 1"
echo "$out" | grep -q -- "--memory 600G: .*510G" ||
	fail "the message does not name 600G and the 510G bound"
[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "more than one line"
size=510G
run "$@"
echo "$out" | grep -q "memory map" && fail "510G refused by the map check"
echo "memory-limit: PASS"
