#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Flow control across four guests: guest 0 serves, guests 1..3 are
# clients (bx_pp verifies every byte). Every guest runs this script; the
# cases synchronize with bxrig barriers.
#
#   stall     the server process stops consuming (SIGSTOP) while clients
#             push and pull: senders wait, with no error, no drop and no
#             RNR; after SIGCONT everything completes and every credit and
#             window counter is back to idle
#   incast    three clients with four processes each pull from and push
#             to the server at once, with small windows: every operation
#             completes with correct data, no window's peak exceeds its
#             limit, the windows did make work wait, RNR stays 0, and the
#             processes sharing a client's connection get equal service
#             within 20% (across guests it is only reported: qemu shares
#             the host's cores unevenly); the server's READ window lets
#             none of the three clients' connections starve: while one
#             waits, the others are admitted at most 16 times
#   small     a 4 KiB pull at a time passes 1 MiB pulls and pushes that
#             wait for a small window on the same connection: every
#             operation completes with correct data, the small ones were
#             admitted while the large waited (small_passes), and the
#             window's peak is one large operation (small ones are
#             outside its bytes and do not keep it from going alone)
#   rxpieces  three clients push 1 MiB, cut in 64 KiB pieces, towards a
#             READ window of 128 KiB: the window counts the pieces on the
#             wire, so two pushes are read at once and never more than
#             128 KiB (charged whole, a push larger than the window ran
#             alone on the host)
#   tunables  every tunable changed under load, on both sides: no error;
#             out-of-range writes fail with EINVAL and change nothing;
#             connections made after ack_timeout changed carry the new value
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
P=/sys/module/bx/parameters
DBG=/sys/kernel/debug/bx

if [ "${BXRIG_N:-1}" -lt 4 ]; then
	echo "1..0 # SKIP needs four rig guests"
	exit $KSFT_SKIP
fi

b() { rig_barrier "flow.$1" 240; }

# Sum (or max) of KEY over every connection line, and a host value.
conn_sum() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1) } END { print s + 0 }' $DBG/conns; }
conn_max() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k && $(i + 1) > m) m = $(i + 1) } END { print m + 0 }' $DBG/conns; }
flow_of() { awk -v k="$1" '$1 == k { print $2 }' $DBG/flow; }

# Everything in flight is gone and every window is empty.
flow_idle() {
	[ "$(stat_of ops_inflight)" = 0 ] && [ "$(stat_of mrs_inuse)" = 0 ] &&
		[ "$(conn_sum wnd_bytes)" = 0 ] && [ "$(conn_sum wnd_ops)" = 0 ] &&
		[ "$(conn_sum wnd_small)" = 0 ] && [ "$(flow_of tx_small)" = 0 ] &&
		[ "$(conn_sum rd_bytes)" = 0 ] && [ "$(conn_sum rd_reads)" = 0 ] &&
		[ "$(conn_sum queued)" = 0 ] && [ "$(conn_sum rd_queued)" = 0 ] &&
		[ "$(flow_of tx_bytes)" = 0 ] && [ "$(flow_of tx_ops)" = 0 ] &&
		[ "$(flow_of rx_bytes)" = 0 ] && [ "$(flow_of rd_conns)" = 0 ]
}

# Credits are back: each side holds all but what the peer still owes,
# which is below the batch (else an update would have gone out).
credits_idle() {
	awk -v batch="$(cat $P/credit_batch)" '{
		for (i = 1; i < NF; i++) {
			if ($i == "credits") c = $(i + 1)
			if ($i == "credits_max") m = $(i + 1)
		}
		if (m - c > batch + 1) { print "# credits " c "/" m; bad = 1 }
	} END { exit bad }' $DBG/conns
}

no_rnr() { [ "$(flow_of rnr_events)" = 0 ] && [ "$(conn_sum rnr)" = 0 ]; }

client_bg() {
	"$PP" client -a "$SERVER" -s $SVC "$@" > /tmp/cli.out 2>&1 &
	CLI=$!
}

# A client that outlives its run by far is stuck: show bx's state, kill
# it, and fail (rather than wait for the script's timeout, which would
# leave every other guest to fail its barriers with no reason given).
client_wait() {
	rc=0
	if ! wait_until $((120 * BX_SLOW)) pid_gone $CLI; then
		echo "# FAIL: client still running after $((120 * BX_SLOW)) s"
		cat $DBG/stats $DBG/flow $DBG/conns $DBG/procs | sed 's/^/# /'
		kill -KILL $CLI
	fi
	wait $CLI || rc=$?
	echo "# $(head -1 /tmp/cli.out)"
	[ $rc -eq 0 ] || { echo "# FAIL: client: $(cat /tmp/cli.out)"; return 1; }
}

reload() {
	rmmod bx && modprobe bx "$@" && wait_until 5 bx_has_dev rxe0
}

case_stall() {
	if [ "$ID" -eq 0 ]; then
		# Few buffers, so that the stop bites at once.
		serve_start -n 16 -b 0 -r 64
		b stall.up
		sleep 3
		kill -STOP $SRV
		b stall.stopped
		sleep 8
		kill -CONT $SRV
		b stall.resumed
		b stall.done
		try serve_stop
	elif [ "$ID" -le 2 ]; then
		b stall.up
		client_bg -z 4096,65536 -i 100000 -q 16 -m both -t 20
		b stall.stopped
		b stall.resumed
		try client_wait
		retries=$(conn_sum busy_retries)
		echo "# busy retries: $retries"
		try check [ "$retries" -gt 0 ]
		b stall.done
	else
		b stall.up; b stall.stopped; b stall.resumed; b stall.done
	fi
	try check wait_until 30 flow_idle
	flow_idle || cat $DBG/flow $DBG/conns | sed 's/^/# /'
	try check wait_until 10 credits_idle
	try check no_rnr
	result
}

case_incast() {
	# Small windows, so that they bind: 4 processes x 8 x 64 KiB want
	# 2 MiB in flight per client, and three clients push towards one
	# server, which admits 128 KiB of READs (two 64 KiB pushes) at once.
	try reload wnd_kb=256 host_wnd_kb=512 rx_wnd_kb=128 rd_max=1
	if [ "$ID" -eq 0 ]; then
		serve_start -n 512 -b 0 -r 64
		b incast.up; b incast.done
		try serve_stop
		echo "# server: rx_peak_bytes $(flow_of rx_peak_bytes) rx_waits $(flow_of rx_waits) tx_peak_bytes $(flow_of tx_peak_bytes) rd_peak_reads $(conn_max rd_peak_reads) rx_passed_max $(flow_of rx_passed_max)"
		try check [ "$(flow_of rx_peak_bytes)" -le $((128 * 1024)) ]
		try check [ "$(flow_of rx_waits)" -gt 0 ]
		try check [ "$(flow_of tx_peak_bytes)" -le $((512 * 1024)) ]
		try check [ "$(conn_max rd_peak_reads)" -le 1 ]
		# The host's READ window serves the three clients in turn: a
		# connection that waits is passed a few times at most (0 to 4
		# seen; the old order reached 5 here, and a starved one sees
		# nearly every admission of the run, hundreds).
		try check [ "$(flow_of rx_passed_max)" -le 16 ]
		b incast.read
	else
		b incast.up
		# 20 s gives each process about 120 operations on the stock
		# kernel but 14 to 18 on the debug one, where the last few
		# (8 in flight each when the time is up) alone can make 20%:
		# run as long as BX_SLOW says.
		client_bg -P 4 -z 65536 -i 100000 -q 8 -m both -t $((20 * BX_SLOW)) -v
		try client_wait
		grep "^bx_pp proc" /tmp/cli.out | sed 's/^/# /'
		# Equal demand, one connection: equal bytes within 20%.
		try check awk '/^bx_pp proc/ {
			n++; if ($7 > max) max = $7; if (!min || $7 < min) min = $7
		} END { exit !(n == 4 && min > 0 && (max - min) * 5 <= max) }' /tmp/cli.out
		echo "# client $ID: wnd_peak_bytes $(conn_max wnd_peak_bytes) wnd_waits $(conn_sum wnd_waits) tx_peak_bytes $(flow_of tx_peak_bytes)"
		try check [ "$(conn_max wnd_peak_bytes)" -le $((256 * 1024)) ]
		try check [ "$(conn_sum wnd_waits)" -gt 0 ]
		try check [ "$(flow_of tx_peak_bytes)" -le $((512 * 1024)) ]
		b incast.done
		# The server reads its connections' counters: they go with
		# the connections when this guest reloads bx for the next case.
		b incast.read
	fi
	try check wait_until 30 flow_idle
	flow_idle || cat $DBG/flow $DBG/conns | sed 's/^/# /'
	try check no_rnr
	result
}

waiting() { [ "$(conn_sum wnd_waits)" -gt 0 ]; }

case_small() {
	try reload wnd_kb=256 host_wnd_kb=512
	if [ "$ID" -eq 0 ]; then
		# 1 MiB pushes go one at a time (the window): two big buffers.
		serve_start -n 64 -b 2 -r 48
		b small.up; b small.done
		try serve_stop
	elif [ "$ID" -eq 1 ]; then
		b small.up
		# Each 1 MiB operation is larger than the window: it runs
		# alone, and three wait behind it.
		client_bg -z 1048576 -i 100000 -q 4 -m both -t $((10 * BX_SLOW))
		# Once large operations wait for the window, the small pulls.
		try check wait_until $((30 * BX_SLOW)) waiting
		timeout $((120 * BX_SLOW)) "$PP" client -a "$SERVER" -s $SVC \
			-z 4096 -i 100 -q 1 -m pull > /tmp/small.out 2>&1 ||
			{ echo "# FAIL: small: $(cat /tmp/small.out)"; ERR=1; }
		echo "# $(head -1 /tmp/small.out)"
		try client_wait
		echo "# client: small_passes $(conn_sum small_passes) wnd_peak_bytes $(conn_max wnd_peak_bytes) wnd_waits $(conn_sum wnd_waits)"
		try check [ "$(conn_sum small_passes)" -gt 0 ]
		try check [ "$(conn_sum wnd_waits)" -gt 0 ]
		# Netlink reports the same counts (bxctl -j: one line).
		if command -v bxctl > /dev/null; then
			nl_small=$(bxctl -j stats | grep -o '"small-passes":[0-9]*')
			echo "# netlink: $nl_small, debugfs: small_passes $(flow_of small_passes)"
			try check [ "${nl_small#*:}" = "$(flow_of small_passes)" ]
			nl_small=$(bxctl -j conn | grep -o '"small-passes":[0-9]*' |
				   awk -F: '{ s += $2 } END { print s + 0 }')
			try check [ "$nl_small" = "$(conn_sum small_passes)" ]
		else
			echo "# no bxctl in PATH: netlink's counts not checked"
		fi
		# One 1 MiB operation at a time (a pull's request adds 16
		# bytes): the small pulls (4 KiB each) are not counted in its
		# bytes, nor keep it from going alone.
		try check [ "$(conn_max wnd_peak_bytes)" -le $((1024 * 1024 + 1024)) ]
		b small.done
	else
		b small.up; b small.done
	fi
	try check wait_until 30 flow_idle
	flow_idle || cat $DBG/flow $DBG/conns | sed 's/^/# /'
	try check no_rnr
	result
}

case_rxpieces() {
	try reload rx_wnd_kb=128 piece_kb=64 rd_max=1
	if [ "$ID" -eq 0 ]; then
		# A big buffer for each push in flight (3 clients x 2), so
		# that all three connections have READs to wait for: 6 x 16
		# MiB, within the default region cap (a quarter of the RAM,
		# less on the debug kernel, whose KASAN shadow takes some).
		serve_start -n 0 -b 6 -r 112
		b rxp.up; b rxp.done
		try serve_stop
		echo "# server: rx_peak_bytes $(flow_of rx_peak_bytes) rx_peak_reads $(flow_of rx_peak_reads) rx_waits $(flow_of rx_waits) rd_peak_bytes $(conn_max rd_peak_bytes) pieces $(stat_of pieces)"
		try check [ "$(flow_of rx_peak_bytes)" -le $((128 * 1024)) ]
		try check [ "$(flow_of rx_peak_reads)" -eq 2 ]
		try check [ "$(conn_max rd_peak_bytes)" -eq $((64 * 1024)) ]
		try check [ "$(flow_of rx_waits)" -gt 0 ]
		b rxp.read
	else
		b rxp.up
		client_bg -z 1048576 -i 100000 -q 2 -m push -t $((8 * BX_SLOW))
		try client_wait
		b rxp.done
		b rxp.read	# as in incast
	fi
	try check wait_until 30 flow_idle
	flow_idle || cat $DBG/flow $DBG/conns | sed 's/^/# /'
	try check no_rnr
	result
}

# Write VALUE to tunable NAME; it must take.
tset() { echo "$2" > $P/$1 && [ "$(cat $P/$1)" = "$2" ]; }

# An out-of-range write fails and leaves the value as it was.
bad_write() {
	was=$(cat $P/$1)
	if echo "$2" > $P/$1 2>/dev/null; then
		echo "# FAIL: $1=$2 accepted"
		return 1
	fi
	[ "$(cat $P/$1)" = "$was" ]
}

churn() {
	i=0
	while [ $i -lt 15 ]; do
		case $((i % 3)) in
		0) tset wnd_kb 64 && tset wnd_ops 1 && tset credit_batch 1 &&
		   tset rdv_threshold 0 && tset drr_quantum 512 &&
		   tset rx_wnd_kb 64 && tset rd_max 1 && tset piece_kb 0 &&
		   tset flow_control N ;;
		1) tset wnd_kb 8192 && tset wnd_ops 128 && tset credit_batch 64 &&
		   tset rdv_threshold 4096 && tset drr_quantum 65536 &&
		   tset rx_wnd_kb 16384 && tset rd_max 1 &&
		   tset host_wnd_kb 32768 && tset host_wnd_ops 1024 &&
		   tset piece_kb 256 && tset flow_control Y ;;
		2) tset wnd_kb 512 && tset wnd_ops 16 && tset credit_batch 8 &&
		   tset rdv_threshold 1024 && tset host_wnd_kb 128 &&
		   tset host_wnd_ops 4 && tset rx_wnd_kb 256 &&
		   tset piece_kb 16 ;;
		esac || { echo "# FAIL: a tunable did not take"; return 1; }
		sleep 1
		i=$((i + 1))
	done
}

# Every connection on this host has ACK timeout $1 (and there is one).
conns_ack() {
	awk -v v="$1" '{ for (i = 1; i < NF; i++) if ($i == "ack_timeout") {
		n++; if ($(i + 1) != v) { print "# " $0; bad = 1 } } }
		END { exit bad || !n }' $DBG/conns
}

case_tunables() {
	try reload
	for t in "wnd_kb 63" "wnd_ops 0" "credit_batch 65" "rdv_threshold 4097" \
		 "rd_max 17" "drr_quantum 1" "host_wnd_ops x" "ack_timeout 7" \
		 "ack_timeout 25" "piece_kb 16385"; do
		# shellcheck disable=SC2086
		try check bad_write $t
	done
	# Applies to the connections made from now on (all of this case's).
	# 16 (0.27 s, 1.9 s before the connection fails), not 14: on the
	# debug kernel, churned, 7 ACK timeouts of 67 ms in a row happened
	# and failed connections, whose replies in flight the server counts
	# as errors.
	try check tset ack_timeout 16
	if [ "$ID" -eq 0 ]; then
		serve_start -n 256 -b 0 -r 64
		b tun.up
		try check churn
		try check conns_ack 16
		b tun.done
		try serve_stop
	elif [ "$ID" -le 2 ]; then
		b tun.up
		client_bg -P 2 -z 100,4096,65536 -i 100000 -q 8 -m both -t 15
		try check churn
		try client_wait
		try check conns_ack 16
		b tun.done
	else
		b tun.up; b tun.done
	fi
	try check wait_until 30 flow_idle
	try check no_rnr
	result
	reload
}

ktap_plan 5
run_test stall case_stall
run_test incast case_incast
run_test small case_small
run_test rxpieces case_rxpieces
run_test tunables case_tunables
ktap_finish
