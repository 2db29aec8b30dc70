#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The report of a `make bench` run: tables in DIR/report.md, data in
# DIR/data/, plots in DIR/*.png (gnuplot).
#
#   tools/bench/report.sh DIR
#
# Reads DIR/run/gN/result.log (bench_guest.sh's output on every guest)
# and DIR/fastpath.md (fastpath.sh) if present. Exit status 1 if the run
# is missing, a guest reported a failure or a cell is missing.
#
# Conventions: latency is the time of a whole operation (request and
# response). qperf and perftest report one-way latency (half a ping-pong),
# so their latencies are doubled here to compare round trips ("RTT").
# Results of several client guests in one cell are merged: operations and
# MB/s summed, percentiles from the merged histograms (32 buckets per
# octave, +-1.1%), CPU per operation weighted by operations.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/../testing/vm/switch-lib.sh
. "$here/../testing/vm/switch-lib.sh"

dir=${1:?usage: report.sh DIR}
run=$dir/run
data=$dir/data
[ -f "$run/g0/result.log" ] || { echo "report: no run in $run" >&2; exit 1; }
mkdir -p "$data"
rm -f "$data"/*.dat "$dir"/*.png

all=$data/results.txt
# Both boots of bench.sh; the multi-client one's (if any) environment is
# told apart.
for f in "$run"/g*/result.log "$dir"/run-multi/g*/result.log; do
	[ -f "$f" ] || continue
	g=${f%/result.log}
	g=${g##*/g}
	env=bench-env
	case $f in "$dir"/run-multi/*) env=bench-env-multi ;; esac
	tr -d '\r' < "$f" | sed -e "s/^bench-env /$env /" -e "s/^/$g /"
done > "$all"
# The lossless switch's counters (bench.sh -f lossless), per phase: a
# report follows the "bxswitch-phase" line that names its phase.
for f in "$dir"/run-multi/switch.log "$run"/switch.log; do
	[ -f "$f" ] || continue
	switch_phases "$f" bench-switch >> "$all"
	break
done

hostinfo=$(awk '{ sub(/loadavg=/, ""); sub(/qemu=/, ""); split($4, l, "/")
	n++; if ($1 == "start" && t0 == "") t0 = $2; t1 = $2; s += l[1]; if (l[1] > m) m = l[1]
	if ($5 > q) q = $5; c = $3 }
	END { if (n) printf("host %s, %s to %s: 1-min load average %.1f mean, %.1f max; up to %d qemu processes (this run'"'"'s included)", c, t0, t1, s / n, m, q) }' \
	"$run/host.txt" 2>/dev/null || true)

set +e
awk -v hostinfo="$hostinfo" -v data="$data" -v out="$dir/report.md" -v fastpath="$dir/fastpath.md" '
function kv(   i, p) {
	delete F
	for (i = 3; i <= NF; i++) {
		p = index($i, "=")
		if (p)
			F[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
}
# A cell: what ran at once. Both kinds of a mixed cell share it.
function cellof() {
	return F["tag"] "|" F["transport"] "|" F["size"] "|" F["depth"] "|" \
	       F["procs"] "|" F["mix"] (F["mix"] + 0 ? "" : "|" F["op"])
}
function bval(i) { return 2 ^ ((i + 0.5) / per_oct) }
# Percentile p of key k from the merged histogram.
function hpct(k, p,   i, c, want) {
	if (!HN[k])
		return ""
	want = p * HN[k]
	c = 0
	for (i = HMIN[k]; i <= HMAX[k]; i++) {
		c += H[k, i]
		if (c >= want && c > 0)
			return bval(i)
	}
	return bval(HMAX[k])
}
function pct(k, name, p) {
	return NG[k] == 1 ? V[k, name] : hpct(k, p)
}
function ms(us) {
	if (us == "" || us + 0 < 0)
		return "-"
	us /= 1000
	return us >= 100 ? sprintf("%.0f", us) : us >= 10 ? sprintf("%.1f", us) : \
	       us >= 1 ? sprintf("%.2f", us) : sprintf("%.3f", us)
}
function num(x) {
	if (x == "" || x + 0 < 0)
		return "-"
	x += 0
	return x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : \
	       x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x)
}
# The median of A[1..n] (sorts A), "" if empty.
function median(A, n,   i, j, x) {
	if (n < 1)
		return ""
	for (i = 2; i <= n; i++) {
		x = A[i]
		for (j = i - 1; j >= 1 && A[j] > x; j--)
			A[j + 1] = A[j]
		A[j + 1] = x
	}
	return n % 2 ? A[(n + 1) / 2] : (A[n / 2] + A[n / 2 + 1]) / 2
}
# a / b, "" unless both are positive numbers; ratio() as shown ("%.2f"
# or "-"); the verdicts compare the unrounded one.
function rawratio(a, b) {
	return (a == "" || b == "" || a + 0 <= 0 || b + 0 <= 0) ? "" : a / b
}
function show(x) { return x == "" ? "-" : sprintf("%.2f", x) }
function ratio(a, b) { return show(rawratio(a, b)) }
function sz(b) {
	return b >= 1048576 ? (b / 1048576) " MiB" : b >= 1024 ? (b / 1024) " KiB" : b " B"
}
function key(tag, tp, op, size, depth, procs, mix) {
	return tag "|" tp "|" size "|" depth "|" procs "|" mix "|" op
}
function have(k) { return (k in N) }
# CPU per operation of key k: client process, client machine, server
# process, server machine (the server figures from guest 1, spread over
# every guest'"'"'s operations of the cell).
function cpu(k, what,   c) {
	c = CELL[k]
	if (!NTALL[c])
		return ""
	if (what == "cli")
		return CLIP[c] / NTALL[c]
	if (what == "clig")
		return CLIG[c] / NTALL[c]
	if (!SRVN[c])
		return ""
	# guest 1 asked the server; scale to its runs that did, then spread
	# over the operations of every guest
	if (what == "srv")
		return SRVP[c] * NT1[c] / SRVN[c] / NTALL[c]
	return SRVG[c] * NT1[c] / SRVN[c] / NTALL[c]
}
# Retransmissions during key k'"'"'s cell: every client machine'"'"'s and,
# once, the server'"'"'s (rxe completer retries for bx, TCP RetransSegs).
function retx(k,   g, t, c) {
	if (!have(k))
		return "-"
	c = CELL[k]
	t = 0
	for (g = 0; g < 8; g++)
		t += RETX[c, g]
	return t
}
# A CDF of key k into file f: "latency_us fraction".
function cdf(k, f,   i, c) {
	if (!HN[k])
		return 0
	c = 0
	for (i = HMIN[k]; i <= HMAX[k]; i++) {
		if (!H[k, i])
			continue
		if (!c)
			printf("%g 0\n", 2 ^ (i / per_oct)) > f
		c += H[k, i]
		printf("%g %g\n", 2 ^ ((i + 1) / per_oct), c / HN[k]) > f
	}
	close(f)
	return 1
}

# ---- connections and registered memory per host ----
# A host'"'"'s maxima in cell tag t: the server (guest 0) or the most of
# any client guest (1..), of field f; "" if not sampled.
function hmax(t, g0, f,   g, v, m) {
	if (g0 == 0)
		return ((t, 0, f) in HOSTV) ? HOSTV[t, 0, f] : ""
	m = ""
	for (g = 1; g < 8; g++) {
		if (!((t, g, f) in HOSTV) || HOSTV[t, g, f] == "")
			continue
		v = HOSTV[t, g, f] + 0
		if (m == "" || v > m)
			m = v
	}
	return m
}
function mib(b) { return b == "" ? "-" : num(b / 1048576) }
# Every host'"'"'s maximum of every sampled cell: region bytes within the
# cap (the target), the most of them, and how many such maxima there
# were (one with no cap read counts as not measured).
function capcheck(   k, P, t, g, cap) {
	NCAP = 0; OVER = 0; REGMAX = 0
	for (k in HOSTV) {
		split(k, P, SUBSEP)
		if (P[3] != "region_bytes" || HOSTV[k] == "" || \
		    HOSTV[P[1], P[2], "region_cap_mb"] == "")
			continue
		t = P[1]; g = P[2]
		cap = HOSTV[t, g, "region_cap_mb"] * 1048576
		NCAP++
		if (HOSTV[k] + 0 > REGMAX)
			REGMAX = HOSTV[k] + 0
		if (HOSTV[k] + 0 > cap)
			OVER++
		CAPMB = HOSTV[t, g, "region_cap_mb"]
	}
}
function hosts(   np, i, st, t, tb, tt) {
	if (!length(HOSTV))
		return
	printf("\n## Connections and registered memory per host\n\n") > out
	printf("Sampled every second on every guest while the cell ran, maxima: bx'"'"'s connections of the host (shared by all its processes), bxperf'"'"'s TCP connections (either end on port 7080: one per process, and one more over which the client asks for the server'"'"'s CPU time) and the region bytes bx has registered on the host, charged against its cap (`region_cap_mb`). The client host is guest 1 for processes, the busiest client guest in the incast (each with %s bulk processes and the probe).\n\n", ENV["incast_procs"]) > out
	printf("| cell | processes per client host | bx conns client / server | tcp conns client / server | bx registered MiB client / server | cap MiB |\n") > out
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n") > out
	for (np = 1; np <= 4; np *= 2) {
		tb = "procs-bx-" np; tt = "procs-tcp-" np
		if (!((tb, 1, "bx_conns") in HOSTV))
			continue
		printf("| procs | %d | %s / %s | %s / %s | %s / %s | %s |\n", np, \
		       hmax(tb, 1, "bx_conns"), hmax(tb, 0, "bx_conns"), \
		       hmax(tt, 1, "tcp_conns"), hmax(tt, 0, "tcp_conns"), \
		       mib(hmax(tb, 1, "region_bytes")), mib(hmax(tb, 0, "region_bytes")), \
		       HOSTV[tb, 1, "region_cap_mb"]) > out
		PC[np] = hmax(tb, 1, "bx_conns"); PT[np] = hmax(tt, 1, "tcp_conns")
	}
	for (i = 1; i <= niseen; i++) {
		st = ISEENL[i]
		t = "incast-" st
		if (!((t, 0, "bx_conns") in HOSTV))
			continue
		if (st == "tcp")
			printf("| incast tcp | %d | - | %s / %s | - | - |\n", ENV["incast_procs"] + 1, \
			       hmax(t, 1, "tcp_conns"), hmax(t, 0, "tcp_conns")) > out
		else
			printf("| incast %s | %d | %s / %s | - | %s / %s | %s |\n", st, \
			       ENV["incast_procs"] + 1, hmax(t, 1, "bx_conns"), hmax(t, 0, "bx_conns"), \
			       mib(hmax(t, 1, "region_bytes")), mib(hmax(t, 0, "region_bytes")), \
			       HOSTV[t, 0, "region_cap_mb"]) > out
	}
}

# ---- the targets of the issue, from this run ----
# The incast: the worst p99 of each bx setting with a window against the
# window off with the same other settings ("mid-a14" against "off-a14"
# if that ran, else "off"); the best of them, the defaults'"'"', the
# Little floor and the probe there. A setting with no latencies (all
# its operations failed) is no candidate.
function incast_target(nin,   i, st, r, base, off) {
	IBEST = ""
	for (i = 1; i <= nbx; i++) {
		st = BXSET[i]
		base = st; sub(/-.*$/, "", base)
		off = "off" substr(st, length(base) + 1)
		if (!(off in WORST))
			off = "off"
		if (base == "off" || WORST[st] <= 0 || WORST[off] <= 0)
			continue
		r = WORST[st] / WORST[off]
		if (IBEST == "" || r < IBESTR) {
			IBEST = st; IBESTR = r; IBESTOFF = off
			IBESTL = (irate <= 0 && RATE[st] > 0 && nin > 0) ? nin / RATE[st] * 1e6 / WORST[off] : ""
		}
	}
	if (WORST["on"] > 0 && WORST["off"] > 0)
		IDEF = sprintf("%.2f", WORST["on"] / WORST["off"])
	if (IBEST != "" && PROBE99[IBEST] > 0 && PROBE99[IBESTOFF] > 0)
		IPROBE = sprintf("%.2f", PROBE99[IBEST] / PROBE99[IBESTOFF])
}
function verdict(ok) { return ok == "" ? "not measured" : ok ? "**met**" : "**not met**" }
function le(a, b) { return a == "-" || a == "" ? "" : a + 0 <= b }
function ge(a, b) { return a == "-" || a == "" ? "" : a + 0 >= b }
function lt(a, b) { return a == "-" || a == "" ? "" : a + 0 < b }
# Both met; one not met is not met whatever the other; else not measured.
function both(a, b) { return (a != "" && !a) || (b != "" && !b) ? 0 : a == "" || b == "" ? "" : 1 }
function targets(   f, np, same, grow) {
	f = out ".targets"
	printf("") > f
	printf("## The targets, in this run\n\n") > f
	printf("Each target of the benchmark issue against this run'"'"'s own numbers (sections below); Documentation/performance.rst discusses them.\n\n") > f
	printf("| target | this run | verdict |\n| --- | --- | --- |\n") > f
	printf("| small-message latency <= 1.2x raw verbs RTT (bx pull / qperf rc_lat, medians of the paired rounds) | 64 B %s, 4 KiB %s | %s |\n", \
	       show(MQV[64]), show(MQV[4096]), verdict(both(le(MQV[64], 1.2), le(MQV[4096], 1.2)))) > f
	printf("| throughput >= 0.9x raw verbs bandwidth at 1 MiB, against qperf rc_bw (%s) | pull %s, push %s | %s |\n", \
	       TBHOW == "" ? "best of d1, d8" : TBHOW, \
	       show(TB1), show(TB2), verdict(both(ge(TB1, 0.9), ge(TB2, 0.9)))) > f
	printf("| the same against the verb that moves the payload (pull: RDMA WRITE, push: RDMA READ; %s) | pull %s, push %s | %s |\n", \
	       TWHOW == "" ? "best of d1, d8" : TWHOW, \
	       show(TW), show(TR), verdict(both(ge(TW, 0.9), ge(TR, 0.9)))) > f
	printf("| bx faster than RDS over rxe (bx pull / RDS ping-pong, medians) | 64 B %s, 4 KiB %s | %s |\n", \
	       show(MDV[64]), show(MDV[4096]), verdict(both(lt(MDV[64], 1), lt(MDV[4096], 1)))) > f
	printf("| incast p99 with the window <= 0.5x without (worst p99 of pulls and pushes) | ") > f
	if (IBEST == "")
		printf("- | not measured |\n") > f
	else
		printf("defaults %s; best %s %.2f of %s%s%s | %s |\n", IDEF == "" ? "-" : IDEF, IBEST, IBESTR, IBESTOFF, \
		       IBESTL == "" ? "" : sprintf(" (Little'"'"'s law floor at its rate: %.2f)", IBESTL), \
		       IPROBE == "" ? "" : sprintf("; the 4 KiB probe'"'"'s p99 there %s", IPROBE), \
		       verdict(IBESTR <= 0.5)) > f
	# bx'"'"'s connections on the client host the same, and some, with 1,
	# 2 and 4 processes; not measured if any count is missing.
	same = 1; grow = ""
	for (np = 1; np <= 4; np *= 2) {
		if (PC[np] == "") {
			same = ""
			break
		}
		if (PC[np] + 0 != PC[1] + 0 || PC[np] + 0 <= 0)
			same = 0
		grow = grow (grow == "" ? "" : ", ") PC[np] "/" (PT[np] == "" ? "-" : PT[np])
	}
	printf("| connections per host independent of the number of processes (client host, 1, 2, 4 processes: bx / TCP) | %s | %s |\n", \
	       grow == "" ? "-" : grow, verdict(same)) > f
	capcheck()
	printf("| registered memory per host bounded by the cap | %s | %s |\n", \
	       NCAP ? sprintf("at most %s MiB on a host (%d hosts x cells sampled), cap %s MiB", num(REGMAX / 1048576), NCAP, CAPMB) : "-", \
	       verdict(NCAP ? OVER == 0 : "")) > f
	close(f)
}

$2 == "bxperf-result" {
	kv()
	c = cellof()
	k = key(F["tag"], F["transport"], F["op"], F["size"], F["depth"], F["procs"], F["mix"])
	CELL[k] = c
	# Incast settings in the order they ran, for those the report
	# does not list by name.
	if (F["tag"] ~ /^incast-/ && F["tag"] !~ /-probe$/ && !(F["tag"] in ISEEN)) {
		ISEEN[F["tag"]] = 1
		ISEENL[++niseen] = substr(F["tag"], 8)
	}
	N[k] += F["n"]; ERR[k] += F["errors"]
	# Rates per guest over all its runs of the cell (several rounds),
	# summed over guests in END.
	NOPS[k, $1] += F["n"]; NSEC[k, $1] += F["secs"]
	NMB[k, $1] += F["mb_s"] * F["secs"]
	SUM[k] += F["n"] * F["mean_us"]
	NG[k]++
	split("p50_us p99_us p999_us min_us max_us", L, " ")
	for (i in L)
		V[k, L[i]] = F[L[i]]
	# A mixed cell prints the same counters on both of its lines.
	if (!(F["mix"] + 0) || F["op"] == "pull")
		RETX[c, $1] += F["transport"] == "tcp" ? F["tcp_retrans"] : F["rxe_retry"]
	NTALL[c] += F["n"]
	CLIP[c] += F["n"] * F["cpu_us_op"]
	CLIG[c] += F["n"] * F["guest_cpu_us_op"]
	if ($1 == 1) {
		NT1[c] += F["n"]
		if (F["srv_cpu_us_op"] >= 0) {
			SRVN[c] += F["n"]
			SRVP[c] += F["n"] * F["srv_cpu_us_op"]
			SRVG[c] += F["n"] * F["srv_guest_cpu_us_op"]
		}
	}
	if (F["errors"] + 0)
		bad = 1
	ncells++
	next
}
$2 == "bxperf-hist" {
	kv()
	k = key(F["tag"], F["transport"], F["op"], F["size"], F["depth"], F["procs"], F["mix"])
	per_oct = F["per_oct"]
	nb = split(F["h"], B, ",")
	for (i = 1; i <= nb; i++) {
		split(B[i], P, ":")
		if (P[2] == "")
			continue
		b = P[1] + 0
		H[k, b] += P[2]; HN[k] += P[2]
		if (!(k in HMIN) || b < HMIN[k]) HMIN[k] = b
		if (!(k in HMAX) || b > HMAX[k]) HMAX[k] = b
	}
	next
}
$2 == "bench-floor" {
	kv()
	fk = F["tool"] "|" F["test"] "|" F["size"]
	v = F["lat_us"] != "" ? F["lat_us"] : F["mb_s"] != "" ? F["mb_s"] : F["typ_us"]
	if (F["pass"] == 2)
		FL2[fk] = v
	else
		FL[fk] = v
	if (F["test"] == "ib_send_lat")
		for (x in F)
			FLX[x] = F[x]
	next
}
$2 == "bench-flow" {
	kv()
	ph = F["phase"]; g = $1
	for (x in F)
		FLOW[ph, g, x] = F[x]
	next
}
$2 == "bench-host" {
	kv()
	for (x in F)
		HOSTV[F["tag"], $1, x] = F[x]
	next
}
$2 == "bench-switch" { kv(); SWP[F["phase"]] = F["pauses"]; SWT[F["phase"]] = F["paused_ms"]; next }
$2 == "bench-phase" && $4 == "start" { split($3, PH, "."); PHASE[PH[1]] = 1; next }
$2 == "bench-env" { kv(); for (x in F) ENV[x] = F[x]; next }
$2 == "bench-env-multi" { kv(); for (x in F) ENVM[x] = F[x]; next }
$2 == "bench-pair" {
	kv()
	z = F["size"]; r = F["round"] + 0; t = F["tool"]
	# qperf prints one-way latency; the others time the round trip.
	PR[z, r, t] = t == "qperf" ? 2 * F["lat_us"] : F["mean_us"]
	if (t != "qperf")
		PR99[z, r, t] = F["p99_us"]
	if (r > PRN[z])
		PRN[z] = r
	next
}
$2 == "bench-pairbw" {
	kv()
	r = F["round"] + 0
	# qperf: rc_bw, rc_rdma_write_bw, rc_rdma_read_bw; bx: pull, push.
	PB[r, F["tool"] == "qperf" ? F["test"] : F["op"]] = F["mb_s"]
	if (r > PBN)
		PBN = r
	next
}
# BENCH_BW_SETS: bx with other settings, in the same rounds.
$2 == "bench-pairbw-set" {
	kv()
	if (!(F["set"] in PSETP)) {
		PSET[++PSETN] = F["set"]
		PSETP[F["set"]] = F["rd_max"] " | " F["rd_depth"] " | " F["piece_kb"]
	}
	PBS[F["set"], F["round"] + 0, F["op"]] = F["mb_s"]
	next
}
# ...and their small-message latency (mean, p99) in the same rounds.
$2 == "bench-pairlat" {
	kv()
	r = F["round"] + 0; o = F["op"]
	PLT[F["set"], r, o, F["size"]] = F["mean_us"]
	PLT99[F["set"], r, o, F["size"]] = F["p99_us"]
	if (!(o in PLOPS))
		PLOP[++PLOPN] = o
	PLOPS[o] = 1
	if (F["set"] != "on" && !(F["set"] in PLSETS))
		PLSET[++PLSETN] = F["set"]
	PLSETS[F["set"]] = 1
	if (r > PLN)
		PLN = r
	next
}
$2 == "bench-profile" {
	if ($4 == "total") {
		PTOT[$3] = sprintf("bx %.1f ms, rxe %.1f ms of self time in %s s", $5 / 1000, $6 / 1000, $7)
	} else {
		PN[$3]++
		PROW[$3, PN[$3]] = sprintf("| %s | %s | %.2f | %.2f |", $4, $5, $6 / 1000, $7 / 1000)
	}
	next
}
$2 ~ /^bench-guest/ || /FAIL/ { fails = fails "\n    " $0; bad = 1; next }
$2 == "bxrig:" && $3 == "exit" && $4 != 0 { bad = 1 }

# The floor'"'"'s latency of test t at size s: the mean of its runs before
# and after the cells of that size.
function flat(t, s,   a, b) {
	a = FL["qperf|" t "|" s]; b = FL2["qperf|" t "|" s]
	return a == "" ? b : b == "" ? a : (a + b) / 2
}
END {
	for (kg in NSEC) {
		split(kg, P, SUBSEP)
		if (NSEC[kg] > 0) {
			OPS[P[1]] += NOPS[kg] / NSEC[kg]
			MB[P[1]] += NMB[kg] / NSEC[kg]
		}
	}
	sizes = "64 4096 65536 1048576 16777216"
	ns = split(sizes, SZ, " ")
	printf("") > out
	printf("# bx benchmark report\n\n") > out
	printf("Guest kernel %s; %s guests with %s vCPU and %d MiB each, TCG; %s s per cell, ", \
	       ENV["kernel"], ENV["guests"], ENV["cpus"], ENV["mem_kb"] / 1024, ENV["secs"]) > out
	# Guests of the multi-client cells (peers, incast).
	MG = ("guests" in ENVM) ? ENVM["guests"] : ENV["guests"]
	if ("guests" in ENVM)
		printf("The cells with several client guests (client machines at once, incast) ran on a second boot of %s guests with %s vCPU and %d MiB each. ", \
		       ENVM["guests"], ENVM["cpus"], ENVM["mem_kb"] / 1024) > out
	printf("%s s per incast setting (%s processes per client guest). ", ENV["incast_secs"], ENV["incast_procs"]) > out
	printf("Guest 0 serves, guest 1 is the client of the single-client cells. ") > out
	printf("Latency is the whole operation (request and response), in **ms**; ") > out
	printf("qperf/perftest latencies are one-way, so they are doubled here (RTT).\n") > out
	if (hostinfo != "")
		printf("\nThe host during the run: %s.\n", hostinfo) > out
	if (fails != "")
		printf("\n**Failures:**\n%s\n", fails) > out

	# ---- floor ----
	printf("\n## The floor: raw verbs and TCP on the same rxe link (guest 1 -> 0)\n\n") > out
	printf("Measured with each size of the sweep, before and after its bx and TCP cells (RTT before / after).\n\n") > out
	printf("| size | qperf rc_lat RTT | qperf tcp_lat RTT | tcp/rc | qperf rc_bw MB/s | qperf tcp_bw MB/s |\n") > out
	printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
	for (i = 1; i <= 4; i++) {
		s = SZ[i]
		a = flat("rc_lat", s); b = flat("tcp_lat", s)
		if (a == "" && b == "")
			continue
		printf("| %s | %s / %s | %s / %s | %s | %s | %s |\n", sz(s), \
		       FL["qperf|rc_lat|" s] == "" ? "-" : ms(2 * FL["qperf|rc_lat|" s]), \
		       FL2["qperf|rc_lat|" s] == "" ? "-" : ms(2 * FL2["qperf|rc_lat|" s]), \
		       FL["qperf|tcp_lat|" s] == "" ? "-" : ms(2 * FL["qperf|tcp_lat|" s]), \
		       FL2["qperf|tcp_lat|" s] == "" ? "-" : ms(2 * FL2["qperf|tcp_lat|" s]), \
		       ratio(b, a), num(FL["qperf|rc_bw|" s]), num(FL["qperf|tcp_bw|" s])) > out
		if (a != "")
			printf("%d %g %g %g %g\n", s, 2 * a, 2 * b, FL["qperf|rc_bw|" s], \
			       FL["qperf|tcp_bw|" s]) > (data "/floor.dat")
	}
	close(data "/floor.dat")
	printf("\nqperf 64 KiB RDMA READ %s MB/s (`-nr` as bx'"'"'s `rd_max`: READs in flight per QP), RDMA WRITE %s MB/s. ", \
	       num(FL["qperf|rc_rdma_read_bw|65536"]), num(FL["qperf|rc_rdma_write_bw|65536"])) > out
	printf("perftest busy-polls, which starves rxe'"'"'s own work on a 1-vCPU guest: ") > out
	printf("ib_send_lat 64 B typical RTT %s (min %s, p99 %s), ", \
	       FLX["typ_us"] == "" ? "-" : ms(2 * FLX["typ_us"]), \
	       FLX["min_us"] == "" ? "-" : ms(2 * FLX["min_us"]), \
	       FLX["p99_us"] == "" ? "-" : ms(2 * FLX["p99_us"])) > out
	printf("ib_write_bw %s MB/s, ib_read_bw %s MB/s (64 KiB).\n", \
	       num(FL["perftest|ib_write_bw|65536"]), num(FL["perftest|ib_read_bw|65536"])) > out
	if (length(PRN)) {
		printf("\n## Small messages in paired rounds: bx, raw verbs and RDS\n\n") > out
		printf("Per size, rounds of three 2-s runs back to back on guests 1 -> 0: an AF_RDS ping-pong over rds_rdma (tools/bench/rds_pp.c, one message echoed), a bx pull (depth 1) and qperf rc_lat (RTT), so that each round'"'"'s ratios compare numbers taken seconds apart. Means in ms; the verdicts use the median of the rounds'"'"' ratios.\n\n") > out
		printf("| size | round | qperf rc_lat RTT | bx pull | RDS | bx p99 | RDS p99 | bx/raw | bx/RDS |\n") > out
		printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (i = 1; i <= 2; i++) {
			z = SZ[i]
			if (!(z in PRN))
				continue
			nr = nd = 0
			for (r = 1; r <= PRN[z]; r++) {
				q = PR[z, r, "qperf"]; b = PR[z, r, "bx"]; d = PR[z, r, "rds"]
				printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", sz(z), r, \
				       ms(q), ms(b), ms(d), ms(PR99[z, r, "bx"]), ms(PR99[z, r, "rds"]), \
				       ratio(b, q), ratio(b, d)) > out
				if (b > 0 && q > 0)
					RQ[++nr] = b / q
				if (b > 0 && d > 0)
					RD[++nd] = b / d
			}
			MQV[z] = median(RQ, nr); MDV[z] = median(RD, nd)
			printf("| %s | **median** | | | | | | **%s** | **%s** |\n", sz(z), \
			       show(MQV[z]), show(MDV[z])) > out
		}
	}

	# ---- sweep ----
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "pull" : "push"
		printf("\n## %s latency, one operation at a time (depth 1, 1 process)\n\n", \
		       op == "pull" ? "Pull" : "Push") > out
		printf("| size | bx mean | bx p50 | bx p99 | bx p99.9 | tcp mean | tcp p50 | tcp p99 | tcp p99.9 | bx/tcp p50 | bx/tcp mean | bx/raw mean | n bx/tcp | retx bx/tcp |\n") > out
		printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (i = 1; i <= ns; i++) {
			s = SZ[i]
			kb = key("sweep", "bx", op, s, 1, 1, 0)
			kt = key("sweep", "tcp", op, s, 1, 1, 0)
			if (!have(kb) && !have(kt))
				continue
			if (!have(kb) || !have(kt))
				missing = missing " sweep/" op "/" s
			raw = flat("rc_lat", s)
			pb = pct(kb, "p50_us", 0.5); pt = pct(kt, "p50_us", 0.5)
			mb = N[kb] ? SUM[kb] / N[kb] : ""; mt = N[kt] ? SUM[kt] / N[kt] : ""
			printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d | %s/%s |\n", sz(s), \
			       ms(mb), ms(pb), ms(pct(kb, "p99_us", 0.99)), \
			       ms(pct(kb, "p999_us", 0.999)), ms(mt), ms(pt), \
			       ms(pct(kt, "p99_us", 0.99)), ms(pct(kt, "p999_us", 0.999)), \
			       ratio(pb, pt), ratio(mb, mt), raw == "" ? "-" : ratio(mb, 2 * raw), N[kb], N[kt], \
			       retx(kb), retx(kt)) > out
			printf("%d %g %g %g %g %g %g %g %g\n", s, pb, pt, pct(kb, "p99_us", 0.99), \
			       pct(kt, "p99_us", 0.99), MB[kb], MB[kt], \
			       MB[key("depth", "bx", op, s, 8, 1, 0)] + 0, \
			       MB[key("depth", "tcp", op, s, 8, 1, 0)] + 0) > (data "/sweep_" op ".dat")
		}
		close(data "/sweep_" op ".dat")
		printf("\nCPU per %s, µs: client process (getrusage), client machine and server machine (/proc/stat, all CPU incl. rxe and softirq), server process.\n\n", op) > out
		printf("| size | bx cli proc | bx cli machine | bx srv machine | bx srv proc | tcp cli proc | tcp cli machine | tcp srv machine | tcp srv proc | bx/tcp machines |\n") > out
		printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (i = 1; i <= ns; i++) {
			s = SZ[i]
			kb = key("sweep", "bx", op, s, 1, 1, 0)
			kt = key("sweep", "tcp", op, s, 1, 1, 0)
			if (!have(kb) && !have(kt))
				continue
			printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sz(s), \
			       num(cpu(kb, "cli")), num(cpu(kb, "clig")), num(cpu(kb, "srvg")), num(cpu(kb, "srv")), \
			       num(cpu(kt, "cli")), num(cpu(kt, "clig")), num(cpu(kt, "srvg")), num(cpu(kt, "srv")), \
			       ratio(cpu(kb, "clig") + cpu(kb, "srvg"), cpu(kt, "clig") + cpu(kt, "srvg"))) > out
		}
	}

	# ---- throughput ----
	printf("\n## Throughput, MB/s (payload, 10^6 B/s), guest 1 -> 0\n\n") > out
	printf("| size | bx pull d1 | bx pull d8 | tcp pull d1 | tcp pull d8 | bx push d1 | bx push d8 | tcp push d1 | tcp push d8 | qperf rc_bw | qperf tcp_bw | qperf WRITE | qperf READ |\n") > out
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
	for (i = 1; i <= ns; i++) {
		s = SZ[i]
		printf("| %s", sz(s)) > out
		split("pull push", OPL, " ")
		for (o = 1; o <= 2; o++)
			for (t = 1; t <= 2; t++)
				for (d = 1; d <= 8; d += 7) {
					tp = t == 1 ? "bx" : "tcp"
					k = key(d == 1 ? "sweep" : "depth", tp, OPL[o], s, d, 1, 0)
					printf(" | %s", have(k) ? num(MB[k]) : "-") > out
				}
		printf(" | %s | %s | %s | %s |\n", num(FL["qperf|rc_bw|" s]), num(FL["qperf|tcp_bw|" s]), \
		       num(FL["qperf|rc_rdma_write_bw|" s]), num(FL["qperf|rc_rdma_read_bw|" s])) > out
	}
	# bx against the raw verbs that move its payload, best depth of each.
	printf("\nbx against raw verbs, the better of d1 and d8: the payload of a pull moves by RDMA WRITE, that of a push by RDMA READ (qperf streams them back to back, several in flight; bx adds the request and the completion message).\n\n") > out
	printf("| size | bx pull / rc_rdma_write_bw | bx push / rc_rdma_read_bw | bx pull / rc_bw | bx push / rc_bw |\n") > out
	printf("| ---: | ---: | ---: | ---: | ---: |\n") > out
	for (i = 1; i <= ns; i++) {
		s = SZ[i]
		if (FL["qperf|rc_rdma_write_bw|" s] == "")
			continue
		for (o = 1; o <= 2; o++) {
			k1 = key("sweep", "bx", OPL[o], s, 1, 1, 0)
			k8 = key("depth", "bx", OPL[o], s, 8, 1, 0)
			BEST[o] = have(k1) ? MB[k1] : 0
			if (have(k8) && MB[k8] > BEST[o])
				BEST[o] = MB[k8]
		}
		if (s == 1048576) {
			TW = rawratio(BEST[1], FL["qperf|rc_rdma_write_bw|" s])
			TR = rawratio(BEST[2], FL["qperf|rc_rdma_read_bw|" s])
			TB1 = rawratio(BEST[1], FL["qperf|rc_bw|" s])
			TB2 = rawratio(BEST[2], FL["qperf|rc_bw|" s])
		}
		printf("| %s | %s | %s | %s | %s |\n", sz(s), \
		       ratio(BEST[1], FL["qperf|rc_rdma_write_bw|" s]), \
		       ratio(BEST[2], FL["qperf|rc_rdma_read_bw|" s]), \
		       ratio(BEST[1], FL["qperf|rc_bw|" s]), ratio(BEST[2], FL["qperf|rc_bw|" s])) > out
	}
	# 1 MiB in paired rounds (phase bw): the throughput targets take
	# the medians of these ratios when they ran.
	if (PBN) {
		printf("\nIn paired rounds, 1 MiB (phase bw): each round runs qperf rc_bw, RDMA WRITE and READ (`-nr` as bx'"'"'s `rd_max`), then bx pull and push at depth 8, 2 s each, back to back, so that each round'"'"'s ratios compare numbers taken seconds apart; the throughput targets use the medians of the rounds'"'"' ratios. MB/s:\n\n") > out
		printf("| round | qperf rc_bw | qperf WRITE | qperf READ | bx pull d8 | bx push d8 | pull / rc_bw | push / rc_bw | pull / WRITE | push / READ |\n") > out
		printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		n1 = n2 = n3 = n4 = 0
		for (r = 1; r <= PBN; r++) {
			bw = PB[r, "rc_bw"]; wr = PB[r, "rc_rdma_write_bw"]; rd = PB[r, "rc_rdma_read_bw"]
			pl = PB[r, "pull"]; ps = PB[r, "push"]
			printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r, \
			       num(bw), num(wr), num(rd), num(pl), num(ps), ratio(pl, bw), \
			       ratio(ps, bw), ratio(pl, wr), ratio(ps, rd)) > out
			if ((x = rawratio(pl, bw)) != "") R1[++n1] = x
			if ((x = rawratio(ps, bw)) != "") R2[++n2] = x
			if ((x = rawratio(pl, wr)) != "") R3[++n3] = x
			if ((x = rawratio(ps, rd)) != "") R4[++n4] = x
		}
		m1 = median(R1, n1); m2 = median(R2, n2)
		m3 = median(R3, n3); m4 = median(R4, n4)
		printf("| **median** | | | | | | **%s** | **%s** | **%s** | **%s** |\n", \
		       show(m1), show(m2), show(m3), show(m4)) > out
		if (PSETN) {
			printf("\nOther settings of bx in the same rounds (`BENCH_BW_SETS`), bx reloaded for each cell, the defaults'"'"' too; %s. Each setting is compared with its rounds'"'"' qperf and defaults: medians of the rounds'"'"' ratios, and the range of a push against the defaults'"'"' over the rounds (an A/A control, the defaults under another name, shows the method'"'"'s own error):\n\n", \
			       ENV["bw_order"] == "williams" ? "each round in its own order, so that over the rounds every setting ran in every place and right after every other equally often" : "the order of the cells was not recorded (runs before the balanced orders had the same order in every round, or one turned by one each round)") > out
			printf("| setting | rd_max | rd_depth | piece_kb | rounds | pull / WRITE | push / READ | pull / defaults'"'"' pull | push / defaults'"'"' push | its range |\n") > out
			printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
			for (i = 1; i <= PSETN; i++) {
				st = PSET[i]
				q1 = q2 = q3 = q4 = 0
				for (r = 1; r <= PBN; r++) {
					pl = PBS[st, r, "pull"]; ps = PBS[st, r, "push"]
					if ((x = rawratio(pl, PB[r, "rc_rdma_write_bw"])) != "") S1[++q1] = x
					if ((x = rawratio(ps, PB[r, "rc_rdma_read_bw"])) != "") S2[++q2] = x
					if ((x = rawratio(pl, PB[r, "pull"])) != "") S3[++q3] = x
					if ((x = rawratio(ps, PB[r, "push"])) != "") S4[++q4] = x
				}
				nr = q1
				if (q2 > nr) nr = q2
				if (q3 > nr) nr = q3
				if (q4 > nr) nr = q4
				m = median(S4, q4)
				# median() sorted S4: its ends are the range.
				printf("| %s | %s | %d | %s | %s | %s | %s | %s |\n", st, PSETP[st], \
				       nr, show(median(S1, q1)), show(median(S2, q2)), \
				       show(median(S3, q3)), show(m), \
				       q4 ? show(S4[1]) "-" show(S4[q4]) : "-") > out
			}
		}
		# Rounds with no ratio (qperf failed in each) leave the
		# sweep'"'"'s figures standing.
		if (n1 && n2) {
			TB1 = m1; TB2 = m2
			TBHOW = "medians of the paired rounds, depth 8"
		}
		if (n3 && n4) {
			TW = m3; TR = m4
			TWHOW = "medians of the paired rounds"
		}
	}
	# Small-message latency of the other settings, in the same rounds.
	if (PLN && PLSETN) {
		printf("\nSmall-message latency of the other settings, one operation at a time (after each setting'"'"'s 1 MiB cells, or alone with `BENCH_LAT_ONLY`): the medians of the rounds'"'"' ratios to the defaults'"'"' in the same round (below 1: faster), and the range of the mean'"'"'s at 64 B:\n\n") > out
		printf("| setting | op | rounds | 64 B mean | 64 B p99 | 4 KiB mean | 4 KiB p99 | 64 B mean range |\n") > out
		printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (i = 1; i <= PLSETN; i++) {
			st = PLSET[i]
			for (j = 1; j <= PLOPN; j++) {
				o = PLOP[j]
				l1 = l2 = l3 = l4 = 0
				for (r = 1; r <= PLN; r++) {
					if ((x = rawratio(PLT[st, r, o, 64], PLT["on", r, o, 64])) != "") L1[++l1] = x
					if ((x = rawratio(PLT99[st, r, o, 64], PLT99["on", r, o, 64])) != "") L2[++l2] = x
					if ((x = rawratio(PLT[st, r, o, 4096], PLT["on", r, o, 4096])) != "") L3[++l3] = x
					if ((x = rawratio(PLT99[st, r, o, 4096], PLT99["on", r, o, 4096])) != "") L4[++l4] = x
				}
				lm = median(L1, l1)
				printf("| %s | %s | %d | %s | %s | %s | %s | %s |\n", st, o, l1, \
				       show(lm), show(median(L2, l2)), show(median(L3, l3)), \
				       show(median(L4, l4)), \
				       l1 ? show(L1[1]) "-" show(L1[l1]) : "-") > out
			}
		}
	}
	printf("\nd1/d8: 1 or 8 operations in flight from one process. 16 MiB runs one at a time only (rxe). Retransmissions in the same cells (rxe completer retries for bx, TCP RetransSegs for tcp; both machines):\n\n") > out
	printf("| size | bx pull d1 | bx pull d8 | tcp pull d1 | tcp pull d8 | bx push d1 | bx push d8 | tcp push d1 | tcp push d8 |\n") > out
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
	for (i = 1; i <= ns; i++) {
		s = SZ[i]
		printf("| %s", sz(s)) > out
		for (o = 1; o <= 2; o++)
			for (t = 1; t <= 2; t++)
				for (d = 1; d <= 8; d += 7) {
					tp = t == 1 ? "bx" : "tcp"
					printf(" | %s", retx(key(d == 1 ? "sweep" : "depth", tp, OPL[o], s, d, 1, 0))) > out
				}
		printf(" |\n") > out
	}

	# ---- processes and peers ----
	for (sc = 1; sc <= 2; sc++) {
		if (sc == 1)
			printf("\n## Processes on one client machine (pull, depth 1 each)\n\n") > out
		else
			printf("\n## Client machines at once (pull, 1 process each, depth 1)\n\n") > out
		printf("| %s | size | bx ops/s | bx p50 | bx p99 | bx cli machine µs/op | bx srv machine µs/op | tcp ops/s | tcp p50 | tcp p99 | tcp cli machine µs/op | tcp srv machine µs/op |\n", \
		       sc == 1 ? "procs" : "clients") > out
		printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (m = 1; m <= 4; m++) {
			for (s = 4096; s <= 65536; s *= 16) {
				kb = sc == 1 ? key("procs", "bx", "pull", s, 1, m, 0) : key("peers" m, "bx", "pull", s, 1, 1, 0)
				kt = sc == 1 ? key("procs", "tcp", "pull", s, 1, m, 0) : key("peers" m, "tcp", "pull", s, 1, 1, 0)
				if (!have(kb) && !have(kt))
					continue
				printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m, sz(s), \
				       num(OPS[kb]), ms(pct(kb, "p50_us", 0.5)), ms(pct(kb, "p99_us", 0.99)), \
				       num(cpu(kb, "clig")), num(cpu(kb, "srvg")), \
				       num(OPS[kt]), ms(pct(kt, "p50_us", 0.5)), ms(pct(kt, "p99_us", 0.99)), \
				       num(cpu(kt, "clig")), num(cpu(kt, "srvg"))) > out
				f = data (sc == 1 ? "/procs_" : "/peers_") s ".dat"
				printf("%d %g %g %g %g %g %g\n", m, OPS[kb], OPS[kt], cpu(kb, "srvg"), \
				       cpu(kt, "srvg"), pct(kb, "p50_us", 0.5), pct(kt, "p50_us", 0.5)) > f
			}
		}
		close(data "/procs_4096.dat"); close(data "/procs_65536.dat")
		close(data "/peers_4096.dat"); close(data "/peers_65536.dat")
	}
	printf("\n\"cli machine\" is per operation of that machine'"'"'s own processes, averaged over the client machines; \"srv machine\" is the server'"'"'s busy time over all operations of the cell.\n") > out
	hosts()

	# ---- pieces ----
	if (have(key("pieces-off", "bx", "pull", 1048576, 8, 1, 0))) {
		printf("\n## A small pull behind bulk transfers on one connection (piece_kb)\n\n") > out
		printf("Guest 1 moves 1 MiB at depth 8 while a probe process pulls 4 KiB one at a time over the same connection; the server posts the bulk transfers whole (piece_kb 0) or in pieces of %s KiB, alternately, %s rounds each. Latencies in ms.\n\n", ENV["piece_kb"], ENV["rounds"] != "" ? ENV["rounds"] : "the") > out
		printf("| bulk | piece_kb | bulk MB/s | bulk p50 | bulk p99 | probe p50 | probe p99 | probe p99.9 | probe ops |\n") > out
		printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
		for (o = 1; o <= 2; o++)
			for (t = 1; t <= 2; t++) {
				op = o == 1 ? "pull" : "push"; st = t == 1 ? "off" : "on"
				kb = key("pieces-" st, "bx", op, 1048576, 8, 1, 0)
				kq = key("pieces-" st "-" op "-probe", "bx", "pull", 4096, 1, 1, 0)
				printf("| %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", op, \
				       st == "off" ? 0 : ENV["piece_kb"], num(MB[kb]), \
				       ms(hpct(kb, 0.5)), ms(hpct(kb, 0.99)), \
				       ms(hpct(kq, 0.5)), ms(hpct(kq, 0.99)), ms(hpct(kq, 0.999)), N[kq]) > out
			}
	}

	# ---- incast ----
	idepth = ENV["incast_depth"] != "" ? ENV["incast_depth"] : 4
	irate = ENV["incast_rate"] + 0
	if (irate > 0)
		printf("\n## Incast: every client guest x %s processes, each issuing %s operations per second (Poisson, open load, at most %s in flight; latency from when an operation was due), pull and push 1 MiB against guest 0\n\n", ENV["incast_procs"], ENV["incast_rate"], idepth) > out
	else
		printf("\n## Incast: every client guest x %s processes, %s in flight each, pull and push 1 MiB against guest 0\n\n", ENV["incast_procs"], idepth) > out
	sw = length(SWP) > 0
	if (sw)
		printf("The switch is lossless (bxswitch, tools/testing/vm/bxswitch.c; bench.sh -f lossy selects vde_switch): where vde_switch drops a frame whose destination is full, it stops reading the sender instead, as PFC pauses it. pauses: how many times a guest'"'"'s port was stopped so; paused s: for how long in all.\n\n") > out
	printf("| setting | pull p50 | pull p99 | pull p99.9 | push p50 | push p99 | push p99.9 | probe p50 | probe p99 | MB/s (both) | ops | srv machine µs/op | retransmits |%s\n", sw ? " pauses | paused s |" : "") > out
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s\n", sw ? " ---: | ---: |" : "") > out
	# The first four are in every run; the rest (mid windows, a shorter
	# ACK timeout, the halves of mid: rx, snd, transfers not cut: -p0,
	# READs posted early: -r2)
	# only in runs that ask; any other setting that ran, after them.
	nsets = split("off on small tcp mid off-a14 on-a14 mid-a14 rx snd rx-a14 snd-a14 off-p0 on-p0 mid-p0 mid-a14-p0 off-r2 on-r2 mid-r2 mid-a14-r2", SETS, " ")
	for (i = 1; i <= nsets; i++)
		LISTED[SETS[i]] = 1
	for (i = 1; i <= niseen; i++)
		if (!(ISEENL[i] in LISTED))
			SETS[++nsets] = ISEENL[i]
	nbx = 0
	for (i = 1; i <= nsets; i++) {
		st = SETS[i]
		tp = st == "tcp" ? "tcp" : "bx"
		kp = key("incast-" st, tp, "pull", 1048576, idepth, ENV["incast_procs"], 1)
		ku = key("incast-" st, tp, "push", 1048576, idepth, ENV["incast_procs"], 1)
		kq = key("incast-" st "-probe", tp, "pull", 4096, 1, 1, 0)
		if (!have(kp) && !have(ku)) {
			if (i <= 4 && ("incast" in PHASE))
				missing = missing " incast/" st
			continue
		}
		if (tp == "bx")
			BXSET[++nbx] = st
		rt = 0
		for (g = 0; g < MG; g++)
			rt += tp == "tcp" ? FLOW["incast-" st, g, "tcp_RetransSegs"] : \
			      FLOW["incast-" st, g, "rxe_completer_retry_err"]
		base = st; sub(/-.*$/, "", base)
		label = base == "off" ? "bx, flow_control=N" : base == "on" ? "bx, flow_control=Y (defaults)" : \
			base == "small" ? "bx, Y, wnd_kb=256 host_wnd_kb=512 rx_wnd_kb=256" : \
			base == "mid" ? "bx, Y, wnd_kb=1024 host_wnd_kb=4096 rx_wnd_kb=2048" : \
			base == "rx" ? "bx, Y, rx_wnd_kb=2048" : \
			base == "snd" ? "bx, Y, wnd_kb=1024 host_wnd_kb=4096" : "tcp"
		if (match(st, /-a[0-9]+/))
			label = label ", ack_timeout " substr(st, RSTART + 2, RLENGTH - 2)
		if (match(st, /-p[0-9]+/))
			label = label ", piece_kb " substr(st, RSTART + 2, RLENGTH - 2)
		if (match(st, /-x[0-9]+/))
			label = label ", rx_wnd_kb " substr(st, RSTART + 2, RLENGTH - 2)
		if (match(st, /-r[0-9]+/))
			label = label ", rd_max " substr(st, RSTART + 2, RLENGTH - 2) " (rd_depth 1)"
		printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %d |", label, \
		       ms(hpct(kp, 0.5)), ms(hpct(kp, 0.99)), ms(hpct(kp, 0.999)), \
		       ms(hpct(ku, 0.5)), ms(hpct(ku, 0.99)), ms(hpct(ku, 0.999)), \
		       have(kq) ? ms(hpct(kq, 0.5)) : "", have(kq) ? ms(hpct(kq, 0.99)) : "", \
		       num(MB[kp] + MB[ku]), N[kp] + N[ku], num(cpu(kp, "srvg")), rt) > out
		if (sw)
			printf(" %s | %s |", SWP["incast." st], \
			       ("incast." st) in SWT ? sprintf("%.1f", SWT["incast." st] / 1000) : "") > out
		printf("\n") > out
		cdf(kp, data "/incast_" st "_pull.dat")
		cdf(ku, data "/incast_" st "_push.dat")
		# For the target: the worst p99 and operations per second.
		w = hpct(kp, 0.99) + 0
		if (hpct(ku, 0.99) + 0 > w)
			w = hpct(ku, 0.99) + 0
		WORST[st] = w
		if (have(kq))
			PROBE99[st] = hpct(kq, 0.99)
		RATE[st] = ENV["incast_secs"] > 0 ? (N[kp] + N[ku]) / ENV["incast_secs"] : 0
	}
	# The target of the issue, p99 with the window at most 0.5 times
	# without, against what a closed loop allows: its nin operations in
	# flight take nin / rate on average (the law of Little), and no
	# window brings the worst p99 below that mean at the same rate.
	nin = (MG - 1) * ENV["incast_procs"] * idepth
	if (irate > 0 && ("off" in WORST) && WORST["off"] > 0) {
		printf("\nWorst p99 (of pulls and pushes) against the window off in this run (open load: every setting was offered the same operations per second):\n\n| setting | worst p99 | / off |\n| --- | ---: | ---: |\n") > out
		for (i = 1; i <= nbx; i++)
			printf("| %s | %s | %.2f |\n", BXSET[i], ms(WORST[BXSET[i]]), \
			       WORST[BXSET[i]] / WORST["off"]) > out
	} else if (("off" in WORST) && WORST["off"] > 0 && nin > 0) {
		printf("\nWorst p99 (of pulls and pushes) against the window off in this run, and the mean latency that %d operations in flight have at each setting'"'"'s rate (Little'"'"'s law: in flight / operations per second), which no window can bring the p99 under at that rate:\n\n", nin) > out
		printf("| setting | worst p99 | / off | mean by Little'"'"'s law | / off'"'"'s worst p99 |\n| --- | ---: | ---: | ---: | ---: |\n") > out
		for (i = 1; i <= nbx; i++) {
			st = BXSET[i]
			lm = RATE[st] > 0 ? nin / RATE[st] * 1e6 : ""
			printf("| %s | %s | %.2f | %s | %s |\n", st, ms(WORST[st]), \
			       WORST[st] / WORST["off"], ms(lm), \
			       lm == "" ? "-" : sprintf("%.2f", lm / WORST["off"])) > out
		}
	}
	incast_target(nin)
	printf("\nprobe: one more process per client guest pulling 4 KiB, one at a time, through the same connection as the bulk operations (latency-sensitive small pulls during the incast). ack_timeout: the RC ACK timeout exponent (default 17, 0.54 s; 14 is 67 ms).\n") > out
	printf("\nretransmits: rxe `completer_retry_err` (bx) or TCP `RetransSegs`, summed over all guests. bx'"'"'s window counters on the server (peaks in bytes, waits in operations):\n\n") > out
	printf("| setting | rx_peak_bytes | rx_waits | tx_peak_bytes | tx_waits | conn rd_waits | busy_retries | clients: wnd_waits | clients: max wnd_peak_bytes |\n") > out
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n") > out
	for (i = 1; i <= nbx; i++) {
		ph = "incast-" BXSET[i]
		ww = 0; wp = 0
		for (g = 1; g < MG; g++) {
			ww += FLOW[ph, g, "conn_wnd_waits"]
			if (FLOW[ph, g, "conn_max_wnd_peak_bytes"] + 0 > wp)
				wp = FLOW[ph, g, "conn_max_wnd_peak_bytes"]
		}
		printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", BXSET[i], \
		       FLOW[ph, 0, "rx_peak_bytes"], FLOW[ph, 0, "rx_waits"], FLOW[ph, 0, "tx_peak_bytes"], \
		       FLOW[ph, 0, "tx_waits"], FLOW[ph, 0, "conn_rd_waits"], FLOW[ph, 0, "busy_retries"], ww, wp) > out
	}

	# ---- sweep CDFs ----
	for (i = 1; i <= ns; i++)
		for (o = 1; o <= 2; o++)
			for (t = 1; t <= 2; t++) {
				op = o == 1 ? "pull" : "push"; tp = t == 1 ? "bx" : "tcp"
				cdf(key("sweep", tp, op, SZ[i], 1, 1, 0), data "/cdf_" tp "_" op "_" SZ[i] ".dat")
			}

	if (length(PN)) {
		printf("\n## Where the guest kernel time goes in bx and rxe (ftrace)\n\n") > out
		printf("function_graph on every function of bx and rdma_rxe while guest 1 pulls 4 KiB and pushes 64 KiB, one at a time, %s s each ", ENV["secs"]) > out
		printf("(tools/bench/ftrace_prof.sh). Tracing inflates every call; compare rows, not absolute times. Self time excludes traced callees.\n") > out
		for (g = 0; g <= 3; g++) {
			t = "guest" g
			if (!(t in PN))
				continue
			printf("\n%s (%s): %s\n\n| function | calls | inclusive ms | self ms |\n| --- | ---: | ---: | ---: |\n", \
			       t, g == 0 ? "server" : "client", PTOT[t]) > out
			for (i = 1; i <= PN[t] && i <= 15; i++)
				print PROW[t, i] > out
		}
	}
	if ((getline line < fastpath) > 0) {
		printf("\n## Instructions of the portable fast path (callgrind, host)\n\n%s\n", line) > out
		while ((getline line < fastpath) > 0)
			print line > out
	}
	printf("\n## Plots\n\n") > out
	printf("![latency CDF, pull](lat_cdf_pull.png)\n![latency CDF, push](lat_cdf_push.png)\n") > out
	printf("![latency vs size](lat_vs_size.png)\n![throughput vs size](thr_vs_size.png)\n") > out
	printf("![incast](incast_cdf.png)\n![scaling](scaling.png)\n") > out
	if (missing != "") {
		printf("\n**Missing cells:**%s\n", missing) > out
		bad = 1
	}
	close(out)
	targets()
	# A run of the paired rounds alone (-P bw) has no cells but those (or the latency cells of BENCH_LAT_ONLY).
	if (!ncells && !PBN && !PLN) {
		print "report: no bxperf results" > "/dev/stderr"
		bad = 1
	}
	exit bad
}' "$all"
arc=$?
set -e
# The targets go first, after the paragraphs that say what ran.
if [ -f "$dir/report.md.targets" ]; then
	awk -v t="$dir/report.md.targets" '
		!done && /^## / { while ((getline l < t) > 0) print l; print ""; done = 1 }
		{ print }' "$dir/report.md" > "$dir/report.md.new"
	mv "$dir/report.md.new" "$dir/report.md"
	rm -f "$dir/report.md.targets"
fi

# ---- plots ----------------------------------------------------------------

if ! command -v gnuplot > /dev/null; then
	echo "report: gnuplot missing (make deps): no plots" >&2
else
	term="pngcairo noenhanced size 900,560 font 'sans,10'"
	gnuplot -e "set terminal pngcairo" > /dev/null 2>&1 || term="png noenhanced size 900,560"
	(
	cd "$data"
	cdfplot() {	# OP: bx and tcp at 64 B, 64 KiB, 1 MiB; the floor's RTT
		local op=$1 p="" s c
		for s in 64 65536 1048576; do
			for t in bx tcp; do
				f=cdf_${t}_${op}_$s.dat
				[ -s "$f" ] || continue
				c=$([ $t = bx ] && echo 1 || echo 2)
				p+="${p:+, }'$f' using (\$1/1000):2 with steps lw 2 lc $c"
				p+=" dt $([ "$s" = 64 ] && echo 1 || { [ "$s" = 65536 ] && echo 2 || echo 3; })"
				p+=" title '$t $s B'"
			done
		done
		[ -n "$p" ] || return 0
		# The floor at 64 B: qperf round trips as vertical lines.
		local arrows=""
		if [ -s floor.dat ]; then
			arrows=$(awk '$1 == 64 {
				printf "set arrow from %g, graph 0 to %g, graph 1 nohead dt 4 lw 2 lc 3\n", $2 / 1000, $2 / 1000
				printf "set label \"rc_lat 64 B RTT\" at %g, graph 0.95 rotate by 90 right offset char -0.8,0 tc lt 3\n", $2 / 1000
				printf "set arrow from %g, graph 0 to %g, graph 1 nohead dt 4 lw 2 lc 4\n", $3 / 1000, $3 / 1000
				printf "set label \"tcp_lat 64 B RTT\" at %g, graph 0.95 rotate by 90 right offset char -0.8,0 tc lt 4\n", $3 / 1000
			}' floor.dat)
		fi
		gnuplot <<-EOF
		set terminal $term
		set output '../lat_cdf_$op.png'
		$arrows
		set title '$op latency CDF, depth 1 (solid 64 B, dashed 64 KiB, dotted 1 MiB)'
		set logscale x
		set xlabel 'latency, ms (whole operation)'
		set ylabel 'fraction of operations'
		set key bottom right
		set grid
		plot $p
		EOF
	}
	cdfplot pull
	cdfplot push
	if [ -s sweep_pull.dat ]; then
		floor=
		[ -s floor.dat ] && floor=", 'floor.dat' using 1:(\$2/1000) with linespoints lw 2 lc 3 title 'qperf rc_lat RTT', 'floor.dat' using 1:(\$3/1000) with linespoints lw 2 lc 4 title 'qperf tcp_lat RTT'"
		gnuplot <<-EOF
		set terminal $term
		set output '../lat_vs_size.png'
		set title 'p50 latency vs size, depth 1'
		set logscale xy
		set xlabel 'bytes'
		set ylabel 'ms'
		set key top left
		set grid
		plot 'sweep_pull.dat' using 1:(\$2/1000) with linespoints lw 2 lc 1 title 'bx pull', \
		     'sweep_pull.dat' using 1:(\$3/1000) with linespoints lw 2 lc 2 title 'tcp pull', \
		     'sweep_push.dat' using 1:(\$2/1000) with linespoints lw 2 lc 1 dt 2 title 'bx push', \
		     'sweep_push.dat' using 1:(\$3/1000) with linespoints lw 2 lc 2 dt 2 title 'tcp push' $floor
		EOF
		floor=
		[ -s floor.dat ] && floor=", 'floor.dat' using 1:4 with linespoints lw 2 lc 3 title 'qperf rc_bw', 'floor.dat' using 1:5 with linespoints lw 2 lc 4 title 'qperf tcp_bw'"
		gnuplot <<-EOF
		set terminal $term
		set output '../thr_vs_size.png'
		set title 'throughput vs size (one client process; d8: 8 in flight)'
		set logscale xy
		set xlabel 'bytes'
		set ylabel 'MB/s'
		set key top left
		set grid
		plot 'sweep_pull.dat' using 1:6 with linespoints lw 2 lc 1 title 'bx pull', \
		     'sweep_pull.dat' using 1:(\$8 > 0 ? \$8 : 1/0) with linespoints lw 2 lc 1 dt 3 title 'bx pull d8', \
		     'sweep_pull.dat' using 1:7 with linespoints lw 2 lc 2 title 'tcp pull', \
		     'sweep_pull.dat' using 1:(\$9 > 0 ? \$9 : 1/0) with linespoints lw 2 lc 2 dt 3 title 'tcp pull d8', \
		     'sweep_push.dat' using 1:6 with linespoints lw 2 lc 1 dt 2 title 'bx push', \
		     'sweep_push.dat' using 1:7 with linespoints lw 2 lc 2 dt 2 title 'tcp push' $floor
		EOF
	fi
	p=""
	for st in off on small tcp; do
		for op in pull push; do
			f=incast_${st}_$op.dat
			[ -s "$f" ] || continue
			c=$(case $st in off) echo 1 ;; on) echo 3 ;; small) echo 4 ;; *) echo 2 ;; esac)
			p+="${p:+, }'$f' using (\$1/1000):2 with steps lw 2 lc $c dt $([ $op = pull ] && echo 1 || echo 2) title '$st $op'"
		done
	done
	if [ -n "$p" ]; then
		gnuplot <<-EOF
		set terminal $term
		set output '../incast_cdf.png'
		set title 'incast, 1 MiB pull (solid) and push (dashed): bx window off / on / small, and tcp'
		set logscale x
		set xlabel 'completion latency, ms'
		set ylabel 'fraction of operations'
		set key bottom right
		set grid
		plot $p
		EOF
	fi
	if [ -s procs_4096.dat ] || [ -s peers_4096.dat ]; then
		pl() {	# FILE-PREFIX COLUMN-BX COLUMN-TCP
			local p="" s f
			for s in 4096 65536; do
				f=$1_$s.dat
				[ -s "$f" ] || continue
				p+="${p:+, }'$f' using 1:$2 with linespoints lw 2 lc 1 dt $([ $s = 4096 ] && echo 1 || echo 2) title 'bx $s B'"
				p+=", '$f' using 1:$3 with linespoints lw 2 lc 2 dt $([ $s = 4096 ] && echo 1 || echo 2) title 'tcp $s B'"
			done
			echo "${p:-1/0 notitle}"
		}
		gnuplot <<-EOF
		set terminal ${term/900,560/1000,800}
		set output '../scaling.png'
		set multiplot layout 2,2 title 'pull, depth 1 per process: 4 KiB (solid) and 64 KiB (dashed)'
		set grid
		set key top left
		set xtics 1
		set xlabel 'processes on one client guest'
		set ylabel 'ops/s, all processes'
		plot $(pl procs 2 3)
		set xlabel 'client guests, 1 process each'
		plot $(pl peers 2 3)
		set xlabel 'processes on one client guest'
		set ylabel 'server machine CPU, µs per op'
		plot $(pl procs 4 5)
		set xlabel 'client guests, 1 process each'
		plot $(pl peers 4 5)
		unset multiplot
		EOF
	fi
	) > "$data/gnuplot.log" 2>&1 || echo "report: gnuplot failed: $data/gnuplot.log" >&2
fi
echo "report: $dir/report.md ($(find "$dir" -maxdepth 1 -name '*.png' | wc -l) plots)"
exit "$arc"
