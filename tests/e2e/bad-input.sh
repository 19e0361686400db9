#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad-input tests of the microvm command line, run on the host: each case
# must end with a non-zero status (and not by a timeout) and exactly one
# line on stderr that names the rejected value. These never need a guest
# to boot; valid parts of each command use the real test kernel.
#
# Usage: bad-input.sh --microvm BIN --artifacts DIR CASE
#        bad-input.sh --list
set -uo pipefail

CASES="missing_kernel unreadable_kernel random_kernel truncated_kernel
arm64_kernel cpus_0 cpus_1000 cpus_3_smt memory_1K memory_99999G memory_abc
unknown_option initrd_too_big no_kvm_device
disk_missing disk_directory disk_locked disk_locked_readonly disk_locked_snapshot
disk_unknown_key disk_readonly_maybe disk_queue_size_100 disk_queues_0
disk_serial_21 disk_transport_usb disk_snapshot_cache_none
disk_snapshot_readonly disk_snapshot_tmpdir_missing seccomp_maybe
seccomp_selftest_bogus console_no_dir console_directory
config_file_missing config_file_unknown_field config_file_network
config_file_smt config_file_two_roots config_file_no_boot_source
id_underscore no_api_alone net_mac_multicast net_tap_not_a_tap"

microvm=
art=
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--list) echo $CASES; exit 0 ;;
	-*) echo "bad-input: unknown option '$1'" >&2; exit 1 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] && [ -n "$microvm" ] && [ -n "$art" ] ||
	{ echo "usage: bad-input.sh --microvm BIN --artifacts DIR CASE" >&2; exit 1; }
case=$1
kernel=$art/vmlinuz
initrd=$art/l2-initrd.cpio.gz

work=$(mktemp -d "${TMPDIR:-/tmp}/bad-input.XXXXXX") || exit 1
trap 'chmod -R u+rwx "$work"; rm -rf "$work"' EXIT

env_args=()
one_line=1
# Each case sets args (the microvm command line) and patterns: every
# pattern (grep -E, case-insensitive) must match the stderr line.
case "$case" in
missing_kernel)
	args=(--kernel "$work/no-such-vmlinuz")
	patterns=("$work/no-such-vmlinuz")
	;;
unreadable_kernel)
	# root reads any file, so root gets a directory instead.
	if [ "$(id -u)" -eq 0 ]; then
		mkdir "$work/vmlinuz-dir"
		bad=$work/vmlinuz-dir
	else
		cp "$kernel" "$work/vmlinuz-noread"
		chmod 000 "$work/vmlinuz-noread"
		bad=$work/vmlinuz-noread
	fi
	args=(--kernel "$bad")
	patterns=("$bad")
	;;
random_kernel)
	head -c 65536 /dev/urandom >"$work/random.img"
	args=(--kernel "$work/random.img")
	patterns=("$work/random.img")
	;;
truncated_kernel)
	head -c 10000 "$kernel" >"$work/truncated.bzImage"
	args=(--kernel "$work/truncated.bzImage")
	patterns=("$work/truncated.bzImage")
	;;
arm64_kernel)
	# An arm64 Image header: magic "ARM\x64" at offset 0x38.
	head -c 64 /dev/zero >"$work/arm64.Image"
	printf 'ARM\x64' | dd of="$work/arm64.Image" bs=1 seek=56 \
		conv=notrunc 2>/dev/null
	args=(--kernel "$work/arm64.Image")
	patterns=("$work/arm64.Image")
	;;
cpus_0 | cpus_1000)
	n=${case#cpus_}
	args=(--kernel "$kernel" --cpus "$n")
	patterns=("cpus" "(^|[^0-9])$n([^0-9]|$)")
	;;
cpus_3_smt)
	# Firecracker's rule: SMT takes 1 or an even number of vCPUs.
	args=(--kernel "$kernel" --cpus 3,smt=on)
	patterns=("--cpus 3,smt=on" "even")
	;;
memory_*)
	v=${case#memory_}
	args=(--kernel "$kernel" --memory "$v")
	patterns=("memory" "(^|[^0-9A-Za-z])$v([^0-9A-Za-z]|$)")
	;;
disk_snapshot_tmpdir_missing)
	# The overlay goes in $TMPDIR: a missing one is named.
	truncate -s 1M "$work/disk.img"
	env_args=(TMPDIR=$work/no-such-tmp)
	args=(--kernel "$kernel" --timeout 10 --disk "$work/disk.img,snapshot=on")
	patterns=("$work/no-such-tmp" "snapshot")
	;;
seccomp_maybe)
	args=(--kernel "$kernel" --seccomp maybe)
	patterns=("--seccomp" "maybe")
	;;
seccomp_selftest_bogus)
	# Refused before the VM exists: no KVM needed.
	env_args=(MICROVM_SECCOMP_SELFTEST=bogus)
	args=(--kernel "$kernel" --timeout 10)
	patterns=("MICROVM_SECCOMP_SELFTEST" "bogus")
	;;
unknown_option)
	args=(--kernel "$kernel" --frobnicate)
	patterns=("--frobnicate")
	;;
initrd_too_big)
	# 128M holds the kernel, not a 200M initrd as well.
	truncate -s 200M "$work/big.initrd"
	args=(--kernel "$kernel" --initrd "$work/big.initrd" --memory 128M)
	patterns=("$work/big.initrd|initrd")
	;;
no_kvm_device)
	env_args=(MICROVM_KVM_DEVICE=/nonexistent)
	args=(--kernel "$kernel" --initrd "$initrd" --timeout 10)
	patterns=("/nonexistent" "nested")
	one_line=0
	;;
# Disks are opened (and locked) before the VM exists: no KVM needed. The
# --timeout keeps a run that wrongly gets as far as booting short.
# Network interfaces: a MAC the guest cannot have is refused while the
# command line is parsed; a tap is opened before the VM exists, so "lo",
# which is no tap, is refused with no KVM too.
net_mac_multicast)
	args=(--kernel "$kernel" --timeout 10 --net tap=tap0,mac=01:00:5e:00:00:01)
	patterns=("--net tap=tap0,mac=01:00:5e:00:00:01" "multicast")
	;;
net_tap_not_a_tap)
	args=(--kernel "$kernel" --timeout 10 --net tap=lo,id=eth0)
	patterns=("network interface eth0" "tap lo")
	;;
console_no_dir)
	# Opened before the VM exists: no KVM needed.
	args=(--kernel "$kernel" --timeout 10 --console "$work/no-dir/guest.log")
	patterns=("--console" "$work/no-dir/guest.log")
	;;
console_directory)
	mkdir "$work/log-dir"
	args=(--kernel "$kernel" --timeout 10 --console "$work/log-dir")
	patterns=("--console" "$work/log-dir")
	;;
# Firecracker's --config-file: refused while the command line is parsed,
# before any file but the config itself is opened. The message names the
# file and the field.
config_file_missing)
	args=(--no-api --config-file "$work/no-such.json")
	patterns=("--config-file $work/no-such.json" "cannot open")
	;;
config_file_unknown_field | config_file_network | config_file_smt | \
config_file_two_roots | config_file_no_boot_source)
	boot="\"boot-source\": {\"kernel_image_path\": \"$kernel\"}"
	root='{"drive_id": "rootfs", "path_on_host": "/r", "is_root_device": true}'
	case "$case" in
	config_file_unknown_field)
		json="{$boot, \"machine-config\": {\"vcpu_count\": 1, \"mem_size_mib\": 128, \"vcpus\": 2}}"
		patterns=("machine-config" "unknown field \"vcpus\"") ;;
	config_file_network)
		json="{$boot, \"network-interfaces\": [{\"iface_id\": \"eth0\", \"host_dev_name\": \"tap0\", \"guest_mac\": \"06:00:AC:10:00\"}]}"
		patterns=("network-interfaces\\[0\\] \"eth0\"" "guest_mac"
			"06:00:AC:10:00" "AA:BB:CC:DD:EE:FF") ;;
	config_file_smt)
		json="{$boot, \"machine-config\": {\"vcpu_count\": 3, \"mem_size_mib\": 128, \"smt\": true}}"
		patterns=("machine-config" "vcpu_count 3 with smt true"
			"1 or an even number if SMT is enabled") ;;
	config_file_two_roots)
		json="{$boot, \"drives\": [$root, ${root/rootfs/second}]}"
		patterns=("drives\\[1\\] \"second\"" "is_root_device"
			"\"rootfs\" is the root device already") ;;
	config_file_no_boot_source)
		json='{"machine-config": {"vcpu_count": 1, "mem_size_mib": 128}}'
		patterns=("no \"boot-source\"") ;;
	esac
	printf '%s\n' "$json" >"$work/vm.json"
	args=(--no-api --config-file "$work/vm.json")
	patterns+=("$work/vm.json")
	;;
id_underscore)
	args=(--id my_vm --no-api --kernel "$kernel")
	patterns=("--id my_vm" "letters, digits or '-'")
	;;
no_api_alone)
	args=(--no-api)
	patterns=("--no-api needs --config-file")
	;;
disk_missing)
	args=(--kernel "$kernel" --timeout 10 --disk "$work/no-such.img")
	patterns=("$work/no-such.img")
	;;
disk_directory)
	mkdir "$work/disk-dir"
	args=(--kernel "$kernel" --timeout 10 --disk "$work/disk-dir")
	patterns=("$work/disk-dir")
	;;
disk_locked | disk_locked_readonly | disk_locked_snapshot)
	# Another process holds an OFD write lock on the image: the
	# lockhold helper (tests/e2e/lockhold.c), whose path CTest passes.
	lockhold=${MICROVM_E2E_LOCKHOLD:-}
	[ -x "$lockhold" ] || {
		echo "bad-input: $case needs MICROVM_E2E_LOCKHOLD=PATH of" \
			"the lockhold helper (tests/e2e/lockhold.c)" >&2
		exit 1
	}
	truncate -s 1M "$work/locked.img"
	"$lockhold" "$work/locked.img" >"$work/lockhold.out" &
	holder=$!
	trap 'kill $holder 2>/dev/null; chmod -R u+rwx "$work"; rm -rf "$work"' EXIT
	for _ in $(seq 50); do
		grep -q locked "$work/lockhold.out" && break
		sleep 0.1
	done
	grep -q locked "$work/lockhold.out" ||
		{ echo "bad-input: lockhold did not take the lock" >&2; exit 1; }
	spec=$work/locked.img
	case "$case" in
	disk_locked_readonly) spec+=,readonly=on ;;
	# A snapshot takes a read lock only, which a writer still excludes.
	disk_locked_snapshot) spec+=,snapshot=on ;;
	esac
	args=(--kernel "$kernel" --timeout 10 --disk "$spec")
	patterns=("$work/locked.img" "lock")
	;;
disk_unknown_key | disk_readonly_maybe | disk_queue_size_100 | \
disk_queues_0 | disk_serial_21 | disk_transport_usb | \
disk_snapshot_cache_none | disk_snapshot_readonly)
	truncate -s 1M "$work/disk.img"
	case "$case" in
	disk_unknown_key) kv=frobnicate=1; patterns=("frobnicate") ;;
	disk_readonly_maybe) kv=readonly=maybe; patterns=("readonly" "maybe") ;;
	disk_queue_size_100) kv=queue-size=100
		patterns=("queue-size" "(^|[^0-9])100([^0-9]|$)") ;;
	disk_queues_0) kv=queues=0; patterns=("queues" "=0([^0-9]|$)") ;;
	disk_serial_21) kv=serial=abcdefghijklmnopqrstu
		patterns=("abcdefghijklmnopqrstu") ;;
	disk_transport_usb) kv=transport=usb; patterns=("transport" "usb") ;;
	disk_snapshot_cache_none) kv=snapshot=on,cache=none
		patterns=("snapshot=on" "cache=none") ;;
	disk_snapshot_readonly) kv=snapshot=on,readonly=on
		patterns=("snapshot=on" "readonly=on") ;;
	esac
	args=(--kernel "$kernel" --timeout 10 --disk "$work/disk.img,$kv")
	;;
*)
	echo "bad-input: unknown case '$case' (cases: $(echo $CASES))" >&2
	exit 1
	;;
esac

# The loader checks the kernel and initrd once the VM exists (their
# placement depends on it), so with no KVM device at all these cases meet
# the "no /dev/kvm" refusal first and cannot test what they name: skip
# (77, on tests/expected-skips.txt for hosts without hardware KVM); a
# software /dev/kvm runs them. unit.test_boot and fuzz_boot test the same
# refusals with no KVM.
case "$case" in
random_kernel | truncated_kernel | arm64_kernel | initrd_too_big)
	dev=${MICROVM_KVM_DEVICE:-/dev/kvm}
	if [ ! -e "$dev" ]; then
		echo "bad-input: SKIP: $case: no $dev; the loader's refusal" \
			"comes after the VM is made"
		exit 77
	fi
	;;
esac

echo "bad-input: $case: ${env_args[*]} $microvm ${args[*]}"
env "${env_args[@]}" timeout -k 5 60 "$microvm" "${args[@]}" \
	</dev/null >"$work/out" 2>"$work/err"
status=$?
echo "bad-input: status $status; stderr:"
cat "$work/err"

fails=0
fail()
{
	echo "bad-input: FAIL: $*"
	fails=$((fails + 1))
}
[ $status -ne 0 ] || fail "exit status 0 for bad input"
[ $status -ne 124 ] && [ $status -ne 137 ] ||
	fail "did not end by itself (status $status)"
[ $status -lt 128 ] || fail "killed by signal $((status - 128))"
lines=$(grep -c . "$work/err")
if [ "$lines" -eq 0 ]; then
	fail "nothing on stderr"
elif [ $one_line -eq 1 ] && [ "$lines" -ne 1 ]; then
	fail "$lines lines on stderr, expected one"
fi
for p in "${patterns[@]}"; do
	grep -qiE -- "$p" "$work/err" || fail "stderr does not match '$p'"
done
[ $fails -eq 0 ] || exit 1
echo "bad-input: PASS"
