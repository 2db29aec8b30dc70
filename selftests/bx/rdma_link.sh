#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rig's RDMA link: guest 0 reaches every other guest over RC through
# rdma_cm (rping), so the guests share one L2 segment with working rxe.
# Needs the rig (BXRIG_N >= 2); every guest runs this script.
. "$(dirname "$0")/lib.sh"

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi
command -v rping > /dev/null || { echo "1..0 # SKIP no rping"; exit $KSFT_SKIP; }

peer_addr() { echo "192.0.2.$(($1 + 1))"; }

rping_peers() {
	bxrig barrier rdma_link.start 60
	if [ "$BXRIG_ID" -eq 0 ]; then
		bxrig barrier rdma_link.listening 60
		i=1
		while [ $i -lt "$BXRIG_N" ]; do
			out=$(timeout 60 rping -c -a "$(peer_addr $i)" -C 5 -S 64 -v) ||
				fail "rping to guest $i failed: $out"
			[ "$(echo "$out" | grep -c 'ping data')" -eq 5 ] ||
				fail "rping to guest $i: $out"
			i=$((i + 1))
		done
	else
		timeout 90 rping -s -a "$BXRIG_ADDR" -C 5 -S 64 > /tmp/rping.out 2>&1 &
		pid=$!
		wait_until 10 sh -c 'rdma res show cm_id 2>/dev/null | grep -q LISTEN' ||
			fail "rping server not listening"
		bxrig barrier rdma_link.listening 60
		wait $pid || fail "rping server: $(cat /tmp/rping.out)"
	fi
	bxrig barrier rdma_link.done 120
}

ktap_plan 1
run_test rping_peers rping_peers
ktap_finish
