#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Python package's host tests (make python-check: python/tests with
# pytest, over the fake library and the libbx just built, no /dev/bx),
# as check.sh's unit tier runs them: one KTAP line per pytest test.
# BX_LIBBX names the library (default build/lib/libbx.so.0).
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
lib=${BX_LIBBX:-$top/build/lib/libbx.so.0}
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
if ! "$py" -c 'import pytest, numpy' 2> /dev/null; then
	echo "1..0 # SKIP no pytest and numpy for $py"
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0"
	exit 0
fi
[ -e "$lib" ] || { echo "# no $lib (make lib)"; lib=; }
(cd "$top/python" && BX_LIBBX=$lib PYTHONDONTWRITEBYTECODE=1 \
	"$py" -m pytest -q -rA -p no:cacheprovider tests) > "$tmp/out" 2>&1
rc=$?
# -rA's summary: "PASSED tests/f.py::t", "FAILED tests/f.py::t - why",
# "ERROR ...", "SKIPPED [N] tests/f.py:L: why" (N tests).
awk -v rc=$rc '
/^(PASSED|FAILED|ERROR) / { n++; if ($1 == "PASSED") { p++; print "ok " n " " $2 }
	else { f++; print "not ok " n " " substr($0, length($1) + 2) } ; next }
/^SKIPPED \[[0-9]+\] / { k = substr($2, 2) + 0; for (i = 0; i < k; i++) { n++; s++; print "ok " n " " $3 " # SKIP " substr($0, index($0, $4)) } ; next }
END {
	if (rc != 0 && !f) { n++; f++; print "not ok " n " pytest exited " rc }
	print "1.." n
	printf "# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", p, f, s
	exit f != 0
}' "$tmp/out"
st=$?
[ $st -eq 0 ] || grep -v '^\(PASSED\|SKIPPED\) ' "$tmp/out" | tail -60 | sed 's/^/# /'
exit $st
