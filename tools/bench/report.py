#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of a `make bench` run.

Tables in DIR/report.md, data in DIR/data/, plots in DIR/*.png (gnuplot).

    tools/bench/report.py DIR [--update-doc FILE]

Reads the records of a run (tools/bench/README.md, "Records": lines
"bench-record {JSON}", or in a file NAME.jsonl one JSON object a line):
in DIR/run/gN/result.log (bench_guest.sh's output on every guest) and
DIR/run-multi/gN/result.log (the multi-client boot), of whose other
lines it reads only failures; in DIR/run*/switch.jsonl (bench.sh -f
lossless: the switch's pauses per phase), DIR/run/host.jsonl (bench.sh:
the host's load), DIR/convert.txt (bench_convert.py's output) and
DIR/fastpath.jsonl (fastpath.sh's), if present; and in
DIR/torch/gN/result.log (phase torch: the PyTorch example over bx and
over torch RPC, tools/ps/torch_job.sh) and DIR/torch/torch.jsonl (the
job's settings), if present. DIR/fastpath.md goes into the report as it
is. Exit status 1 if the run is missing (neither DIR/run nor
DIR/torch), a guest reported a failure, a cell is missing, or the
PyTorch example lacks a transport's results or reached different
parameters. A record that is not one (not JSON, another version, or of
a kind whose fields FIELDS lists without one of them or with another
type) is a failure. Runs from before a producer wrote records report
without its part (DIR/run/host.txt, switch.log, convert.txt without
records, fastpath.md alone, DIR/torch/torch.env); the PyTorch example's
lines without their records (embedding_ps.py without --records) are no
results, and its "run" records without the kernel are failures.

--update-doc FILE also puts a summary of this run into the
reStructuredText document FILE (Documentation/performance-figures.rst),
one group per part the run measured: "matrix" (the targets and bx
against TCP), "torch" (the PyTorch example), "convert" (tensors to bx on
the host), "fastpath" (DIR/fastpath.jsonl's whole operations), and with
BENCH_BASE "base-bw" and "base-lat" (the module of that revision against
this tree's in phase bw's rounds: 1 MiB throughput, and with
BENCH_LAT_ONLY or after each setting's 1 MiB cells, latency). A
group goes between the lines ".. bench-summary-begin: GROUP" and
".. bench-summary-end: GROUP", replacing what was there, or after the
last group if FILE has none of that name; the groups this run did not
measure stay as they were. Exit status 2 if FILE has no such markers or
they are malformed.

Conventions: latency is the time of a whole operation (request and
response). qperf and perftest report one-way latency (half a ping-pong),
so their latencies are doubled here to compare round trips ("RTT").
Results of several client guests in one cell are merged: operations and
MB/s summed, percentiles from the merged histograms (32 buckets per
octave, +-1.1%), CPU per operation weighted by operations.

This is a rewrite of an awk program and prints what it printed: numbers
carry awk's conversions (see "Values" below), so that the tables read
the same from one version to the other.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Union

# ---- values ---------------------------------------------------------------
#
# A value is the text of an input field (str), a computed number (float)
# or nothing (None: a field or cell that was not there). As in awk, text
# is a number where one is needed (its leading number, else 0), nothing
# is "" or 0, and a number shows as an integer if it is one, else with 6
# significant digits.

Value = Union[str, float, int, None]

_NUMBER = re.compile(r"[ \t\n]*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_INT_MAX = 2147483647   # mawk's integers: wider ones show as %.6g, %d clamps


def anum(v: Value) -> float:
    """The number a value stands for: text's leading number, else 0."""
    if v is None:
        return 0.0
    if isinstance(v, str):
        m = _NUMBER.match(v)
        return float(m.group(0)) if m else 0.0
    return float(v)


def looks_numeric(s: str) -> bool:
    """Whether awk takes input field s for a number (compares it as one)."""
    m = _NUMBER.match(s)
    return bool(m) and s[m.end():].strip(" \t\n") == ""


def astr(v: Value) -> str:
    """A value as text: a number as an integer if it is one, else %.6g."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    x = float(v)
    if x == x and -_INT_MAX <= x <= _INT_MAX and x == int(x):
        return "%d" % x
    return "%.6g" % x


def blank(v: Value) -> bool:
    """Whether a value is nothing or empty text (awk's v == "")."""
    return v is None or v == ""


def fmt_d(v: Value) -> str:
    """printf's %d of a value (truncated, clamped to 32 bits as mawk does)."""
    x = anum(v)
    if x != x:
        return "0"
    return "%d" % int(max(-_INT_MAX, min(_INT_MAX, x)))


_CONV = re.compile(r"%(\.[0-9]+)?([sdgf%])")


def sprintf(fmt: str, *args: Value) -> str:
    """printf with awk's conversions: %s of a number, %d/%f/%g of text."""
    it = iter(args)

    def conv(m: re.Match[str]) -> str:
        prec, c = m.group(1) or "", m.group(2)
        if c == "%":
            return "%"
        v = next(it)
        if c == "s":
            return astr(v)
        if c == "d":
            return fmt_d(v)
        return ("%" + prec + c) % anum(v)
    return _CONV.sub(conv, fmt)


def pow2(x: float) -> float:
    """2 ** x, an infinity where Python would raise."""
    try:
        return 2.0 ** x
    except OverflowError:
        return float("inf")


def div(a: float, b: float) -> float:
    """a / b as awk computes it: no error on 0, an infinity or NaN."""
    if b == 0:
        return float("nan") if a == 0 else float("inf") if a > 0 else float("-inf")
    return a / b


# ---- figures as shown -----------------------------------------------------

def _digits(x: float) -> str:
    """x with 3 or 4 significant digits."""
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 10 else \
        "%.2f" % x if x >= 1 else "%.3f" % x


def ms(us: Value) -> str:
    """Microseconds shown in ms, "-" if not measured."""
    if blank(us) or anum(us) < 0:
        return "-"
    return _digits(anum(us) / 1000)


def num(x: Value) -> str:
    """A number shown, "-" if not measured."""
    if blank(x) or anum(x) < 0:
        return "-"
    return _digits(anum(x))


def rawratio(a: Value, b: Value) -> Optional[float]:
    """a / b, None unless both are positive numbers."""
    if blank(a) or blank(b) or anum(a) <= 0 or anum(b) <= 0:
        return None
    return anum(a) / anum(b)


def show(x: Value) -> str:
    """A ratio shown ("%.2f" or "-"); the verdicts compare the unrounded one."""
    return "-" if blank(x) else "%.2f" % anum(x)


def ratio(a: Value, b: Value) -> str:
    """a / b shown."""
    return show(rawratio(a, b))


def sz(b: Value) -> str:
    """A size in bytes shown: "64 B", "4 KiB", "1 MiB"."""
    x = anum(b)
    if x >= 1048576:
        return astr(x / 1048576) + " MiB"
    if x >= 1024:
        return astr(x / 1024) + " KiB"
    return astr(b) + " B"


def median(xs: list[float]) -> Optional[float]:
    """The median of xs, None if empty."""
    if not xs:
        return None
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def span(xs: list[float]) -> str:
    """The range of xs shown ("0.90-1.10"), "-" if empty."""
    return show(min(xs)) + "-" + show(max(xs)) if xs else "-"


# ---- records --------------------------------------------------------------
#
# What the benchmarks measured comes as records (tools/bench/README.md,
# "Records"): lines "bench-record {JSON}" among the guests' output, each
# object {"v": 1, "bench": PROGRAM, "kind": KIND, "cell": {...},
# "metrics": {...}}. The rest of the output is for people; of it the
# report reads only failures (Run.add_line).

RECORD_PREFIX = "bench-record "
RECORD_VERSION = 1


@dataclass
class Record:
    """A record as the report uses it: the guest whose output had it,
    whether that was the multi-client boot, its bench and kind, and its
    cell's and metrics' fields in one dict (null as "", awk's nothing)."""
    guest: str
    bench: str
    kind: str
    fields: dict[str, object]
    multi: bool = False

    def get(self, k: str) -> Value:
        """Field k, None if the record has none (a list as it is)."""
        return self.fields.get(k)  # type: ignore[return-value]

    def text(self, k: str) -> str:
        """Field k as text, "" if the record has none."""
        v = self.fields.get(k)
        return astr(v) if isinstance(v, (str, int, float)) else ""

    def nums(self, k: str) -> list[float]:
        """Field k, a list of numbers ("nums" of FIELDS); [] if none."""
        v = self.fields.get(k)
        return [float(x) for x in v] if isinstance(v, list) else []


class RecordError(ValueError):
    """A record that is not one."""


# The kinds whose fields the report checks: (bench, kind): the fields of
# the cell and of the metrics, each with its type (TYPES). A record of
# such a kind without one of them, or with another type, is not one.
FIELDS: dict[tuple[str, str], tuple[dict[str, str], dict[str, str]]] = {
    ("bench", "load"): ({"when": "str", "time": "str", "nproc": "num"},
                        {"load1": "num", "load5": "num", "load15": "num", "qemu": "num"}),
    ("bxswitch", "result"): ({"phase": "str"}, {"frames": "num", "bytes": "num", "pauses": "num",
                                                "paused_ms": "num"}),
    ("bench_convert", "result"): ({"case": "str", "values": "num", "size": "num", "reps": "num"},
                                  {"ms": "num", "memcpy_ms": "num", "ratio": "num",
                                   "overhead_us": "num"}),
    ("fastpath", "op"): ({"op": "str", "name": "str"}, {"ir": "num?", "base_ir": "num?"}),
    ("fastpath", "func"): ({"func": "str"}, {"calls": "num", "ir": "num"}),
    ("embedding_ps", "run"): ({"transport": "str", "what": "str", "workers": "num",
                               "servers": "num", "rows": "num", "dim": "num", "steps": "num",
                               "kernel": "str"},
                              {}),
    ("embedding_ps", "result"): ({"transport": "str", "worker": "num"},
                                 {f: "num" for f in ("steps", "step_ms_mean", "step_ms_p50",
                                                     "step_ms_p99", "pull_us_p50", "pull_us_p99",
                                                     "push_us_p50", "push_us_p99",
                                                     "cpu_ms_per_step", "loss_first",
                                                     "loss_last")}),
    ("embedding_ps", "steps"): ({"transport": "str", "worker": "num", "from": "num"},
                                {"step_ms": "nums", "pull_us": "nums", "push_us": "nums"}),
    ("embedding_ps", "servers"): ({"transport": "str", "servers": "num"},
                                  {"server_cpu_ms_per_step": "num",
                                   "server_host_cpu_ms_per_step": "num", "keys_pulled": "nums",
                                   "keys_pushed": "nums", "rdma_pkts": "num", "tcp_segs": "num"}),
    ("embedding_ps", "params"): ({"transport": "str", "sha256": "str"}, {}),
    ("embedding_ps", "unavailable"): ({"transport": "str", "why": "str"}, {}),
    ("embedding_ps", "local"): ({"transport": "str", "workers": "num"},
                                {"steps": "num", "loss_first": "num", "loss_last": "num"}),
    ("torch_job", "settings"): ({"steps": "num", "workers": "num", "rows": "num", "dim": "num",
                                 "transports": "strs", "fabric": "str", "guests": "num",
                                 "cpus": "num", "mem_mb": "num"}, {}),
}


TYPES = {"str": "a string", "num": "a number", "num?": "a number or null (not measured)",
         "nums": "a list of numbers", "strs": "a list of strings"}


def _typed(v: object, t: str) -> bool:
    """Whether JSON value v has type t (FIELDS)."""
    def number(x: object) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if t == "str":
        return isinstance(v, str)
    if t == "num":
        return number(v)
    if t == "num?":
        return v is None or number(v)
    if t == "strs":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    return isinstance(v, list) and all(number(x) for x in v)


def parse_record(where: str, js: str, guest: str = "", multi: bool = False) -> Record:
    """The record of JSON text js, found where (a guest, a file's line),
    printed by guest (of the multi-client boot)."""
    try:
        o = json.loads(js)
    except ValueError as e:
        raise RecordError("%s: not JSON (%s): %s" % (where, e, js))
    if not isinstance(o, dict) or o.get("v") != RECORD_VERSION or \
            not isinstance(o.get("cell", {}), dict) or \
            not isinstance(o.get("metrics", {}), dict):
        raise RecordError("%s: not a record of version %d: %s" % (where, RECORD_VERSION, js))
    bench, kind = str(o.get("bench", "")), str(o.get("kind", ""))
    parts = (o.get("cell", {}), o.get("metrics", {}))
    for part, name, want in zip(parts, ("cell", "metrics"), FIELDS.get((bench, kind), ({}, {}))):
        for k, t in want.items():
            if k not in part:
                raise RecordError("%s: a record of %s %s without %s.%s: %s"
                                  % (where, bench, kind, name, k, js))
            if not _typed(part[k], t):
                raise RecordError("%s: a record of %s %s whose %s.%s is not %s: %s"
                                  % (where, bench, kind, name, k, TYPES[t], js))
    fields: dict[str, object] = {}
    for part in parts:
        for k, v in part.items():
            fields[k] = "" if v is None else v
    return Record(guest=guest, bench=bench, kind=kind, fields=fields, multi=multi)


@dataclass
class Line:
    """A line of the guests' output that is not a record: the guest that
    printed it, its words and the line."""
    guest: str
    words: list[str]
    line: str

    def word(self, i: int) -> str:
        """Word i, counted from 1 as awk's $i ("" beyond the last)."""
        return self.words[i - 1] if 0 < i <= len(self.words) else ""


_BLANKS = re.compile(r"[ \t\n]+")


def lines_of(text: str) -> list[str]:
    """The lines of text, as awk reads records (no empty last one)."""
    if not text:
        return []
    ls = text.split("\n")
    if ls[-1] == "":
        ls.pop()
    return ls


def read_text(path: str) -> str:
    """A file's text; bytes that are not UTF-8 pass through unchanged."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def write_text(path: str, text: str) -> None:
    """Write text to path (see read_text)."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


# ---- inputs ---------------------------------------------------------------

def gather_results(d: str) -> tuple[str, list[tuple[str, bool, str]]]:
    """Every guest's result.log of both boots of bench.sh: the text, each
    line prefixed with the guest's number (data/results.txt), and its
    lines as (guest, of the multi-client boot, line)."""
    out = []
    lines = []
    paths = sorted(glob.glob(os.path.join(glob.escape(d), "run", "g*", "result.log")))
    multi = sorted(glob.glob(os.path.join(glob.escape(d), "run-multi", "g*", "result.log")))
    for path in paths + multi:
        if not os.path.isfile(path):
            continue
        g = os.path.dirname(path)
        g = g[g.rfind("/g") + 2:]
        text = read_text(path).replace("\r", "")
        for ln in lines_of(text):
            out.append(g + " " + ln + "\n")
            lines.append((g, path in multi, ln))
    return "".join(out), lines


def host_info(run: "Run") -> str:
    """The host's load during the run, from bench.sh's samples (its
    records "load"), "" if none."""
    ls = run.load
    if not ls:
        return ""
    start = [r.text("time") for r in ls if r.text("when") == "start"]
    load = [anum(r.get("load1")) for r in ls]
    return sprintf("host with %s CPUs, %s to %s: 1-min load average %.1f mean, %.1f max; "
                   "up to %d qemu processes (this run's included)",
                   ls[-1].get("nproc"), start[0] if start else "", ls[-1].get("time"),
                   sum(load) / len(load), max(load), max(anum(r.get("qemu")) for r in ls))


# ---- the run --------------------------------------------------------------

def key(tag: Value, tp: Value, op: Value, size: Value, depth: Value,
        procs: Value, mix: Value) -> str:
    """The key of one kind of operation in one cell."""
    return "|".join(astr(x) for x in (tag, tp, size, depth, procs, mix, op))


@dataclass
class Cell:
    """Operations of one kind (pull or push) in one cell, all guests' and
    rounds' bxperf records and their histograms merged."""
    lines: int = 0                  # bxperf records
    n: float = 0.0                  # operations
    lat_sum: float = 0.0            # operations x mean latency
    cell: str = ""                  # what ran at once (Run.cpu_of)
    last: dict[str, str] = field(default_factory=dict)     # the last line's percentiles
    guests: dict[str, list[float]] = field(default_factory=dict)  # ops, s, MB
    hist: dict[float, float] = field(default_factory=dict)
    hn: float = 0.0
    hmin: float = 0.0
    hmax: float = 0.0
    ops: Optional[float] = None     # ops/s, summed over guests
    mb: Optional[float] = None      # MB/s, summed over guests


@dataclass
class CellCpu:
    """CPU and retransmissions of a cell (both kinds of a mixed one)."""
    n_all: float = 0.0              # every guest's operations
    cli_proc: float = 0.0           # operations x client process µs/op
    cli_machine: float = 0.0        # operations x client machine µs/op
    n_g1: float = 0.0               # guest 1's operations
    srv_n: float = 0.0              # guest 1's operations that asked the server
    srv_proc: float = 0.0
    srv_machine: float = 0.0
    retx: dict[str, float] = field(default_factory=dict)    # per guest


PERCENTILES = ("p50_us", "p99_us", "p999_us", "min_us", "max_us")


class Run:
    """What every guest printed, gathered from the records."""

    def __init__(self) -> None:
        self.cells: dict[str, Cell] = {}
        self.cpu: dict[str, CellCpu] = {}
        self.incast_seen: list[str] = []        # incast settings as they ran
        self.per_oct: Value = None              # histogram buckets per octave
        self.floor: dict[str, str] = {}         # tool|test|size: before the cells
        self.floor2: dict[str, str] = {}        # ... and after
        self.send_lat: dict[str, str] = {}      # perftest ib_send_lat
        self.flow: dict[tuple[str, str, str], str] = {}     # phase, guest, counter
        self.host: dict[tuple[str, str, str], str] = {}     # tag, guest, field
        self.switch_pauses: dict[str, str] = {}
        self.switch_ms: dict[str, str] = {}
        self.load: list[Record] = []            # the host's load (bench.sh)
        self.convert: list[Record] = []         # bench_convert.py's cases
        self.fastpath: list[Record] = []        # fastpath.sh's whole operations
        self.phases: set[str] = set()
        self.env: dict[str, str] = {}
        self.env_multi: dict[str, str] = {}
        # phase rds (paired rounds): size, round, tool
        self.pair: dict[tuple[str, float, str], Value] = {}
        self.pair99: dict[tuple[str, float, str], str] = {}
        self.pair_rounds: dict[str, float] = {}
        # phase bw (paired rounds): round, qperf test or bx op
        self.pairbw: dict[tuple[float, str], str] = {}
        self.pairbw_rounds = 0.0
        # ... the other settings' (BENCH_BW_SETS): set, round, op
        self.bw_sets: dict[str, str] = {}       # set: "rd_max | rd_depth | piece_kb"
        self.pairbw_set: dict[tuple[str, float, str], str] = {}
        # ... their small messages: set, round, op, size
        self.pairlat: dict[tuple[str, float, str, str], str] = {}
        self.pairlat99: dict[tuple[str, float, str, str], str] = {}
        self.lat_ops: list[str] = []
        self.lat_sets: list[str] = []           # but "on", the defaults
        self.pairlat_rounds = 0.0
        self.profile_total: dict[str, str] = {}
        self.profile_rows: dict[str, list[str]] = {}
        # pslite_bench over bx: op, depth, size -> fields
        self.pslite: dict[tuple[str, str, str], dict[str, str]] = {}
        self.pslite_skip = ""                   # why phase pslite did not run
        self.fails: list[str] = []
        self.results = 0                        # bxperf records (not paired rounds')
        self.bad = False

    # -- the records --

    def add_line(self, guest: str, line: str) -> None:
        """Take a line that is not a record: only a failure counts."""
        s = line.strip(" \t\n")
        r = Line(guest, _BLANKS.split(s) if s else [], line)
        if r.word(1).startswith("bench-guest") or "FAIL" in line:
            self.fails.append(guest + " " + line)
            self.bad = True
        elif r.word(1) == "bxrig:" and r.word(2) == "exit":
            w = r.word(3)
            if not (looks_numeric(w) and anum(w) == 0):
                self.bad = True

    def add(self, r: Record) -> None:
        """Take one record in."""
        handler = self.HANDLERS.get((r.bench, r.kind))
        if handler is not None:
            handler(self, r)

    def take(self, where: str, js: str, guest: str = "", multi: bool = False) -> None:
        """Take in the record of JSON text js (parse_record); one that is
        not a record is a failure."""
        try:
            self.add(parse_record(where, js, guest, multi))
        except RecordError as e:
            self.fails.append(str(e))
            self.bad = True

    def add_file(self, path: str, prefix: str = "") -> None:
        """Take in the records of a file of the host's: every line of a
        file of records (NAME.jsonl: one JSON object a line), or the
        lines "PREFIX{JSON}" of a program's output; none if there is no
        file."""
        try:
            text = read_text(path)
        except OSError:
            return
        for i, ln in enumerate(lines_of(text), 1):
            if ln.strip() and ln.startswith(prefix):
                self.take("%s:%d" % (path, i), ln[len(prefix):])

    def cell(self, k: str) -> Cell:
        """The cell of key k (created empty)."""
        return self.cells.setdefault(k, Cell())

    def _bxperf(self, r: Record) -> None:
        # the paired rounds' cells (bench_guest.sh -k phase=rds|bw) apart
        ph, tag = r.text("phase"), r.text("tag")
        if ph == "rds":
            self._pair(r, "bx")
        elif ph == "bw" and tag == "pairlat":
            self._pairlat(r)
        elif ph == "bw" and r.text("set") in ("", "on"):
            self._pairbw(r, r.text("op"))
        elif ph == "bw":
            self._pairbw_set(r)
        else:
            self._result(r)
            self._hist(r)

    def _result(self, r: Record) -> None:
        f = r.fields
        c = "|".join(r.text(x) for x in ("tag", "transport", "size", "depth", "procs", "mix")) + \
            ("" if anum(r.get("mix")) else "|" + r.text("op"))
        k = key(r.get("tag"), r.get("transport"), r.get("op"), r.get("size"),
                r.get("depth"), r.get("procs"), r.get("mix"))
        cl = self.cell(k)
        cl.cell = c
        tag = r.text("tag")
        if tag.startswith("incast-") and not tag.endswith("-probe") and \
                tag[7:] not in self.incast_seen:
            self.incast_seen.append(tag[7:])
        n = anum(r.get("n"))
        cl.lines += 1
        cl.n += n
        # rates per guest over all its runs of the cell (several rounds),
        # summed over guests in finish()
        g = cl.guests.setdefault(r.guest, [0.0, 0.0, 0.0])
        g[0] += n
        g[1] += anum(r.get("secs"))
        g[2] += anum(r.get("mb_s")) * anum(r.get("secs"))
        cl.lat_sum += n * anum(r.get("mean_us"))
        cl.last = {p: r.get(p) if p in f else "" for p in PERCENTILES}
        cpu = self.cpu.setdefault(c, CellCpu())
        # a mixed cell has the same counters in both of its records
        if not anum(r.get("mix")) or r.get("op") == "pull":
            retx = r.get("tcp_retrans") if r.get("transport") == "tcp" else r.get("rxe_retry")
            cpu.retx[r.guest] = cpu.retx.get(r.guest, 0.0) + anum(retx)
        cpu.n_all += n
        cpu.cli_proc += n * anum(r.get("cpu_us_op"))
        cpu.cli_machine += n * anum(r.get("guest_cpu_us_op"))
        if looks_numeric(r.guest) and anum(r.guest) == 1:
            cpu.n_g1 += n
            # null: the server was not asked
            srv = r.get("srv_cpu_us_op")
            if not blank(srv) and anum(srv) >= 0:
                cpu.srv_n += n
                cpu.srv_proc += n * anum(srv)
                cpu.srv_machine += n * anum(r.get("srv_guest_cpu_us_op"))
        if anum(r.get("errors")):
            self.bad = True
        self.results += 1

    def _hist(self, r: Record) -> None:
        if "hist" not in r.fields:
            return
        cl = self.cell(key(r.get("tag"), r.get("transport"), r.get("op"), r.get("size"),
                           r.get("depth"), r.get("procs"), r.get("mix")))
        h = r.fields.get("hist")
        if not isinstance(h, list):
            return
        self.per_oct = r.get("hist_per_oct")
        for bucket in h:
            if not isinstance(bucket, list) or len(bucket) < 2:
                continue
            b = anum(bucket[0])
            cnt = anum(bucket[1])
            if not cl.hist or b < cl.hmin:
                cl.hmin = b
            if not cl.hist or b > cl.hmax:
                cl.hmax = b
            cl.hist[b] = cl.hist.get(b, 0.0) + cnt
            cl.hn += cnt

    def _qperf(self, r: Record) -> None:
        ph = r.text("phase")
        if ph == "rds":
            self._pair(r, "qperf")
        elif ph == "bw":
            self._pairbw(r, r.text("test"))
        else:
            self._floor(r)

    def _floor(self, r: Record) -> None:
        fk = r.bench + "|" + r.text("test") + "|" + r.text("size")
        v = r.get("lat_us") if not blank(r.get("lat_us")) else \
            r.get("mb_s") if not blank(r.get("mb_s")) else r.get("typ_us")
        (self.floor2 if r.text("pass") == "2" else self.floor)[fk] = v
        if r.get("test") == "ib_send_lat":
            self.send_lat.update(r.fields)

    def _flow(self, r: Record) -> None:
        for x, v in r.fields.items():
            self.flow[r.text("phase"), r.guest, x] = v

    def _host(self, r: Record) -> None:
        for x, v in r.fields.items():
            self.host[r.text("tag"), r.guest, x] = v

    def _phase(self, r: Record) -> None:
        if r.text("state") == "start":
            self.phases.add(r.text("phase").split(".")[0])

    def _env(self, r: Record) -> None:
        (self.env_multi if r.multi else self.env).update(
            {k: r.text(k) for k in r.fields})

    def _rds(self, r: Record) -> None:
        if r.text("phase") == "rds":
            self._pair(r, "rds")

    def _pair(self, r: Record, t: str) -> None:
        z, rnd = r.text("size"), anum(r.get("round"))
        # qperf prints one-way latency; the others time the round trip
        self.pair[z, rnd, t] = 2 * anum(r.get("lat_us")) if t == "qperf" else r.get("mean_us")
        if t != "qperf":
            self.pair99[z, rnd, t] = r.get("p99_us")
        self.pair_rounds[z] = max(self.pair_rounds.get(z, 0.0), rnd)

    def _pairbw(self, r: Record, what: str) -> None:
        rnd = anum(r.get("round"))
        # qperf: rc_bw, rc_rdma_write_bw, rc_rdma_read_bw; bx: pull, push
        self.pairbw[rnd, what] = r.get("mb_s")
        self.pairbw_rounds = max(self.pairbw_rounds, rnd)

    def _pairbw_set(self, r: Record) -> None:
        st = r.text("set")
        if st not in self.bw_sets:
            self.bw_sets[st] = r.text("rd_max") + " | " + r.text("rd_depth") + " | " + \
                r.text("piece_kb")
        self.pairbw_set[st, anum(r.get("round")), r.text("op")] = r.get("mb_s")

    def _pairlat(self, r: Record) -> None:
        st, rnd, o, z = r.text("set"), anum(r.get("round")), r.text("op"), r.text("size")
        self.pairlat[st, rnd, o, z] = r.get("mean_us")
        self.pairlat99[st, rnd, o, z] = r.get("p99_us")
        if o not in self.lat_ops:
            self.lat_ops.append(o)
        if st != "on" and st not in self.lat_sets:
            self.lat_sets.append(st)
        self.pairlat_rounds = max(self.pairlat_rounds, rnd)

    def _pslite(self, r: Record) -> None:
        self.pslite[r.text("op"), r.text("depth"), r.text("size")] = r.fields
        if anum(r.get("errors")):
            self.bad = True

    def _skip(self, r: Record) -> None:
        if r.text("phase") == "pslite":
            self.pslite_skip = sprintf("%s guests, it needs %s", r.get("guests"), r.get("needs"))

    def _profile(self, r: Record) -> None:
        if r.kind == "total":
            self.profile_total[r.text("tag")] = sprintf(
                "bx %.1f ms, rxe %.1f ms of self time in %s s",
                anum(r.get("bx_us")) / 1000, anum(r.get("rxe_us")) / 1000, r.get("wall_s"))
        else:
            self.profile_rows.setdefault(r.text("tag"), []).append(sprintf(
                "| %s | %s | %.2f | %.2f |", r.get("func"), r.get("calls"),
                anum(r.get("incl_us")) / 1000, anum(r.get("self_us")) / 1000))

    def _load(self, r: Record) -> None:
        self.load.append(r)

    def _convert(self, r: Record) -> None:
        self.convert.append(r)

    def _fastpath(self, r: Record) -> None:
        self.fastpath.append(r)

    def _switch(self, r: Record) -> None:
        self.switch_pauses[r.text("phase")] = r.text("pauses")
        self.switch_ms[r.text("phase")] = r.text("paused_ms")

    # what to do with a record of each bench and kind; any other is
    # ignored
    HANDLERS: dict[tuple[str, str], Callable[["Run", Record], None]] = {
        ("bxperf", "result"): _bxperf,
        ("qperf", "result"): _qperf,
        ("perftest", "result"): _floor,
        ("rds_pp", "result"): _rds,
        ("pslite_bench", "result"): _pslite,
        ("ftrace_prof", "func"): _profile,
        ("ftrace_prof", "total"): _profile,
        ("bench_guest", "env"): _env,
        ("bench_guest", "phase"): _phase,
        ("bench_guest", "host"): _host,
        ("bench_guest", "flow"): _flow,
        ("bench_guest", "skip"): _skip,
        ("bench", "load"): _load,
        ("bxswitch", "result"): _switch,
        ("bench_convert", "result"): _convert,
        ("fastpath", "op"): _fastpath,
    }

    def finish(self) -> None:
        """Rates of every cell: each guest's over its runs, summed."""
        for cl in self.cells.values():
            for ops, secs, mbs in cl.guests.values():
                if secs > 0:
                    cl.ops = (cl.ops or 0.0) + ops / secs
                    cl.mb = (cl.mb or 0.0) + mbs / secs

    # -- questions --

    def have(self, k: str) -> bool:
        """Whether key k has results."""
        return k in self.cells and self.cells[k].lines > 0

    def n(self, k: str) -> float:
        """Operations of key k."""
        return self.cells[k].n if k in self.cells else 0.0

    def mb(self, k: str) -> Optional[float]:
        """MB/s of key k, None if not measured."""
        return self.cells[k].mb if k in self.cells else None

    def ops(self, k: str) -> Optional[float]:
        """Operations per second of key k, None if not measured."""
        return self.cells[k].ops if k in self.cells else None

    def bval(self, i: float) -> float:
        """The latency of histogram bucket i (its middle)."""
        return pow2(div(i + 0.5, anum(self.per_oct)))

    def hpct(self, k: str, p: float) -> Optional[float]:
        """Percentile p of key k from the merged histogram."""
        cl = self.cells.get(k)
        if cl is None or not cl.hn:
            return None
        want = p * cl.hn
        c = 0.0
        i = cl.hmin
        while i <= cl.hmax:
            c += cl.hist.get(i, 0.0)
            if c >= want and c > 0:
                return self.bval(i)
            i += 1
        return self.bval(cl.hmax)

    def pct(self, k: str, name: str, p: float) -> Value:
        """Percentile p of key k: as bxperf printed it if one line, else
        from the merged histogram."""
        cl = self.cells.get(k)
        if cl is not None and cl.lines == 1:
            return cl.last.get(name, "")
        return self.hpct(k, p)

    def mean(self, k: str) -> Optional[float]:
        """The mean latency of key k."""
        cl = self.cells.get(k)
        return cl.lat_sum / cl.n if cl is not None and cl.n else None

    def cpu_of(self, k: str, what: str) -> Optional[float]:
        """CPU per operation of key k: client process ("cli"), client
        machine ("clig"), server process ("srv"), server machine ("srvg");
        the server figures from guest 1, spread over every guest's
        operations of the cell."""
        cl = self.cells.get(k)
        c = self.cpu.get(cl.cell) if cl is not None else None
        if c is None or not c.n_all:
            return None
        if what == "cli":
            return c.cli_proc / c.n_all
        if what == "clig":
            return c.cli_machine / c.n_all
        if not c.srv_n:
            return None
        # guest 1 asked the server; scale to its runs that did, then
        # spread over the operations of every guest
        if what == "srv":
            return c.srv_proc * c.n_g1 / c.srv_n / c.n_all
        return c.srv_machine * c.n_g1 / c.srv_n / c.n_all

    def retx(self, k: str) -> Value:
        """Retransmissions during key k's cell: every client machine's and,
        once, the server's (rxe completer retries for bx, TCP
        RetransSegs), "-" if it did not run."""
        if not self.have(k):
            return "-"
        c = self.cpu.get(self.cells[k].cell)
        return sum(c.retx.get(str(g), 0.0) for g in range(8)) if c else 0.0

    def cdf(self, k: str) -> list[str]:
        """The CDF of key k: "latency_us fraction" lines."""
        cl = self.cells.get(k)
        if cl is None or not cl.hn:
            return []
        out = []
        c = 0.0
        i = cl.hmin
        po = anum(self.per_oct)
        while i <= cl.hmax:
            h = cl.hist.get(i, 0.0)
            if h:
                if not c:
                    out.append("%g 0\n" % pow2(div(i, po)))
                c += h
                out.append("%g %g\n" % (pow2(div(i + 1, po)), c / cl.hn))
            i += 1
        return out

    def floor_lat(self, test: str, s: int) -> Value:
        """The floor's latency of qperf test at size s: the mean of its runs
        before and after the cells of that size."""
        a = self.floor.get("qperf|%s|%d" % (test, s))
        b = self.floor2.get("qperf|%s|%d" % (test, s))
        return b if blank(a) else a if blank(b) else (anum(a) + anum(b)) / 2

    def fl(self, test: str, s: int, tool: str = "qperf") -> Optional[str]:
        """A floor figure (before the cells)."""
        return self.floor.get("%s|%s|%d" % (tool, test, s))

    def client_guests(self) -> str:
        """The number of guests of the multi-client cells."""
        return self.env_multi["guests"] if "guests" in self.env_multi else \
            self.env.get("guests", "")


def rounds(last: float) -> range:
    """Rounds 1 to last."""
    return range(1, int(last) + 1) if last >= 1 else range(0)


def read_run(lines: list[tuple[str, bool, str]]) -> Run:
    """The run from the guests' lines (gather_results): their records,
    and their failures."""
    run = Run()
    for g, multi, ln in lines:
        if ln.startswith(RECORD_PREFIX):
            run.take("g" + g, ln[len(RECORD_PREFIX):], g, multi)
        else:
            run.add_line(g, ln)
    run.finish()
    return run


# ---- the report -----------------------------------------------------------

SIZES = (64, 4096, 65536, 1048576, 16777216)
OPS = ("pull", "push")


@dataclass
class Figures:
    """What the targets take from the sections."""
    lat_raw: dict[int, Optional[float]] = field(default_factory=dict)  # bx / qperf rc_lat
    lat_rds: dict[int, Optional[float]] = field(default_factory=dict)  # bx / RDS
    bw_pull: Value = None           # bx pull / qperf rc_bw at 1 MiB
    bw_push: Value = None
    bw_how: str = ""
    wr_pull: Value = None           # bx pull / RDMA WRITE
    rd_push: Value = None           # bx push / RDMA READ
    wr_how: str = ""
    incast_best: str = ""           # the best bx setting with a window
    incast_best_ratio: float = 0.0  # its worst p99 / the window off's
    incast_best_off: str = ""
    incast_little: Optional[float] = None
    incast_defaults: str = ""
    incast_probe: str = ""
    pslite_pipe: Optional[float] = None     # ps-lite 4 B pushes: 16 outstanding / 1
    pslite_pipe_how: str = ""
    conns: dict[int, Value] = field(default_factory=dict)      # bx, client host
    tcp_conns: dict[int, Value] = field(default_factory=dict)


class Report:
    """report.md under construction, its data files and its verdict."""

    def __init__(self, run: Run, data: str, fastpath: str) -> None:
        self.run = run
        self.data = data
        self.hostinfo = host_info(run)
        self.fastpath = fastpath
        self.parts: list[str] = []
        self.missing: list[str] = []
        self.bad = run.bad
        self.fig = Figures()
        env = run.env
        self.idepth: str = env["incast_depth"] if env.get("incast_depth", "") != "" else "4"
        self.irate = anum(env.get("incast_rate"))

    def printf(self, fmt: str, *args: Value) -> None:
        """Append to report.md, printf-style (awk's conversions)."""
        self.parts.append(sprintf(fmt, *args) if args else fmt)

    def dat(self, name: str, lines: list[str]) -> None:
        """Write data file DIR/data/NAME, if there is anything to write."""
        if lines:
            write_text(os.path.join(self.data, name), "".join(lines))

    def text(self) -> str:
        """report.md as written so far."""
        return "".join(self.parts)


def failures(r: Report, fails: list[str]) -> None:
    """The failures' list, if there are any."""
    if fails:
        r.printf("\n**Failures:**\n%s\n", "".join("\n    " + f for f in fails))


def section_header(r: Report) -> None:
    """What ran where, the host's load, the failures."""
    env, envm = r.run.env, r.run.env_multi
    r.printf("# bx benchmark report\n\n")
    r.printf("Guest kernel %s; %s guests with %s vCPU and %d MiB each, TCG; %s s per cell, ",
             env.get("kernel"), env.get("guests"), env.get("cpus"),
             anum(env.get("mem_kb")) / 1024, env.get("secs"))
    # guests of the multi-client cells (peers, incast)
    if "guests" in envm:
        r.printf("The cells with several client guests (client machines at once, incast) ran on "
                 "a second boot of %s guests with %s vCPU and %d MiB each. ",
                 envm["guests"], envm.get("cpus"), anum(envm.get("mem_kb")) / 1024)
    r.printf("%s s per incast setting (%s processes per client guest). ",
             env.get("incast_secs"), env.get("incast_procs"))
    r.printf("Guest 0 serves, guest 1 is the client of the single-client cells. ")
    r.printf("Latency is the whole operation (request and response), in **ms**; ")
    r.printf("qperf/perftest latencies are one-way, so they are doubled here (RTT).\n")
    if r.hostinfo != "":
        r.printf("\nThe host during the run: %s.\n", r.hostinfo)
    failures(r, r.run.fails)


def section_floor(r: Report) -> None:
    """qperf and perftest on the same link."""
    run = r.run
    r.printf("\n## The floor: raw verbs and TCP on the same rxe link (guest 1 -> 0)\n\n")
    r.printf("Measured with each size of the sweep, before and after its bx and TCP cells "
             "(RTT before / after).\n\n")
    r.printf("| size | qperf rc_lat RTT | qperf tcp_lat RTT | tcp/rc | qperf rc_bw MB/s "
             "| qperf tcp_bw MB/s |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n")

    def rtt(v: Optional[str]) -> str:
        return "-" if blank(v) else ms(2 * anum(v))
    dat = []
    for s in SIZES[:4]:
        a = run.floor_lat("rc_lat", s)
        b = run.floor_lat("tcp_lat", s)
        if blank(a) and blank(b):
            continue
        k = "qperf|%s|" + str(s)
        r.printf("| %s | %s / %s | %s / %s | %s | %s | %s |\n", sz(s),
                 rtt(run.floor.get(k % "rc_lat")), rtt(run.floor2.get(k % "rc_lat")),
                 rtt(run.floor.get(k % "tcp_lat")), rtt(run.floor2.get(k % "tcp_lat")),
                 ratio(b, a), num(run.fl("rc_bw", s)), num(run.fl("tcp_bw", s)))
        if not blank(a):
            dat.append(sprintf("%d %g %g %g %g\n", s, 2 * anum(a), 2 * anum(b),
                               run.fl("rc_bw", s), run.fl("tcp_bw", s)))
    r.dat("floor.dat", dat)
    x = run.send_lat

    def rtt2(name: str) -> str:
        return "-" if x.get(name, "") == "" else ms(2 * anum(x[name]))
    r.printf("\nqperf 64 KiB RDMA READ %s MB/s (`-nr` as bx's `rd_max`: READs in flight per QP), "
             "RDMA WRITE %s MB/s. ",
             num(run.fl("rc_rdma_read_bw", 65536)), num(run.fl("rc_rdma_write_bw", 65536)))
    r.printf("perftest busy-polls, which starves rxe's own work on a 1-vCPU guest: ")
    r.printf("ib_send_lat 64 B typical RTT %s (min %s, p99 %s), ",
             rtt2("typ_us"), rtt2("min_us"), rtt2("p99_us"))
    r.printf("ib_write_bw %s MB/s, ib_read_bw %s MB/s (64 KiB).\n",
             num(run.fl("ib_write_bw", 65536, "perftest")),
             num(run.fl("ib_read_bw", 65536, "perftest")))


def section_pairs(r: Report) -> None:
    """Small messages in paired rounds: bx against qperf and RDS."""
    run = r.run
    if not run.pair_rounds:
        return
    r.printf("\n## Small messages in paired rounds: bx, raw verbs and RDS\n\n")
    r.printf("Per size, rounds of three 2-s runs back to back on guests 1 -> 0: an AF_RDS "
             "ping-pong over rds_rdma (tools/bench/rds_pp.c, one message echoed), a bx pull "
             "(depth 1) and qperf rc_lat (RTT), so that each round's ratios compare numbers "
             "taken seconds apart. Means in ms; the verdicts use the median of the rounds' "
             "ratios.\n\n")
    r.printf("| size | round | qperf rc_lat RTT | bx pull | RDS | bx p99 | RDS p99 | bx/raw "
             "| bx/RDS |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for z in SIZES[:2]:
        if str(z) not in run.pair_rounds:
            continue
        raw: list[float] = []
        rds: list[float] = []
        for rnd in rounds(run.pair_rounds[str(z)]):
            q = run.pair.get((str(z), rnd, "qperf"))
            b = run.pair.get((str(z), rnd, "bx"))
            d = run.pair.get((str(z), rnd, "rds"))
            r.printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", sz(z), rnd,
                     ms(q), ms(b), ms(d), ms(run.pair99.get((str(z), rnd, "bx"))),
                     ms(run.pair99.get((str(z), rnd, "rds"))), ratio(b, q), ratio(b, d))
            if anum(b) > 0 and anum(q) > 0:
                raw.append(anum(b) / anum(q))
            if anum(b) > 0 and anum(d) > 0:
                rds.append(anum(b) / anum(d))
        r.fig.lat_raw[z] = median(raw)
        r.fig.lat_rds[z] = median(rds)
        r.printf("| %s | **median** | | | | | | **%s** | **%s** |\n", sz(z),
                 show(r.fig.lat_raw[z]), show(r.fig.lat_rds[z]))


def section_sweep(r: Report) -> None:
    """Latency and CPU per operation, one operation at a time."""
    run = r.run
    for op in OPS:
        r.printf("\n## %s latency, one operation at a time (depth 1, 1 process)\n\n",
                 op.capitalize())
        r.printf("| size | bx mean | bx p50 | bx p99 | bx p99.9 | tcp mean | tcp p50 | tcp p99 "
                 "| tcp p99.9 | bx/tcp p50 | bx/tcp mean | bx/raw mean | n bx/tcp "
                 "| retx bx/tcp |\n")
        r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                 "| ---: | ---: | ---: |\n")
        dat = []
        for s in SIZES:
            kb = key("sweep", "bx", op, s, 1, 1, 0)
            kt = key("sweep", "tcp", op, s, 1, 1, 0)
            if not run.have(kb) and not run.have(kt):
                continue
            if not run.have(kb) or not run.have(kt):
                r.missing.append("sweep/%s/%d" % (op, s))
            raw = run.floor_lat("rc_lat", s)
            pb, pt = run.pct(kb, "p50_us", 0.5), run.pct(kt, "p50_us", 0.5)
            mb, mt = run.mean(kb), run.mean(kt)
            r.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d "
                     "| %s/%s |\n", sz(s),
                     ms(mb), ms(pb), ms(run.pct(kb, "p99_us", 0.99)),
                     ms(run.pct(kb, "p999_us", 0.999)), ms(mt), ms(pt),
                     ms(run.pct(kt, "p99_us", 0.99)), ms(run.pct(kt, "p999_us", 0.999)),
                     ratio(pb, pt), ratio(mb, mt),
                     "-" if blank(raw) else ratio(mb, 2 * anum(raw)),
                     run.n(kb), run.n(kt), run.retx(kb), run.retx(kt))
            dat.append(sprintf("%d %g %g %g %g %g %g %g %g\n", s, pb, pt,
                               run.pct(kb, "p99_us", 0.99), run.pct(kt, "p99_us", 0.99),
                               run.mb(kb), run.mb(kt),
                               run.mb(key("depth", "bx", op, s, 8, 1, 0)),
                               run.mb(key("depth", "tcp", op, s, 8, 1, 0))))
        r.dat("sweep_%s.dat" % op, dat)
        r.printf("\nCPU per %s, µs: client process (getrusage), client machine and server "
                 "machine (/proc/stat, all CPU incl. rxe and softirq), server process.\n\n", op)
        r.printf("| size | bx cli proc | bx cli machine | bx srv machine | bx srv proc "
                 "| tcp cli proc | tcp cli machine | tcp srv machine | tcp srv proc "
                 "| bx/tcp machines |\n")
        r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for s in SIZES:
            kb = key("sweep", "bx", op, s, 1, 1, 0)
            kt = key("sweep", "tcp", op, s, 1, 1, 0)
            if not run.have(kb) and not run.have(kt):
                continue
            c = run.cpu_of
            r.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sz(s),
                     num(c(kb, "cli")), num(c(kb, "clig")), num(c(kb, "srvg")),
                     num(c(kb, "srv")), num(c(kt, "cli")), num(c(kt, "clig")),
                     num(c(kt, "srvg")), num(c(kt, "srv")),
                     ratio(anum(c(kb, "clig")) + anum(c(kb, "srvg")),
                           anum(c(kt, "clig")) + anum(c(kt, "srvg"))))


def section_throughput(r: Report) -> None:
    """MB/s of bx, TCP and qperf; bx against raw verbs; the paired rounds
    of phase bw and the other settings in them; retransmissions."""
    run = r.run
    fig = r.fig
    r.printf("\n## Throughput, MB/s (payload, 10^6 B/s), guest 1 -> 0\n\n")
    r.printf("| size | bx pull d1 | bx pull d8 | tcp pull d1 | tcp pull d8 | bx push d1 "
             "| bx push d8 | tcp push d1 | tcp push d8 | qperf rc_bw | qperf tcp_bw "
             "| qperf WRITE | qperf READ |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: | ---: |\n")

    def keys(s: int) -> Iterable[str]:
        for op in OPS:
            for tp in ("bx", "tcp"):
                for d in (1, 8):
                    yield key("sweep" if d == 1 else "depth", tp, op, s, d, 1, 0)
    for s in SIZES:
        r.printf("| %s", sz(s))
        for k in keys(s):
            r.printf(" | %s", num(run.mb(k)) if run.have(k) else "-")
        r.printf(" | %s | %s | %s | %s |\n", num(run.fl("rc_bw", s)), num(run.fl("tcp_bw", s)),
                 num(run.fl("rc_rdma_write_bw", s)), num(run.fl("rc_rdma_read_bw", s)))
    # bx against the raw verbs that move its payload, best depth of each
    r.printf("\nbx against raw verbs, the better of d1 and d8: the payload of a pull moves by "
             "RDMA WRITE, that of a push by RDMA READ (qperf streams them back to back, several "
             "in flight; bx adds the request and the completion message).\n\n")
    r.printf("| size | bx pull / rc_rdma_write_bw | bx push / rc_rdma_read_bw | bx pull / rc_bw "
             "| bx push / rc_bw |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: |\n")
    for s in SIZES:
        if blank(run.fl("rc_rdma_write_bw", s)):
            continue
        best: list[Value] = []
        for op in OPS:
            k1 = key("sweep", "bx", op, s, 1, 1, 0)
            k8 = key("depth", "bx", op, s, 8, 1, 0)
            b: Value = run.mb(k1) if run.have(k1) else 0.0
            if run.have(k8) and anum(run.mb(k8)) > anum(b):
                b = run.mb(k8)
            best.append(b)
        wr, rd, bw = run.fl("rc_rdma_write_bw", s), run.fl("rc_rdma_read_bw", s), run.fl("rc_bw", s)
        if s == 1048576:
            fig.wr_pull, fig.rd_push = rawratio(best[0], wr), rawratio(best[1], rd)
            fig.bw_pull, fig.bw_push = rawratio(best[0], bw), rawratio(best[1], bw)
        r.printf("| %s | %s | %s | %s | %s |\n", sz(s), ratio(best[0], wr), ratio(best[1], rd),
                 ratio(best[0], bw), ratio(best[1], bw))
    section_pairbw(r)
    section_pairlat(r)
    r.printf("\nd1/d8: 1 or 8 operations in flight from one process. 16 MiB runs one at a time "
             "only (rxe). Retransmissions in the same cells (rxe completer retries for bx, TCP "
             "RetransSegs for tcp; both machines):\n\n")
    r.printf("| size | bx pull d1 | bx pull d8 | tcp pull d1 | tcp pull d8 | bx push d1 "
             "| bx push d8 | tcp push d1 | tcp push d8 |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for s in SIZES:
        r.printf("| %s", sz(s))
        for k in keys(s):
            r.printf(" | %s", run.retx(k))
        r.printf(" |\n")


def section_pairbw(r: Report) -> None:
    """1 MiB in paired rounds (phase bw): the throughput targets take the
    medians of these ratios when they ran; other settings of bx
    (BENCH_BW_SETS) in the same rounds."""
    run = r.run
    fig = r.fig
    if not run.pairbw_rounds:
        return
    r.printf("\nIn paired rounds, 1 MiB (phase bw): each round runs qperf rc_bw, RDMA WRITE and "
             "READ (`-nr` as bx's `rd_max`), then bx pull and push at depth 8, 2 s each, back to "
             "back, so that each round's ratios compare numbers taken seconds apart; the "
             "throughput targets use the medians of the rounds' ratios. MB/s:\n\n")
    r.printf("| round | qperf rc_bw | qperf WRITE | qperf READ | bx pull d8 | bx push d8 "
             "| pull / rc_bw | push / rc_bw | pull / WRITE | push / READ |\n")
    r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    pb = run.pairbw
    rs: tuple[list[float], ...] = ([], [], [], [])
    for rnd in rounds(run.pairbw_rounds):
        bw, wr, rd = pb.get((rnd, "rc_bw")), pb.get((rnd, "rc_rdma_write_bw")), \
            pb.get((rnd, "rc_rdma_read_bw"))
        pl, ps = pb.get((rnd, "pull")), pb.get((rnd, "push"))
        r.printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rnd,
                 num(bw), num(wr), num(rd), num(pl), num(ps), ratio(pl, bw),
                 ratio(ps, bw), ratio(pl, wr), ratio(ps, rd))
        for lst, (a, b) in zip(rs, ((pl, bw), (ps, bw), (pl, wr), (ps, rd))):
            x = rawratio(a, b)
            if x is not None:
                lst.append(x)
    m = [median(lst) for lst in rs]
    r.printf("| **median** | | | | | | **%s** | **%s** | **%s** | **%s** |\n",
             *(show(x) for x in m))
    if run.bw_sets:
        r.printf("\nOther settings of bx in the same rounds (`BENCH_BW_SETS`), bx reloaded for "
                 "each cell, the defaults' too; %s. Each setting is compared with its rounds' "
                 "qperf and defaults: medians of the rounds' ratios, and the range of a push "
                 "against the defaults' over the rounds (an A/A control, the defaults under "
                 "another name, shows the method's own error):\n\n",
                 "each round in its own order, so that over the rounds every setting ran in "
                 "every place and right after every other equally often"
                 if run.env.get("bw_order") == "williams" else
                 "the order of the cells was not recorded (runs before the balanced orders had "
                 "the same order in every round, or one turned by one each round)")
        r.printf("| setting | rd_max | rd_depth | piece_kb | rounds | pull / WRITE | push / READ "
                 "| pull / defaults' pull | push / defaults' push | its range |\n")
        r.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for st, settings in run.bw_sets.items():
            ss: tuple[list[float], ...] = ([], [], [], [])
            for rnd in rounds(run.pairbw_rounds):
                pl = run.pairbw_set.get((st, rnd, "pull"))
                ps = run.pairbw_set.get((st, rnd, "push"))
                for lst, (a, b) in zip(ss, ((pl, pb.get((rnd, "rc_rdma_write_bw"))),
                                            (ps, pb.get((rnd, "rc_rdma_read_bw"))),
                                            (pl, pb.get((rnd, "pull"))),
                                            (ps, pb.get((rnd, "push"))))):
                    x = rawratio(a, b)
                    if x is not None:
                        lst.append(x)
            r.printf("| %s | %s | %d | %s | %s | %s | %s | %s |\n", st, settings,
                     max(len(lst) for lst in ss), *(show(median(lst)) for lst in ss),
                     span(ss[3]))
    # rounds with no ratio (qperf failed in each) leave the sweep's
    # figures standing
    if rs[0] and rs[1]:
        fig.bw_pull, fig.bw_push = m[0], m[1]
        fig.bw_how = "medians of the paired rounds, depth 8"
    if rs[2] and rs[3]:
        fig.wr_pull, fig.rd_push = m[2], m[3]
        fig.wr_how = "medians of the paired rounds"


# The small-message latency cells of phase bw's settings: (Run's table,
# size, as the documentation names the cell).
LAT_CELLS = (("pairlat", "64", "64 B, mean"), ("pairlat99", "64", "64 B, p99"),
             ("pairlat", "4096", "4 KiB, mean"), ("pairlat99", "4096", "4 KiB, p99"))


def lat_ab(run: Run, st: str, op: str) -> tuple[list[float], ...]:
    """Setting st's small-message latency against the defaults' ("on") in
    the same rounds: the rounds' ratios of the 64 B mean, 64 B p99,
    4 KiB mean and 4 KiB p99 (LAT_CELLS)."""
    out: tuple[list[float], ...] = ([], [], [], [])
    for rnd in rounds(run.pairlat_rounds):
        for lst, (tab, z, _) in zip(out, LAT_CELLS):
            t = getattr(run, tab)
            x = rawratio(t.get((st, rnd, op, z)), t.get(("on", rnd, op, z)))
            if x is not None:
                lst.append(x)
    return out


def section_pairlat(r: Report) -> None:
    """Small-message latency of the other settings, in the same rounds."""
    run = r.run
    if not (run.pairlat_rounds and run.lat_sets):
        return
    r.printf("\nSmall-message latency of the other settings, one operation at a time (after each "
             "setting's 1 MiB cells, or alone with `BENCH_LAT_ONLY`): the medians of the rounds' "
             "ratios to the defaults' in the same round (below 1: faster), and the range of the "
             "mean's at 64 B:\n\n")
    r.printf("| setting | op | rounds | 64 B mean | 64 B p99 | 4 KiB mean | 4 KiB p99 "
             "| 64 B mean range |\n")
    r.printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for st in run.lat_sets:
        for op in run.lat_ops:
            ls = lat_ab(run, st, op)
            r.printf("| %s | %s | %d | %s | %s | %s | %s | %s |\n", st, op, len(ls[0]),
                     *(show(median(lst)) for lst in ls), span(ls[0]))


def section_scaling(r: Report) -> None:
    """Processes on one client machine and client machines at once."""
    run = r.run
    c = run.cpu_of
    for procs in (True, False):
        if procs:
            r.printf("\n## Processes on one client machine (pull, depth 1 each)\n\n")
        else:
            r.printf("\n## Client machines at once (pull, 1 process each, depth 1)\n\n")
        r.printf("| %s | size | bx ops/s | bx p50 | bx p99 | bx cli machine µs/op "
                 "| bx srv machine µs/op | tcp ops/s | tcp p50 | tcp p99 "
                 "| tcp cli machine µs/op | tcp srv machine µs/op |\n",
                 "procs" if procs else "clients")
        r.printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                 "| ---: |\n")
        dat: dict[int, list[str]] = {4096: [], 65536: []}
        for m in range(1, 5):
            for s in (4096, 65536):
                kb, kt = (key("procs", tp, "pull", s, 1, m, 0) if procs else
                          key("peers%d" % m, tp, "pull", s, 1, 1, 0) for tp in ("bx", "tcp"))
                if not run.have(kb) and not run.have(kt):
                    continue
                r.printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                         m, sz(s), num(run.ops(kb)), ms(run.pct(kb, "p50_us", 0.5)),
                         ms(run.pct(kb, "p99_us", 0.99)), num(c(kb, "clig")),
                         num(c(kb, "srvg")), num(run.ops(kt)), ms(run.pct(kt, "p50_us", 0.5)),
                         ms(run.pct(kt, "p99_us", 0.99)), num(c(kt, "clig")),
                         num(c(kt, "srvg")))
                dat[s].append(sprintf("%d %g %g %g %g %g %g\n", m, run.ops(kb), run.ops(kt),
                                      c(kb, "srvg"), c(kt, "srvg"),
                                      run.pct(kb, "p50_us", 0.5), run.pct(kt, "p50_us", 0.5)))
        for s, lines in dat.items():
            r.dat("%s_%d.dat" % ("procs" if procs else "peers", s), lines)
    r.printf("\n\"cli machine\" is per operation of that machine's own processes, averaged over "
             "the client machines; \"srv machine\" is the server's busy time over all operations "
             "of the cell.\n")


def host_max(run: Run, tag: str, client: bool, f: str) -> Value:
    """A host's maximum in cell tag: the server's (guest 0) or the most of
    any client guest's (1..7), of field f; "" if not sampled."""
    if not client:
        return run.host.get((tag, "0", f), "")
    m: Value = ""
    for g in range(1, 8):
        v = run.host.get((tag, str(g), f), "")
        if v == "":
            continue
        if m == "" or anum(v) > anum(m):
            m = anum(v)
    return m


def mib(b: Value) -> str:
    """Bytes shown in MiB."""
    return "-" if blank(b) else num(anum(b) / 1048576)


def section_hosts(r: Report) -> None:
    """Connections and registered memory per host (bench_guest's host
    records)."""
    run = r.run
    env = run.env
    if not run.host:
        return
    h = run.host
    r.printf("\n## Connections and registered memory per host\n\n")
    r.printf("Sampled every second on every guest while the cell ran, maxima: bx's connections "
             "of the host (shared by all its processes), bxperf's TCP connections (either end on "
             "port 7080: one per process, and one more over which the client asks for the "
             "server's CPU time) and the region bytes bx has registered on the host, charged "
             "against its cap (`region_cap_mb`). The client host is guest 1 for processes, the "
             "busiest client guest in the incast (each with %s bulk processes and the probe)."
             "\n\n", env.get("incast_procs"))
    r.printf("| cell | processes per client host | bx conns client / server "
             "| tcp conns client / server | bx registered MiB client / server | cap MiB |\n")
    r.printf("| --- | ---: | ---: | ---: | ---: | ---: |\n")
    for np in (1, 2, 4):
        tb, tt = "procs-bx-%d" % np, "procs-tcp-%d" % np
        if (tb, "1", "bx_conns") not in h:
            continue
        r.printf("| procs | %d | %s / %s | %s / %s | %s / %s | %s |\n", np,
                 host_max(run, tb, True, "bx_conns"), host_max(run, tb, False, "bx_conns"),
                 host_max(run, tt, True, "tcp_conns"), host_max(run, tt, False, "tcp_conns"),
                 mib(host_max(run, tb, True, "region_bytes")),
                 mib(host_max(run, tb, False, "region_bytes")),
                 h.get((tb, "1", "region_cap_mb")))
        r.fig.conns[np] = host_max(run, tb, True, "bx_conns")
        r.fig.tcp_conns[np] = host_max(run, tt, True, "tcp_conns")
    procs = anum(env.get("incast_procs")) + 1
    for st in run.incast_seen:
        t = "incast-" + st
        if (t, "0", "bx_conns") not in h:
            continue
        if st == "tcp":
            r.printf("| incast tcp | %d | - | %s / %s | - | - |\n", procs,
                     host_max(run, t, True, "tcp_conns"), host_max(run, t, False, "tcp_conns"))
        else:
            r.printf("| incast %s | %d | %s / %s | - | %s / %s | %s |\n", st, procs,
                     host_max(run, t, True, "bx_conns"), host_max(run, t, False, "bx_conns"),
                     mib(host_max(run, t, True, "region_bytes")),
                     mib(host_max(run, t, False, "region_bytes")),
                     h.get((t, "0", "region_cap_mb")))


def section_pieces(r: Report) -> None:
    """A small pull behind bulk transfers on one connection."""
    run = r.run
    env = run.env
    if not run.have(key("pieces-off", "bx", "pull", 1048576, 8, 1, 0)):
        return
    r.printf("\n## A small pull behind bulk transfers on one connection (piece_kb)\n\n")
    r.printf("Guest 1 moves 1 MiB at depth 8 while a probe process pulls 4 KiB one at a time "
             "over the same connection; the server posts the bulk transfers whole (piece_kb 0) "
             "or in pieces of %s KiB, alternately, %s rounds each. Latencies in ms.\n\n",
             env.get("piece_kb"), env["rounds"] if env.get("rounds", "") != "" else "the")
    r.printf("| bulk | piece_kb | bulk MB/s | bulk p50 | bulk p99 | probe p50 | probe p99 "
             "| probe p99.9 | probe ops |\n")
    r.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for op in OPS:
        for st in ("off", "on"):
            kb = key("pieces-" + st, "bx", op, 1048576, 8, 1, 0)
            kq = key("pieces-%s-%s-probe" % (st, op), "bx", "pull", 4096, 1, 1, 0)
            r.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", op,
                     0 if st == "off" else env.get("piece_kb"), num(run.mb(kb)),
                     ms(run.hpct(kb, 0.5)), ms(run.hpct(kb, 0.99)),
                     ms(run.hpct(kq, 0.5)), ms(run.hpct(kq, 0.99)), ms(run.hpct(kq, 0.999)),
                     run.n(kq))


# The incast settings every run has, then those only some runs ask for
# (mid windows, a shorter ACK timeout, the halves of mid: rx, snd,
# transfers not cut: -p0, READs posted early: -r2), in this order; any
# other setting that ran, after them.
INCAST_SETS = ("off on small tcp mid off-a14 on-a14 mid-a14 rx snd rx-a14 snd-a14 off-p0 on-p0 "
               "mid-p0 mid-a14-p0 off-r2 on-r2 mid-r2 mid-a14-r2").split()
INCAST_LABELS = {
    "off": "bx, flow_control=N",
    "on": "bx, flow_control=Y (defaults)",
    "small": "bx, Y, wnd_kb=256 host_wnd_kb=512 rx_wnd_kb=256",
    "mid": "bx, Y, wnd_kb=1024 host_wnd_kb=4096 rx_wnd_kb=2048",
    "rx": "bx, Y, rx_wnd_kb=2048",
    "snd": "bx, Y, wnd_kb=1024 host_wnd_kb=4096",
}
# setting suffixes: "-a14" is "ack_timeout 14"
INCAST_SUFFIXES = (("a", "ack_timeout %s"), ("p", "piece_kb %s"), ("x", "rx_wnd_kb %s"),
                   ("r", "rd_max %s (rd_depth 1)"))


def incast_label(st: str) -> str:
    """The incast setting st in words."""
    label = INCAST_LABELS.get(st.split("-")[0], "tcp")
    for letter, fmt in INCAST_SUFFIXES:
        m = re.search("-%s([0-9]+)" % letter, st)
        if m:
            label += ", " + fmt % m.group(1)
    return label


def guest_ids(guests: float, first: int = 0) -> list[str]:
    """The guests from first on, of a boot of guests guests."""
    ids = []
    g = first
    while g < guests:
        ids.append(str(g))
        g += 1
    return ids


@dataclass
class IncastResult:
    """A bx incast setting, for the targets."""
    worst: float                    # the worst p99 of pulls and pushes
    rate: float                     # operations per second
    probe99: Value = None           # the probe's p99


def section_incast(r: Report) -> None:
    """Every client guest against guest 0; the window's target."""
    run = r.run
    env = run.env
    idepth, procs = r.idepth, env.get("incast_procs")
    guests = anum(run.client_guests())
    if r.irate > 0:
        r.printf("\n## Incast: every client guest x %s processes, each issuing %s operations per "
                 "second (Poisson, open load, at most %s in flight; latency from when an "
                 "operation was due), pull and push 1 MiB against guest 0\n\n",
                 procs, env.get("incast_rate"), idepth)
    else:
        r.printf("\n## Incast: every client guest x %s processes, %s in flight each, pull and "
                 "push 1 MiB against guest 0\n\n", procs, idepth)
    sw = bool(run.switch_pauses)
    if sw:
        r.printf("The switch is lossless (bxswitch, tools/testing/vm/bxswitch.c; bench.sh -f lossy "
                 "selects vde_switch): where vde_switch drops a frame whose destination is full, it "
                 "stops reading the sender instead, as PFC pauses it. pauses: how many times a "
                 "guest's port was stopped so; paused s: for how long in all.\n\n")
    r.printf("| setting | pull p50 | pull p99 | pull p99.9 | push p50 | push p99 | push p99.9 "
             "| probe p50 | probe p99 | MB/s (both) | ops | srv machine µs/op | retransmits |%s\n",
             " pauses | paused s |" if sw else "")
    r.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: |%s\n", " ---: | ---: |" if sw else "")
    sets = list(INCAST_SETS) + [st for st in run.incast_seen if st not in INCAST_SETS]
    bx: dict[str, IncastResult] = {}
    for i, st in enumerate(sets):
        tp = "tcp" if st == "tcp" else "bx"
        kp = key("incast-" + st, tp, "pull", 1048576, idepth, procs, 1)
        ku = key("incast-" + st, tp, "push", 1048576, idepth, procs, 1)
        kq = key("incast-%s-probe" % st, tp, "pull", 4096, 1, 1, 0)
        if not run.have(kp) and not run.have(ku):
            if i < 4 and "incast" in run.phases:
                r.missing.append("incast/" + st)
            continue
        counter = "tcp_RetransSegs" if tp == "tcp" else "rxe_completer_retry_err"
        rt = sum(anum(run.flow.get(("incast-" + st, g, counter))) for g in guest_ids(guests))
        probe = run.have(kq)
        r.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %d |",
                 incast_label(st),
                 ms(run.hpct(kp, 0.5)), ms(run.hpct(kp, 0.99)), ms(run.hpct(kp, 0.999)),
                 ms(run.hpct(ku, 0.5)), ms(run.hpct(ku, 0.99)), ms(run.hpct(ku, 0.999)),
                 ms(run.hpct(kq, 0.5)) if probe else "", ms(run.hpct(kq, 0.99)) if probe else "",
                 num(anum(run.mb(kp)) + anum(run.mb(ku))), run.n(kp) + run.n(ku),
                 num(run.cpu_of(kp, "srvg")), rt)
        if sw:
            ph = "incast." + st
            r.printf(" %s | %s |", run.switch_pauses.get(ph),
                     sprintf("%.1f", anum(run.switch_ms[ph]) / 1000)
                     if ph in run.switch_ms else "")
        r.printf("\n")
        r.dat("incast_%s_pull.dat" % st, run.cdf(kp))
        r.dat("incast_%s_push.dat" % st, run.cdf(ku))
        if tp == "bx":
            secs = env.get("incast_secs")
            bx[st] = IncastResult(
                worst=max(anum(run.hpct(kp, 0.99)), anum(run.hpct(ku, 0.99))),
                rate=(run.n(kp) + run.n(ku)) / anum(secs) if anum(secs) > 0 else 0.0,
                probe99=run.hpct(kq, 0.99) if probe else None)
    # The target of the issue, p99 with the window at most 0.5 times
    # without, against what a closed loop allows: its nin operations in
    # flight take nin / rate on average (the law of Little), and no
    # window brings the worst p99 below that mean at the same rate.
    nin = (guests - 1) * anum(procs) * anum(idepth)
    off = bx["off"].worst if "off" in bx else 0.0
    if r.irate > 0 and off > 0:
        r.printf("\nWorst p99 (of pulls and pushes) against the window off in this run (open "
                 "load: every setting was offered the same operations per second):\n\n"
                 "| setting | worst p99 | / off |\n| --- | ---: | ---: |\n")
        for st, x in bx.items():
            r.printf("| %s | %s | %.2f |\n", st, ms(x.worst), x.worst / off)
    elif off > 0 and nin > 0:
        r.printf("\nWorst p99 (of pulls and pushes) against the window off in this run, and the "
                 "mean latency that %d operations in flight have at each setting's rate (Little's "
                 "law: in flight / operations per second), which no window can bring the p99 "
                 "under at that rate:\n\n", nin)
        r.printf("| setting | worst p99 | / off | mean by Little's law | / off's worst p99 |\n"
                 "| --- | ---: | ---: | ---: | ---: |\n")
        for st, x in bx.items():
            lm = nin / x.rate * 1e6 if x.rate > 0 else None
            r.printf("| %s | %s | %.2f | %s | %s |\n", st, ms(x.worst), x.worst / off, ms(lm),
                     "-" if lm is None else "%.2f" % (lm / off))
    incast_target(r, bx, nin)
    r.printf("\nprobe: one more process per client guest pulling 4 KiB, one at a time, through "
             "the same connection as the bulk operations (latency-sensitive small pulls during "
             "the incast). ack_timeout: the RC ACK timeout exponent (default 17, 0.54 s; 14 is "
             "67 ms).\n")
    r.printf("\nretransmits: rxe `completer_retry_err` (bx) or TCP `RetransSegs`, summed over all "
             "guests. bx's window counters on the server (peaks in bytes, waits in "
             "operations):\n\n")
    r.printf("| setting | rx_peak_bytes | rx_waits | tx_peak_bytes | tx_waits | conn rd_waits "
             "| busy_retries | clients: wnd_waits | clients: max wnd_peak_bytes |\n")
    r.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for st in bx:
        ph = "incast-" + st
        waits = 0.0
        peak: Value = 0.0
        for g in guest_ids(guests, 1):
            waits += anum(run.flow.get((ph, g, "conn_wnd_waits")))
            v = run.flow.get((ph, g, "conn_max_wnd_peak_bytes"))
            if anum(v) > anum(peak):
                peak = v
        r.printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", st,
                 *(run.flow.get((ph, "0", c)) for c in (
                     "rx_peak_bytes", "rx_waits", "tx_peak_bytes", "tx_waits", "conn_rd_waits",
                     "busy_retries")), waits, peak)


def incast_target(r: Report, bx: dict[str, IncastResult], nin: float) -> None:
    """The incast's target: the worst p99 of each bx setting with a window
    against the window off with the same other settings ("mid-a14"
    against "off-a14" if that ran, else "off"); the best of them, the
    defaults', the Little floor and the probe there. A setting with no
    latencies (all its operations failed) is no candidate."""
    fig = r.fig

    def worst(st: str) -> float:
        return bx[st].worst if st in bx else 0.0
    for st, x in bx.items():
        base = st.split("-")[0]
        off = "off" + st[len(base):]
        if off not in bx:
            off = "off"
        if base == "off" or x.worst <= 0 or worst(off) <= 0:
            continue
        q = x.worst / worst(off)
        if fig.incast_best == "" or q < fig.incast_best_ratio:
            fig.incast_best, fig.incast_best_ratio, fig.incast_best_off = st, q, off
            fig.incast_little = nin / x.rate * 1e6 / worst(off) \
                if r.irate <= 0 and x.rate > 0 and nin > 0 else None
    if worst("on") > 0 and worst("off") > 0:
        fig.incast_defaults = "%.2f" % (worst("on") / worst("off"))
    if fig.incast_best != "":
        p, q = bx[fig.incast_best].probe99, bx[fig.incast_best_off].probe99
        if anum(p) > 0 and anum(q) > 0:
            fig.incast_probe = "%.2f" % (anum(p) / anum(q))


PSLITE_OPS = ("push", "pull", "pushpull")
PSLITE_DEPTHS = (1, 16, 64)
PSLITE_SIZES = (4, 4096, 65536, 1048576)


def pslite_tcp_key(op: str, q: int, s: int) -> str:
    """The key of the TCP baseline's cell beside ps-lite's."""
    return key("pslite-tcp", "tcp", op, s, q, 1, 0)


def section_pslite(r: Report) -> None:
    """ps-lite's API over bx (pslite_bench) and bxperf over kernel TCP,
    in the same boot; the pipelining cell of issue #35."""
    run = r.run
    if run.pslite_skip:
        r.printf("\n## ps-lite's API over bx\n\nPhase pslite did not run: %s (bench.sh -n 3 or "
                 "more: scheduler, server and worker need a guest each, bx has no loopback).\n",
                 run.pslite_skip)
        return
    ran = "pslite" in run.phases
    if not run.pslite and not ran:
        return
    env = run.env_multi if "pslite_secs" in run.env_multi else run.env
    r.printf("\n## ps-lite's API over bx against TCP: requests/s and latency\n\n")
    r.printf("**bx (ps-lite)**: `pslite_bench` (tools/pslite/pslite_bench.cc), a program written "
             "against ps-lite's API and built against bx's `<ps/ps.h>`: the worker (guest 1) "
             "issues `ZPush`, `ZPull` or `ZPushPull` of one key of the size shown (float values) "
             "to the server (guest 0, `KVServerDefaultHandle`: sums pushes, answers pulls), with "
             "the number of requests shown outstanding; the scheduler is on guest 2. "
             "**TCP (bxperf)**: `bxperf -T tcp`, the project's own request/response over kernel "
             "TCP sockets (one connection, the same number of requests in flight, guest 1 to "
             "guest 0): not ps-lite, no keys, no parameter server, a push's bytes are discarded "
             "and a pull is answered from a static buffer, so it is the transport's floor rather "
             "than a like-for-like ps-lite. Push-pull has no TCP counterpart. Each op's TCP cells "
             "run right after its bx cells, in the same boot; %s s per cell. Latency from issue "
             "to completion, ms; bx/TCP: requests/s.\n\n", env.get("pslite_secs") or "-")
    r.printf("| op | outstanding | size | bx (ps-lite) req/s | p50 | p99 | TCP (bxperf) req/s "
             "| p50 | p99 | bx/TCP |\n")
    r.printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    for op in PSLITE_OPS:
        for q in PSLITE_DEPTHS:
            for s in PSLITE_SIZES:
                b = run.pslite.get((op, str(q), str(s)))
                k = pslite_tcp_key(op, q, s)
                tcp = op != "pushpull" and run.have(k)
                if ran and b is None:
                    r.missing.append("pslite/bx/%s/q%d/%s" % (op, q, s))
                if ran and op != "pushpull" and not tcp:
                    r.missing.append("pslite/tcp/%s/q%d/%s" % (op, q, s))
                if b is None and not tcp:
                    continue
                br = b.get("ops_s") if b else None
                tr = run.ops(k) if tcp else None
                r.printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", op, q, sz(s),
                         num(br), ms(b.get("p50_us") if b else None),
                         ms(b.get("p99_us") if b else None),
                         "no counterpart" if op == "pushpull" else num(tr),
                         ms(run.pct(k, "p50_us", 0.5)) if tcp else "-",
                         ms(run.pct(k, "p99_us", 0.99)) if tcp else "-",
                         ratio(br, tr))
    # The pipelining cell (issue #35): 16 outstanding against one at a
    # time, 4 B; the verdict on pushes, as selftests/bx/pslite.sh's.
    r.printf("\nPipelining, 4 B values, requests/s with 16 outstanding / one at a time:")
    for op in PSLITE_OPS:
        one = run.pslite.get((op, "1", "4"), {}).get("ops_s")
        six = run.pslite.get((op, "16", "4"), {}).get("ops_s")
        x = rawratio(six, one)
        r.printf(" %s %s / %s = %s;", op, num(six), num(one), show(x))
        if op == "push":
            r.fig.pslite_pipe = x
            r.fig.pslite_pipe_how = "%s / %s req/s" % (num(six), num(one))
    tp = [rawratio(run.ops(pslite_tcp_key(op, 16, 4)), run.ops(pslite_tcp_key(op, 1, 4)))
          for op in ("push", "pull")]
    r.printf(" TCP (bxperf) push %s, pull %s.\n", show(tp[0]), show(tp[1]))
    r.printf("\nTarget (issue #35): a worker with 16 requests outstanding moves at least 3x the "
             "small-request rate of one at a time (pushes of 4 B): %s\n",
             verdict_md(at_least(r.fig.pslite_pipe, 3)))


def section_cdfs(r: Report) -> None:
    """The sweep's CDFs, for the plots."""
    for s in SIZES:
        for op in OPS:
            for tp in ("bx", "tcp"):
                r.dat("cdf_%s_%s_%d.dat" % (tp, op, s), r.run.cdf(key("sweep", tp, op, s, 1, 1, 0)))


def section_profile(r: Report) -> None:
    """Where the guest kernel time goes (ftrace_prof.sh)."""
    run = r.run
    if not run.profile_rows:
        return
    r.printf("\n## Where the guest kernel time goes in bx and rxe (ftrace)\n\n")
    r.printf("function_graph on every function of bx and rdma_rxe while guest 1 pulls 4 KiB and "
             "pushes 64 KiB, one at a time, %s s each ", run.env.get("secs"))
    r.printf("(tools/bench/ftrace_prof.sh). Tracing inflates every call; compare rows, not "
             "absolute times. Self time excludes traced callees.\n")
    for g in range(4):
        t = "guest%d" % g
        if t not in run.profile_rows:
            continue
        r.printf("\n%s (%s): %s\n\n| function | calls | inclusive ms | self ms |\n"
                 "| --- | ---: | ---: | ---: |\n", t, "server" if g == 0 else "client",
                 run.profile_total.get(t))
        for row in run.profile_rows[t][:15]:
            r.printf("%s\n", row)


def section_fastpath(r: Report) -> None:
    """The instruction counts of fastpath.sh (fastpath.md), as they are."""
    try:
        ls = lines_of(read_text(r.fastpath))
    except OSError:
        return
    if ls:
        r.printf("\n## Instructions of the portable fast path (callgrind, host)\n\n")
        r.printf("%s\n", "\n".join(ls))


def section_plots(r: Report) -> None:
    """The plots, and the cells that are missing."""
    r.printf("\n## Plots\n\n")
    r.printf("![latency CDF, pull](lat_cdf_pull.png)\n![latency CDF, push](lat_cdf_push.png)\n")
    r.printf("![latency vs size](lat_vs_size.png)\n![throughput vs size](thr_vs_size.png)\n")
    r.printf("![incast](incast_cdf.png)\n![scaling](scaling.png)\n")
    if r.missing:
        r.printf("\n**Missing cells:**%s\n", "".join(" " + m for m in r.missing))
        r.bad = True


SECTIONS = (section_header, section_floor, section_pairs, section_sweep, section_throughput,
            section_scaling, section_hosts, section_pieces, section_incast, section_pslite,
            section_cdfs,
            section_profile, section_fastpath, section_plots)


# ---- the PyTorch example (phase torch) ------------------------------------
#
# tools/ps/torch_job.sh keeps its boot in DIR/torch: guest 0's
# result.log has selftests/bx/python.sh's torch case, which passes on
# python/examples/embedding_ps.py's lines and, as it runs it with
# --records, their records (KTAP diagnostics: "# bench-record {JSON}"),
# one transport after the other, bench "embedding_ps": "run" (what T
# runs on, and the release of guest 0's kernel), per worker "result"
# (its summary) and, with --step-log, "steps" (every step's time, pull
# and push latency); worker 0's "servers" (measured on the servers) and
# "params" (the sha256 of the parameters reached), or "unavailable" (why
# T could not run). DIR/torch/torch.jsonl has torch_job.sh's record of
# the job's settings (bench "torch_job", kind "settings").

TORCH_TRANSPORTS = ("bx", "rpc-uv", "rpc-ibv")
TORCH_NAMES = {"bx": "bx", "rpc-uv": "torch RPC (uv, TCP)",
               "rpc-ibv": "torch RPC (ibv, RDMA)"}
# Transports that must have run (rpc-ibv may say why it could not).
TORCH_NEEDED = ("bx", "rpc-uv")
# summary fields: (field, label, unit shown)
TORCH_ROWS = (("step_ms_mean", "step time, mean", "ms"),
              ("step_ms_p50", "step time, p50", "ms"),
              ("step_ms_p99", "step time, p99", "ms"),
              ("pull_us_p50", "pull, p50", "ms"),
              ("pull_us_p99", "pull, p99", "ms"),
              ("push_us_p50", "push, p50", "ms"),
              ("push_us_p99", "push, p99", "ms"),
              ("cpu_ms_per_step", "worker CPU per step", "ms"))
# the servers' line: (field, label, unit)
TORCH_SERVER_ROWS = (("server_cpu_ms_per_step", "server processes' CPU per step", "ms"),
                     ("server_host_cpu_ms_per_step", "server hosts' CPU per step", "ms"),
                     ("rdma_pkts", "RDMA packets from the server hosts", ""),
                     ("tcp_segs", "TCP segments from the server hosts", ""))
TORCH_SERIES = ("step_ms", "pull_us", "push_us")
# bx with step n + 1's pull overlapping step n's push (embedding_ps.py
# --transport bx:overlap), against bx in lock-step: the rows compared.
TORCH_OVERLAP = "bx:overlap"
TORCH_OVERLAP_ROWS = (("step_ms_mean", "step time, mean"),
                      ("step_ms_p50", "step time, p50"),
                      ("step_ms_p99", "step time, p99"))


@dataclass
class TorchRun:
    """The PyTorch example's boot, as its guests reported it."""
    settings: Optional[Record] = None       # torch_job.sh's (torch.jsonl)
    kernel: str = ""                        # of the "run" records
    # transport: each worker's summary (its "result" record), by worker
    workers: dict[str, dict[str, Record]] = field(default_factory=dict)
    servers: dict[str, Record] = field(default_factory=dict)   # transport: "servers" record
    # (transport, worker, series): every step's value, by step
    steps: dict[tuple[str, str, str], dict[int, float]] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)       # transport: sha256
    unavailable: dict[str, str] = field(default_factory=dict)  # transport: why
    what: dict[str, str] = field(default_factory=dict)         # transport: what it runs on
    fails: list[str] = field(default_factory=list)

    def mean(self, tp: str, f: str) -> Optional[float]:
        """Field f of transport tp's summaries, averaged over its workers."""
        xs = [anum(w.get(f)) for w in self.workers.get(tp, {}).values()]
        return sum(xs) / len(xs) if xs else None

    def server(self, tp: str, f: str) -> Optional[float]:
        return anum(self.servers[tp].get(f)) if tp in self.servers else None

    def values(self, tp: str, series: str) -> list[float]:
        """Every step's value of a series of tp, all workers."""
        out: list[float] = []
        for (t, _, s), v in sorted(self.steps.items()):
            if t == tp and s == series:
                out += [v[i] for i in sorted(v)]
        return out

    def ran(self) -> list[str]:
        """The transports that ran and reported their parameters."""
        return [tp for tp in TORCH_TRANSPORTS if tp in self.params and self.workers.get(tp)]

    def same_params(self) -> Optional[bool]:
        """Whether every transport that ran reached the same parameters;
        None if a needed one did not report them."""
        if not all(tp in self.params for tp in TORCH_NEEDED):
            return None
        return len({self.params[tp] for tp in self.ran()}) == 1

    def missing(self) -> list[str]:
        """Transports with neither results nor a reason."""
        return [tp for tp in TORCH_TRANSPORTS
                if tp not in self.unavailable and
                (not self.workers.get(tp) or tp not in self.params)]

    def complete(self) -> bool:
        """Results from every transport (rpc-ibv: or why it could not
        run), and their parameters."""
        return not self.missing() and self.same_params() is not None

    def add(self, r: Record) -> None:
        """Take in one of the example's records."""
        tp, w = r.text("transport"), r.text("worker")
        if r.bench != "embedding_ps":
            return
        if r.kind == "run":
            self.what[tp] = r.text("what")
            self.kernel = r.text("kernel")
        elif r.kind == "result":
            self.workers.setdefault(tp, {})[w] = r
        elif r.kind == "steps":
            first = int(anum(r.get("from")))
            for s in TORCH_SERIES:
                d = self.steps.setdefault((tp, w, s), {})
                for i, x in enumerate(r.nums(s)):
                    d[first + i] = x
        elif r.kind == "servers":
            self.servers[tp] = r
        elif r.kind == "params":
            self.params[tp] = r.text("sha256")
        elif r.kind == "unavailable":
            self.unavailable[tp] = r.text("why")


def parse_torch(texts: dict[str, str], settings: str) -> TorchRun:
    """The example's run from its guests' result.log texts (by guest):
    their records and failures; torch.jsonl's text (torch_job.sh's
    record of its settings)."""
    t = TorchRun()
    for i, ln in enumerate(lines_of(settings), 1):
        if not ln.strip():
            continue
        try:
            r = parse_record("torch/torch.jsonl:%d" % i, ln)
        except RecordError as e:
            t.fails.append(str(e))
            continue
        if (r.bench, r.kind) == ("torch_job", "settings"):
            t.settings = r
    for g, text in sorted(texts.items()):
        for i, ln in enumerate(lines_of(text.replace("\r", "")), 1):
            if ln.startswith("not ok ") or ln.startswith("# FAIL"):
                t.fails.append("g%s: %s" % (g, ln))
            if ln.startswith("# " + RECORD_PREFIX):
                try:
                    t.add(parse_record("torch/g%s:%d" % (g, i), ln[2 + len(RECORD_PREFIX):], g))
                except RecordError as e:
                    t.fails.append(str(e))
    return t


def read_torch(d: str) -> Optional[TorchRun]:
    """DIR/torch's run, None if there is none (older runs, or a run
    without phase torch)."""
    texts = {}
    for path in sorted(glob.glob(os.path.join(glob.escape(d), "g*", "result.log"))):
        g = os.path.basename(os.path.dirname(path))[1:]
        texts[g] = read_text(path)
    if "0" not in texts:
        return None

    try:
        settings = read_text(os.path.join(d, "torch.jsonl"))
    except OSError:
        settings = ""
    return parse_torch(texts, settings)


def cdf(xs: list[float]) -> list[str]:
    """Lines "value fraction" of the empirical CDF of xs."""
    s = sorted(xs)
    return ["%g %g\n" % (x, (i + 1) / len(s)) for i, x in enumerate(s)]


def torch_fig(f: str, x: Optional[float]) -> str:
    """A summary figure shown in ms (the example's µs converted), with 3
    or 4 digits; counts as they are."""
    if x is None:
        return "-"
    if f in ("rdma_pkts", "tcp_segs"):
        return "%d" % x
    return ms(x) if "_us_" in f else num(x)


def torch_cell(t: TorchRun, tp: str, f: str, x: Optional[float]) -> str:
    if tp in t.unavailable and not t.workers.get(tp):
        return "unavailable"
    return torch_fig(f, x)


def torch_rows(t: TorchRun) -> list[tuple[str, ...]]:
    """The table's rows: what, bx, torch RPC (uv), torch RPC (ibv),
    bx / uv, bx / ibv."""
    rows: list[tuple[str, ...]] = []

    def row(label: str, f: str, get) -> None:
        xs = [get(tp, f) for tp in TORCH_TRANSPORTS]
        counts = f in ("rdma_pkts", "tcp_segs")          # what ran, not a cost
        rows.append((label,) + tuple(torch_cell(t, tp, f, x) for tp, x in zip(TORCH_TRANSPORTS, xs))
                    + (("", "") if counts else (ratio(xs[0], xs[1]), ratio(xs[0], xs[2]))))
    for f, label, unit in TORCH_ROWS:
        row("%s, %s" % (label, unit), f, t.mean)
    for f, label, unit in TORCH_SERVER_ROWS:
        row("%s%s" % (label, ", " + unit if unit else ""), f, t.server)
    rows.append(("keys served, per server",) + tuple(
        " / ".join(astr(k) for k in t.servers[tp].nums("keys_pulled"))
        if tp in t.servers else "-" for tp in TORCH_TRANSPORTS) + ("", ""))
    same = t.same_params()
    rows.append(("final parameters (sha256)",) + tuple(
        t.params.get(tp, "unavailable" if tp in t.unavailable else "-")[:16]
        for tp in TORCH_TRANSPORTS) +
        ("-" if same is None else "identical" if same else "DIFFERENT", ""))
    return rows


def torch_how(t: TorchRun) -> str:
    """What ran: model, workers, steps, guests, fabric."""
    st = t.settings
    if st is None:
        return "%s worker process(es) x ? steps per transport on guest 0, the two servers " \
            "on guests 1 and 2" % max((len(w) for w in t.workers.values()), default=0)
    return "%s x %s embedding; %s worker process(es) x %s steps per transport on guest 0, " \
        "the two servers on guests 1 and 2 (%s guests with %s vCPU and %s MiB each), %s " \
        "switch" % tuple(st.text(k) for k in ("rows", "dim", "workers", "steps", "guests",
                                               "cpus", "mem_mb", "fabric"))


CONVERT_TARGET = 2.0       # a contiguous tensor's push: at most 2 memcpys
# bench_convert.py's figures as it prints them
CONVERT_FIGS = (("ms", "%.3f"), ("memcpy_ms", "%.3f"), ("ratio", "%.2f"), ("overhead_us", "%.0f"))


def conv_fig(c: Record, f: str) -> str:
    """Figure f of a conversion as bench_convert.py prints it."""
    return dict(CONVERT_FIGS)[f] % anum(c.get(f))


def convert_push(cases: list[Record]) -> Optional[Record]:
    """The case of the target, a contiguous tensor's push (keys int64)."""
    return next((c for c in cases if c.text("case") == "push_tensor_int64_keys"), None)


def convert_verdict(cases: list[Record]) -> Optional[bool]:
    """A contiguous tensor's push within CONVERT_TARGET memcpys; None if
    not measured."""
    c = convert_push(cases)
    return None if c is None else anum(c.get("ratio")) <= CONVERT_TARGET


def section_convert(r: Report) -> None:
    """What handing tensors and arrays to bx costs on the host
    (bench_convert.py's records, in DIR/convert.txt)."""
    cases = r.run.convert
    if not cases:
        return
    r.printf("\n## Tensors and arrays to bx (host)\n\n")
    r.printf("python/tests/bench_convert.py: %s float32 values (%s bytes) handed to bx.kv and "
             "bx.Bx on the host, through a stand-in for libbx that does only what libbx does "
             "with them (one memcpy into or out of its buffers), against a plain memcpy of "
             "the bytes, in rounds of one of each (medians; the ratio and the overhead, the "
             "call's time less the memcpy's, are the medians of the rounds'). Ratio 1: bx's "
             "Python path costs nothing; the target for a "
             "contiguous tensor's push is at most %g. A strided tensor is copied once, by "
             "torch's strided copy.\n\n" % (cases[0].text("values"), cases[0].text("size"),
                                            CONVERT_TARGET))
    r.printf("| case | ms | memcpy ms | ratio | overhead µs |\n"
             "| --- | ---: | ---: | ---: | ---: |\n")
    for c in cases:
        r.printf("| %s |\n", " | ".join([c.text("case")] +
                                        [conv_fig(c, f) for f, _ in CONVERT_FIGS]))
    v = convert_verdict(cases)
    r.printf("\nA tensor's push against %g memcpys: %s\n", CONVERT_TARGET,
             "not measured" if v is None else "**met**" if v else "**not met**")


def convert_rst(cases: list[Record]) -> str:
    """The conversions' line for the documentation's summary."""
    c = convert_push(cases)
    if c is None:
        return ""
    return ("Tensors to bx on the host (python/tests/bench_convert.py): %s float32 values "
            "pushed from a tensor with int64 keys in %s ms, a memcpy of their bytes %s ms: "
            "ratio %s (target <= %g).\n" % (c.text("values"), conv_fig(c, "ms"),
                                             conv_fig(c, "memcpy_ms"), conv_fig(c, "ratio"),
                                             CONVERT_TARGET))


TORCH_HEAD = ("", "bx", "torch RPC (uv, TCP)", "torch RPC (ibv, RDMA)", "bx / uv", "bx / ibv")


def section_torch(r: Report, t: TorchRun) -> None:
    """The PyTorch example over bx and over torch RPC (uv, ibv): the
    table, the step data for the plot."""
    r.printf("\n## The PyTorch example: bx against torch RPC\n\n")
    r.printf("python/examples/embedding_ps.py (tools/ps/torch_job.sh, make demo), launched by "
             "torchrun on three guests: a sparse-embedding model sharded over two server "
             "guests, trained over bx (bx.kv), then over torch.distributed.rpc pinned to "
             "TensorPipe's uv transport (TCP), then pinned to its ibv transport (RDMA verbs "
             "over rxe), in the same boot: %s%s. " % (
                 torch_how(t), "; guest kernel " + t.kernel if t.kernel else ""))
    r.printf("Worker figures are each worker's, averaged over the workers; a step is pull, "
             "a barrier of the workers, compute, push and a barrier. The servers' figures "
             "are measured on the servers over the training steps: their processes' CPU "
             "(bx: libbx's C serving thread; torch RPC: TensorPipe and Python functions) and "
             "their hosts' (with the kernel's TCP or rxe work), and what their hosts sent. All "
             "share the same emulated CPUs: read the ratios, not the absolute times "
             "(Documentation/performance.rst, \"The PyTorch example\").\n\n")
    for tp in TORCH_TRANSPORTS:
        if tp in t.what:
            r.printf("- %s: %s\n", TORCH_NAMES[tp], t.what[tp])
    for tp, why in sorted(t.unavailable.items()):
        r.printf("- %s: **unavailable**: %s\n", TORCH_NAMES.get(tp, tp), why)
    r.printf("\n| %s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n", " | ".join(TORCH_HEAD))
    for row in torch_rows(t):
        r.printf("| %s |\n", " | ".join(row))
    failures(r, t.fails)
    missing = [TORCH_NAMES[tp] for tp in t.missing()]
    if missing:
        r.printf("\n**No results from:** %s\n", ", ".join(missing))
    if t.fails or not t.complete() or t.same_params() is False:
        r.bad = True
    section_overlap(r, t)
    have = False
    for tp in TORCH_TRANSPORTS:
        for s in TORCH_SERIES:
            xs = t.values(tp, s)
            have |= bool(xs)
            r.dat("torch_%s_%s.dat" % (s, tp), cdf(xs))
        w0 = t.steps.get((tp, "0", "step_ms"), {})
        r.dat("torch_series_%s.dat" % tp, ["%d %g\n" % (i, w0[i]) for i in sorted(w0)])
    if have:
        r.printf("\n![PyTorch example, bx against torch rpc](torch_steps.png)\n")
    else:
        r.printf("\nNo per-step data (embedding_ps.py --step-log): no plot.\n")


def overlap_verdict(t: TorchRun) -> Optional[bool]:
    """Whether overlap's mean step time is below lock-step's; None if
    either did not run."""
    a, b = t.mean("bx", "step_ms_mean"), t.mean(TORCH_OVERLAP, "step_ms_mean")
    return None if a is None or b is None else b < a


def section_overlap(r: Report, t: TorchRun) -> None:
    """bx in lock-step against bx with the pulls overlapped, if both ran."""
    if not t.workers.get(TORCH_OVERLAP) or not t.workers.get("bx"):
        return
    r.printf("\n### Pipelining: bx with step n + 1's pull overlapping step n's push\n\n")
    r.printf("The same workers over bx, lock-step (pull, a barrier of the workers, compute, "
             "push, a barrier) against --overlap on (step n + 1's pull issued before step n's "
             "push, both awaited together, no barrier: bx.kv's futures). Overlap's "
             "parameters depend on how the calls interleave, so they are not compared.\n\n")
    r.printf("| | bx, lock-step | bx, overlap | overlap / lock-step |\n"
             "| --- | ---: | ---: | ---: |\n")
    for f, label in TORCH_OVERLAP_ROWS:
        a, b = t.mean("bx", f), t.mean(TORCH_OVERLAP, f)
        r.printf("| %s, ms | %s | %s | %s |\n", label, torch_fig(f, a), torch_fig(f, b),
                 ratio(b, a))
    v = overlap_verdict(t)
    r.printf("\nOverlap improves the mean step time: %s\n",
              "not measured" if v is None else "**yes**" if v else "**no**")


def torch_rst(t: TorchRun) -> str:
    """The example's table for the documentation's summary."""
    rows: list[tuple[str, ...]] = list(torch_rows(t))
    head = ("PyTorch example",) + TORCH_HEAD[1:]
    return rst_table(head, rows) + "\n" + \
        "The PyTorch example: %s; guest kernel %s, qemu TCG, Soft-RoCE (rxe); each worker's " \
        "figures averaged over the workers.\n" % (torch_how(t), t.kernel or "?")


def torch_plot(data: str, term: str) -> Optional[str]:
    """The example's plot: step time CDF and per-step series, pull and
    push latency CDFs, bx against torch RPC over uv and over ibv."""
    def have(f: str) -> bool:
        p = os.path.join(data, f)
        return os.path.isfile(p) and os.path.getsize(p) > 0

    def pl(fmt: str, using: str) -> str:
        p = ["'%s' using %s with %s lw 2 lc %d title '%s'"
             % (fmt % tp, using, "steps" if "series" not in fmt else "lines", c, TORCH_NAMES[tp])
             for tp, c in (("bx", 1), ("rpc-uv", 2), ("rpc-ibv", 3)) if have(fmt % tp)]
        return ", ".join(p) or "1/0 notitle"
    if not any(have("torch_step_ms_%s.dat" % tp) for tp in TORCH_TRANSPORTS):
        return None
    return ("set terminal %s\nset output '../torch_steps.png'\n"
            "set multiplot layout 2,2 title 'PyTorch example (embedding_ps.py): bx against torch "
            "RPC (uv, ibv), every step of every worker (TCG, rxe: ratios, not absolute times)'\n"
            "set grid\nset key bottom right\nset ylabel 'fraction of steps'\nset yrange [0:1]\n"
            "set logscale x\nset xlabel 'step time, ms'\nset title 'step time CDF'\nplot %s\n"
            "unset logscale x\nset autoscale y\nset logscale y\nset key top right\n"
            "set xlabel 'step'\nset ylabel 'ms'\nset title 'step time, worker 0, step by step'\n"
            "plot %s\nunset logscale y\nset yrange [0:1]\nset logscale x\n"
            "set key bottom right\nset ylabel 'fraction of steps'\nset xlabel 'pull latency, ms'\n"
            "set title 'pull latency CDF (a pull asks both servers at once)'\nplot %s\n"
            "set xlabel 'push latency, ms'\nset title 'push latency CDF (the same)'\n"
            "plot %s\nunset multiplot\n"
            % (term.replace("900,560", "1000,800", 1), pl("torch_step_ms_%s.dat", "1:2"),
               pl("torch_series_%s.dat", "1:2"), pl("torch_pull_us_%s.dat", "($1/1000):2"),
               pl("torch_push_us_%s.dat", "($1/1000):2")))


# ---- the targets ----------------------------------------------------------

Verdict = Optional[bool]          # met, not met, None: not measured


def at_most(a: Value, b: float) -> Verdict:
    """a <= b, None if a is not measured."""
    return None if blank(a) or a == "-" else anum(a) <= b


def at_least(a: Value, b: float) -> Verdict:
    """a >= b, None if a is not measured."""
    return None if blank(a) or a == "-" else anum(a) >= b


def below(a: Value, b: float) -> Verdict:
    """a < b, None if a is not measured."""
    return None if blank(a) or a == "-" else anum(a) < b


def both(a: Verdict, b: Verdict) -> Verdict:
    """Both met; one not met is not met whatever the other; else not
    measured."""
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def verdict_md(ok: Verdict) -> str:
    """A verdict as report.md shows it."""
    return "not measured" if ok is None else "**met**" if ok else "**not met**"


@dataclass
class TargetRow:
    """A target of the benchmark issue and this run's figure for it."""
    text: str                       # as report.md states it
    short: str                      # as the summary in the documentation does
    figure: str
    ok: Verdict
    source: str = ""                # where the figure comes from, if it varies


def conns_target(fig: Figures) -> tuple[str, Verdict]:
    """bx's connections on the client host the same, and some, with 1, 2
    and 4 processes; not measured if any count is missing."""
    same: Verdict = True
    grow = []
    for np in (1, 2, 4):
        c = fig.conns.get(np)
        if blank(c):
            same = None
            break
        if anum(c) != anum(fig.conns[1]) or anum(c) <= 0:
            same = False
        t = fig.tcp_conns.get(np)
        grow.append(astr(c) + "/" + ("-" if blank(t) else astr(t)))
    return ", ".join(grow) or "-", same


def region_target(run: Run) -> tuple[str, Verdict]:
    """Every host's maximum of every sampled cell: region bytes within the
    cap, the most of them, and how many such maxima there were (one with
    no cap read counts as not measured)."""
    n = over = 0
    most = 0.0
    cap_mb: Value = None
    auto = False
    for (t, g, f), v in run.host.items():
        cap = run.host.get((t, g, "region_cap_mb"), "")
        if f != "region_bytes" or v == "" or cap == "":
            continue
        if anum(cap) == 0:
            # region_cap_mb 0: the module's cap is a quarter of the RAM.
            if run.env.get("mem_kb", "") == "":
                continue
            cap = int(anum(run.env.get("mem_kb")) / 1024 / 4)
            auto = True
        n += 1
        most = max(most, anum(v))
        if anum(v) > anum(cap) * 1048576:
            over += 1
        cap_mb = cap
    if not n:
        return "-", None
    return sprintf("at most %s MiB on a host (%d hosts x cells sampled), cap %s MiB%s",
                   num(most / 1048576), n, cap_mb,
                   " (region_cap_mb 0: a quarter of the guest's RAM)" if auto else ""), over == 0


def target_rows(run: Run, fig: Figures) -> list[TargetRow]:
    """Each target of the benchmark issue against this run's own numbers
    (the sections); Documentation/performance.rst discusses them."""
    if fig.incast_best == "":
        incast, incast_ok = "-", None
    else:
        incast = sprintf("defaults %s; best %s %.2f of %s%s%s",
                         fig.incast_defaults or "-", fig.incast_best, fig.incast_best_ratio,
                         fig.incast_best_off,
                         "" if fig.incast_little is None else
                         " (Little's law floor at its rate: %.2f)" % fig.incast_little,
                         "" if fig.incast_probe == "" else
                         "; the 4 KiB probe's p99 there " + fig.incast_probe)
        incast_ok = fig.incast_best_ratio <= 0.5
    conns, conns_ok = conns_target(fig)
    region, region_ok = region_target(run)
    bw_how = fig.bw_how or "best of d1, d8"
    wr_how = fig.wr_how or "best of d1, d8"
    lat, rds = fig.lat_raw, fig.lat_rds
    return [
        TargetRow("small-message latency <= 1.2x raw verbs RTT (bx pull / qperf rc_lat, medians "
                  "of the paired rounds)",
                  "small-message latency, bx pull / raw verbs RTT (target <= 1.2)",
                  "64 B %s, 4 KiB %s" % (show(lat.get(64)), show(lat.get(4096))),
                  both(at_most(lat.get(64), 1.2), at_most(lat.get(4096), 1.2))),
        TargetRow("throughput >= 0.9x raw verbs bandwidth at 1 MiB, against qperf rc_bw (%s)"
                  % bw_how,
                  "1 MiB throughput, bx / qperf rc_bw (target >= 0.9)",
                  "pull %s, push %s" % (show(fig.bw_pull), show(fig.bw_push)),
                  both(at_least(fig.bw_pull, 0.9), at_least(fig.bw_push, 0.9)), bw_how),
        TargetRow("the same against the verb that moves the payload (pull: RDMA WRITE, push: "
                  "RDMA READ; %s)" % wr_how,
                  "1 MiB throughput, bx / RDMA WRITE (pull), READ (push) (target >= 0.9)",
                  "pull %s, push %s" % (show(fig.wr_pull), show(fig.rd_push)),
                  both(at_least(fig.wr_pull, 0.9), at_least(fig.rd_push, 0.9)), wr_how),
        TargetRow("bx faster than RDS over rxe (bx pull / RDS ping-pong, medians)",
                  "small-message latency, bx pull / RDS ping-pong (target < 1)",
                  "64 B %s, 4 KiB %s" % (show(rds.get(64)), show(rds.get(4096))),
                  both(below(rds.get(64), 1), below(rds.get(4096), 1))),
        TargetRow("incast p99 with the window <= 0.5x without (worst p99 of pulls and pushes)",
                  "incast worst p99, window on / off (target <= 0.5)", incast, incast_ok),
        TargetRow("connections per host independent of the number of processes (client host, 1, "
                  "2, 4 processes: bx / TCP)",
                  "connections of a client host, 1, 2, 4 processes, bx/TCP (target: bx the same)",
                  conns, conns_ok),
        TargetRow("registered memory per host bounded by the cap",
                  "registered memory per host (target: within the cap)", region, region_ok),
        TargetRow("ps-lite pipelining: 16 outstanding requests >= 3x the small-request rate of "
                  "one at a time (pslite_bench, pushes of 4 B)",
                  "ps-lite 4 B pushes, 16 outstanding / 1 (target >= 3)",
                  "-" if fig.pslite_pipe is None else
                  "%s (%s)" % (show(fig.pslite_pipe), fig.pslite_pipe_how),
                  at_least(fig.pslite_pipe, 3)),
    ]


def targets_md(rows: list[TargetRow]) -> str:
    """The targets' section of report.md."""
    out = ["## The targets, in this run\n\n",
           "Each target of the benchmark issue against this run's own numbers (sections below); "
           "Documentation/performance.rst discusses them.\n\n",
           "| target | this run | verdict |\n| --- | --- | --- |\n"]
    out += ["| %s | %s | %s |\n" % (t.text, t.figure, verdict_md(t.ok)) for t in rows]
    return "".join(out)


def with_targets(report: str, targets: str) -> str:
    """report.md with the targets first, after the paragraphs that say
    what ran."""
    m = re.search(r"^## ", report, re.M)
    if not m:
        return report
    return report[:m.start()] + targets + "\n" + report[m.start():]


# ---- the summary in the documentation -------------------------------------

BEGIN_MARK = ".. bench-summary-begin"
END_MARK = ".. bench-summary-end"


def rst_cell(s: str) -> str:
    """Text for a cell of an rst simple table: no markup but bold, no
    list or empty cell."""
    s = re.sub(r"([\\`|])", r"\\\1", s)
    s = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", s)
    s = re.sub(r"(?<!\*)\*(?!\*)", r"\\*", s)
    if re.match(r"[-+*#•]( |$)|[0-9]+[.)]( |$)|\(", s):
        s = "\\" + s
    return s


def rst_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """An rst simple table."""
    rows = [tuple(rst_cell(c) for c in row) for row in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    rule = "  ".join("=" * w for w in widths) + "\n"

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip() + "\n"
    return rule + line(head) + rule + "".join(line(r) for r in rows) + rule


def ran_on(run: Run) -> str:
    """Which kernel, guests and emulation the run ran on."""
    env, envm = run.env, run.env_multi
    s = sprintf("Measured on guest kernel %s: %s guests with %s vCPU and %d MiB each, under "
                "qemu TCG (no KVM), Soft-RoCE (rxe)", env.get("kernel"), env.get("guests"),
                env.get("cpus"), anum(env.get("mem_kb")) / 1024)
    if "guests" in envm:
        s += sprintf("; the cells with several client guests on %s guests with %s vCPU and %d "
                     "MiB each", envm["guests"], envm.get("cpus"), anum(envm.get("mem_kb")) / 1024)
    return s + sprintf("; %s s per cell.", env.get("secs"))


def summary_rows(r: Report, targets: list[TargetRow]) -> list[tuple[str, str, str]]:
    """The summary's rows: the targets', pull latency bx against TCP and
    BENCH_BASE's A/B latency."""
    run = r.run
    rows = [(t.short, t.figure + (" (%s)" % t.source if t.source and t.figure != "pull -, push -"
                                  else ""), verdict_md(t.ok).replace("*", "")) for t in targets]
    for s in (64, 4096):
        kb, kt = key("sweep", "bx", "pull", s, 1, 1, 0), key("sweep", "tcp", "pull", s, 1, 1, 0)
        mb, mt = run.mean(kb), run.mean(kt)
        pb, pt = run.pct(kb, "p99_us", 0.99), run.pct(kt, "p99_us", 0.99)
        rows.append(("pull latency at %s, ms, bx / TCP (one at a time)" % sz(s),
                     "mean %s / %s (%s), p99 %s / %s (%s)" % (
                         ms(mb), ms(mt), ratio(mb, mt), ms(pb), ms(pt), ratio(pb, pt)), ""))
    if "base" in run.lat_sets:
        for op in run.lat_ops:
            ls = lat_ab(run, "base", op)
            rows.append(("%s latency, BENCH_BASE's bx.ko / this one (%d rounds)" % (op, len(ls[0])),
                         "64 B mean %s, p99 %s; 4 KiB mean %s, p99 %s"
                         % tuple(show(median(x)) for x in ls), ""))
    return rows


def summary_rst(r: Report, targets: list[TargetRow]) -> str:
    """The run in a few lines of reStructuredText."""
    return rst_table(("figure", "this run", "verdict"), summary_rows(r, targets)) + \
        "\n" + ran_on(r.run) + "\n"


class DocError(Exception):
    """The document cannot take the summary."""


DOC_GROUPS = ("matrix", "torch", "convert", "fastpath", "base-bw", "base-lat")


def update_doc(path: str, groups: dict[str, str]) -> None:
    """Put each group's text between its marker lines of the document at
    path (after the last group if it has none yet), leaving the rest of
    the document, and the groups not given, as they were."""
    try:
        text = read_text(path)
    except OSError as e:
        raise DocError("cannot read %s: %s" % (path, e.strerror))
    ls = text.splitlines(keepends=True)

    def marks(mark: str, name: str) -> list[int]:
        return [i for i, ln in enumerate(ls) if ln.rstrip() == "%s: %s" % (mark, name)]

    def is_end(ln: str) -> bool:
        return ln.startswith(END_MARK + ": ")

    if not any(ln.startswith(BEGIN_MARK + ": ") for ln in ls):
        raise DocError("%s: needs lines \"%s: GROUP\" and, after each, \"%s: GROUP\" "
                       "(found none)" % (path, BEGIN_MARK, END_MARK))
    for name in DOC_GROUPS:
        if name not in groups:
            continue
        begin, end = marks(BEGIN_MARK, name), marks(END_MARK, name)
        if len(begin) > 1 or len(begin) != len(end) or (begin and begin[0] > end[0]):
            raise DocError("%s: needs at most one line \"%s: %s\" and, after it, one line "
                           "\"%s: %s\" (found %d and %d)" % (path, BEGIN_MARK, name, END_MARK,
                                                              name, len(begin), len(end)))
        block = ["%s: %s\n" % (BEGIN_MARK, name), "\n", groups[name].rstrip("\n") + "\n", "\n",
                 "%s: %s\n" % (END_MARK, name)]
        if begin:
            ls[begin[0]:end[0] + 1] = block
        else:
            last = max(i for i, ln in enumerate(ls) if is_end(ln))
            ls[last + 1:last + 1] = ["\n"] + block
    new = "".join(ls)
    if new != text:
        try:
            write_text(path, new)
        except OSError as e:
            raise DocError("cannot write %s: %s" % (path, e.strerror))


def fastpath_rst(ops: list[Record]) -> Optional[str]:
    """fastpath.sh's whole operations (with the before and after of
    FASTPATH_BASE if it has them) as the documentation's group; None
    without them."""
    if not ops:
        return None
    if any(not blank(o.get("base_ir")) for o in ops):
        # no revision named: the documentation carries no commits
        out = rst_table(("operation", "before", "after", "after / before"),
                        [(o.text("name"), o.text("base_ir") or "-", o.text("ir") or "-",
                          ratio(o.get("ir"), o.get("base_ir"))) for o in ops]) + \
            "\nBefore: the pure files of the revision FASTPATH_BASE named; after: this tree's; " \
            "the same fastpath.c.\n"
    else:
        out = rst_table(("operation", "instructions"),
                        [(o.text("name"), o.text("ir") or "-") for o in ops])
    return out + "\nInstructions per operation of the portable fast path, both hosts " \
        "together (tools/bench/fastpath.sh: callgrind on the host, fastpath.c driving " \
        "kmod/wire.c, kmod/flow.c and libbx/alloc.c built -O2; no locks, verbs or copies " \
        "of payload).\n"


BASE = "base"  # BENCH_BASE's bx.ko, a setting of phase bw
CONTROL = "on-p256"  # the defaults under another name: the A/A control


def base_rows(run: Run) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """This tree's module against BENCH_BASE's in the same rounds of phase
    bw: rows (cell, median of the rounds' ratios this / base, their range,
    rounds, the same of the A/A control or "-") of the 1 MiB throughput
    cells and of the small-message latency cells; either list empty if
    that part did not run."""
    def row(cell: str, get, last: float) -> Optional[tuple[str, ...]]:
        xs, cs = [], []
        for rnd in rounds(last):
            for lst, st in ((xs, BASE), (cs, CONTROL)):
                x = rawratio(get("on", rnd), get(st, rnd))
                if x is not None:
                    lst.append(x)
        if not xs:
            return None
        return (cell, show(median(xs)), span(xs), str(len(xs)),
                show(median(cs)) + (" (%s)" % span(cs) if cs else ""))

    def bw_of(op: str):
        return lambda st, rnd: run.pairbw.get((rnd, op)) if st == "on" else \
            run.pairbw_set.get((st, rnd, op))

    def lat_of(tab: dict, op: str, z: str):
        return lambda st, rnd: tab.get((st, rnd, op, z))

    bw = [row("1 MiB %s, depth 8, MB/s" % op, bw_of(op), run.pairbw_rounds)
          for op in ("pull", "push")]
    lat = [row("%s latency, %s" % (op, what), lat_of(getattr(run, tab), op, z),
               run.pairlat_rounds)
           for op in (run.lat_ops if BASE in run.lat_sets else [])
           for tab, z, what in LAT_CELLS]
    return [r for r in bw if r], [r for r in lat if r]


def base_rst(run: Run, rows: list[tuple[str, ...]], better: str) -> str:
    """One of the base groups: its table and how it was measured."""
    return rst_table(("cell", "this tree / BENCH_BASE", "range over the rounds", "rounds",
                      "A/A control"), rows) + \
        "\nbx.ko of the revision BENCH_BASE named against this tree's, reloaded for each " \
        "cell, in the same rounds of phase bw (each round in its own order: a Williams " \
        "design): the median of the rounds' ratios, %s. A/A control: the same for this " \
        "tree's module under another name (``BENCH_BW_SETS=%s``), when it ran: the " \
        "method's own error. %s\n" % (better, CONTROL, ran_on(run))


def overlap_rst(t: TorchRun) -> str:
    """The pipelining line of the torch group, if both modes ran."""
    v = overlap_verdict(t)
    if v is None:
        return ""
    a, b = t.mean("bx", "step_ms_mean"), t.mean(TORCH_OVERLAP, "step_ms_mean")
    return ("\nPipelining: bx with step n + 1's pull overlapping step n's push (``--overlap "
            "on``) against lock-step, mean step time %s / %s ms = %s; overlap improves the "
            "mean step time: %s.\n" % (torch_fig("step_ms_mean", b),
                                       torch_fig("step_ms_mean", a), ratio(b, a),
                                       "yes" if v else "no"))


def doc_groups(summary: Optional[str], torch: Optional[TorchRun], run: Run) -> dict[str, str]:
    """The documentation's groups this run measured."""
    g = {}
    if summary is not None:
        g["matrix"] = summary
    if torch is not None:
        g["torch"] = torch_rst(torch) + overlap_rst(torch)
    if run.convert:
        g["convert"] = convert_rst(run.convert)
    fp = fastpath_rst(run.fastpath)
    if fp:
        g["fastpath"] = fp
    bw, lat = base_rows(run)
    if bw:
        g["base-bw"] = base_rst(run, bw, "above 1: this tree moves more")
    if lat:
        g["base-lat"] = base_rst(run, lat, "below 1: this tree is faster")
    return g


# ---- the plots ------------------------------------------------------------

def plot_scripts(data: str, term: str) -> list[str]:
    """The gnuplot scripts of the plots that have data, in data/."""
    def have(f: str) -> bool:
        p = os.path.join(data, f)
        return os.path.isfile(p) and os.path.getsize(p) > 0
    scripts = []
    for op in OPS:
        # bx and tcp at 64 B, 64 KiB, 1 MiB; the floor's RTT
        p = []
        for s in (64, 65536, 1048576):
            for t in ("bx", "tcp"):
                f = "cdf_%s_%s_%d.dat" % (t, op, s)
                if have(f):
                    p.append("'%s' using ($1/1000):2 with steps lw 2 lc %d dt %d title '%s %d B'"
                             % (f, 1 if t == "bx" else 2,
                                1 if s == 64 else 2 if s == 65536 else 3, t, s))
        if not p:
            continue
        # the floor at 64 B: qperf round trips as vertical lines
        arrows = ""
        if have("floor.dat"):
            for ln in lines_of(read_text(os.path.join(data, "floor.dat"))):
                w = ln.split()
                if w and looks_numeric(w[0]) and anum(w[0]) == 64:
                    a, b = anum(w[1] if len(w) > 1 else "") / 1000, \
                        anum(w[2] if len(w) > 2 else "") / 1000
                    arrows += "set arrow from %g, graph 0 to %g, graph 1 nohead dt 4 lw 2 lc 3\n" \
                        "set label \"rc_lat 64 B RTT\" at %g, graph 0.95 rotate by 90 right " \
                        "offset char -0.8,0 tc lt 3\n" \
                        "set arrow from %g, graph 0 to %g, graph 1 nohead dt 4 lw 2 lc 4\n" \
                        "set label \"tcp_lat 64 B RTT\" at %g, graph 0.95 rotate by 90 right " \
                        "offset char -0.8,0 tc lt 4\n" % (a, a, a, b, b, b)
        scripts.append(
            "set terminal %s\nset output '../lat_cdf_%s.png'\n%s\n"
            "set title '%s latency CDF, depth 1 (solid 64 B, dashed 64 KiB, dotted 1 MiB)'\n"
            "set logscale x\nset xlabel 'latency, ms (whole operation)'\n"
            "set ylabel 'fraction of operations'\nset key bottom right\nset grid\nplot %s\n"
            % (term, op, arrows.rstrip("\n"), op, ", ".join(p)))
    if have("sweep_pull.dat"):
        floor = ", 'floor.dat' using 1:($2/1000) with linespoints lw 2 lc 3 title 'qperf rc_lat " \
            "RTT', 'floor.dat' using 1:($3/1000) with linespoints lw 2 lc 4 title 'qperf tcp_lat " \
            "RTT'" if have("floor.dat") else ""
        scripts.append(
            "set terminal %s\nset output '../lat_vs_size.png'\n"
            "set title 'p50 latency vs size, depth 1'\nset logscale xy\nset xlabel 'bytes'\n"
            "set ylabel 'ms'\nset key top left\nset grid\n"
            "plot 'sweep_pull.dat' using 1:($2/1000) with linespoints lw 2 lc 1 title 'bx pull', "
            "\t\t     'sweep_pull.dat' using 1:($3/1000) with linespoints lw 2 lc 2 title 'tcp pull', "
            "\t\t     'sweep_push.dat' using 1:($2/1000) with linespoints lw 2 lc 1 dt 2 title "
            "'bx push', \t\t     'sweep_push.dat' using 1:($3/1000) with linespoints lw 2 lc 2 dt 2 "
            "title 'tcp push' %s\n" % (term, floor))
        floor = ", 'floor.dat' using 1:4 with linespoints lw 2 lc 3 title 'qperf rc_bw', " \
            "'floor.dat' using 1:5 with linespoints lw 2 lc 4 title 'qperf tcp_bw'" \
            if have("floor.dat") else ""
        scripts.append(
            "set terminal %s\nset output '../thr_vs_size.png'\n"
            "set title 'throughput vs size (one client process; d8: 8 in flight)'\n"
            "set logscale xy\nset xlabel 'bytes'\nset ylabel 'MB/s'\nset key top left\n"
            "set grid\n"
            "plot 'sweep_pull.dat' using 1:6 with linespoints lw 2 lc 1 title 'bx pull', "
            "\t\t     'sweep_pull.dat' using 1:($8 > 0 ? $8 : 1/0) with linespoints lw 2 lc 1 dt 3 "
            "title 'bx pull d8', \t\t     'sweep_pull.dat' using 1:7 with linespoints lw 2 lc 2 "
            "title 'tcp pull', \t\t     'sweep_pull.dat' using 1:($9 > 0 ? $9 : 1/0) with "
            "linespoints lw 2 lc 2 dt 3 title 'tcp pull d8', \t\t     'sweep_push.dat' using 1:6 "
            "with linespoints lw 2 lc 1 dt 2 title 'bx push', \t\t     'sweep_push.dat' using 1:7 "
            "with linespoints lw 2 lc 2 dt 2 title 'tcp push' %s\n" % (term, floor))
    p = []
    for st, c in (("off", 1), ("on", 3), ("small", 4), ("tcp", 2)):
        for op in OPS:
            f = "incast_%s_%s.dat" % (st, op)
            if have(f):
                p.append("'%s' using ($1/1000):2 with steps lw 2 lc %d dt %d title '%s %s'"
                         % (f, c, 1 if op == "pull" else 2, st, op))
    if p:
        scripts.append(
            "set terminal %s\nset output '../incast_cdf.png'\n"
            "set title 'incast, 1 MiB pull (solid) and push (dashed): bx window off / on / small, "
            "and tcp'\nset logscale x\nset xlabel 'completion latency, ms'\n"
            "set ylabel 'fraction of operations'\nset key bottom right\nset grid\nplot %s\n"
            % (term, ", ".join(p)))
    if have("procs_4096.dat") or have("peers_4096.dat"):
        def pl(prefix: str, bx: int, tcp: int) -> str:
            p = []
            for s in (4096, 65536):
                f = "%s_%d.dat" % (prefix, s)
                if have(f):
                    dt = 1 if s == 4096 else 2
                    p.append("'%s' using 1:%d with linespoints lw 2 lc 1 dt %d title 'bx %d B', "
                             "'%s' using 1:%d with linespoints lw 2 lc 2 dt %d title 'tcp %d B'"
                             % (f, bx, dt, s, f, tcp, dt, s))
            return ", ".join(p) or "1/0 notitle"
        scripts.append(
            "set terminal %s\nset output '../scaling.png'\n"
            "set multiplot layout 2,2 title 'pull, depth 1 per process: 4 KiB (solid) and 64 KiB "
            "(dashed)'\nset grid\nset key top left\nset xtics 1\n"
            "set xlabel 'processes on one client guest'\nset ylabel 'ops/s, all processes'\n"
            "plot %s\nset xlabel 'client guests, 1 process each'\nplot %s\n"
            "set xlabel 'processes on one client guest'\n"
            "set ylabel 'server machine CPU, µs per op'\nplot %s\n"
            "set xlabel 'client guests, 1 process each'\nplot %s\nunset multiplot\n"
            % (term.replace("900,560", "1000,800", 1), pl("procs", 2, 3), pl("peers", 2, 3),
               pl("procs", 4, 5), pl("peers", 4, 5)))
    return scripts


def plot(d: str, data: str) -> None:
    """Draw the plots with gnuplot, if there is one, each whatever became
    of the others; their output in data/gnuplot.log."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        print("report: gnuplot missing (make deps): no plots", file=sys.stderr)
        return
    term = "pngcairo noenhanced size 900,560 font 'sans,10'"
    if subprocess.run([gnuplot, "-e", "set terminal pngcairo"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode:
        term = "png noenhanced size 900,560"
    log = data + "/gnuplot.log"
    failed = False
    with open(log, "wb") as out:
        torch = torch_plot(data, term)
        for script in plot_scripts(data, term) + ([torch] if torch else []):
            failed |= subprocess.run([gnuplot], input=script.encode(), cwd=data, stdout=out,
                                     stderr=subprocess.STDOUT).returncode != 0
    if failed:
        print("report: gnuplot failed: %s" % log, file=sys.stderr)


# ---- main -----------------------------------------------------------------

def torch_only(d: str, data: str, torch: TorchRun, doc: Optional[str]) -> int:
    """The report of a run of phase torch alone (bench.sh -P torch)."""
    run = Run()
    run.add_file(os.path.join(d, "run", "host.jsonl"))
    run.add_file(os.path.join(d, "convert.txt"), RECORD_PREFIX)
    run.add_file(os.path.join(d, "fastpath.jsonl"))
    r = Report(run, data, "")
    r.printf("# bx benchmark report\n\nThis run has only the PyTorch example (bench.sh phase "
             "torch).\n")
    if r.hostinfo != "":
        r.printf("\nThe host during the run: %s.\n", r.hostinfo)
    failures(r, run.fails)
    section_torch(r, torch)
    section_convert(r)
    out = d + "/report.md"
    write_text(out, r.text())
    plot(d, data)
    pngs = [f for f in os.listdir(d) if f.endswith(".png")]
    print("report: %s (%d plots)" % (out, len(pngs)), flush=True)
    if doc:
        try:
            update_doc(doc, doc_groups(None, torch, run))
        except DocError as e:
            print("report: --update-doc: %s" % e, file=sys.stderr)
            return 2
        print("report: the summary in %s" % doc)
    return 1 if r.bad else 0


class Parser(argparse.ArgumentParser):
    """Usage errors exit 1, as report.sh's did."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print("report: %s" % message, file=sys.stderr)
        sys.exit(1)


def main(argv: list[str]) -> int:
    """Write DIR's report; exit status 1 if the run is not whole, 2 if the
    document cannot take the summary."""
    ap = Parser(prog="report.sh", description="The report of a `make bench` run: DIR/report.md, "
                "DIR/data/, DIR/*.png.")
    ap.add_argument("dir", metavar="DIR", help="the output directory of bench.sh")
    ap.add_argument("--update-doc", metavar="FILE",
                    help="also put a summary of the run into the reStructuredText document "
                    "FILE, each group between its lines \"%s: GROUP\" and \"%s: GROUP\""
                    % (BEGIN_MARK, END_MARK))
    args = ap.parse_args(argv)
    d = args.dir
    # paths as the shell wrote them (DIR/ gives DIR//report.md)
    run_dir = d + "/run"
    data = d + "/data"
    torch = read_torch(d + "/torch")
    has_run = os.path.isfile(os.path.join(run_dir, "g0", "result.log"))
    if not has_run and torch is None:
        print("report: no run in %s (nor in %s/torch)" % (run_dir, d), file=sys.stderr)
        return 1
    os.makedirs(data, exist_ok=True)
    for f in glob.glob(os.path.join(glob.escape(data), "*.dat")) + \
            glob.glob(os.path.join(glob.escape(d), "*.png")):
        os.remove(f)
    if not has_run:
        assert torch is not None
        return torch_only(d, data, torch, args.update_doc)

    text, lines = gather_results(d)
    write_text(os.path.join(data, "results.txt"), text)
    run = read_run(lines)
    # the lossless switch's counters (bench.sh -f lossless), per phase
    for f in (os.path.join(d, "run-multi", "switch.jsonl"), os.path.join(run_dir, "switch.jsonl")):
        if os.path.isfile(f):
            run.add_file(f)
            break

    run.add_file(os.path.join(run_dir, "host.jsonl"))
    run.add_file(os.path.join(d, "convert.txt"), RECORD_PREFIX)
    run.add_file(os.path.join(d, "fastpath.jsonl"))
    r = Report(run, data, os.path.join(d, "fastpath.md"))
    for section in SECTIONS:
        section(r)
    if torch is not None:
        section_torch(r, torch)
    section_convert(r)
    targets = target_rows(run, r.fig)
    out = d + "/report.md"
    write_text(out, with_targets(r.text(), targets_md(targets)))
    # a run of the paired rounds alone (-P bw) has no cells but those (or
    # the latency cells of BENCH_LAT_ONLY)
    if not run.results and not run.pairbw_rounds and not run.pairlat_rounds:
        print("report: no bxperf results", file=sys.stderr)
        r.bad = True
    rc = 1 if r.bad else 0

    plot(d, data)
    pngs = [f for f in os.listdir(d) if f.endswith(".png")]
    print("report: %s (%d plots)" % (out, len(pngs)), flush=True)
    if args.update_doc:
        try:
            # the matrix group only from a run that measured a target
            # (not from phase bw alone, say)
            summary = summary_rst(r, targets) if any(t.ok is not None for t in targets) \
                else None
            update_doc(args.update_doc, doc_groups(summary, torch, run))
        except DocError as e:
            print("report: --update-doc: %s" % e, file=sys.stderr)
            return 2
        print("report: the summary in %s" % args.update_doc)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
