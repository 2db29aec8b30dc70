#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bx.ko's layers, and the check that keeps them (make style).
#
#   tools/layers.sh [DIR]         check DIR (default kmod/)
#   tools/layers.sh --selftest    show that an upward include fails
#
# Every file of kmod/ has a layer below. A file may include the headers
# of its own layer and of those below it -- in C a call needs the
# callee's declaration, so the include direction is the call direction
# -- except for the hooks listed after the layers: the few places where a
# lower layer calls up, each with its reason. A file without a layer, or
# an include that goes up and is not a hook, fails the check.
set -euo pipefail

# layer  files (by base name: NAME.c and NAME.h)
LAYERS='
0 wire flow replay span auth opstate
1 compat params region cq dev user trace event
2 net peer conn conns qp cm admit reg window send recover
3 op xfer recv svc submit
4 file chrdev nl nl-gen nl-gen-compat stats debugfs main
'
NAMES=(pure resources transport operations interfaces)

# trace.h (the tracepoints) includes nothing of bx: its events take
# objects by pointer, and main.c, the one file that compiles the code
# reading them (CREATE_TRACE_POINTS), includes their headers itself.

# FILE -> HEADER: why a lower layer calls up.
HOOKS='
dev.c -> conn.h: device events: a port changes state, a device goes (bx_conn_port_event, bx_conn_remove_dev)
dev.c conn.c cm.c recover.c -> nl.h: netlink events (bx_nl_*_event) of devices, connections and peers
conn.c conns.c qp.c window.c send.c recover.c cm.c -> op.h: the transport calls back into operations: a message arrived (bx_op_recv), a SEND completed (bx_op_sent), an op is due to go (bx_op_transmit), ends (bx_op_end, bx_op_lost, bx_op_revoked, bx_op_expire) or is costed (bx_op_cost)
window.c send.c -> xfer.h: an admitted rendezvous op registers its buffer, READs or posts its next piece (bx_op_register, bx_op_read, bx_op_piece, bx_op_plan_pieces)
conn.c send.c recover.c op.c xfer.c recv.c submit.c svc.c -> file.h: an op completes into its file (bx_file_complete), a file owns a send queue and its region
'

layer_of() {
	local base=${1%.*} l f
	while read -r l f; do
		[ -n "$l" ] || continue
		for x in $f; do
			[ "$x" = "$base" ] && { echo "$l"; return; }
		done
	done <<< "$LAYERS"
	echo -1
}

is_hook() {	# FILE HEADER
	local line lhs rhs
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		lhs=${line%% -> *}
		rhs=${line#* -> }
		rhs=${rhs%%:*}
		[ "$rhs" = "$2" ] || continue
		for x in $lhs; do
			[ "$x" = "$1" ] && return 0
		done
	done <<< "$HOOKS"
	return 1
}

check() {
	local dir=$1 bad=0 f base lf h lh
	for f in "$dir"/*.c "$dir"/*.h; do
		base=${f##*/}
		lf=$(layer_of "$base")
		if [ "$lf" -lt 0 ]; then
			echo "layers: $base has no layer (tools/layers.sh)"
			bad=1
			continue
		fi
		for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
			lh=$(layer_of "$h")
			if [ "$lh" -lt 0 ]; then
				echo "layers: $base includes $h, which has no layer"
				bad=1
			elif [ "$lh" -gt "$lf" ] && ! is_hook "$base" "$h"; then
				echo "layers: $base (${NAMES[$lf]}) includes $h (${NAMES[$lh]}): an upward call that is not a hook"
				bad=1
			fi
		done
	done
	return $bad
}

if [ "${1:-}" = --selftest ]; then
	top=$(cd "$(dirname "$0")/.." && pwd)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cp "$top"/kmod/*.[ch] "$tmp"/
	check "$tmp" > /dev/null || { echo "layers: selftest: the tree itself fails"; exit 1; }
	# A resource calling an operation, as a careless change would.
	sed -i '0,/^#include "/s//#include "op.h"\n#include "/' "$tmp/region.c"
	if out=$(check "$tmp"); then
		echo "layers: selftest: a planted upward include passed"
		exit 1
	fi
	echo "$out"
	echo "layers: selftest: the planted upward include was caught"
	exit 0
fi

check "${1:-kmod}" && echo "layers: clean"
