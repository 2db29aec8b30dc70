#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bx.ko as it was at a git revision, for A/B benchmarks in the same boot
# (BENCH_BASE, tools/bench/README.md): the module's sources at REF are
# built against KDIR and the result, without debug info, goes to OUT.
#
#   base-ko.sh REF KDIR OUT
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ref=${1:?usage: base-ko.sh REF KDIR OUT}
kdir=${2:?usage: base-ko.sh REF KDIR OUT}
out=${3:?usage: base-ko.sh REF KDIR OUT}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$top" archive "$ref" Kbuild kmod uapi | tar -x -C "$tmp"
make -s -C "$kdir" M="$tmp" modules > "$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; exit 1; }
mkdir -p "$(dirname "$out")"
strip --strip-debug -o "$out" "$tmp/bx.ko"
echo "base-ko: bx.ko at $(git -C "$top" rev-parse --short "$ref") -> $out"
