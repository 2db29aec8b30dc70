#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark matrix of `make bench`: run bench_guest.sh in guests
# (floor, sweep, depth, procs, peers, incast, pslite, rds, bw, pieces,
# profile; see there), the PyTorch example over bx and over torch RPC pinned to
# TensorPipe's uv and ibv transports (torch), then write the report with
# report.sh.
#
# The phases with one client (floor sweep depth procs rds bw pieces
# profile) run on a pair of guests with 2 vCPUs each, in DIR/run: with
# one vCPU, rxe's work, softirqs and the benchmark process share it, and
# the link's floor is what that CPU can move. The phases with several clients
# (peers incast) and pslite (ps-lite's scheduler, server and worker need
# three hosts: bx has no loopback) then boot all GUESTS guests, in
# DIR/run-multi; with -n 2, pslite is skipped (the report says so). With
# -n 2 everything runs on the pair. Phase torch is last, in a boot of
# its own: tools/ps/torch_job.sh (make demo) in DIR/torch, three guests
# on the switch of -f, BENCH_TORCH_STEPS steps (default 200) of
# BENCH_TORCH_WORKERS worker processes (default 2) per transport, the
# model torch_job.sh's default (1 M rows x 64); before it, on the host,
# python/tests/bench_convert.py into DIR/convert.txt (what a tensor or
# array handed to bx costs against a memcpy of its bytes).
#
#   tools/bench/bench.sh [-o DIR] [-n GUESTS] [-s SECS] [-I INCAST_SECS]
#                        [-p INCAST_PROCS] [-P "PHASES"] [-z SIZES]
#                        [-k FLAVOR] [-t TIMEOUT] [-f FABRIC] [-r]
#
#   -o DIR     output directory (default $BX_BUILD/bench): the runs in
#              DIR/run, DIR/run-multi and DIR/torch (per-guest
#              result.log, consoles), the report in DIR
#   -n GUESTS  2 to 4 (default 4): guest 0 serves, the others are clients
#              (of the multi-client phases)
#   -s SECS    seconds per measured cell (default 3)
#   -I SECS    seconds per incast setting (default 20)
#   -p N       processes per client guest in the incast (default 2)
#   -P PHASES  subset of "floor sweep depth procs peers incast pslite rds
#              bw pieces profile torch"
#   -z SIZES   sizes of the sweep (default 64,4096,64K,1M,16M)
#   -k FLAVOR  guest kernel: stock (default) or debug
#   -t SECS    per-guest timeout (default 1500)
#   -f FABRIC  the switch of the multi-client boot: lossless (bxswitch,
#              the default: it pauses a sender instead of dropping, as a
#              RoCE fabric with PFC does; its pauses are counted per
#              incast setting) or lossy (vde_switch: it drops a frame
#              whose destination is full, which rxe recovers from only
#              at its ACK timeout). The pair is always a lossless link.
#   -r         no run: write the report of the run kept in DIR again
#
# Needs the guest image with bxperf in it (make stage vm). Exit status: 0
# if every guest passed and every cell reported, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export BX_BUILD=${BX_BUILD:-$top/build}
# shellcheck source=SCRIPTDIR/../testing/vm/switch-lib.sh
. "$top/tools/testing/vm/switch-lib.sh"

out=$BX_BUILD/bench n=4 secs=3 isecs=20 iprocs=2 flavor=stock tmo=1500
phases="floor sweep depth procs peers incast pslite rds bw pieces profile torch" sizes=64,4096,64K,1M,16M
report_only='' fabric=lossless
while getopts "o:n:s:I:p:P:z:k:t:f:r" opt; do
	case $opt in
	o) out=$OPTARG ;;
	n) n=$OPTARG ;;
	s) secs=$OPTARG ;;
	I) isecs=$OPTARG ;;
	p) iprocs=$OPTARG ;;
	P) phases=$OPTARG ;;
	z) sizes=$OPTARG ;;
	k) flavor=$OPTARG ;;
	t) tmo=$OPTARG ;;
	f) fabric=$OPTARG ;;
	r) report_only=1 ;;
	*) exit 2 ;;
	esac
done
[[ $n =~ ^[2-4]$ ]] || { echo "bench: -n must be 2..4" >&2; exit 2; }
run=$out/run
rc=0

if [ -z "$report_only" ]; then
	env=$BX_BUILD/vm/$flavor/env
	[ -f "$env" ] || { echo "bench: $env missing: make stage vm" >&2; exit 2; }
	[ -x "$BX_BUILD/stage/bin/bxperf" ] ||
		{ echo "bench: bxperf is not staged: make stage vm" >&2; exit 2; }
	# shellcheck disable=SC1090,SC2153
	initrd=$(. "$env"; echo "$INITRD")
	case " $phases " in
	*" pslite "*) [ -x "$BX_BUILD/stage/bin/pslite_bench" ] ||
		{ echo "bench: pslite_bench is not staged: make stage vm" >&2; exit 2; } ;;
	esac
	[ "$BX_BUILD/stage/bin/bxperf" -nt "$initrd" ] &&
		echo "bench: warning: the guest image is older than bxperf (make stage vm)" >&2
	rm -rf "$run" "$out/run-multi" "$out/torch" "$out/torch.rxe-crash" "$out/convert.txt"
	# hostload WHEN: a sample of the host's load, which tells how far
	# TCG numbers can be trusted, in DIR/run/host.txt and as a record
	# (tools/bench/README.md, "Records") in DIR/run/host.jsonl.
	hostload() {
		local t l1 l5 l15 q
		t=$(date -u +%FT%TZ)
		read -r l1 l5 l15 _ < /proc/loadavg
		q=$(pgrep -c qemu-system || true)
		echo "$1 $t nproc=$(nproc) loadavg=$l1/$l5/$l15 qemu=$q" >> "$run/host.txt"
		printf '{"v":1,"bench":"bench","kind":"load","cell":{"when":"%s","time":"%s","nproc":%d},"metrics":{"load1":%s,"load5":%s,"load15":%s,"qemu":%d}}\n' \
			"$1" "$t" "$(nproc)" "$l1" "$l5" "$l15" "${q:-0}" >> "$run/host.jsonl"
	}
	# rxe_only CONSOLE: the first kernel splat ran rxe's code and not
	# bx's (run.sh's test for the known guest crash, testing.rst "Known rig failures";
	# asked here because the run is killed before run.sh gets to it).
	rxe_only() {
		[ "$("$top/tools/testing/vm/splat-owner" "$1" || true)" = rxe ]
	}
	# rig DIR GUESTS PHASES: a boot of the guests running those phases;
	# after a guest crashed in rxe alone (PLATFORM.md), once more, with
	# the crashed boot kept in DIR.rxe-crash.
	rig() {
		local try
		for try in 1 2; do
			rig_once "$@"
			[ "$try" -eq 1 ] && [ -n "$dead" ] && rxe_only "$dead" || break
			rm -rf "$1.rxe-crash"
			mv "$1" "$1.rxe-crash"
			mkdir -p "$1"
			cp "$1.rxe-crash"/host.* "$1/" 2>/dev/null || true
			echo "bench: the guest crashed in rxe alone (known, PLATFORM.md); booting again (crashed boot: $1.rxe-crash)"
		done
		[ "$rrc" -eq 0 ] || rc=1
	}
	rig_once() {
		local dir=$1 ng=$2 ph=$3 gargs=() i rpid seen=0 lines new start
		dead='' rrc=0
		mkdir -p "$dir"
		# A killed run's pid (no longer the switch's) and counters.
		rm -f "$dir/switch.pid" "$dir/switch.log" "$dir/switch.jsonl"
		for ((i = 0; i < ng; i++)); do
			gargs+=(-g "$i:$here/bench_guest.sh")
		done
		# Settings bench_guest.sh reads that have no option here.
		for v in BENCH_ROUNDS BENCH_INCAST_SETS BENCH_INCAST_RATE BENCH_PIECE_KB \
			 BENCH_BW_SETS BENCH_LAT_ONLY BENCH_PSLITE_SECS; do
			[ -z "${!v:-}" ] || gargs+=(-e "$v=${!v}")
		done
		echo "bench: $ng guests ($((ng - 1)) clients), ${secs}s per cell," \
			"${isecs}s per incast setting; phases: $ph; logs in $dir"
		hostload start
		start=$(date +%s)
		"$top/tools/testing/vm/run.sh" -n "$ng" -k "$flavor" -t "$tmo" -o "$dir" \
			-f "$fabric" "${gargs[@]}" -e "BENCH_SECS=$secs" -e "BENCH_INCAST_SECS=$isecs" \
			-e "BENCH_INCAST_PROCS=$iprocs" -e "BENCH_PHASES=$ph" \
			-e "BENCH_SIZES=$sizes" -- true > "$dir/run.log" 2>&1 &
		rpid=$!
		# Progress: guest 0's phase lines and every failure, as they come.
		while kill -0 "$rpid" 2>/dev/null; do
			sleep 3
			[ $((SECONDS % 60)) -lt 3 ] && hostload during
			# A guest that panicked leaves the others waiting at a
			# barrier until it times out: stop the run at once.
			if [ -z "$dead" ]; then
				dead=$(grep -l -a 'Kernel panic' "$dir"/g*/console.log 2>/dev/null | head -1 || true)
				if [ -n "$dead" ]; then
					echo "bench: a guest panicked ($dead): stopping the run"
					kill "$rpid" 2>/dev/null
				fi
			fi
			[ -f "$dir/g0/result.log" ] || continue
			lines=$(tr -d '\r' < "$dir/g0/result.log" | grep -c '^bench-phase' || true)
			if [ "$lines" -gt "$seen" ]; then
				new=$(tr -d '\r' < "$dir/g0/result.log" | grep '^bench-phase' |
					head -n "$lines" | tail -n +"$((seen + 1))")
				sed "s/^/bench: [$(($(date +%s) - start))s] /" <<< "$new"
				seen=$lines
				# The switch's counters per phase, to within
				# the 3 s of this loop (switch-lib.sh);
				# run.sh's SIGTERM at the end reports the last.
				switch_mark "$dir" "$(tail -1 <<< "$new" | cut -d' ' -f2)"
			fi
		done
		wait "$rpid" || rrc=$?
		hostload end
		# The switch's counters per phase as records, for the report.
		[ ! -f "$dir/switch.log" ] || switch_records "$dir/switch.log" > "$dir/switch.jsonl"
		grep -E '^run\.sh: ' "$dir/run.log" || true
		grep -h 'bench-guest .*FAIL' "$dir"/g*/result.log 2>/dev/null | tr -d '\r' || true
		if [ "$rrc" -ne 0 ]; then
			echo "bench: the rig failed (exit $rrc); its output: $dir/run.log"
			grep -E 'FAILED|FAIL:|splat' "$dir/run.log" | head -20 || true
		fi
		echo "bench: guests took $(($(date +%s) - start))s"
	}
	# torch_once: the PyTorch example's boot (phase torch), its
	# status in trc (run.sh's: 3 a guest crashed in rxe alone, 4 the
	# rig's network failed before bx started).
	torch_once() {
		echo "bench: the PyTorch example, bx and torch RPC over uv and over ibv, ${tsteps} steps x" \
			"$tworkers worker(s) ($fabric fabric); logs in $out/torch"
		local start tpid
		hostload start
		start=$(date +%s)
		trc=0
		"$top/tools/ps/torch_job.sh" -s "$tsteps" -w "$tworkers" -f "$fabric" \
			-o "$out/torch" > "$out/torch.log" 2>&1 &
		tpid=$!
		while kill -0 "$tpid" 2>/dev/null; do
			sleep 3
			[ $((SECONDS % 60)) -lt 3 ] && hostload during
		done
		wait "$tpid" || trc=$?
		hostload end
		sed 's/^/bench: /' "$out/torch.log"
		echo "bench: guests took $(($(date +%s) - start))s"
	}
	mkdir -p "$run"
	: > "$run/host.txt"
	: > "$run/host.jsonl"
	pair='' multi='' torch=''
	for p in $phases; do
		case $p in
		peers|incast|pslite) [ "$n" -gt 2 ] && multi+=" $p" || pair+=" $p" ;;
		torch) torch=1 ;;
		*) pair+=" $p" ;;
		esac
	done
	# The report reads DIR/run first: with no phase for the pair, the
	# other guests run there.
	if [ -n "$pair" ]; then
		rig "$run" 2 "${pair# }"
		[ -z "$multi" ] || rig "$out/run-multi" "$n" "${multi# }"
	elif [ -n "$multi" ]; then
		rig "$run" "$n" "${multi# }"
	fi
	if [ -n "$torch" ]; then
		# On the host first: what handing 1.6 M float32 values as a
		# tensor or array to bx costs against a memcpy of their bytes.
		echo "bench: tensors and arrays to bx.kv and bx.Bx on the host (python/tests/bench_convert.py)"
		PYTHONPATH="$top/python" /usr/bin/python3 "$top/python/tests/bench_convert.py" \
			> "$out/convert.txt" 2>&1 || echo "bench: bench_convert.py failed ($out/convert.txt)"
		sed -n '/^bench-record /!s/^/bench: /p' "$out/convert.txt"	# its records for the report
		tsteps=${BENCH_TORCH_STEPS:-200} tworkers=${BENCH_TORCH_WORKERS:-2}
		torch_once
		# As rig(): once more after a known platform failure.
		if [ "$trc" -eq 3 ] || [ "$trc" -eq 4 ]; then
			mv "$out/torch" "$out/torch.rxe-crash"
			echo "bench: the torch boot failed in rxe or the rig's network (known, PLATFORM.md); booting again (failed boot: $out/torch.rxe-crash)"
			torch_once
		fi
		[ "$trc" -eq 0 ] || rc=1
	fi
fi

"$here/report.sh" "$out" || rc=1
exit "$rc"
