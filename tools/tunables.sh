#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tunables are declared once, in kmod/params.h (BX_TUNABLES): check
# that the netlink spec's tunables attributes carry the same ranges and
# that Documentation/bx.rst describes every one of them (make style).
#
#   tools/tunables.sh [PARAMS_H SPEC_YAML DOC_RST]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
hdr=${1:-$top/kmod/params.h}
spec=${2:-$top/Documentation/netlink/specs/bx.yaml}
doc=${3:-$top/Documentation/bx.rst}
bad=0

# "name min max" of each X(name, ATTR, default, min, max, ...) line.
table=$(sed -n 's/^[[:space:]]*X(\([a-z_0-9]*\), *[A-Z_0-9]*, *[0-9]*, *\([0-9]*\), *\([0-9]*\),.*/\1 \2 \3/p' "$hdr")
[ -n "$table" ] || { echo "tunables: no BX_TUNABLES entries in $hdr"; exit 1; }

# "name min max" of each attribute of the spec's tunables set.
spec_table=$(awk '
/^  -$/ { inset = 0 }
/^    name: tunables$/ { inset = 1; next }
inset && /^        name: / { if (n != "") print n, lo, hi; n = $2; gsub("-", "_", n); lo = 0; hi = "-" ; next }
inset && /^          min: / { lo = $2 }
inset && /^          max: / { hi = $2 }
END { if (n != "") print n, lo, hi }' "$spec")

while read -r name lo hi; do
	s=$(awk -v n="$name" '$1 == n { print $2, $3 }' <<< "$spec_table")
	if [ -z "$s" ]; then
		echo "tunables: $name is not an attribute of the spec's tunables set"
		bad=1
	elif [ "$s" != "$lo $hi" ]; then
		echo "tunables: $name is [$lo..$hi] in params.h, [${s/ /..}] in the spec"
		bad=1
	fi
	if ! grep -qE "^$name - |\`\`$name\`\`" "$doc"; then
		echo "tunables: $name is not described in ${doc#$top/}"
		bad=1
	fi
done <<< "$table"
# And nothing in the spec that the table lacks (but flow_control, a bool).
while read -r name lo hi; do
	[ "$name" = flow_control ] && continue
	awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' <<< "$table" ||
		{ echo "tunables: the spec's $name is not in params.h"; bad=1; }
done <<< "$spec_table"
[ $bad -eq 0 ] && echo "tunables: clean"
exit $bad
