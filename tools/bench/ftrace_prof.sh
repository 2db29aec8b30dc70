#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where a guest's kernel time goes in bx: the function_graph tracer on
# every function of bx and of rdma_rxe (Debian's kernel has no function
# profiler), around one command, then per function: calls, inclusive
# time and self time (inclusive minus that of traced callees), the
# largest self times first.
#
#   ftrace_prof.sh start            arm and start tracing
#   ftrace_prof.sh stop TAG [N]     stop; print the top N (default 25) as
#                                   "bench-profile TAG func calls incl_us self_us"
#                                   and the totals as
#                                   "bench-profile TAG total bx_us rxe_us wall_s"
#                                   and each as a record (tools/bench/README.md,
#                                   "Records"): bench "ftrace_prof", kind
#                                   "func" (cell tag, func; metrics calls,
#                                   incl_us, self_us) or "total" (cell tag;
#                                   metrics bx_us, rxe_us, wall_s)
#
# Time inside an interrupt counts where it lands; rxe's tasklets and
# workqueues show as their own roots. Time a task spends scheduled out
# does not count (sleep-time off): a function preempted on a busy vCPU
# would otherwise be charged for whatever ran meanwhile. Tracing itself slows every traced
# call (several microseconds per call under TCG), so the absolute times
# are inflated; the ranking and the bx/rxe split are what this is for.
# BENCH_TRACEFS and TMPDIR: elsewhere, for the host test (benchrec_test.sh)
T=${BENCH_TRACEFS:-/sys/kernel/tracing}
W=${TMPDIR:-/tmp}
[ -d $T/options ] || mount -t tracefs nodev $T 2>/dev/null
[ -w $T/current_tracer ] || { echo "ftrace_prof: no tracefs" >&2; exit 1; }

case $1 in
start)
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/trace
	echo 16384 > $T/buffer_size_kb
	echo ':mod:bx' > $T/set_ftrace_filter
	echo ':mod:rdma_rxe' >> $T/set_ftrace_filter
	echo function_graph > $T/current_tracer
	echo 1 > $T/options/funcgraph-tail
	echo 1 > $T/options/funcgraph-proc
	echo 1 > $T/options/funcgraph-cpu
	echo 1 > $T/options/funcgraph-duration
	echo 0 > $T/options/sleep-time
	date +%s > $W/ftrace_prof.t0
	echo 1 > $T/tracing_on
	;;
stop)
	echo 0 > $T/tracing_on
	t0=$(cat $W/ftrace_prof.t0 2>/dev/null || date +%s)
	wall=$(($(date +%s) - t0))
	tag=${2:-run}
	n=${3:-25}
	# Lines: " 1)  comm-42  |   2.345 us    |    func();"  (a traced leaf)
	#        " 1)  comm-42  |               |    func() {"  (entry)
	#        " 1)  comm-42  |   5.678 us    |    } /* func */"  (exit)
	# Durations may carry a "+"/"!"/"#" mark and "us"/"ms"/"s" units
	# (function_graph prints us). Nesting is tracked per task: a task
	# that sleeps inside a traced call (bx's submit-and-wait) lets other
	# tasks run traced code on its CPU, and may wake up on another one.
	# The idle tasks (pid 0), where interrupts land, count per CPU.
	awk -v wall="$wall" '
	function dur(s) {
		gsub(/[+!#*@$&]/, "", s)
		return s + 0
	}
	# "name [mod]" of an entry, leaf or exit; the module tells bx from rxe.
	function fname(s) {
		sub(/\(\).*/, "", s)
		sub(/^\} \/\* /, "", s); sub(/ \*\/.*/, "", s)
		return s
	}
	{
		if (match($0, /^ *[0-9]+\)/) == 0) next
		cpu = substr($0, RSTART, RLENGTH) + 0
		line = substr($0, RLENGTH + 1)
		bar = index(line, "|")
		if (!bar) next
		who = substr(line, 1, bar - 1)
		gsub(/ /, "", who)
		sub(/.*-/, "", who)
		# "cpu" names the stack from here on.
		cpu = who + 0 ? "p" who : "c" cpu
		line = substr(line, bar + 1)
		bar = index(line, "|")
		if (!bar) next
		left = substr(line, 1, bar - 1)
		body = substr(line, bar + 1)
		sub(/^ +/, "", body)
		d = (left ~ /[0-9]/) ? dur(left) : 0
		if (body ~ /^[A-Za-z_][A-Za-z0-9_.]*( \[[A-Za-z0-9_]+\])?\(\);/) {
			f = fname(body)
			calls[f]++; incl[f] += d; self[f] += d
			if (sp[cpu] > 0) child[cpu, sp[cpu]] += d
		} else if (body ~ /^[A-Za-z_][A-Za-z0-9_.]*( \[[A-Za-z0-9_]+\])?\(\) \{/) {
			f = fname(body)
			sp[cpu]++; st[cpu, sp[cpu]] = f; child[cpu, sp[cpu]] = 0
		} else if (body ~ /^\} \/\* /) {
			f = fname(body)
			if (sp[cpu] > 0 && st[cpu, sp[cpu]] == f) {
				calls[f]++; incl[f] += d
				self[f] += d - child[cpu, sp[cpu]]
				sp[cpu]--
				if (sp[cpu] > 0) child[cpu, sp[cpu]] += d
			}
		}
	}
	END {
		for (f in calls) {
			g = f; sub(/ \[/, "[", g)
			printf "%s %d %.1f %.1f\n", g, calls[f], incl[f], self[f]
			if (f ~ /\[bx\]$/) bx += self[f]; else rx += self[f]
		}
		printf "TOTAL %.1f %.1f %d\n", bx, rx, wall
	}' $T/trace > $W/ftrace_prof.out
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_filter
	echo 1 > $T/options/sleep-time
	{
		grep -v '^TOTAL' $W/ftrace_prof.out | sort -k4 -rn | head -n "$n"
		grep '^TOTAL ' $W/ftrace_prof.out
	} | awk -v tag="$tag" '
	function js(v,  o, i, c) {
		for (i = 1; i <= length(v); i++) {
			c = substr(v, i, 1)
			o = o (c == "\\" || c == "\"" ? "\\" : "") c
		}
		return "\"" o "\""
	}
	function rec(kind, cell, metrics) {
		printf "bench-record {\"v\":1,\"bench\":\"ftrace_prof\",\"kind\":\"%s\",\"cell\":{\"tag\":%s%s},\"metrics\":{%s}}\n", kind, js(tag), cell, metrics
	}
	$1 == "TOTAL" {
		print "bench-profile " tag " total " $2 " " $3 " " $4
		rec("total", "", "\"bx_us\":" $2 ",\"rxe_us\":" $3 ",\"wall_s\":" $4)
		next
	}
	{
		print "bench-profile " tag " " $0
		rec("func", ",\"func\":" js($1), "\"calls\":" $2 ",\"incl_us\":" $3 ",\"self_us\":" $4)
	}'
	;;
*)
	echo "usage: $0 start | stop TAG [N]" >&2
	exit 2
	;;
esac
