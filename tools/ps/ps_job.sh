#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: a parameter-server workload over bx and over kernel TCP in
# qemu guests, one after the other in one boot, and a side-by-side table.
#
#   tools/ps/ps_job.sh [-n GUESTS] [-w THREADS] [-d SECS] [-m MODES]
#                      [-T TRANSPORTS] [-k FLAVOR] [-o DIR] [-t SECS]
#                      [-S SERVER_ARGS] [-W WORKER_ARGS] [-f FABRIC]
#
#   -n GUESTS      2 to 4 (default 3): guest 0 serves, the others work
#   -w THREADS     worker threads per worker guest (default 3)
#   -d SECS        measured seconds per phase (default 20)
#   -m MODES       "train inference" (default), or one of them
#   -T TRANSPORTS  "bx tcp" (default), or one of them
#   -k FLAVOR      guest kernel: stock (default) or debug
#   -o DIR         keep the run here (default: $BX_BUILD/vm/runs/ps-...)
#   -t SECS        per-guest timeout (default: computed from the above)
#   -S ARGS        extra arguments for "bxps server"
#   -W ARGS        extra arguments for "bxps worker"
#   -f FABRIC      three or four guests' switch: lossless (bxswitch,
#                  the default: it pauses a sender instead of dropping,
#                  as a RoCE fabric with PFC does; the table counts its
#                  pauses per phase) or lossy (vde_switch: it drops a
#                  frame whose destination is full; run.sh)
#   -r DIR         no run: print the table of the run kept in DIR again
#                  (give the same -n/-w/-d/-m/-T as that run)
#
# Needs the guest image with bxps in it: make stage vm (BX_BUILD, default
# build/, as for run.sh). Exit status: 0 if every guest passed and no
# worker or server reported an error, 1 otherwise, 2 on bad usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export BX_BUILD=${BX_BUILD:-$top/build}
# shellcheck source=SCRIPTDIR/../testing/vm/switch-lib.sh
. "$top/tools/testing/vm/switch-lib.sh"

n=3 threads=3 secs=20 modes="train inference" transports="bx tcp"
flavor=stock outdir='' tmo='' sargs='' wargs='' report_only='' fabric=lossless
while getopts "n:w:d:m:T:k:o:t:S:W:r:f:" opt; do
	case $opt in
	n) n=$OPTARG ;;
	w) threads=$OPTARG ;;
	d) secs=$OPTARG ;;
	m) modes=$OPTARG ;;
	T) transports=$OPTARG ;;
	k) flavor=$OPTARG ;;
	o) outdir=$OPTARG ;;
	t) tmo=$OPTARG ;;
	S) sargs=$OPTARG ;;
	W) wargs=$OPTARG ;;
	r) report_only=$OPTARG ;;
	f) fabric=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[[ $n =~ ^[2-4]$ ]] || { echo "ps_job: -n must be 2..4" >&2; exit 2; }
[[ $threads =~ ^[0-9]+$ && $secs =~ ^[0-9]+$ ]] ||
	{ echo "ps_job: -w and -d take numbers" >&2; exit 2; }

nphases=$(($(wc -w <<< "$modes") * $(wc -w <<< "$transports")))
start=$(date +%s)
rc=0

# Progress: forward the phase lines and failures as the guests write them.
# seen[g] is the byte offset up to the last complete line forwarded. At
# each of guest 0's phase lines the lossless switch reports what it
# counted (switch-lib.sh), so that its pauses are told per phase, to
# within the 2 s of the loop; between phases they are named "-".
declare -A seen
progress() {
	local LC_ALL=C f g off data ph what
	for ((g = 0; g < n; g++)); do
		f=$outdir/g$g/result.log
		[ -f "$f" ] || continue
		off=${seen[$g]:-0}
		data=$(tail -c +"$((off + 1))" "$f"; echo x)
		data=${data%x}
		[[ $data == *$'\n'* ]] || continue
		data=${data%$'\n'*}$'\n'
		seen[$g]=$((off + ${#data}))
		printf '%s' "$data" | tr -d '\r' |
			grep -aE '^(ps-phase|ps-worker|ps-guest|bxrig: ready)' |
			sed "s/^/ps_job: [$(($(date +%s) - start))s] g$g: /" || true
		[ "$g" -eq 0 ] || continue
		while read -r _ ph what _; do
			[ "$what" = start ] || ph=-
			switch_mark "$outdir" "$ph"
		done < <(printf '%s' "$data" | tr -d '\r' | grep -a '^ps-phase ')
	done
}

# Boot the guests; sets rc to run.sh's exit status.
run_job() {
	env=$BX_BUILD/vm/$flavor/env
	[ -f "$env" ] || { echo "ps_job: $env missing: make stage vm" >&2; exit 2; }
	[ -x "$BX_BUILD/stage/bin/bxps" ] ||
		{ echo "ps_job: bxps is not staged: make stage vm" >&2; exit 2; }
	# shellcheck disable=SC1090,SC2153
	initrd=$(. "$env"; echo "$INITRD")
	if [ "$BX_BUILD/stage/bin/bxps" -nt "$initrd" ] ||
	   { [ -x "$BX_BUILD/bin/bxps" ] &&
	     [ "$BX_BUILD/bin/bxps" -nt "$BX_BUILD/stage/bin/bxps" ]; }; then
		echo "ps_job: warning: the guest image is older than bxps (make stage vm)" >&2
	fi

	[ -n "$tmo" ] || tmo=$((nphases * (secs + 60) + 120))
	if [ -z "$outdir" ]; then
		mkdir -p "$BX_BUILD/vm/runs"
		outdir=$(mktemp -d "$BX_BUILD/vm/runs/ps-$(date +%H%M%S)-XXXX")
	fi
	mkdir -p "$outdir"

	gargs=()
	for ((i = 0; i < n; i++)); do
		gargs+=(-g "$i:$here/ps_guest.sh")
	done

	echo "ps_job: $n guests (1 server, $((n - 1)) workers x $threads threads)," \
		"modes: $modes; transports: $transports; ${secs}s per phase;" \
		"logs in $outdir"
	start=$(date +%s)
	# A guest that crashed in rxe alone met the known guest crash that
	# QEMU 7.2's cmpxchg16b caused (testing.rst; run.sh exits 3),
	# or a guest's link check failed before RDMA started (exit 4):
	# the job runs once more, and the failed run stays in
	# OUTDIR.rxe-crash or OUTDIR.rig-network.
	for try in 1 2; do
		boot_once
		[ "$try" -eq 1 ] && { [ "$rc" -eq 3 ] || [ "$rc" -eq 4 ]; } || break
		why=rxe-crash msg="a guest crashed in rxe alone (known, PLATFORM.md)"
		[ "$rc" -eq 4 ] &&
			why=rig-network msg="a guest's link check failed before RDMA started"
		rm -rf "$outdir.$why"
		mv "$outdir" "$outdir.$why"
		mkdir -p "$outdir"
		seen=()
		echo "ps_job: $msg; running the job again (failed run: $outdir.$why)"
	done
}

boot_once() {
	"$top/tools/testing/vm/run.sh" -n "$n" -k "$flavor" -t "$tmo" -o "$outdir" \
		-f "$fabric" "${gargs[@]}" -e "PS_SECS=$secs" -e "PS_THREADS=$threads" \
		-e "PS_MODES=$modes" -e "PS_TRANSPORTS=$transports" \
		-e "PS_SERVER_ARGS=$sargs" -e "PS_WORKER_ARGS=$wargs" -- true \
		> "$outdir/run.log" 2>&1 &
	rpid=$!

	while kill -0 "$rpid" 2>/dev/null; do
		progress
		sleep 2
	done
	rc=0
	wait "$rpid" || rc=$?
	progress
	grep -E '^run\.sh: ' "$outdir/run.log" || true
	if [ "$rc" -ne 0 ]; then
		echo "ps_job: the rig failed (exit $rc); its output: $outdir/run.log"
		grep -E 'FAILED|FAIL:|bxps|splat' "$outdir/run.log" | grep -v ps-hist |
			head -40 || true
	fi
}

if [ -n "$report_only" ]; then
	outdir=$report_only
	[ -f "$outdir/g0/result.log" ] || { echo "ps_job: no run in $outdir" >&2; exit 2; }
else
	run_job
fi

# ---- the table ------------------------------------------------------------

# The switch's counters per phase as records (switch-lib.sh), in
# DIR/switch.jsonl; the table reads them as lines "switch {JSON}".
[ ! -f "$outdir/switch.log" ] || switch_records "$outdir/switch.log" > "$outdir/switch.jsonl"
{
	for ((g = 0; g < n; g++)); do
		tr -d '\r' < "$outdir/g$g/result.log" 2>/dev/null | sed "s/^/g$g /"
	done
	[ ! -f "$outdir/switch.jsonl" ] || sed 's/^/switch /' "$outdir/switch.jsonl"
} > "$outdir/results.txt"

expect=$(( (n - 1) * nphases ))
set +e
awk -v modes="$modes" -v tps="$transports" -v expect="$expect" \
    -v nworkers="$((n - 1))" -v threads="$threads" -v secs="$secs" '
function kv(   i, p) {
	delete F
	for (i = 3; i <= NF; i++) {
		p = index($i, "=")
		if (p)
			F[substr($i, 1, p - 1)] = substr($i, p + 1)
	}
}
function bucket_us(i) { return 2 ^ ((i + 0.5) / per_oct) }
function pctl(key, p,   i, tot, want, c) {
	tot = HN[key]
	if (!tot)
		return ""
	want = p * tot
	c = 0
	for (i = 0; i <= maxb; i++) {
		c += H[key, i]
		if (c >= want && c > 0)
			return bucket_us(i)
	}
	return ""
}
function fmt(x) {
	if (x == "" || x == "-")
		return "-"
	if (x ~ /\//)
		return x
	if (x == int(x))
		return sprintf("%d", x)
	if (x + 0 >= 1000)
		return sprintf("%.0f", x)
	if (x + 0 >= 10)
		return sprintf("%.1f", x)
	return sprintf("%.2f", x)
}
function row(label, metric, a, b,   r) {
	r = "-"
	if (a != "" && b != "" && a !~ /\// && a + 0 > 0)
		r = sprintf("%.2f", b / a)
	printf("%-12s %-24s %12s %12s %8s\n", label, metric, fmt(a), fmt(b), r)
}
function maxv(a, b) { return (a == "" || b + 0 > a + 0) ? b : a }
# jv(J, K): member K of the record J, a string or a number
# (switch_records writes them flat, their strings without escapes).
function jv(j, k,   v) {
	if (!match(j, "\"" k "\":(\"[^\"]*\"|[^,}]*)"))
		return ""
	v = substr(j, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
	gsub(/^"|"$/, "", v)
	return v
}
$2 == "ps-result" {
	kv()
	k = F["mode"] SUBSEP F["transport"] SUBSEP F["op"]
	N[k] += F["n"]; OPS[k] += F["ops_s"]; MB[k] += F["mb_s"]
	SUM[k] += F["n"] * F["mean_us"]; CPU[k] += F["n"] * F["cpu_us_per_op"]
	ERR[k] += F["errors"]; RET[k] += F["retries"]
	mt = F["mode"] SUBSEP F["transport"]
	if (!((mt, $1) in WSEEN)) {
		WSEEN[mt, $1] = 1
		WC[mt] = maxv(WC[mt], F["conns"])
		WR[mt] = maxv(WR[mt], F["reg_bytes"])
	}
	WOPS[mt] += F["n"]
	WPCPU[mt] += F["n"] * F["proc_cpu_us_per_op"]
	WHCPU[mt] += F["n"] * F["host_cpu_us_per_op"]
	next
}
$2 == "ps-hist" {
	kv()
	per_oct = F["per_oct"]
	k = F["mode"] SUBSEP F["transport"] SUBSEP F["op"]
	nb = split(F["h"], B, ",")
	for (i = 1; i <= nb; i++) {
		split(B[i], P, ":")
		if (P[2] == "")
			continue
		H[k, P[1]] += P[2]; HN[k] += P[2]
		if (P[1] + 0 > maxb)
			maxb = P[1] + 0
	}
	next
}
$2 == "ps-server" {
	kv()
	split(F["tag"], T, ".")
	mt = T[1] SUBSEP F["transport"]
	SC[mt] = F["conns"]; SR[mt] = F["reg_bytes"]
	SCPU[mt] = F["cpu_us_per_op"]; SHCPU[mt] = F["host_cpu_us_per_op"]
	SERR[mt] = F["errors"]; SOPS[mt] = F["ops"]
	nserver++
	if (F["errors"] + 0)
		bad = 1
	next
}
$2 == "ps-worker" {
	kv()
	nworker++
	if (F["status"] != "ok")
		bad = 1
	next
}
$2 == "ps-guest" { bad = 1 }
$1 == "switch" && $2 ~ /^[{]"v":1,"bench":"bxswitch","kind":"result",/ {
	ph = jv($2, "phase")
	if (ph == "-")
		next
	split(ph, T, ".")
	mt = T[1] SUBSEP T[2]
	PAU[mt] += jv($2, "pauses"); PMS[mt] += jv($2, "paused_ms"); SW = 1
	next
}
$2 == "ps-netstat" {
	kv()
	split(F["phase"], T, ".")
	mt = T[1] SUBSEP T[2]
	RTX[mt] += (T[2] == "bx") ? F["rxe_completer_retry_err"] : F["tcp_RetransSegs"]
	next
}
END {
	nm = split(modes, M, " ")
	nt = split(tps, TP, " ")
	if (nt == 2) {
		a = TP[1]; b = TP[2]
	} else {
		a = TP[1]; b = ""
	}
	printf("\n%d worker hosts x %d threads against 1 server host, %d s per phase.\n",
	       nworkers, threads, secs)
	printf("Latency percentiles: merged histograms (8 buckets per octave, +-4.5%%);\n")
	printf("cpu_us/op (thread): CPU of the calling thread per operation;\n")
	printf("MB/s: request + response payload, 10^6 bytes/s, all workers.\n")
	printf("retransmits: rxe completer_retry_err (bx), TCP RetransSegs (tcp).\n")
	if (SW)
		printf("switch pauses: times the lossless switch stopped reading a guest\n" \
		       "whose frames had no room at their destination, as PFC pauses a port.\n")
	for (m = 1; m <= nm; m++) {
		mo = M[m]
		printf("\n== %s ==\n", mo)
		printf("%-12s %-24s %12s %12s %8s\n", "op", "metric", a, b,
		       b != "" ? b "/" a : "")
		split("sparse_pull dense_pull sparse_push dense_push", OPN, " ")
		for (o = 1; o <= 4; o++) {
			op = OPN[o]
			ka = mo SUBSEP a SUBSEP op; kb = mo SUBSEP b SUBSEP op
			if (!(ka in N) && !(kb in N))
				continue
			row(op, "ops/s", OPS[ka], (kb in N) ? OPS[kb] : "")
			row("", "MB/s", MB[ka], (kb in N) ? MB[kb] : "")
			row("", "mean_us", N[ka] ? SUM[ka] / N[ka] : "",
			    N[kb] ? SUM[kb] / N[kb] : "")
			row("", "p50_us", pctl(ka, 0.5), pctl(kb, 0.5))
			row("", "p99_us", pctl(ka, 0.99), pctl(kb, 0.99))
			row("", "p99.9_us", pctl(ka, 0.999), pctl(kb, 0.999))
			row("", "cpu_us/op (thread)", N[ka] ? CPU[ka] / N[ka] : "",
			    N[kb] ? CPU[kb] / N[kb] : "")
			if (RET[ka] + RET[kb] + ERR[ka] + ERR[kb] > 0)
				row("", "errors / ENOBUFS retries",
				    ERR[ka] "/" RET[ka], ERR[kb] "/" RET[kb])
			if (ERR[ka] + ERR[kb] > 0)
				bad = 1
		}
		ma = mo SUBSEP a; mb = mo SUBSEP b
		row("host", "conns, server host", SC[ma], SC[mb])
		row("", "conns, worker host", WC[ma], WC[mb])
		row("", "reg. MiB, server host", SR[ma] != "" ? SR[ma] / 1048576 : "",
		    SR[mb] != "" ? SR[mb] / 1048576 : "")
		row("", "reg. MiB, worker host", WR[ma] != "" ? WR[ma] / 1048576 : "",
		    WR[mb] != "" ? WR[mb] / 1048576 : "")
		row("cpu/op", "worker process", WOPS[ma] ? WPCPU[ma] / WOPS[ma] : "",
		    WOPS[mb] ? WPCPU[mb] / WOPS[mb] : "")
		row("", "worker host (all CPU)", WOPS[ma] ? WHCPU[ma] / WOPS[ma] : "",
		    WOPS[mb] ? WHCPU[mb] / WOPS[mb] : "")
		row("", "server process", SCPU[ma], SCPU[mb])
		row("", "server host (all CPU)", SHCPU[ma], SHCPU[mb])
		row("net", "retransmits, all hosts", RTX[ma], RTX[mb])
		if (SW) {
			row("", "switch pauses", (ma in PAU) ? PAU[ma] : "",
			    (mb in PAU) ? PAU[mb] : "")
			row("", "switch paused ms", (ma in PMS) ? PMS[ma] : "",
			    (mb in PMS) ? PMS[mb] : "")
		}
		row("server", "ops served", SOPS[ma], SOPS[mb])
		row("", "errors", SERR[ma], SERR[mb])
	}
	printf("\n")
	if (nworker != expect) {
		printf("ps_job: %d of %d worker runs reported\n", nworker, expect)
		bad = 1
	}
	if (nserver != nm * nt) {
		printf("ps_job: %d of %d server runs reported\n", nserver, nm * nt)
		bad = 1
	}
	exit bad
}' "$outdir/results.txt"
trc=$?
set -e
grep -h 'FAIL' "$outdir/results.txt" | grep -v '^g[0-9] ps-hist' | head -20 || true
if [ "$rc" -ne 0 ] || [ "$trc" -ne 0 ]; then
	echo "ps_job: FAILED ($(($(date +%s) - start))s; logs in $outdir)"
	exit 1
fi
echo "ps_job: passed ($(($(date +%s) - start))s; logs in $outdir)"
