#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make style's structure checks: tools/layers.sh (kmod/'s include
# direction) and tools/tunables.sh (the tunables' one declaration) pass
# on the tree and fail on a planted violation. KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"

echo "TAP version 13"
ok "layers: the tree keeps its layers" "$top/tools/layers.sh" "$top/kmod"
ok "layers: a planted upward include fails" "$top/tools/layers.sh" --selftest
mkdir -p "$tmp/k"
cp "$top"/kmod/*.[ch] "$tmp/k/"
echo '/* new */' > "$tmp/k/orphan.c"
ok "layers: a file without a layer fails" \
	sh -c "! '$top/tools/layers.sh' '$tmp/k'"
ok "tunables: params.h, the spec and the docs agree" "$top/tools/tunables.sh"
sed 's/X(wnd_kb, WND_KB, 8192, 64, 1048576,/X(wnd_kb, WND_KB, 8192, 64, 2097152,/' \
	"$top/kmod/params.h" > "$tmp/params.h"
ok "tunables: a range that differs from the spec's fails" \
	sh -c "! '$top/tools/tunables.sh' '$tmp/params.h' '$top/Documentation/netlink/specs/bx.yaml' '$top/Documentation/bx.rst'"
grep -v '^wnd_ops - \|``wnd_ops``' "$top/Documentation/bx.rst" > "$tmp/bx.rst"
ok "tunables: one the docs leave out fails" \
	sh -c "! '$top/tools/tunables.sh' '$top/kmod/params.h' '$top/Documentation/netlink/specs/bx.yaml' '$tmp/bx.rst'"
totals
