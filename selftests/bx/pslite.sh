#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ps-lite's API over bx (bxps, <ps/ps.h>) across four guests, launched as
# ps-lite's programs are: every process of the job is pslite_test (a
# program written against ps-lite's API) with DMLC_ROLE,
# DMLC_NUM_SERVER=2, DMLC_NUM_WORKER=2, DMLC_PS_ROOT_URI (guest 0) and
# DMLC_PS_ROOT_PORT. Guest 0 runs the scheduler, guests 1 and 2 a
# server each, guest 3 both workers (two nodes of one host: their bx
# services are the next free pairs after the root port; bx has no
# loopback, so nodes that talk to each other are on different guests).
#
#   main  push/pull sums over both servers from two threads with 16
#         requests outstanding, per-key lengths by ZPush from region
#         SArrays (no copy) and ZPull, push-pull, an aggregating handle
#         that answers a round when every worker pushed (cmd, priority),
#         int64 and half values, SimpleApp request/response to the server
#         group, a custom slicer (set_slicer: each key to the server
#         after its owner), and a push of the wrong length failing with
#         the owning server's rank; every process exits 0
#   local  the main job with every node on guest 0, DMLC_PS_ROOT_URI
#         127.0.0.1, as ps-lite's local launches: same-host nodes talk
#         over bxps's Unix-socket path
#   pipeline  a server whose handler answers pushes 16 at a time gets
#         them from a worker with 16 outstanding, round after round
#         (pslite_bench -b); pushes/s with 1 and 16 outstanding reported
#   kill  workers keep pushes in flight to both servers while its guest
#         kills the server of rank 1 (SIGKILL): its requests fail with its rank,
#         server 0's go on, and the others finalize without it; worker 1
#         pushes on for 3 s while the others wait at the final barrier
#         (with the dead server's arrival from before its death), which
#         must wait for it. A job that hangs shows bx's debugfs state.
. "$(dirname "$0")/lib.sh"

PS=pslite_test
ID=${BXRIG_ID:-0}
PORT=9100

if [ "${BXRIG_N:-1}" -lt 4 ]; then
	echo "1..0 # SKIP needs four rig guests"
	exit $KSFT_SKIP
fi
command -v $PS > /dev/null || { echo "1..0 # SKIP no $PS"; exit $KSFT_SKIP; }

b() { rig_barrier "pslite.$1" 300; }

# node ROLE ARGS LOG: one process of the job, in the background.
node() {
	# shellcheck disable=SC2086
	DMLC_ROLE=$1 DMLC_NUM_SERVER=2 DMLC_NUM_WORKER=2 \
	DMLC_PS_ROOT_URI=$BXRIG_PEER0 DMLC_PS_ROOT_PORT=$PORT \
	BXPS_TIMEOUT_MS=$((180000 * BX_SLOW)) BXPS_REGION_MB=32 BXPS_DEBUG=1 \
		timeout $((240 * BX_SLOW)) $PS $2 > "$3" 2>&1 &
}

# A job still running after @1 seconds: show bx's state on this guest
# (its connections, flows and files) while it hangs, for the log.
watchdog() {
	(
		sleep "$1"
		for pid in $PIDS; do
			[ -d "/proc/$pid" ] || continue
			echo "# still running after $1 s: bx state"
			for f in conns flow procs stats; do
				sed "s/^/# $f: /" /sys/kernel/debug/bx/$f 2>/dev/null
			done
			break
		done
	) &
	WATCHDOG=$!
}

# Wait for the job's processes of this guest; each must exit 0.
job_wait() {
	rc=0
	for pid in $PIDS; do
		wait "$pid" || rc=1
	done
	for f in $LOGS; do
		sed 's/^/# /' "$f"
		! grep -q "FAIL" "$f" || rc=1
	done
	return $rc
}

start_job() {
	PIDS= LOGS=
	case $ID in
	0)
		node scheduler "$1" /tmp/ps.sched; PIDS=$!
		LOGS=/tmp/ps.sched ;;
	1|2)
		node server "$1" /tmp/ps.srv; PIDS=$!
		LOGS=/tmp/ps.srv ;;
	3)
		node worker "$1" /tmp/ps.w1; PIDS=$!
		node worker "$1" /tmp/ps.w2; PIDS="$PIDS $!"
		LOGS="/tmp/ps.w1 /tmp/ps.w2" ;;
	esac
}

case_main() {
	b main.go
	start_job main
	try job_wait
	if [ "$ID" -eq 3 ]; then
		for c in push_pull lens pushpull aggregate types simple slicer badlen; do
			for f in $LOGS; do
				grep -q "pslite: ok $c " "$f" ||
					{ echo "# FAIL: $f: no ok $c"; ERR=1; }
			done
		done
	fi
	b main.done
	result
}

case_kill() {
	b kill.go
	start_job kill
	watchdog $((150 * BX_SLOW))
	if [ "$ID" -eq 1 ] || [ "$ID" -eq 2 ]; then
		# The server of rank 1 is killed once the workers push.
		try check wait_until $((120 * BX_SLOW)) grep -q "server . up" /tmp/ps.srv
		pid=$(sed -n 's/.*server 1 up (pid \([0-9]*\)).*/\1/p' /tmp/ps.srv)
		if [ -n "$pid" ]; then
			sleep $((5 * BX_SLOW))
			kill -KILL "$pid"
			wait $PIDS 2> /dev/null || true
			sed 's/^/# /' /tmp/ps.srv
		else
			try job_wait
		fi
	else
		try job_wait
	fi
	kill "$WATCHDOG" 2> /dev/null || true
	if [ "$ID" -eq 3 ]; then
		for f in $LOGS; do
			grep -q "pslite: ok kill " "$f" ||
				{ echo "# FAIL: $f: no ok kill"; ERR=1; }
		done
	fi
	b kill.done
	result
}

# Pipelining: a server that answers pushes 16 at a time (after its handler
# returned) gets them from one worker with 16 outstanding, round after
# round, with no error; requests per second with 1 and 16 outstanding are
# reported (a benchmark's number, not asserted).
case_pipeline() {
	b pipe.go
	PS=pslite_bench
	start_job "-o push -q 16 -s 4 -d $((3 * BX_SLOW)) -b 16"
	try job_wait
	if [ "$ID" -eq 3 ]; then
		line=$(grep -h 'outstanding 16 bytes 4 ' /tmp/ps.w1 /tmp/ps.w2)
		reqs=$(echo "$line" | sed -n 's/.* reqs \([0-9]*\) .*/\1/p')
		try check [ "${reqs:-0}" -ge 32 ]
		case $line in
		*" errors 0") ;;
		*) echo "# FAIL: errors in the rounds of 16"; ERR=1 ;;
		esac
	fi
	b pipe.rate
	start_job "-o push -q 1,16 -s 4 -d $((3 * BX_SLOW))"
	try job_wait
	if [ "$ID" -eq 3 ]; then
		r1=$(sed -n 's/.*outstanding 1 bytes 4 .* rate \([0-9]*\)\/s.*/\1/p' /tmp/ps.w1 /tmp/ps.w2)
		r16=$(sed -n 's/.*outstanding 16 bytes 4 .* rate \([0-9]*\)\/s.*/\1/p' /tmp/ps.w1 /tmp/ps.w2)
		echo "# pushes/s: 1 outstanding ${r1:-?}, 16 outstanding ${r16:-?}"
	fi
	b pipe.done
	result
}

# One host, as ps-lite's own local launches are: the whole job on guest 0
# with DMLC_PS_ROOT_URI=127.0.0.1, every node reaching the others through
# bxps's same-host path (bx has no loopback); before it, a stranger's
# frames on a lone scheduler's socket.
case_local() {
	b local.go
	if [ "$ID" -eq 0 ]; then
		# A stranger's frames on a scheduler's socket (a scheduler
		# alone, whose job never assembles): a length past any message,
		# then a request that is no control message. It drops the first
		# connection, answers the second with an error, and lives on.
		# (python3 runs from the host's /usr: run.sh -p.)
		if python3 -c 'import socket' > /dev/null 2>&1; then
			DMLC_ROLE=scheduler DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 \
			DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=9310 \
			BXPS_TIMEOUT_MS=$((120000 * BX_SLOW)) BXPS_REGION_MB=32 \
				$PS main > /tmp/ps.lone 2>&1 &
			lone=$!
			python3 - <<-'PY' || { echo "# FAIL: hostile frames"; ERR=1; }
			import socket, struct, time
			def conn():
			    for _ in range(1200):
			        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
			        try:
			            s.connect(b"\0bxps.9310")
			            return s
			        except OSError:
			            s.close()
			            time.sleep(0.05)
			    raise SystemExit("no scheduler socket")
			s = conn()
			s.sendall(struct.pack("<4I", 1, 0, 0, 0xffffffff))
			s.settimeout(30)
			assert s.recv(16) == b"", "a bad length was read"
			s = conn()
			s.sendall(struct.pack("<4I", 2, 0, 7, 16) + b"\xff" * 16)
			s.settimeout(30)
			h = s.recv(16)
			t, w, i, n = struct.unpack("<4I", h)
			assert t == 3 and i == 7, h
			print("# hostile frames: dropped, then answered (%d bytes)" % n)
			PY
			try check kill "$lone"
			wait "$lone" 2> /dev/null || true
			[ -z "$ERR" ] || sed 's/^/# lone: /' /tmp/ps.lone
		fi
		PIDS= LOGS=
		for r in scheduler server server worker worker; do
			f=/tmp/ps.local.$r.$(echo "$PIDS" | wc -w)
			# shellcheck disable=SC2086
			DMLC_ROLE=$r DMLC_NUM_SERVER=2 DMLC_NUM_WORKER=2 \
			DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=9300 \
			BXPS_TIMEOUT_MS=$((180000 * BX_SLOW)) BXPS_REGION_MB=32 \
			BXPS_DEBUG=1 timeout $((240 * BX_SLOW)) $PS main > "$f" 2>&1 &
			PIDS="$PIDS $!" LOGS="$LOGS $f"
		done
		try job_wait
		for f in /tmp/ps.local.worker.*; do
			for c in push_pull lens pushpull aggregate types simple slicer badlen; do
				grep -q "pslite: ok $c " "$f" ||
					{ echo "# FAIL: $f: no ok $c"; ERR=1; }
			done
		done
	fi
	b local.done
	result
}

ktap_plan 4
run_test main case_main
run_test local case_local
run_test pipeline case_pipeline
run_test kill case_kill
ktap_finish
