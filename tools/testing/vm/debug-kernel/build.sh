#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the bx debug kernel: Debian's linux-source-6.12 with
# `make tinyconfig` + config.fragment (KASAN, lockdep, kmemleak, fault
# injection, soft-RoCE), for qemu TCG guests that run bx's selftests.
#
# usage: build.sh OUTDIR            (e.g. build/debug-kernel)
#
# Layout under OUTDIR:
#   src/                 the extracted kernel source (shared by all keys)
#   <key>/obj/           the O= build dir; also DBG_KDIR for external modules
#   <key>/mods/          modules_install tree (uncompressed, stripped, depmod'ed)
#   <key>/build.log      full make output
#   <key>/env            shell-sourceable DBG_* variables
#   <key>/manifest       files (relative to <key>/) a cache hit requires
#   <key>/ready          present only once everything above is complete
#   current -> <key>     the most recently built or reused key
#
# <key> is the sha256 of: the linux-source-6.12 package version, this
# directory's config.fragment, `gcc --version | head -1` and this script.
# A cache hit only checks the manifest, prints the env file and returns.
#
# The manifest check exists because `make -C $KDIR M=<dir> clean` deletes
# every *.o, *.a, *.ko, .*.cmd and modules.order below <dir> -- including
# an OUTDIR inside it. A damaged tree is rebuilt (in place) rather than
# handed out.
#
# Environment: BX_KSRC_TARBALL overrides /usr/src/linux-source-6.12.tar.xz.

set -euo pipefail

PKG=linux-source-6.12
TARBALL=${BX_KSRC_TARBALL:-/usr/src/$PKG.tar.xz}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")
frag=$here/config.fragment

msg() { printf '[debug-kernel] %s\n' "$*" >&2; }
die() { printf '[debug-kernel] error: %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)

# Keep the caller's environment out of the kernel build.
unset ARCH CROSS_COMPILE LLVM KBUILD_OUTPUT KCONFIG_CONFIG KCONFIG_ALLCONFIG \
	LOCALVERSION KBUILD_EXTMOD KCFLAGS KCPPFLAGS INSTALL_MOD_PATH \
	INSTALL_MOD_STRIP
export PATH=$PATH:/usr/sbin:/sbin	# depmod

pkgver=$(dpkg-query -W -f='${Version}' "$PKG") ||
	die "package $PKG is not installed"
[ -n "$pkgver" ] || die "package $PKG has no version"
gccver=$(gcc --version | head -n1)

key=$({
	printf 'pkg %s\n' "$pkgver"
	printf 'gcc %s\n' "$gccver"
	printf -- '--- config.fragment\n'
	cat "$frag"
	printf -- '--- build.sh\n'
	cat "$self"
} | sha256sum | cut -d' ' -f1)

kd=$out/$key

# Is $kd complete? Sets $missing to the first absent file.
intact() {
	missing=
	[ -e "$kd/ready" ] && [ -s "$kd/manifest" ] && [ -s "$kd/env" ] ||
		return 1
	local f
	while IFS= read -r f; do
		[ -e "$kd/$f" ] || { missing=$f; return 1; }
	done <"$kd/manifest"
}

hit() {
	ln -sfn "$key" "$out/current"
	cat "$kd/env"
}

# Fast path: no locking, no make.
if intact; then
	hit
	exit 0
fi

# One build at a time per OUTDIR (2 cores, and the source tree is shared).
exec 9>"$out/.lock"
if ! flock -n 9; then
	msg "another build holds $out/.lock; waiting"
	flock 9
fi
if intact; then	# built by whoever held the lock
	hit
	exit 0
fi
if [ -n "$missing" ]; then
	msg "cached $kd is damaged ($missing is missing); rebuilding"
fi
rm -f "$kd/ready"

start=$(date +%s)

# Warn if OUTDIR sits below an external-module directory (one with a Kbuild
# file): `make -C $KDIR M=<that dir> clean` would delete our objects.
d=$out
while [ "$d" != / ]; do
	d=$(dirname "$d")
	if [ -f "$d/Kbuild" ]; then
		msg "note: $out is below $d/Kbuild; 'make M=$d clean' wipes" \
			"objects here (the next run notices and rebuilds)"
		break
	fi
done
src=$out/src
obj=$kd/obj
mods=$kd/mods
log=$kd/build.log
mkdir -p "$kd"
: >"$log"
[ -f "$TARBALL" ] || die "$TARBALL not found"
# Reproducible uname -v ("#1 SMP <date>"): the tarball's mtime (set by dpkg
# from the package), not the wall clock or a rebuild counter.
build_ts=$(date -u -r "$TARBALL" '+%Y-%m-%d %H:%M:%S UTC')

# make, logged; on failure show the tail of the log and stop.
kmake() {
	if ! make -C "$src" O="$obj" \
		KBUILD_BUILD_USER=bx KBUILD_BUILD_HOST=bx-debug-kernel \
		KBUILD_BUILD_TIMESTAMP="$build_ts" KBUILD_BUILD_VERSION=1 \
		"$@" >>"$log" 2>&1; then
		printf '[debug-kernel] make %s failed; last lines of %s:\n' \
			"$*" "$log" >&2
		tail -n 60 "$log" >&2
		exit 1
	fi
}

# --- source ----------------------------------------------------------------
stamp=$src/.bx-source-version
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgver" ]; then
	msg "reusing source $src ($PKG $pkgver)"
else
	msg "extracting $TARBALL ($pkgver) into $src"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$TARBALL" -C "$src.tmp" --strip-components=1
	printf '%s\n' "$pkgver" >"$src.tmp/.bx-source-version"
	rm -rf "$src"
	mv "$src.tmp" "$src"
fi

# --- config ----------------------------------------------------------------
# Fragment lines: CONFIG_X=value or "# CONFIG_X is not set"; other lines
# must be blank or comments.
want_name=() want_val=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	if [[ $line =~ ^CONFIG_([A-Za-z0-9_]+)=(.+)$ ]]; then
		want_name+=("${BASH_REMATCH[1]}")
		want_val+=("${BASH_REMATCH[2]}")
	elif [[ $line =~ ^#\ CONFIG_([A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		want_name+=("${BASH_REMATCH[1]}")
		want_val+=(n)
	elif [[ $line =~ ^[[:space:]]*(#.*)?$ ]]; then
		continue
	else
		die "$frag:$lineno: cannot parse: $line"
	fi
done <"$frag"
[ ${#want_name[@]} -gt 0 ] || die "$frag: no options"

cfgargs=()
for i in "${!want_name[@]}"; do
	case ${want_val[$i]} in
	y) cfgargs+=(--enable "${want_name[$i]}") ;;
	m) cfgargs+=(--module "${want_name[$i]}") ;;
	n) cfgargs+=(--disable "${want_name[$i]}") ;;
	*) cfgargs+=(--set-val "${want_name[$i]}" "${want_val[$i]}") ;;
	esac
done

msg "configuring $obj (tinyconfig + ${#want_name[@]} fragment options)"
mkdir -p "$obj"
kmake tinyconfig
# Two passes: options whose dependencies only appear after the first
# olddefconfig (choices, sub-menus) stick in the second.
for _ in 1 2; do
	"$src/scripts/config" --file "$obj/.config" "${cfgargs[@]}"
	kmake olddefconfig
done

bad=()
for i in "${!want_name[@]}"; do
	n=CONFIG_${want_name[$i]} v=${want_val[$i]}
	if [ "$v" = n ]; then
		got=$(grep -m1 "^$n=" "$obj/.config" || true)
		[ -z "$got" ] || bad+=("$n: want not set, got ${got#*=}")
	elif ! grep -qxF -- "$n=$v" "$obj/.config"; then
		got=$(grep -m1 -E "^$n=|^# $n is not set" "$obj/.config" ||
			echo absent)
		bad+=("$n: want $v, got ${got#"$n="}")
	fi
done
if [ ${#bad[@]} -gt 0 ]; then
	printf '[debug-kernel] error: %d fragment option(s) did not stick:\n' \
		${#bad[@]} >&2
	printf '  %s\n' "${bad[@]}" >&2
	exit 1
fi
msg "all ${#want_name[@]} fragment options verified in .config"

# --- build -----------------------------------------------------------------
msg "building bzImage modules (-j$(nproc)), log: $log"
# One retry: an M=<parent> clean running concurrently deletes objects under
# our feet; a real compile error fails again, quickly.
if ! (kmake -j"$(nproc)" bzImage modules) 2>/dev/null; then
	msg "build failed; retrying once (see $log)"
	echo '=== retry ===' >>"$log"
	kmake -j"$(nproc)" bzImage modules
fi
kver=$(cat "$obj/include/config/kernel.release")

msg "installing modules into $mods"
rm -rf "$mods"
kmake INSTALL_MOD_PATH="$mods" INSTALL_MOD_STRIP=1 modules_install
depmod -b "$mods" "$kver"
moddir=$mods/lib/modules/$kver
if find "$moddir" -name '*.ko.*' | grep -q .; then
	die "compressed modules found in $moddir"
fi

bz=$obj/arch/x86/boot/bzImage
[ -f "$bz" ] || die "$bz missing"

# What a cache hit needs: everything a guest boot and an external module
# build read that a clean or a partial delete could take away.
{
	printf '%s\n' ../src/Makefile ../src/.bx-source-version \
		obj/.config obj/Makefile obj/Module.symvers \
		obj/scripts/mod/modpost obj/scripts/module.lds \
		obj/tools/objtool/objtool obj/arch/x86/boot/bzImage \
		"mods/lib/modules/$kver/modules.dep"
	(cd "$kd" && find "mods/lib/modules/$kver" -name '*.ko' | sort)
} >"$kd/manifest"

{
	printf 'DBG_KEY=%q\n' "$key"
	printf 'DBG_KVER=%q\n' "$kver"
	printf 'DBG_BZIMAGE=%q\n' "$bz"
	printf 'DBG_MODDIR=%q\n' "$moddir"
	printf 'DBG_KDIR=%q\n' "$obj"
} >"$kd/env.tmp"
mv "$kd/env.tmp" "$kd/env"
touch "$kd/ready"
ln -sfn "$key" "$out/current"

secs=$(($(date +%s) - start))
msg "built $kver in $((secs / 60))m$((secs % 60))s"
cat "$kd/env"
