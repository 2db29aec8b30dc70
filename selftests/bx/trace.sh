#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bx's tracepoints (kmod/trace.h; Documentation/bx.rst, "Tracepoints"),
# read back from a tracefs instance of their own (events/bx/ enabled
# there, the global clock, the buffer checked for losses). Guest 0
# serves, guest 1 is the client; further guests only meet the barriers.
# Each case starts from a fresh bx (so that connections are made under
# the trace) and the test leaves bx loaded with its defaults.
#
#   format       every event is there, with its fields, and its print
#                format has bx's enums resolved (for perf and trace-cmd)
#   unreachable  (one guest) a push to an address nobody answers: one
#                submit and one completion with an error, the connection
#                new -> connecting -> down with an error
#   ops          pushes and pulls of 100 B and 64 KiB: as many submits
#                and completions as the client did operations, each op
#                submitted once, admitted, completed once with its size;
#                the connection new -> connecting -> up on both sides,
#                replies and rendezvous READs (srv_read) on the server,
#                credits granted back to the client
#   windows      wnd_ops 4, then host_wnd_ops 4: pushes wait for the
#                connection's window, then for the host's, each with the
#                window full, and each is admitted after its wait; the
#                server's READs wait for rd_max
#   recover      a pull nobody answers ends the connection at its
#                deadline while pushes run beside it (deadline.sh): the
#                connection up -> down (ETIMEDOUT) and a new one up; the
#                pushes parked and each sent again or given up, as the
#                recovery's summary counts them
#
# Without tracefs or event tracing the test skips.
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
MUTE=9
ID=${BXRIG_ID:-0}
N=${BXRIG_N:-1}
SERVER=${BXRIG_PEER0:-192.0.2.1}
CLIENT=${BXRIG_PEER1:-192.0.2.2}
NOBODY=192.0.2.79
PARAMS=/sys/module/bx/parameters
ITERS=16

[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root"; exit $KSFT_SKIP; }
[ -d /sys/module/bx ] || { echo "1..0 # SKIP bx not loaded"; exit $KSFT_SKIP; }

# tracefs: mounted already, or mounted here (and unmounted at the end).
T=/sys/kernel/tracing
MOUNTED=
if [ ! -d $T/events ] && mount -t tracefs nodev $T 2>/dev/null; then
	MOUNTED=1
fi
[ -d $T/events ] || T=/sys/kernel/debug/tracing
if [ ! -d $T/events ] || [ ! -d $T/instances ]; then
	echo "1..0 # SKIP no tracefs with event tracing"
	exit $KSFT_SKIP
fi
I=$T/instances/bx_selftest
TR=/tmp/trace.txt

EVENTS="bx_op_submit bx_op_complete bx_conn_state bx_tx_stall
bx_credit_grant bx_wnd_wait bx_wnd_admit bx_op_park bx_op_resend
bx_op_giveup bx_recover_round bx_recover_done"

b() { rig_barrier "trace.$1" 180; }

# A fresh bx: no connection, the default tunables (and no instance of
# ours left by a case that failed half-way).
fresh() {
	if [ -d $I ]; then
		echo 0 > $I/events/bx/enable
		rmdir $I
	fi
	rmmod bx 2>/dev/null || true
	modprobe bx
	wait_until 10 bx_has_dev rxe0
}

# trace_on: events/bx/ on, in an instance of our own.
trace_on() {
	rmdir $I 2>/dev/null || true
	mkdir $I
	echo global > $I/trace_clock
	echo 4096 > $I/buffer_size_kb
	echo 1 > $I/events/bx/enable
}

# trace_off NAME: events off, the trace into $TR (and /tmp/trace.NAME);
# fails if the buffer lost any event.
trace_off() {
	echo 0 > $I/events/bx/enable
	cat $I/trace > $TR
	cp $TR "/tmp/trace.$1"
	lost=$(cat $I/per_cpu/cpu*/stats |
		awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }')
	rmdir $I
	echo "# trace.$1: $(grep -c ': bx_' $TR) events, lost $lost"
	[ "$lost" -eq 0 ] || { echo "# FAIL: the trace buffer lost $lost events"; return 1; }
}

# tr_ev EVENT: the fields of EVENT's lines in $TR, " key=value ... ".
tr_ev() {
	awk -v e=" $1: " '{ i = index($0, e); if (i) print " " substr($0, i + length(e)) " " }' $TR
}

# tr_n EVENT [ERE]...: how many of EVENT's lines match every ERE.
tr_n() {
	ev=$1
	shift
	tr_ev "$ev" > /tmp/trace.sel
	for p in "$@"; do
		grep -E -e "$p" /tmp/trace.sel > /tmp/trace.sel2 || true
		mv /tmp/trace.sel2 /tmp/trace.sel
	done
	grep -c . /tmp/trace.sel || true
}

# tr_sum EVENT FIELD: the sum of FIELD over EVENT's lines.
tr_sum() {
	tr_ev "$1" | awk -v k="$2=" '{
		for (i = 1; i <= NF; i++)
			if (index($i, k) == 1) s += substr($i, length(k) + 1)
	} END { print s + 0 }'
}

# tr_field EVENT FIELD ERE: FIELD of the first of EVENT's lines matching ERE.
tr_field() {
	tr_ev "$1" | grep -E -e "$3" | awk -v k="$2=" '{
		for (i = 1; i <= NF; i++)
			if (index($i, k) == 1) { print substr($i, length(k) + 1); exit }
	}'
}

# expect WHAT N OP M: N (a count of WHAT) compares to M by OP (-eq ...).
expect() {
	echo "# $1: $2"
	test "$2" "$3" "$4" || { echo "# FAIL: $1: $2, expected $3 $4"; return 1; }
}

# tr_order EVENT ERE1 ERE2: one of EVENT's lines matches ERE2 after one
# that matches ERE1.
tr_order() {
	tr_ev "$1" | awk -v a="$2" -v b="$3" '
		s && $0 ~ b { f = 1 }
		$0 ~ a { s = 1 }
		END { exit !f }' ||
		{ echo "# FAIL: no $1 \"$3\" after \"$2\""; return 1; }
}

# The awk function f(KEY): the value of KEY= on the current line.
AWK_F='function f(k,  i) {
	for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1) return substr($i, length(k) + 2)
	return ""
}'

# Every push and pull (op pointer) is submitted once, then completed once;
# one that succeeded was admitted to the windows in between, with its
# length as result (a push) or a response (a pull).
ops_paired() {
	awk "$AWK_F"'
	/ bx_op_(submit|complete): / && f("kind") != "push" && f("kind") != "pull" { next }
	/ bx_op_submit: / {
		op = f("op")
		if (open[op]) { print "# FAIL: op " op " submitted twice"; bad++ }
		open[op] = 1; adm[op] = 0; len[op] = f("len"); n++
	}
	/ bx_wnd_admit: / { adm[f("op")] = 1 }
	/ bx_op_complete: / {
		op = f("op"); res = f("res") + 0
		if (!open[op]) { print "# FAIL: op " op " completed, not submitted"; bad++ }
		if (res >= 0 && !adm[op]) { print "# FAIL: op " op " completed, not admitted"; bad++ }
		if (res >= 0 && f("kind") == "push" && res != len[op]) {
			print "# FAIL: push " op " of " len[op] " bytes completed with " res; bad++
		}
		open[op] = 0; done++
	}
	END {
		for (op in open)
			if (open[op]) { print "# FAIL: op " op " never completed"; bad++ }
		print "# ops paired: " n + 0 " submitted, " done + 0 " completed"
		exit bad != 0
	}' $TR
}

# Every op that waited for a window was admitted afterwards, as having
# waited for it.
waits_admitted() {
	awk "$AWK_F"'
	/ bx_wnd_wait: / { w[f("op") " " f("wnd")] = 1; n++ }
	/ bx_wnd_admit: / {
		op = f("op"); k = split(f("waited"), a, "|")
		for (i = 1; i <= k; i++) delete w[op " " a[i]]
	}
	END {
		for (x in w) { print "# FAIL: op and window " x ": waited, never admitted"; bad++ }
		print "# waits: " n + 0
		exit bad != 0
	}' $TR
}

# Every parked op was sent again or given up afterwards, once per park.
parks_resolved() {
	awk "$AWK_F"'
	/ bx_op_park: / { p[f("op")]++; n++ }
	/ bx_op_(resend|giveup): / {
		op = f("op")
		if (!p[op]) { print "# FAIL: op " op " sent again or given up, not parked"; bad++ }
		else p[op]--
	}
	END {
		for (op in p) if (p[op]) { print "# FAIL: op " op " parked, never resolved"; bad++ }
		print "# parks: " n + 0
		exit bad != 0
	}' $TR
}

# The events' format files: each event, its fields, its enums resolved.
case_format() {
	for e in $EVENTS; do
		[ -r $T/events/bx/$e/format ] || fail "no event $e"
	done
	fields() {
		for x in "$@"; do
			grep -q "field:.*[ *]$x\(\[.*\]\)*;" $T/events/bx/$e/format ||
				fail "$e has no field $x"
		done
	}
	e=bx_op_submit; fields op user_data peer service len resp_len kind
	e=bx_op_complete; fields op user_data peer len res kind retries
	e=bx_conn_state; fields conn peer qpn old_state new_state err active addr
	e=bx_tx_stall; fields conn peer qpn credits tx_free
	e=bx_credit_grant; fields conn peer qpn n credits
	for e in bx_wnd_wait bx_wnd_admit; do
		fields op bytes peer cost ops small kind wnd small_op
	done
	for e in bx_op_park bx_op_resend bx_op_giveup; do
		fields op user_data seq peer len kind fresh
	done
	e=bx_recover_round; fields peer round backoff up expired addr
	e=bx_recover_done; fields peer round resent failed up
	# TRACE_DEFINE_ENUM: user space sees numbers, not bx's names.
	! grep -q "BX_" $T/events/bx/*/format || fail "unresolved: $(grep -ho 'BX_[A-Z_]*' $T/events/bx/*/format | sort -u | tr '\n' ' ')"
	grep -q '1, "push"' $T/events/bx/bx_op_submit/format || fail "no push in bx_op_submit's format"
	echo 1 > $T/events/bx/enable
	echo 0 > $T/events/bx/enable
	[ "$(cat $T/events/bx/enable)" = 0 ] || fail "events/bx/enable: $(cat $T/events/bx/enable)"
}

# One guest: a push to an address where nobody answers.
case_unreachable() {
	fresh
	trace_on
	out=$("$PP" client -a $NOBODY -s $SVC -z 100 -i 1 -q 1 -m push 2>&1) &&
		{ trace_off unreachable; fail "a push to nobody succeeded: $out"; }
	echo "# $(echo "$out" | tr '\n' ' ')"
	trace_off unreachable
	sed -n 's/.* \(bx_[a-z_]*: \)/# \1/p' $TR | head -20
	peer=$(tr_field bx_conn_state peer " addr=$NOBODY ")
	[ -n "$peer" ] || fail "no bx_conn_state for $NOBODY"
	expect "connections made" "$(tr_n bx_conn_state " addr=$NOBODY " " dir=out " " new -> connecting err=0 ")" -eq 1
	expect "connections failed" "$(tr_n bx_conn_state " addr=$NOBODY " " connecting -> down err=-[1-9]")" -ge 1
	expect "submits" "$(tr_n bx_op_submit " kind=push " " peer=$peer " " len=100 " " service=$SVC ")" -eq 1
	expect "completions" "$(tr_n bx_op_complete " kind=push " " peer=$peer " " res=-[1-9]")" -eq 1
	expect "successes" "$(tr_n bx_op_complete " res=[0-9]")" -eq 0
	ops_paired
	parks_resolved
	fresh
}

# Two guests: pushes and pulls, counted.
case_ops() {
	[ "$N" -ge 2 ] || { echo "# needs two rig guests"; return $KSFT_SKIP; }
	fresh
	[ "$ID" -ne 0 ] || serve_start -n 32 -b 0 -r 40
	[ "$ID" -gt 1 ] || trace_on
	b ops.up
	if [ "$ID" -eq 1 ]; then
		out=$("$PP" client -a "$SERVER" -s $SVC -z 100,65536 -i $ITERS \
			-q 4 -m both 2>&1) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
		try check sh -c "echo '$out' | grep -q '^bx_pp client: ok $((4 * ITERS)) failed 0 bad 0'"
	fi
	b ops.done
	[ "$ID" -gt 1 ] && { b ops.checked; result; return; }
	try trace_off "ops.$ID"
	if [ "$ID" -eq 0 ]; then
		try serve_stop
		# The client: connected to us.
		try tr_order bx_conn_state " addr=$CLIENT dir=in .* new -> connecting " \
			" addr=$CLIENT dir=in .* connecting -> up err=0 "
		peer=$(tr_field bx_conn_state peer " addr=$CLIENT ")
		try expect "replies submitted" "$(tr_n bx_op_submit " kind=reply " " peer=$peer ")" -eq $((2 * ITERS))
		try expect "replies completed" "$(tr_n bx_op_complete " kind=reply " " peer=$peer " " res=[0-9]")" -eq $((2 * ITERS))
		# The 64 KiB pushes came by rendezvous: our READs filled RECVs.
		try expect "READs completed" "$(tr_n bx_op_complete " kind=srv_read " " peer=$peer " " len=65536 " " res=65536 ")" -eq $ITERS
		try expect "READs admitted" "$(tr_n bx_wnd_admit " kind=srv_read " " cost=65536 ")" -ge $ITERS
		try expect "errors" "$(tr_n bx_op_complete " res=-")" -eq 0
	else
		try tr_order bx_conn_state " addr=$SERVER dir=out .* new -> connecting " \
			" addr=$SERVER dir=out .* connecting -> up err=0 "
		peer=$(tr_field bx_conn_state peer " addr=$SERVER ")
		try expect "pushes submitted" "$(tr_n bx_op_submit " kind=push " " peer=$peer ")" -eq $((2 * ITERS))
		try expect "100 B pushes" "$(tr_n bx_op_submit " kind=push " " len=100 " " service=$SVC ")" -eq $ITERS
		try expect "pulls submitted" "$(tr_n bx_op_submit " kind=pull " " peer=$peer ")" -eq $((2 * ITERS))
		try expect "64 KiB pulls" "$(tr_n bx_op_submit " kind=pull " " resp_len=65536 ")" -eq $ITERS
		try expect "pushes completed" "$(tr_n bx_op_complete " kind=push " " peer=$peer " " res=[0-9]")" -eq $((2 * ITERS))
		try expect "pulls completed" "$(tr_n bx_op_complete " kind=pull " " peer=$peer " " res=[0-9]")" -eq $((2 * ITERS))
		try expect "64 KiB responses" "$(tr_n bx_op_complete " kind=pull " " res=65536 ")" -eq $ITERS
		try expect "other peers" "$(tr_n bx_op_submit)" -eq $((4 * ITERS))
		try ops_paired
		# The server's reposted buffers came back to us as credits.
		try expect "credit grants" "$(tr_n bx_credit_grant " peer=$peer " " granted=[1-9]")" -ge 1
		echo "# sends that waited: $(tr_n bx_tx_stall " waits=credit ") for credits, $(tr_n bx_tx_stall " waits=buffer ") for buffers"
		try expect "down" "$(tr_n bx_conn_state " -> down ")" -eq 0
	fi
	b ops.checked
	result
}

# Two guests: the windows. A marker in the trace separates the rounds.
case_windows() {
	[ "$N" -ge 2 ] || { echo "# needs two rig guests"; return $KSFT_SKIP; }
	fresh
	[ "$ID" -ne 0 ] || serve_start -n 32 -b 0 -r 40
	[ "$ID" -gt 1 ] || trace_on
	b wnd.up
	if [ "$ID" -eq 1 ]; then
		echo 4 > $PARAMS/wnd_ops
		out=$("$PP" client -a "$SERVER" -s $SVC -z 65536 -i 32 -q 16 \
			-m push 2>&1) || try check false "$out"
		echo "# wnd_ops 4: $(echo "$out" | head -1)"
		echo "bx_selftest host round" > $I/trace_marker
		echo 128 > $PARAMS/wnd_ops
		echo 4 > $PARAMS/host_wnd_ops
		out=$("$PP" client -a "$SERVER" -s $SVC -z 65536 -i 32 -q 16 \
			-m push 2>&1) || try check false "$out"
		echo "# host_wnd_ops 4: $(echo "$out" | head -1)"
	fi
	b wnd.done
	[ "$ID" -gt 1 ] && { b wnd.checked; result; return; }
	try trace_off "windows.$ID"
	if [ "$ID" -eq 0 ]; then
		try serve_stop
		# rd_max 1: one READ at a time on the connection.
		try expect "READs that waited" "$(tr_n bx_wnd_wait " kind=srv_read " " wnd=conn ")" -ge 1
		try expect "READ waits with none in flight" "$(tr_n bx_wnd_wait " kind=srv_read " " ops=0 ")" -eq 0
		try waits_admitted
	else
		cp $TR /tmp/trace.all
		sed '/bx_selftest host round/,$d' /tmp/trace.all > $TR
		try expect "conn waits" "$(tr_n bx_wnd_wait " kind=push " " wnd=conn " " cost=65536 ")" -ge 1
		try expect "conn waits with the window full" "$(tr_n bx_wnd_wait " wnd=conn " " ops=4 ")" -eq "$(tr_n bx_wnd_wait " wnd=conn ")"
		try expect "host waits (round 1)" "$(tr_n bx_wnd_wait " wnd=host ")" -eq 0
		try expect "admitted after a conn wait" "$(tr_n bx_wnd_admit " waited=conn ")" -ge 1
		sed -n '/bx_selftest host round/,$p' /tmp/trace.all > $TR
		try expect "host waits" "$(tr_n bx_wnd_wait " kind=push " " wnd=host " " cost=65536 ")" -ge 1
		try expect "host waits, window empty or past full" "$(tr_n bx_wnd_wait " wnd=host " " ops=(0|[5-9]|[1-9][0-9]+) ")" -eq 0
		try expect "conn waits (round 2)" "$(tr_n bx_wnd_wait " wnd=conn ")" -eq 0
		cp /tmp/trace.all $TR
		try waits_admitted
		try ops_paired
	fi
	b wnd.checked
	fresh
	result
}

# Why no recovery ended: the client's connection states, parks, rounds
# and its pull's end, as far as the trace shows them.
recover_why() {
	cat $I/trace > $TR
	echo "# conn: $(tr_ev bx_conn_state | awk '{ print $3, $4, $6, $7, $8, $9 }' | tr '\n' ';')"
	echo "# parked $(tr_n bx_op_park) resent $(tr_n bx_op_resend) given up $(tr_n bx_op_giveup) rounds $(tr_n bx_recover_round)"
	echo "# pull: $(tr_ev bx_op_complete | grep " kind=pull " | tr '\n' ';')"
}

# Two guests: recovery, after a pull that is never answered.
case_recover() {
	[ "$N" -ge 2 ] || { echo "# needs two rig guests"; return $KSFT_SKIP; }
	fresh
	if [ "$ID" -eq 0 ]; then
		serve_start -n 32 -b 0 -r 32
		: > /tmp/mute.out
		"$PP" serve -s $MUTE -N -n 8 -b 0 -r 4 > /tmp/mute.out 2>&1 &
		mute=$!
		try check wait_until 10 grep -q ready /tmp/mute.out
	fi
	[ "$ID" -gt 1 ] || trace_on
	b rec.up
	if [ "$ID" -eq 1 ]; then
		# The pull first, alone on the connection: it is on the wire
		# when its deadline passes, not queued behind the pushes (an
		# op that expires queued ends alone, not the connection).
		"$PP" client -a "$SERVER" -s $MUTE -m pull -z 4096 -q 1 \
			-i 1 -T 3000 > /tmp/rec.pull 2>&1 &
		pull=$!
		try check wait_until 10 grep -q " bx_conn_state: .* addr=$SERVER .* -> up " $I/trace
		# Pushes well past the pull's end (3 s, 1 s of grace, the
		# sweep), eight in flight per process, so that some are in bx
		# when it ends the connection (a synchronous push is in bx for
		# only part of its loop: four of them were all out at times).
		"$PP" client -a "$SERVER" -s $SVC -m push -z 4096,65536 -P 4 \
			-q 8 -t $((8 * BX_SLOW)) > /tmp/rec.push 2>&1 &
		pushes=$!
		wait $pull && { echo "# FAIL: a pull nobody answered succeeded"; ERR=1; }
		echo "# $(tr '\n' ' ' < /tmp/rec.pull)"
		check wait_until 30 grep -q " bx_recover_done: " $I/trace ||
			{ ERR=1; recover_why; }
		wait $pushes || { echo "# FAIL: pushes: $(cat /tmp/rec.push)"; ERR=1; }
		echo "# beside it: $(head -2 /tmp/rec.push | tr '\n' ' ')"
	fi
	b rec.done
	[ "$ID" -gt 1 ] && { b rec.checked; result; return; }
	try trace_off "recover.$ID"
	if [ "$ID" -eq 0 ]; then
		try serve_stop errors-ok
		kill -TERM $mute 2>/dev/null
		wait $mute 2>/dev/null || true
		# The client's new connection replaced the one it gave up.
		try tr_order bx_conn_state " addr=$CLIENT .* up -> down " \
			" addr=$CLIENT dir=in .* connecting -> up "
	else
		tr_ev bx_conn_state | sed 's/^/# /'
		tr_ev bx_recover_done | sed 's/^/# /'
		peer=$(tr_field bx_conn_state peer " addr=$SERVER ")
		# ETIMEDOUT: the unanswered pull's deadline ended the connection.
		try expect "connections ended by the deadline" "$(tr_n bx_conn_state " addr=$SERVER " " up -> down err=-110 ")" -ge 1
		try tr_order bx_conn_state " up -> down err=-110 " \
			" addr=$SERVER dir=out .* connecting -> up err=0 "
		try expect "the pull's end" "$(tr_n bx_op_complete " kind=pull " " peer=$peer " " res=-110 ")" -eq 1
		try expect "parked" "$(tr_n bx_op_park " kind=push " " peer=$peer ")" -ge 1
		try parks_resolved
		try expect "recovery rounds that found a connection" "$(tr_n bx_recover_round " peer=$peer " " up=1 ")" -ge 1
		try expect "recoveries done" "$(tr_n bx_recover_done " peer=$peer " " up=1 ")" -ge 1
		# The summaries count what the per-op events show (fresh ones:
		# never sent before, counted in neither).
		try expect "resent per the summaries" "$(tr_sum bx_recover_done resent)" -eq "$(tr_n bx_op_resend " fresh=0 ")"
		try expect "failed per the summaries" "$(tr_sum bx_recover_done failed)" -eq "$(tr_n bx_op_giveup " fresh=0 ")"
		try ops_paired
	fi
	b rec.checked
	fresh
	result
}

ktap_plan 5
run_test format case_format
run_test unreachable case_unreachable
run_test ops case_ops
run_test windows case_windows
run_test recover case_recover
rmdir $I 2>/dev/null
[ -z "$MOUNTED" ] || umount $T
ktap_finish
