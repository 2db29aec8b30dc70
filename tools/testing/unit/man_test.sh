#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The manual pages in man/: every page renders with man(1) without a
# warning (as "make man-check" does), every function libbx exports
# (libbx/libbx.map) has a page man/man3/NAME.3 that names it, man.mk's
# MAN_PAGES lists exactly the pages, and the pages keep up with the
# code they describe: bx(4) and the sysfs ABI document every tunable of
# kmod/params.h with its range and default, every ioctl and sysfs
# attribute; bxctl(8) every tunable and object name. And every
# Documentation/*.rst is valid reStructuredText. KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
man=$top/man
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0
results=()

# Record one test: DESCRIPTION COMMAND...; its output is kept as
# diagnostics if it fails.
t() {
	local d=$1
	shift
	n=$((n + 1))
	if "$@" > "$tmp/out" 2>&1; then
		pass=$((pass + 1))
		results+=("ok $n $d")
	else
		fail=$((fail + 1))
		results+=("not ok $n $d")
		while IFS= read -r l; do results+=("# $l"); done < "$tmp/out"
	fi
}

# A page renders without a warning (from man/, for ".so manN/...").
renders() {
	local err
	err=$(cd "$man" && LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings -l "$1" 2>&1 > "$tmp/page") || {
		echo "man exited non-zero: $err"
		return 1
	}
	[ -z "$err" ] || { echo "$err"; return 1; }
	[ -s "$tmp/page" ] || { echo "empty output"; return 1; }
}

# The NAME section of the page at man/man3/$1.3 (through a .so) lists $1.
has_page() {
	local f=$man/man3/$1.3 so
	[ -f "$f" ] || { echo "no man/man3/$1.3"; return 1; }
	so=$(sed -n 's/^\.so[[:space:]]*//p' "$f")
	if [ -n "$so" ]; then
		f=$man/$so
		[ -f "$f" ] || { echo "$1.3: .so $so: no such page"; return 1; }
	fi
	sed -n '/^\.SH NAME/,/^\.SH/p' "$f" | grep -qE "(^|[ ,])$1([ ,]|$)" ||
		{ echo "$(basename "$f") does not name $1"; return 1; }
}

# The functions libbx exports: the global: names of its version script.
exported() {
	awk '/global:/ { g = 1; next } /local:|}/ { g = 0 }
	     g && /^[[:space:]]*[a-z_0-9]+;/ { gsub(/[[:space:];]/, ""); print }' \
		"$top/libbx/libbx.map"
}

# man.mk's MAN_PAGES against the pages in man/.
list_matches() {
	make -s --no-print-directory -C "$top" -f man/man.mk \
		-E 'print-pages: ; @echo $(MAN_PAGES)' print-pages |
		tr ' ' '\n' | sed '/^$/d' | sort > "$tmp/listed"
	(cd "$top" && find man -name '*.[0-9]' | sort) > "$tmp/present"
	diff "$tmp/listed" "$tmp/present"
}

# Each X(name, ATTR, default, min, max, ...) of kmod/params.h.
tunables() {
	sed -n 's/^[[:space:]]*X(\([a-z_0-9]*\), [A-Z_0-9]*, \([0-9]*\), \([0-9]*\), \([0-9]*\),.*/\1 \2 \3 \4/p' \
		"$top/kmod/params.h"
}

# bx(4) has ".IR name " (min to max; default def)"" for each.
bx4_tunables() {
	local name def lo hi bad=0
	[ "$(tunables | wc -l)" -gt 0 ] || { echo "no tunables in params.h"; return 1; }
	while read -r name def lo hi; do
		grep -qxF ".IR $name \" ($lo to $hi; default $def)\"" "$man/man4/bx.4" ||
			{ echo "bx.4: $name ($lo to $hi; default $def) missing"; bad=1; }
	done < <(tunables)
	for name in port flow_control allow; do
		grep -q "^\.IR $name \" (" "$man/man4/bx.4" ||
			{ echo "bx.4: $name missing"; bad=1; }
	done
	return $bad
}

# The sysfs ABI has an entry with the range and default of each.
abi_tunables() {
	local abi=$top/Documentation/ABI/testing/sysfs-module-bx
	local name def lo hi bad=0
	while read -r name def lo hi; do
		awk -v w="/sys/module/bx/parameters/$name" -v r="$lo to $hi, default $def." '
			$1 == "What:" { on = ($2 == w); if (on) found = 1 }
			on && index($0, r) { ok = 1 }
			END { exit !(found && ok) }' "$abi" ||
			{ echo "sysfs-module-bx: $name ($lo to $hi, default $def.) missing"; bad=1; }
	done < <(tunables)
	for name in port flow_control allow; do
		grep -qx "What:[[:space:]]*/sys/module/bx/parameters/$name" "$abi" ||
			{ echo "sysfs-module-bx: $name missing"; bad=1; }
	done
	return $bad
}

# Every attribute of /sys/class/misc/bx (DEVICE_ATTR_RO in chrdev.c)
# has an ABI entry and is in bx(4).
sysfs_attrs() {
	local a bad=0 attrs
	attrs=$(sed -n 's/^static DEVICE_ATTR_R[OW](\([a-z_0-9]*\));/\1/p' "$top/kmod/chrdev.c")
	[ -n "$attrs" ] || { echo "no attributes in chrdev.c"; return 1; }
	for a in $attrs; do
		grep -qx "What:[[:space:]]*/sys/class/misc/bx/$a" \
			"$top/Documentation/ABI/testing/sysfs-class-misc-bx" ||
			{ echo "sysfs-class-misc-bx: $a missing"; bad=1; }
		sed -n '/^\.SH SYSFS/,/^\.SH/p' "$man/man4/bx.4" | grep -qx "\.I $a" ||
			{ echo "bx.4: SYSFS: $a missing"; bad=1; }
	done
	return $bad
}

# Every BX_IOC_* command of the uapi header is in bx(4)'s IOCTLS.
ioctls() {
	local c bad=0
	for c in $(sed -n 's/^#define \(BX_IOC_[A-Z_]*\)[[:space:]]*_IO.*/\1/p' \
			"$top/uapi/linux/bx.h"); do
		grep -q "^\.SS .*\b$c\b" "$man/man4/bx.4" ||
			{ echo "bx.4: $c has no subsection"; bad=1; }
	done
	return $bad
}

# bxctl(8) names every tunable (netlink spelling) and every object name
# bxctl accepts.
bxctl_names() {
	local w bad=0
	(cd "$man" && LC_ALL=C.UTF-8 MANWIDTH=80 man -l man8/bxctl.8 2>/dev/null) |
		sed 's/‐/-/g' > "$tmp/bxctl.txt"
	for w in $(tunables | awk '{ gsub(/_/, "-", $1); print $1 }') flow-control \
		 $(grep -o 'A_[A-Z]*\[\] = {[^}]*}' "$top/tools/bxctl/bxctl.c" |
		   grep -o '"[a-z]*"' | tr -d '"') allow secret monitor help; do
		grep -qw -- "$w" "$tmp/bxctl.txt" ||
			{ echo "bxctl.8: $w missing"; bad=1; }
	done
	return $bad
}

# A page with a warning fails the check (the check itself works).
catches_warning() {
	mkdir -p "$tmp/bad/man3"
	printf '.TH bad 3\n.SH NAME\nbad \\- bad\n.XX\n' > "$tmp/bad/man3/bad.3"
	! (man=$tmp/bad; renders man3/bad.3)
}

command -v man > /dev/null || echo "# man(1) is missing: apt-get install man-db groff-base"

for p in $(cd "$man" && find . -name '*.[0-9]' | sed 's|^\./||' | sort); do
	t "renders without warnings: $p" renders "$p"
done
t "a page with a warning is caught" catches_warning
for f in $(exported); do
	t "libbx.map: $f has a page" has_page "$f"
done
t "libbx.map: exports functions" test -n "$(exported)"
t "man.mk: MAN_PAGES lists every page in man/" list_matches
t "bx.4: every tunable of params.h, range and default" bx4_tunables
t "sysfs-module-bx: every tunable, range and default" abi_tunables
t "sysfs: every attribute of chrdev.c in the ABI and bx.4" sysfs_attrs
t "bx.4: every BX_IOC_* command" ioctls
t "bxctl.8: every tunable and object name" bxctl_names
# The reference in Documentation/: valid reStructuredText, each file.
for f in "$top"/Documentation/*.rst; do
	t "${f#"$top"/}: valid reStructuredText" \
		rst2html --halt=warning --report=warning "$f" /dev/null
done

echo "TAP version 13"
echo "1..$n"
printf '%s\n' "${results[@]}"
echo "# Totals: pass:$pass fail:$fail skip:0"
[ $fail -eq 0 ]
