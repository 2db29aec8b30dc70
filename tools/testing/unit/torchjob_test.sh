#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/ps/torch_job.sh's progress lines (make demo prints one every
# 10 s): one per interval however the guests' logs look -- none yet,
# empty (the rig creates them at boot), or with lines -- giving the
# newest line of each guest that has one, without torch's log noise.
# The function runs as torch_job.sh runs it, under set -euo pipefail,
# every second (BX_PROGRESS_SECS). KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
TORCH_JOB=${TORCH_JOB:-$top/tools/ps/torch_job.sh}
eval "$(sed -n '/^progress() {/,/^}/p' "$TORCH_JOB")"

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
echo "1..6"
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
totals
