#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages (debian/, issue 25), built and used as a user gets
# them: copies the working tree (tracked and untracked-not-ignored files,
# so uncommitted changes are tested too) into a temporary directory, runs
# `dpkg-buildpackage -us -uc` there (source and binaries, no tests),
# lintian on the .changes (any error or warning not overridden fails),
# installs microvm_*.deb with dpkg into a throwaway root (dpkg --root,
# an empty database of its own) and checks its files, its
# `microvm --version` (the version of CMakeLists.txt's project()), the man
# page (groff, no warnings) and the bash completion; then builds
# vhost_blk.ko with DKMS from the unpacked vhost-blk-dkms_*.deb for the
# nested harness's L1 kernel (vermagic that of L1's vhost.ko), and boots
# with the installed microvm the demo guest (examples/demo.sh's) and the
# test guest on an engine=vhost disk served by that module
# (tests/e2e/disk-test.sh --vhost, virtio-mmio).
#
# Usage: package-test.sh --source DIR --artifacts DIR [--stage S]
#                        [--out DIR] [--keep]
#   --source DIR     the source tree (a git work tree)
#   --artifacts DIR  what tests/e2e/prepare.sh made (the e2e fixture)
#   --stage S        all (default); build: everything but the boot, the
#                    installed package and the module left in --out; boot:
#                    only the boot, from what a build stage left in --out
#                    (CTest runs the two as package.build on the host lane
#                    and package.boot on the guest lane)
#   --out DIR        where the build stage leaves root/ (the installed
#                    microvm package) and vhost_blk.ko
#   --keep           leave the temporary directory (its path is printed)
# Exit: 0 pass, 1 fail, 77 skipped (a build tool, the L1 kernel's headers
# or linux-source-6.1 missing, or no way to run a guest here).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=
art=
keep=0
stage=all
out=
while [ $# -gt 0 ]; do
	case "$1" in
	--source) src=$2; shift 2 ;;
	--artifacts) art=$2; shift 2 ;;
	--stage) stage=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) echo "package-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -n "$src" ] && [ -n "$art" ] ||
	{ echo "package-test: --source and --artifacts are required" >&2; exit 1; }
case $stage in
all) ;;
build|boot) [ -n "$out" ] || { echo "package-test: --stage $stage needs --out" >&2; exit 1; }
	mkdir -p "$out" || exit 1 ;;
*) echo "package-test: --stage '$stage': all, build or boot" >&2; exit 1 ;;
esac

failed=0
pass() { echo "package-test: PASS $*"; }
fail() { echo "package-test: FAIL $*"; failed=1; }
skip()
{
	echo "package-test: SKIP: $*"
	# A failure before the skip is still a failure.
	[ "$failed" = 0 ] || exit 1
	exit 77
}
die() { echo "package-test: FAIL $*"; exit 1; }
# step NAME CMD...: runs CMD, its output in $work/NAME.log, and prints
# how long it took.
step()
{
	local name=$1 t0 rc
	shift
	t0=$(date +%s.%N)
	"$@" >"$work/$name.log" 2>&1
	rc=$?
	printf 'package-test: %s took %.1f s (exit %d)\n' "$name" \
		"$(echo "$(date +%s.%N) - $t0" | bc)" "$rc"
	return $rc
}

# The demo guest (examples/demo.sh's: Debian's cloud kernel and the test
# initramfs on 2 vCPUs) booted by the installed microvm; then a guest
# whose disks are engine=vhost, served by the DKMS-built module in L1.
boot_guest()
{
	local rc status
	# The e2e tests' retry rule (lib.sh's e2e_boot): the demo boots again
	# when it failed on evidence against the emulator, each time counted.
	# shellcheck source=../e2e/lib.sh
	. "$src/tests/e2e/lib.sh"
	run_guest()
	{
		step demo "$src/tests/e2e/run-guest.sh" --artifacts "$art" -- \
			"$root/usr/bin/microvm" --kernel "$art/vmlinuz" \
			--initrd "$art/l2-initrd.cpio.gz" --cpus 2 --memory 512M \
			--cmdline "console=ttyS0 quiet panic=-1 microvm.test=demo"
		status=$?
	}
	e2e_boot package-test "$work/demo.log"
	rc=$status
	sed 's/^/package-test: demo: /' "$work/demo.log" | tail -n 8
	case $rc in
	0) grep -q '^Hello from a microvm guest' "$work/demo.log" &&
		grep -q '^CPUs: 2 ' "$work/demo.log" &&
		pass "the installed microvm booted the demo guest (2 vCPUs)" ||
		fail "the demo guest exited 0 without its greeting and 2 CPUs" ;;
	77) skip "no guest here (run-guest.sh skipped)" ;;
	*) fail "the demo guest with the installed microvm exited $rc" ;;
	esac
	step boot "$src/tests/e2e/disk-test.sh" \
		--microvm "$root/usr/bin/microvm" --artifacts "$art" \
		--transport mmio --cpus 2 --queues 1 --jobs 1 --vhost "$ko"
	rc=$?
	sed 's/^/package-test: boot: /' "$work/boot.log" | tail -n 25
	case $rc in
	0) pass "the installed microvm booted the guest on engine=vhost" ;;
	77) skip "no guest here (disk-test.sh skipped)" ;;
	*) fail "boot with the installed microvm (disk-test.sh exit $rc)" ;;
	esac
	[ "$failed" = 0 ] && echo "package-test: all passed" ||
		echo "package-test: FAILED"
	exit $failed
}

if [ "$stage" = boot ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/package-test.XXXXXX") || exit 1
	trap 'rm -rf "$work"' EXIT
	root=$out/root ko=$out/vhost_blk.ko
	[ -x "$root/usr/bin/microvm" ] && [ -f "$ko" ] ||
		die "no $root/usr/bin/microvm or $ko: package.build failed or did not run"
	boot_guest
fi

for tool in dpkg-buildpackage dh dh_dkms lintian dkms git bc \
	    groff modinfo file xz; do
	command -v "$tool" >/dev/null ||
		skip "no $tool: run tests/install-deps.sh"
done
[ -f "$src/debian/control" ] || die "no $src/debian/control"

work=$(mktemp -d "${TMPDIR:-/tmp}/package-test.XXXXXX") || exit 1
if [ "$keep" = 1 ]; then
	echo "package-test: keeping $work"
else
	trap 'rm -rf "$work"' EXIT
fi
version=$(sed -n 's/^project(microvm VERSION \([0-9.]*\).*/\1/p' \
	"$src/CMakeLists.txt")
[ -n "$version" ] || die "no project(microvm VERSION ...) in CMakeLists.txt"
deb_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -SVersion)
[ "${deb_version%%-*}" = "$version" ] &&
	pass "debian/changelog's $deb_version is CMakeLists.txt's $version" ||
	fail "debian/changelog says $deb_version, CMakeLists.txt $version"

# The working tree as it is: tracked files (less those deleted) and new
# ones git does not ignore; no build directory.
tree=$work/microvm-$version
mkdir -p "$tree"
(cd "$src" && git ls-files -co --exclude-standard -z |
	while IFS= read -r -d '' f; do
		[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
	done | xargs -0 cp --parents -a -t "$tree") ||
	die "copying the source tree"

if ! (cd "$tree" && step dpkg-buildpackage \
	dpkg-buildpackage -us -uc --build=source,binary); then
	tail -n 40 "$work/dpkg-buildpackage.log"
	die "dpkg-buildpackage"
fi
pass "dpkg-buildpackage -us -uc"
changes=$(ls "$work"/microvm_*.changes)
if step lintian lintian --fail-on error,warning -I "$changes"; then
	pass "lintian: no error or warning"
else
	fail "lintian"
fi
grep -v '^running with root privileges' "$work/lintian.log" |
	sed 's/^/package-test: lintian: /'

# The binary package, installed by dpkg into a throwaway root (an empty
# dpkg database of its own; the host's package state is not touched).
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
if step dpkg-install dpkg --root="$root" --log=/dev/null --force-not-root \
	-i "$work"/microvm_*.deb; then
	pass "dpkg --root installed $(basename "$work"/microvm_*.deb)"
else
	cat "$work/dpkg-install.log"
	die "dpkg --root -i microvm"
fi
st=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status} ${Version}' microvm)
[ "$st" = "install ok installed $deb_version" ] &&
	pass "dpkg says: microvm $st" || fail "dpkg says: microvm '$st'"
for f in usr/bin/microvm usr/bin/microvm-jailer \
	 usr/share/man/man1/microvm.1.gz \
	 usr/share/bash-completion/completions/microvm \
	 usr/share/doc/microvm/copyright; do
	[ -f "$root/$f" ] && pass "has /$f" || fail "no /$f"
done
for f in microvm microvm-jailer; do
	file -b "$root/usr/bin/$f" 2>/dev/null | grep -q 'statically linked' &&
		pass "$f is statically linked" ||
		fail "$f is not statically linked: $(file -b "$root/usr/bin/$f")"
done
v=$("$root/usr/bin/microvm" --version 2>&1 | head -n 1)
grep -q "^microvm v\?$version\( \|$\)" <<<"$v" &&
	pass "microvm --version: $v" ||
	fail "microvm --version printed '$v', want 'microvm v$version ...'"
# The man page: groff without a warning, and it names every option
# that --help names.
warn=$(zcat "$root/usr/share/man/man1/microvm.1.gz" |
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z 2>&1)
[ -z "$warn" ] && pass "man page formats with no groff warning" ||
	fail "groff: $warn"
page=$(zcat "$root/usr/share/man/man1/microvm.1.gz" |
	LC_ALL=C.UTF-8 MANWIDTH=200 groff -man -Tutf8 2>/dev/null |
	sed 's/.\x08//g')
# Here-strings, not echo | grep -q: under pipefail, echo killed by
# SIGPIPE when grep -q stops at its match made a found option missing
# (a clean-clone run of 2026-12-06 "lacked" --stats).
missing=
for o in $("$root/usr/bin/microvm" --help 2>&1 |
	   grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$o" <<<"$page" || missing+=" $o"
done
[ -z "$missing" ] && pass "man page names every --help option" ||
	fail "man page lacks$missing"
comp=$root/usr/share/bash-completion/completions/microvm
bash -c '. "$1" && complete -p microvm' _ "$comp" >/dev/null 2>&1 &&
	pass "bash completion loads and completes microvm" ||
	fail "bash completion: $(bash -c '. "$1"; complete -p microvm' _ "$comp" 2>&1)"

# The DKMS package: vhost_blk.ko for the nested harness's L1 kernel,
# built by dkms from the unpacked package in trees of our own (nothing
# in /var/lib/dkms or /lib/modules is touched).
dkroot=$work/dkms-root
dpkg-deb -x "$work"/vhost-blk-dkms_*.deb "$dkroot" ||
	die "dpkg-deb -x vhost-blk-dkms"
[ -f "$dkroot/usr/src/vhost-blk-$version/dkms.conf" ] &&
	pass "has /usr/src/vhost-blk-$version/dkms.conf" ||
	die "no /usr/src/vhost-blk-$version/dkms.conf"
kver=$("$src/kernel/vhost-blk/harness-kernel.sh" "$art")
[ -n "$kver" ] || skip "no L1 kernel version (run tests/e2e/prepare.sh)"
kdir=/usr/src/linux-headers-$kver
[ -f "$kdir/Makefile" ] ||
	skip "no linux-headers-$kver (tests/install-deps.sh installs it)"
[ -f /usr/src/linux-source-6.1.tar.xz ] ||
	skip "no linux-source-6.1 (tests/install-deps.sh installs it)"
# sign_file set to nothing runnable: dkms signs nothing, so it makes no
# key in /var/lib/dkms (L1 loads unsigned modules, tainted).
mkdir -p "$work/dkms" "$work/dkms-install"
if sign_file=/nonexistent/sign-file step dkms dkms build -m vhost-blk -v "$version" -k "$kver" \
	--dkmstree "$work/dkms" --sourcetree "$dkroot/usr/src" \
	--installtree "$work/dkms-install" --kernelsourcedir "$kdir" \
	--no-depmod; then
	pass "dkms build vhost-blk/$version for $kver"
else
	cat "$work/dkms.log"
	find "$work/dkms" -name make.log -exec tail -n 20 {} \;
	die "dkms build"
fi
ko=$(find "$work/dkms/vhost-blk/$version/$kver" -name 'vhost_blk.ko*' |
	head -n 1)
case "$ko" in
*.ko.xz) xz -d "$ko"; ko=${ko%.xz} ;;
*.ko.gz) gzip -d "$ko"; ko=${ko%.gz} ;;
esac
[ -f "$ko" ] || die "dkms left no vhost_blk.ko"
core=$art/kernel/lib/modules/$kver/kernel/drivers/vhost/vhost.ko
want=$(modinfo -F vermagic "$core" 2>/dev/null)
have=$(modinfo -F vermagic "$ko")
[ -n "$want" ] && [ "$have" = "$want" ] &&
	pass "vermagic '$have' is L1's vhost.ko's" ||
	die "vermagic '$have', L1's vhost.ko has '$want'"

if [ "$stage" = build ]; then
	rm -rf "${out:?}/root" "$out/vhost_blk.ko"
	cp -a "$root" "$out/root" && cp "$ko" "$out/vhost_blk.ko" ||
		die "copying the package and the module to $out"
	[ "$failed" = 0 ] && echo "package-test: all passed (build stage)" ||
		echo "package-test: FAILED"
	exit $failed
fi
boot_guest
