#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make style's structure checks: tools/layers.py (kmod/'s layers and call
# cycles, from the built objects' symbols) and tools/tunables.sh (the
# tunables' one declaration) pass on the tree and fail on a planted
# violation. KTAP output. The layer checks need the built module's
# objects (make bx.ko); without them they are skipped.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"

echo "TAP version 13"
if ls "$top"/kmod/*.o > /dev/null 2>&1; then
	ok "layers: the tree keeps its layers" "$top/tools/layers.py"
	ok "layers: a planted upward call, and a symbol named after another file, fail" "$top/tools/layers.py" --selftest
	# Kbuild without one of the files: that file has no layer.
	sed 's/^\(bx-operations := .*\) svc$/\1/' "$top/Kbuild" > "$tmp/Kbuild"
	ok "layers: a file without a layer fails" \
		sh -c "! '$top/tools/layers.py' --kbuild '$tmp/Kbuild'"
	# A transport file moved above the operations: they call it.
	sed 's/^\(bx-transport := .*\) send \(.*\)$/\1 \2/; s/^\(bx-interfaces := .*\)$/\1 send/' \
		"$top/Kbuild" > "$tmp/Kbuild"
	ok "layers: a call to a higher layer fails" \
		sh -c "! '$top/tools/layers.py' --kbuild '$tmp/Kbuild'"
	# bx.rst's table of the files with one file in another layer.
	sed '/^   operations   file.c /a\                cm.c             (misplaced)' \
		"$top/Documentation/bx.rst" > "$tmp/bx.rst"
	ok "layers: bx.rst's table of files other than Kbuild's fails" \
		sh -c "! '$top/tools/layers.py' --doc '$tmp/bx.rst'"
else
	for t in "the tree keeps its layers" "a planted upward call, and a symbol named after another file, fail" \
		 "a file without a layer fails" "a call to a higher layer fails" \
		 "bx.rst's table of files other than Kbuild's fails"; do
		skip "layers: $t" "no kmod/*.o (make bx.ko)"
	done
fi
ok "tunables: params.h, the spec and the docs agree" "$top/tools/tunables.sh"
sed 's/X(wnd_kb, WND_KB, 8192, 64, 1048576,/X(wnd_kb, WND_KB, 8192, 64, 2097152,/' \
	"$top/kmod/params.h" > "$tmp/params.h"
ok "tunables: a range that differs from the spec's fails" \
	sh -c "! '$top/tools/tunables.sh' '$tmp/params.h' '$top/Documentation/netlink/specs/bx.yaml' '$top/Documentation/bx.rst'"
grep -v '^wnd_ops - \|``wnd_ops``' "$top/Documentation/bx.rst" > "$tmp/bx.rst"
ok "tunables: one the docs leave out fails" \
	sh -c "! '$top/tools/tunables.sh' '$top/kmod/params.h' '$top/Documentation/netlink/specs/bx.yaml' '$tmp/bx.rst'"
totals
