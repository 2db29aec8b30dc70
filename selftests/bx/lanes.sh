#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Lanes (qps_per_peer) across two guests: guest 0 serves, guest 1's
# processes push and pull, with qps_per_peer 4 on both. bx_pp verifies
# every byte; the server sees no push twice (bx_pp's unique push seeds).
#
#   spread       8 processes: exactly 4 connections to the peer on each
#                side (lanes 0 to 3, bxctl -j conn), each of which
#                carried traffic; conn-get of one lane (bxctl conn peer
#                ID lane N)
#   lane_fail    while 8 processes push and pull through libbx's
#                recovery (bx_pp -S), one more pulls from a service that
#                never answers, with a deadline: its lane's connection
#                is ended for it (deadline.sh's pull_overdue), the other
#                three keep their QPs; no pull fails, no push is
#                certainly undelivered, the server's pushes are within
#                the client's counts (exactly once), and 4 lanes are up
#                again at the end
#   link_outage  the server's link is set down for longer than the RC
#                retries last, then up again, under the same load: every
#                lane fails and recovers, with the same verdicts
#   refusal      bx reloaded on both, the server with qps_per_peer 2: it
#                refuses the client's lanes 2 and 3 (a reject that says
#                it takes 2), the client caps itself and moves their
#                operations to lanes 0 and 1; the same load passes with
#                the same verdicts over exactly lanes 0 and 1 on each side
#
#   nolanes      the server a bx that predates lanes: bx unloaded on
#                guest 0, bx_hostile serve (which answers pulls and
#                pushes as bx_pp serve and accepts every lane's request
#                with lane 0) in its place; the client, bx reloaded with
#                qps_per_peer 4, logs that the peer has no lanes, caps
#                itself to one and refuses the other lanes' connections,
#                whose operations move to lane 0: the same load passes
#                with the same verdicts over exactly lane 0, and
#                bx_hostile answered every request it got, saw no bad
#                push and was asked for lanes above 0. With BX_SECRET
#                (run.sh -e) the two share a cluster secret: the
#                accept's proof covers its lane 0. Then bx is loaded
#                on guest 0 again, with its defaults
#
# At the end bx is reloaded on both guests: the tests after find one
# connection per peer again.
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
MUTE=9
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
IP=/usr/sbin/ip
P=/sys/module/bx/parameters
LANES=4

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi

b() { rig_barrier "lanes.$1" 240; }

# The other guest (guests 0 and 1 only take part).
PEER=192.0.2.$((2 - ID))

# This host's connections to the other guest, from netlink, one JSON
# object per line.
conns_json() {
	bxctl -j conn | tr '}' '\n' | grep "\"peer-addr\":\"$PEER\"" || true
}

# Lanes up to the other guest, one line each: "LANE QPN TX RX".
lanes_up() {
	conns_json | grep '"state":"up"' | sed -n \
		's/.*"lane":\([0-9]*\).*"qpn":\([0-9]*\).*"tx-msgs":\([0-9]*\),"rx-msgs":\([0-9]*\).*/\1 \2 \3 \4/p' |
		sort -n
}
nlanes_up() { lanes_up | wc -l; }
all_up() { [ "$(nlanes_up)" -eq $LANES ]; }

# Each lane 0..LANES-1 up exactly once.
lanes_exact() {
	[ "$(lanes_up | awk '{ print $1 }' | tr '\n' ' ')" = "0 1 2 3 " ]
}

# lanes_wait SECS: all lanes up within SECS (times BX_SLOW); else a FAIL
# line that says, in brief, which lanes are up and how the others went
# down (the conn-down events in /tmp/lanes.mon, "lane/err") and
# bx's last word, since CI shows that line alone.
lanes_wait() {
	wait_until $(($1 * BX_SLOW)) all_up && return 0
	echo "# FAIL: lanes up after $(($1 * BX_SLOW)) s:" \
		"$(lanes_up | awk '{ printf "%s/%s ", $1, $2 }')" \
		"downs: $(sed -n 's/.*"conn-down".*"lane":\([0-9]*\).*"err":\(-*[0-9]*\).*/\1\/\2/p' \
			/tmp/lanes.mon 2>/dev/null | tr '\n' ' ')" \
		"bx: $(dmesg | sed -n 's/^\[[^]]*\] //p' | grep -E '^(connection|peer|cm event)' |
			tail -2 | cut -c1-90 | tr '\n' ' ')"
	conns_json | sed 's/^/# /'
	dmesg | tail -40 | sed 's/^/# dmesg: /'
	return 1
}

show_lanes() {
	echo "# lanes up ($1): lane qpn tx-msgs rx-msgs"
	lanes_up | sed 's/^/#   /'
}

case_spread() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		b sp.up; b sp.done
		try serve_stop
		# The client's 4 lanes, each of which brought us requests.
		show_lanes server
		try check lanes_exact
		try check [ "$(lanes_up | awk '$4 < 10' | wc -l)" -eq 0 ]
		try check [ "$(conns_json | grep -c '"active":true')" -eq 0 ]
	elif [ "$ID" -eq 1 ]; then
		b sp.up
		lanes_up > /tmp/lanes.0
		out=$("$PP" client -a "$SERVER" -s $SVC -P 8 -z 100,4096,65536 \
			-m both -i 10 -q 4 2>&1) ||
			{ echo "# FAIL: client: $out"; ERR=1; }
		echo "# $(echo "$out" | head -1)"
		show_lanes client
		try check lanes_exact
		# Each lane carried at least 10 messages more than before.
		lanes_up > /tmp/lanes.1
		idle=$(awk 'NR == FNR { tx[$1] = $3; next }
			$3 - tx[$1] < 10 { print $1 }' /tmp/lanes.0 /tmp/lanes.1)
		[ -z "$idle" ] ||
			{ echo "# FAIL: lanes that carried nothing: $idle"; ERR=1; }
		# conn-get by peer and lane.
		id=$(conns_json | sed -n 's/.*"peer-id":\([0-9]*\).*/\1/p' | head -1)
		try check sh -c "bxctl -j conn peer $id lane 3 | grep -q '\"lane\":3,'"
		try check sh -c "! bxctl conn peer $id lane 9 2>/dev/null"
		b sp.done
	else
		b sp.up; b sp.done
	fi
	result
}

case_lane_fail() {
	echo $((15000 * BX_SLOW)) > $P/recover_ms
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		serve2_start $MUTE -N -n 8 -b 0 -r 4
		sync_listen
		b lf.up; b lf.done
		# A push being read when its lane ended fails its RECV.
		try serve_stop errors-ok
		try sync_check
		serve2_stop
	elif [ "$ID" -eq 1 ]; then
		rm -f /tmp/sync.sum
		mon_start /tmp/lanes.mon
		b lf.up
		client_run -P 8 -t 12 > /tmp/lf.run 2>&1 &
		cl=$!
		sleep 2
		lanes_up > /tmp/lanes.0
		# Its file's lane ends at the deadline and a second's grace.
		out=$("$PP" client -a "$SERVER" -s $MUTE -m pull -z 4096 -q 1 \
			-i 1 -T 2000 2>&1) &&
			{ echo "# FAIL: a pull nobody answered succeeded: $out"; ERR=1; }
		echo "# $(echo "$out" | tr '\n' ' ')"
		try check sh -c "echo '$out' | grep -q 'Connection timed out'"
		wait $cl || ERR=1
		cat /tmp/lf.run
		try sync_send "$SERVER"
		try lanes_wait 20
		mon_stop
		lanes_up > /tmp/lanes.1
		sed 's/^/# before: /' /tmp/lanes.0
		sed 's/^/# after:  /' /tmp/lanes.1
		# One lane has a new QP; the other three kept theirs.
		kept=$(awk 'NR == FNR { q[$1] = $2; next } q[$1] == $2' \
			/tmp/lanes.0 /tmp/lanes.1 | wc -l)
		echo "# lanes that kept their QP: $kept of $LANES"
		try check [ "$kept" -eq $((LANES - 1)) ]
		echo "# recoveries: $(conns_json | sed -n 's/.*"recoveries":\([0-9]*\).*"recovered-ops":\([0-9]*\).*/\1 rounds, \2 ops resent/p' | head -1)"
		b lf.done
	else
		b lf.up; b lf.done
	fi
	try check wait_until 30 ops_idle
	result
}

port_active() { rdma link show rxe0/1 | grep -q "state ACTIVE"; }

case_link_outage() {
	echo $((15000 * BX_SLOW)) > $P/recover_ms
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		sync_listen
		b lo.up
		sleep 5
		$IP link set eth0 down
		sleep 8
		$IP link set eth0 up
		try check wait_until 10 port_active
		b lo.done
		try serve_stop errors-ok
		try sync_check
	elif [ "$ID" -eq 1 ]; then
		rm -f /tmp/sync.sum
		mon_start /tmp/lanes.mon
		b lo.up
		try client_run -P 8 -t 30
		try sync_send "$SERVER"
		try lanes_wait 20
		mon_stop
		show_lanes client
		try check lanes_exact
		b lo.done
	else
		b lo.up; b lo.done
	fi
	try check wait_until 30 ops_idle
	result
}

# bx afresh, with qps_per_peer $1.
reload() {
	rmmod bx && modprobe bx qps_per_peer="$1" &&
		wait_until 10 bx_has_dev rxe0
}

case_refusal() {
	if [ "$ID" -eq 0 ]; then
		try reload 2
		b rf.loaded
		serve_start -n 64 -b 0 -r 64
		sync_listen
		b rf.up; b rf.done
		try serve_stop
		try sync_check
		show_lanes server
		try check [ "$(lanes_up | awk '{ print $1 }' | tr '\n' ' ')" = "0 1 " ]
		try check sh -c "dmesg | grep -q 'asked for lane [23], qps_per_peer is 2'"
	elif [ "$ID" -eq 1 ]; then
		try reload $LANES
		b rf.loaded
		rm -f /tmp/sync.sum
		b rf.up
		try client_run -P 8 -t 8
		try sync_send "$SERVER"
		show_lanes client
		try check [ "$(lanes_up | awk '{ print $1 }' | tr '\n' ' ')" = "0 1 " ]
		try check sh -c "dmesg | grep -q 'takes 2 lanes, not lane [23]'"
		b rf.done
	else
		try reload 1
		b rf.loaded; b rf.up; b rf.done
	fi
	try check wait_until 30 ops_idle
	result
}

# What hostile_stop shows of bx_hostile's output (lib.sh).
HOSTILE_SHOW="conn|summary"
HOSTILE_LINES=20

SECRET=/tmp/lanes.secret

# logged_since MARK TEXT: the kernel logged TEXT after the line MARK.
logged_since() { dmesg | sed -n "/$1/,\$p" | grep -q "$2"; }
# The connection up to the other guest proved the secret.
lane0_auth() { conns_json | grep '"state":"up"' | grep -q '"auth":true'; }

case_nolanes() {
	# Not before the last case's checks on guest 0 are done: the
	# reload ends the connections they look at.
	b nl.begin
	if [ "$ID" -eq 0 ]; then
		try rmmod bx
		modprobe rdma_ucm
		b nl.unloaded
		k=
		[ -z "${BX_SECRET:-}" ] || k="-K $SECRET"
		# shellcheck disable=SC2086
		hostile_start $k
		sync_listen
		b nl.up; b nl.done
		hostile_stop
		try sync_check "$(hcount pushes)"
		# Every request answered, in pulls and pushes, none bad; lane 0
		# asked for, and at least one other (refused by the client).
		echo "# lanes asked: $(sed -n 's/^bx_hostile: conn .* lane \([0-9]*\)$/\1/p' /tmp/h.out |
			sort -n | tr '\n' ' ')"
		try check [ "$(hcount requests)" -gt 0 ]
		try check [ "$(hcount answered)" = "$(hcount requests)" ]
		try check [ "$(hcount pulls)" -gt 0 ]
		try check [ "$(hcount pushes)" -gt 0 ]
		try check [ "$(hcount push_bad)" = 0 ]
		try check [ "$(hcount answer_fail)" = 0 ]
		try check grep -q "^bx_hostile: conn .* lane 0$" /tmp/h.out
		try check grep -q "^bx_hostile: conn .* lane [1-9]$" /tmp/h.out
		# bx again, with its defaults.
		try check modprobe bx
		try check wait_until 10 bx_has_dev rxe0
	elif [ "$ID" -eq 1 ]; then
		try reload $LANES
		[ -z "${BX_SECRET:-}" ] || try check bxctl secret $SECRET
		mark="lanes.sh nolanes $$"
		echo "$mark" > /dev/kmsg
		b nl.unloaded
		rm -f /tmp/sync.sum
		b nl.up
		try client_run -P 8 -t 5
		try sync_send "$SERVER"
		show_lanes client
		try check [ "$(lanes_up | awk '{ print $1 }' | tr '\n' ' ')" = "0 " ]
		try check logged_since "$mark" "peer $SERVER has no lanes: one connection"
		# The refused lanes' operations, parked and sent again (on
		# lane 0): reported, not asserted (none may have waited).
		echo "# moved to lane 0: $(dmesg | sed -n "/$mark/,\$p" |
			sed -n 's/.*recovery done: \([0-9]*\) operations sent again.*/\1/p' |
			awk '{ n += $1 } END { print n + 0 }') operations"
		[ -z "${BX_SECRET:-}" ] || try check lane0_auth
		b nl.done
		[ -z "${BX_SECRET:-}" ] || try check bxctl secret clear
	else
		b nl.unloaded; b nl.up; b nl.done
	fi
	try check wait_until 30 ops_idle
	result
}

case_cleanup() {
	echo "$QPS0" > $P/qps_per_peer
	echo "$RECOVER0" > $P/recover_ms
	b end
	reload "$QPS0"
}

QPS0=$(cat $P/qps_per_peer)
RECOVER0=$(cat $P/recover_ms)
# Both sides take 4 lanes before either connects one.
echo $LANES > $P/qps_per_peer
b start
printf 'lanes.sh cluster secret: 32 B!!!' > $SECRET
chmod 600 $SECRET
ktap_plan 6
run_test spread case_spread
run_test lane_fail case_lane_fail
run_test link_outage case_link_outage
run_test refusal case_refusal
run_test nolanes case_nolanes
run_test cleanup case_cleanup
ktap_finish
