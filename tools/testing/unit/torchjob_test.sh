#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/ps/torch_job.sh's progress lines (make demo prints one every
# 10 s): one per interval however the guests' logs look -- none yet,
# empty (the rig creates them at boot), or with lines -- giving the
# newest line of each guest that has one, without torch's log noise.
# The function runs as torch_job.sh runs it, under set -euo pipefail,
# every second (BX_PROGRESS_SECS). Its record of the settings
# (DIR/torch.jsonl) is one that tools/bench/report.py takes, numbers as
# numbers. KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
TORCH_JOB=${TORCH_JOB:-$top/tools/ps/torch_job.sh}
eval "$(sed -n '/^progress() {/,/^}/p' "$TORCH_JOB")"
eval "$(sed -n '/^settings() {/,/^}/p' "$TORCH_JOB")"

# watch SECONDS: what progress printed over that long, in $tmp/out.
watch() {
	(set -euo pipefail; outdir=$tmp/run BX_PROGRESS_SECS=1 progress) \
		> "$tmp/out" 2>&1 &
	local p=$!
	sleep "$1"
	kill "$p" 2> /dev/null
	wait "$p" 2> /dev/null
	return 0
}
lines() {	# MIN: at least MIN progress lines
	[ "$(grep -c '^torch_job: 0m0[0-9]s ' "$tmp/out")" -ge "$1" ] || { cat "$tmp/out"; false; }
}

echo "TAP version 13"
echo "1..8"
mkdir -p "$tmp/run"
watch 5
ok "no logs yet: a line a second" lines 3
ok "... saying the guests boot" grep -q 'booting or importing torch' "$tmp/out"
mkdir -p "$tmp/run/g0" "$tmp/run/g1" "$tmp/run/g2"
: > "$tmp/run/g0/result.log"
: > "$tmp/run/g1/result.log"
watch 5
ok "empty logs: still a line a second" lines 3
printf '# embedding_ps: progress transport=bx step 5 of 30\r\n# I1206 12:00:00 noise\n# bench-record {"v":1}\r\n' \
	> "$tmp/run/g1/result.log"
printf 'ok 3 kv # SKIP\n\n' > "$tmp/run/g2/result.log"
watch 5
ok "logs: a line a second" lines 3
ok "... with each guest's newest line, not torch's noise nor a record" \
	grep -q '^torch_job: 0m0[0-9]s g1: # embedding_ps: progress transport=bx step 5 of 30; g2: ok 3 kv # SKIP$' "$tmp/out"
ok "... and no log noise" sh -c "! grep -q noise '$tmp/out'"

# settings, as torch_job.sh runs it with -s 010 -T bx,bx:overlap,rpc-uv.
steps=010 workers=2 rows=1000 dim=8 transports=bx,bx:overlap,rpc-uv fabric=lossy settings \
	> "$tmp/torch.jsonl"
ok "settings: a record of the settings that report.py takes" \
	python3 - "$top/tools/bench" "$tmp/torch.jsonl" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import report
ls = open(sys.argv[2]).read().splitlines()
assert len(ls) == 1, ls
r = report.parse_record("torch.jsonl:1", ls[0])
assert (r.bench, r.kind) == ("torch_job", "settings"), r
assert r.fields == {"steps": 10, "workers": 2, "rows": 1000, "dim": 8,
                    "transports": ["bx", "bx:overlap", "rpc-uv"], "fabric": "lossy",
                    "guests": 3, "cpus": 1, "mem_mb": 1024}, r.fields
EOF
ok "... and says so in the report's words" python3 - "$top/tools/bench" "$tmp/torch.jsonl" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import report
t = report.parse_torch({}, open(sys.argv[2]).read())
assert not t.fails, t.fails
assert report.torch_how(t).startswith("1000 x 8 embedding; 2 worker process(es) x 10 steps "), \
    report.torch_how(t)
assert report.torch_how(t).endswith("(3 guests with 1 vCPU and 1024 MiB each), lossy switch")
EOF
totals
