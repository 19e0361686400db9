# SPDX-License-Identifier: Apache-2.0
# Shared by the L1 sides of the API tests (api-l1.sh, api-pause-l1.sh;
# sourced by busybox sh, not run): checks that print "$API_TAG-OK:" and
# "$API_TAG-FAIL:" lines and count failures in $fails, curl calls on the
# socket $sock, and the pause checks against the guest's tick counter
# (microvm.test=api prints E2E-TICK N every 0.1 s to $work/console).
# The caller sets API_TAG, microvm, curl, sock and work.
fails=0
still=0
moved=0
ok() { echo "$API_TAG-OK: $*"; }
bad() { echo "$API_TAG-FAIL: $*"; fails=$((fails + 1)); }

# api_start ID: microvm --api-sock $sock --id ID in the background
# (console and stderr in $work, its pid in $pid); its socket must appear
# within 10 s.
api_start()
{
	"$microvm" --api-sock "$sock" --id "$1" >"$work/console" \
		2>"$work/stderr" </dev/null &
	pid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$sock" ] && ok "API socket after $i tenths" ||
		bad "no API socket"
}

# call METHOD PATH [BODY]: sets code and body (the answer's).
call()
{
	if [ $# -ge 3 ]; then
		code=$("$curl" -sS --unix-socket "$sock" -o "$work/body" \
			-w '%{http_code}' -X "$1" "http://localhost$2" \
			-H 'Accept: application/json' \
			-H 'Content-Type: application/json' -d "$3")
	else
		code=$("$curl" -sS --unix-socket "$sock" -o "$work/body" \
			-w '%{http_code}' -X "$1" "http://localhost$2" \
			-H 'Accept: application/json')
	fi
	body=$(cat "$work/body" 2>/dev/null)
}

# expect CODE METHOD PATH [BODY]: the call must answer CODE.
expect()
{
	want=$1
	shift
	call "$@"
	if [ "$code" = "$want" ]; then
		ok "$1 $2 -> $code"
	else
		bad "$1 $2 -> $code (want $want): $body"
	fi
}

# refuse METHOD PATH [BODY]: a 400 with a fault_message.
refuse()
{
	call "$@"
	case "$code:$body" in
	400:*fault_message*) ok "$1 $2 refused: $body" ;;
	*) bad "$1 $2 -> $code (want 400 with fault_message): $body" ;;
	esac
}

# last_tick: the last tick on a whole console line. A pause can stop the
# guest halfway through sending a line ("E2E-TICK 13" of 139); the rest
# comes out after the resume, or in a restored guest's console. The
# console grows while it is read, so it is read once, into a snapshot:
# reading it twice (for its last byte, then for its lines) took a line
# cut after the first read for a whole one ("6" of "67" after "66"), or
# dropped a line completed after it, and a resume's moving tick read as
# standing still (e2e.api.pause_pci_vhost, two clean-clone runs here).
last_tick()
{
	cat "$work/console" >"$work/console.snap"
	if [ -n "$(tail -c 1 "$work/console.snap")" ]; then
		sed '$d' "$work/console.snap"
	else
		cat "$work/console.snap"
	fi | sed -n 's/^E2E-TICK \([0-9]*\).*/\1/p' | tail -n 1
}

# wait_for PATTERN TENTHS: whether the console shows PATTERN in time
# (and microvm still runs).
wait_for()
{
	i=0
	while ! grep -q "$1" "$work/console" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt "$2" ] && return 1
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 0
}

# api_pause WHAT: PATCH /vm Paused answers 204 and GET / says Paused.
api_pause()
{
	call PATCH /vm '{"state": "Paused"}'
	[ "$code" = 204 ] || bad "$1: pause -> $code: $body"
	api_says_paused "$1"
}

api_says_paused()
{
	call GET /
	case "$body" in
	*'"state":"Paused"'*) ;;
	*) bad "$1: GET / while paused: $body" ;;
	esac
}

# image_sums IMAGE...: one md5sum line per image (busybox has md5sum,
# not cksum); nothing when there is no image or md5sum fails.
image_sums()
{
	[ $# -eq 0 ] && return
	md5sum "$@" 2>/dev/null || true
}

# api_held WHAT [IMAGE...]: on a paused machine, the guest's tick and
# each IMAGE's checksum (a disk file the guest writes: no device may
# write while paused, whatever its engine) stand still for a second.
# Counts in $still.
api_held()
{
	what=$1
	shift
	sleep 0.3 # ticks already on their way to the console
	t1=$(last_tick)
	s1=$(image_sums "$@")
	sleep 1
	t2=$(last_tick)
	s2=$(image_sums "$@")
	if [ -z "$t1" ] || [ "$t1" != "$t2" ]; then
		bad "$what: ticks moved while paused ('$t1' -> '$t2')"
	elif [ $# -gt 0 ] && { [ "$(echo "$s1" | grep -c .)" -ne $# ] ||
		[ "$(echo "$s2" | grep -c .)" -ne $# ]; }; then
		bad "$what: no checksum of $* (md5sum failed)"
	elif [ "$s1" != "$s2" ]; then
		bad "$what: a disk image changed while paused: $s1 -> $s2"
	else
		still=$((still + 1))
	fi
}

# api_resume WHAT: PATCH /vm Resumed answers 204 and the guest's tick
# moves within 20 s. Counts in $moved.
api_resume()
{
	call PATCH /vm '{"state": "Resumed"}'
	[ "$code" = 204 ] || bad "$1: resume -> $code: $body"
	t2=$(last_tick)
	j=0
	while [ "$(last_tick)" = "$t2" ] && [ $j -lt 200 ]; do
		sleep 0.1
		j=$((j + 1))
	done
	if [ "$(last_tick)" != "$t2" ]; then
		moved=$((moved + 1))
		return
	fi
	bad "$1: ticks did not move after resume"
	# For the next reader: how long the stall lasted (still a failure).
	while [ "$(last_tick)" = "$t2" ] && [ $j -lt 800 ]; do
		sleep 0.1
		j=$((j + 1))
	done
	if [ "$(last_tick)" != "$t2" ]; then
		echo "API-INFO: $1: tick '$t2' moved on after about $((j / 10)) s"
	else
		echo "API-INFO: $1: tick '$t2' still there after about $((j / 10)) s"
	fi
}

# api_end_cad: SendCtrlAltDel must end microvm with status 0 within 90 s
# and the guest must have seen it.
api_end_cad()
{
	expect 204 PUT /actions '{"action_type": "SendCtrlAltDel"}'
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 900 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		bad "microvm still runs 90 s after SendCtrlAltDel"
		kill -9 "$pid"
	fi
	wait "$pid"
	status=$?
	[ "$status" = 0 ] && ok "microvm exit status 0 after SendCtrlAltDel" ||
		bad "microvm exit status $status after SendCtrlAltDel"
	# As Firecracker's, the socket stays once the guest booted (a
	# confined VMM removes no file); whoever started microvm removes it.
	rm -f "$sock"
	grep -q '^E2E-CAD' "$work/console" && ok "the guest saw Ctrl-Alt-Del" ||
		bad "the guest never saw Ctrl-Alt-Del"
	tr -d '\r' <"$work/console" >"$work/console.txt"
}

# api_finish: microvm's stderr, on a failure the guest console's last
# lines (ticks left out: what the guest said before it stopped), the
# count of failures; the status says whether there were any.
api_finish()
{
	echo "API-STDERR:"
	cat "$work/stderr"
	if [ "$fails" -gt 0 ]; then
		echo "API-CONSOLE (last 60 lines without ticks):"
		grep -v '^E2E-TICK' "$work/console.txt" | tail -n 60
	fi
	echo "API-SUMMARY: $fails failure(s)"
	[ "$fails" -eq 0 ]
}
