#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job, PyTorch edition: python/examples/embedding_ps.py, a
# sparse-embedding model whose parameters live on two server guests,
# trained by worker processes on a third, launched by torchrun on the
# three (meeting through its store), over bx (bx.kv) in lock-step, then
# with step n + 1's pull overlapping step n's push, then over
# torch.distributed.rpc pinned to TensorPipe's uv transport (TCP), then
# pinned to its ibv transport (RDMA verbs over rxe), in one boot,
# printed side by side. It is selftests/bx/python.sh's torch case, run
# alone, larger and longer; all in lock-step must reach the same
# parameters (overlap's depend on how the calls interleave).
#
#   tools/ps/torch_job.sh [-s STEPS] [-w WORKERS] [-r ROWS] [-d DIM]
#                         [-T TRANSPORTS] [-f FABRIC] [-o DIR]
#
#   -s STEPS       steps per worker (default 100)
#   -w WORKERS     worker processes on guest 0 (default 2)
#   -r ROWS, -d DIM  the embedding table (default 1000000 x 64)
#   -T TRANSPORTS  of embedding_ps.py (default bx,bx:overlap,rpc-uv,rpc-ibv:
#                  bx lock-step and with --overlap on)
#   -f FABRIC      lossless (default; bxswitch, as RoCE with PFC) or lossy
#   -o DIR         keep the run here (default: $BX_BUILD/vm/runs/torch-...)
#
# python.sh runs by itself (not under run_tests.sh, which holds a test's
# output until it ends and stops it at settings' 900 s), so that its
# lines reach DIR/gI/result.log as they come: while the guests run this
# script says every 10 s what they are at; at the end it prints the
# table. Every worker also prints each step's time and
# pull and push latency (embedding_ps.py --step-log -, lines
# "embedding_ps: steps ...") into DIR/g0/result.log, each line of
# figures followed by its record ("# bench-record {JSON}", python.sh
# runs the example with --records; the "run" records name guest 0's
# kernel), and DIR/torch.jsonl has this script's record of the settings
# (bench "torch_job", kind "settings"; tools/bench/README.md, "Records"):
# the input of tools/bench/report.py, whose bench phase "torch" runs
# this script.
#
# Needs the guest image (make stage vm) and the host's python3 with
# numpy and torch (tools/install-deps.sh): the guests run it (run.sh -p).
# Exit status: 0 if the run passed and all reached the same parameters;
# run.sh's own if it failed (3 and 4: a known platform failure, which
# callers such as tools/bench/bench.sh run again), else 1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export BX_BUILD=${BX_BUILD:-$top/build}

steps=100 workers=2 rows=1000000 dim=64 transports=bx,bx:overlap,rpc-uv,rpc-ibv
fabric=lossless outdir=
while getopts "s:w:r:d:T:f:o:" opt; do
	case $opt in
	s) steps=$OPTARG ;;
	w) workers=$OPTARG ;;
	r) rows=$OPTARG ;;
	d) dim=$OPTARG ;;
	T) transports=$OPTARG ;;
	f) fabric=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[[ $steps =~ ^[0-9]+$ && $workers =~ ^[1-9]$ && $rows =~ ^[0-9]+$ && $dim =~ ^[0-9]+$ ]] ||
	{ echo "torch_job: -s, -r, -d take numbers, -w 1..9" >&2; exit 2; }
[[ $transports =~ ^[a-z0-9:-]+(,[a-z0-9:-]+)*$ && $fabric =~ ^(lossless|lossy)$ ]] ||
	{ echo "torch_job: -T takes transports a,b,..., -f lossless or lossy" >&2; exit 2; }
/usr/bin/python3 -c 'import torch.distributed.rpc' 2>/dev/null ||
	{ echo "torch_job: no python3-torch on this host (tools/install-deps.sh)" >&2; exit 2; }
outdir=${outdir:-$BX_BUILD/vm/runs/torch-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir"

echo "torch_job: $rows x $dim embedding on guests 1 and 2, $workers worker(s) x $steps steps on guest 0, over ${transports//,/, } ($fabric fabric); logs in $outdir"
# settings: the job's settings as a record (tools/bench/README.md,
# "Records"), one JSON object a line; -T and -f are checked above,
# nothing to escape. Three guests of one vCPU (run.sh's default for
# three) and 1 GiB each.
settings() {
	printf '{"v":1,"bench":"torch_job","kind":"settings","cell":{"steps":%d,"workers":%d,"rows":%d,"dim":%d,"transports":["%s"],"fabric":"%s","guests":3,"cpus":1,"mem_mb":1024},"metrics":{}}\n' \
		"$((10#$steps))" "$workers" "$((10#$rows))" "$((10#$dim))" "${transports//,/\",\"}" "$fabric"
}
settings > "$outdir/torch.jsonl"

# progress: every 10 s (BX_PROGRESS_SECS, for torchjob_test), how long
# it has run and the newest line of each guest (the rig writes the
# guests' output to files as it comes).
progress() {
	local t0=$SECONDS g l line
	while sleep "${BX_PROGRESS_SECS:-10}"; do
		line=
		for g in 0 1 2; do
			[ -f "$outdir/g$g/result.log" ] || continue
			l=$(tr -d '\r' < "$outdir/g$g/result.log" |
				grep -a -v '^# [IW][0-9]* \|^# WARNING: Logging\|^# bench-record \|^ *$' | tail -1 | cut -c1-110) ||
				true	# an empty log (grep finds nothing) must not end the loop (set -e)
			[ -n "$l" ] && line="$line g$g: $l;"
		done
		[ -n "$line" ] || line=" booting or importing torch (about a minute under TCG)"
		printf 'torch_job: %dm%02ds%s\n' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "${line%;}"
	done
}
progress &
prog=$!
trap 'kill $prog 2>/dev/null || true' EXIT

rc=0
"$top/tools/testing/vm/run.sh" -n 3 -c 1 -p -m 1024 -f "$fabric" -o "$outdir" \
	-t $((1200 + steps * workers * 8 + rows / 1000)) \
	-e BX_SKIP="python.sh:binding python.sh:guests python.sh:kv" \
	-e BX_TORCH_STEPS="$steps" -e BX_TORCH_WORKERS="$workers" \
	-e BX_TORCH_ROWS="$rows" -e BX_TORCH_DIM="$dim" \
	-e BX_TORCH_TRANSPORTS="$transports" \
	-e EMBEDDING_PS_STEP_LOG=- \
	/opt/bx/selftests/bx/python.sh > "$outdir/run.log" 2>&1 ||
	rc=$?
kill $prog 2>/dev/null || true
grep -E '^run\.sh: ' "$outdir/run.log" || true

# The workers' and servers' lines (python.sh prints them on guest 0)
# as a table: one column per transport, then bx's ratios to the others.
tr -d '\r' < "$outdir/g0/result.log" | sed -n 's/^# embedding_ps: //p' |
awk -v steps="$steps" -v workers="$workers" -v rows="$rows" -v dim="$dim" -v tps="$transports" '
function f(k,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1) return substr($i, length(k) + 2)
	return ""
}
function tp(   t) { t = f("transport"); sub(/:$/, "", t); return t }
BEGIN {
	nt = split(tps, T, ",")
	nk = split("step_ms_mean step_ms_p50 step_ms_p99 pull_us_p50 pull_us_p99 push_us_p50 push_us_p99 cpu_ms_per_step", K)
	split("step ms (mean)|step ms (p50)|step ms (p99)|pull ms (p50)|pull ms (p99)|push ms (p50)|push ms (p99)|worker CPU ms/step", L, "|")
	ns = split("server_cpu_ms_per_step server_host_cpu_ms_per_step rdma_pkts tcp_segs", S)
	split("server CPU ms/step|servers host CPU ms/step|RDMA packets (servers)|TCP segments (servers)", SL, "|")
}
/^run transport=/ { sub(/^run /, ""); what[++nw] = $0; next }
/^(steps|progress) / { next }
/ worker=/ { t = tp(); n[t]++; for (i = 1; i <= nk; i++) s[t, K[i]] += f(K[i]); next }
/ servers=/ { t = tp(); sv[t] = 1; for (i = 1; i <= ns; i++) v[t, S[i]] = f(S[i]); kp[t] = f("keys_pulled"); next }
/ params sha256 / { t = tp(); h[t] = $NF; next }
/ unavailable: / { t = tp(); sub(/^[^:]*: /, ""); why[t] = $0; next }
function cell(t, x) { return n[t] ? sprintf("%12.2f", x) : sprintf("%12s", "-") }
function ratio(a, b) { return (b > 0 && a != "" ) ? sprintf("%9.2f", a / b) : sprintf("%9s", "-") }
END {
	printf "\nembedding_ps: %d x %d embedding, %d worker(s) x %d steps, averaged over the workers\n", rows, dim, workers, steps
	for (i = 1; i <= nw; i++) print "  " what[i]
	printf "%-26s", ""
	for (j = 1; j <= nt; j++) printf " %12s", T[j]
	for (j = 2; j <= nt; j++) printf " %9s", T[1] "/" substr(T[j], 1, 7)
	printf "\n"
	for (i = 1; i <= nk; i++) {
		printf "%-26s", L[i]
		d = K[i] ~ /_us_/ ? 1000 : 1
		for (j = 1; j <= nt; j++) { t = T[j]; a[j] = n[t] ? s[t, K[i]] / n[t] / d : ""; printf " %s", cell(t, a[j]) }
		for (j = 2; j <= nt; j++) printf " %s", ratio(a[1], a[j])
		printf "\n"
	}
	for (i = 1; i <= ns; i++) {
		printf "%-26s", SL[i]
		for (j = 1; j <= nt; j++) { t = T[j]; a[j] = (t in sv) ? v[t, S[i]] : ""; printf " %s", (a[j] == "" ? sprintf("%12s", "-") : sprintf(i <= 2 ? "%12.2f" : "%12d", a[j])) }
		for (j = 2; j <= nt; j++) printf " %s", (i <= 2 ? ratio(a[1], a[j]) : sprintf("%9s", ""))
		printf "\n"
	}
	printf "%-26s", "keys pulled per server"
	for (j = 1; j <= nt; j++) printf " %12s", (T[j] in kp ? kp[T[j]] : "-")
	printf "\n"
	# The same parameters within each mode: lock-step (T), sync (T:sync);
	# overlap (T:overlap) depends on the interleaving.
	same = 1; miss = 0
	for (j = 1; j <= nt; j++) {
		t = T[j]
		if (t in why) { printf "%-26s %s\n", t, "unavailable: " why[t]; miss = 1; continue }
		if (!(t in h) || !n[t]) { printf "%-26s %s\n", t, "no results"; miss = 1; continue }
		g = t ~ /:overlap$/ ? "" : t ~ /:sync$/ ? "sync" : "lock-step"
		if (g == "") continue
		if (!(g in first)) first[g] = h[t]
		if (h[t] != first[g]) same = 0
	}
	for (g in first)
		printf "final parameters, %-9s%s\n", g, same ? "identical (sha256 " substr(first[g], 1, 16) "...)" : "DIFFERENT"
	exit !(same && !miss)
}' || [ "$rc" -ne 0 ] || rc=1
if [ "$rc" -ne 0 ]; then
	echo "torch_job: failed; the rig's output: $outdir/run.log"
	grep -E 'FAIL|not ok|splat' "$outdir/run.log" | head -20 || true
fi
exit "$rc"
