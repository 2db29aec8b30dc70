#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bench/report.sh on made-up runs: its "targets" table must give
# each target of the benchmark issue the verdict the numbers call for.
# The runs are a few records each (tools/bench/README.md, "Records"), as
# bench_guest.sh and the programs it runs print them, with numbers
# chosen so that every target is met (run "good"), missed (run "bad")
# or not measured (run "bare"). The PyTorch example's table (phase
# torch, DIR/torch) comes from the records embedding_ps.py prints after
# its lines with --records, which python.sh passes on as diagnostics.
# KTAP output.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
report=$here/../../bench/report.sh
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$here/tap.sh"



# The verdict of the target row whose text starts with $2, in report $1.
verdict() {
	awk -F' [|] ' -v t="$2" 'index($1, "| " t) == 1 { v = $3; sub(/ [|]$/, "", v); print v; exit }' "$1"
}
is() {	# REPORT TARGET VERDICT
	local got
	got=$(verdict "$1" "$2")
	[ "$got" = "$3" ] || { echo "# $2: '$got', want '$3'"; return 1; }
}

# A record: BENCH KIND CELL METRICS, CELL and METRICS the members of
# their objects (j).
rec() {
	printf 'bench-record {"v":1,"bench":"%s","kind":"%s","cell":{%s},"metrics":{%s}}\n' \
		"$1" "$2" "$3" "$4"
}
# The same as a line of a host's file of records (NAME.jsonl).
jrec() {
	rec "$@" | sed 's/^bench-record //'
}
# K=V... as JSON members: a number as it is, null if empty, else a string.
j() {
	local kv v out='' sep=''
	for kv in "$@"; do
		v=${kv#*=}
		if [ -z "$v" ]; then
			v=null
		elif ! [[ $v =~ ^-?(0|[1-9][0-9]*)([.][0-9]+)?$ ]]; then
			v="\"$v\""
		fi
		out+="$sep\"${kv%%=*}\":$v" sep=,
	done
	printf '%s' "$out"
}

# A cell's result (bxperf's record) and its histogram: one bucket at
# latency US; EXTRA: more of its cell (K=V...).
cell() {	# TAG TRANSPORT OP SIZE DEPTH PROCS MIX N MB_S US [EXTRA]
	local b
	b=$(awk -v us="${10}" 'BEGIN { printf("%d", 32 * log(us) / log(2) - 0.5) }')
	# shellcheck disable=SC2086
	rec bxperf result "$(j tag="$1" transport="$2" op="$3" size="$4" depth="$5" procs="$6" mix="$7" ${11:-})" \
		"$(j n="$8" errors=0 secs=20 mb_s="$9" mean_us="${10}" p50_us="${10}" p99_us="${10}" p999_us="${10}" cpu_us_op=1 guest_cpu_us_op=1 srv_cpu_us_op=1 srv_guest_cpu_us_op=1 rxe_retry=0 tcp_retrans=0 hist_per_oct=32),\"hist\":[[$b,$8]]"
}

# A run in DIR:
#   Q, R     "64B 4KiB": bx/raw and bx/RDS in every paired round of each
#            size ("-": no rds phase)
#   BW       "WRITE READ RC_BW PULL PUSH": 1 MiB MB/s of qperf and of bx
#   INCAST   "SETTING:US ...": the worst latency of each incast setting
#            (US "-": its operations all failed, no histogram)
#   CONNS    "C1 C2 C4": bx's connections on the client host with 1, 2
#            and 4 processes ("-": no host samples)
#   REGION   region bytes on every host sampled (cap $CAP MiB, default
#            1024; 0: the module's own, a quarter of the guests' 464 MiB)
#   PAIRBW   optional, "RC:WRITE:READ:PULL:PUSH ...": 1 MiB MB/s of
#            qperf and of bx in each paired round (phase bw)
mkrun() {	# DIR Q R BW INCAST CONNS REGION [PAIRBW]
	local d=$1 q=$2 r=$3 bw=$4 incast=$5 conns=$6 reg=$7 pairbw=${8:-}
	local w rd rc pl ps z k c c1 c2 c4 t us v qz rz
	local -a Q R
	mkdir -p "$d/run/g0" "$d/run/g1"
	read -r w rd rc pl ps <<< "$bw"
	read -r -a Q <<< "$q"
	read -r -a R <<< "$r"
	read -r c1 c2 c4 <<< "$conns"
	{
		rec bench_guest env "$(j kernel=test guests=2 cpus=2 mem_kb=475136 secs=3 incast_secs=20 incast_procs=2 incast_depth=4 incast_rate=0)" ""
		for v in $incast; do
			rec bench_guest phase "$(j phase="incast.${v%%:*}" state=start)" ""
		done
		[ "$conns" = - ] ||
			for k in bx tcp; do
				for z in 1 2 4; do
					rec bench_guest host "$(j tag="procs-$k-$z" guest=0)" \
						"$(j bx_conns=1 region_bytes="$reg" region_cap_mb="${CAP:-1024}" tcp_conns=$((z + 1)))"
				done
			done
	} > "$d/run/g0/result.log"
	{
		rec qperf result "$(j test=rc_bw size=1048576 pass=1)" "$(j mb_s="$rc")"
		rec qperf result "$(j test=rc_rdma_write_bw size=1048576 pass=1)" "$(j mb_s="$w")"
		rec qperf result "$(j test=rc_rdma_read_bw size=1048576 pass=1)" "$(j mb_s="$rd")"
		for k in pull push; do
			for c in bx tcp; do
				v=$pl; [ $k = push ] && v=$ps; [ $c = tcp ] && v=90
				cell sweep $c $k 1048576 1 1 0 100 "$v" 40000
				cell depth $c $k 1048576 8 1 0 100 "$v" 300000
			done
		done
		if [ "$q" != - ]; then
			for z in 0 1; do
				qz=${Q[$z]} rz=${R[$z]}
				for k in 1 2 3; do
					c="size=$((z ? 4096 : 64)) phase=rds round=$k"
					# shellcheck disable=SC2086
					rec qperf result "$(j test=rc_lat $c pass=1)" "$(j lat_us=500)"
					# shellcheck disable=SC2086
					rec bxperf result "$(j tag=pair transport=bx op=pull $c depth=1 procs=1 mix=0)" \
						"$(j mean_us="$(awk -v q="$qz" 'BEGIN { print 1000 * q }')" p99_us=2000)"
					# shellcheck disable=SC2086
					rec rds_pp result "$(j $c)" \
						"$(j mean_us="$(awk -v q="$qz" -v r="$rz" 'BEGIN { print 1000 * q / r }')" p99_us=2000)"
				done
			done
		fi
		k=1
		for v in $pairbw; do
			IFS=: read -r rc w rd pl ps <<< "$v"
			rec qperf result "$(j test=rc_bw size=1048576 pass=1 phase=bw round=$k)" "$(j mb_s="$rc")"
			rec qperf result "$(j test=rc_rdma_write_bw size=1048576 pass=1 phase=bw round=$k)" "$(j mb_s="$w")"
			rec qperf result "$(j test=rc_rdma_read_bw size=1048576 pass=1 phase=bw round=$k)" "$(j mb_s="$rd")"
			rec bxperf result "$(j tag=pairbw transport=bx op=pull size=1048576 depth=8 procs=1 mix=0 phase=bw round=$k set=on)" \
				"$(j n=20 errors=0 secs=2 mb_s="$pl")"
			rec bxperf result "$(j tag=pairbw transport=bx op=push size=1048576 depth=8 procs=1 mix=0 phase=bw round=$k set=on)" \
				"$(j n=20 errors=0 secs=2 mb_s="$ps")"
			k=$((k + 1))
		done
		for v in $incast; do
			k=${v%%:*} us=${v#*:}
			t=bx; [ "$k" = tcp ] && t=tcp
			if [ "$us" = - ]; then
				rec bxperf result "$(j tag="incast-$k" transport=$t op=pull size=1048576 depth=4 procs=2 mix=1)" \
					"$(j n=0 errors=5 secs=20 mb_s=0)"
				continue
			fi
			cell "incast-$k" $t pull 1048576 4 2 1 100 5 "$us"
			cell "incast-$k" $t push 1048576 4 2 1 100 5 "$us"
		done
		[ "$conns" = - ] ||
			for k in bx tcp; do
				for z in 1 2 4; do
					c=$c1; [ $z = 2 ] && c=$c2; [ $z = 4 ] && c=$c4
					rec bench_guest host "$(j tag="procs-$k-$z" guest=1)" \
						"$(j bx_conns="$c" region_bytes="$reg" region_cap_mb="${CAP:-1024}" tcp_conns=$((z + 1)))"
				done
			done
	} > "$d/run/g1/result.log"
	# bench.sh's samples of the host's load (DIR/run/host.jsonl)
	{
		jrec bench load "$(j when=start time=T0 nproc=2)" "$(j load1=1 load5=1 load15=1 qemu=2)"
		jrec bench load "$(j when=end time=T1 nproc=2)" "$(j load1=2.5 load5=1 load15=1 qemu=3)"
	} > "$d/run/host.jsonl"
}

# The target rows, by the start of their text, in the report's order.
TARGETS=("small-message latency" "throughput >= 0.9x" "the same against the verb"
	 "bx faster than RDS" "incast p99" "connections per host" "registered memory")
# Report run NAME and check each target's verdict: m (met), n (not met)
# or - (not measured), in the order of TARGETS.
expect() {	# NAME[:EXIT] V...
	local name=${1%%:*} rc=0 i v want
	case $1 in *:*) rc=${1#*:} ;; esac
	shift
	"$report" "$tmp/$name" > "$tmp/$name.out" 2>&1
	ok "$name: report exits $rc" [ $? -eq "$rc" ]
	for i in "${!TARGETS[@]}"; do
		v=$1; shift
		case $v in m) want="**met**" ;; n) want="**not met**" ;; *) want="not measured" ;; esac
		ok "$name: ${TARGETS[$i]}: $want" is "$tmp/$name/report.md" "${TARGETS[$i]}" "$want"
	done
}

# The PyTorch example's boot in DIR/torch (tools/ps/torch_job.sh): two
# workers of two steps per transport, torch RPC over uv's figures twice
# bx's (bx/uv 0.50), over ibv four times (bx/ibv 0.25), worker 1's 1.5
# times worker 0's (the table averages them); the servers' line the
# same way. HASHES "BX UV IBV" ("-": no params line; "u": IBV said it
# was unavailable); TRANSPORTS the ones that ran; STEPLOG 0: no
# per-step lines (a run without --step-log). Each line of the example
# is followed by its record, as python.sh prints them, unless RECORDS=0
# (embedding_ps.py without --records); the "run" records name the
# kernel. DIR/torch/torch.jsonl has torch_job.sh's record of the
# settings.
mktorch() {	# DIR HASHES [TRANSPORTS [STEPLOG]]
	local d=$1/torch hb hu hi tp w k f h
	read -r hb hu hi <<< "$2"
	mkdir -p "$d/g0" "$d/g1"
	jrec torch_job settings "$(j steps=2 workers=2 rows=1000 dim=8),\"transports\":[\"bx\",\"rpc-uv\",\"rpc-ibv\"],$(j fabric=lossless guests=3 cpus=1 mem_mb=1024)" "" \
		> "$d/torch.jsonl"
	{
		echo "bxrig: ready id 0 addr 192.0.2.1 flavor stock"
		for tp in ${3:-bx rpc-uv rpc-ibv}; do
			case $tp in
			bx) k=1 h=$hb ;;
			bx:overlap) k=0.5 h=$H2 ;;	# its own parameters
			rpc-uv) k=2 h=$hu ;;
			*) k=4 h=$hi ;;
			esac
			printf '# embedding_ps: run transport=%s: what %s runs on\r\n' "$tp" "$tp"
			trec run "$(j transport="$tp" "what=what $tp runs on" workers=2 servers=2 rows=1000 dim=8 steps=2 kernel=6.12.0-test)" ""
			if [ "$h" = u ]; then
				printf '# embedding_ps: transport=%s unavailable: no RDMA device here\r\n' "$tp"
				trec unavailable "$(j transport="$tp" "why=no RDMA device here")" ""
				continue
			fi
			echo "# live: embedding_ps: progress transport=$tp step 1 of 2"
			for w in 0 1; do
				f=$k; [ $w = 1 ] && f=$(awk -v k="$k" 'BEGIN { print 1.5 * k }')
				if [ "${4:-1}" != 0 ]; then
					printf '# embedding_ps: steps transport=%s worker=%s from=0 step_ms=%s,%s pull_us=%s,%s push_us=%s,%s\r\n' \
						"$tp" $w "$(x 10)" "$(x 20)" "$(x 1000)" "$(x 2000)" "$(x 500)" "$(x 600)"
					trec steps "$(j transport="$tp" worker=$w from=0)" \
						"\"step_ms\":[$(x 10),$(x 20)],\"pull_us\":[$(x 1000),$(x 2000)],\"push_us\":[$(x 500),$(x 600)]"
				fi
				printf '# embedding_ps: transport=%s worker=%s steps=2 step_ms_mean=%s step_ms_p50=%s step_ms_p99=%s pull_us_p50=%s pull_us_p99=%s push_us_p50=%s push_us_p99=%s cpu_ms_per_step=%s loss_first=2.0794 loss_last=2.0\r\n' \
					"$tp" $w "$(x 15)" "$(x 15)" "$(x 19.9)" "$(x 1500)" "$(x 1990)" "$(x 550)" "$(x 599)" "$(x 5)"
				trec result "$(j transport="$tp" worker=$w)" \
					"$(j steps=2 step_ms_mean="$(x 15)" step_ms_p50="$(x 15)" step_ms_p99="$(x 19.9)" pull_us_p50="$(x 1500)" pull_us_p99="$(x 1990)" push_us_p50="$(x 550)" push_us_p99="$(x 599)" cpu_ms_per_step="$(x 5)" loss_first=2.0794 loss_last=2.0)"
			done
			f=$k
			printf '# embedding_ps: transport=%s servers=2 server_cpu_ms_per_step=%s server_host_cpu_ms_per_step=%s keys_pulled=10,12 keys_pushed=10,12 rdma_pkts=%s tcp_segs=%s\r\n' \
				"$tp" "$(x 3)" "$(x 8)" "$([ "$tp" = rpc-uv ] && echo 0 || echo 300)" "$([ "$tp" = rpc-uv ] && echo 500 || echo 7)"
			trec servers "$(j transport="$tp" servers=2)" \
				"$(j server_cpu_ms_per_step="$(x 3)" server_host_cpu_ms_per_step="$(x 8)"),\"keys_pulled\":[10,12],\"keys_pushed\":[10,12],$(j rdma_pkts="$([ "$tp" = rpc-uv ] && echo 0 || echo 300)" tcp_segs="$([ "$tp" = rpc-uv ] && echo 500 || echo 7)")"
			[ "$h" = - ] || {
				echo "# embedding_ps: transport=$tp params sha256 $h"
				trec params "$(j transport="$tp" sha256="$h")" ""
			}
		done
		echo "ok 1 torch"
	} > "$d/g0/result.log"
	echo "bxrig: ready id 1 addr 192.0.2.2 flavor stock" > "$d/g1/result.log"
}
# trec KIND CELL METRICS: the example's record of a line, as python.sh
# passes it on (a KTAP diagnostic, "\r\n" from the serial console).
trec() {
	[ "${RECORDS:-1}" = 0 ] || printf '# %s\r\n' "$(rec embedding_ps "$@")"
}
x() { awk -v f="$f" -v v="$1" 'BEGIN { printf "%.3f", f * v }'; }	# V: f x V
H1=$(printf 'a%.0s' {1..64}) H2=$(printf 'b%.0s' {1..64})
row() {	# REPORT ROW-ERE
	grep -Eq "^[|] $2 [|]$" "$1" || { grep '^|' "$1"; return 1; }
}

# Phase pslite in run DIR: pslite_bench's lines (bx) on guest 1 with 4 B
# pushes at RATE1 req/s one at a time and RATE16 with 16 outstanding,
# every other cell at 100 req/s (p50 2 ms, p99 4 ms), and the TCP
# baseline's push and pull cells (bxperf, 200 req/s, 1 ms); DROP: a
# cell "OP/Q/SIZE" left out.
mkpslite() {	# DIR RATE1 RATE16 [DROP]
	local d=$1 op q z rate
	{
		rec bench_guest phase "$(j phase=pslite state=start)" ""
		rec bench_guest env "$(j pslite_secs=2 pslite_sizes=4,4096,65536,1048576)" ""
	} >> "$d/run/g0/result.log"
	for op in push pull pushpull; do
		for q in 1 16 64; do
			for z in 4 4096 65536 1048576; do
				[ "$op/$q/$z" = "${4:-}" ] && continue
				rate=100
				[ "$op/$q/$z" = push/1/4 ] && rate=$2
				[ "$op/$q/$z" = push/16/4 ] && rate=$3
				rec pslite_bench result "$(j op=$op depth=$q size=$z)" \
					"$(j n=$((rate * 2)) ops_s="$rate" p50_us=2000 p99_us=4000 errors=0)"
				[ $op = pushpull ] || cell pslite-tcp tcp $op $z $q 1 0 4000 1 1000
			done
		done
	done >> "$d/run/g1/result.log"
}

echo "TAP version 13"

# The incast's four settings that every run has, the window off at 1 s.
I4="off:1000000 on:1000000 small:1000000 tcp:1000000"

# Every target met, just: bx/raw 1.19, bx/RDS 0.99, every bandwidth
# ratio 0.9 (27 of 30), the incast 0.47 times the window off, one
# connection whatever the processes, 64 MiB registered.
mkrun "$tmp/good" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
expect good m m m m m m m
first() { [ "$(awk '/^## / { print; exit }' "$1")" = "## The targets, in this run" ]; }
ok "good: the targets come before the first section" first "$tmp/good/report.md"
ok "good: the incast names its best setting" grep -Eq "best mid 0[.](46|47|48) of off" "$tmp/good/report.md"
ok "good: without phase bw the throughput targets take the sweep's" \
	[ "$(grep -c "best of d1, d8)" "$tmp/good/report.md")" -eq 2 ]
ok "good: the host's load from bench.sh's records" \
	grep -q "^The host during the run: host with 2 CPUs, T0 to T1: 1-min load average 1[.]8 mean, 2[.]5 max; up to 3 qemu processes" "$tmp/good/report.md"

# The lossless switch's pauses per incast setting (bench.sh -f
# lossless: switch-lib.sh's records in DIR/run/switch.jsonl), in the
# incast's table.
mkrun "$tmp/switch" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
{
	jrec bxswitch result "$(j phase=incast.off)" "$(j frames=100 bytes=1000 pauses=7 paused_ms=1500)"
	jrec bxswitch result "$(j phase=incast.on)" "$(j frames=100 bytes=1000 pauses=0 paused_ms=0)"
} > "$tmp/switch/run/switch.jsonl"
"$report" "$tmp/switch" > "$tmp/switch.out" 2>&1
ok "switch: report exits 0" [ $? -eq 0 ]
ok "switch: the incast's table has the pauses" grep -q '^| setting | .* | pauses | paused s |$' "$tmp/switch/report.md"
ok "switch: a setting's pauses and time paused" grep -Eq '^[|] bx, flow_control=N [|] .* [|] 7 [|] 1[.]5 [|]$' "$tmp/switch/report.md"
ok "switch: a setting without a record has none" grep -Eq '^[|] tcp [|] .* [|] [0-9]+ [|]  [|]  [|]$' "$tmp/switch/report.md"
ok "good: no switch, no pauses" sh -c "! grep -q 'paused s' '$tmp/good/report.md'"

# A record of a kind whose fields the report checks (bench.sh's and the
# host programs') without one of them, or with one of another type, is
# a failure of the run, named in the report, not a figure left out.
broken() {	# NAME ERE...: run NAME's report exits 1 and names each failure
	local name=$1 e
	shift
	"$report" "$tmp/$name" > "$tmp/$name.out" 2>&1
	ok "$name: report exits 1" [ $? -eq 1 ]
	for e in "$@"; do
		ok "$name: the failure: $e" grep -Eq "^    $e" "$tmp/$name/report.md"
	done
}
mkrun "$tmp/badload" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
{
	jrec bench load "$(j when=during time=T2 nproc=2)" "$(j load5=1 load15=1 qemu=2)"
	jrec bench load "$(j when=during time=T3 nproc=2)" "$(j load1=x load5=1 load15=1 qemu=2)"
} >> "$tmp/badload/run/host.jsonl"
broken badload ".*/host[.]jsonl:3: a record of bench load without metrics[.]load1: " \
	".*/host[.]jsonl:4: a record of bench load whose metrics[.]load1 is not a number: "
mkrun "$tmp/badswitch" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
jrec bxswitch result "$(j phase=incast.off)" "$(j frames=100 bytes=1000 pauses=7)" > "$tmp/badswitch/run/switch.jsonl"
broken badswitch ".*/switch[.]jsonl:1: a record of bxswitch result without metrics[.]paused_ms: "

# Every target missed, just: 1.21 and 1.01, a push at 0.89 of READ and
# of rc_bw, the incast 0.53, a connection per process, 1 MiB over
# the cap.
mkrun "$tmp/bad" "1.21 1.21" "1.01 1.01" "30 30 30 30 26.8" "$I4 mid:530000" "1 2 4" 1074790400
expect bad n n n n n n n

# region_cap_mb 0 is the module's own cap, a quarter of the RAM (116 of
# the guests' 464 MiB): 64 MiB is within it, 128 MiB is not.
CAP=0 mkrun "$tmp/autocap" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
expect autocap m m m m m m m
ok "autocap: the cap is a quarter of the RAM, said so" \
	grep -q "cap 116 MiB (region_cap_mb 0: a quarter of the guest's RAM)" "$tmp/autocap/report.md"
CAP=0 mkrun "$tmp/autocapbad" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 134217728
expect autocapbad m m m m m m n

# One size in, one out: not met, whichever of the two misses; a push at
# 0.93 of rc_bw but 0.87 of READ; no connection at all.
mkrun "$tmp/big" "1.1 1.3" "1.1 0.9" "30 30 28 30 26" "$I4 mid:400000" "1 1 1" 0
expect big n m n n m m m
mkrun "$tmp/small" "1.3 1.1" "0.9 1.1" "30 30 30 26 30" "$I4 mid:400000" "0 0 0" 0
expect small n n n n m n m

# A failed setting (no latencies; the report exits 1) is not the
# incast's best; a setting
# with a shorter ACK timeout is set against the window off with the
# same timeout: mid-a14 0.45 times off but 0.56 times off-a14.
mkrun "$tmp/acks" "1.1 1.1" "0.9 0.9" "30 30 30 30 30" \
	"$I4 mid:700000 small-a14:- off-a14:800000 mid-a14:450000" "1 1 1" 0
expect acks:1 m m m m n m m
ok "acks: mid-a14 against off-a14" grep -Eq "best mid-a14 0[.](55|56|57) of off-a14" "$tmp/acks/report.md"

# Throughput in paired rounds (phase bw) decides over the sweep's. Each
# round's rc_bw, WRITE and READ differ (READ 1.5 times WRITE), so that a
# ratio taken against the wrong one changes a verdict, and the median
# round is not the last.
# The sweep misses (0.67 of every qperf bandwidth); the rounds meet:
# pull / rc_bw 0.92, 0.95, 0.85 (median 0.92), pull / WRITE 1.15 and
# up (against READ it would be 0.71 to 0.79), push / READ 0.92, 0.95,
# 0.85, push / rc_bw 1.02 and up.
P3="30:24:36:27.6:33.12 10:8:12:9.5:11.4 20:16:24:17:20.4"
mkrun "$tmp/pairs" "1.1 1.1" "0.9 0.9" "30 30 30 20 20" "$I4 mid:400000" "1 1 1" 0 "$P3"
# A setting of BENCH_BW_SETS in the same rounds gets a row of its own
# and leaves the verdicts to the defaults: its pulls are half theirs and
# its pushes 1.0, 0.5 and 0.85 of READ, which would miss both targets.
for v in 1:13.8:36 2:4.75:6 3:8.5:20.4; do
	IFS=: read -r k pl ps <<< "$v"
	for z in pull:$pl push:$ps; do
		rec bxperf result "$(j tag=pairbw transport=bx op="${z%%:*}" size=1048576 depth=8 procs=1 mix=0 phase=bw round="$k" set=on-m2 rd_max=2 rd_depth=16 piece_kb=256)" \
			"$(j n=20 errors=0 secs=2 mb_s="${z#*:}")"
	done
done >> "$tmp/pairs/run/g1/result.log"
# Their 64 B and 4 KiB latency beside the defaults' (BENCH_BASE's A/B):
# ratios 1.10, 0.90, 1.00 at 64 B (median 1.00), 1.20 at 4 KiB each time.
for v in 1:110:100 2:90:100 3:100:100; do
	IFS=: read -r k a d <<< "$v"
	for sd in on-m2:$a on:$d; do
		c="tag=pairlat transport=bx op=pull depth=1 procs=1 mix=0 phase=bw round=$k set=${sd%%:*}"
		# shellcheck disable=SC2086
		rec bxperf result "$(j $c size=64)" \
			"$(j n=20 errors=0 secs=2 mean_us="${sd#*:}" p99_us=$((${sd#*:} * 2)))"
		l=$((${sd#*:} * 2))
		[ "${sd%%:*}" = on ] || l=$((l * 12 / 10))
		# shellcheck disable=SC2086
		rec bxperf result "$(j $c size=4096)" "$(j n=20 errors=0 secs=2 mean_us=$l p99_us=$l)"
	done
done >> "$tmp/pairs/run/g1/result.log"
expect pairs m m m m m m m
ok "pairs: a setting's small-message latency against the defaults' in the same rounds" \
	grep -Eq '^[|] on-m2 [|] pull [|] 3 [|] 1[.]00 [|] 1[.]00 [|] 1[.]20 [|] 1[.]20 [|] 0[.]90-1[.]10 [|]$' "$tmp/pairs/report.md"
ok "pairs: a setting of BENCH_BW_SETS has its medians against the same rounds" \
	grep -Eq '^[|] on-m2 [|] 2 [|] 16 [|] 256 [|] 3 [|] [0-9.]+ [|] 0[.]85 [|] 0[.]50 [|] 1[.]00 [|] 0[.]53-1[.]09 [|]$' "$tmp/pairs/report.md"
ok "pairs: the throughput target says it took the rounds' medians" \
	grep -q "against qperf rc_bw (medians of the paired rounds, depth 8) | pull 0.92, push 1.10 |" "$tmp/pairs/report.md"
# BENCH_BASE's module as setting "base" in the same rounds: this tree's
# over it in the documentation's groups base-bw and base-lat. Pulls
# 1.00, 0.95, 1.06 (median 1.00), pushes 1.20, 1.00, 0.85; 64 B pull
# latency 0.80, 1.00, 1.25 of base's, 4 KiB 0.50 each time; the A/A
# control's 64 B pulls in the same rounds, 0.91 each time.
cp -r "$tmp/pairs" "$tmp/pairsb"
for v in 1:27.6:27.6:125 2:10:11.4:100 3:16:24:80; do
	IFS=: read -r k pl ps m <<< "$v"
	for z in pull:$pl push:$ps; do
		rec bxperf result "$(j tag=pairbw transport=bx op="${z%%:*}" size=1048576 depth=8 procs=1 mix=0 phase=bw round="$k" set=base rd_max=1 rd_depth=16 piece_kb=256)" \
			"$(j n=20 errors=0 secs=2 mb_s="${z#*:}")"
	done
	c="tag=pairlat transport=bx op=pull depth=1 procs=1 mix=0 phase=bw round=$k set=base"
	# shellcheck disable=SC2086
	rec bxperf result "$(j $c size=64)" "$(j n=20 errors=0 secs=2 mean_us="$m" p99_us=$((m * 2)))"
	# shellcheck disable=SC2086
	rec bxperf result "$(j $c size=4096)" "$(j n=20 errors=0 secs=2 mean_us=400 p99_us=400)"
	# The A/A control: 64 B pulls at 110 (the defaults' 0.91 of it).
	# shellcheck disable=SC2086
	rec bxperf result "$(j ${c%set=base}set=on-p256 size=64)" "$(j n=20 errors=0 secs=2 mean_us=110 p99_us=220)"
done >> "$tmp/pairsb/run/g1/result.log"
printf 'Figures\n\n.. bench-summary-begin: matrix\n.. bench-summary-end: matrix\n' > "$tmp/base.rst"
"$report" "$tmp/pairsb" --update-doc "$tmp/base.rst" > "$tmp/pairsb.out" 2>&1
ok "base: report exits 0" [ $? -eq 0 ]
ok "base: 1 MiB pull and push, this tree over BENCH_BASE's, medians and ranges" \
	sh -c "grep -Eq '^1 MiB pull, depth 8, MB/s +1[.]00 +0[.]95-1[.]06 +3 +.-$' '$tmp/base.rst' &&
	       grep -Eq '^1 MiB push, depth 8, MB/s +1[.]00 +0[.]85-1[.]20 +3 +.-$' '$tmp/base.rst'"
ok "base: small-message latency, this tree over BENCH_BASE's, and the control's" \
	sh -c "grep -Eq '^pull latency, 64 B, mean +1[.]00 +0[.]80-1[.]25 +3 +0[.]91 [(]0[.]91-0[.]91[)]$' '$tmp/base.rst' &&
	       grep -Eq '^pull latency, 4 KiB, p99 +0[.]50 +0[.]50-0[.]50 +3 +.-$' '$tmp/base.rst'"
ok "base: each in a group of its own" \
	sh -c "grep -q '^.. bench-summary-begin: base-bw$' '$tmp/base.rst' &&
	       grep -q '^.. bench-summary-begin: base-lat$' '$tmp/base.rst'"
# Phase bw alone (its latency cells only, as BENCH_LAT_ONLY runs it):
# the base groups, and the matrix group left as it was.
mkdir -p "$tmp/bwonly/run/g0" "$tmp/bwonly/run/g1"
grep 'bench_guest env' "$tmp/pairsb/run/g0/result.log" > "$tmp/bwonly/run/g0/result.log"
grep '"tag":"pairlat"' "$tmp/pairsb/run/g1/result.log" > "$tmp/bwonly/run/g1/result.log"
printf 'Figures\n\n.. bench-summary-begin: matrix\nAs it was.\n.. bench-summary-end: matrix\n' > "$tmp/bwonly.rst"
"$report" "$tmp/bwonly" --update-doc "$tmp/bwonly.rst" > "$tmp/bwonly.out" 2>&1
ok "bwonly: phase bw alone leaves the matrix group as it was" \
	sh -c "grep -q '^As it was[.]$' '$tmp/bwonly.rst' &&
	       grep -q '^pull latency, 64 B, mean ' '$tmp/bwonly.rst'"
# The sweep meets; a push in the rounds 0.88, 0.95, 0.85 of READ
# (median 0.88) but 1.02 and more of rc_bw.
P3="10:10:12:9.5:10.56 20:20:24:19:22.8 30:30:36:28.5:30.6"
mkrun "$tmp/pairs2" "1.1 1.1" "0.9 0.9" "30 30 30 30 30" "$I4 mid:400000" "1 1 1" 0 "$P3"
expect pairs2 m m n m m m m
# Four rounds: the median is the mean of the middle two, 0.86 and 0.95
# (0.905), met; either alone would decide otherwise for one of them.
P3="10:10:10:8:8 10:10:10:9.8:9.8 10:10:10:8.6:8.6 10:10:10:9.5:9.5"
mkrun "$tmp/pairs4" "1.1 1.1" "0.9 0.9" "30 30 30 20 20" "$I4 mid:400000" "1 1 1" 0 "$P3"
expect pairs4 m m m m m m m
# Rounds where qperf measured nothing leave the sweep's figures (met).
P3="0:0:0:9:9 0:0:0:9:9 0:0:0:9:9"
mkrun "$tmp/pairsq" "1.1 1.1" "0.9 0.9" "30 30 30 30 30" "$I4 mid:400000" "1 1 1" 0 "$P3"
expect pairsq m m m m m m m
ok "pairsq: the throughput targets say they took the sweep's" \
	grep -q "rc_bw (best of d1, d8) | pull 1.00, push 1.00 |.*RDMA READ; best of d1, d8) | pull 1.00, push 1.00 |" \
	<(tr -d '\n' < "$tmp/pairsq/report.md")

# No paired rounds and no host samples: not measured.
mkrun "$tmp/bare" - - "30 30 30 30 28" "$I4 mid:400000" - 0
expect bare - m m - m - -

# The incast phase ran but lost its first settings' cells: missing, a
# failed run. Without the incast phase (bench.sh -P bw) nothing is.
mkrun "$tmp/lost" - - "30 30 30 30 28" "mid:400000" - 0
ok "lost: report exits 1" sh -c "! tools/bench/report.sh '$tmp/lost' > /dev/null 2>&1"
ok "lost: the incast cells are missing" \
	grep -q '^[*][*]Missing cells:[*][*] incast/off incast/on incast/small incast/tcp$' "$tmp/lost/report.md"
mkrun "$tmp/noincast" - - "30 30 30 30 28" "" - 0
ok "noincast: report exits 0" tools/bench/report.sh "$tmp/noincast"

# --update-doc FILE: the summary of run "good" between the marker lines
# of its group ("matrix") of a reStructuredText document, the rest of it
# as it was; without markers, an error and the document untouched.
doc=$tmp/doc.rst
{
	printf 'Performance\n===========\n\nBefore the summary.\n\n'
	printf '.. bench-summary-begin: matrix\n\nAn old summary.\n\n.. bench-summary-end: matrix\n\nAfter it.\n'
} > "$doc"
"$report" "$tmp/good" --update-doc "$doc" > "$tmp/doc.out" 2>&1
ok "doc: report exits 0" [ $? -eq 0 ]
ok "doc: the old summary is gone" sh -c "! grep -q 'An old summary' '$doc'"
ok "doc: the summary has the targets and their verdicts" \
	grep -Eq '^small-message latency, bx pull / raw verbs RTT .* 64 B 1[.]19, 4 KiB 1[.]19 +met$' "$doc"
ok "doc: the summary says what it ran on" grep -q '^Measured on guest kernel test: 2 guests' "$doc"
around() {	# FILE: its lines outside the summary, the markers included
	sed -e '/^[.][.] bench-summary-begin: matrix$/,/^[.][.] bench-summary-end: matrix$/{//!d}' "$1"
}
ok "doc: the text around the summary is unchanged" \
	[ "$(around "$doc")" = "$(printf 'Performance\n===========\n\nBefore the summary.\n\n.. bench-summary-begin: matrix\n.. bench-summary-end: matrix\n\nAfter it.')" ]
if command -v rst2html > /dev/null; then
	ok "doc: valid reStructuredText" sh -c "rst2html --halt=warning '$doc' > /dev/null"
else
	skip "doc: valid reStructuredText" "no rst2html (python3-docutils)"
fi
cp "$doc" "$tmp/doc1.rst"
"$report" "$tmp/good" --update-doc "$doc" > /dev/null 2>&1
ok "doc: a second update changes nothing" cmp -s "$doc" "$tmp/doc1.rst"
ok "doc: a run without BENCH_BASE writes no base group" \
	sh -c "! grep -q 'base-' '$doc'"
printf 'No markers here.\n' > "$tmp/nomark.rst"
"$report" "$tmp/good" --update-doc "$tmp/nomark.rst" > "$tmp/nomark.out" 2>&1
ok "nomark: report exits 2" [ $? -eq 2 ]
ok "nomark: the error names the markers" grep -q 'bench-summary-begin' "$tmp/nomark.out"
ok "nomark: the document is untouched" [ "$(cat "$tmp/nomark.rst")" = "No markers here." ]
printf '.. bench-summary-end: matrix\n.. bench-summary-begin: matrix\n' > "$tmp/swapped.rst"
ok "swapped: the markers in the wrong order are refused" \
	sh -c "! '$report' '$tmp/good' --update-doc '$tmp/swapped.rst' > /dev/null 2>&1"

# Phase pslite: the table of ps-lite over bx against bxperf over TCP,
# and the pipelining cell's verdict (16 outstanding >= 3x one at a time,
# 4 B pushes): 350/100 met, 290/100 not met, neither fails the report.
PSROW='[|] push [|] 16 [|] 4 B [|] 350 [|] 2[.]00 [|] 4[.]00 [|] 200 [|] 1[.]00 [|] 1[.]00 [|] 1[.]75'
mkrun "$tmp/ps" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
mkpslite "$tmp/ps" 100 350
expect ps m m m m m m m
ok "ps: pipelining met" is "$tmp/ps/report.md" "ps-lite pipelining" "**met**"
ok "ps: the table row, bx against TCP" grep -Eq "^$PSROW [|]\$" "$tmp/ps/report.md"
ok "ps: push-pull has no TCP counterpart" \
	grep -Eq '^[|] pushpull [|] 64 [|] 1 MiB [|] 100 [|] 2[.]00 [|] 4[.]00 [|] no counterpart [|] - [|] - [|] - [|]$' "$tmp/ps/report.md"
ok "ps: says what the TCP side runs" grep -q 'TCP (bxperf)\*\*: `bxperf -T tcp`, .*not ps-lite' "$tmp/ps/report.md"
ok "ps: the ratios of every op" grep -q '^Pipelining, 4 B .* push 350 / 100 = 3[.]50; pull 100 / 100 = 1[.]00;' "$tmp/ps/report.md"
cp "$tmp/doc1.rst" "$tmp/docps.rst"
"$report" "$tmp/ps" --update-doc "$tmp/docps.rst" > /dev/null 2>&1
ok "ps: the summary has the pipelining verdict" \
	grep -Eq '^ps-lite 4 B pushes, 16 outstanding / 1 \(target >= 3\) +3[.]50 \(350 / 100 req/s\) +met$' "$tmp/docps.rst"
mkrun "$tmp/psbad" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
mkpslite "$tmp/psbad" 100 290
"$report" "$tmp/psbad" > /dev/null 2>&1
ok "psbad: a missed pipelining target is a verdict, not a failure" [ $? -eq 0 ]
ok "psbad: pipelining not met" is "$tmp/psbad/report.md" "ps-lite pipelining" "**not met**"
mkrun "$tmp/pslost" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
mkpslite "$tmp/pslost" 100 350 pull/64/65536
ok "pslost: a missing cell fails the report" sh -c "! tools/bench/report.sh '$tmp/pslost' > /dev/null 2>&1"
ok "pslost: named" grep -q '^[*][*]Missing cells:[*][*] pslite/bx/pull/q64/65536 pslite/tcp/pull/q64/65536$' "$tmp/pslost/report.md"
mkrun "$tmp/psskip" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
{
	rec bench_guest phase "$(j phase=pslite state=start)" ""
	rec bench_guest skip "$(j phase=pslite guests=2 needs=3)" ""
} >> "$tmp/psskip/run/g0/result.log"
ok "psskip: -n 2 skips the phase: report exits 0" tools/bench/report.sh "$tmp/psskip"
ok "psskip: says why" grep -q '^Phase pslite did not run: 2 guests, it needs 3' "$tmp/psskip/report.md"
ok "psskip: pipelining not measured" is "$tmp/psskip/report.md" "ps-lite pipelining" "not measured"

# The PyTorch example alone (bench.sh -P torch): its table, its data
# and plot; bx and torch RPC over uv must have run, over ibv too or say
# why not, and all that ran reached one parameter set.
mktorch "$tmp/torch" "$H1 $H1 $H1"
# bench_convert.py's output: its lines, each followed by its record.
convert() {	# CASE MS MEMCPY_MS RATIO OVERHEAD_US
	echo "convert: case=$1 values=1600000 bytes=6400000 ms=$2 memcpy_ms=$3 ratio=$4 overhead_us=$5"
	rec bench_convert result "$(j case="$1" values=1600000 size=6400000 reps=30)" \
		"$(j ms="$2" memcpy_ms="$3" ratio="$4" overhead_us="$5")"
}
{
	convert memcpy 0.200 0.200 1.00 0
	convert push_tensor_int64_keys 0.300 0.200 1.50 100
} > "$tmp/torch/convert.txt"
ok "torch: report exits 0 without DIR/run" tools/bench/report.sh "$tmp/torch"
ok "torch: the conversions' table" row "$tmp/torch/report.md" "push_tensor_int64_keys [|] 0[.]300 [|] 0[.]200 [|] 1[.]50 [|] 100"
ok "torch: the conversions' verdict" grep -q "^A tensor's push against 2 memcpys: [*][*]met[*][*]$" "$tmp/torch/report.md"
ok "torch: the memcpy's row, figures as bench_convert.py prints them" \
	row "$tmp/torch/report.md" "memcpy [|] 0[.]200 [|] 0[.]200 [|] 1[.]00 [|] 0"
mktorch "$tmp/badconv" "$H1 $H1 $H1"
{
	convert memcpy 0.200 0.200 1.00 0
	rec bench_convert result "$(j case=push_tensor_int64_keys values=1600000 size=6400000 reps=30)" \
		"$(j ms=0.3 memcpy_ms=0.2 ratio=1.5x overhead_us=100)"
} > "$tmp/badconv/convert.txt"
broken badconv ".*/convert[.]txt:3: a record of bench_convert result whose metrics[.]ratio is not a number: "
ok "torch: step time mean, averaged over the workers, and the ratios" \
	row "$tmp/torch/report.md" "step time, mean, ms [|] 18[.]8 [|] 37[.]5 [|] 75[.]0 [|] 0[.]50 [|] 0[.]25"
ok "torch: pull p99, µs shown in ms" \
	row "$tmp/torch/report.md" "pull, p99, ms [|] 2[.]49 [|] 4[.]97 [|] 9[.]95 [|] 0[.]50 [|] 0[.]25"
ok "torch: worker CPU per step" \
	row "$tmp/torch/report.md" "worker CPU per step, ms [|] 6[.]25 [|] 12[.]5 [|] 25[.]0 [|] 0[.]50 [|] 0[.]25"
ok "torch: the servers' CPU, apart from the workers'" \
	row "$tmp/torch/report.md" "server processes' CPU per step, ms [|] 3[.]00 [|] 6[.]00 [|] 12[.]0 [|] 0[.]50 [|] 0[.]25"
ok "torch: what the server hosts sent" \
	row "$tmp/torch/report.md" "RDMA packets from the server hosts [|] 300 [|] 0 [|] 300 [|]  [|] "
ok "torch: the keys each server served" \
	row "$tmp/torch/report.md" "keys served, per server [|] 10 / 12 [|] 10 / 12 [|] 10 / 12 [|]  [|] "
ok "torch: the parameters identical" \
	row "$tmp/torch/report.md" "final parameters [(]sha256[)] [|] a{16} [|] a{16} [|] a{16} [|] identical [|] "
ok "torch: says what ran" grep -q "1000 x 8 embedding; 2 worker process(es) x 2 steps per transport.*lossless switch; guest kernel 6.12.0-test" "$tmp/torch/report.md"
ok "torch: says what each transport runs on" grep -q "^- torch RPC (ibv, RDMA): what rpc-ibv runs on$" "$tmp/torch/report.md"
ok "torch: every step of every worker in the CDF" \
	[ "$(wc -l < "$tmp/torch/data/torch_step_ms_bx.dat")" -eq 4 ]
ok "torch: the CDF sorted, ending at 1" \
	[ "$(tail -1 "$tmp/torch/data/torch_pull_us_rpc-uv.dat")" = "6000 1" ]
ok "torch: worker 0's steps in order" \
	[ "$(cat "$tmp/torch/data/torch_series_rpc-ibv.dat")" = "$(printf '0 40\n1 80')" ]
if command -v gnuplot > /dev/null; then
	ok "torch: the plot" [ -s "$tmp/torch/torch_steps.png" ]
else
	skip "torch: the plot" "no gnuplot"
fi
# bx:overlap beside them: its own table against bx in lock-step, its
# parameters (others) not compared.
mktorch "$tmp/torchov" "$H1 $H1 $H1" "bx bx:overlap rpc-uv rpc-ibv"
ok "torchov: report exits 0" tools/bench/report.sh "$tmp/torchov"
ok "torchov: overlap against lock-step" \
	row "$tmp/torchov/report.md" "step time, mean, ms [|] 18[.]8 [|] 9[.]38 [|] 0[.]50"
ok "torchov: the verdict" grep -q "^Overlap improves the mean step time: [*][*]yes[*][*]$" "$tmp/torchov/report.md"
ok "torchov: the main table's parameters still identical" \
	row "$tmp/torchov/report.md" "final parameters [(]sha256[)] [|] a{16} [|] a{16} [|] a{16} [|] identical [|] "
ok "torch: no overlap, no pipelining section" sh -c "! grep -q Pipelining '$tmp/torch/report.md'"

mktorch "$tmp/torchdiff" "$H1 $H1 $H2"
ok "torchdiff: report exits 1" sh -c "! tools/bench/report.sh '$tmp/torchdiff' > /dev/null 2>&1"
ok "torchdiff: the parameters DIFFERENT" \
	row "$tmp/torchdiff/report.md" "final parameters [(]sha256[)] [|] a{16} [|] a{16} [|] b{16} [|] DIFFERENT [|] "
mktorch "$tmp/torchibv" "$H1 $H1 u"
ok "torchibv: ibv unavailable, with why: report exits 0" tools/bench/report.sh "$tmp/torchibv"
ok "torchibv: the column says unavailable" \
	row "$tmp/torchibv/report.md" "step time, mean, ms [|] 18[.]8 [|] 37[.]5 [|] unavailable [|] 0[.]50 [|] -"
ok "torchibv: and why" grep -q '^- torch RPC (ibv, RDMA): [*][*]unavailable[*][*]: no RDMA device here$' "$tmp/torchibv/report.md"
mktorch "$tmp/torchhalf" "$H1 - -" "bx"
ok "torchhalf: report exits 1" sh -c "! tools/bench/report.sh '$tmp/torchhalf' > /dev/null 2>&1"
ok "torchhalf: torch RPC named missing" \
	grep -q '^[*][*]No results from:[*][*] torch RPC (uv, TCP), torch RPC (ibv, RDMA)$' "$tmp/torchhalf/report.md"
mktorch "$tmp/torchold" "$H1 $H1 $H1" "bx rpc-uv rpc-ibv" 0
ok "torchold: without per-step lines, the table and no plot" \
	sh -c "tools/bench/report.sh '$tmp/torchold' > /dev/null 2>&1 && grep -q 'No per-step data' '$tmp/torchold/report.md' && [ ! -e '$tmp/torchold/torch_steps.png' ]"
# The example's lines without their records (a run before --records)
# are not read: no results from any transport.
RECORDS=0 mktorch "$tmp/torchlines" "$H1 $H1 $H1"
ok "torchlines: the lines alone: report exits 1" sh -c "! tools/bench/report.sh '$tmp/torchlines' > /dev/null 2>&1"
ok "torchlines: no results from any transport" \
	grep -q '^[*][*]No results from:[*][*] bx, torch RPC (uv, TCP), torch RPC (ibv, RDMA)$' "$tmp/torchlines/report.md"
# A record of the example's without a field, or with one of another
# type, is a failure named in the section.
mktorch "$tmp/torchbad" "$H1 $H1 $H1"
{
	trec result "$(j transport=bx worker=2)" "$(j steps=2)"
	trec steps "$(j transport=bx worker=2 from=0)" "$(j step_ms=1 pull_us=1 push_us=1)"
} >> "$tmp/torchbad/torch/g0/result.log"
ok "torchbad: report exits 1" sh -c "! tools/bench/report.sh '$tmp/torchbad' > /dev/null 2>&1"
ok "torchbad: a record without a field, named" \
	grep -Eq '^    torch/g0:[0-9]+: a record of embedding_ps result without metrics[.]step_ms_mean: ' "$tmp/torchbad/report.md"
ok "torchbad: a field of another type, named" \
	grep -Eq '^    torch/g0:[0-9]+: a record of embedding_ps steps whose metrics[.]step_ms is not a list of numbers: ' "$tmp/torchbad/report.md"
ok "torchbad: the records that are whole still count" \
	row "$tmp/torchbad/report.md" "step time, mean, ms [|] 18[.]8 [|] 37[.]5 [|] 75[.]0 [|] 0[.]50 [|] 0[.]25"
# torch_job.sh's settings with a number as a string, the example's
# "run" record without the kernel (before it had one): failures, named.
mktorch "$tmp/torchbadset" "$H1 $H1 $H1"
jrec torch_job settings "$(j steps=2 workers=2 rows=1000 dim=8),\"transports\":[\"bx\"],$(j fabric=lossless guests=3 cpus=1),\"mem_mb\":\"1024\"" "" \
	> "$tmp/torchbadset/torch/torch.jsonl"
trec run "$(j transport=bx "what=what bx runs on" workers=2 servers=2 rows=1000 dim=8 steps=2)" "" \
	>> "$tmp/torchbadset/torch/g0/result.log"
ok "torchbadset: report exits 1" sh -c "! tools/bench/report.sh '$tmp/torchbadset' > /dev/null 2>&1"
ok "torchbadset: the settings' field of another type, named" \
	grep -Eq '^    torch/torch[.]jsonl:1: a record of torch_job settings whose cell[.]mem_mb is not a number: ' "$tmp/torchbadset/report.md"
ok "torchbadset: a run record without the kernel, named" \
	grep -Eq '^    torch/g0:[0-9]+: a record of embedding_ps run without cell[.]kernel: ' "$tmp/torchbadset/report.md"
ok "torchbadset: without settings, what ran from the records" \
	grep -q "2 worker process(es) x ? steps per transport on guest 0, the two servers on guests 1 and 2; guest kernel 6.12.0-test" "$tmp/torchbadset/report.md"
ok "good: no PyTorch section without DIR/torch" sh -c "! grep -q 'PyTorch' '$tmp/good/report.md'"
# With the matrix: both, the targets first; the summary has both tables.
mkrun "$tmp/both" "1.19 1.19" "0.99 0.99" "30 30 30 27 27" "$I4 mid:470000" "1 1 1" 67108864
mktorch "$tmp/both" "$H1 $H1 $H1"
ok "both: report exits 0" tools/bench/report.sh "$tmp/both"
ok "both: the targets first" first "$tmp/both/report.md"
ok "both: the PyTorch section" grep -q '^## The PyTorch example: bx against torch RPC' "$tmp/both/report.md"
cp "$tmp/doc1.rst" "$tmp/doc2.rst"
"$report" "$tmp/both" --update-doc "$tmp/doc2.rst" > /dev/null 2>&1
ok "both: the summary has the PyTorch table" \
	grep -Eq '^step time, p99, ms +24[.]9 +49[.]8 +99[.]5 +0[.]50 +0[.]25$' "$tmp/doc2.rst"
ok "both: the summary says what the PyTorch example ran on" \
	grep -q '^The PyTorch example: 1000 x 8 embedding; 2 worker process(es) x 2 steps' "$tmp/doc2.rst"
if command -v rst2html > /dev/null; then
	ok "both: valid reStructuredText" sh -c "rst2html --halt=warning '$tmp/doc2.rst' > /dev/null"
else
	skip "both: valid reStructuredText" "no rst2html (python3-docutils)"
fi
cp "$tmp/doc1.rst" "$tmp/doc3.rst"
"$report" "$tmp/torch" --update-doc "$tmp/doc3.rst" > /dev/null 2>&1
ok "torch: --update-doc adds the PyTorch group and keeps the matrix's" \
	sh -c "grep -q '^final parameters (sha256)' '$tmp/doc3.rst' && grep -q 'small-message' '$tmp/doc3.rst'"
ok "torch: ... after the matrix's group, each between its markers" \
	sh -c "grep '^[.][.] bench-summary' '$tmp/doc3.rst' | tr '\\n' ' ' | grep -qx '.. bench-summary-begin: matrix .. bench-summary-end: matrix .. bench-summary-begin: torch .. bench-summary-end: torch .. bench-summary-begin: convert .. bench-summary-end: convert '"
ok "torch: ... and the conversions' line" \
	grep -q '^Tensors to bx on the host .* ratio 1.50 (target <= 2)' "$tmp/doc3.rst"
# fastpath.sh's records (DIR/fastpath.jsonl) with FASTPATH_BASE's before
# and after: the fastpath group; a second update of the same run changes
# nothing. Without FASTPATH_BASE, the instructions alone.
fastpath() {	# BASE_IR_PUSH BASE_IR_PULL: DIR/fastpath.jsonl's lines
	jrec fastpath op "$(j op=fp_op_push_eager "name=eager push, 64 B")" "$(j ir=646 base_ir="$1")"
	jrec fastpath op "$(j op=fp_op_pull_rdv "name=rendezvous pull, 1 MiB")" "$(j ir=1549 base_ir="$2")"
	jrec fastpath func "$(j func=bx_wire_build)" "$(j calls=100000 ir=40.5)"
}
fastpath 884 2039 > "$tmp/torch/fastpath.jsonl"
"$report" "$tmp/torch" --update-doc "$tmp/doc3.rst" > /dev/null 2>&1
fpgroup() {	# DOC ERE: a line of DOC's fastpath group
	sed -n '/^[.][.] bench-summary-begin: fastpath$/,/^[.][.] bench-summary-end: fastpath$/p' "$1" |
		grep -Eq "$2"
}
ok "fastpath: the group with before and after" fpgroup "$tmp/doc3.rst" '^eager push, 64 B +884 +646 +0[.]73$'
ok "fastpath: ... every operation, in fastpath.sh's order" \
	sh -c "grep -A1 '^eager push' '$tmp/doc3.rst' | grep -Eq '^rendezvous pull, 1 MiB +2039 +1549 +0[.]76$'"
cp "$tmp/doc3.rst" "$tmp/doc4.rst"
"$report" "$tmp/torch" --update-doc "$tmp/doc3.rst" > /dev/null 2>&1
ok "fastpath: a second update changes nothing" cmp -s "$tmp/doc3.rst" "$tmp/doc4.rst"
if command -v rst2html > /dev/null; then
	ok "fastpath: valid reStructuredText" sh -c "rst2html --halt=warning '$tmp/doc3.rst' > /dev/null"
else
	skip "fastpath: valid reStructuredText" "no rst2html (python3-docutils)"
fi
fastpath "" "" > "$tmp/torch/fastpath.jsonl"
cp "$tmp/doc3.rst" "$tmp/doc5.rst"
"$report" "$tmp/torch" --update-doc "$tmp/doc5.rst" > /dev/null 2>&1
ok "fastpath: without FASTPATH_BASE, the instructions" fpgroup "$tmp/doc5.rst" '^eager push, 64 B +646$'
ok "fastpath: ... and no before" sh -c "! grep -Fq 'Before: the pure files' '$tmp/doc5.rst'"
mktorch "$tmp/badfp" "$H1 $H1 $H1"
{
	fastpath 884 2039
	jrec fastpath op "$(j op=fp_op_x "name=x")" "$(j ir=12ab base_ir=)"
	jrec fastpath func "$(j func=bx_x)" "$(j calls=1)"
} > "$tmp/badfp/fastpath.jsonl"
broken badfp ".*/fastpath[.]jsonl:4: a record of fastpath op whose metrics[.]ir is not a number or null" \
	".*/fastpath[.]jsonl:5: a record of fastpath func without metrics[.]ir: "
ok "empty: no run and no torch: report exits 1" \
	sh -c "mkdir -p '$tmp/empty' && ! tools/bench/report.sh '$tmp/empty' > /dev/null 2>&1"

# The plan last (TAP allows it): the count is what ran.
echo "1..$n"
totals
