#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/testing/vm/splat-owner: whose code a guest's first kernel splat
# ran (bx, rxe or other), from console lines as the guests print them.
# KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
OWNER=$top/tools/testing/vm/splat-owner

# console NAME LINES...: a console log of those lines, after a boot line.
console() {
	local f=$tmp/$1
	shift
	{ echo "[    0.000000] Linux version 6.1.0-57-amd64"; printf '%s\n' "$@"; } > "$f"
}
owner_is() {	# LOG WANT
	local got
	got=$("$OWNER" "$tmp/$1") || { echo "exit $?"; return 1; }
	[ "$got" = "$2" ] || { echo "got '$got', want '$2'"; return 1; }
}

mods="[  1.0] Modules linked in: bx(OE) rdma_cm ib_cm rdma_rxe ib_core"
console bx "[  1.0] WARNING: CPU: 0 PID: 9 at kmod/conns.c:99 conn_teardown+0x1/0x2 [bx]" \
	"$mods" "[  1.0]  bx_qp_free+0x3c/0x130 [bx]" "[  1.0]  process_one_work+0x1c7/0x380"
console rxe "[  1.0] BUG: kernel NULL pointer dereference, address: 0000000000000008" \
	"$mods" "[  1.0]  rxe_requester+0x10/0x900 [rdma_rxe]" "[  1.0]  process_one_work+0x1c7/0x380"
console other "[  1.0] WARNING: CPU: 1 PID: 2 at net/core/dev.c:1 dev_watchdog+0x1/0x2" \
	"$mods" "[  1.0]  call_timer_fn+0x1/0x2"
console cleanup "[  1.0] WARNING: CPU: 0 PID: 104 at drivers/infiniband/sw/rxe/rxe_pool.c:255 __rxe_cleanup+0x118/0x160 [rdma_rxe]" \
	"$mods" "[  1.0]  rxe_destroy_qp+0x26/0x30 [rdma_rxe]" "[  1.0]  rdma_destroy_qp+0x26/0x80 [rdma_cm]" \
	"[  1.0]  bx_qp_free+0x3c/0x130 [bx]" "[  1.0]  conn_teardown_end+0xf/0xd0 [bx]"
# Another rxe warning under bx's frames stays bx's: only the cleanup
# timeout is rxe waiting on itself.
console rxe_other "[  1.0] WARNING: CPU: 0 PID: 104 at drivers/infiniband/sw/rxe/rxe_qp.c:10 rxe_qp_do_cleanup+0x1/0x2 [rdma_rxe]" \
	"$mods" "[  1.0]  rxe_destroy_qp+0x26/0x30 [rdma_rxe]" "[  1.0]  bx_qp_free+0x3c/0x130 [bx]"
console none "[  1.0] bx: loaded" "$mods"

ok "a splat with bx's frames is bx's" owner_is bx bx
ok "a splat with rxe's frames only is rxe's" owner_is rxe rxe
ok "a splat with neither is other" owner_is other other
ok "rxe's cleanup timeout under bx's frames is rxe's" owner_is cleanup rxe
ok "another rxe warning under bx's frames is bx's" owner_is rxe_other bx
ok "no splat: nothing, exit 1" sh -c "! '$OWNER' '$tmp/none'"
totals
