#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the base initramfs shared by every guest of a rig run.
#
#   mkinitramfs.sh -o OUT.cpio.gz -k KVER -r MODROOT -b BX_KO -s STAGE
#
#   MODROOT  root holding lib/modules/KVER (/ for Debian's kernel)
#   BX_KO    the bx.ko built for KVER; installed as extra/bx.ko so that
#            "modprobe bx" works
#   STAGE    userspace staging tree, copied to /opt/bx (bin, lib, tests)
#
# Contents: static busybox, the kernel modules the guests need
# (decompressed: busybox modprobe cannot read .ko.xz) with a fresh depmod,
# iproute2's ip/tc/rdma, the verbs userland (rxe provider, rping, qperf,
# perftest, trinity) with every library ldd lists, coreutils' timeout for
# kselftest's runner, and /init.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out= kver= modroot= bxko= stage=
while getopts "o:k:r:b:s:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	k) kver=$OPTARG ;;
	r) modroot=$OPTARG ;;
	b) bxko=$OPTARG ;;
	s) stage=$OPTARG ;;
	*) exit 2 ;;
	esac
done
[ -n "$out" ] && [ -n "$kver" ] && [ -n "$modroot" ] && [ -n "$bxko" ] &&
	[ -n "$stage" ] || { echo "usage: see $0" >&2; exit 2; }

MODULES="virtio_net virtio_rng crc32_generic rdma_rxe rdma_cm rdma_ucm
	 ib_uverbs sch_netem veth"
# Where the kernel has them as modules: the RDS comparison of make
# bench (Debian's kernels, not the debug kernel); virtio's PCI transport
# (built in from 6.12, a module in Debian 12's 6.1); 9p over virtio for
# the host's /usr (run.sh -p: the guests run the host's python3).
OPT_MODULES="rds_rdma virtio_pci 9p 9pnet_virtio"
BINARIES="/usr/sbin/ip /usr/sbin/tc /usr/bin/rdma /usr/bin/rping
	  /usr/bin/qperf /usr/bin/ib_send_lat /usr/bin/ib_send_bw
	  /usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/trinity"
# Applets we provide with real binaries instead of busybox's.
NOT_APPLETS="ip tc"

root=$(mktemp -d "${TMPDIR:-/tmp}/bx-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root,rig,opt}
cp /bin/busybox "$root/bin/busybox"
for a in $(/bin/busybox --list); do
	case " $NOT_APPLETS busybox " in *" $a "*) continue ;; esac
	ln -sf busybox "$root/bin/$a"
done
ln -sf ../bin/busybox "$root/sbin/modprobe"
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"

# Kernel modules and their dependencies, decompressed.
mdst="$root/lib/modules/$kver"
mkdir -p "$mdst/extra"
for m in $MODULES $OPT_MODULES; do
	# An optional one is skipped only if the kernel has no such file
	# (built in, or not built): a modules.dep being rewritten meanwhile
	# (depmod) must not make an image without virtio_pci.
	deps=$(modprobe -S "$kver" -d "$modroot" --show-depends "$m" 2>/dev/null) ||
		case " $OPT_MODULES " in
		*" $m "*)
			[ -z "$(find "$modroot/lib/modules/$kver/kernel" \
				-name "$m.ko*" -print -quit)" ] && continue
			echo "mkinitramfs: $m.ko exists for $kver, but modprobe cannot resolve it" >&2
			exit 1 ;;
		*) echo "mkinitramfs: no module $m for $kver" >&2; exit 1 ;;
		esac
	echo "$deps" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r f; do
	rel=${f#"$modroot"}
	rel=${rel#/lib/modules/"$kver"/}
	mkdir -p "$(dirname "$mdst/$rel")"
	case $f in
	*.xz) xz -dc "$f" > "$mdst/${rel%.xz}" ;;
	*.zst) zstd -qdc "$f" > "$mdst/${rel%.zst}" ;;
	*) cp "$f" "$mdst/$rel" ;;
	esac
done
cp "$bxko" "$mdst/extra/bx.ko"
for f in modules.builtin modules.builtin.modinfo modules.order; do
	[ -f "$modroot/lib/modules/$kver/$f" ] &&
		cp "$modroot/lib/modules/$kver/$f" "$mdst/"
done
depmod -b "$root" "$kver"

# Userspace binaries and every library they load.
copy_with_libs() {
	local f=$1 dst=$2
	mkdir -p "$(dirname "$root$dst")"
	cp -L "$f" "$root$dst"
	ldd "$f" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$(dirname "$root$lib")"
		cp -L "$lib" "$root$lib"
	done
}
for b in $BINARIES; do
	[ -x "$b" ] && copy_with_libs "$b" "$b"
done
# kselftest's runner needs coreutils' timeout as /usr/bin/timeout; the
# rest keeps busybox's (./timeout says how).
copy_with_libs /usr/bin/timeout /usr/lib/bxrig/timeout
cp "$here/timeout" "$root/usr/bin/timeout"
chmod 755 "$root/usr/bin/timeout"
# glibc dlopen()s libgcc_s for pthread_exit() and cancellation.
for f in /lib/x86_64-linux-gnu/libgcc_s.so.1; do
	copy_with_libs "$f" "$f"
done
# Verbs provider for rxe (dlopen()ed, so ldd does not see it).
for f in /usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so; do
	copy_with_libs "$f" "$f"
done
mkdir -p "$root/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"

# bx's own userspace: everything under STAGE, with libraries.
cp -a "$stage/." "$root/opt/bx/"
find "$root/opt/bx" -type f -perm -u+x | while read -r f; do
	[ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
	LD_LIBRARY_PATH="$stage/lib" ldd "$f" 2>/dev/null |
		grep -o '/[^ ]*' | while read -r lib; do
		case $lib in "$stage"/*) continue ;; esac
		[ -e "$root$lib" ] && continue
		mkdir -p "$(dirname "$root$lib")"
		cp -L "$lib" "$root$lib"
	done
done

# The host's python3 (run.sh -p shares the host's /usr, which /init
# mounts at /host/usr): /bin/python3 runs it with the host's loader and
# libraries. The host's /etc/alternatives (libblas.so.3 and the like are
# links into it) come along, pointing into /host/usr.
cp "$here/python3" "$root/bin/python3"
chmod 755 "$root/bin/python3"
mkdir -p "$root/etc/alternatives"
for a in /etc/alternatives/*; do
	t=$(readlink "$a") || continue
	case $t in /usr/*) ln -s "/host$t" "$root$a" ;; esac
done

cp "$here/init" "$root/init"
cp "$here/splats" "$root/rig/splats"
chmod 755 "$root/init"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) |
	gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
