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
#  - on a kernel with kmemleak, a scan after each test reports leaks.
#
# Ends with "bxrig-totals: pass N fail N skip N", which the host sums.
# Usage: run_tests.sh [TEST...] (default: every test in this directory).
dir=$(cd "$(dirname "$0")" && pwd)
timeout=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
timeout=${timeout:-300}
# KASAN, lockdep and kmemleak make the debug kernel several times slower.
[ "${BXRIG_FLAVOR:-}" = debug ] && timeout=$((timeout * 3))
splats=${BX_SPLATS:-/rig/splats}
tests=${*:-dev_test libbx_test data_test nl_test module.sh fault.sh rdma_link.sh bxctl.sh recover.sh data.sh flow.sh trinity.sh}
P=0 F=0 S=0
kmemleak=/sys/kernel/debug/kmemleak

[ -w $kmemleak ] && echo clear > $kmemleak

for t in $tests; do
	n=$((${n:-0} + 1))
	mark="bxtest-begin:$t:$$:$n"
	echo "$mark" > /dev/kmsg
	echo "# bxtest: running $t"
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
	if [ -w $kmemleak ]; then
		echo scan > $kmemleak
		echo scan > $kmemleak
		# debugfs files have no size: look at the content.
		if grep -q . $kmemleak; then
			echo "# bxtest: kmemleak after $t:"
			sed 's/^/# /' $kmemleak
			f=$((f + 1))
			echo clear > $kmemleak
		fi
	fi
	if dmesg | sed -n "/$mark/,\$p" | grep -E -f "$splats" > /tmp/splat.$$; then
		echo "# bxtest: kernel splat during $t:"
		sed 's/^/# /' /tmp/splat.$$
		f=$((f + 1))
	fi
	echo "# bxtest: $t pass:$p fail:$f skip:$s"
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	rm -f $out /tmp/splat.$$
done
echo "bxrig-totals: pass $P fail $F skip $S"
[ $F -eq 0 ]
