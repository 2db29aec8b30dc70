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

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

run_test() {
	local name=$1 fn=$2 rc=0
	_ktap_n=$((_ktap_n + 1))
	# Not "( ... ) || rc=$?": a tested subshell silently disables set -e.
	( set -e; "$fn" )
	rc=$?
	case $rc in
	0) echo "ok $_ktap_n $name"; _ktap_pass=$((_ktap_pass + 1)) ;;
	4) echo "ok $_ktap_n $name # SKIP"; _ktap_skip=$((_ktap_skip + 1)) ;;
	*) echo "not ok $_ktap_n $name"; _ktap_fail=$((_ktap_fail + 1)) ;;
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

bx_devices() { cat /sys/kernel/debug/bx/devices 2>/dev/null; }
bx_has_dev() { bx_devices | grep -q "^$1 "; }
bx_lacks_dev() { ! bx_has_dev "$1"; }
# A module-wide counter of debugfs "stats".
stat_of() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/bx/stats; }

# ---- cases that span guests ----------------------------------------------
# A case keeps going after a failed step so that every guest still meets
# every barrier; it fails at its end (result) if any step failed.
ERR=
try() { "$@" || ERR=1; }
result() { [ -z "$ERR" ]; }
check() { "$@" || { echo "# FAIL: $*"; return 1; }; }

# bx_pp serve ARGS... in the background, on service $SVC; waits for it.
serve_start() {
	"$PP" serve -s "$SVC" "$@" > /tmp/srv.out 2>&1 &
	SRV=$!
	wait_until 10 grep -q ready /tmp/srv.out ||
		{ echo "# FAIL: server not ready: $(cat /tmp/srv.out)"; ERR=1; }
}

# Stop it; it must have seen no bad data and, unless "serve_stop
# errors-ok" (replies to a connection that failed), no error.
serve_stop() {
	kill -TERM "$SRV"
	rc=0
	wait "$SRV" || rc=$?
	echo "# $(tail -1 /tmp/srv.out)"
	want="bad 0 errors 0"
	[ "${1:-}" = errors-ok ] && want="bad 0 errors"
	[ $rc -eq 0 ] && grep -q "$want" /tmp/srv.out ||
		{ echo "# FAIL: server: $(cat /tmp/srv.out)"; return 1; }
}
