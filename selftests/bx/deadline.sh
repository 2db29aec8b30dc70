#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Deadlines and cancellation across two guests: guest 0 serves, guest 1's
# processes push and pull. No operation may wait forever, or hold the
# shared connection's window, its registrations or its region, once its
# deadline passed or its process is gone; and none of that may cost
# another process its operations.
#
#   stuck_exit   a process pushes 256 operations to a service that never
#                posts a receive buffer (every push bounced BUSY, again
#                and again), while another process's pushes to another
#                service on the same connection all complete; the first
#                is killed: its host is idle again (no operation, MR or
#                region left, the window empty) within a second or two
#   deadline     pushes with a deadline of 1.5 s to that service all end
#                with ETIMEDOUT, leave nothing behind, and keep the
#                connection (one on the wire at its deadline ends with
#                its BUSY answer, within the grace)
#   pull_overdue a pull whose server never answers ends with ETIMEDOUT at
#                its deadline, by ending the connection; another
#                process's pushes meanwhile are recovered and complete
#                exactly once
#   deadline_cap an unprivileged process's pull without a deadline (none
#                asked, op_timeout_ms 0) still ends at op_timeout_max_ms
#   share        nobody keeps 128 pulls of 64 KiB on the wire to a
#                service that never answers -- the whole connection
#                window -- while root also has bx open: nobody holds at
#                most user_wnd_pct of it, and root's pulls go through
#                within their deadline; nobody sees the connection in a
#                dump while its file holds the peer, root's alone not;
#                then nobody's process is killed with those pulls on the
#                wire: the connection's window is empty again at once
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
STUCK=8
MUTE=9
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
DBG=/sys/kernel/debug/bx

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi

b() { rig_barrier "deadline.$1" 180; }

# The QP numbers of this host's connections.
conn_qps() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "qp") print $(i + 1) }' $DBG/conns
}

idle() {
	[ "$(stat_of ops_inflight)" = 0 ] && [ "$(stat_of mrs_inuse)" = 0 ] &&
		[ "$(stat_of region_bytes)" = 0 ] &&
		! grep -q "wnd_bytes [1-9]" $DBG/conns
}

case_stuck_exit() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 32 -b 0 -r 32
		serve2_start $STUCK -n 0 -b 0 -r 4
		b stuck.up; b stuck.done
		try serve_stop
		serve2_stop
	else
		b stuck.up
		"$PP" client -a "$SERVER" -s $STUCK -m push -z 65536 -q 256 \
			-i 256 -T 600000 > /tmp/stuck.out 2>&1 &
		stuck=$!
		try check wait_until 30 sh -c "[ \$(awk '\$1 == \"ops_inflight\" { print \$2 }' $DBG/stats) -ge 200 ]"
		echo "# stuck: $(grep -E '^(ops_inflight|mrs_inuse|region_bytes) ' $DBG/stats | tr '\n' ' ')"
		# Another process's pushes get through meanwhile.
		out=$("$PP" client -a "$SERVER" -s $SVC -m push -z 65536,4096 \
			-i 16 -q 4 -T 60000 2>&1) || { echo "# FAIL: $out"; ERR=1; }
		echo "# beside it: $(echo "$out" | head -1)"
		# bx_pp runs its work in a child: that is the process to kill.
		kill_tree KILL $stuck
		wait $stuck 2>/dev/null || true
		t0=$(date +%s)
		try check wait_until 10 idle
		echo "# idle $(($(date +%s) - t0)) s after the kill"
		idle || sed 's/^/# /' $DBG/stats $DBG/conns
		b stuck.done
	fi
	result
}

case_deadline() {
	if [ "$ID" -eq 0 ]; then
		serve2_start $STUCK -n 0 -b 0 -r 4
		b dl.up; b dl.done
		serve2_stop
	else
		b dl.up
		q0=$(conn_qps)
		t0=$(date +%s)
		out=$("$PP" client -a "$SERVER" -s $STUCK -m push -z 65536,100 \
			-q 16 -i 8 -T 1500 2>&1) &&
			{ echo "# FAIL: pushes to nobody succeeded: $out"; ERR=1; }
		echo "# $(echo "$out" | tr '\n' ' ') in $(($(date +%s) - t0)) s"
		try check sh -c "echo '$out' | grep -q '^bx_pp client: ok 0 failed 16 '"
		try check sh -c "echo '$out' | grep -q '16 x Connection timed out'"
		try check wait_until 10 idle
		# The server answered each push (BUSY), also one on the wire
		# at its deadline: none cost the shared connection a reconnect.
		q1=$(conn_qps)
		echo "# connection's QP before: ${q0:-none}, after: ${q1:-none}"
		[ -n "$q1" ] && [ "$q1" = "$q0" ] ||
			{ echo "# FAIL: the connection was made again (QP ${q0:-none} -> ${q1:-none})"; ERR=1; }
		b dl.done
	fi
	result
}

case_pull_overdue() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 32 -b 0 -r 32
		serve2_start $MUTE -N -n 8 -b 0 -r 4
		sync_listen
		b po.up; b po.done
		# A push being read when the connection ended fails its RECV.
		try serve_stop errors-ok
		try sync_check
		serve2_stop
	else
		b po.up
		rm -f /tmp/sync.sum
		"$PP" client -a "$SERVER" -s $SVC -m push -z 4096,65536 -P 2 \
			-q 2 -t 8 -S > /tmp/po.push 2>&1 &
		pushes=$!
		sleep 1
		q0=$(conn_qps)
		out=$("$PP" client -a "$SERVER" -s $MUTE -m pull -z 4096 -q 1 \
			-i 1 -T 2000 2>&1) &&
			{ echo "# FAIL: a pull nobody answered succeeded: $out"; ERR=1; }
		echo "# $(echo "$out" | tr '\n' ' ')"
		try check sh -c "echo '$out' | grep -q 'Connection timed out'"
		wait $pushes || { echo "# FAIL: pushes: $(cat /tmp/po.push)"; ERR=1; }
		echo "# beside it: $(head -2 /tmp/po.push | tr '\n' ' ')"
		sync_add /tmp/po.push
		try sync_send "$SERVER"
		# The connection was ended for it, and a new one carried on.
		q1=$(conn_qps)
		echo "# qp $q0 -> $q1"
		try check [ "$q0" != "$q1" ]
		try check wait_until 10 idle
		b po.done
	fi
	result
}

P=/sys/module/bx/parameters

set_nobody() {
	grep -q '^nobody:' /etc/passwd ||
		echo "nobody:x:65534:65534:nobody:/tmp:/bin/sh" >> /etc/passwd
	grep -q '^nogroup:' /etc/group || echo "nogroup:x:65534:" >> /etc/group
}
# As nobody, with root's RLIMIT_MEMLOCK (a region of 20 MiB, unprivileged).
as_nobody() { (ulimit -l unlimited && su -s /bin/sh nobody -c "$*"); }

case_deadline_cap() {
	if [ "$ID" -eq 0 ]; then
		serve2_start $MUTE -N -n 8 -b 0 -r 4
		b cap.up; b cap.done
		serve2_stop
	else
		set_nobody
		t0_ms=$(cat $P/op_timeout_ms) m0=$(cat $P/op_timeout_max_ms)
		echo 0 > $P/op_timeout_ms
		echo 3000 > $P/op_timeout_max_ms
		b cap.up
		t0=$(date +%s)
		out=$(as_nobody "$PP client -a $SERVER -s $MUTE -m pull -z 4096 -q 1 -i 1 -T 0" 2>&1) &&
			{ echo "# FAIL: a pull nobody answered succeeded: $out"; ERR=1; }
		t=$(($(date +%s) - t0))
		echo "# nobody, no deadline asked: $(echo "$out" | tr '\n' ' ') after $t s"
		try check sh -c "echo '$out' | grep -q 'Connection timed out'"
		# 3 s and the grace; not the minutes of no deadline at all.
		try check [ "$t" -le $((10 * BX_SLOW)) ]
		echo "$t0_ms" > $P/op_timeout_ms
		echo "$m0" > $P/op_timeout_max_ms
		b cap.done
	fi
	result
}

# The connection window's operations in flight (debugfs), at least $1.
wnd_ops() { awk '{ for (i = 1; i < NF; i++) if ($i == "wnd_ops") print $(i + 1) }' $DBG/conns | head -1; }
wnd_ops_ge() { [ "$(wnd_ops)" -ge "$1" ] 2>/dev/null; }
wnd_ops_is() { [ "$(wnd_ops)" = "$1" ]; }

case_share() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 32 -b 0 -r 32
		serve2_start $MUTE -N -n 256 -b 0 -r 40
		b share.up; b share.done; b share.closed
		serve_stop errors-ok || { echo "# FAIL: server"; ERR=1; }
		serve2_stop
	else
		set_nobody
		# Root has bx open all along (a server of its own).
		"$PP" serve -s 11 -n 1 -r 1 > /tmp/hold.out 2>&1 &
		hold=$!
		wait_until 10 grep -q ready /tmp/hold.out
		b share.up
		as_nobody "$PP client -a $SERVER -s $MUTE -m pull -z 65536 -q 128 -i 128 -T 120000" > /tmp/silent.out 2>&1 &
		silent=$!
		# Its pulls on the wire, as many as its share lets it.
		wait_until 30 wnd_ops_ge 32
		sleep 1
		w=$(wnd_ops)
		echo "# nobody's silent pulls in the connection window: ${w:-none} of $(cat $P/wnd_ops)"
		try check [ "${w:-0}" -le $(($(cat $P/wnd_ops) * $(cat $P/user_wnd_pct) / 100)) ]
		# Nobody sees the connection its file uses; root's peers are not
		# in its dump otherwise.
		try check sh -c "su -s /bin/sh nobody -c 'bxctl -j conn' | grep -q '\"state\":\"up\"'"
		t0=$(date +%s)
		out=$("$PP" client -a "$SERVER" -s $SVC -m pull -z 65536 -i 8 -q 2 \
			-T $((20000 * BX_SLOW)) 2>&1) || { echo "# FAIL: root's pulls: $out"; ERR=1; }
		echo "# root beside it: $(echo "$out" | head -1) in $(($(date +%s) - t0)) s"
		b share.done
		# close_cancel: nobody goes, its pulls still on the wire.
		# Every process of nobody's (su's shell, bx_pp and its worker).
		ps | awk '$2 == "nobody" { print $1 }' | xargs -r kill -KILL
		wait $silent 2>/dev/null || true
		t0=$(date +%s)
		try check wait_until 5 wnd_ops_is 0
		echo "# window empty $(($(date +%s) - t0)) s after the kill (ops still awaiting answers: $(stat_of ops_inflight))"
		try check sh -c "su -s /bin/sh nobody -c 'bxctl -j conn' | grep -qx '\\[\\]'"
		kill $hold
		wait $hold 2>/dev/null || true
		b share.closed
	fi
	result
}

ktap_plan 5
run_test stuck_exit case_stuck_exit
run_test deadline case_deadline
run_test pull_overdue case_pull_overdue
run_test deadline_cap case_deadline_cap
run_test share case_share
ktap_finish
