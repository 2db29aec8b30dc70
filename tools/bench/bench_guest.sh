#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What every guest of a `make bench` run executes (bench.sh boots them
# with run.sh -g I:bench_guest.sh). Guest 0 serves (bxperf servers for bx
# and TCP, qperf, perftest); guests 1.. are clients. The guests walk the
# same list of phases; bxrig barriers start and end each one.
#
#   floor   RDMA READ and WRITE bandwidth (qperf), perftest ib_send_lat
#           (64 B), ib_write_bw and ib_read_bw (64 KiB), guest 1 -> 0
#   sweep   per size (BENCH_SIZES), back to back so that they see the
#           same host: qperf rc_lat/tcp_lat/rc_bw/tcp_bw (the raw verbs
#           and TCP floor of the same rxe link, up to 1 MiB), bxperf pull
#           and push at depth 1 from one process, bx and tcp in turns (two
#           rounds of half a cell), qperf rc_lat/tcp_lat again (guest 1)
#   depth   the same with 8 operations in flight (4 KiB, 64 KiB, 1 MiB)
#   procs   1, 2, 4 processes on guest 1 pulling 4 KiB and 64 KiB
#   peers   1, 2, 3 client guests with one process each, same pulls
#   incast  every client guest x BENCH_INCAST_PROCS processes, 4 in flight
#           each, pulling and pushing 1 MiB at once against guest 0, and
#           one more process per client guest pulling 4 KiB one at a time
#           (the probe), per setting of BENCH_INCAST_SETS (default: bx
#           with flow control off, on (defaults), mid and small windows,
#           off/on/mid with ack_timeout 14, then TCP; see setting())
#   rds     small-message latency in paired rounds, guest 1 -> 0: per
#           size (64 B, 4 KiB) BENCH_ROUNDS rounds (default 5) of an AF_RDS
#           ping-pong over rds_rdma (tools/bench/rds_pp.c), a bx pull at
#           depth 1 and qperf rc_lat, 2 s each, back to back, so that each
#           round's three see the same host: records with "phase":"rds"
#           and the round in their cells
#   bw      1 MiB throughput in paired rounds, guest 1 -> 0: BENCH_ROUNDS
#           rounds of qperf rc_bw, rc_rdma_write_bw and rc_rdma_read_bw
#           (-nr: bx's rd_max) and bx pull and push at depth 8, 2 s each,
#           back to back: records with "phase":"bw", the round and the
#           setting ("on") in their cells (BENCH_BW_SETS: bx
#           with each of these settings too in every round, in orders
#           that balance which cell follows which, the setting's name and
#           tunables in the cell; with BENCH_LAT_ONLY=1, only the small-message
#           latency cells of each setting, pull and push, BENCH_SECS each)
#   pslite  (3 guests or more) ps-lite's API over bx: pslite_bench's push,
#           pull and push-pull of 4 B, 4 KiB, 64 KiB, 1 MiB at 1, 16 and
#           64 outstanding, worker guest 1, server guest 0, scheduler guest
#           2, BENCH_PSLITE_SECS per cell (default 2); then bxperf -T tcp
#           push and pull of the same sizes and depths, guest 1 -> 0 (the
#           TCP baseline: bxperf's request/response, not ps-lite):
#           pslite_bench's records and bxperf's tagged pslite-tcp
#   pieces  one connection, guest 1 -> 0: 1 MiB pulls (then pushes) at
#           depth 8 and, at the same time, a probe process pulling 4 KiB
#           one at a time, with the server's piece_kb 0 (transfers posted
#           whole) and at its default, alternately in BENCH_ROUNDS rounds:
#           tags pieces-off, pieces-on and pieces-{off,on}-{pull,push}-probe
#           (BENCH_PIECE_KB: another piece_kb than the default for "on")
#   profile ftrace (function_graph) on bx and rdma_rxe in guests 0 and 1
#           while guest 1 pulls 4 KiB and pushes 64 KiB at depth 1 over
#           bx: ftrace_prof.sh's records
#
# Settings (run.sh -e): BENCH_SECS (per cell, default 3), BENCH_PSLITE_SECS
# (per pslite cell, default 2), BENCH_INCAST_SECS
# (default 20), BENCH_INCAST_PROCS (2), BENCH_INCAST_RATE (open load: each
# incast process issues this many operations per second, Poisson, at most
# 16 in flight; default none, 4 in flight), BENCH_PHASES (default all of the
# above), BENCH_SIZES (default 64,4096,64K,1M,16M). Output: the records
# that tools/bench/report.py reads ("bench-record {JSON}", the schema in
# tools/bench/README.md, "Records"): bxperf's, rds_pp's and pslite_bench's
# own, each program's cell given the phase, round and setting where it
# ran (-k), and this script's: qperf and perftest results (bench "qperf",
# "perftest"), and bench "bench_guest" kinds "env" (the settings), "phase"
# (NAME start|done, from guest 0), "host" (every guest's connections and
# registered bytes during each procs and incast cell, host_start), "flow"
# (bx's flow counters and rxe/TCP counter changes per incast phase) and
# "skip" (a phase that could not run). Beside them lines for people:
# the programs' own, "bench-phase NAME start|done" progress from guest 0
# (bench.sh shows it), and "bench-guest ID: FAIL: ..." on any failure. A
# guest exits non-zero if anything failed but meets every barrier, so the
# others are not left waiting.

ID=${BXRIG_ID:-0}
N=${BXRIG_N:-1}
S=${BXRIG_PEER0:-192.0.2.1}
SECS=${BENCH_SECS:-3}
ISECS=${BENCH_INCAST_SECS:-20}
IPROCS=${BENCH_INCAST_PROCS:-2}
IRATE=${BENCH_INCAST_RATE:-}
if [ -n "$IRATE" ]; then
	IDEPTH=16 ILOAD="-q 16 -r $IRATE"
else
	IDEPTH=4 ILOAD="-q 4"
fi
PHASES=${BENCH_PHASES:-floor sweep depth procs peers incast pslite rds bw pieces profile}
SIZES=${BENCH_SIZES:-64,4096,64K,1M,16M}
ROUNDS=${BENCH_ROUNDS:-5}
P=/sys/module/bx/parameters
DBG=/sys/kernel/debug/bx
# A cell of the sweep takes SECS plus warm-up; 16 MiB over TCG can take
# seconds per operation.
CTMO=$((SECS * 20 + 240))
rc=0

fail() { echo "bench-guest $ID: FAIL: $*"; rc=1; }

# ---- records -------------------------------------------------------------

# rec BENCH KIND CELL METRICS: a record (tools/bench/README.md, "Records");
# CELL and METRICS are the members of their objects, '"tag":"x","size":64'.
rec() {
	printf 'bench-record {"v":1,"bench":"%s","kind":"%s","cell":{%s},"metrics":{%s}}\n' \
		"$1" "$2" "$3" "$4"
}
# jv VALUE: VALUE in JSON: a number as it is, null if empty, else a string.
jv() {
	printf '%s' "$1" | awk "$JAWK"' { printf "%s", jv($0) } END { if (!NR) printf "null" }'
}
# The same in awk programs: "$JAWK"'PROGRAM'.
JAWK='function js(v,  o, i, c) {
	for (i = 1; i <= length(v); i++) {
		c = substr(v, i, 1)
		o = o (c == "\\" || c == "\"" ? "\\" : "") c
	}
	return "\"" o "\""
}
function jv(v) { return v == "" ? "null" : v ~ /^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][-+]?[0-9]+)?$/ ? v : js(v) }
'
# Barriers: the start of a phase comes within seconds on every guest,
# its end waits for the slowest guest's share of it.
b() {
	case $1 in
	*.done|end) bt=900 ;;
	*) bt=180 ;;
	esac
	bxrig barrier "bench.$1" "$bt" || fail "barrier $1"
}
# qperf -uu prints "test:" then "    latency  =  N ns" / "bw  =  N bytes/sec".
# A line and a record (bench "qperf") each; QCELL: more members of the
# record's cell ('"phase":"rds","round":2').
qperf_parse() {
	awk -v size="$1" -v pass="${2:-1}" -v more="${QCELL:+,$QCELL}" "$JAWK"'
	/^[a-z_]+:$/ { t = substr($1, 1, length($1) - 1); next }
	$1 == "latency" || $1 == "bw" {
		v = $3; u = $4
		if ($1 == "latency") {
			f = (u == "ns") ? 1e-3 : (u == "us") ? 1 : (u == "ms") ? 1e3 : 1e6
			m = "lat_us"; x = sprintf("%.1f", v * f)
		} else {
			f = (u ~ /^bytes/) ? 1e-6 : (u ~ /^KB/) ? 1e-3 : (u ~ /^MB/) ? 1 : 1e3
			m = "mb_s"; x = sprintf("%.3f", v * f)
		}
		printf "bench-floor tool=qperf test=%s size=%s pass=%s %s=%s\n", t, size, pass, m, x
		printf "bench-record {\"v\":1,\"bench\":\"qperf\",\"kind\":\"result\",\"cell\":{\"test\":%s,\"size\":%s,\"pass\":%s%s},\"metrics\":{\"%s\":%s}}\n", js(t), jv(size), jv(pass), more, m, jv(x)
	}'
}

# perftest: the line after the column header holds the numbers.
# A line and a record (bench "perftest").
perftest_parse() {
	awk -v test="$1" "$JAWK"'
	/#bytes/ { hdr = 1; next }
	hdr && NF >= 4 && $1 ~ /^[0-9]+$/ {
		r = "bench-record {\"v\":1,\"bench\":\"perftest\",\"kind\":\"result\",\"cell\":{\"test\":" js(test) ",\"size\":" jv($1) "},\"metrics\":{"
		if (test == "ib_send_lat") {
			printf "bench-floor tool=perftest test=%s size=%s min_us=%s typ_us=%s avg_us=%s p99_us=%s p999_us=%s max_us=%s\n", test, $1, $3, $5, $6, $8, $9, $4
			printf "%s\"min_us\":%s,\"typ_us\":%s,\"avg_us\":%s,\"p99_us\":%s,\"p999_us\":%s,\"max_us\":%s}}\n", r, jv($3), jv($5), jv($6), jv($8), jv($9), jv($4)
		} else {
			printf "bench-floor tool=perftest test=%s size=%s mb_s=%s\n", test, $1, $4
			printf "%s\"mb_s\":%s}}\n", r, jv($4)
		}
		hdr = 0
	}'
}

# env_rec KEY=VALUE...: the run's settings, a line and a record.
env_rec() {
	printf 'bench-env %s\n' "$*"
	cell='' sep=''
	for kv in "$@"; do
		cell="$cell$sep\"${kv%%=*}\":$(jv "${kv#*=}")"
		sep=,
	done
	rec bench_guest env "$cell" ""
}
say() {
	[ "$ID" -eq 0 ] || return 0
	echo "bench-phase $1"
	rec bench_guest phase "\"phase\":$(jv "${1% *}"),\"state\":$(jv "${1##* }")" ""
}
# ---- end of records (tools/testing/unit/benchrec_test.sh runs them) ----

has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

# bxperf client with a timeout; its output goes to the result log.
cli() {
	timeout "$CTMO" bxperf client -a "$S" "$@" > /tmp/cli.out 2> /tmp/cli.err
	crc=$?
	cat /tmp/cli.out
	sed 's/^/bench-stderr: /' /tmp/cli.err | head -20
	[ $crc -eq 0 ] || fail "bxperf client $* exited $crc"
}

# The probe: one more process pulling 4 KiB, one at a time, for SECS
# through the connection of the bulk operations that run meanwhile.
# probe_start TRANSPORT SECS TAG ... probe_end
probe_start() {
	timeout "$CTMO" bxperf client -a "$S" -T "$1" -o pull -z 4096 -q 1 \
		-d "$2" -w 1 -m 1 -t "$3" > /tmp/probe.out 2> /tmp/probe.err &
	pr=$!
}
probe_end() {
	wait $pr || fail "probe exited non-zero: $(cat /tmp/probe.err)"
	cat /tmp/probe.out
}

# ---- counters ----------------------------------------------------------

snap() {
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		[ -f "$f" ] && echo "rxe_${f##*/} $(cat "$f")"
	done
	awk '/^Tcp:/ { if (!h) { for (i = 2; i <= NF; i++) k[i] = $i; h = 1 }
		       else for (i = 2; i <= NF; i++) print "tcp_" k[i], $i }' \
		/proc/net/snmp
}

# bx's host flow counters and the sums/maxima over connections.
flow() {
	awk '{ print $1, $2 }' $DBG/flow 2>/dev/null
	awk '{ for (i = 1; i < NF; i++) {
		k = $i; v = $(i + 1)
		if (k ~ /^(wnd_waits|rd_waits|stalls|busy_retries|rnr|small_passes)$/) s[k] += v
		if (k ~ /^(wnd_peak_bytes|wnd_peak_ops|rd_peak_bytes|rd_peak_reads)$/ &&
		    v + 0 > m[k] + 0) m[k] = v
	} } END {
		for (k in s) print "conn_" k, s[k]
		for (k in m) print "conn_max_" k, m[k]
	}' $DBG/conns 2>/dev/null
}

# What a host holds while a cell runs, sampled every second in the
# background and printed as maxima: bx's connections (all processes of
# the host share them) and registered region bytes with the cap they are
# charged against, and the TCP connections of bxperf's TCP transport
# (port 7080, 0x1BA8, either end). Shell builtins only, but for sleep:
# the 1-vCPU guests of the incast have no CPU to spare for it.
# A value never read stays empty (the report: not measured).
# host_start TAG ... host_end
host_print() {
	cap=$(cat $P/region_cap_mb 2>/dev/null)
	echo "bench-host tag=$ht guest=$ID bx_conns=$mc region_bytes=$mr region_cap_mb=$cap tcp_conns=$mt"
	rec bench_guest host "\"tag\":$(jv "$ht"),\"guest\":$ID" \
		"\"bx_conns\":$(jv "$mc"),\"region_bytes\":$(jv "$mr"),\"region_cap_mb\":$(jv "$cap"),\"tcp_conns\":$(jv "$mt")"
}
host_start() {
	ht=$1
	(
		mc='' mr='' mt=''
		trap 'host_print; exit 0' TERM
		while :; do
			while read -r k v; do
				case $k in
				conns) [ "$v" -gt "${mc:--1}" ] && mc=$v ;;
				region_bytes) [ "$v" -gt "${mr:--1}" ] && mr=$v ;;
				esac
			done 2>/dev/null < $DBG/stats
			if [ -r /proc/net/tcp ]; then
				t=0
				while read -r _ la ra st _; do
					[ "$st" = 01 ] || continue
					case "$la $ra" in
					*:1BA8\ *|*:1BA8) t=$((t + 1)) ;;
					esac
				done < /proc/net/tcp
				[ "$t" -gt "${mt:--1}" ] && mt=$t
			fi
			sleep 1
		done
	) &
	hs=$!
}
host_end() {
	kill -TERM $hs 2>/dev/null
	wait $hs 2>/dev/null
}

# Print what changed since snap > /tmp/net.before, plus bx's counters:
# a line and a record (its cell: the phase, the guest and the tunables).
counters() {
	snap > /tmp/net.after
	{
		awk 'NR == FNR { a[$1] = $2; next }
		     $2 != a[$1] && $1 !~ /^tcp_(RtoAlgorithm|RtoMin|RtoMax|MaxConn|CurrEstab)$/ {
			print $1, $2 - a[$1]
		     }' /tmp/net.before /tmp/net.after
		flow
	} > /tmp/flow.kv
	# The tunables an incast setting may change, in this order:
	# flow_control/wnd_kb/host_wnd_kb/rx_wnd_kb/rd_max/rd_depth/
	# ack_timeout/piece_kb.
	params='' sep=''
	for t in flow_control wnd_kb host_wnd_kb rx_wnd_kb rd_max rd_depth \
		ack_timeout piece_kb; do
		params=$params$sep$(cat $P/$t)
		sep=/
	done
	printf 'bench-flow phase=%s guest=%s' "$1" "$ID"
	awk '{ printf " %s=%s", $1, $2 }' /tmp/flow.kv
	echo " params=$params"
	rec bench_guest flow "\"phase\":$(jv "$1"),\"guest\":$ID,\"params\":$(jv "$params")" \
		"$(awk "$JAWK"'{ printf "%s%s:%s", NR > 1 ? "," : "", js($1), jv($2) }' /tmp/flow.kv)"
}

# Tunables of an incast setting, on a freshly loaded bx so that its
# counters (peaks, waits) are those of this setting alone.
setting() {
	case ${1%%-*} in
	off)	echo N > $P/flow_control ;;
	on|base) echo Y > $P/flow_control ;;
	mid)	echo Y > $P/flow_control
		echo 1024 > $P/wnd_kb; echo 4096 > $P/host_wnd_kb
		echo 2048 > $P/rx_wnd_kb ;;
	# mid's two halves: the receiver's admission alone, the senders'
	# windows alone.
	rx)	echo Y > $P/flow_control; echo 2048 > $P/rx_wnd_kb ;;
	snd)	echo Y > $P/flow_control
		echo 1024 > $P/wnd_kb; echo 4096 > $P/host_wnd_kb ;;
	small)	echo Y > $P/flow_control
		echo 256 > $P/wnd_kb; echo 512 > $P/host_wnd_kb
		echo 256 > $P/rx_wnd_kb ;;
	esac || fail "setting $1"
	# SET-aN: the same with ack_timeout N; SET-pN: with piece_kb N;
	# SET-xN: with rx_wnd_kb N; SET-rN: with rd_max N and rd_depth 1
	# (READs posted early, one on the wire at a time); SET-mN: with
	# rd_max N alone (N on the wire: rxe's READ bug, see bx.rst).
	for sfx in $(echo "${1#*-}" | tr - ' '); do
		[ "$sfx" = "$1" ] && break
		case $sfx in
		a*)	echo "${sfx#a}" > $P/ack_timeout ;;
		p*)	echo "${sfx#p}" > $P/piece_kb ;;
		x*)	echo "${sfx#x}" > $P/rx_wnd_kb ;;
		r*)	echo "${sfx#r}" > $P/rd_max && echo 1 > $P/rd_depth ;;
		m*)	echo "${sfx#m}" > $P/rd_max ;;
		*)	false ;;
		esac || fail "setting $1"
	done
}

start_bx_server() {
	bxperf server -T bx > /tmp/srv.bx 2>&1 &
	SBX=$!
}

stop_bx_server() {
	kill -TERM "$SBX" 2>/dev/null
	wait "$SBX" || fail "bx server exited non-zero: $(cat /tmp/srv.bx)"
	cat /tmp/srv.bx >> /tmp/srv.bx.all
}

wait_ready() {
	k=0
	until grep -q ready "$@" 2>/dev/null; do
		k=$((k + 1))
		if [ $k -gt 600 ]; then
			fail "server did not start: $(cat "$@")"
			return 1
		fi
		sleep 0.1
	done
}

# Load bx for setting $1: "base..." is the module of BENCH_BASE (the
# revision an A/B run compares with), anything else the one under test.
load_bx() {
	case $1 in
	base*)	insmod /opt/bx/bench/bx-base.ko ;;
	*)	modprobe bx ;;
	esac
}

reload_bx() {
	[ "$ID" -eq 0 ] && stop_bx_server
	if rmmod bx && load_bx "$1"; then
		k=0
		until grep -q rxe0 $DBG/devices 2>/dev/null; do
			k=$((k + 1))
			[ $k -gt 100 ] && { fail "bx did not bind rxe0"; break; }
			sleep 0.1
		done
	else
		fail "reloading bx"
	fi
	setting "$1"
	if [ "$ID" -eq 0 ]; then
		start_bx_server
		wait_ready /tmp/srv.bx
	fi
}

# ---- servers -----------------------------------------------------------

modprobe rdma_ucm 2>/dev/null	# qperf -cm1, perftest need rdma_cm's uverbs
if [ "$ID" -eq 0 ]; then
	env_rec kernel="$(uname -r)" guests="$N" cpus="$(grep -c ^processor /proc/cpuinfo)" \
		mem_kb="$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" secs="$SECS" \
		incast_secs="$ISECS" incast_procs="$IPROCS" incast_depth="$IDEPTH" \
		incast_rate="${IRATE:-0}"
	start_bx_server
	bxperf server -T tcp > /tmp/srv.tcp 2>&1 &
	STCP=$!
	wait_ready /tmp/srv.bx && wait_ready /tmp/srv.tcp
fi
b up

# ---- floor: qperf and perftest, guest 1 against guest 0 -----------------

PT="-d rxe0 -x 1"	# rxe over IPv4: GID 1 is the IPv4-mapped one
RDMAX=$(cat $P/rd_max)

# qperf SIZE PASS TEST...: against guest 0's qperf server, up to 1 MiB
# (rxe and concurrent big transfers). -cm1: connect with rdma_cm (rxe
# needs GRH addressing); -cp 0: wait for completions like bx does (busy
# polling starves rxe's own work on a 1-vCPU guest).
qp() {
	[ "$1" -le 1048576 ] || return 0
	qm=$1 qpass=$2
	shift 2
	# shellcheck disable=SC2086
	timeout 120 qperf -cm1 -cp 0 -t 2 -uu -m "$qm" ${QOPTS:-} "$S" "$@" > /tmp/q.out 2>&1 ||
		fail "qperf -m $qm $*: $(tr '\n' ' ' < /tmp/q.out)"
	qperf_parse "$qm" "$qpass" < /tmp/q.out
}

# Sizes of the sweep as bytes (qperf takes no K/M suffix).
bytes() {
	case $1 in
	*K) echo $((${1%K} * 1024)) ;;
	*M) echo $((${1%M} * 1048576)) ;;
	*) echo "$1" ;;
	esac
}

# A phase with a qperf server on guest 0: phase_up NAME says it starts,
# starts the server and meets the others at NAME.up; phase_down NAME
# meets them at NAME.done, stops the server and says it is done.
phase_up() {
	say "$1 start"
	if [ "$ID" -eq 0 ]; then
		qperf > /tmp/qperf.srv 2>&1 &
		QP=$!
		sleep 1
	fi
	b "$1.up"
}
phase_down() {
	b "$1.done"
	[ "$ID" -eq 0 ] && kill "$QP" 2>/dev/null
	say "$1 done"
}

# floor: RDMA READ/WRITE bandwidth (qperf) and perftest, guest 1 -> 0.
if has floor; then
	phase_up floor
	if [ "$ID" -eq 1 ]; then
		# -cm1: connect with rdma_cm (rxe needs GRH addressing); -nr:
		# as many RDMA READs in flight per QP as bx's rd_max.
		timeout 120 qperf -cm1 -cp 0 -t 3 -uu -m 65536 -nr "$RDMAX" "$S" \
			rc_rdma_read_bw rc_rdma_write_bw > /tmp/q.out 2>&1 ||
			fail "qperf rdma: $(tr '\n' ' ' < /tmp/q.out)"
		qperf_parse 65536 < /tmp/q.out
	fi
	b floor.qperf.done
	[ "$ID" -eq 0 ] && kill "$QP" 2>/dev/null
	for pt in "ib_send_lat -s 64 -n 100" "ib_write_bw -s 65536 -n 100" \
		  "ib_read_bw -s 65536 -n 100 -o 2"; do
		tool=${pt%% *}
		if [ "$ID" -eq 0 ]; then
			# shellcheck disable=SC2086
			timeout 120 $pt $PT > /tmp/pt.srv 2>&1 &
			PTS=$!
			sleep 1
		fi
		b "floor.$tool.up"
		if [ "$ID" -eq 1 ]; then
			# shellcheck disable=SC2086
			timeout 120 $pt $PT "$S" > /tmp/pt.out 2>&1 ||
				fail "$tool: $(tail -3 /tmp/pt.out | tr '\n' ' ')"
			perftest_parse "$tool" < /tmp/pt.out
		fi
		[ "$ID" -eq 0 ] && { wait "$PTS" || true; }
		b "floor.$tool.done"
	done
	say "floor done"
fi

# sweep: per size, within seconds of each other (the host's load drifts):
# qperf rc_lat/tcp_lat/rc_bw/tcp_bw (up to 1 MiB), then bx and tcp pull
# and push at depth 1, guest 1 -> 0.
if has sweep; then
	phase_up sweep
	if [ "$ID" -eq 1 ]; then
		for z in $(echo "$SIZES" | tr , ' '); do
			m=$(bytes "$z")
			qp "$m" 1 rc_lat tcp_lat rc_bw tcp_bw
			# The floor of the verbs bx moves large payloads with:
			# a pull's reply is RDMA WRITEs, a push is READ by the
			# receiver (-nr: READs in flight, as bx's rd_max).
			[ "$m" -ge 65536 ] &&
				QOPTS="-nr $RDMAX" qp "$m" 1 rc_rdma_write_bw rc_rdma_read_bw
			# Two rounds of half a cell each, bx and tcp taking turns
			# (one round of MIN_OPS for 16 MiB).
			rounds="1 2" d=$(awk -v s="$SECS" 'BEGIN { print s / 2 }')
			[ "$m" -gt 1048576 ] && rounds=1 d=$SECS
			for _ in $rounds; do
				for op in pull push; do
					for tp in bx tcp; do
						cli -T $tp -o $op -z "$z" -d "$d" -S -t sweep
					done
				done
			done
			qp "$m" 2 rc_lat tcp_lat
		done
	fi
	phase_down sweep
fi

# depth and procs, guest 1 -> 0.
for tp in bx tcp; do
	if has depth; then
		say "depth.$tp start"
		b "depth.$tp"
		if [ "$ID" -eq 1 ]; then
			cli -T $tp -o pull -z 4096,64K,1M -q 8 -d "$SECS" -S -t depth
			cli -T $tp -o push -z 4096,64K,1M -q 8 -d "$SECS" -S -t depth
		fi
		b "depth.$tp.done"
	fi
	if has procs; then
		say "procs.$tp start"
		for np in 1 2 4; do
			b "procs.$tp.$np"
			host_start "procs-$tp-$np"
			if [ "$ID" -eq 1 ]; then
				cli -T $tp -o pull -z 4096,64K -P $np -d "$SECS" -S \
					-t procs
			fi
			b "procs.$tp.$np.done"
			host_end
		done
	fi
done

# ---- peers: 1..N-1 client guests at once -------------------------------

if has peers; then
	for tp in bx tcp; do
		k=1
		while [ $k -lt "$N" ]; do
			say "peers.$tp.$k start"
			b "peers.$tp.$k"
			if [ "$ID" -ge 1 ] && [ "$ID" -le $k ]; then
				st=; [ "$ID" -eq 1 ] && st=-S
				cli -T $tp -o pull -z 4096,64K -d "$SECS" $st -t "peers$k"
			fi
			b "peers.$tp.$k.done"
			k=$((k + 1))
		done
	done
fi

# ---- incast: every client guest x IPROCS processes ---------------------

if has incast; then
	for set in ${BENCH_INCAST_SETS:-off on mid small off-a14 on-a14 mid-a14 tcp}; do
		tp=bx
		[ $set = tcp ] && tp=tcp
		[ $set = tcp ] || reload_bx $set
		snap > /tmp/net.before
		say "incast.$set start"
		b "incast.$set"
		host_start "incast-$set"
		if [ "$ID" -ge 1 ]; then
			st=; [ "$ID" -eq 1 ] && st=-S
			# The probe: one more process, a 4 KiB pull at a time,
			# through the bulk operations' connection.
			probe_start $tp "$ISECS" "incast-$set-probe"
			cli -T $tp -o mix -z 1M $ILOAD -P "$IPROCS" -d "$ISECS" -m 1 \
				-w 1 $st -t "incast-$set"
			probe_end
		fi
		b "incast.$set.done"
		host_end
		counters "incast-$set"
		# The server reads its connections' counters before the
		# clients reload bx for the next setting, which closes them
		# (it read none in one run's "small").
		b "incast.$set.read"
	done
	# The phases after this one measure bx at its defaults: with -n 2
	# they run in this boot, on the last setting's tunables otherwise.
	reload_bx on
fi

# ---- pslite: ps-lite's KVWorker over bx, bxperf over TCP beside it -----

# pslite_bench (tools/pslite/), a program written against ps-lite's API
# over bx's <ps/ps.h>: server on guest 0 (KVServerDefaultHandle), worker
# on guest 1, scheduler on guest 2 (bx has no loopback: nodes that talk
# to each other are on different guests), one key of each size, push,
# pull and push-pull at 1, 16 and 64 outstanding. After each op's cells,
# the same op, sizes and depths from guest 1 to guest 0 over bxperf -T
# tcp (its own request/response over kernel TCP, not ps-lite; push-pull
# has no TCP counterpart). pslite_bench's lines and records.
PS_SIZES=4,4096,65536,1048576
if has pslite && [ "$N" -lt 3 ]; then
	say "pslite start"
	if [ "$ID" -eq 0 ]; then
		echo "bench-pslite-skip guests=$N needs=3"
		rec bench_guest skip "\"phase\":\"pslite\",\"guests\":$N,\"needs\":3" ""
	fi
	say "pslite done"
elif has pslite; then
	PSECS=${BENCH_PSLITE_SECS:-2}
	say "pslite start"
	[ "$ID" -eq 0 ] && env_rec pslite_secs="$PSECS" pslite_sizes="$PS_SIZES"
	case $ID in
	0) prole=server ;;
	1) prole=worker ;;
	2) prole=scheduler ;;
	*) prole= ;;
	esac
	for op in push pull pushpull; do
		b "pslite.$op"
		if [ -n "$prole" ]; then
			DMLC_ROLE=$prole DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 \
			DMLC_PS_ROOT_URI=$BXRIG_PEER2 DMLC_PS_ROOT_PORT=9100 \
			BXPS_TIMEOUT_MS=300000 \
				timeout $((PSECS * 12 * 10 + 600)) pslite_bench -o $op -q 1,16,64 \
				-s $PS_SIZES -d "$PSECS" > /tmp/ps.out 2> /tmp/ps.err
			prc=$?
			# its lines and records (bench "pslite_bench")
			grep -E '^(pslite_bench: op|bench-record) ' /tmp/ps.out
			sed 's/^/bench-stderr: /' /tmp/ps.err | head -20
			[ $prc -eq 0 ] || fail "pslite_bench ($prole) -o $op exited $prc"
		fi
		b "pslite.$op.bx.done"
		if [ "$ID" -eq 1 ] && [ $op != pushpull ]; then
			for q in 1 16 64; do
				cli -T tcp -o $op -z $PS_SIZES -q $q -d "$PSECS" -t pslite-tcp
			done
		fi
		b "pslite.$op.done"
	done
	say "pslite done"
fi

# ---- pieces: a small pull behind bulk transfers on one connection -------

if has pieces; then
	say "pieces start"
	pdef=${BENCH_PIECE_KB:-$(cat $P/piece_kb)}
	[ "$ID" -eq 0 ] && env_rec piece_kb="$pdef" rounds="$ROUNDS"
	for r in $(seq "$ROUNDS"); do
		for st in off on; do
			# Only the server's setting matters: it WRITEs the
			# pulls' data and READs the pushes'.
			[ $st = off ] && echo 0 > $P/piece_kb || echo "$pdef" > $P/piece_kb
			b "pieces.$r.$st"
			if [ "$ID" -eq 1 ]; then
				for op in pull push; do
					probe_start bx "$SECS" "pieces-$st-$op-probe"
					cli -T bx -o $op -z 1M -q 8 -d "$SECS" -m 1 -w 1 \
						-t "pieces-$st"
					probe_end
				done
			fi
			b "pieces.$r.$st.done"
		done
	done
	echo "$pdef" > $P/piece_kb
	say "pieces done"
fi

# ---- RDS ---------------------------------------------------------------

if has rds; then
	if [ "$ID" -le 1 ]; then
		modprobe rds_rdma || fail "modprobe rds_rdma"
	fi
	if [ "$ID" -eq 0 ]; then
		rds_pp serve -b "$BXRIG_ADDR" > /tmp/rds.srv 2>&1 &
		RDS=$!
	fi
	phase_up rds
	if [ "$ID" -eq 1 ]; then
		# The host's load drifts within seconds; a ratio is only
		# as good as the time between its two numbers.
		for z in 64 4096; do
			r=1
			while [ $r -le "$ROUNDS" ]; do
				# each record's cell says its phase and round
				timeout 120 rds_pp client -b "$BXRIG_ADDR" -a "$S" \
					-z $z -d 2 -k phase=rds -k round=$r > /tmp/rds.out 2>&1 ||
					fail "rds_pp $z: $(tr '\n' ' ' < /tmp/rds.out)"
				grep -E '^(bench-rds|bench-record) ' /tmp/rds.out
				timeout "$CTMO" bxperf client -a "$S" -T bx -o pull \
					-z $z -d 2 -S -t pair -k phase=rds -k round=$r \
					> /tmp/cli.out 2>&1 ||
					fail "bxperf pull $z: $(tail -3 /tmp/cli.out | tr '\n' ' ')"
				grep -E '^(bxperf-result|bench-record) ' /tmp/cli.out
				QCELL="\"phase\":\"rds\",\"round\":$r" qp $z 1 rc_lat
				r=$((r + 1))
			done
		done
	fi
	phase_down rds
	if [ "$ID" -eq 0 ]; then
		kill "$RDS" 2>/dev/null
		wait "$RDS" 2>/dev/null
	fi
	rmmod rds_rdma rds 2>/dev/null
fi

# ---- bw: 1 MiB throughput in paired rounds -------------------------------

# The sweep measures qperf's bandwidth once per size, minutes before the
# depth phase's bx cells: on a host whose speed drifts that far apart, a
# ratio of the two says more about the host than about bx. Here each
# round runs the raw verbs and bx back to back, 2 s each.
if has bw; then
	# BENCH_BW_SETS: more bx settings (setting()) whose pull and push
	# run in every round too, for A/B comparisons: their records have
	# the setting's name and tunables in their cells. Each bx cell then has bx freshly loaded, and
	# the rounds follow a Williams design: over n rounds (2n if n is
	# odd) every setting runs in every place and right after every other
	# equally often. In a fixed order an A/A control (the defaults under
	# another name) ran 0.88 times as fast as the defaults it followed.
	sets=on
	for x in ${BENCH_BW_SETS:-}; do
		[ "$x" = on ] || sets="$sets $x"
	done
	nsets=$(($(echo "$sets" | wc -w)))
	[ "$ID" -eq 0 ] && [ "$nsets" -gt 1 ] &&
		env_rec bw_sets="$(echo "$sets" | tr ' ' ,)" bw_order=williams
	phase_up bw
	r=1
	while [ $r -le "$ROUNDS" ]; do
		i=0
		while [ $i -lt "$nsets" ]; do
			# Row r-1 of the design: places 0, 1, n-1, 2, n-2, ...
			# turned by r-1; every other block of n rows mirrored
			# when n is odd.
			j=$i
			[ $((nsets % 2)) -eq 1 ] && [ $(((r - 1) / nsets % 2)) -eq 1 ] &&
				j=$((nsets - 1 - i))
			if [ $j -eq 0 ]; then
				k=0
			elif [ $((j % 2)) -eq 1 ]; then
				k=$(((j + 1) / 2))
			else
				k=$((nsets - j / 2))
			fi
			set=$(echo "$sets" | cut -d' ' -f$(((k + r - 1) % nsets + 1)))
			i=$((i + 1))
			if [ "$nsets" -gt 1 ]; then
				reload_bx "$set"
				b "bw.$r.$set"
			fi
			# each record's cell says its phase, round and setting
			kv="-k phase=bw -k round=$r -k set=$set"
			if [ "$ID" -eq 1 ] && [ -n "${BENCH_LAT_ONLY:-}" ]; then
				# Small messages only, without bulk cells before them.
				for op in pull push; do
					# shellcheck disable=SC2086
					timeout "$CTMO" bxperf client -a "$S" -T bx -o $op \
						-z 64,4096 -q 1 -d "$SECS" -t pairlat $kv \
						> /tmp/cli.out 2>&1 ||
						fail "bxperf $op 64,4096 ($set): $(tail -3 /tmp/cli.out | tr '\n' ' ')"
					grep -E '^(bxperf-result|bench-record) ' /tmp/cli.out
				done
			elif [ "$ID" -eq 1 ]; then
				if [ "$set" = on ]; then
					QCELL="\"phase\":\"bw\",\"round\":$r" QOPTS="-nr $RDMAX" \
						qp 1048576 1 rc_bw rc_rdma_write_bw rc_rdma_read_bw
				fi
				# another setting's: its tunables too
				[ "$set" = on ] ||
					kv="$kv -k rd_max=$(cat $P/rd_max) -k rd_depth=$(cat $P/rd_depth) -k piece_kb=$(cat $P/piece_kb)"
				for op in pull push; do
					# shellcheck disable=SC2086
					timeout "$CTMO" bxperf client -a "$S" -T bx -o $op \
						-z 1M -q 8 -d 2 -t pairbw $kv > /tmp/cli.out 2>&1 ||
						fail "bxperf $op 1M ($set): $(tail -3 /tmp/cli.out | tr '\n' ' ')"
					grep -E '^(bxperf-result|bench-record) ' /tmp/cli.out
				done
				# With other settings: the small-message latency of
				# each too (64 B and 4 KiB pulls, one at a time).
				if [ "$nsets" -gt 1 ]; then
					# shellcheck disable=SC2086
					timeout "$CTMO" bxperf client -a "$S" -T bx -o pull \
						-z 64,4096 -q 1 -d 2 -t pairlat $kv > /tmp/cli.out 2>&1 ||
						fail "bxperf pull 64,4096 ($set): $(tail -3 /tmp/cli.out | tr '\n' ' ')"
					grep -E '^(bxperf-result|bench-record) ' /tmp/cli.out
				fi
			fi
			[ "$nsets" -gt 1 ] && b "bw.$r.$set.done"
		done
		r=$((r + 1))
	done
	phase_down bw
	[ "$nsets" -gt 1 ] && reload_bx on
fi

# ---- profile -------------------------------------------------------------

if has profile && [ "$ID" -le 1 ]; then
	reload_bx on
	say "profile start"
	b profile
	ftrace_prof.sh start || fail "ftrace start"
	b profile.armed
	if [ "$ID" -eq 1 ]; then
		cli -T bx -o pull -z 4096 -d "$SECS" -S -t profile
		cli -T bx -o push -z 64K -d "$SECS" -S -t profile
	fi
	b profile.ran
	ftrace_prof.sh stop "guest$ID" 25 || fail "ftrace stop"
	b profile.done
elif has profile; then
	b profile; b profile.armed; b profile.ran; b profile.done
fi

# ---- end ---------------------------------------------------------------

b end
if [ "$ID" -eq 0 ]; then
	stop_bx_server
	kill -TERM "$STCP" 2>/dev/null
	wait "$STCP" || fail "tcp server exited non-zero: $(cat /tmp/srv.tcp)"
	cat /tmp/srv.bx.all /tmp/srv.tcp
	echo "bench-phase end"
fi
exit $rc
