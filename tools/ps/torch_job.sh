#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job, PyTorch edition: python/examples/embedding_ps.py, a
# sparse-embedding model whose parameters live on two server guests,
# trained by worker processes on a third, over bx (bx.kv) and then over
# torch.distributed.rpc (TensorPipe over TCP), in one boot, printed side
# by side. It is selftests/bx/python.sh's torch case, run alone and
# longer; both transports must reach the same parameters.
#
#   tools/ps/torch_job.sh [-s STEPS] [-w WORKERS] [-f FABRIC] [-o DIR]
#
#   -s STEPS    steps per worker (default 300)
#   -w WORKERS  worker processes on guest 0 (default 2)
#   -f FABRIC   lossless (default; bxswitch, as RoCE with PFC) or lossy
#   -o DIR      keep the run here (default: $BX_BUILD/vm/runs/torch-...)
#
# Every worker also prints each step's time and pull and push latency
# (embedding_ps.py --step-log -, lines "embedding_ps: steps ...") into
# DIR/g0/result.log, and DIR/torch.env records the settings: the input
# of tools/bench/report.py, whose bench phase "torch" runs this script.
#
# Needs the guest image (make stage vm) and the host's python3 with
# numpy and torch (tools/install-deps.sh): the guests run it (run.sh -p).
# Exit status: 0 if the run passed and both reached the same parameters;
# run.sh's own if it failed (3 and 4: a known platform failure, which
# callers such as tools/bench/bench.sh run again), else 1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export BX_BUILD=${BX_BUILD:-$top/build}

steps=300 workers=2 fabric=lossless outdir=
while getopts "s:w:f:o:" opt; do
	case $opt in
	s) steps=$OPTARG ;;
	w) workers=$OPTARG ;;
	f) fabric=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[[ $steps =~ ^[0-9]+$ && $workers =~ ^[1-9]$ ]] ||
	{ echo "torch_job: -s and -w take numbers (-w 1..9)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch.distributed.rpc' 2>/dev/null ||
	{ echo "torch_job: no python3-torch on this host (tools/install-deps.sh)" >&2; exit 2; }
outdir=${outdir:-$BX_BUILD/vm/runs/torch-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir"

echo "torch_job: $workers worker(s) x $steps steps on guest 0, servers on guests 1 and 2 ($fabric fabric); logs in $outdir"
# Three guests of one vCPU (run.sh's default for three) and 1 GiB each.
printf 'steps=%s workers=%s fabric=%s guests=3 cpus=1 mem_mb=1024\n' \
	"$steps" "$workers" "$fabric" > "$outdir/torch.env"
rc=0
"$top/tools/testing/vm/run.sh" -n 3 -c 1 -p -m 1024 -f "$fabric" -o "$outdir" \
	-t $((900 + steps * workers * 3)) \
	-e BX_SKIP="python.sh:binding python.sh:guests python.sh:kv" \
	-e BX_TORCH_STEPS="$steps" -e BX_TORCH_WORKERS="$workers" \
	-e EMBEDDING_PS_STEP_LOG=- \
	/opt/bx/selftests/bx/run_tests.sh python.sh > "$outdir/run.log" 2>&1 ||
	rc=$?
grep -E '^run\.sh: ' "$outdir/run.log" || true

# The workers' lines (python.sh prints them on guest 0) as a table.
tr -d '\r' < "$outdir/g0/result.log" | sed -n 's/^# embedding_ps: //p' |
awk -v steps="$steps" -v workers="$workers" '
function f(k,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1) return substr($i, length(k) + 2)
	return ""
}
/^transport=/ {
	t = f("transport"); n[t]++
	for (i = 1; i <= nk; i++) s[t, K[i]] += f(K[i])
	next
}
/^params sha256 / { h[++nh] = $3 }
BEGIN {
	nk = split("step_ms_mean step_ms_p50 step_ms_p99 pull_us_p50 pull_us_p99 push_us_p50 push_us_p99 cpu_ms_per_step", K)
	split("step ms (mean)|step ms (p50)|step ms (p99)|pull us (p50)|pull us (p99)|push us (p50)|push us (p99)|CPU ms per step", L, "|")
}
END {
	if (!n["bx"] || !n["rpc"]) { print "torch_job: no results from both transports"; exit 1 }
	printf "\nembedding_ps, %d worker(s) x %d steps, averaged over the workers\n", workers, steps
	printf "%-18s %12s %12s %10s\n", "", "bx", "torch rpc", "bx/rpc"
	for (i = 1; i <= nk; i++) {
		b = s["bx", K[i]] / n["bx"]; r = s["rpc", K[i]] / n["rpc"]
		printf "%-18s %12.2f %12.2f %10s\n", L[i], b, r, (r > 0 ? sprintf("%.2f", b / r) : "-")
	}
	same = nh == 2 && h[1] == h[2]
	printf "final parameters   %s\n", same ? "identical (sha256 " substr(h[1], 1, 16) "...)" : "DIFFERENT"
	exit !same
}' || [ "$rc" -ne 0 ] || rc=1
if [ "$rc" -ne 0 ]; then
	echo "torch_job: failed; the rig's output: $outdir/run.log"
	grep -E 'FAIL|not ok|splat' "$outdir/run.log" | head -20 || true
fi
exit "$rc"
