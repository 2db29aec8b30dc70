# SPDX-License-Identifier: GPL-2.0
#
# The lossless switch's counters per phase of a run (run.sh -f lossless,
# bxswitch.c), for bench.sh and ps_job.sh, which source this file.
# run.sh leaves the switch's pid in DIR/switch.pid and its output in
# DIR/switch.log: one line of counters each time it gets SIGUSR1 (and at
# its end), "bxswitch: port...=... frames=F bytes=B pauses=P paused_ms=M".

# switch_mark DIR NAME: have the switch report what it counted since the
# last report (it belongs to the phase named before), then name the
# phase that follows. Does nothing without a lossless switch.
switch_mark() {
	local dir=$1 k=0 before
	[ -f "$dir/switch.pid" ] || return 0
	before=$(grep -c '^bxswitch:' "$dir/switch.log" || true)
	kill -USR1 "$(cat "$dir/switch.pid")" 2>/dev/null || return 0
	while [ "$(grep -c '^bxswitch:' "$dir/switch.log" || true)" -le "$before" ] &&
		[ $k -lt 50 ]; do
		sleep 0.1
		k=$((k + 1))
	done
	echo "bxswitch-phase $2" >> "$dir/switch.log"
}

# switch_records LOG: what the switch counted in each named phase of LOG
# as records (tools/bench/README.md, "Records"), one JSON object a line:
# bench "bxswitch", kind "result", cell {"phase": NAME}, metrics frames,
# bytes, pauses, paused_ms (the totals; the per-port fields are left
# out).
switch_records() {
	awk '/^bxswitch-phase / { ph = $2; gsub(/[\\"]/, "\\\\&", ph); next }
	     /^bxswitch:.* paused_ms=[0-9]+$/ && ph != "" {
		m = ""
		for (i = 2; i <= NF; i++)
			if ($i !~ /^port/ && split($i, kv, "=") == 2)
				m = m (m == "" ? "" : ",") "\"" kv[1] "\":" kv[2]
		printf("{\"v\":1,\"bench\":\"bxswitch\",\"kind\":\"result\",\"cell\":{\"phase\":\"%s\"},\"metrics\":{%s}}\n", ph, m)
		ph = "" }' "$1"
}
