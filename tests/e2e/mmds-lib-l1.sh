#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The host side of the metadata-service checks (POSIX sh, sourced inside
# L1 by net-l1.sh and replay-l1.sh; staged there with run-guest.sh
# --file). The guest (guest/scenarios.sh, e2e_mmds) prints one line per
# request, "E2E-MMDS: PATH status S md5 M"; mmds_expect compares one
# with what the store holds.

# mmds_expect CONSOLE PATH STATUS [BODY]: the guest's line for PATH has
# STATUS and, given BODY (printf %b: \n is a newline), that body's md5.
# Sets mmds_msg; returns 0 when it matches.
mmds_expect()
{
	mmds_line=$(grep "^E2E-MMDS: $2 " "$1" | head -n 1 | tr -d '\r')
	mmds_want="E2E-MMDS: $2 status $3"
	[ $# -ge 4 ] &&
		mmds_want="$mmds_want md5 $(printf '%b' "$4" | md5sum | cut -d' ' -f1)"
	case "$mmds_line" in
	"$mmds_want"*)
		mmds_msg="mmds: $2 -> $3${4:+ with the expected body}"
		return 0 ;;
	*)
		mmds_msg="mmds: $2: guest saw '${mmds_line:-nothing}', want '$mmds_want'"
		return 1 ;;
	esac
}
