#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# microvm-jailer on this host, with jail_probe (a static program that
# reports what it sees) as the exec file instead of microvm. One CASE a
# run:
#   basic       the jailer stays and exits with the probe's status (7);
#               uid/gid 1000, no groups; pid 1 of a new PID namespace;
#               new mount/IPC/UTS namespaces, hostname = id; "/" is the
#               chroot (only the jail's entries, "/.." is "/", one mount);
#               /dev/kvm and /dev/net/tun made for 1000:1000; fds 0-2
#               only (an fd 9 and 5 open in the caller); no environment;
#               rlimits no-file 2048 (default) and fsize as given;
#               --id and the three start-time values first in argv, then
#               the args after "--"; the pid file names it
#   new-pid-ns  the jailer exits 0 while the probe still runs as pid 1
#   daemonize   as new-pid-ns, and the probe has its own session with
#               stdout on /dev/null (nothing of it reaches ours)
#   cgroup-v1   --cgroup cpu.shares=512 (and cpuset.mems=0 when there is
#               a v1 cpuset hierarchy): the probe in <parent>/<id> of each
#   cgroup-v2   --cgroup-version 2 --cgroup cgroup.max.descendants=3:
#               the probe in <cgroup2>/<parent>/<id> with the value set
#   cgroup-v2-parent  --cgroup-version 2 and no --cgroup: joins the
#               existing --parent-cgroup itself, makes nothing below it
#   netns       --netns FILE (a network namespace bound there): joined
#   signals     SIGTERM to the jailer reaches the probe and the jailer
#               exits 143; SIGKILL to the jailer takes the probe along
#   hardlink    a hard link in place of the exec file's copy: refused,
#               the other file untouched
#   exec-fail   a dynamic binary (no loader in the jail): the exec fails,
#               the jailer exits 1 with one line naming it
#   hotplug     the jail root bound on itself and made shared (as Kata
#               makes it), a file bound over its placeholder drive_0
#               after the start reaches the jail, and its unbind too
#               (Kata's block hot-plug); runs in a mount namespace of
#               its own, so nothing stays mounted here
# Usage: jail-test.sh --jailer BIN --probe BIN [--workdir DIR] CASE
# Exit: 0 pass, 1 fail, 77 skipped (not root, no namespaces, or the
# cgroup hierarchy the case needs is absent).
set -uo pipefail

orig_args=("$@")
jailer=
probe=
workdir=${TMPDIR:-/tmp}
while [ $# -gt 1 ]; do
	case "$1" in
	--jailer) jailer=$(realpath "$2"); shift 2 ;;
	--probe) probe=$(realpath "$2"); shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	*) echo "jail-test: unknown option '$1'" >&2; exit 1 ;;
	esac
done
case_=${1:-}
[ -n "$jailer" ] && [ -n "$probe" ] && [ -n "$case_" ] || {
	echo "jail-test: usage: $0 --jailer BIN --probe BIN [--workdir DIR] CASE" >&2
	exit 1
}
skip()
{
	echo "jail-test: SKIP: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root"
unshare -m -p -f -i -u true 2>/dev/null || skip "no namespaces here"
if [ "$case_" = hotplug ] && [ -z "${JAIL_TEST_MNTNS:-}" ]; then
	JAIL_TEST_MNTNS=1 exec unshare -m --propagation private "$0" \
		"${orig_args[@]}"
fi

mkdir -p "$workdir"
work=$(mktemp -d "$workdir/jail-test.XXXXXX") || exit 1
id=jt-$case_-$$
name=$(basename "$probe")
root=$work/base/$name/$id/root
cgdirs=()
cleanup()
{
	local d
	[ -z "${probe_pid:-}" ] || kill -KILL "$probe_pid" 2>/dev/null
	wait 2>/dev/null
	# Deepest first; the probe is gone, so they are empty.
	for d in "${cgdirs[@]}"; do
		rmdir "$d" 2>/dev/null
	done
	[ -z "${netns_file:-}" ] || umount "$netns_file" 2>/dev/null
	[ -z "${bound_root:-}" ] || umount -l "$root" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/base"

fails=0
fail()
{
	echo "jail-test: FAIL: $*"
	fails=$((fails + 1))
}
# has LINE: the probe's report holds LINE exactly.
has()
{
	grep -qxF "PROBE $1" "$root/report.txt" || fail "no 'PROBE $1' in the report"
}

# start ARGS...: the jailer in the background, with fds 5 and 9 open and
# a variable in its environment, none of which may reach the probe.
start()
{
	FOO=leak "$jailer" --id "$id" --exec-file "$probe" --uid 1000 \
		--gid 1000 --chroot-base-dir "$work/base" "$@" \
		>"$work/out" 2>"$work/err" 5</dev/null 9>"$work/fd9" &
	jailer_pid=$!
	local i
	jailer_status=
	for ((i = 0; i < 1500; i++)); do
		[ -e "$root/report.txt" ] && [ -s "$root/$name.pid" ] && break
		# Detached cases: the jailer ends first; a failing one too.
		if [ -z "$jailer_status" ] && ! kill -0 "$jailer_pid" 2>/dev/null; then
			wait "$jailer_pid"
			jailer_status=$?
			[ "$jailer_status" = 0 ] || break
		fi
		sleep 0.02
	done
	[ -e "$root/report.txt" ] || {
		[ -n "$jailer_status" ] || { wait "$jailer_pid"; jailer_status=$?; }
		jailer_pid=
		fail "no report from the probe (jailer status $jailer_status: $(cat "$work/err"))"
		finish_case
	}
	probe_pid=$(cat "$root/$name.pid")
}

# The probe seen from here, while it holds.
check_outside()
{
	local p=$probe_pid ns a b
	[[ "$p" =~ ^[0-9]+$ ]] || { fail "pid file holds '$p'"; return; }
	grep -q "^NSpid:[[:space:]]*$p[[:space:]]*1\$" "/proc/$p/status" ||
		fail "not pid 1 of a new PID namespace: $(grep NSpid "/proc/$p/status")"
	grep -q "^Uid:[[:space:]]*1000[[:space:]]*1000[[:space:]]*1000[[:space:]]*1000\$" \
		"/proc/$p/status" || fail "uids: $(grep Uid "/proc/$p/status")"
	grep -q "^Gid:[[:space:]]*1000[[:space:]]*1000[[:space:]]*1000[[:space:]]*1000\$" \
		"/proc/$p/status" || fail "gids: $(grep Gid "/proc/$p/status")"
	grep -q "^CapEff:[[:space:]]*0*\$" "/proc/$p/status" ||
		fail "capabilities left: $(grep CapEff "/proc/$p/status")"
	for ns in mnt pid ipc uts net; do
		a=$(readlink "/proc/$$/ns/$ns")
		[ "$ns" = pid ] && a=$(readlink "/proc/$$/ns/pid")
		b=$(readlink "/proc/$p/ns/$ns")
		[ -n "$b" ] && [ "$a" != "$b" ] || fail "$ns namespace is ours ($b)"
	done
	# One mount, the jail's root; its source is our chroot directory.
	[ "$(wc -l <"/proc/$p/mountinfo")" = 1 ] &&
		[ "$(cut -d' ' -f5 "/proc/$p/mountinfo")" = / ] ||
		fail "mounts seen: $(cat "/proc/$p/mountinfo")"
	[ "$(ls "/proc/$p/fd" | sort -n | tr '\n' ' ')" = "0 1 2 " ] ||
		fail "open fds: $(ls -l "/proc/$p/fd")"
	# Its "/" seen through /proc/PID/root is the jail's, and its
	# binary the jail's copy (by inode: paths across mount namespaces
	# print differently from kernel to kernel).
	[ "$(stat -L -c %d:%i "/proc/$p/root/")" = "$(stat -c %d:%i "$root")" ] ||
		fail "its root is not $root: $(ls -A "/proc/$p/root/" | tr '\n' ' ')"
	# The root of its mount namespace is the jail too (pivot_root, not
	# chroot: after a chroot the host's root stays that namespace's).
	nsenter --mount="/proc/$p/ns/mnt" "/$name" --list-root >"$work/nsroot" 2>&1 &&
		grep -qxF "PROBE entry /$name" "$work/nsroot" &&
		! grep -qvE "^PROBE entry /($name|$name.pid|dev|run|report.txt|report.tmp)\$" \
			"$work/nsroot" ||
		fail "its mount namespace's root is not the jail: $(head -c 300 "$work/nsroot")"
	[ "$(stat -L -c %d:%i "/proc/$p/exe")" = "$(stat -c %d:%i "$root/$name")" ] ||
		fail "exe: $(readlink "/proc/$p/exe")"
}

check_report()
{
	local e
	has "ids ruid=1000 euid=1000 suid=1000 rgid=1000 egid=1000 sgid=1000 groups=0"
	grep -qE '^PROBE pid=1 ppid=0 ' "$root/report.txt" ||
		fail "$(grep '^PROBE pid' "$root/report.txt")"
	has "hostname=$id"
	has "dotdot same=1"
	has "chroot-again=Operation not permitted"
	# The jail's own entries only.
	for e in $(sed -n 's|^PROBE entry /\([^/]*\)$|\1|p' "$root/report.txt"); do
		case "$e" in
		"$name" | "$name.pid" | dev | run | report.tmp) ;;
		*) fail "'/$e' in the jail" ;;
		esac
	done
	has "entry /$name"
	has "dev /dev/kvm chr=1 major=10 minor=232 uid=1000 gid=1000 mode=600"
	has "dev /dev/net/tun chr=1 major=10 minor=200 uid=1000 gid=1000 mode=600"
	[ "$(grep -c '^PROBE fd ' "$root/report.txt")" = 3 ] && has "fd 0" &&
		has "fd 1" && has "fd 2" ||
		fail "fds: $(grep '^PROBE fd' "$root/report.txt" | tr '\n' ' ')"
	has "env count=0"
	has "argv[0]=/$name"
	has "argv[1]=--id"
	has "argv[2]=$id"
	has "argv[3]=--start-time-us"
	has "argv[5]=--start-time-cpu-us"
	has "argv[7]=--parent-cpu-time-us"
	grep -qE '^PROBE argv\[4\]=[0-9]+$' "$root/report.txt" &&
		grep -qE '^PROBE argv\[6\]=[0-9]+$' "$root/report.txt" &&
		grep -qE '^PROBE argv\[8\]=[0-9]+$' "$root/report.txt" ||
		fail "start-time values: $(grep -E 'argv\[[468]\]' "$root/report.txt")"
	has "argv[9]=--hold"
}

# Release the probe, reap the jailer, report.
finish_case()
{
	touch "$root/go" 2>/dev/null
	if [ -n "${jailer_pid:-}" ]; then
		wait "$jailer_pid"
		jailer_status=$?
		jailer_pid=
		[ "$jailer_status" = "${finish_case_status:-0}" ] ||
			fail "the jailer exited $jailer_status, not ${finish_case_status:-0}"
	fi
	probe_pid=
	if [ "$fails" -gt 0 ]; then
		echo "jail-test: $case_: $fails check(s) failed; jailer stderr:"
		cat "$work/err"
		echo "jail-test: the probe's report:"
		cat "$root/report.txt" 2>/dev/null
		exit 1
	fi
	echo "jail-test: $case_: PASS"
	exit 0
}

# alive PID: PID runs (a zombie, reparented to whoever reaps, does not).
alive()
{
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

# A detached start: the jailer is gone, the probe still holding.
check_detached()
{
	[ -n "$jailer_status" ] || { wait "$jailer_pid"; jailer_status=$?; }
	jailer_pid=
	[ "$jailer_status" = 0 ] || fail "the jailer exited $jailer_status"
	alive "$probe_pid" || fail "the probe is not running"
	check_outside
	check_report
	touch "$root/go"
	local i
	for ((i = 0; i < 500; i++)); do
		alive "$probe_pid" || break
		sleep 0.02
	done
	alive "$probe_pid" && fail "the probe did not end"
	probe_pid=
}

case "$case_" in
basic)
	start --resource-limit fsize=1048576 -- --hold --exit 7
	check_outside
	check_report
	has "rlimit nofile=2048 fsize=1048576"
	has "argv[10]=--exit"
	has "argv[11]=7"
	finish_case_status=7
	;;
new-pid-ns)
	start --new-pid-ns -- --hold
	check_detached
	has "rlimit nofile=2048 fsize=-1"
	;;
daemonize)
	start --daemonize --resource-limit no-file=64 -- --hold
	check_detached
	has "rlimit nofile=64 fsize=-1"
	has "stdout chr=1 major=1 minor=3"
	grep -qE '^PROBE pid=1 ppid=0 sid=1$' "$root/report.txt" ||
		fail "no session of its own: $(grep '^PROBE pid' "$root/report.txt")"
	[ ! -s "$work/out" ] || fail "the probe's output reached ours"
	;;
cgroup-v1)
	cpu=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
	cpuset=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuset(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$cpu" ] && [ -w "$cpu" ] || skip "no writable cgroup v1 cpu hierarchy"
	parent=jail-test-$$/vms
	cgdirs=("$cpu/$parent/$id" "$cpu/$parent" "$cpu/${parent%/*}")
	args=(--parent-cgroup "$parent" --cgroup cpu.shares=512)
	if [ -n "$cpuset" ]; then
		cgdirs+=("$cpuset/$parent/$id" "$cpuset/$parent"
			"$cpuset/${parent%/*}")
		args+=(--cgroup cpuset.mems=0)
	fi
	start "${args[@]}" -- --hold
	check_outside
	grep -qE "^[0-9]+:([^:]*,)?cpu(,[^:]*)?:/$parent/$id\$" "/proc/$probe_pid/cgroup" ||
		fail "cpu cgroup: $(cat "/proc/$probe_pid/cgroup")"
	[ "$(cat "$cpu/$parent/$id/cpu.shares")" = 512 ] || fail "cpu.shares"
	if [ -n "$cpuset" ]; then
		grep -qE "^[0-9]+:([^:]*,)?cpuset(,[^:]*)?:/$parent/$id\$" \
			"/proc/$probe_pid/cgroup" ||
			fail "cpuset cgroup: $(cat "/proc/$probe_pid/cgroup")"
		[ "$(cat "$cpuset/$parent/$id/cpuset.mems")" = 0 ] &&
			[ "$(cat "$cpuset/$parent/$id/cpuset.cpus")" = \
			  "$(cat "$cpuset/cpuset.cpus")" ] ||
			fail "cpuset.mems/cpus not set or not inherited"
	fi
	;;
cgroup-v2)
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$mnt" ] && [ -w "$mnt" ] || skip "no writable cgroup2 hierarchy"
	parent=jail-test-$$
	cgdirs=("$mnt/$parent/$id" "$mnt/$parent")
	start --cgroup-version 2 --parent-cgroup "$parent" \
		--cgroup cgroup.max.descendants=3 -- --hold
	check_outside
	grep -qx "0::/$parent/$id" "/proc/$probe_pid/cgroup" ||
		fail "cgroup: $(cat "/proc/$probe_pid/cgroup")"
	[ "$(cat "$mnt/$parent/$id/cgroup.max.descendants")" = 3 ] ||
		fail "cgroup.max.descendants"
	;;
netns)
	netns_file=$work/netns
	touch "$netns_file"
	unshare --net="$netns_file" true 2>/dev/null ||
		{ netns_file=; skip "cannot bind a network namespace to a file"; }
	start --netns "$netns_file" -- --hold
	check_outside
	[ "$(stat -L -c %i "$netns_file")" = \
	  "$(stat -L -c %i "/proc/$probe_pid/ns/net")" ] ||
		fail "not in the --netns namespace"
	;;
hotplug)
	mkdir -p "$root" && mount -o bind "$root" "$root" &&
		mount --make-shared "$root" ||
		skip "cannot make a shared bind mount here"
	bound_root=1
	echo placeholder >"$root/drive_0"
	start -- --hold
	echo image >"$work/image"
	mount -o bind "$work/image" "$root/drive_0" ||
		fail "binding the image over the placeholder"
	seen=$(cat "/proc/$probe_pid/root/drive_0" 2>&1)
	[ "$seen" = image ] ||
		fail "the jail sees '$seen' at /drive_0, not the image bound over it"
	umount "$root/drive_0"
	seen=$(cat "/proc/$probe_pid/root/drive_0" 2>&1)
	[ "$seen" = placeholder ] ||
		fail "after the unbind the jail sees '$seen', not the placeholder"
	;;
signals)
	# SIGTERM to the jailer reaches microvm (here the probe, whose
	# handler exits 143), and the jailer exits with that status.
	start -- --hold
	kill -TERM "$jailer_pid"
	wait "$jailer_pid"
	st=$?
	jailer_pid=
	[ "$st" = 143 ] || fail "after SIGTERM the jailer exited $st, not 143"
	[ -e "$root/sigterm" ] || fail "the probe's SIGTERM handler did not run"
	alive "$probe_pid" && fail "the probe outlived SIGTERM"
	# SIGKILL to the jailer takes microvm with it (parent-death signal).
	id=$id-k
	root=$work/base/$name/$id/root
	start -- --hold
	kill -KILL "$jailer_pid"
	wait "$jailer_pid" 2>/dev/null
	jailer_pid=
	for ((i = 0; i < 250; i++)); do
		alive "$probe_pid" || break
		sleep 0.02
	done
	alive "$probe_pid" && fail "the probe outlived the jailer's SIGKILL"
	probe_pid=
	;;
cgroup-v2-parent)
	# Firecracker's rule: v2 without --cgroup joins an existing
	# --parent-cgroup itself and makes nothing below it.
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$mnt" ] && [ -w "$mnt" ] || skip "no writable cgroup2 hierarchy"
	parent=jail-test-$$
	mkdir "$mnt/$parent" || fail "mkdir $mnt/$parent"
	cgdirs=("$mnt/$parent")
	start --cgroup-version 2 --parent-cgroup "$parent" -- --hold
	check_outside
	grep -qx "0::/$parent" "/proc/$probe_pid/cgroup" ||
		fail "cgroup: $(cat "/proc/$probe_pid/cgroup")"
	[ ! -e "$mnt/$parent/$id" ] || fail "made $mnt/$parent/$id"
	;;
hardlink)
	# A hard link where the exec file's copy goes (left by whoever held
	# the jail before): refused, the linked file untouched.
	mkdir -p "$root"
	echo keep >"$work/victim"
	ln "$work/victim" "$root/$name"
	"$jailer" --id "$id" --exec-file "$probe" --uid 1000 --gid 1000 \
		--chroot-base-dir "$work/base" >"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = 1 ] || fail "the jailer exited $st, not 1"
	[ "$(wc -l <"$work/err")" = 1 ] &&
		grep -qxF "microvm-jailer: $(realpath "$root")/$name is not a regular file of one link" \
		"$work/err" || fail "stderr: $(cat "$work/err")"
	[ "$(cat "$work/victim")" = keep ] || fail "the linked file was changed"
	;;
exec-fail)
	# A dynamic binary: its loader is not in the jail.
	dyn=$(type -P true)
	! ldd "$dyn" >/dev/null 2>&1 && skip "$dyn is static"
	"$jailer" --id "$id" --exec-file "$dyn" --uid 1000 --gid 1000 \
		--chroot-base-dir "$work/base" >"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = 1 ] || fail "the jailer exited $st, not 1"
	[ "$(wc -l <"$work/err")" = 1 ] &&
		grep -q "^microvm-jailer: exec of /true in the jail .* failed: No such file or directory\$" \
		"$work/err" || fail "stderr: $(cat "$work/err")"
	[ ! -e "$work/base/true/$id/root/true.pid" ] || fail "pid file left behind"
	root=$work/base/true/$id/root
	finish_case
	;;
*)
	echo "jail-test: unknown case '$case_'" >&2
	exit 1
	;;
esac
finish_case
