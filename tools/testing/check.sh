#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bx's full test run ("make check"). Tiers:
#
#   unit    host unit tests of the module's pure code (ASan + UBSan)
#   fuzz    libFuzzer targets, FUZZ_SECS seconds each (default 20)
#   old     the data path, netlink and recovery selftests on Debian 12's
#           default kernel (6.1)
#   stock   the selftests in qemu guests on Debian's kernel: the suite
#           on two guests, run by the kernel's kselftest runner
#           (run_kselftest.sh), then the cross-guest data tests on four
#           (with the debug tier, the slow cases it runs are left to it)
#   debug   the same selftests on the debug kernel (KASAN, lockdep,
#           kmemleak, fault injection), plus fault.sh and trinity.sh
#
# Each tier reports KTAP "# Totals:" lines (guests: "bxrig-totals:",
# from selftests/bx/run_tests.sh, which runs the tests or reads the
# kernel runner's TAP); a test binary that dies, a guest that does not
# report or shows a kernel splat, counts as a failure. The last line is
# "N passed, N failed, N skipped"; the exit status is non-zero on any
# failure. Select tiers with TIERS="unit fuzz stock".
#
# DEBUG_KERNEL (make check: "make debug-kernel"), when the debug tier is
# selected, builds that tier's kernel in the background at nice 19 from
# the start, so that its compiling (about 14 minutes on 2 cores the first
# time, nothing once cached) overlaps the tiers before; DEBUG_IMAGE
# ("make vm-debug") makes the tier's guest image once it is done.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
O=${O:-$top/build}
TIERS=${TIERS:-unit fuzz stock old debug}
FUZZ_SECS=${FUZZ_SECS:-20}
P=0 F=0 S=0
FAILED=()	# what failed, one line each, repeated just before the totals
log=$O/check
mkdir -p "$log"

add() { P=$((P + $1)) F=$((F + $2)) S=$((S + $3)); }
failed() { FAILED+=("$*"); }

# splat_brief CONSOLE.LOG: the first splat (tools/testing/vm/splats) on
# one line: what it says, the work it ran in (if any), then its first
# twelve call-trace frames.
splat_brief() {
	local n
	n=$(grep -a -n -m1 -E -f "$top/tools/testing/vm/splats" "$1" | cut -d: -f1) || return 0
	sed -n "${n},$((n + 80))p" "$1" | tr -d '\r' | awk '
		NR == 1 { sub(/^\[ *[0-9.]+\] /, ""); head = substr($0, 1, 160); next }
		/ Workqueue: / && wq == "" { wq = $0; sub(/.* Workqueue: +/, " [", wq); wq = wq "]" }
		!/ \? / && / ([a-zA-Z_][a-zA-Z0-9_.]*)\+0x[0-9a-f]+\/0x[0-9a-f]+/ && k < 12 {
			for (i = 1; i <= NF; i++)
				if ($i ~ /\+0x[0-9a-f]+\/0x/) {
					f = $i; sub(/\+.*/, "", f)
					if ($(i + 1) == "[bx]") f = f "[bx]"
					fr = fr (k++ ? " < " : "") f
					break
				}
		}
		END { print head wq (fr == "" ? "" : " -- " fr) }'
}

# Sum the KTAP totals in FILE; a missing totals line is one failure.
add_totals() {
	local f=$1 what=$2 tot p fl s
	tot=$(grep -a '^# Totals:' "$f" | tail -1)
	if [ -z "$tot" ]; then
		echo "check: $what: no totals (crashed?)"
		failed "$what: no totals (crashed?)"
		add 0 1 0
		return
	fi
	p=$(sed -n 's/.* pass:\([0-9]*\).*/\1/p' <<< "$tot")
	fl=$(sed -n 's/.* fail:\([0-9]*\).*/\1/p' <<< "$tot")
	s=$(sed -n 's/.* skip:\([0-9]*\).*/\1/p' <<< "$tot")
	add "$p" "$fl" "$s"
}

tier_unit() {
	local bin
	for bin in "$O"/unit/*_test; do
		local name rc
		name=$(basename "$bin")
		"$bin" > "$log/$name.log" 2>&1
		rc=$?
		grep -a -E '^(not ok|# .*failed)' "$log/$name.log"
		while read -r l; do failed "unit $name: $l"; done < <(grep -a '^not ok' "$log/$name.log")
		add_totals "$log/$name.log" "$name"
		if [ $rc -ne 0 ] && ! grep -q 'fail:[1-9]' "$log/$name.log"; then
			echo "check: $name exited $rc"
			failed "unit $name: exited $rc"
			tail -20 "$log/$name.log"
			add 0 1 0
		fi
		echo "check: unit $name: $(grep -a '^# Totals' "$log/$name.log")"
	done
}

tier_fuzz() {
	for f in "$O"/unit/fuzz_*; do
		local name corpus
		name=$(basename "$f")
		corpus=$O/fuzz-corpus/$name
		mkdir -p "$corpus"
		if "$f" -max_total_time="$FUZZ_SECS" -max_len=8300 \
			-artifact_prefix="$log/$name-" "$corpus" \
			> "$log/$name.log" 2>&1; then
			echo "check: fuzz $name: ok ($(grep -a -o 'Done [0-9]* runs' "$log/$name.log"))"
			add 1 0 0
		else
			echo "check: fuzz $name: FAILED (see $log/$name.log)"
			failed "fuzz $name (see $log/$name.log)"
			tail -30 "$log/$name.log"
			add 0 1 0
		fi
	done
}

# run_guests NAME RUN.SH-ARGS...: boot guests, sum every guest's totals.
#
# A guest that crashed with only rxe's frames in its call trace and none
# of bx's (run.sh exits 3, "rxe bug") met the known guest crash under
# rxe_init_packet -> __alloc_skb, which QEMU 7.2's cmpxchg16b caused
# (Documentation/testing.rst, "The guest CPU"); run.sh's guests no longer have
# that instruction, but should such a crash come back, its peers' tests
# fail with it.
# Such a set runs again, up to twice, and only its last run counts; the
# crashed runs' logs are kept and each retry is announced. A crash with a
# bx frame, or a third rxe crash, fails as usual.
run_guests() {
	local name=$1 out=$log/$1.log try rc
	shift
	for try in 1 2 3; do
		echo "check: guests $name: run.sh $*"
		rc=0
		"$top/tools/testing/vm/run.sh" -o "$O/vm/check-$name" "$@" > "$out" 2>&1 || rc=$?
		grep -a -E 'not ok|bxtest: (.* (fail:[1-9]|exited|splat|did not meet)|kmemleak after)|run.sh: guest|bxrig-totals|bxrig: rig network' "$out"
		[ "$try" -lt 3 ] && { [ "$rc" -eq 3 ] || [ "$rc" -eq 4 ]; } || break
		local why=rxe-crash
		[ "$rc" -eq 4 ] && why=rig-network
		mv "$out" "$out.$why$try"
		rm -rf "$O/vm/check-$name.$why$try"
		mv "$O/vm/check-$name" "$O/vm/check-$name.$why$try"
		if [ "$rc" -eq 3 ]; then
			echo "check: guests $name: a guest crashed in rxe alone (known, PLATFORM.md); running the set again (crashed run: $out.$why$try)"
			grep -a -m1 -A12 'traps: PANIC\|BUG:\|Oops:' "$O"/vm/check-"$name".$why$try/g*/console.log | head -14 | sed 's/^/check:   /'
		else
			echo "check: guests $name: a guest's link check failed before RDMA started (/init); running the set again (failed run: $out.$why$try)"
			grep -a -h -A1 'rig network\|RX:\|TX:' "$out.$why$try" | head -30 | sed 's/^/check:   /'
		fi
	done
	# For the summary: each failed test, named by the script that ran it,
	# with how long the case ran and its first reason (lib.sh run_test).
	# A guest whose tests the kernel's runner ran ("# selftests: bx:
	# TEST" lines) has each test's own lines one "# " deeper (c), and
	# the runner's "ok"/"not ok" per test, which add nothing here to
	# the cases and run_tests.sh's "exited" line.
	while read -r l; do failed "$name $l"; done < <(awk '
		{ g = substr($0, 1, index($0, "|")); l = substr($0, length(g) + 2) }
		l ~ /^# selftests: bx: / { k[g] = 1 }
		{ c = l; if (k[g] && substr(l, 1, 2) == "# ") c = substr(l, 3) }
		k[g] && l ~ /^(not )?ok [0-9]+ selftests: / { next }
		l ~ /^# bxtest: running / { t[g] = $NF; r[g] = a[g] = "" }
		c ~ /^(# FAIL: |bxrig: barrier )/ { if (r[g] == "") r[g] = substr(c, 1, 320) }
		c ~ /^# .* failed after [0-9]+ s$/ { a[g] = " after " $(NF - 1) " s" }
		c ~ /^ok / { r[g] = a[g] = "" }
		c ~ /^not ok / {
			print g " " t[g] ": " c a[g] (r[g] == "" ? "" : " -- " r[g])
			r[g] = a[g] = ""
		}
		l ~ /^# bxtest: (.* (exited|splat|did not meet)|kmemleak after)/ {
			print g substr($0, length(g) + 3)
		}
		/^run.sh: guest [0-9]+ FAILED/ { print substr($0, 9) }' "$out")
	# For the list of the slowest: "SECS SET GUEST TEST[:CASE]" per test
	# and per case (run_tests.sh and lib.sh print how long each took;
	# under the kernel's runner, a case's line is one "# " deeper).
	awk -v set="$name" '
		/^g[0-9]+\| # selftests: bx: / { k[$1] = 1 }
		/^g[0-9]+\| # bxtest: running / { t[$1] = $NF }
		/^g[0-9]+\| # bxtest: .* in [0-9]+ s$/ { print $(NF - 1), set, $1, $4 }
		/^g[0-9]+\| # bxtest-case: / ||
		(k[$1] && /^g[0-9]+\| # # bxtest-case: /) {
			print $(NF - 1), set, $1, t[$1] ":" $(NF - 2)
		}' "$out" >> "$log/times"
	local reported=0
	while read -r line; do
		read -r p fl s <<< "$(sed -n 's/.*pass \([0-9]*\) fail \([0-9]*\) skip \([0-9]*\).*/\1 \2 \3/p' <<< "$line")"
		add "$p" "$fl" "$s"
		reported=$((reported + 1))
	done < <(grep -a 'bxrig-totals:' "$out")
	# A guest's first kernel splat, in brief, for the summary (CI shows
	# only the end of this output): its first line and the call trace's
	# first frames, bx's marked.
	local g
	for g in "$O/vm/check-$name"/g*; do
		[ -s "$g/splats.log" ] || continue
		failed "$name ${g##*/} splat: $(splat_brief "$g/console.log")"
	done
	# A guest that failed outside its tests (no report, splat, timeout,
	# non-zero exit with clean totals) still fails the run.
	local gfail
	gfail=$(grep -c 'run.sh: guest [0-9]* FAILED' "$out")
	if [ "$gfail" -gt 0 ]; then
		local tfail
		tfail=$(grep -a 'bxrig-totals:' "$out" | sed -n 's/.*fail \([0-9]*\).*/\1/p' | paste -sd+ | bc)
		[ "${tfail:-0}" -eq 0 ] && add 0 "$gfail" 0
		echo "check: guests $name: $gfail guest(s) failed; full log $out"
	fi
	[ "$reported" -gt 0 ] || {
		echo "check: guests $name: no guest reported"
		failed "$name: no guest reported"
		add 0 1 0
	}
}

# The cases of the stock lane's tests that the debug lane leaves to it
# (tier_debug says why), in its two-guest and four-guest boots.
DEBUG2_LEAVES="trace.sh:recover lanes.sh:link_outage"
DEBUG4_LEAVES="flow.sh:incast flow.sh:small flow.sh:tunables hostile.sh:flood hostile.sh:keys data.sh:sizes data.sh:vec pslite.sh:pipeline"

tier_stock() {
	# The whole suite, run the upstream way: the kernel's kselftest
	# runner, as installed by its selftests Makefile (make stage), with
	# run_tests.sh -t reading its TAP for the rig's checks and totals.
	# recover.sh runs in the old lane (with a cluster secret: each
	# reconnect proves it) and in the debug lane (without), not here:
	# it is the slowest test. trinity.sh runs in the debug lane only
	# (under KASAN); python.sh's binding case (the host's own Python
	# tests, which make python-check runs) not at all. -p: the host's
	# /usr, for python.sh (the host's python3 with numpy and torch).
	#
	# With the debug tier in the run, each slow test runs once: the
	# stock boots leave to the debug lane the two-guest tests it runs
	# whole (bxctl.sh, admit.sh, deadline.sh) and run, of trace.sh,
	# lanes.sh, data.sh, flow.sh, hostile.sh and pslite.sh, only the
	# cases the debug lane leaves to them (BX_ONLY; lanes.sh's cleanup
	# restores its tunables). The one-guest tests, module.sh,
	# install.sh, kv.sh and python.sh run here whatever the tiers.
	local skip2="recover.sh python.sh:binding" only2= only4=
	if [[ " $TIERS " == *" debug "* ]]; then
		skip2="$skip2 bxctl.sh admit.sh deadline.sh"
		only2="$DEBUG2_LEAVES lanes.sh:cleanup"
		only4=$DEBUG4_LEAVES
	fi
	run_guests stock-2 -n 2 -k stock -t 1200 -p -e BX_SECRET=1 \
		-e BX_SKIP="$skip2" -e BX_ONLY="$only2" \
		"/opt/bx/selftests/run_kselftest.sh -c bx 2>&1 |" \
		/opt/bx/selftests/bx/run_tests.sh -t
	# The cross-guest data tests share one boot of four guests: data.sh,
	# kv.sh and python.sh's kv and torch cases use three of them (the
	# fourth meets the barriers), flow.sh and hostile.sh all, pslite.sh
	# all four (a ps-lite job: scheduler, two servers, two workers).
	# python.sh's other cases ran in the two-guest boot.
	run_guests stock-4 -n 4 -k stock -m 1024 -t 1500 -p \
		-e BX_SKIP="python.sh:binding python.sh:guests" \
		-e BX_ONLY="$only4" \
		/opt/bx/selftests/bx/run_tests.sh rdma_link.sh data.sh flow.sh \
		hostile.sh kv.sh python.sh pslite.sh
}

tier_old() {
	# Debian 12's default kernel (6.1, make vm-old): bx built with the
	# compat layer, the data path and recovery, the netlink family
	# (ops table and the events group's permission differ there).
	run_guests old-2 -n 2 -k old -t 1200 -e BX_SECRET=1 \
		/opt/bx/selftests/bx/run_tests.sh nl_test data_test \
		libbx_test recover.sh
}

tier_debug() {
	if [ -n "$dbg_kernel" ]; then
		echo "check: waiting for the debug kernel ($log/debug-kernel.log)"
		local w0 rc=0
		w0=$(date +%s)
		wait "$dbg_kernel" || rc=$?
		dbg_wait=$(($(date +%s) - w0))
		echo "check: the debug kernel was ready after ${dbg_wait}s of waiting"
		if [ $rc -ne 0 ]; then
			tail -5 "$log/debug-kernel.log"
			failed "debug: the debug kernel did not build ($log/debug-kernel.log)"
			add 0 1 0
			return
		fi
	fi
	if [ -n "${DEBUG_IMAGE:-}" ] && ! $DEBUG_IMAGE > "$log/vm-debug.log" 2>&1; then
		tail -5 "$log/vm-debug.log"
		failed "debug: no guest image ($log/vm-debug.log)"
		add 0 1 0
		return
	fi
	# -s: each one-guest test runs on one of the two guests only (the
	# stock lane runs them on both).
	# recover.sh's netem case (loss and reordering: timing more than
	# kernel paths) runs in the old lane only. recover.sh's flood,
	# module.sh's hotplug_many and trace.sh's recover repeat paths that
	# the debug lane's sigkill, hotplug and recover cases already take
	# (many times over, not new code): the stock and old lanes run them.
	# So does lanes.sh's link_outage (recover.sh's link_outage with four
	# lanes; the stock lane runs it).
	run_guests debug-2 -n 2 -k debug -m 1024 -t 2400 -e TRINITY_SECS=60 \
		-e BX_SKIP="recover.sh:netem recover.sh:flood module.sh:hotplug_many $DEBUG2_LEAVES" \
		/opt/bx/selftests/bx/run_tests.sh -s
	# kv.sh (user-space logic over data.sh's kernel paths), and flow.sh's
	# fairness, small-op and tunables cases (window logic the host's
	# unit tests cover too), run in the stock lane only, to keep CI
	# within its time. So do hostile.sh's flood (thousands of half-open
	# connections: under KASAN the CM backlog takes minutes to drain and
	# stalls the cases after it; auth_none, auth_wrong and rogue_secret
	# take the same half-open paths here) and keys, and data.sh's sizes
	# and vec (the copy paths data.sh's other cases take with fewer
	# iterations). pslite.sh runs here too but its pipeline case (the
	# same pushes as main, held in rounds by user space): its killed
	# server ends files, services and requests in flight under KASAN.
	run_guests debug-4 -n 4 -k debug -m 1024 -t 2400 \
		-e BX_SKIP="$DEBUG4_LEAVES" \
		/opt/bx/selftests/bx/run_tests.sh data.sh flow.sh hostile.sh pslite.sh
}

start=$(date +%s)
dbg_kernel=
if [ -n "${DEBUG_KERNEL:-}" ] && [[ " $TIERS " == *" debug "* ]]; then
	nice -n 19 $DEBUG_KERNEL > "$log/debug-kernel.log" 2>&1 &
	dbg_kernel=$!
fi
: > "$log/times"
took= dbg_wait=
for t in $TIERS; do
	echo "check: tier $t"
	t0=$(date +%s)
	"tier_$t"
	echo "check: tier $t took $(($(date +%s) - t0))s"
	took="$took $t $(($(date +%s) - t0))"
done
# CI shows the end of this output: the tiers' times and the debug
# tier's wait for its kernel, on the line it shows.
echo "check: $(($(date +%s) - start))s:$took${dbg_wait:+ (the debug tier waited ${dbg_wait}s for its kernel)}"
# What to look at first when make check grows: the slowest tests and
# cases (TEST:CASE), on the guest where each took longest.
if [ -s "$log/times" ]; then
	echo "check: the slowest tests and cases:"
	sort -rn "$log/times" | awk '!seen[$2 " " $4]++' | head -12 |
		awk '{ sub(/\|$/, "", $3)
		       printf "check:   %5d s  %-8s %-3s %s\n", $1, $2, $3, $4 }'
fi
# CI shows the end of this output: say there what failed.
for f in "${FAILED[@]}"; do echo "check: FAILED: $f"; done
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
