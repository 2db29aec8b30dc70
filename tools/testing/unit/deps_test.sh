#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/install-deps.sh keeps the host's default boot kernel: on grub.cfg
# files as Debian 12's update-grub writes them (10_linux's simple entry,
# the "Advanced options" submenu with a normal and a recovery entry per
# kernel, newest first), before and after the rig's 6.12 image came,
# grub's default entry is resolved as grub does (a number, an id or a
# title per level, "${saved_entry}"), the entry that boots the old
# kernel is found, and the pin is written where update-grub reads it.
# Nothing is installed and no bootloader touched (BX_GRUB_CFG,
# BX_GRUB_KEEP). KTAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
. "$top/tools/install-deps.sh"
GRUB_ENV=$tmp/grubenv			# none: saved_entry empty

U=0f1e2d3c-aaaa-bbbb-cccc-123456789abc
OLD=6.1.0-57-amd64 NEW=6.12.118+deb12-amd64

# gencfg DEFAULT KERNEL...: a grub.cfg, kernels newest first.
gencfg() {
	local def=$1 k
	shift
	cat <<EOF
### BEGIN /etc/grub.d/00_header ###
if [ -s \$prefix/grubenv ]; then
  set have_grubenv=true
  load_env
fi
if [ "\${next_entry}" ] ; then
   set default="\${next_entry}"
   set next_entry=
   save_env next_entry
   set boot_once=true
else
   set default="$def"
fi
function savedefault {
  if [ -z "\${boot_once}" ]; then
    saved_entry="\${chosen}"
    save_env saved_entry
  fi
}
### END /etc/grub.d/00_header ###
### BEGIN /etc/grub.d/10_linux ###
function gfxmode {
	set gfxpayload="\${1}"
}
menuentry 'Debian GNU/Linux' --class debian --class gnu-linux --class gnu --class os \$menuentry_id_option 'gnulinux-simple-$U' {
	insmod gzio
	search --no-floppy --fs-uuid --set=root $U
	echo	'Loading Linux $1 ...'
	linux	/boot/vmlinuz-$1 root=UUID=$U ro  quiet
	initrd	/boot/initrd.img-$1
}
submenu 'Advanced options for Debian GNU/Linux' \$menuentry_id_option 'gnulinux-advanced-$U' {
EOF
	for k in "$@"; do
		cat <<EOF
	menuentry 'Debian GNU/Linux, with Linux $k' --class debian --class gnu-linux --class gnu --class os \$menuentry_id_option 'gnulinux-$k-advanced-$U' {
		insmod gzio
		linux	/boot/vmlinuz-$k root=UUID=$U ro  quiet
		initrd	/boot/initrd.img-$k
	}
	menuentry 'Debian GNU/Linux, with Linux $k (recovery mode)' --class debian --class gnu-linux --class gnu --class os \$menuentry_id_option 'gnulinux-$k-recovery-$U' {
		linux	/boot/vmlinuz-$k root=UUID=$U ro single
		initrd	/boot/initrd.img-$k
	}
EOF
	done
	cat <<EOF
}
### END /etc/grub.d/10_linux ###
### BEGIN /etc/grub.d/30_uefi-firmware ###
if [ "\$grub_platform" = "efi" ]; then
	menuentry 'UEFI Firmware Settings' \$menuentry_id_option 'uefi-firmware' {
		fwsetup
	}
fi
### END /etc/grub.d/30_uefi-firmware ###
EOF
}

default_of() {	# CFG WANT
	local got
	got=$(GRUB_CFG=$1 grub_default_kernel)
	[ "$got" = "$2" ] || { echo "default of $1: '$got', not '$2'"; return 1; }
}

echo "TAP version 13"
gencfg 0 $OLD > "$tmp/before.cfg"
gencfg 0 $NEW $OLD > "$tmp/after.cfg"
ok "grub: GRUB_DEFAULT=0 boots the only kernel" default_of "$tmp/before.cfg" /boot/vmlinuz-$OLD
ok "grub: ... and the newest once the rig's 6.12 is installed (what changes)" \
	default_of "$tmp/after.cfg" /boot/vmlinuz-$NEW
gencfg "1>2" $NEW $OLD > "$tmp/num.cfg"
ok "grub: a numeric path into the submenu" default_of "$tmp/num.cfg" /boot/vmlinuz-$OLD
gencfg "Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux $OLD" $NEW $OLD > "$tmp/title.cfg"
ok "grub: a title path" default_of "$tmp/title.cfg" /boot/vmlinuz-$OLD
gencfg '${saved_entry}' $NEW $OLD > "$tmp/saved.cfg"
ok "grub: \${saved_entry} without grubenv is entry 0" default_of "$tmp/saved.cfg" /boot/vmlinuz-$NEW
ok "grub: no grub.cfg, no default (this machine boots otherwise)" \
	default_of "$tmp/none.cfg" ""
pick() {
	local e
	e=$(GRUB_CFG=$tmp/after.cfg grub_entry_of /boot/vmlinuz-$OLD)
	[ "$e" = "gnulinux-advanced-$U>gnulinux-$OLD-advanced-$U" ] || { echo "entry: $e"; return 1; }
}
ok "grub: the old kernel's entry, by ids, not its recovery entry" pick
keep() {
	BX_GRUB_CFG=$tmp/after.cfg GRUB_CFG=$tmp/after.cfg KEEP_CFG=$tmp/grub.d/zz-bx-keep-default.cfg \
		keep_grub_default /boot/vmlinuz-$OLD > "$tmp/keep.out" 2>&1 &&
	grep -qx "GRUB_DEFAULT=\"gnulinux-advanced-$U>gnulinux-$OLD-advanced-$U\"" \
		"$tmp/grub.d/zz-bx-keep-default.cfg" &&
	# update-grub with it: GRUB_DEFAULT becomes the header's default.
	gencfg "$(. "$tmp/grub.d/zz-bx-keep-default.cfg"; echo "$GRUB_DEFAULT")" $NEW $OLD > "$tmp/pinned.cfg" &&
	default_of "$tmp/pinned.cfg" /boot/vmlinuz-$OLD
}
ok "grub: the pin in grub.d, and grub.cfg made with it boots the old kernel" keep
same() {
	BX_GRUB_CFG=$tmp/before.cfg GRUB_CFG=$tmp/before.cfg KEEP_CFG=$tmp/grub.d2/keep.cfg \
		keep_grub_default /boot/vmlinuz-$OLD && [ ! -e "$tmp/grub.d2/keep.cfg" ]
}
ok "grub: no pin when the default did not change" same
ok "install-deps.sh: sourcing it installs nothing" \
	sh -c "bash -c '. \"$top/tools/install-deps.sh\"; declare -F main grub_entries' | grep -c . | grep -qx 2"
# "kernel" (what .ci/run installs first, for the debug kernel) is a part
# of "build": installing it alone misses nothing a build needs later.
subset() {
	local p
	for p in "${KERNEL[@]}"; do
		[[ " ${BUILD[*]} " == *" $p "* ]] || { echo "$p: in KERNEL, not in BUILD"; return 1; }
	done
}
ok "install-deps.sh: the debug kernel's packages are build's" subset
echo "1..$n"
totals
