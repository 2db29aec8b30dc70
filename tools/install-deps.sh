#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package bx needs to build, test and benchmark.
# Idempotent: packages already present are skipped by apt; run as root.
set -euo pipefail

PKGS=(
	# build: module against Debian's 6.12 headers, static checks
	build-essential linux-headers-6.12-amd64 linux-source-6.12 sparse
	bc bison flex libelf-dev libssl-dev xz-utils cpio gzip kmod
	man-db groff-base
	# kselftest: lib.mk installs tests with rsync
	rsync
	# userspace: sanitizers, fuzzing, verbs headers for the raw baseline
	clang libclang-rt-14-dev libibverbs-dev librdmacm-dev libmnl-dev
	# guests: kernel image, emulator, userland, L2 switch
	linux-image-6.12-amd64 qemu-system-x86 busybox-static vde2
	iproute2 rdma-core ibverbs-utils rdmacm-utils perftest qperf
	# robustness and benchmarks
	trinity valgrind gnuplot-nox python3-yaml python3-jsonschema
)

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
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
