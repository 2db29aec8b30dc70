#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The parameter-server job inside one rig guest; ps_job.sh makes every
# guest run this (run.sh -g I:ps_guest.sh). Guest 0 serves, every other
# guest runs a worker against it. For each mode, each transport runs in
# turn (one phase each), synchronized with bxrig barriers:
#
#   server: start, wait until ready   barrier PHASE.up    workers start
#           ...                        barrier PHASE.done  workers ended
#           SIGTERM, print its line
#
# Settings (run.sh -e): PS_SECS, PS_THREADS, PS_MODES, PS_TRANSPORTS,
# PS_SERVER_ARGS, PS_WORKER_ARGS. Output: bxps's own lines (ps-server,
# ps-result, ps-hist, ps-worker), "ps-phase PHASE start|done" progress
# lines from guest 0, the bx connection table ("ps-bxconn") while the bx
# phases run, and per phase the non-zero changes of rxe's hw_counters and
# of the kernel's TCP counters on every guest ("ps-netstat": packets,
# retransmissions, sequence errors). A guest exits non-zero if anything failed; it
# still meets every barrier so that the others are not left waiting.

ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
SECS=${PS_SECS:-20}
THREADS=${PS_THREADS:-3}
MODES=${PS_MODES:-train inference}
TRANSPORTS=${PS_TRANSPORTS:-bx tcp}
# Guests reach PHASE.up within seconds of each other (the server's start
# is the slowest part); PHASE.done waits for a whole phase.
UP_SECS=120
DONE_SECS=$((SECS * 4 + 240))
rc=0

fail() { echo "ps-guest $ID: FAIL: $*"; rc=1; }

# Network counters as "name value" lines: rxe's, and TCP's from SNMP.
snap() {
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		[ -f "$f" ] && echo "rxe_${f##*/} $(cat "$f")"
	done
	awk '/^Tcp:/ { if (!h) { for (i = 2; i <= NF; i++) k[i] = $i; h = 1 }
		       else for (i = 2; i <= NF; i++) print "tcp_" k[i], $i }' \
		/proc/net/snmp
}
# Print what changed since the snapshot in /tmp/net.before.
netstat_delta() {
	snap > /tmp/net.after
	awk -v ph="$1" -v id="$ID" '
		NR == FNR { a[$1] = $2; next }
		$2 != a[$1] && $1 !~ /^tcp_(RtoAlgorithm|RtoMin|RtoMax|MaxConn|CurrEstab)$/ {
			s = s " " $1 "=" ($2 - a[$1])
		}
		END { print "ps-netstat phase=" ph " guest=" id s }' \
		/tmp/net.before /tmp/net.after
}
b() { bxrig barrier "ps.$1" "$2" || fail "barrier $1"; }

for mode in $MODES; do
	for tp in $TRANSPORTS; do
		ph=$mode.$tp
		if [ "$ID" -eq 0 ]; then
			echo "ps-phase $ph start secs=$SECS"
			# shellcheck disable=SC2086
			bxps server -T "$tp" --tag "$ph" $PS_SERVER_ARGS \
				> "/tmp/srv.$ph" 2>&1 &
			pid=$!
			k=0
			until grep -q ps-server-ready "/tmp/srv.$ph"; do
				k=$((k + 1))
				if [ $k -gt 300 ] || ! kill -0 $pid 2>/dev/null; then
					fail "server $ph did not start"
					break
				fi
				sleep 0.1
			done
			snap > /tmp/net.before
			b "$ph.up" $UP_SECS
			b "$ph.done" "$DONE_SECS"
			netstat_delta "$ph"
			if [ "$tp" = bx ]; then
				sed 's/^/ps-bxconn /' /sys/kernel/debug/bx/conns
			fi
			kill -TERM $pid 2>/dev/null
			wait $pid
			src=$?
			cat "/tmp/srv.$ph"
			[ $src -eq 0 ] || fail "server $ph exited $src"
			echo "ps-phase $ph done"
		else
			snap > /tmp/net.before
			b "$ph.up" $UP_SECS
			# shellcheck disable=SC2086
			bxps worker -T "$tp" -a "$SERVER" -w "$THREADS" \
				-d "$SECS" --mode "$mode" --tag "$ph" \
				$PS_WORKER_ARGS > "/tmp/w.$ph" 2>&1
			wrc=$?
			netstat_delta "$ph"
			if [ "$tp" = bx ]; then
				sed 's/^/ps-bxconn /' /sys/kernel/debug/bx/conns
			fi
			cat "/tmp/w.$ph"
			[ $wrc -eq 0 ] || fail "worker $ph exited $wrc"
			b "$ph.done" "$DONE_SECS"
		fi
	done
done
exit $rc
