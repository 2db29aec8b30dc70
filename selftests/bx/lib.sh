# SPDX-License-Identifier: GPL-2.0
#
# KTAP helpers for bx's shell selftests (after kselftest's ktap_helpers.sh).
# A test script sources this, calls ktap_plan N, runs "run_test NAME FN"
# for each case, and ends with ktap_finish. A case function returns 0
# (pass), 4 (skip) or anything else (fail); it runs in a subshell with
# set -e, so any failing command fails the case. The calling script must
# not run with set -e itself.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

_ktap_n=0 _ktap_pass=0 _ktap_fail=0 _ktap_skip=0

# BX_SKIP (run.sh -e, from check.sh): the tests ("flow.sh") and cases
# ("flow.sh:incast") a lane leaves to another, reported as skipped.
# BX_ONLY: cases ("flow.sh:incast"); a test named there runs only those
# of its cases (the ones another lane leaves to this one), the others
# reported as skipped. Every guest of a rig has the same, so no barrier
# waits for a skipped case.
_bx_test=${0##*/}
bx_skipped() {
	case " ${BX_SKIP:-} " in
	*" $1 "*) return 0 ;;
	esac
	case $1 in *:*) ;; *) return 1 ;; esac
	case " ${BX_ONLY:-} " in
	*" $1 "*) return 1 ;;
	*" ${1%%:*}:"*) return 0 ;;
	esac
	return 1
}
if bx_skipped "$_bx_test"; then
	echo "1..0 # SKIP $_bx_test runs in another lane (BX_SKIP)"
	exit $KSFT_SKIP
fi

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

run_test() {
	local name=$1 fn=$2 rc=0 t0
	_ktap_n=$((_ktap_n + 1))
	if bx_skipped "$_bx_test:$name"; then
		echo "ok $_ktap_n $name # SKIP runs in another lane (BX_SKIP, BX_ONLY)"
		_ktap_skip=$((_ktap_skip + 1))
		return
	fi
	t0=$(date +%s)
	# Not "( ... ) || rc=$?": a tested subshell silently disables set -e.
	( set -e; "$fn" )
	rc=$?
	# check.sh lists the slowest cases from these lines.
	echo "# bxtest-case: $name $(($(date +%s) - t0)) s"
	case $rc in
	0) echo "ok $_ktap_n $name"; _ktap_pass=$((_ktap_pass + 1)) ;;
	4) echo "ok $_ktap_n $name # SKIP"; _ktap_skip=$((_ktap_skip + 1)) ;;
	*)
		# check.sh quotes this with the case's first "# FAIL:" line.
		echo "# $name failed after $(($(date +%s) - t0)) s"
		echo "not ok $_ktap_n $name"; _ktap_fail=$((_ktap_fail + 1)) ;;
	esac
}

ktap_finish() {
	echo "# Totals: pass:$_ktap_pass fail:$_ktap_fail xfail:0 xpass:0 skip:$_ktap_skip error:0"
	[ "$_ktap_fail" -eq 0 ]
}

# Print a diagnostic and fail the current case.
fail() {
	echo "# FAIL: $*"
	return 1
}

# wait_until SECS CMD...: poll CMD every 50 ms until it succeeds.
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# Process $1 has ended (and been reaped).
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# bx_hostile (hostile.sh, lanes.sh): hostile_start ARGS... runs
# "bx_hostile serve ARGS" in the background (bx unloaded: its port),
# output in /tmp/h.out; hostile_stop ends it and shows its lines that
# match HOSTILE_SHOW (an ERE after "bx_hostile: "), at most
# HOSTILE_LINES; hcount NAME is a number of its summary.
HX=$(dirname "$0")/bx_hostile
HOSTILE_SHOW=summary
HOSTILE_LINES=60

hostile_start() {
	: > /tmp/h.out
	"$HX" serve "$@" >> /tmp/h.out 2>&1 &
	HS=$!
	wait_until 10 grep -q "listening" /tmp/h.out ||
		{ echo "# FAIL: bx_hostile not listening: $(cat /tmp/h.out)"; ERR=1; }
}

hostile_stop() {
	kill -TERM "$HS" 2>/dev/null || true
	wait_until 30 pid_gone "$HS" || kill -KILL "$HS"
	wait "$HS" || { echo "# FAIL: bx_hostile exited $?"; ERR=1; }
	grep -E "^bx_hostile: ($HOSTILE_SHOW)" /tmp/h.out |
		head -"$HOSTILE_LINES" | sed 's/^/# /'
}

hcount() { sed -n "s/^bx_hostile: summary.* $1 \([0-9]*\).*/\1/p" /tmp/h.out | tail -1; }

# kill_tree SIG PID: signal PID's children (bx_pp's workers), then PID.
kill_tree() {
	for p in /proc/[0-9]*; do
		[ "$(awk '{ print $4 }' "$p/stat" 2>/dev/null)" = "$2" ] &&
			kill "-$1" "${p#/proc/}" 2>/dev/null
	done
	kill "-$1" "$2" 2>/dev/null || true
}

bx_devices() { cat /sys/kernel/debug/bx/devices 2>/dev/null; }
bx_has_dev() { bx_devices | grep -q "^$1 "; }
bx_lacks_dev() { ! bx_has_dev "$1"; }
# A module-wide counter of debugfs "stats".
stat_of() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/bx/stats; }
# No operation in flight on this host.
ops_idle() { [ "$(stat_of ops_inflight)" = 0 ]; }

# fail_function (kernels with FAIL_FUNCTION): "ff_set FUNC ERRNO [TIMES]"
# makes FUNC fail with -ERRNO, on every call (TIMES -1, the default) or
# on the next TIMES calls; the probability goes last, once the rest is
# set. ff_reset stops it (FUNC may still be listed: EBUSY on a new set).
FF=/sys/kernel/debug/fail_function
ff_reset() {
	echo > $FF/inject 2>/dev/null || true
	echo 0 > $FF/probability
}
ff_set() {
	ff_reset
	echo "$1" > $FF/inject &&
		printf '%#x\n' "-$2" > "$FF/$1/retval" &&
		echo 1 > $FF/interval && echo "${3:--1}" > $FF/times &&
		echo 0 > $FF/verbose && echo 100 > $FF/probability
}

# ---- cases that span guests ----------------------------------------------
# A case keeps going after a failed step so that every guest still meets
# every barrier; it fails at its end (result) if any step failed.
ERR=
try() { "$@" || ERR=1; }
result() { [ -z "$ERR" ]; }
check() { "$@" || { echo "# FAIL: $*"; return 1; }; }

# The sockets of process $1 are all subscribed to some group (bxctl
# monitor joins bx's "events" group first, then nlctrl's "notify", id 16:
# a non-zero Groups word means both are joined).
mon_ready() {
	inos=$(ls -l /proc/"$1"/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p')
	[ -n "$inos" ] || return 1
	for ino in $inos; do
		awk -v ino="$ino" '$2 == 16 && $NF == ino && $4 != "00000000" { f = 1 }
			END { exit !f }' /proc/net/netlink || return 1
	done
}

# mon_start FILE: "bxctl -j monitor" into FILE in the background, once
# subscribed; its pid in $MON. mon_stop: end it.
mon_start() {
	"$(command -v bxctl)" -j monitor > "$1" 2>&1 &
	MON=$!
	wait_until 10 mon_ready $MON
}
mon_stop() {
	kill "$MON" 2>/dev/null || true
	wait "$MON" 2>/dev/null || true
}

# bx_pp serve ARGS... in the background, on service $SVC; waits for it.
serve_start() {
	# Empty it first: the shell truncates it in the child, which may
	# run after the wait below has read the last server's "ready".
	: > /tmp/srv.out
	"$PP" serve -s "$SVC" "$@" >> /tmp/srv.out 2>&1 &
	SRV=$!
	wait_until 10 grep -q ready /tmp/srv.out ||
		{ echo "# FAIL: server not ready: $(cat /tmp/srv.out)"; ERR=1; }
}

# Stop it; it must have seen no bad data, no push twice and, unless
# "serve_stop errors-ok" (replies to a connection that failed), no error.
serve_stop() {
	kill -TERM "$SRV"
	rc=0
	if ! wait_until $((60 * BX_SLOW)) pid_gone "$SRV"; then
		echo "# FAIL: server still running $((60 * BX_SLOW)) s after SIGTERM"
		cat /proc/"$SRV"/stack 2>/dev/null | sed 's/^/# /'
		kill -KILL "$SRV"
	fi
	wait "$SRV" || rc=$?
	echo "# $(tail -1 /tmp/srv.out)"
	want="bad 0 errors 0 dups 0\$"
	[ "${1:-}" = errors-ok ] && want="bad 0 errors [0-9]* dups 0\$"
	[ $rc -eq 0 ] && grep -q "$want" /tmp/srv.out && return 0
	# Above 128: the signal that ended it, 128 + N; the kernel logs a
	# crash or an OOM kill. 3: it could not write its summary.
	echo "# FAIL: server (exit status $rc): $(cat /tmp/srv.out)"
	dmesg | grep -E "bx_pp|segfault|traps:|[Oo]ut of memory" | tail -5 |
		sed 's/^/# dmesg: /'
	grep -E "MemAvailable|Shmem:" /proc/meminfo | sed 's/^/# /'
	df /tmp | sed 's/^/# /'
	return 1
}

# A number of the stopped server's summary line: srv_count pushes.
srv_count() { sed -n "s/^bx_pp serve:.* $1 \([0-9]*\).*/\1/p" /tmp/srv.out | tail -1; }

# ---- push accounting across guests -----------------------------------------
# A client guest sums the "bx_pp sync:" lines of its bx_pp runs (sync_add
# FILE) and sends "push_ok push_unknown push_failed" to guest 0
# (sync_send), which listens from before the clients start (sync_listen)
# and, after serve_stop, checks its server's pushes against them
# (sync_check; "sync_check N" for a server that is not bx_pp and received
# N pushes): every push that completed arrived, none arrived that was
# not sent, and (serve_stop) none arrived twice. Over TCP port 7701 of the
# guests' network with busybox nc; one client guest per listen.
SYNC_PORT=7701
sync_listen() {
	rm -f /tmp/sync.in
	nc -l -p $SYNC_PORT < /dev/null > /tmp/sync.in 2>/dev/null &
	SYNC_NC=$!
}

# A second bx_pp server, beside the test's own: $1 is its service, the
# rest bx_pp's (PP: the test's bx_pp).
serve2_start() {
	: > /tmp/srv2.out
	"$PP" serve -s "$@" >> /tmp/srv2.out 2>&1 &
	SRV2=$!
	wait_until 10 grep -q ready /tmp/srv2.out ||
		{ echo "# FAIL: second server not ready: $(cat /tmp/srv2.out)"; ERR=1; }
}

serve2_stop() {
	kill -TERM "$SRV2" 2>/dev/null
	wait "$SRV2" 2>/dev/null || true
	echo "# $(tail -1 /tmp/srv2.out)"
}

# A bx_pp client through libbx's recovery (-S) to service SVC of SERVER,
# and its verdict: no pull or push failed, no bad data. Its push counts
# are added up for sync_send. Options after the defaults win (-P 2).
client_run() {
	rc=0
	"$PP" client -a "$SERVER" -s $SVC -S -P 2 -z 100,4096,65536 \
		-m both "$@" > /tmp/cli.out 2>&1 || rc=$?
	sed 's/^/# /' /tmp/cli.out
	sync_add /tmp/cli.out
	[ $rc -eq 0 ] || { echo "# FAIL: client"; return 1; }
	grep -q "pull_failed 0 .* push_failed 0 " /tmp/cli.out ||
		{ echo "# FAIL: a pull or a certainly-undelivered push failed"; return 1; }
}

sync_add() {
	sed -n 's/^bx_pp sync: .*push_unknown \([0-9]*\) push_failed \([0-9]*\) push_ok \([0-9]*\).*/\3 \1 \2/p' "$1" >> /tmp/sync.sum
}

# The counts go from a regular file, not a pipe: the listener's stdin is
# /dev/null, so it half-closes the connection as soon as it accepts, and
# busybox nc exits 0 on the peer's EOF. From a pipe whose writer had not
# written yet, nc could see that EOF first and send nothing; a file is
# readable at once, and nc serves stdin before the socket in each round.
sync_send() {
	touch /tmp/sync.sum
	awk '{ ok += $1; unk += $2; fl += $3 } END { print ok + 0, unk + 0, fl + 0 }' \
		/tmp/sync.sum > /tmp/sync.out
	nc -w 10 "$1" $SYNC_PORT < /tmp/sync.out ||
		{ echo "# FAIL: sending the push counts to $1"; return 1; }
	rm -f /tmp/sync.sum /tmp/sync.out
}

sync_check() {
	pushes=${1:-}
	wait_until 20 sh -c "! kill -0 $SYNC_NC 2>/dev/null" ||
		{ kill "$SYNC_NC"; echo "# FAIL: no push counts came"; return 1; }
	wait "$SYNC_NC" 2>/dev/null || true
	# shellcheck disable=SC2046
	set -- $(cat /tmp/sync.in) x x x
	[ -n "$pushes" ] || pushes=$(srv_count pushes)
	echo "# pushes: server $pushes, client ok $1 unknown $2 failed $3"
	[ "$1" != x ] && [ "$pushes" -ge "$1" ] &&
		[ "$pushes" -le $(($1 + $2 + $3)) ] ||
		{ echo "# FAIL: the server's pushes are not within the client's"; return 1; }
}

# rig_barrier NAME SECS: a bxrig barrier whose timeout stretches on the
# debug kernel like the per-test timeout (run_tests.sh).
BX_SLOW=1
if [ "${BXRIG_FLAVOR:-}" = debug ]; then BX_SLOW=3; fi
# On a timeout it shows eth0's counters: whether this guest's link still
# moved frames (a guest that reached no peer failed CI once, unexplained).
rig_barrier() {
	bxrig barrier "$1" $(($2 * BX_SLOW)) && return 0
	ip -s link show eth0 2>&1 | sed 's/^/# /'
	return 1
}
