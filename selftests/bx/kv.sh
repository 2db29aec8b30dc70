#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bxkv, libbx's key-value layer, across three guests: guests 1 and 2
# serve the two halves of [0, KEYS) (bx_kv serve), guest 0 is the worker
# (bx_kv check / loop); a fourth guest only meets the barriers, so that
# this runs in the same boot as data.sh and flow.sh. Messages of 64 KiB
# at most, so that every call is cut into many requests per server.
#
#   many_keys  pushes and pulls of 2 .. 66667 keys per call, spanning
#              both servers (a dense run across the boundary: range
#              requests, answered from the store; sparse keys: lists),
#              three rounds: every value exact, into a region buffer
#              and into the heap; bad keys refused
#   apply      the same with the servers' apply callback (subtracting)
#   lens       the same with a length per key (1 to 7 floats: the
#              servers' table, the worker's _lens calls); a pull that
#              names a length not server 0's is refused by it (counted
#              bad there), a call without lengths by the worker
#   outage     the worker pushes 1 to 2000 keys around the boundary and
#              every 50th key for 30 s, pulling every fifth time, while
#              server 2's link goes down for 8 s, which ends its
#              connection (the worker's bx logs it down): every push
#              succeeds, the last pull reads the number of pushes on
#              every key (each applied exactly once), and the slowest
#              call shows the outage was met
. "$(dirname "$0")/lib.sh"

KV=$(dirname "$0")/bx_kv
SVC=4100
KEYS=200000
VL=4
MSG=65536
ID=${BXRIG_ID:-0}
IP=/usr/sbin/ip

if [ "${BXRIG_N:-1}" -lt 3 ]; then
	echo "1..0 # SKIP needs three rig guests"
	exit $KSFT_SKIP
fi

b() { rig_barrier "kv.$1" 180; }

# Guest 1 serves [0, KEYS / 2), guest 2 [KEYS / 2, KEYS).
kv_serve_start() {
	: > /tmp/kv.srv
	begin=$(((ID - 1) * KEYS / 2))
	"$KV" serve -s $SVC -b $begin -e $((begin + KEYS / 2)) -l $VL \
		-M $MSG "$@" >> /tmp/kv.srv 2>&1 &
	KVSRV=$!
	wait_until 10 grep -q ready /tmp/kv.srv ||
		{ echo "# FAIL: server not ready: $(cat /tmp/kv.srv)"; ERR=1; }
}

# Stop it: no request refused; replies may fail ("errors-ok": to a
# connection that failed).
kv_serve_stop() {
	kill -TERM "$KVSRV"
	wait_until 30 pid_gone "$KVSRV" || { kill -KILL "$KVSRV"; ERR=1; }
	wait "$KVSRV" || { echo "# FAIL: server: $(cat /tmp/kv.srv)"; ERR=1; }
	echo "# $(tail -1 /tmp/kv.srv)"
	want="bad ${KV_BAD:-0} errors 0\$"
	[ "${1:-}" = errors-ok ] && want="bad ${KV_BAD:-0} errors [0-9]*\$"
	grep -q "$want" /tmp/kv.srv ||
		{ echo "# FAIL: server counters: $(tail -1 /tmp/kv.srv)"; ERR=1; }
}

kv_work() {
	out=$("$KV" "$@" -s $SVC -a "$BXRIG_PEER1,$BXRIG_PEER2" -k $KEYS \
		-l $VL -M $MSG 2>&1)
	rc=$?
	echo "$out" | sed '/^#/!s/^/# /'
	return $rc
}

# A case: the servers start (with "$1"), the worker runs "$2...".
kv_case() {
	tag=$1 sflags=$2
	shift 2
	if [ "$ID" -eq 1 ] || [ "$ID" -eq 2 ]; then
		# shellcheck disable=SC2086
		kv_serve_start $sflags
		b "$tag.up"; b "$tag.done"
		try kv_serve_stop
	elif [ "$ID" -eq 0 ]; then
		b "$tag.up"
		try kv_work "$@"
		b "$tag.done"
	else
		b "$tag.up"; b "$tag.done"
	fi
	result
}

case_many_keys() { kv_case many "" check -r 3; }
case_apply() { kv_case apply -N check -r 2 -N; }
case_lens() {
	KV_BAD=0
	[ "$ID" -ne 1 ] || KV_BAD=1	# the refused pull
	kv_case lens -L check -r 2 -L
	rc=$?
	KV_BAD=0
	return $rc
}

RECOVER=/sys/module/bx/parameters/recover_ms
port_active() { rdma link show rxe0/1 | grep -q "state ACTIVE"; }
# Connections to server 2 that failed, as this guest's bx logged them.
downs() { dmesg | grep -c "bx: connection to $BXRIG_PEER2 down" || true; }

case_outage() {
	if [ "$ID" -eq 1 ] || [ "$ID" -eq 2 ]; then
		kv_serve_start
		b out.up
		if [ "$ID" -eq 2 ]; then
			sleep 5
			$IP link set eth0 down
			sleep 8
			$IP link set eth0 up
			try check wait_until 10 port_active
		fi
		b out.done
		# Replies to the connection that failed fail.
		try kv_serve_stop errors-ok
	elif [ "$ID" -eq 0 ]; then
		def=$(cat $RECOVER)
		# Parked operations wait this long for a new connection.
		echo $((30000 * BX_SLOW)) > $RECOVER
		d0=$(downs)
		b out.up
		out=$(kv_work loop -d 30 -T $((60000 * BX_SLOW))) || ERR=1
		echo "$out"
		b out.done
		echo "$def" > $RECOVER
		worst=$(echo "$out" | sed -n 's/.*bx_kv loop: .* slowest_ms \([0-9]*\)$/\1/p')
		d1=$(downs)
		echo "# slowest call: ${worst:-?} ms; connections to server 2 down: $((d1 - d0))"
		try check [ "${worst:-0}" -ge 2000 ]
		# The outage ended the connection (bx logs each one that fails).
		try check [ "$d1" -gt "$d0" ]
	else
		b out.up; b out.done
	fi
	result
}

ktap_plan 4
run_test many_keys case_many_keys
run_test apply case_apply
run_test lens case_lens
run_test outage case_outage
ktap_finish
