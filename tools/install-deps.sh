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
#   tools/install-deps.sh [all]   build, plus the test rig: qemu, guest
#                                 userland, and the guests' kernel
#                                 images (Debian's 6.12 and 6.1), which
#                                 this machine does not boot
set -euo pipefail

BUILD=(
	# module: Debian 12's 6.12 (backports) and 6.1 (default) headers,
	# the kernel's checkers and selftest frame
	build-essential linux-headers-6.12-amd64 linux-headers-amd64
	linux-source-6.12 sparse bc bison flex libelf-dev libssl-dev
	xz-utils cpio gzip kmod
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

case ${1:-all} in
build) PKGS=("${BUILD[@]}") ;;
all) PKGS=("${BUILD[@]}" "${RIG[@]}") ;;
*) echo "usage: install-deps.sh [build|all]" >&2; exit 2 ;;
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
for p in "${missing[@]}"; do
	case $p in linux-image-*)
		echo "install-deps: $p is for the test rig's guests (qemu boots it; this machine does not)" ;;
	esac
done
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
