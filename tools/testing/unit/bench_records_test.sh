#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks' records (tools/bench/README.md, "Records") as the
# programs that run on the host print them, and tools/bench/report.py
# reading them: bxperf over TCP on the loopback, bench_guest.sh's record
# functions (qperf's and perftest's results, the settings, the phases)
# on made-up tool output, ftrace_prof.sh on a made-up trace. KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
bxperf=${BX_BUILD:-$top/build}/bin/bxperf
srv=
trap '[ -z "$srv" ] || kill "$srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
report=$top/tools/bench/report.py

# check FILE PYTHON: every "bench-record " line of FILE (every line of
# a FILE.jsonl) is a record of the schema; then PYTHON runs with recs
# (the records, in order) and lines (FILE's other lines), and fails the
# test by raising.
check() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
recs, lines = [], []
jsonl = sys.argv[1].endswith(".jsonl")
for ln in open(sys.argv[1]):
    if not jsonl and not ln.startswith("bench-record "):
        lines.append(ln.rstrip("\n"))
        continue
    o = json.loads(ln if jsonl else ln[len("bench-record "):])
    assert list(o) == ["v", "bench", "kind", "cell", "metrics"], o
    assert o["v"] == 1 and isinstance(o["cell"], dict) and isinstance(o["metrics"], dict), o
    for k, v in list(o["cell"].items()) + list(o["metrics"].items()):
        assert v is None or isinstance(v, (int, float, str, list)), (k, v)
    recs.append(o)
assert recs, "no records"
exec(sys.argv[2])
EOF
}

echo "TAP version 13"

# ---- bxperf over TCP on the loopback ------------------------------------

port=$((20000 + $$ % 20000))
if [ -x "$bxperf" ]; then
	"$bxperf" server -T tcp -p "$port" > "$tmp/srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		grep -q ready "$tmp/srv.out" && break
		sleep 0.1
	done
	cli() { "$bxperf" client -T tcp -a 127.0.0.1 -p "$port" -d 0.2 -w 1 "$@"; }
	ok "bxperf: a client over TCP runs" \
		sh -c "$(declare -f cli); bxperf=$bxperf port=$port; cli -z 64,4K -q 1 -S -t sweep -k round=2 -k set=on-m2 > $tmp/s.out"
	# Every figure of the line is the record's, -1 as null.
	ok "bxperf: a record per cell and op, its figures the line's" check "$tmp/s.out" '
res = [l for l in lines if l.startswith("bxperf-result ")]
assert len(recs) == len(res) == 2, (len(recs), len(res))
for o, l in zip(recs, res):
    assert (o["bench"], o["kind"]) == ("bxperf", "result"), o
    f = dict(w.split("=", 1) for w in l.split()[1:])
    c, m = o["cell"], o["metrics"]
    assert c == {"tag": "sweep", "transport": "tcp", "op": "pull", "size": int(f["size"]),
                 "depth": 1, "procs": 1, "mix": 0, "round": 2, "set": "on-m2"}, c
    for k, v in f.items():
        if k in c:
            assert str(c[k]) == v, (k, c[k], v)
        elif float(v) < 0:
            assert m[k] is None, (k, m[k], v)
        else:
            assert m[k] == float(v), (k, m[k], v)
    assert m["hist_per_oct"] == 32
    assert sum(n for _, n in m["hist"]) == m["n"] > 0, m
    assert [b for b, _ in m["hist"]] == sorted({b for b, _ in m["hist"]})
'
	ok "bxperf: -S asked the server" check "$tmp/s.out" '
assert all(o["metrics"]["srv_cpu_us_op"] is not None for o in recs)'
	cli -z 64 -t x > "$tmp/n.out" 2>&1
	ok "bxperf: without -S the server's figures are null" check "$tmp/n.out" '
assert [o["metrics"]["srv_cpu_us_op"] for o in recs] == [None]
assert recs[0]["metrics"]["srv_busy_pct"] is None'
	cli -o mix -P 2 -z 4K -t incast-on > "$tmp/m.out" 2>&1
	ok "bxperf: a mixed cell has a pull and a push record" check "$tmp/m.out" '
assert sorted((o["cell"]["op"], o["cell"]["mix"], o["cell"]["procs"]) for o in recs) == \
    [("pull", 1, 2), ("push", 1, 2)], recs'
	# report.py on a run of these records: a guest 1 that ran the
	# sweep over TCP (no bx: missing cells, exit 1).
	mkdir -p "$tmp/run/run/g0" "$tmp/run/run/g1"
	echo 'bench-record {"v":1,"bench":"bench_guest","kind":"env","cell":{"kernel":"host","guests":2,"cpus":2,"mem_kb":1048576,"secs":1,"incast_secs":20,"incast_procs":2,"incast_depth":4,"incast_rate":0},"metrics":{}}' \
		> "$tmp/run/run/g0/result.log"
	cp "$tmp/s.out" "$tmp/run/run/g1/result.log"
	sed -i 's/"round":2,"set":"on-m2"//; s/"mix":0,}/"mix":0}/' "$tmp/run/run/g1/result.log"
	python3 "$report" "$tmp/run" > "$tmp/run.out" 2>&1
	ok "report: reads bxperf's records: exits 1, bx's cells missing" \
		grep -q '^[*][*]Missing cells:[*][*] sweep/pull/64 sweep/pull/4096$' "$tmp/run/report.md"
	ops=$(python3 -c 'import json,sys; print([json.loads(l[13:]) for l in open(sys.argv[1]) if l.startswith("bench-record ")][0]["metrics"]["n"])' \
		"$tmp/run/run/g1/result.log")
	ok "report: the sweep's row has bxperf's operations" grep -q "^| 64 B | .* | 0/$ops | -/0 |\$" "$tmp/run/report.md"
	ok "report: the CDF from the record's histogram" \
		sh -c "[ \"\$(tail -1 '$tmp/run/data/cdf_tcp_pull_64.dat' | cut -d' ' -f2)\" = 1 ]"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
else
	for t in "a client over TCP runs" "a record per cell and op" "-S asked the server" \
		 "without -S the server's figures are null" "a mixed cell" \
		 "report: bx's cells missing" "report: the sweep's row" "report: the CDF"; do
		skip "bxperf: $t" "no $bxperf (make all)"
	done
fi

# ---- bench_guest.sh's records ---------------------------------------------

# Its record functions, from "# ---- records" to "# ---- end of records".
sed -n '/^# ---- records/,/^# ---- end of records/p' "$top/tools/bench/bench_guest.sh" > "$tmp/rec.sh"
cat >> "$tmp/rec.sh" <<'EOF'
ID=0
printf 'rc_lat:\n    latency  =  45.25 us\nrc_bw:\n    bw  =  1.5 GB/sec\n' |
	QCELL='"phase":"rds","round":2' qperf_parse 64 1
printf 'tcp_lat:\n    latency  =  45200 ns\n' | qperf_parse 4096 2
printf ' #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99%% percentile[usec] 99.9%% percentile[usec]\n 64 100 5.10 20.00 6.00 6.20 1.0 10.0 20.0\n' |
	perftest_parse ib_send_lat
printf ' #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]\n 65536 100 500.00 480.50 0.007\n' |
	perftest_parse ib_write_bw
env_rec kernel=6.12.0-1-amd64 guests=2 secs=3 incast_rate=0 'odd=a"b\c'
say "incast.off start"
EOF
sh "$tmp/rec.sh" > "$tmp/g.out" 2>&1
ok "bench_guest.sh: qperf's records, QCELL in the cell" check "$tmp/g.out" '
q = [o for o in recs if o["bench"] == "qperf"]
assert [(o["cell"], o["metrics"]) for o in q] == [
    ({"test": "rc_lat", "size": 64, "pass": 1, "phase": "rds", "round": 2}, {"lat_us": 45.2}),
    ({"test": "rc_bw", "size": 64, "pass": 1, "phase": "rds", "round": 2}, {"mb_s": 1500.0}),
    ({"test": "tcp_lat", "size": 4096, "pass": 2}, {"lat_us": 45.2})], q
assert "bench-floor tool=qperf test=rc_lat size=64 pass=1 lat_us=45.2" in lines'
ok "bench_guest.sh: perftest's records" check "$tmp/g.out" '
p = [(o["cell"], o["metrics"]) for o in recs if o["bench"] == "perftest"]
assert p == [({"test": "ib_send_lat", "size": 64}, {"min_us": 5.1, "typ_us": 6.0, "avg_us": 6.2,
               "p99_us": 10.0, "p999_us": 20.0, "max_us": 20.0}),
             ({"test": "ib_write_bw", "size": 65536}, {"mb_s": 480.5})], p'
ok "bench_guest.sh: the settings and a phase" check "$tmp/g.out" '
e = [(o["kind"], o["cell"]) for o in recs if o["bench"] == "bench_guest"]
assert e == [("env", {"kernel": "6.12.0-1-amd64", "guests": 2, "secs": 3, "incast_rate": 0,
                      "odd": "a\"b\\c"}),
             ("phase", {"phase": "incast.off", "state": "start"})], e
assert "bench-phase incast.off start" in lines'

# ---- ftrace_prof.sh ---------------------------------------------------------

# A made-up tracefs: bx_pull (5 us) calling rxe_post (2 us) once.
t=$tmp/tracefs
mkdir -p "$t/options"
: > "$t/current_tracer"
cat > "$t/trace" <<'EOF'
# tracer: function_graph
 1)  bxperf-42  |               |  bx_pull [bx]() {
 1)  bxperf-42  |   2.000 us    |    rxe_post [rdma_rxe]();
 1)  bxperf-42  |   5.000 us    |  } /* bx_pull [bx] */
EOF
BENCH_TRACEFS=$t TMPDIR=$tmp sh "$top/tools/bench/ftrace_prof.sh" stop guest1 > "$tmp/f.out" 2>&1
ok "ftrace_prof.sh: its records, self time less the callees'" check "$tmp/f.out" '
assert [(o["kind"], o["cell"], o["metrics"]) for o in recs] == [
    ("func", {"tag": "guest1", "func": "bx_pull[bx]"}, {"calls": 1, "incl_us": 5.0, "self_us": 3.0}),
    ("func", {"tag": "guest1", "func": "rxe_post[rdma_rxe]"},
     {"calls": 1, "incl_us": 2.0, "self_us": 2.0}),
    ("total", {"tag": "guest1"}, {"bx_us": 3.0, "rxe_us": 2.0, "wall_s": recs[2]["metrics"]["wall_s"]})], recs
assert lines[0] == "bench-profile guest1 bx_pull[bx] 1 5.0 3.0", lines'
# ... and the report's section from them.
mkdir -p "$tmp/prof/run/g0" "$tmp/prof/run/g1"
cp "$tmp/run/run/g0/result.log" "$tmp/prof/run/g0/" 2>/dev/null ||
	sed -n '/"kind":"env"/p' "$tmp/g.out" > "$tmp/prof/run/g0/result.log"
cp "$tmp/f.out" "$tmp/prof/run/g1/result.log"
python3 "$report" "$tmp/prof" > /dev/null 2>&1
ok "report: the profile from ftrace_prof.sh's records" \
	grep -q '^| bx_pull\[bx\] | 1 | 0[.]0[01] | 0[.]00 |$' "$tmp/prof/report.md"

# ---- bench.sh's samples of the host's load -----------------------------------

eval "$(sed -n '/^\thostload() {/,/^\t}/p' "$top/tools/bench/bench.sh")"
run=$tmp/host
mkdir -p "$run"
hostload start
hostload end
ok "bench.sh: a record of each sample of the host's load, its figures the line's" \
	check "$tmp/host/host.jsonl" '
assert [(o["bench"], o["kind"]) for o in recs] == [("bench", "load")] * 2, recs
for o, ln in zip(recs, open(sys.argv[1][:-len("jsonl")] + "txt")):
    c, m = o["cell"], o["metrics"]
    w = ln.split()
    assert w[:2] == [c["when"], c["time"]] and w[2] == "nproc=%d" % c["nproc"], (w, o)
    assert [float(x) for x in w[3][len("loadavg="):].split("/")] == \
        [m["load1"], m["load5"], m["load15"]], (w, o)
    assert w[4] == "qemu=%d" % m["qemu"], (w, o)
assert [o["cell"]["when"] for o in recs] == ["start", "end"], recs'

# ---- the lossless switch's counters per phase ----------------------------------

# A made-up switch.log as run.sh's bxswitch and switch_mark write it:
# counters before any phase (none's), a phase's, a message of the
# switch's own, the last phase's at its exit.
. "$top/tools/testing/vm/switch-lib.sh"
cat > "$tmp/switch.log" <<'EOF'
bxswitch: port0=01:rx_frames=5,pauses=0,paused_ms=0 frames=5 bytes=300 pauses=0 paused_ms=0
bxswitch-phase incast.off
bxswitch: port 3: frame length 99999
bxswitch: port0=01:rx_frames=9,pauses=2,paused_ms=7 port1=02:rx_frames=1,pauses=1,paused_ms=1 frames=10 bytes=5000 pauses=3 paused_ms=1500
bxswitch-phase incast.on
bxswitch: port0=01:rx_frames=1,pauses=0,paused_ms=0 frames=1 bytes=64 pauses=0 paused_ms=0
EOF
switch_records "$tmp/switch.log" > "$tmp/switch.jsonl"
ok "switch-lib.sh: a record per phase, its totals, not the ports'" check "$tmp/switch.jsonl" '
assert [(o["bench"], o["kind"], o["cell"], o["metrics"]) for o in recs] == [
    ("bxswitch", "result", {"phase": "incast.off"},
     {"frames": 10, "bytes": 5000, "pauses": 3, "paused_ms": 1500}),
    ("bxswitch", "result", {"phase": "incast.on"},
     {"frames": 1, "bytes": 64, "pauses": 0, "paused_ms": 0})], recs'

# ---- bench_convert.py, small ----------------------------------------------------

if /usr/bin/python3 -c 'import numpy' 2> /dev/null; then
	PYTHONPATH=$top/python /usr/bin/python3 "$top/python/tests/bench_convert.py" \
		--values 64000 --reps 3 > "$tmp/convert.txt" 2>&1
	ok "bench_convert.py: a record after each line, its figures the line's" check "$tmp/convert.txt" '
res = [l for l in lines if l.startswith("convert: ")]
assert len(recs) == len(res) >= 3 and len(lines) == len(res), (recs, lines)
for o, l in zip(recs, res):
    assert (o["bench"], o["kind"]) == ("bench_convert", "result"), o
    f = dict(w.split("=", 1) for w in l.split()[1:])
    c, m = o["cell"], o["metrics"]
    assert c == {"case": f["case"], "values": int(f["values"]), "size": int(f["bytes"]),
                 "reps": 3}, (c, f)
    assert m == {k: float(f[k]) for k in ("ms", "memcpy_ms", "ratio", "overhead_us")}, (m, f)
assert recs[0]["cell"]["case"] == "memcpy"'
else
	skip "bench_convert.py: a record after each line" "no numpy for /usr/bin/python3"
fi

# ---- fastpath.sh, on a made-up profile ----------------------------------------------

# A valgrind that writes a made-up callgrind profile: main calls
# fp_op_push_eager twice (100 Ir of its own), which calls bx_wire_build
# twice (400 Ir each); fp_op_pull_rdv never runs.
mkdir -p "$tmp/bin"
cat > "$tmp/fastpath.prof" <<'EOF'
fn=main
0 10
cfn=fp_op_push_eager
calls=2 0
0 900
fn=fp_op_push_eager
0 100
cfn=bx_wire_build
calls=2 0
0 800
fn=bx_wire_build
0 800
EOF
printf '#!/bin/sh\nfor a; do case $a in --callgrind-out-file=*) cp %s "${a#*=}" ;; esac; done\n' \
	"$tmp/fastpath.prof" > "$tmp/bin/valgrind"
chmod +x "$tmp/bin/valgrind"
PATH=$tmp/bin:$PATH FASTPATH_BASE='' bash "$top/tools/bench/fastpath.sh" /bin/true "$tmp/fp" 2 \
	> "$tmp/fp.out" 2>&1
ok "fastpath.sh: a record per whole operation, its Ir fastpath.md's" check "$tmp/fp/fastpath.jsonl" '
ops = [(o["cell"], o["metrics"]) for o in recs if o["kind"] == "op"]
assert ops == [({"op": "fp_op_push_eager", "name": "eager push, 64 B"}, {"ir": 450, "base_ir": None}),
               ({"op": "fp_op_pull_rdv", "name": "rendezvous pull, 1 MiB"},
                {"ir": None, "base_ir": None})], ops
md = open(sys.argv[1][:-len("jsonl")] + "md").read()
assert "| eager push, 64 B | 450 |" in md and "| rendezvous pull, 1 MiB | - |" in md, md'
ok "fastpath.sh: a record per step and bx function, calls and Ir per call" check "$tmp/fp/fastpath.jsonl" '
f = [(o["cell"]["func"], o["metrics"]) for o in recs if o["kind"] == "func"]
assert f == [("bx_wire_build", {"calls": 2, "ir": 400.0}),
             ("fp_op_push_eager", {"calls": 2, "ir": 450.0})], f'

# The plan last (TAP allows it): the count is what ran.
echo "1..$n"
totals
