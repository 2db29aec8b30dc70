#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per call of bx's portable fast path, counted by callgrind
# on the host (deterministic: the same binary counts the same on every
# run).
#
#   tools/bench/fastpath.sh FASTPATH_BINARY OUTDIR [ITERATIONS]
#
# Runs the binary built from fastpath.c under valgrind --tool=callgrind
# and writes OUTDIR/fastpath.md: every fp_* step of fastpath.c and every
# bx_* function it reaches, with calls and instructions (Ir) per call,
# inclusive of what they call. The raw profile stays in
# OUTDIR/fastpath.callgrind. The same figures go as records
# (tools/bench/README.md, "Records") into OUTDIR/fastpath.jsonl, which
# tools/bench/report.py reads: bench "fastpath", kind "op" for each
# whole operation (ir, and base_ir with FASTPATH_BASE) and kind "func"
# for each fp_* step and bx_* function (calls, ir per call).
#
# FASTPATH_BASE=REF (a git revision): the same fastpath.c is also built
# against REF's kmod/wire.[ch], kmod/flow.[ch] and libbx/alloc.[ch] and
# counted, and fastpath.md begins with both whole operations side by
# side (before, after, after / before).
set -euo pipefail

bin=${1:?usage: fastpath.sh BINARY OUTDIR [ITERATIONS]}
out=${2:?usage: fastpath.sh BINARY OUTDIR [ITERATIONS]}
iters=${3:-100000}
base=${FASTPATH_BASE:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind > /dev/null ||
	{ echo "fastpath: valgrind is missing (make deps)" >&2; exit 1; }
mkdir -p "$out"
prof=$out/fastpath.callgrind

# count BINARY PROFILE LOG: run it under callgrind.
count() {
	valgrind --tool=callgrind --callgrind-out-file="$2" \
		--compress-strings=no --compress-pos=no "$1" "$iters" \
		> "$3" 2>&1 ||
		{ echo "fastpath: $1 failed:" >&2; tail "$3" >&2; exit 1; }
}

# The awk rules that read a callgrind profile: inclusive cost = self
# cost + cost of calls, calls counted per callee; ir(f) is f's
# inclusive Ir per call (-1 if never called).
# shellcheck disable=SC2016 # awk's own $ fields
PROFILE_AWK='
/^fn=/ { cur = substr($0, 4); next }
/^cfn=/ { callee = substr($0, 5); next }
/^calls=/ { split(substr($0, 7), a, " "); ncalls[callee] += a[1]; pending = 1; next }
/^[0-9]/ {
	if (pending) { incl[cur] += $2; pending = 0 } else self[cur] += $2
	seen[cur] = 1
	next
}
function ir(f) { return ncalls[f] ? (self[f] + incl[f]) / ncalls[f] : -1 }
'

# Inclusive Ir per call of the fp_op_* steps of a profile: "name Ir".
ops_of() {
	awk "$PROFILE_AWK"'
	END { for (f in ncalls) if (f ~ /^fp_op_/) printf("%s %.0f\n", f, ir(f)) }' "$1"
}

count "$bin" "$prof" "$out/fastpath.log"

if [ -n "$base" ]; then
	src=$out/fastpath-base
	rm -rf "$src" && mkdir -p "$src/tools/bench" "$src/kmod" "$src/libbx"
	rev=$(git -C "$top" rev-parse --short "$base")
	for f in kmod/wire.c kmod/wire.h kmod/flow.c kmod/flow.h libbx/alloc.c libbx/alloc.h; do
		git -C "$top" show "$rev:$f" > "$src/$f"
	done
	cp "$top/tools/bench/fastpath.c" "$src/tools/bench/"
	# A revision from before flow.c's functions carried its name
	# (bx_drr_pop, now bx_flow_drr_pop): fastpath.c's names mapped to
	# those that revision has.
	for n in $(grep -o -w -E 'bx_flow_[a-z_]+' "$src/tools/bench/fastpath.c" | sort -u); do
		grep -q -w "$n" "$src/kmod/flow.h" && continue
		o=bx_${n#bx_flow_}
		grep -q -w "$o" "$src/kmod/flow.h" && echo "#define $n $o"
	done > "$src/names.h"
	${CC:-cc} -std=gnu11 -Wall -Wextra -O2 -g -I"$top/tools/testing/unit/shim" \
		-include "$src/names.h" \
		-I"$top/uapi" -o "$src/fastpath" "$src/tools/bench/fastpath.c" \
		"$src/kmod/wire.c" "$src/kmod/flow.c" "$src/libbx/alloc.c" -lpthread
	count "$src/fastpath" "$src/fastpath.callgrind" "$src/fastpath.log"
	ops_of "$src/fastpath.callgrind" | sort > "$src/ops.before"
	ops_of "$prof" | sort > "$src/ops.after"
	join "$src/ops.before" "$src/ops.after" | awk -v rev="$rev" '
	BEGIN {
		name["fp_op_push_eager"] = "eager push, 64 B"
		name["fp_op_pull_rdv"] = "rendezvous pull, 1 MiB"
		printf("Whole operations, before (the pure files at %s) and after (this\n", rev)
		printf("tree), the same fastpath.c; Ir per operation, both hosts:\n\n")
		printf("| operation | before | after | after / before |\n| --- | ---: | ---: | ---: |\n")
	}
	{ printf("| %s | %s | %s | %.2f |\n", name[$1] ? name[$1] : $1, $2, $3, $3 / $2) }
	END { printf("\n") }' > "$src/ops.md"
fi

{
[ -z "$base" ] || cat "$out/fastpath-base/ops.md"
awk -v iters="$iters" -v cc="$(${CC:-cc} --version | head -1)" -v rec="$out/fastpath.jsonl" \
	-v before="${base:+$out/fastpath-base/ops.before}" "$PROFILE_AWK"'
function cell(f) { return ncalls[f] ? sprintf("%.0f", ir(f)) : "-" }
# sorted(RE, LEAST, A): the functions matching RE called at least LEAST
# times into A[1..n], by name; returns n.
function sorted(re, least, A,   f, n, i, j, t) {
	for (f in seen)
		if (f ~ re && ncalls[f] >= least)
			A[++n] = f
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (A[j] < A[i]) { t = A[i]; A[i] = A[j]; A[j] = t }
	return n
}
function record(kind, c, m) {
	printf("{\"v\":1,\"bench\":\"fastpath\",\"kind\":\"%s\",\"cell\":{%s},\"metrics\":{%s}}\n",
	       kind, c, m) > rec
}
END {
	printf("Instructions per call (callgrind Ir, inclusive of callees), %d\n", iters)
	printf("iterations per step; fastpath.c, kmod/wire.c, kmod/flow.c and\n")
	printf("libbx/alloc.c built with -O2 by %s. Each\n", cc)
	printf("step is a function of fastpath.c: its figure includes its own call\n")
	printf("and return (about 4 instructions).\n\n")

	printf("Wire format (kmod/wire.c), per message:\n\n")
	printf("| message | bx_wire_build | bx_wire_parse |\n| --- | ---: | ---: |\n")
	split("credit push_64B push_4KiB push_rdv_1seg push_rdv_16seg pull_req pull_resp_64B pull_written push_done", W, " ")
	for (i = 1; i in W; i++)
		printf("| %s | %s | %s |\n", W[i], cell("fp_build_" W[i]), cell("fp_parse_" W[i]))

	printf("\nFlow control (kmod/flow.c), per message or operation:\n\n")
	printf("| step | what it calls | Ir |\n| --- | --- | ---: |\n")
	printf("| `fp_credits_send` | take + grant_take | %s |\n", cell("fp_credits_send"))
	printf("| `fp_credits_recv` | add + posted + update_due | %s |\n", cell("fp_credits_recv"))
	printf("| `fp_credits_update` | take_update + grant_take + add + posted (every credit_batch one-way messages) | %s |\n", cell("fp_credits_update"))
	printf("| `fp_win_admit` | win_fits x2 + win_charge x2 (connection, host) | %s |\n", cell("fp_win_admit"))
	printf("| `fp_win_release` | win_release x2 | %s |\n", cell("fp_win_release"))
	printf("| `fp_drr_cycle_1flow` | drr_enqueue + drr_peek + drr_pop, 1 process queued | %s |\n", cell("fp_drr_cycle_1flow"))
	printf("| `fp_drr_cycle_4flows` | same, 4 processes queued | %s |\n", cell("fp_drr_cycle_4flows"))
	printf("| `fp_drr_cycle_64flows` | same, 64 processes queued | %s |\n", cell("fp_drr_cycle_64flows"))

	printf("\nAllocator (libbx/alloc.c), bx_buf_alloc()/bx_buf_free():\n\n")
	printf("| step | Ir |\n| --- | ---: |\n")
	split("64B 4KiB 64KiB 1MiB", A, " ")
	for (i = 1; i in A; i++)
		printf("| get + put, %s | %s |\n", A[i], cell("fp_alloc_pair_" A[i]))
	printf("| get, 4 KiB, 64 blocks live | %s |\n", cell("fp_alloc_get"))
	printf("| put, 4 KiB, 64 blocks live | %s |\n", cell("fp_alloc_put"))

	printf("\nWhole operations, both hosts together (all of the above that one\n")
	printf("operation goes through; no locks, verbs or copies of payload):\n\n")
	printf("| operation | Ir |\n| --- | ---: |\n")
	split("fp_op_push_eager fp_op_pull_rdv", O, " ")
	name["fp_op_push_eager"] = "eager push, 64 B"
	name["fp_op_pull_rdv"] = "rendezvous pull, 1 MiB"
	while (before != "" && (getline ln < before) > 0) {
		split(ln, w, " ")
		base[w[1]] = w[2]
	}
	for (i = 1; i in O; i++) {
		f = O[i]
		printf("| %s | %s |\n", name[f], cell(f))
		record("op", "\"op\":\"" f "\",\"name\":\"" name[f] "\"",
		       "\"ir\":" (ncalls[f] ? cell(f) : "null") ",\"base_ir\":" (f in base ? base[f] : "null"))
	}

	printf("\nEvery bx function reached, over all its call sites:\n\n")
	printf("| function | calls | Ir/call |\n| --- | ---: | ---: |\n")
	n = sorted("^bx_", iters, M)
	for (i = 1; i <= n; i++)
		printf("| `%s` | %d | %.1f |\n", M[i], ncalls[M[i]], ir(M[i]))
	n = sorted("^(fp|bx)_", 1, F)
	for (i = 1; i <= n; i++)
		record("func", "\"func\":\"" F[i] "\"",
		       sprintf("\"calls\":%.0f,\"ir\":%.1f", ncalls[F[i]], ir(F[i])))
}' "$prof"
} > "$out/fastpath.md"
echo "fastpath: $out/fastpath.md"
