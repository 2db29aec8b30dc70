#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages bx needs. Idempotent: packages already
# present are skipped; run as root (or with sudo available).
#
#   tools/install-deps.sh build   what building bx and its host tests need:
#                                 compilers, the 6.12 and 6.1 kernel
#                                 headers, packaging tools; never a
#                                 kernel image
#   tools/install-deps.sh kernel  what building the debug lane's kernel
#                                 needs (a part of build; .ci/run starts
#                                 that build while the rest installs)
#   tools/install-deps.sh [all]   build, plus the test rig: qemu, guest
#                                 userland, and the guests' kernel
#                                 images (Debian's 6.12 and 6.1), which
#                                 this machine does not boot
#
# The host's default boot kernel stays what it was. Installing a kernel
# image runs Debian's kernel hooks, grub's among them
# (/etc/kernel/postinst.d/zz-update-grub: update-grub), and with
# Debian's GRUB_DEFAULT=0 the first menu entry -- the newest kernel, the
# guests' 6.12 -- becomes the one the host boots. So when grub is there
# this script notes the kernel grub's default entry boots before
# installing, and if that changed after, pins the entry of the old one
# in /etc/default/grub.d/zz-bx-keep-default.cfg (GRUB_DEFAULT, the
# entry's id path) and runs update-grub again. Remove that file to let
# grub pick the newest kernel again. BX_GRUB_CFG, BX_GRUB_ENV and
# BX_GRUB_KEEP name other files (the tests', tools/testing/unit/deps_test.sh).
set -euo pipefail

# The debug kernel's build (tools/testing/vm/debug-kernel/build.sh).
KERNEL=(
	build-essential linux-source-6.12 bc bison flex libelf-dev libssl-dev
	xz-utils cpio kmod
)
BUILD=(
	# module: Debian 12's 6.12 (backports) and 6.1 (default) headers,
	# the kernel's checkers and selftest frame (and the debug kernel's
	# build: KERNEL)
	"${KERNEL[@]}" linux-headers-6.12-amd64 linux-headers-amd64 sparse
	gzip
	# kselftest: lib.mk installs tests with rsync
	rsync
	# userspace: sanitizers, fuzzing, verbs headers for the raw
	# baseline, libmnl for libbx's netlink, pkg-config
	clang libclang-rt-14-dev libibverbs-dev librdmacm-dev libmnl-dev
	pkgconf
	# install and packages: DKMS, debhelper, lintian; man pages
	dkms debhelper dh-dkms dh-python lintian man-db groff-base
	# tests and benchmark reports
	valgrind gnuplot-nox python3-yaml python3-jsonschema python3-docutils
	# the Python package (python/): its host tests
	python3-numpy python3-pytest
)
RIG=(
	# the guests' kernels (booted by qemu only)
	linux-image-6.12-amd64 linux-image-amd64
	# emulator, userland, L2 switch
	qemu-system-x86 busybox-static vde2
	iproute2 rdma-core ibverbs-utils rdmacm-utils perftest qperf trinity
	# the guests run the host's python3 (run.sh -p): torch for the
	# PyTorch example (python.sh's torch case) and the tests' torch cases
	python3-torch
)

GRUB_CFG=${BX_GRUB_CFG:-/boot/grub/grub.cfg}
GRUB_ENV=${BX_GRUB_ENV:-/boot/grub/grubenv}
KEEP_CFG=${BX_GRUB_KEEP:-/etc/default/grub.d/zz-bx-keep-default.cfg}

# grub_entries [SAVED]: grub.cfg's boot entries, one a line: "NUMS<TAB>IDS
# <TAB>TITLES<TAB>KERNEL<TAB>DEFAULT", each path from the top menu joined
# by ">" (numbers from 0, ids of $menuentry_id_option, titles), the
# vmlinuz its linux line loads, and 1 on the entry grub boots by default
# ("set default=" resolved as grub does: a number, id or title per
# level; "${saved_entry}" is SAVED, grubenv's, and "0" when empty).
grub_entries() {
	awk -v saved="${1:-}" '
	function q(s,   m) { return match(s, /'"'"'[^'"'"']*'"'"'/) ? substr(s, RSTART + 1, RLENGTH - 2) : "" }
	function idof(s,   i) {
		i = index(s, "$menuentry_id_option")
		return i ? q(substr(s, i)) : ""
	}
	function join(a, n,   s, i) { s = a[1]; for (i = 2; i <= n; i++) s = s ">" a[i]; return s }
	/^[ \t]*set default=/ && def == "" {
		d = $0; sub(/^[ \t]*set default=/, "", d); gsub(/"/, "", d)
		if (d == "${saved_entry}") d = saved == "" ? "0" : saved
		if (d != "${next_entry}") def = d
	}
	/^[ \t]*(menuentry|submenu)[ \t]/ {
		lvl = depth + 1
		nc = (lvl in cnt) ? cnt[lvl] + 1 : 0
		cnt[lvl] = nc
		delete cnt[lvl + 1]
		N[lvl] = cnt[lvl]; I[lvl] = idof($0); T[lvl] = q($0)
		kind[++depth] = $1
		cur = depth; kern[depth] = ""
		path_n[depth] = join(N, lvl); path_i[depth] = join(I, lvl); path_t[depth] = join(T, lvl)
		if ($1 == "submenu") cur = 0
		next
	}
	/\{[ \t]*$/ { kind[++depth] = "other"; next }
	/^[ \t]*linux[ \t]/ && depth > 0 && kind[depth] == "menuentry" { kern[depth] = $2; next }
	/^[ \t]*\}[ \t]*$/ {
		if (depth > 0 && kind[depth] == "menuentry")
			out[++ne] = path_n[depth] "\t" path_i[depth] "\t" path_t[depth] "\t" kern[depth]
		if (depth > 0) depth--
	}
	END {
		if (def == "") def = "0"
		nd = split(def, D, ">")
		for (e = 1; e <= ne; e++) {
			split(out[e], F, "\t")
			split(F[1], a, ">"); split(F[2], b, ">"); n = split(F[3], c, ">")
			hit = n == nd
			for (i = 1; hit && i <= n; i++)
				hit = D[i] == a[i] || (b[i] != "" && D[i] == b[i]) || D[i] == c[i]
			print out[e] "\t" (hit ? 1 : 0)
		}
	}' "$GRUB_CFG"
}

# grub_saved: grubenv's saved_entry, if grub-editenv can tell.
grub_saved() {
	command -v grub-editenv > /dev/null 2>&1 && [ -r "$GRUB_ENV" ] || return 0
	grub-editenv "$GRUB_ENV" list 2> /dev/null | sed -n 's/^saved_entry=//p'
}

# grub_default_kernel: the vmlinuz grub's default entry loads (nothing
# without grub.cfg, or if it cannot be told).
grub_default_kernel() {
	[ -r "$GRUB_CFG" ] || return 0
	grub_entries "$(grub_saved)" | awk -F'\t' '$5 == 1 { print $4; exit }'
}

# grub_entry_of KERNEL: the id path (else the title path) of the entry
# that boots KERNEL normally: not a recovery entry, the submenu's
# "advanced" one first, as GRUB_DEFAULT takes it.
grub_entry_of() {
	grub_entries "$(grub_saved)" | awk -F'\t' -v k="$1" '
		$4 != k || $3 ~ /recovery mode/ { next }
		{ p = ($2 !~ /(^|>)(>|$)/ && $2 != "") ? $2 : $3 }
		index($2, ">") { print p; found = 1; exit }
		first == "" { first = p }
		END { if (!found && first != "") print first }'
}

# keep_grub_default KERNEL: grub's default entry boots KERNEL again,
# pinned in KEEP_CFG, if installing made it boot another.
keep_grub_default() {
	local before=$1 after entry
	[ -n "$before" ] && [ -r "$GRUB_CFG" ] || return 0
	after=$(grub_default_kernel)
	[ "$after" != "$before" ] || return 0
	entry=$(grub_entry_of "$before")
	if [ -z "$entry" ]; then
		echo "install-deps: grub now boots $after by default, not $before, and no entry boots $before: check /etc/default/grub" >&2
		return 0
	fi
	echo "install-deps: grub's default entry would boot $after now (a kernel for the rig's guests); keeping $before: $KEEP_CFG"
	$SUDO mkdir -p "$(dirname "$KEEP_CFG")"
	printf '# tools/install-deps.sh (bx): the host kept booting %s when the\n# rig'"'"'s guest kernels were installed. Remove this file to let\n# grub boot the newest kernel again, then run update-grub.\nGRUB_DEFAULT="%s"\n' \
		"$before" "$entry" | $SUDO tee "$KEEP_CFG" > /dev/null
	if [ -z "${BX_GRUB_CFG:-}" ]; then
		$SUDO update-grub
		after=$(grub_default_kernel)
		[ "$after" = "$before" ] ||
			echo "install-deps: grub's default still boots ${after:-?}, not $before: check /etc/default/grub" >&2
	fi
}

main() {
	case ${1:-all} in
	kernel) PKGS=("${KERNEL[@]}") ;;
	build) PKGS=("${BUILD[@]}") ;;
	all) PKGS=("${BUILD[@]}" "${RIG[@]}") ;;
	*) echo "usage: install-deps.sh [kernel|build|all]" >&2; exit 2 ;;
	esac

	missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "install-deps: all ${#PKGS[@]} packages present"
		exit 0
	fi

	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "install-deps: installing ${missing[*]}"
	local images=0 before=
	for p in "${missing[@]}"; do
		case $p in linux-image-*)
			images=1
			echo "install-deps: $p is for the test rig's guests (qemu boots it; this machine does not)" ;;
		esac
	done
	[ $images -eq 0 ] || before=$(grub_default_kernel)
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
	[ $images -eq 0 ] || keep_grub_default "$before"
}

SUDO=
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
