#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Counted facts in the documents, generated from the tree, never typed.
# A fact sits in a marked span on one line:
#   <!-- facts:NAME -->TEXT<!-- /facts -->
# and this script computes TEXT for every NAME it knows:
#   fuzz-targets     the number of libFuzzer targets (tests/fuzz/fuzz_*.c
#                    but the replay driver), as a word ("Nine")
#   fuzz-target-count the same number in digits
#   fuzz-target-list the targets' names
#   test-tiers       CTest tests per label in BUILD (only with BUILD set: a
#                    configured build; the committed text is the default
#                    configuration's, gcc and default options)
#   slot-bytes       per-queue bookkeeping of the block device: sizeof of
#                    struct blk_slot, struct virtq_seg and struct iovec,
#                    compiled against src/ (blk_priv.h), and the total at
#                    the default queue size 256
#
#   tests/docs/facts.sh           rewrite the spans in place
#   BUILD=build tests/docs/facts.sh  also the per-tier test counts
#   tests/docs/facts.sh --check   exit 1 (and show the diff) when a
#                                 committed span differs; the CTest test
#                                 docs.facts runs this
# CC picks the compiler (default cc). An unknown NAME in a span is an error.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:-write}
case $mode in write|--check) ;; *) echo "facts.sh: unknown argument '$mode' (only --check)" >&2; exit 2;; esac
docs="SECURITY.md README.md BENCHMARKS.md tests/fuzz/README.md tests/README.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

words="Zero One Two Three Four Five Six Seven Eight Nine Ten Eleven Twelve"
targets=$(cd "$here/tests/fuzz" && ls fuzz_*.c | grep -v '^fuzz_replay\.c$' | sed 's/\.c$//')
n=$(echo "$targets" | wc -l)
if [ "$n" -le 12 ]; then
	set -- $words; shift "$n"; word=$1
else
	word=$n
fi
list=$(echo "$targets" | sed 's/.*/`&`/' | paste -sd, - | sed 's/,/, /g')

cat >"$tmp/sz.c" <<'C'
#include "virtio/blk_priv.h"
#include <stdio.h>
int main(void)
{
	size_t q = 256, slot = sizeof(struct blk_slot);
	size_t seg = sizeof(struct virtq_seg), iov = sizeof(struct iovec);
	size_t total = q * (slot + seg) + q * q * iov;

	printf("queue size × (%zu B slot + %zu B segment) + queue size² × %zu B"
	       " of iovecs (%zu KiB at 256)\n", slot, seg, iov, total / 1024);
	return 0;
}
C
${CC:-cc} -D_GNU_SOURCE -I"$here/src" -I"$here/kernel/vhost-blk/uapi" \
	"$tmp/sz.c" -o "$tmp/sz"
slot=$("$tmp/sz")

tiers=
if [ -n "${BUILD:-}" ]; then
	for l in unit e2e e2e-arm64 fuzz crash sanitize bench cross image firmware docs jailer cli package; do
		c=$(ctest --test-dir "$BUILD" -N -L "^$l\$" | sed -n 's/^Total Tests: //p')
		tiers="$tiers${tiers:+, }$l $c"
	done
	all=$(ctest --test-dir "$BUILD" -N | sed -n 's/^Total Tests: //p')
	tiers="$all in all ($tiers; a test may carry two labels)"
fi

rc=0
for f in $docs; do
	[ -f "$here/$f" ] || continue
	TT="$tiers" FT="$word" FN="$n" FL="$list" SL="$slot" perl -pe '
		my %v = ("fuzz-targets" => $ENV{FT}, "fuzz-target-count" => $ENV{FN}, "fuzz-target-list" => $ENV{FL},
			 "slot-bytes" => $ENV{SL});
		$v{"test-tiers"} = $ENV{TT} if $ENV{TT} ne "";
		s{(<!-- facts:([a-z-]+) -->)(.*?)(<!-- /facts -->)}{
			exists $v{$2} ? "$1$v{$2}$4" : $2 eq "test-tiers" ? "$1$3$4"
				: die "'"$f"': unknown fact $2\n"
		}ge;' "$here/$f" >"$tmp/out"
	if ! cmp -s "$here/$f" "$tmp/out"; then
		if [ "$mode" = --check ]; then
			echo "facts.sh: $f differs from the tree (run tests/docs/facts.sh):" >&2
			diff -u "$here/$f" "$tmp/out" >&2 || true
			rc=1
		else
			cp "$tmp/out" "$here/$f"
			echo "facts.sh: rewrote $f"
		fi
	fi
done
exit $rc
