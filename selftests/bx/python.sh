#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The Python package (python/, staged as /opt/bx/python) over bx, on two
# guests. It needs the guests' python3 with numpy (run.sh -p: the host's
# /usr, read-only over 9p) and skips without it.
#
#   binding   the host tests (tests/test_binding.py) on each guest: real
#             libbx with /dev/bx there, the fake library for buffers,
#             futures and closing
#   guests    guest 0 serves a service with tests/guest_server.py
#             (recv_async, reply); guest 1 runs tests/test_guest.py:
#             pushes and pulls of 0 B to 4 MiB, 64 of each in flight by
#             futures, a torch tensor as a request, no such service, a
#             timeout, a handle closed with operations in flight; every
#             byte checked, the server's "bad" count 0
#   kv        (three guests or more; the stock lane's four-guest boot)
#             bx.kv: guests 1 and 2 serve the halves of [0, 100000)
#             with tests/kv_server.py (guest 1 through a Python handler
#             per request, guest 2 a Python apply callback per key),
#             guest 0 runs tests/test_kv_guest.py: calls of
#             up to 14000 keys over both servers cut into 64 KiB
#             requests, a dense run across the boundary into a region
#             buffer, bad keys; then 15 s of pushes while guest 2's link
#             is down for 8 s: every push succeeds, each applied exactly
#             once. The servers' "bad" counts 0. The calls also come
#             as PyTorch users make them: int64 keys (tensors and
#             arrays), tensors in and out, a region-backed tensor
#             (Worker.empty), strided values, negative keys and wrong
#             out= refused
#   torch     (three guests or more, and torch) examples/embedding_ps.py
#             launched by torchrun on guests 0, 1 and 2 (three nodes;
#             the processes meet through the agent's TCPStore): guests
#             1 and 2 serve the halves of a sparse embedding model
#             (BX_TORCH_ROWS x BX_TORCH_DIM, default 20000 x 16, rows
#             permuted over the servers) and its dense layer, guest 0's
#             worker processes (BX_TORCH_WORKERS, default 2) train it
#             BX_TORCH_STEPS (default 12) steps, over each transport
#             of BX_TORCH_TRANSPORTS in turn, in the same processes
#             (default bx, then torch RPC pinned to TensorPipe's uv
#             transport, TCP, then to its ibv transport, RDMA over
#             rxe0, in lock-step; then bx and rpc-uv in sync mode, each
#             step's mean applied by the servers once both workers
#             pushed: bx.kv's per-request handler; then bx with
#             --overlap on, step n + 1's pull on a second lane with
#             step n's push, its parameters as the calls interleave,
#             not compared): in each mode all
#             reach the same parameters, bit for bit (their sha256),
#             and the modes differ; the servers' hosts sent RDMA
#             packets over bx and ibv and none over uv, and each
#             reports its step time, pull and push latencies, its CPU
#             and the servers' per step; the example's lines and their
#             records (--records, for tools/bench/report.py) are passed
#             on as diagnostics
. "$(dirname "$0")/lib.sh"

PYDIR=${BX_PYTHON_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/python}
SVC=4242
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}
TC=/usr/sbin/tc

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi
if ! python3 -c 'import numpy, pytest' > /dev/null 2>&1; then
	echo "1..0 # SKIP no python3 with numpy and pytest (run.sh -p)"
	exit $KSFT_SKIP
fi
if [ ! -f "$PYDIR/bx/__init__.py" ]; then
	echo "1..0 # SKIP no Python package at $PYDIR"
	exit $KSFT_SKIP
fi
export PYTHONPATH="$PYDIR:$PYDIR/tests"

b() { rig_barrier "python.$1" "$2"; }

# py_start OUT SECS SCRIPT ARGS...: a Python server (this guest runs one
# at a time: PYSRV), its output into OUT, "ready" there within SECS.
py_start() {
	out=$1 secs=$2
	shift 2
	: > "$out"
	python3 "$@" >> "$out" 2>&1 &
	PYSRV=$!
	try check wait_until "$secs" grep -q ready "$out"
}

# py_stop OUT ERE SECS: stop it (SECS 0: by SIGTERM, within 60 s; else it
# ends by itself within SECS), show OUT (without torch's log lines) and
# fail unless it exited 0 with a line matching ERE (its counters, "bad
# 0" say).
py_stop() {
	if [ "$3" -eq 0 ]; then
		kill -TERM "$PYSRV" 2>/dev/null || true
		try check wait_until 60 pid_gone "$PYSRV"
	else
		try check wait_until $(($3 * BX_SLOW)) pid_gone "$PYSRV"
	fi
	rc=0
	wait "$PYSRV" || rc=$?
	grep -v "^[IW][0-9]* \|^WARNING: Logging" "$1" | sed 's/^/# server: /'
	[ $rc -eq 0 ] && grep -q -E "$2" "$1" ||
		{ echo "# FAIL: server $1: exit status $rc"; ERR=1; }
}

# pytest_ok OUT BAD WHAT: pytest's output OUT shown; it passed something
# and reported none of BAD (an ERE of outcomes). Else "# FAIL: WHAT"
# with pytest's summary of what failed (the line check.sh quotes).
pytest_ok() {
	cat "$1"
	grep -q " passed" "$1" && ! grep -q -E " ($2)" "$1" && return 0
	echo "# FAIL: $3: $(sed -n 's/^# \(FAILED\|ERROR\|SKIPPED\) //p' "$1" |
		cut -c1-160 | paste -s -d ';')"
	return 1
}

pytest_run() {
	(cd /tmp && python3 -m pytest -q -p no:cacheprovider -o console_output_style=classic --durations=6 \
		-rfEs "$@" 2>&1) | sed 's/^/# /'
}

case_binding() {
	pytest_run "$PYDIR/tests/test_binding.py" > /tmp/pyb.out
	pytest_ok /tmp/pyb.out "failed|error" "binding tests"
}

case_guests() {
	ERR=
	if [ "$ID" -eq 0 ]; then
		py_start /tmp/pysrv.out 120 "$PYDIR/tests/guest_server.py" -s $SVC
		b up 180
		b slow 240
		# test_slow_refusal: every frame of ours 40 ms late.
		try check $TC qdisc add dev eth0 root netem delay 40ms
		b slowed 60
		b done 240
		try check $TC qdisc del dev eth0 root
		py_stop /tmp/pysrv.out "^python serve: .* bad 0 " 0
	elif [ "$ID" -eq 1 ]; then
		b up 180
		BX_PY_SERVER=$SERVER BX_PY_SERVICE=$SVC \
			pytest_run "$PYDIR/tests/test_guest.py" -k "not slow_refusal" > /tmp/pyg.out
		pytest_ok /tmp/pyg.out "failed|error|skipped" "client tests" ||
			ERR=1
		b slow 240
		b slowed 60
		BX_PY_SERVER=$SERVER BX_PY_SERVICE=$SVC BX_PY_SLOW_PEER=1 \
			pytest_run "$PYDIR/tests/test_guest.py" -k slow_refusal > /tmp/pyg.out
		pytest_ok /tmp/pyg.out "failed|error|skipped" "slow refusals" ||
			ERR=1
		b done 240
	else
		b up 180
		b slow 240
		b slowed 60
		b done 240
	fi
	result
}

KVSVC=4300
KVKEYS=100000

kv_serve() {
	begin=$(((ID - 1) * KVKEYS / 2))
	# shellcheck disable=SC2086
	py_start /tmp/pykv.out 120 "$PYDIR/tests/kv_server.py" -s $KVSVC \
		-b $begin -e $((begin + KVKEYS / 2)) -l 4 -M 65536 $1
}

kv_worker() {
	BX_KV_SERVERS="$BXRIG_PEER1,$BXRIG_PEER2" BX_KV_SERVICE=$KVSVC \
		BX_KV_KEYS=$KVKEYS BX_KV_VL=4 BX_KV_MSG=65536 \
		pytest_run -s "$PYDIR/tests/test_kv_guest.py" > /tmp/pykvw.out
	pytest_ok /tmp/pykvw.out "failed|error" "kv worker tests" || ERR=1
}

case_kv() {
	[ "${BXRIG_N:-1}" -ge 3 ] || { echo "# needs three rig guests"; return $KSFT_SKIP; }
	ERR=
	if [ "$ID" -eq 1 ] || [ "$ID" -eq 2 ]; then
		flags=--handle
		[ "$ID" -eq 2 ] && flags=--apply
		kv_serve "$flags"
		b kv.up 180
		b kv.calls 300
		b kv.pushing 300
		if [ "$ID" -eq 2 ]; then
			sleep 3
			/usr/sbin/ip link set eth0 down
			sleep 8
			/usr/sbin/ip link set eth0 up
			try check wait_until 10 sh -c 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
		fi
		b kv.outage 300
		# Guest 1's pushes went through its handler, once per request.
		want="^python kv serve: .* bad 0 .*handled 0$"
		[ "$ID" -eq 1 ] && want="^python kv serve: .* bad 0 .*handled [1-9][0-9]*$"
		py_stop /tmp/pykv.out "$want" 0
	elif [ "$ID" -eq 0 ]; then
		b kv.up 180
		kv_worker
		b kv.calls 300
		# Parked pushes wait this long for a new connection.
		def=$(cat /sys/module/bx/parameters/recover_ms)
		echo $((30000 * BX_SLOW)) > /sys/module/bx/parameters/recover_ms
		BX_KV_OUTAGE=1 BX_KV_BARRIER=python.kv.pushing BX_KV_SECS=15 kv_worker
		echo "$def" > /sys/module/bx/parameters/recover_ms
		b kv.outage 300
	else
		b kv.up 180
		b kv.calls 300
		b kv.pushing 300
		b kv.outage 300
	fi
	result
}

EX=$PYDIR/examples/embedding_ps.py
TSTEPS=${BX_TORCH_STEPS:-12}
TWORKERS=${BX_TORCH_WORKERS:-2}
TROWS=${BX_TORCH_ROWS:-20000}
TDIM=${BX_TORCH_DIM:-16}
TTRANSPORTS=${BX_TORCH_TRANSPORTS:-bx,rpc-uv,rpc-ibv,bx:sync,rpc-uv:sync,bx:overlap}
# The whole launch, as a barrier timeout (lib.sh scales it by BX_SLOW):
# torch's imports, then each transport's steps (rpc-ibv's the slowest).
TDONE=$((900 + 6 * TSTEPS * TWORKERS))

# torchrun_ps OUT: this guest's part of one torchrun launch of three
# nodes: node 0 (guest 0) runs the TWORKERS workers, nodes 1 and 2 a
# server each (the last two ranks); they meet through the agent's
# TCPStore on guest 0. Every transport of TTRANSPORTS runs in turn in
# the same processes. --redirects/--tee 1: Debian's torch 1.13 torchrun
# fails at its default (0) on Python 3.11; its lines come prefixed
# "[defaultN]:", stripped into OUT.
torchrun_ps() {
	out=$1
	shift
	n=1
	[ "$ID" -eq 0 ] && n=$TWORKERS
	rm -rf /tmp/trlog
	: > /tmp/emb.raw
	# shellcheck disable=SC2086
	python3 -m torch.distributed.run --nnodes 3 --node_rank "$ID" \
		--nproc_per_node $n --master_addr "$BXRIG_PEER0" \
		--master_port 29500 --redirects 1 --tee 1 --log_dir /tmp/trlog \
		"$EX" --nservers 2 --ifname eth0 --rows "$TROWS" --dim "$TDIM" \
		--records "$@" > /tmp/emb.raw 2>&1 &
	pid=$!
	# What the run is at, as it goes ("# live: "; the rig's output is
	# a file that tools/ps/torch_job.sh shows every 10 s).
	seen=0
	while kill -0 $pid 2>/dev/null; do
		sleep 5
		now=$(wc -l < /tmp/emb.raw)
		[ "$now" -gt "$seen" ] || continue
		sed -n "$((seen + 1)),${now}p" /tmp/emb.raw |
			grep -e " progress " -e "run transport=" -e " ready\$" \
				-e " unavailable: " -e " params sha256 " |
			sed 's/^\[default[0-9]*\]:/# live: /' || true
		seen=$now
	done
	rc=0
	wait $pid || rc=$?
	sed 's/^\[default[0-9]*\]://' /tmp/emb.raw > "$out"
	return $rc
}

case_torch() {
	[ "${BXRIG_N:-1}" -ge 3 ] || { echo "# needs three rig guests"; return $KSFT_SKIP; }
	python3 -c 'import torch.distributed.rpc as r; assert r.is_available()' \
		> /dev/null 2>&1 || { echo "# no torch with distributed.rpc"; return $KSFT_SKIP; }
	ERR=
	b torch.up 300
	if [ "$ID" -le 2 ]; then
		torchrun_ps /tmp/emb.out --transport "$TTRANSPORTS" \
			--steps "$TSTEPS" ||
			{ echo "# FAIL: torchrun on node $ID exited $rc"; ERR=1; }
		grep -E "^(embedding_ps:|bench-record) " /tmp/emb.out | grep -v " progress " | sed 's/^/# /'
		[ -z "$ERR" ] || grep -v "^embedding_ps: \|^[IW][0-9]* \|^WARNING: Logging" \
			/tmp/emb.raw | tail -80 | sed 's/^/# /'
	fi
	if [ "$ID" -eq 1 ] || [ "$ID" -eq 2 ]; then
		# Each bx server's counters clean.
		for t in $(echo "$TTRANSPORTS" | tr , ' '); do
			case $t in bx|bx:*) ;; *) continue ;; esac
			grep -q "^embedding_ps: transport=$t served .* bad 0 errors 0$" /tmp/emb.out ||
				{ echo "# FAIL: the bx server's counters ($t)"; ERR=1; }
		done
	fi
	if [ "$ID" -eq 0 ]; then
		# Every transport's parameters, the same bit for bit in each
		# mode (and not the same in both); every worker's line; RDMA
		# packets on bx and rpc-ibv, none on rpc-uv.
		async= sync=
		for t in $(echo "$TTRANSPORTS" | tr , ' '); do
			h=$(sed -n "s/^embedding_ps: transport=$t params sha256 //p" /tmp/emb.out)
			echo "# final parameters over $t: ${h:-none}"
			[ -n "$h" ] || { echo "# FAIL: no parameters over $t"; ERR=1; continue; }
			case $t in
			*:sync) sync=${sync:-$h}; want=$sync ;;
			*:overlap) want=$h ;;	# as the calls interleave
			*) async=${async:-$h}; want=$async ;;
			esac
			[ "$h" = "$want" ] ||
				{ echo "# FAIL: $t reached other parameters"; ERR=1; }
			[ "$(grep -c "^embedding_ps: transport=$t worker=" /tmp/emb.out)" -eq "$TWORKERS" ] ||
				{ echo "# FAIL: not every worker's figures over $t"; ERR=1; }
			p=$(sed -n "s/^embedding_ps: transport=$t servers=.* rdma_pkts=\([0-9]*\) .*/\1/p" /tmp/emb.out)
			case ${t%%:*}:${p:-x} in
			rpc-uv:0|bx:[1-9]*|rpc-ibv:[1-9]*) ;;
			*) echo "# FAIL: $t: the servers' hosts sent ${p:-?} RDMA packets"; ERR=1 ;;
			esac
		done
		# Two workers: a step's mean is not the sum of their pushes.
		[ -z "$sync" ] || [ "$sync" != "$async" ] ||
			{ echo "# FAIL: sync mode reached lock-step's parameters"; ERR=1; }
	fi
	b torch.done "$TDONE"
	result
}

ktap_plan 4
run_test binding case_binding
run_test guests case_guests
run_test kv case_kv
run_test torch case_torch
ktap_finish
