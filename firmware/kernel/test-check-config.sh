#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Tests check-config.sh. Without arguments: on hand-written fragments and
# .config files shaped like olddefconfig's output (one case a row: what is
# asked, what survived, the exit status and the line the checker must
# print). With SRCDIR: for real, "make tinyconfig" + fragment +
# olddefconfig in that kernel tree, where a typo, an unmet dependency and
# an out-of-range value must each fail and name the option, and a good
# fragment must pass.
# Usage: test-check-config.sh [SRCDIR | CACHEDIR]
#   CACHEDIR: build.sh's OUTDIR/cache; the tree it extracted is used.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
checker=$here/check-config.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect NAME STATUS PATTERN FRAGMENT DOTCONFIG [SRCDIR]: the checker exits
# with STATUS and its stderr matches the grep -E PATTERN ('' for none).
expect()
{
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$checker" "$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want; output:"
		sed 's/^/  /' "$tmp/out"
		fails=$((fails + 1))
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/out"; then
		echo "FAIL $name: no line matching '$pat'; output:"
		sed 's/^/  /' "$tmp/out"
		fails=$((fails + 1))
	elif [ "$want" = 0 ] && [ -s "$tmp/out" ]; then
		echo "FAIL $name: passed but printed:"
		sed 's/^/  /' "$tmp/out"
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}

# row NAME STATUS PATTERN FRAGMENT-TEXT DOTCONFIG-TEXT
row()
{
	printf '%b' "$4" >"$tmp/frag"
	printf '%b' "$5" >"$tmp/config"
	expect "$1" "$2" "$3" "$tmp/frag" "$tmp/config"
}

fake_tests()
{
	local cfg='CONFIG_64BIT=y\nCONFIG_VIRTIO=y\nCONFIG_NR_CPUS=64\n# CONFIG_MODULES is not set\nCONFIG_CMDLINE=""\nCONFIG_LOCALVERSION="-mv"\n'

	row "all survive" 0 '' \
	    '# comment\nCONFIG_64BIT=y\n\nCONFIG_VIRTIO=y\nCONFIG_NR_CPUS=64\n' "$cfg"
	row "not set, spelt both ways, survives" 0 '' \
	    '# CONFIG_MODULES is not set\nCONFIG_MODULES=n\nCONFIG_ABSENT=n\n' "$cfg"
	row "string value survives" 0 '' 'CONFIG_LOCALVERSION="-mv"\n' "$cfg"
	row "trailing blanks and CRLF ignored" 0 '' 'CONFIG_64BIT=y \r\n' "$cfg"
	row "typo: option absent from .config" 1 \
	    '^check-config: CONFIG_VIRTIO_BLKK: wanted y, not in \.config' \
	    'CONFIG_VIRTIO=y\nCONFIG_VIRTIO_BLKK=y\n' "$cfg"
	row "unmet dependency: dropped to not set" 1 \
	    '^check-config: CONFIG_MODULES: wanted y, got n$' \
	    'CONFIG_MODULES=y\n' "$cfg"
	row "value reset by olddefconfig" 1 \
	    '^check-config: CONFIG_NR_CPUS: wanted 100000, got 64$' \
	    'CONFIG_NR_CPUS=100000\n' "$cfg"
	row "y asked, m built" 1 'CONFIG_VIRTIO: wanted y, got m$' \
	    'CONFIG_VIRTIO=y\n' 'CONFIG_VIRTIO=m\n'
	row "not set asked, but y" 1 'CONFIG_64BIT: wanted n, got y$' \
	    '# CONFIG_64BIT is not set\n' "$cfg"
	row "string differs" 1 'CONFIG_LOCALVERSION: wanted "-x", got "-mv"$' \
	    'CONFIG_LOCALVERSION="-x"\n' "$cfg"
	row "every mismatch listed, with the count" 1 \
	    ' 3 option\(s\) of .* did not survive' \
	    'CONFIG_A=y\nCONFIG_64BIT=y\nCONFIG_B=y\nCONFIG_NR_CPUS=8\n' "$cfg"
	row "fragment sets an option twice" 1 \
	    'CONFIG_64BIT set twice .*\(y, then n\)' \
	    'CONFIG_64BIT=y\n# CONFIG_64BIT is not set\n' "$cfg"
	row "malformed option line" 1 ':2: not an option line: CONFIG_64BIT y' \
	    'CONFIG_VIRTIO=y\nCONFIG_64BIT y\n' "$cfg"
	row "empty fragment" 0 '' '' "$cfg"
	expect "missing .config file" 2 "cannot read '$tmp/nonexistent'" \
	    "$tmp/frag" "$tmp/nonexistent"
	expect "one argument" 2 '^usage:' "$tmp/frag"
	expect "SRCDIR without Kconfig" 2 'not a kernel source tree' \
	    "$tmp/frag" "$tmp/config" "$tmp"
}

# real_config SRCDIR FRAGMENT-TEXT: tinyconfig + fragment + olddefconfig
# into $tmp/obj; the fragment is left in $tmp/frag.
real_config()
{
	printf '%b' "$2" >"$tmp/frag"
	rm -rf "$tmp/obj"
	mkdir -p "$tmp/obj"
	{
		make -C "$1" O="$tmp/obj" ARCH=x86_64 tinyconfig &&
		"$1/scripts/kconfig/merge_config.sh" -m -O "$tmp/obj" \
			"$tmp/obj/.config" "$tmp/frag" &&
		make -C "$1" O="$tmp/obj" ARCH=x86_64 olddefconfig
	} >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log"; return 1; }
}

real_tests()
{
	local srcdir=$1
	if ! real_config "$srcdir" 'CONFIG_64BIT=y\nCONFIG_SMP=y\nCONFIG_VIRTIO_MENU=y\nCONFIG_VIRTIO=y\nCONFIG_VIRTIO_MMIO=y\nCONFIG_NR_CPUS=16\n'; then
		echo "FAIL real: configuring the good fragment failed"
		fails=$((fails + 1))
		return
	fi
	expect "real: good fragment" 0 '' "$tmp/frag" "$tmp/obj/.config" "$srcdir"
	# VIRTIO_BLK depends on VIRTIO and BLK_DEV, which tinyconfig lacks.
	real_config "$srcdir" 'CONFIG_64BIT=y\nCONFIG_VIRTIO_BLKK=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_NR_CPUS=100000\n' || {
		echo "FAIL real: configuring the bad fragment failed"
		fails=$((fails + 1))
		return
	}
	expect "real: typo" 1 \
	    'CONFIG_VIRTIO_BLKK: wanted y, not in \.config: no such option' \
	    "$tmp/frag" "$tmp/obj/.config" "$srcdir"
	expect "real: unmet dependency" 1 \
	    'CONFIG_VIRTIO_BLK: wanted y, not in \.config: dependencies not met' \
	    "$tmp/frag" "$tmp/obj/.config" "$srcdir"
	expect "real: out of range" 1 'CONFIG_NR_CPUS: wanted 100000, got [0-9]+$' \
	    "$tmp/frag" "$tmp/obj/.config" "$srcdir"
	expect "real: count" 1 ' 3 option\(s\)' \
	    "$tmp/frag" "$tmp/obj/.config" "$srcdir"
}

if [ $# -ge 1 ]; then
	srcdir=$1
	if [ ! -f "$srcdir/Kconfig" ]; then
		for d in "$1"/linux-source-*; do
			[ -f "$d/.extracted" ] && srcdir=$d
		done
	fi
	[ -f "$srcdir/Kconfig" ] ||
		{ echo "no kernel source tree at or under '$1'"; exit 1; }
	real_tests "$srcdir"
else
	fake_tests
fi
if [ "$fails" -ne 0 ]; then
	echo "$fails case(s) failed"
	exit 1
fi
echo "all cases passed"
