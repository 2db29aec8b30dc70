#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection: bx's fallible functions fail on demand (fail_function),
# and allocations made by bx or by the verbs calls it makes fail at random
# (failslab, restricted by stack trace to bx's own code) while a
# multi-process workload runs and devices come and go. Every operation
# must succeed or fail with ENOMEM, and afterwards bx must work, unload and
# leave nothing behind (run_tests.sh adds a kmemleak scan).
# Needs a kernel with FAIL_FUNCTION and FAILSLAB (the debug lane).
. "$(dirname "$0")/lib.sh"

D=/sys/kernel/debug
ST=$(dirname "$0")/bx_stress
IP=/usr/sbin/ip
ENOMEM=12

if [ ! -d $D/fail_function ] || [ ! -d $D/failslab ]; then
	echo "1..0 # SKIP kernel without fail_function/failslab"
	exit $KSFT_SKIP
fi

open_fails() {
	ff_set bx_open $ENOMEM
	out=$($ST -p 4 -n 50) || fail "$out"
	ff_reset
	echo "# $out"
	echo "$out" | grep -q "ok 0 failed 200 " || fail "expected 200 ENOMEM: $out"
	out=$($ST -p 4 -n 50 -a 0) || fail "after injection: $out"
}

dev_add_fails() {
	$IP link add bxf0 type veth peer name bxf1
	$IP link set bxf0 up
	ff_set bx_dev_add $ENOMEM
	rdma link add rxe_fi type rxe netdev bxf0
	ff_reset
	bx_lacks_dev rxe_fi || fail "bound although add failed"
	rdma link delete rxe_fi
	rdma link add rxe_fi type rxe netdev bxf0
	wait_until 5 bx_has_dev rxe_fi || fail "not bound once injection stopped"
	rdma link delete rxe_fi
	$IP link del bxf0
}

# Lowest and highest text address of bx, from kallsyms.
bx_text_range() {
	awk '$4 == "[bx]" && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms |
		sort | sed -n '1p;$p'
}

# wr VALUE FILE: write, and name the file if the kernel refuses.
wr() {
	echo "$1" > "$2" || { echo "# FAIL: echo $1 > $2"; return 1; }
}

# fs_set PROBABILITY
fs_set() {
	prob=$1
	set -- $(bx_text_range)
	[ -n "$1" ] && [ -n "$2" ] || fail "no bx text symbols"
	wr "0x$1" $D/failslab/require-start
	# The last function's size is unknown; a page past its start covers it.
	wr "$(printf '0x%x' $((0x$2 + 4096)))" $D/failslab/require-end
	wr 32 $D/failslab/stacktrace-depth
	wr N $D/failslab/task-filter
	wr N $D/failslab/ignore-gfp-wait
	wr 0 $D/failslab/verbose
	wr 1 $D/failslab/interval
	wr -1 $D/failslab/times
	wr "$prob" $D/failslab/probability
}

fs_reset() {
	wr Y $D/failslab/ignore-gfp-wait
	wr 0 $D/failslab/probability
	wr -1 $D/failslab/times
	wr 1 $D/failslab/interval
	wr 0 $D/failslab/require-start
	wr 0xffffffffffffffff $D/failslab/require-end
}

failslab_workload() {
	[ -e $D/failslab/require-start ] || return $KSFT_SKIP
	# BX_TRACE=1 (run.sh -e) traces this case: a write with EINVAL that a
	# fresh debug guest does not reproduce happens here (Testing docs).
	[ -z "${BX_TRACE:-}" ] || set -x
	$IP link add bxs0 type veth peer name bxs1
	$IP link set bxs0 up
	fs_set 50
	$ST -p 6 -n 200 > /tmp/stress.out 2>&1 &
	pid=$!
	for i in 1 2 3 4 5; do
		rdma link add rxe_fs type rxe netdev bxs0 2>/dev/null || true
		rdma link delete rxe_fs 2>/dev/null || true
	done
	rc=0
	wait $pid || rc=$?
	fs_reset
	echo "# $(cat /tmp/stress.out)"
	[ $rc -eq 0 ] || fail "workload: $(cat /tmp/stress.out)"
	grep -q "failed [1-9]" /tmp/stress.out || fail "nothing was injected"
	$IP link del bxs0
	# Everything works again, and unloads.
	$ST -p 2 -n 20 -a 0 > /dev/null || fail "bx broken after injection"
	bx_has_dev rxe0 || fail "rxe0 lost"
	rmmod bx
	modprobe bx
	wait_until 5 bx_has_dev rxe0
}

# Loading bx with the N-th fault-injection site of the load failing, for
# N = 1..40 and then in steps growing by half, until a load no longer
# reaches N sites (fail_nth: /proc/thread-self/fail-nth, deterministic,
# nothing random and no other task affected). Every load succeeds or fails
# cleanly, and each outcome leaves a module that loads again and no
# reference on ib_core.
failslab_load() {
	[ -e /proc/self/fail-nth ] || return $KSFT_SKIP
	# bx without its tracepoints where the rig has one (the debug
	# lane's /opt/bx/kmod/bx-notrace.ko): the tracing core WARNs when
	# the allocations that create a module's events fail.
	ko=${BX_NOTRACE_KO:-/opt/bx/kmod/bx-notrace.ko}
	[ -f "$ko" ] || ko=$(find /lib/modules/"$(uname -r)" -name bx.ko | head -1)
	[ -n "$ko" ] || fail "bx.ko not found"
	rmmod bx
	base=$(cat /sys/module/ib_core/refcnt)
	fs_reset
	echo N > $D/failslab/ignore-gfp-wait
	echo N > $D/fail_page_alloc/ignore-gfp-wait
	loaded=0 failed=0 i=1 done=
	while [ $i -le 100000 ]; do
		out=$($(dirname "$0")/fail_nth $i "$ko") || fail "fail_nth: $out"
		case "$out" in
		unreached*) done=$i ;;
		"injected 0") loaded=$((loaded + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
		[ -e /sys/module/bx ] && rmmod bx
		[ "$(cat /sys/module/ib_core/refcnt)" -eq "$base" ] ||
			fail "ib_core refcnt leak after failing site $i"
		[ -n "$done" ] && break
		if [ $i -lt 40 ]; then i=$((i + 1)); else i=$((i * 3 / 2)); fi
	done
	echo Y > $D/failslab/ignore-gfp-wait
	echo Y > $D/fail_page_alloc/ignore-gfp-wait
	echo "# sites failed: $((loaded + failed)) ($loaded loads recovered, $failed failed); a load consults < $done"
	[ -n "$done" ] || fail "the sweep never reached the end of a load"
	[ $failed -gt 0 ] || fail "no load failed: injection ineffective"
	modprobe bx
	wait_until 5 bx_has_dev rxe0
}

trap 'ff_reset; fs_reset' EXIT
ktap_plan 4
run_test open_fails open_fails
run_test dev_add_fails dev_add_fails
run_test failslab_workload failslab_workload
run_test failslab_load failslab_load
ktap_finish
