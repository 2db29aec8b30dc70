#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make demo). For now: boot two guests, load bx on each,
# show the RDMA devices it bound, and prove the RC link between them.
# Later versions run the parameter-server workload over bx and TCP.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
O=${O:-$top/build}
out=$O/vm/demo
rm -rf "$out"

guest_cmd='
echo "== guest $BXRIG_ID ($BXRIG_ADDR): bx $([ -d /sys/module/bx ] && echo loaded || echo MISSING)"
echo "-- /sys/kernel/debug/bx/devices"
cat /sys/kernel/debug/bx/devices
echo "-- rdma link"
rdma link show
bxrig barrier demo.up 60
if [ "$BXRIG_ID" -eq 1 ]; then
	rping -s -a "$BXRIG_ADDR" -C 3 -S 64 > /dev/null 2>&1 &
	sleep 1
	bxrig barrier demo.listen 60
	wait
else
	bxrig barrier demo.listen 60
	if rping -c -a "$BXRIG_PEER1" -C 3 -S 64 -v > /tmp/r 2>&1; then
		echo "-- RC ping to $BXRIG_PEER1: $(grep -c "ping data" /tmp/r) of 3 round trips"
	else
		echo "-- RC ping to $BXRIG_PEER1 FAILED"; cat /tmp/r; exit 1
	fi
fi
bxrig barrier demo.done 60
'

echo "demo: booting 2 guests (qemu TCG, rxe on a unix-socket link)..."
"$top/tools/testing/vm/run.sh" -n 2 -t 180 -o "$out" "$guest_cmd" > "$out.log" 2>&1 &
pid=$!
t0=$(date +%s)
tty=0
[ -t 1 ] && tty=1
while kill -0 $pid 2>/dev/null; do
	[ $tty -eq 1 ] && printf '\rdemo: running... %3ds' $(($(date +%s) - t0))
	sleep 1
done
rc=0
wait $pid || rc=$?
[ $tty -eq 1 ] && printf '\r%40s\r' ''
sed -n 's/^g[0-9]| //p' "$out.log" | grep -v '^bxrig: \(ready\|exit\)'
grep '^run.sh:' "$out.log"
exit $rc
