#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Recovery across two guests: guest 0 serves, guest 1 runs synchronous
# pushes and pulls through libbx (bx_pp -S) while the server side fails.
# No process reopens /dev/bx: bx reconnects on the next submission and
# libbx sends a pull again after a connection failure, a push only when
# it was certainly not delivered. Every pull must return correct data;
# a push either completes or is reported with an "unknown" errno.
#
#   server_restart  the server process is killed and bx reloaded (a new
#                   incarnation), then the server comes back: the client
#                   carries on and counts the peer restart
#   link_outage     the server's link loses every frame for longer than
#                   the RC retries last, then works again (opt-in:
#                   BX_TEST_OUTAGE=1; see the case)
#   device          the server's rxe device is deleted and re-created
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
IP=/usr/sbin/ip

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi

b() { bxrig barrier "recover.$1" 240; }

conn_sum() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1) } END { print s + 0 }' /sys/kernel/debug/bx/conns; }

# The client's verdict: no pull or push failed, no bad data.
client_run() {
	out=$("$PP" client -a "$SERVER" -s $SVC -S -P 2 -z 100,4096,65536 \
		-m both "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] || { echo "# FAIL: client"; return 1; }
	echo "$out" | grep -q "pull_failed 0 .* push_failed 0" ||
		{ echo "# FAIL: a pull or a certainly-undelivered push failed"; return 1; }
}

case_server_restart() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		b rs.up
		sleep 6
		kill -KILL "$SRV"
		wait "$SRV" || true
		rmmod bx
		modprobe bx
		wait_until 5 bx_has_dev rxe0
		sleep 2
		serve_start -n 64 -b 0 -r 64
		b rs.done
		try serve_stop
	elif [ "$ID" -eq 1 ]; then
		b rs.up
		try client_run -t 20
		r=$(conn_sum restarts)
		echo "# peer restarts seen: $r"
		try check [ "$r" -ge 1 ]
		b rs.done
	else
		b rs.up; b rs.done
	fi
	result
}

case_link_outage() {
	# After an outage that errors the server's QP, the server accepted no
	# new connection in 2 of 4 runs until its rxe device was re-created
	# (connect attempts time out; not yet known whether rxe's CM state or
	# bx is at fault). Opt-in until that is understood.
	[ "${BX_TEST_OUTAGE:-0}" = 1 ] || return $KSFT_SKIP
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		b lo.up
		sleep 5
		# Every frame lost for longer than the RC retries last. (Not
		# "ip link set down": after that, Debian's rxe accepts no new
		# connection until the rxe device is re-created -- its CM
		# traffic never arrives -- which is the device case below.)
		modprobe sch_netem 2>/dev/null || true
		/usr/sbin/tc qdisc add dev eth0 root netem loss 100%
		sleep 8
		/usr/sbin/tc qdisc del dev eth0 root
		b lo.done
		try serve_stop errors-ok
	elif [ "$ID" -eq 1 ]; then
		b lo.up
		try client_run -t 25
		b lo.done
	else
		b lo.up; b lo.done
	fi
	try check wait_until 30 sh -c '[ "$(awk "\$1 == \"ops_inflight\" { print \$2 }" /sys/kernel/debug/bx/stats)" = 0 ]'
	result
}

# The server's rxe device is deleted and re-created under load.
case_device() {
	if [ "$ID" -eq 0 ]; then
		serve_start -n 64 -b 0 -r 64
		b dv.up
		sleep 5
		rdma link delete rxe0
		sleep 3
		rdma link add rxe0 type rxe netdev eth0
		wait_until 10 bx_has_dev rxe0
		b dv.done
		try serve_stop errors-ok
	elif [ "$ID" -eq 1 ]; then
		b dv.up
		try client_run -t 25
		b dv.done
	else
		b dv.up; b dv.done
	fi
	result
}

ktap_plan 3
run_test server_restart case_server_restart
run_test link_outage case_link_outage
run_test device case_device
ktap_finish
