#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# trinity against /dev/bx: random ioctl and mmap calls on bx's file from
# an unprivileged user for a bounded time. The kernel must stay clean
# (run_tests.sh fails the test on any splat or kmemleak report) and bx
# must work afterwards. Runs in the debug lane (KASAN, lockdep), and
# anywhere with BX_TRINITY=1 (check.sh's stock lane). TRINITY_SECS bounds
# the run (default 120).
. "$(dirname "$0")/lib.sh"

SECS=${TRINITY_SECS:-120}
ST=$(dirname "$0")/bx_stress

if [ "${BXRIG_FLAVOR:-}" != debug ] && [ "${BX_TRINITY:-0}" != 1 ]; then
	echo "1..0 # SKIP trinity runs in the debug lane"
	exit $KSFT_SKIP
fi
command -v trinity > /dev/null || { echo "1..0 # SKIP no trinity"; exit $KSFT_SKIP; }

fuzz_dev_bx() {
	grep -q '^nobody:' /etc/passwd ||
		echo "nobody:x:65534:65534:nobody:/tmp:/bin/sh" >> /etc/passwd
	grep -q '^nogroup:' /etc/group || echo "nogroup:x:65534:" >> /etc/group
	dir=$(mktemp -d)
	chmod 777 "$dir"
	# Only /dev/bx as a file descriptor source; only the calls bx
	# implements. trinity exits 0 when interrupted by the timeout.
	(cd "$dir" && timeout -s INT "$SECS" su -s /bin/sh nobody -c \
		"trinity -V /dev/bx -c ioctl -c mmap -C 2 -N 1000000 -q -l off \
		 --disable-fds=sockets,pipes,perf,epoll,eventfd,pseudo,timerfd,testfile,memfd,drm \
		 --stats" > /tmp/trinity.out 2>&1) || true
	grep -E '^\[main\] Ran|ioctl:|mmap:' /tmp/trinity.out | sed 's/^/# /'
	grep -q '^\[main\] Ran [0-9]* syscalls' /tmp/trinity.out ||
		fail "trinity did not run: $(tail -5 /tmp/trinity.out)"
	rm -rf "$dir"
	# bx still works and unloads.
	$ST -p 2 -n 20 -a 0 > /dev/null || fail "bx broken after trinity"
	bx_has_dev rxe0 || fail "rxe0 lost"
	rmmod bx
	modprobe bx
	wait_until 5 bx_has_dev rxe0
}

ktap_plan 1
run_test fuzz_dev_bx fuzz_dev_bx
ktap_finish
