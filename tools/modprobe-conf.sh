#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The example /etc/modprobe.d/bx.conf: every module parameter of bx with
# its range and default, commented out, from the one declaration of the
# tunables (kmod/params.h) and params.c's load-time ones.
#
#   tools/modprobe-conf.sh [PARAMS_H] > bx.conf
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
hdr=${1:-$top/kmod/params.h}

cat <<'HEAD'
# bx module options. Every parameter bx has is listed below with its
# default, commented out; uncomment and change what you need, then
# reload the module ("modprobe -r bx; modprobe bx"). All but "port" can
# also be changed at runtime: /sys/module/bx/parameters/NAME or
# "bxctl set NAME VALUE". See bx(4) and Documentation/bx.rst.

# rdma_cm port bx listens on and connects to; the same on all hosts of a
# cluster (open it in the firewall between them) [1..65535]
#options bx port=7471
HEAD
# Each X(name, ATTR, default, min, max, "description" "..." ) entry: its
# lines up to the one ending without a string continuation.
awk '
/^#define BX_TUNABLES\(X\)/ { on = 1; next }
on && /^[[:space:]]*X\(/ {
	if (name != "") emit()
	line = $0
	sub(/^[[:space:]]*X\(/, "", line)
	split(line, f, /, */)
	name = f[1]; def = f[3]; lo = f[4]; hi = f[5]
	desc = ""
	collect($0)
	next
}
on && /^[[:space:]]*"/ { collect($0); next }
on && !/\\$/ { on = 0 }
function collect(l,   s) {
	while (match(l, /"[^"]*"/)) {
		desc = desc substr(l, RSTART + 1, RLENGTH - 2)
		l = substr(l, RSTART + RLENGTH)
	}
}
function emit() {
	printf("\n# %s [%s..%s]\n#options bx %s=%s\n", desc, lo, hi, name, def)
}
END { if (name != "") emit()
	printf("\n# enforce the send windows and receiver admission (N: off, for benchmarks)\n#options bx flow_control=Y\n") }
' "$hdr" | fold -s -w 72 | sed -e "s/^\([^#]\)/# \1/" -e "s/ *$//"
