#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the generic netlink code of bx from its YAML spec with the
# kernel's generator (tools/net/ynl/ynl-gen-c.py from linux-source):
#
#   Documentation/netlink/specs/bx.yaml
#     -> uapi/linux/bx_netlink.h   (attribute and command numbers)
#     -> kmod/nl-gen.h, nl-gen.c  (policies, split ops, multicast groups)
#     -> tools/lib/ynl/bx-user.h, bx-user.c  (the user-space client of
#        bxctl and the selftests, on the YNL library in tools/lib/ynl)
#
#   tools/nl-regen.sh KSRC [--check]
#
# The generated files are committed, as in the kernel tree; --check only
# compares (for `make style`). Needs python3-yaml and python3-jsonschema.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ksrc=${1:?usage: nl-regen.sh KSRC [--check]}
check=${2:-}
gen=$ksrc/tools/net/ynl/ynl-gen-c.py

# ynl-gen-c.py finds the spec's tree by its MAINTAINERS file and the
# schema next to the specs directory: give it a tree that looks like one.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/Documentation/netlink/specs" "$root/out"
touch "$root/MAINTAINERS"
cp "$ksrc/Documentation/netlink/genetlink.yaml" "$root/Documentation/netlink/"
cp "$top/Documentation/netlink/specs/bx.yaml" "$root/Documentation/netlink/specs/"
spec=$root/Documentation/netlink/specs/bx.yaml

python3 "$gen" --spec "$spec" --mode uapi --header -o "$root/out/bx_netlink.h"
python3 "$gen" --spec "$spec" --mode kernel --header -o "$root/out/nl-gen.h"
python3 "$gen" --spec "$spec" --mode kernel --source -o "$root/out/nl-gen.c"
# The generated source includes its header by the kernel tree's path.
sed -i 's|#include "bx-nl-gen.h"|#include "nl-gen.h"|' "$root/out/nl-gen.c"
# Joining "events" needs CAP_NET_ADMIN (its connection events name other
# users' peers and errors): 6.12's generator knows no multicast group
# flags, so they are added here.
sed -i 's|\[BX_NLGRP_EVENTS\] = { "events", },|[BX_NLGRP_EVENTS] = { "events", .flags = GENL_MCAST_CAP_NET_ADMIN, },|' \
	"$root/out/nl-gen.c"
grep -q 'GENL_MCAST_CAP_NET_ADMIN' "$root/out/nl-gen.c" ||
	{ echo "nl-regen.sh: the events group's flags were not added" >&2; exit 1; }

# The user-space client (--mode user), on the YNL library shipped in
# tools/lib/ynl: it must build against it and the system's headers, and
# against the uapi header just generated, not the tree's (which a new
# attribute makes stale until this script copies it).
python3 "$gen" --spec "$spec" --mode user --header -o "$root/out/bx-user.h"
python3 "$gen" --spec "$spec" --mode user --source -o "$root/out/bx-user.c"
mkdir -p "$root/uapi/linux"
cp "$root/out/bx_netlink.h" "$root/uapi/linux/"
${CC:-cc} -std=gnu11 -fsyntax-only -I"$top/tools/lib/ynl" -I"$root/uapi" \
	-I"$top/uapi" \
	"$root/out/bx-user.c" ||
	{ echo "nl-regen.sh: the generated user client does not build" >&2; exit 1; }

rc=0
for f in uapi/linux/bx_netlink.h kmod/nl-gen.h kmod/nl-gen.c \
	 tools/lib/ynl/bx-user.h tools/lib/ynl/bx-user.c; do
	new=$root/out/$(basename "$f")
	if [ "$check" = --check ]; then
		cmp -s "$new" "$top/$f" || { echo "$f is stale: run tools/nl-regen.sh"; rc=1; }
	else
		cp "$new" "$top/$f"
		echo "  GEN $f"
	fi
done
exit $rc
