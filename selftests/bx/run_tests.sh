#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run bx's selftests inside a guest, like kselftest's runner, plus the
# checks kselftest leaves to the harness around it:
#
#  - /dev/kmsg is marked before each test; a kernel splat logged while it
#    ran (patterns in /rig/splats) fails it;
#  - a test killed by its timeout, crashing, or exiting non-zero without
#    a failure in its own totals counts as one failure;
#  - on a kernel with kmemleak, a scan after each test that ran
#    something reports leaks.
#
# Ends with "bxrig-totals: pass N fail N skip N", which the host sums.
# Usage: run_tests.sh [-s] [TEST...] (default: every test in this
# directory).
#
# -s shares the one-guest tests among the rig's guests in turn: the
# first runs on guest 0 only, the second on guest 1, and so on (the
# others print where it ran); before each test that needs several guests
# all of them meet at a barrier, so that one guest's longer share does
# not eat into the other's barrier timeouts. Without -s every guest runs
# every test.
dir=$(cd "$(dirname "$0")" && pwd)
share=0
if [ "${1:-}" = -s ]; then
	share=1
	shift
fi
timeout=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
timeout=${timeout:-300}
# KASAN, lockdep and kmemleak make the debug kernel several times slower.
[ "${BXRIG_FLAVOR:-}" = debug ] && timeout=$((timeout * 3))
splats=${BX_SPLATS:-/rig/splats}
# The one-guest tests first, so that -s shares them before the guests
# meet, in an order that deals two guests shares of about the same
# length on the debug kernel (seconds in CI: fault.sh 174, trinity.sh
# 144, module.sh 140, nl_test 44, data_test 27, dev_test 23,
# libbx_test 19).
tests=${*:-fault.sh trinity.sh nl_test module.sh data_test limits_test netns_test libbx_test dev_test rdma_link.sh bxctl.sh admit.sh deadline.sh recover.sh data.sh flow.sh hostile.sh}
# Tests that use one guest alone (no bxrig barrier, no peer).
alone=" dev_test libbx_test data_test limits_test netns_test nl_test module.sh fault.sh trinity.sh "
id=${BXRIG_ID:-0} guests=${BXRIG_N:-1} k=0
P=0 F=0 S=0
kmemleak=/sys/kernel/debug/kmemleak

[ -w $kmemleak ] && echo clear > $kmemleak

# leaks NAME: on a kernel with kmemleak, scan (twice: an object is reported
# once it is unreferenced and unchanged since the previous scan), print
# what leaked since the last call, blame NAME, and fail if anything did.
leaks() {
	[ -w $kmemleak ] || return 0
	echo scan > $kmemleak
	echo scan > $kmemleak
	# debugfs files have no size: look at the content.
	grep -q . $kmemleak || return 0
	echo "# bxtest: kmemleak after $1:"
	sed 's/^/# /' $kmemleak
	echo clear > $kmemleak
	return 1
}

for t in $tests; do
	n=$((${n:-0} + 1))
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
	mark="bxtest-begin:$t:$$:$n"
	echo "$mark" > /dev/kmsg
	echo "# bxtest: running $t"
	t0=$(date +%s)
	out=/tmp/bxtest.$$.out
	timeout -s KILL "$timeout" "$dir/$t" > $out 2>&1
	rc=$?
	cat $out
	tot=$(grep '^# Totals:' $out | tail -1)
	p=$(echo "$tot" | sed -n 's/.* pass:\([0-9]*\).*/\1/p')
	f=$(echo "$tot" | sed -n 's/.* fail:\([0-9]*\).*/\1/p')
	s=$(echo "$tot" | sed -n 's/.*skip:\([0-9]*\).*/\1/p')
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ -z "$tot" ]; then
		if [ $rc -eq 4 ]; then
			s=1
		else
			echo "# bxtest: $t exited $rc without totals"
			f=1
		fi
	elif [ $rc -ne 0 ] && [ $rc -ne 4 ] && [ "$f" -eq 0 ]; then
		echo "# bxtest: $t exited $rc"
		f=1
	fi
	# Two scans cost about 15 s on the debug kernel: none after a test
	# that skipped all it had; the next scan, or the last one below,
	# still finds what it might have leaked.
	# A leak it finds is counted once: not again for kmemleak's own
	# line in the kernel log, which the splat patterns also match.
	ign='^$'
	if [ $((p + f)) -gt 0 ]; then
		if ! leaks "${owed:+$owed or }$t"; then
			f=$((f + 1))
			ign='kmemleak: [0-9]+ new suspected|unreferenced object'
		fi
		owed=
	else
		owed=${owed:-$t}
	fi
	if dmesg | sed -n "/$mark/,\$p" | grep -E -f "$splats" |
		grep -v -E "$ign" > /tmp/splat.$$; then
		echo "# bxtest: kernel splat during $t:"
		sed 's/^/# /' /tmp/splat.$$
		f=$((f + 1))
	fi
	echo "# bxtest: $t pass:$p fail:$f skip:$s in $(($(date +%s) - t0)) s"
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	rm -f $out /tmp/splat.$$
done
if [ -n "${owed:-}" ] && ! leaks "$owed"; then
	F=$((F + 1))
fi
echo "bxrig-totals: pass $P fail $F skip $S"
[ $F -eq 0 ]
