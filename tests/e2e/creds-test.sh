#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guest's I/O is bound by the credentials of the user who runs microvm,
# under both engines (SECURITY.md, "engine=vhost"). One nested boot: in L1
# (creds-l1.sh, wrapped by vhost-l1.sh, which loads the vhost-blk module
# KO and unloads it after) an ext2 with half its blocks reserved for root;
# uid 1000 fills a file there to learn its own space, then runs microvm as
# uid 1000 on a sparse image larger than that space, once with
# engine=io_uring and once with engine=vhost, the guest writing over its
# whole disk (guest/creds-init.sh). Checks, per engine: microvm exits 0;
# the guest's writes fail with an I/O error (not at the disk's end) within
# --slack of the user's own ENOSPC, the guest kernel logging the failed
# sector; root's reserved blocks still free afterwards; and the two
# engines stop within --slack of each other. Under a module whose workers
# write as root, the vhost guest writes its whole disk into the reserve.
#
# Usage: creds-test.sh --microvm BIN --artifacts DIR --vhost KO
#                      [--slack BYTES]
#   --slack BYTES  allowed distance between the stops (default 1 MiB)
# Exit: 0 pass, 1 fail, 77 skipped (no nested harness, or no KO built
# for the L1 kernel).
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$E2E_DIR/lib.sh"
MIB=1048576

microvm=
art=
vhost_ko=
slack=$MIB
while [ $# -gt 0 ]; do
	case "$1" in
	--microvm) microvm=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--vhost) vhost_ko=$2; shift 2 ;;
	--slack) slack=$2; shift 2 ;;
	*) echo "creds-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$microvm" ] && [ -n "$art" ] && [ -n "$vhost_ko" ] || {
	echo "creds-test: --microvm, --artifacts and --vhost are required" >&2
	exit 1
}
[[ "$slack" =~ ^[0-9]+$ ]] ||
	{ echo "creds-test: --slack must be a byte count, not '$slack'" >&2; exit 1; }
art=$(cd "$art" && pwd -P) || exit 1
microvm=$(realpath "$microvm") || exit 1
e2e_vhost_wrap creds-test "$art" "$vhost_ko"

work=$(mktemp -d "${TMPDIR:-/tmp}/creds-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/extra"
cp "$E2E_DIR/guest/creds-init.sh" "$work/extra/init" &&
	chmod 755 "$work/extra/init" &&
	cp "$art/l2-initrd.cpio.gz" "$work/initrd.cpio.gz" &&
	(cd "$work/extra" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip >>"$work/initrd.cpio.gz" ||
	{ echo "creds-test: building the guest initramfs failed"; exit 1; }

run_guest()
{
	local start=$SECONDS
	MICROVM_E2E_VERBOSE=1 "$E2E_DIR/run-guest.sh" --mode nested \
		--artifacts "$art" --timeout 600 -- "${vhost_wrap[@]}" \
		/bin/sh "$E2E_DIR/creds-l1.sh" --microvm "$microvm" \
		--kernel "$art/vmlinuz" --initrd "$work/initrd.cpio.gz" \
		2> >(tee "$work/stderr" >&2) | tee "$work/out"
	status=${PIPESTATUS[0]}
	wait
	echo "creds-test: exit status $status after $((SECONDS - start)) s"
}
e2e_boot creds-test "$work/stderr"
[ "$status" -ne 77 ] || exit 77

fails=0
fail()
{
	echo "creds-test: FAIL: $*"
	fails=$((fails + 1))
}
[ "$status" -eq 0 ] || fail "L1's script exited $status"
grep -q '^CREDS: FAIL' "$work/out" && fail "$(grep -m 1 '^CREDS: FAIL' "$work/out")"
grep -q '^CREDS: done$' "$work/out" || fail "no 'CREDS: done' from L1"

# field LINE-REGEX KEY: the value of KEY= on the first CREDS line matching.
field()
{
	grep -m 1 -E "^CREDS: $1" "$work/out" | tr ' ' '\n' |
		sed -n "s/^$2=//p"
}
# num VALUE: VALUE when it is a number, else -1.
num()
{
	[[ "$1" =~ ^[0-9]+$ ]] && echo "$1" || echo -1
}
bsize=$(num "$(field fs bsize)")
reserve=$(($(num "$(field fs bfree)") - $(num "$(field fs bavail)")))
user=$(num "$(field user bytes)")
echo "creds-test: file system: ${bsize:-?}-byte blocks, $reserve reserved" \
	"for root; uid 1000 wrote ${user:-?} bytes before ENOSPC"
[ "$user" -gt 0 ] && [ "$bsize" -gt 0 ] && [ "$reserve" -gt 0 ] ||
	fail "no user fill or no reserve measured"
declare -A stop
for engine in io_uring vhost; do
	l="engine=$engine "
	st=$(field "$l" status)
	rc=$(field "$l" dd-status)
	rec=$(field "$l" records-out)
	err=$(field "$l" error)
	sector=$(field "$l" ioerr-sector)
	bfree=$(num "$(field "$l" bfree)")
	full=$(num "${rec%%+*}")
	bytes=$((full * 65536))
	stop[$engine]=$bytes
	echo "creds-test: $engine: microvm status ${st:-?}, guest dd status" \
		"${rc:-?} after ${rec:-?} 64 KiB records ($bytes bytes)," \
		"error '${err:-?}', first I/O error at sector ${sector:-?}," \
		"root's free blocks after: ${bfree:-?} (reserve $reserve)"
	[ "$st" = 0 ] || fail "$engine: microvm exited ${st:-?}, expected 0"
	[ "$rc" = 1 ] && [ "$err" = Input/output_error ] ||
		fail "$engine: the guest's dd ended with status ${rc:-?}," \
			"'${err:-?}', not an I/O error"
	[[ "$sector" =~ ^[0-9]+$ ]] ||
		fail "$engine: no I/O error on vda in the guest's kernel log"
	d=$((bytes - user))
	[ "$bytes" -ge 0 ] && [ "${d#-}" -le "$slack" ] ||
		fail "$engine: the guest wrote $bytes bytes, uid 1000 itself" \
			"$user: more than $slack apart"
	[ "$bfree" -ge 0 ] &&
	[ $((bfree * bsize)) -ge $((reserve * bsize - slack)) ] ||
		fail "$engine: ${bfree:-?} blocks free after the run, the" \
			"reserve is $reserve: the guest wrote into root's reserve"
done
d=$((stop[io_uring] - stop[vhost]))
[ "${d#-}" -le "$slack" ] ||
	fail "the engines stopped ${d#-} bytes apart (io_uring" \
		"${stop[io_uring]}, vhost ${stop[vhost]})"

if [ "$fails" -gt 0 ]; then
	echo "creds-test: $fails check(s) failed"
	exit 1
fi
echo "creds-test: PASS (uid 1000 $user bytes, guest io_uring" \
	"${stop[io_uring]}, vhost ${stop[vhost]})"
