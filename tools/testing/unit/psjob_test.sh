#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/ps/ps_job.sh's table (-r: no run, the table of a kept one) on a
# made-up run of two guests, train over bx and tcp, through the lossless
# switch: the switch's pauses per phase come from switch-lib.sh's
# records (DIR/switch.jsonl, made from DIR/switch.log), not counting a
# message of the switch's own nor what it counted between phases. KTAP
# output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"

d=$tmp/run
mkdir -p "$d/g0" "$d/g1"
{
	for t in bx tcp; do
		echo "ps-phase train.$t start secs=5"
		echo "ps-server transport=$t threads=1 secs=5.0 ops=1000 bytes_in=1 bytes_out=1 errors=0 cpu_us=5 cpu_us_per_op=1.0 host_cpu_us_per_op=2.0 conns=1 reg_bytes=1048576 accepted=1 tag=train.$t"
		echo "ps-phase train.$t done"
	done
} > "$d/g0/result.log"
for t in bx tcp; do
	echo "ps-result transport=$t mode=train op=sparse_pull threads=1 secs=5.00 n=500 ops_s=100.0 mb_s=1.00 mean_us=100.0 p50_us=100.0 p99_us=200.0 p999_us=300.0 max_us=400.0 errors=0 retries=0 cpu_us_per_op=10.0 proc_cpu_us_per_op=11.0 host_cpu_us_per_op=12.0 conns=1 reg_bytes=1048576 bytes=5000000 tag=train.$t"
	echo "ps-hist transport=$t mode=train op=sparse_pull per_oct=8 h=53:500"
	echo "ps-worker transport=$t mode=train threads=1 rounds=10 ops=500 errors=0 status=ok tag=train.$t"
done > "$d/g1/result.log"
# As run.sh's bxswitch and switch_mark (ps_job.sh's progress) write it:
# before any phase, train.bx (with a message of the switch's own),
# between the phases ("-"), train.tcp.
cat > "$d/switch.log" <<'EOF'
bxswitch: port0=01:rx_frames=5,pauses=0,paused_ms=0 frames=5 bytes=300 pauses=1 paused_ms=1
bxswitch-phase train.bx
bxswitch: port 3: frame length 99999
bxswitch: port0=01:rx_frames=9,pauses=2,paused_ms=7 frames=10 bytes=5000 pauses=3 paused_ms=1500
bxswitch-phase -
bxswitch: port0=01:rx_frames=1,pauses=9,paused_ms=9 frames=1 bytes=64 pauses=9 paused_ms=9
bxswitch-phase train.tcp
bxswitch: port0=01:rx_frames=1,pauses=4,paused_ms=20 frames=1 bytes=64 pauses=4 paused_ms=20
EOF

echo "TAP version 13"
echo "1..5"
"$top/tools/ps/ps_job.sh" -r "$d" -n 2 -m train -T "bx tcp" -w 1 -d 5 > "$tmp/out" 2>&1
ok "ps_job -r: the table of a whole run passes" [ $? -eq 0 ]
ok "... the switch's records beside its log" \
	[ "$(grep -c '"bench":"bxswitch","kind":"result"' "$d/switch.jsonl")" -eq 3 ]
ok "... each phase's pauses, a message of the switch's own not taken" \
	grep -Eq '^ +switch pauses +3 +4 +1[.]33$' "$tmp/out"
ok "... and time paused" grep -Eq '^ +switch paused ms +1500 +20 +0[.]01$' "$tmp/out"
ok "... the ops served" grep -Eq '^server +ops served +1000 +1000 +1[.]00$' "$tmp/out"
totals
