#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test rig's wrapper around bx's selftests, inside a guest: the
# checks kselftest leaves to the harness around it.
#
#  - /dev/kmsg is marked before each test; a kernel splat logged while it
#    ran (patterns in /rig/splats) fails it;
#  - a test killed by its timeout, crashing, or exiting non-zero without
#    a failure in its own totals counts as one failure;
#  - on a kernel with kmemleak, a scan after each test that ran
#    something reports leaks.
#
# Ends with "bxrig-totals: pass N fail N skip N", which the host sums.
#
#   run_tests.sh [-s] [TEST...]
#	runs the tests itself, each under "timeout -s KILL" (settings'
#	timeout, three times that on the debug kernel): by default every
#	bx test of the installed kselftest-list.txt, in its order (the
#	order of the Makefile's TEST_GEN_PROGS, then TEST_PROGS).
#
#	-s shares the one-guest tests (bxrig-alone.txt, from the
#	Makefile's BX_ALONE) among the rig's guests in turn: they run
#	first, in that file's order, the first on guest 0 only, the second
#	on guest 1, and so on (the others print where it ran); before each
#	test that needs several guests all of them meet at a barrier, so
#	that one guest's longer share does not eat into the other's
#	barrier timeouts. Without -s every guest runs every test.
#
#   run_kselftest.sh -c bx | run_tests.sh -t
#	the kernel's runner runs the tests (its timeouts, its TAP); this
#	reads its output, passes it on, and checks and totals each test
#	as above, from the runner's "# selftests: bx: TEST" line to its
#	"ok"/"not ok" line (the test's own lines carry the runner's "# "
#	prefix). The runner does not wait for it: the mark goes into the
#	kernel log as the runner starts a test, not before (a splat in
#	its first moments is blamed on the test before it), and a
#	kmemleak scan here would overlap the next test, so there is one,
#	after the last.
dir=$(cd "$(dirname "$0")" && pwd)
mode=run share=0
case ${1:-} in
-s) share=1; shift ;;
-t) mode=tap; shift ;;
esac
timeout=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
timeout=${timeout:-300}
# KASAN, lockdep and kmemleak make the debug kernel several times slower.
[ "${BXRIG_FLAVOR:-}" = debug ] && timeout=$((timeout * 3))
splats=${BX_SPLATS:-/rig/splats}
list=$dir/../kselftest-list.txt
if [ $mode = run ] && [ $# -eq 0 ]; then
	[ -r "$list" ] || {
		echo "# bxtest: no $list (install with the kernel's selftests Makefile: make stage)"
		echo "bxrig-totals: pass 0 fail 1 skip 0"
		exit 1
	}
fi
if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=$(sed -n 's/^bx://p' "$list" 2>/dev/null | tr '\n' ' ')
fi
if [ $share -eq 1 ]; then
	alone=" $(tr '\n' ' ' < "$dir/bxrig-alone.txt")" || {
		echo "bxrig-totals: pass 0 fail 1 skip 0"
		exit 1
	}
	# The one-guest tests first, in bxrig-alone.txt's order.
	first='' rest=''
	for t in $alone; do
		case " $tests " in *" $t "*) first="$first $t" ;; esac
	done
	for t in $tests; do
		case $alone in *" $t "*) ;; *) rest="$rest $t" ;; esac
	done
	tests="$first$rest"
fi
id=${BXRIG_ID:-0} guests=${BXRIG_N:-1} k=0 n=0
P=0 F=0 S=0
kmemleak=/sys/kernel/debug/kmemleak
out=/tmp/bxtest.$$.out

[ -w $kmemleak ] && echo clear > $kmemleak

# leaks NAME [SCANS]: on a kernel with kmemleak, scan SCANS times (1),
# print what it reports, blame NAME, and fail if it reports anything.
# kmemleak reports an object once it is unreferenced and unchanged since
# the previous scan: what a test leaked shows at the scan after its own
# (finish() blames the tests since the scan before last), and only a
# second scan in a row reports what leaked since the last one.
leaks() {
	[ -w $kmemleak ] || return 0
	echo scan > $kmemleak
	[ "${2:-1}" -lt 2 ] || echo scan > $kmemleak
	# debugfs files have no size: look at the content.
	grep -q . $kmemleak || return 0
	echo "# bxtest: kmemleak after $1:"
	sed 's/^/# /' $kmemleak
	echo clear > $kmemleak
	return 1
}

# either NAME...: the non-empty NAMEs, joined by " or ".
either() {
	e=
	for x in "$@"; do
		[ -n "$x" ] && e=${e:+$e or }$x
	done
	echo "$e"
}

# The last scan's tests: what they leaked shows at the next scan.
prev=
owed=

# The last scan, after all tests: once more after a scan (for what the
# tests before it leaked), twice after tests that had none.
last_leaks() {
	if [ -n "$owed" ]; then
		leaks "$(either "$prev" "$owed")" 2
	elif [ -n "$prev" ]; then
		leaks "$prev"
	fi
}

# begin TEST: mark the kernel log, say what runs.
begin() {
	n=$((n + 1))
	mark="bxtest-begin:$1:$$:$n"
	echo "$mark" > /dev/kmsg
	echo "# bxtest: running $1"
	t0=$(date +%s)
}

# finish TEST RC [WHY]: total TEST from its output in $out and its exit
# status RC (WHY: how the runner reported it), check for leaks (once
# per test, here) and splats, and add it up.
finish() {
	ft=$1 frc=$2 why=${3:-}
	tot=$(grep '^# Totals:' $out | tail -1)
	p=$(echo "$tot" | sed -n 's/.* pass:\([0-9]*\).*/\1/p')
	f=$(echo "$tot" | sed -n 's/.* fail:\([0-9]*\).*/\1/p')
	s=$(echo "$tot" | sed -n 's/.*skip:\([0-9]*\).*/\1/p')
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ -z "$tot" ]; then
		if [ "$frc" -eq 4 ]; then
			s=1
		else
			echo "# bxtest: $ft exited $frc${why:+ ($why)} without totals"
			f=1
		fi
	elif [ "$frc" -ne 0 ] && [ "$frc" -ne 4 ] && [ "$f" -eq 0 ]; then
		echo "# bxtest: $ft exited $frc${why:+ ($why)}"
		f=1
	fi
	# A scan costs about 7 s on the debug kernel: one after each test
	# that ran something (what it leaked shows at the next one, so a
	# leak is blamed on the tests since the scan before last: $prev,
	# $owed and this one), none after a test that skipped all it had.
	# A leak it finds is counted once: not again for kmemleak's own
	# line in the kernel log, which the splat patterns also match.
	ign='^$'
	if [ $mode = tap ]; then
		owed="the tests"
	elif [ $((p + f)) -gt 0 ]; then
		if ! leaks "$(either "$prev" "$owed" "$ft")"; then
			f=$((f + 1))
			ign='kmemleak: [0-9]+ new suspected|unreferenced object'
		fi
		prev=$(either "$owed" "$ft")
		owed=
	else
		owed=${owed:-$ft}
	fi
	if dmesg | sed -n "/$mark/,\$p" | grep -E -f "$splats" |
		grep -v -E "$ign" > /tmp/splat.$$; then
		echo "# bxtest: kernel splat during $ft:"
		sed 's/^/# /' /tmp/splat.$$
		f=$((f + 1))
	fi
	echo "# bxtest: $ft pass:$p fail:$f skip:$s in $(($(date +%s) - t0)) s"
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	rm -f $out /tmp/splat.$$
}

# The kernel's runner: "# selftests: bx: T" before T, the test's output
# prefixed "# ", then "ok N selftests: bx: T[ # SKIP]" or "not ok N
# selftests: bx: T # exit=RC" (# TIMEOUT S seconds: RC 124).
tap() {
	t='' plan='' results=0
	while IFS= read -r l; do
		printf '%s\n' "$l"
		case $l in
		"1.."*)
			[ -z "$plan" ] && plan=${l#1..}
			;;
		"# selftests: bx: "*)
			t=${l#"# selftests: bx: "}
			begin "$t"
			: > $out
			;;
		"ok "*" selftests: bx: "*|"not ok "*" selftests: bx: "*)
			results=$((results + 1))
			why=
			case $l in
			"ok "*"# SKIP"*) rc=4 ;;
			"ok "*) rc=0 ;;
			*"# TIMEOUT"*) rc=124 why="timed out" ;;
			*"# exit="*)
				rc=${l##*# exit=}
				rc=${rc%% *}
				;;
			*) rc=1 why="not run" ;;
			esac
			if [ -z "$t" ]; then
				t=${l##*selftests: bx: }
				t=${t%% *}
				begin "$t"
				: > $out
			fi
			finish "$t" "$rc" "$why"
			t=
			;;
		*)
			[ -n "$t" ] && printf '%s\n' "${l#\# }" >> $out
			;;
		esac
	done
	if [ -n "$t" ]; then
		finish "$t" 1 "the runner stopped before its result"
	fi
	if [ -z "$plan" ] || [ "$results" -ne "$plan" ]; then
		echo "# bxtest: the runner planned ${plan:-no} tests, reported $results"
		F=$((F + 1))
	fi
}

if [ $mode = tap ]; then
	tap
	last_leaks || F=$((F + 1))
	echo "bxrig-totals: pass $P fail $F skip $S"
	[ $F -eq 0 ]
	exit
fi

for t in $tests; do
	if [ $share -eq 1 ]; then
		case $alone in
		*" $t "*)
			k=$((k + 1))
			g=$(((k - 1) % guests))
			if [ $g -ne "$id" ]; then
				echo "# bxtest: $t runs on guest $g"
				continue
			fi
			;;
		*)
			# A share may hold a test killed at its timeout.
			if ! bxrig barrier "bxtest.$t" $((timeout * 2)); then
				echo "# bxtest: $t: the guests did not meet to run it"
				F=$((F + 1))
				continue
			fi
			;;
		esac
	fi
	begin "$t"
	timeout -s KILL "$timeout" "$dir/$t" > $out 2>&1
	rc=$?
	cat $out
	finish "$t" $rc
done
last_leaks || F=$((F + 1))
echo "bxrig-totals: pass $P fail $F skip $S"
[ $F -eq 0 ]
