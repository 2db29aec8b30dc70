#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installing bx the ways an operator does (KTAP output):
#  - make install DESTDIR=... PREFIX=/usr LIBDIR=multiarch: exactly the
#    expected files; a program builds against it through pkg-config,
#    shared and static, and runs (without /dev/bx on the host it says
#    so: exit 3; the guests run it for real, selftests/bx/install.sh);
#    libbx.so needs only libc and libmnl (its licence: LGPL-2.1 OR MIT);
#  - make install-dkms, then dkms build against every installed Debian
#    kernel's headers (6.1 and 6.12), in a private DKMS tree;
#  - dpkg-buildpackage -b in a copy of the tree: the packages' file
#    lists, lintian without errors.
set -uo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$top/tools/testing/unit/tap.sh"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)



# The files of a tree, relative, sorted (symlinks as "NAME -> TARGET").
files() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%P\t%y\t%l\n' |
		awk -F'\t' '{ print $2 == "l" ? $1 " -> " $3 : $1 }' | sort)
}

# py_files SITEDIR: the Python package's files as installed there.
py_files() {
	(cd "$top/python" && ls bx/*.py) | sed "s|^|$1/|"
	echo "$1/bx/py.typed"
	for f in INSTALLER METADATA RECORD top_level.txt; do
		echo "$1/bx-0.1.0.dist-info/$f"
	done
}

echo "TAP version 13"

# ---- make install -------------------------------------------------------
root=$tmp/root
inst() {
	make -C "$top" -s O="$tmp/build" DESTDIR="$root" PREFIX=/usr \
		LIBDIR="/usr/lib/$ma" SBINDIR=/usr/sbin install > "$tmp/inst.out" 2>&1 ||
		{ cat "$tmp/inst.out"; return 1; }
}
ok "install: make install DESTDIR= PREFIX=/usr LIBDIR=multiarch" inst

{
	echo etc/bx/allow
	echo etc/bx/tunables
	echo etc/modprobe.d/bx.conf
	echo lib/udev/rules.d/60-bx.rules
	echo lib/udev/rules.d/61-bx-apply.rules
	echo usr/include/bx/bxkv.h
	echo usr/include/bx/bxps.h
	echo usr/include/bx/libbx.h
	(cd "$top/libbx" && ls ps/*.h ps/internal/*.h) | sed 's|^|usr/include/bx/|'
	echo usr/include/bx/linux/bx.h
	echo usr/include/bx/linux/bx_netlink.h
	echo "usr/lib/$ma/libbx.a"
	echo "usr/lib/$ma/libbx.so -> libbx.so.0"
	echo "usr/lib/$ma/libbx.so.0 -> libbx.so.0.1.0"
	echo "usr/lib/$ma/libbx.so.0.1.0"
	echo "usr/lib/$ma/pkgconfig/libbx.pc"
	echo "usr/lib/$ma/pkgconfig/bx-pslite.pc"
	echo usr/sbin/bxctl
	(cd "$top/man" && ls man*/* | sed 's|^|usr/share/man/|')
	py_files usr/lib/python3/dist-packages
} | sort > "$tmp/want"
files "$root" > "$tmp/have"
ok "install: exactly the expected files" diff -u "$tmp/want" "$tmp/have"
ok "install: the udev rule applies /etc/bx with the installed bxctl" \
	grep -q 'RUN+="/usr/sbin/bxctl apply /etc/bx"' "$root/lib/udev/rules.d/61-bx-apply.rules"

pc() { PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$root/usr/lib/$ma/pkgconfig pkg-config "$@"; }
ok "install: libbx.pc has the real prefix and libdir" \
	grep -qx "libdir=/usr/lib/$ma" "$root/usr/lib/$ma/pkgconfig/libbx.pc"
ok "install: the modprobe.d example lists every parameter" \
	sh -c "[ \$(grep -c '^#options bx ' '$root/etc/modprobe.d/bx.conf') -eq \
		\$((\$(grep -c '^[[:space:]]*X(' '$top/kmod/params.h') + 2)) ]"

src=$top/tools/testing/install/consumer.c
build_shared() {
	cc -std=c11 -Wall -Wextra -Werror $(pc --cflags libbx) -o "$tmp/c" "$src" \
		$(pc --libs libbx)
}
build_static() {
	cc -std=c11 -Wall -Wextra -Werror $(pc --cflags libbx) -o "$tmp/cs" "$src" \
		$(pc --static --libs libbx | sed 's/-lbx\b/-l:libbx.a/')
}
# Exit 3 without /dev/bx (this host), 0 with it.
runs() {
	local rc=0
	LD_LIBRARY_PATH=$root/usr/lib/$ma "$@" || rc=$?
	[ $rc -eq 3 ] || [ $rc -eq 0 ]
}
ok "pkg-config: a program builds against the installed libbx (shared)" build_shared
ok "pkg-config: ... and runs" runs "$tmp/c"
ok "pkg-config: a program builds against libbx.a (static)" build_static
ok "pkg-config: ... and runs without libbx.so" \
	sh -c "! readelf -d '$tmp/cs' | grep -q 'libbx' && '$tmp/cs'; [ \$? -eq 3 ] || [ \$? -eq 0 ]"
needed() {
	readelf -d "$root/usr/lib/$ma/libbx.so.0.1.0" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' |
		sort | tr '\n' ' '
}
# Debian's python3 finds the package there, and it finds libbx.
ok "install: python3 imports bx and bx.kv from PREFIX=/usr" \
	env PYTHONPATH="$root/usr/lib/python3/dist-packages" \
	BX_LIBBX="$root/usr/lib/$ma/libbx.so.0" /usr/bin/python3 -c \
	"import bx, bx.kv; bx.Lib().has_kv or exit(1); assert bx.__file__.startswith('$root')"
# Where Debian's python3 looks, for each prefix; dist-info as pip's.
searched() {	# DIR: /usr/bin/python3 searches it (without PYTHONPATH)
	env -u PYTHONPATH /usr/bin/python3 -c "import sys; sys.exit('$1' not in sys.path)"
}
ok "install: PREFIX=/usr puts bx where python3 searches" \
	searched /usr/lib/python3/dist-packages
ok "install: its dist-info and py.typed (importlib.metadata: 0.1.0)" \
	env PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
	"import importlib.metadata as m, importlib.resources as r; assert m.version('bx') == '0.1.0'; assert r.files('bx').joinpath('py.typed').is_file(); fs = m.files('bx'); assert len(fs) > 10 and all(f.locate().exists() for f in fs)"
ok "install: no ldconfig under DESTDIR" sh -c "! grep -q ldconfig '$tmp/inst.out'"
ulocal=$(/usr/bin/python3 -c 'import sys; print("/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2])')
inst_local() {
	make -C "$top" -s O="$tmp/build" DESTDIR="$tmp/rootl" PREFIX=/usr/local \
		install-python > /dev/null 2>&1 &&
		[ -f "$tmp/rootl$ulocal/bx/kv.py" ] &&
		[ -f "$tmp/rootl$ulocal/bx-0.1.0.dist-info/RECORD" ] &&
		searched "$ulocal"
}
ok "install: PREFIX=/usr/local puts bx where python3 searches ($ulocal)" inst_local
ok "licence: libbx.so needs only libc and libmnl" \
	sh -c "[ '$(needed)' = 'libc.so.6 libmnl.so.0 ' ]"
ok "licence: libbx's sources are LGPL-2.1 OR MIT" \
	sh -c "! grep -L 'SPDX-License-Identifier: LGPL-2.1 OR MIT' '$top'/libbx/*.[ch] | grep ."

# ---- DKMS -----------------------------------------------------------------
dkms_build() {	# KVER
	mkdir -p "$tmp/dkms"
	dkms build -m bx -v 0.1.0 -k "$1" --dkmstree "$tmp/dkms" \
		--sourcetree "$tmp/dkmsroot/usr/src" --no-depmod &&
		ls "$tmp/dkms/bx/0.1.0/$1/"*/module/bx.ko*
}
if command -v dkms > /dev/null; then
	ok "dkms: make install-dkms" make -C "$top" -s DESTDIR="$tmp/dkmsroot" install-dkms
	for k in $(ls -d /lib/modules/6.1.*-amd64/build /lib/modules/6.12.*-amd64/build 2>/dev/null); do
		k=${k%/build}
		k=${k##*/}
		ok "dkms: build against $k's headers" dkms_build "$k"
	done
else
	skip "dkms: build against the 6.1 and 6.12 headers" "no dkms"
fi

# ---- Debian packages ------------------------------------------------------
debs() {
	mkdir -p "$tmp/deb/src"
	git -C "$top" ls-files -co --exclude-standard -z |
		(cd "$top" && xargs -0 tar -cf -) | tar -xf - -C "$tmp/deb/src"
	(cd "$tmp/deb/src" && dpkg-buildpackage -b -us -uc)
}
deb_files() {	# PACKAGE: its files and links (not directories, not docs)
	dpkg-deb -c "$tmp/deb/$1"_0.1.0_*.deb | awk '$1 !~ /^d/ { $1 = $2 = $3 = $4 = $5 = ""; print }' |
		sed -e 's/^ *\.\///' | grep -v '^usr/share/doc/' | sort
}
if command -v dpkg-buildpackage > /dev/null && command -v dh_dkms > /dev/null; then
	ok "deb: dpkg-buildpackage -b" debs
	{
		echo etc/modprobe.d/bx.conf
		echo lib/udev/rules.d/60-bx.rules
		echo usr/share/man/man4/bx.4.gz
		(cd "$top" && ls Kbuild dkms.conf kmod/*.[ch] uapi/linux/*.h) |
			sed 's|^|usr/src/bx-0.1.0/|'
	} | sort > "$tmp/want"
	deb_files bx-dkms > "$tmp/have"
	ok "deb: bx-dkms holds the module's sources, the udev rule, modprobe.d, bx(4)" \
		diff -u "$tmp/want" "$tmp/have"
	ok "deb: bx-dkms depends on dkms, creates group bx" \
		sh -c "dpkg-deb -f '$tmp/deb/bx-dkms_0.1.0_all.deb' Depends | grep -q dkms &&
		       dpkg-deb --ctrl-tarfile '$tmp/deb/bx-dkms_0.1.0_all.deb' |
		       tar -xOf - ./postinst | grep -q 'addgroup --system bx'"
	printf '%s\n' "usr/lib/$ma/libbx.so.0 -> libbx.so.0.1.0" "usr/lib/$ma/libbx.so.0.1.0" \
		> "$tmp/want"
	deb_files libbx0 > "$tmp/have"
	ok "deb: libbx0 holds the shared library" diff -u "$tmp/want" "$tmp/have"
	ok "deb: libbx-dev holds headers, libbx.a, libbx.so, libbx.pc, the man3 pages" \
		sh -c "deb=\$(ls '$tmp/deb/'libbx-dev_0.1.0_*.deb); c=\$(dpkg-deb -c \$deb);
		       for f in usr/include/bx/libbx.h usr/include/bx/bxkv.h usr/include/bx/linux/bx.h \
				usr/lib/$ma/libbx.a usr/lib/$ma/libbx.so \
				usr/lib/$ma/pkgconfig/libbx.pc usr/share/man/man3/libbx.3.gz; do
			echo \"\$c\" | grep -q \" ./\$f\" || { echo missing \$f; exit 1; }; done"
	printf '%s\n' etc/bx/allow etc/bx/tunables lib/udev/rules.d/61-bx-apply.rules \
		usr/sbin/bxctl usr/share/man/man8/bxctl.8.gz > "$tmp/want"
	deb_files bx-tools > "$tmp/have"
	ok "deb: bx-tools holds bxctl, bxctl(8), /etc/bx and the rule applying it" \
		diff -u "$tmp/want" "$tmp/have"
	ok "deb: bx-tools' rule runs /usr/sbin/bxctl apply /etc/bx" \
		sh -c "dpkg-deb --fsys-tarfile \$(ls '$tmp/deb/'bx-tools_0.1.0_*.deb) |
		       tar -xOf - ./lib/udev/rules.d/61-bx-apply.rules |
		       grep -q 'RUN+=\"/usr/sbin/bxctl apply /etc/bx\"'"
	py_files usr/lib/python3/dist-packages | sort > "$tmp/want"
	deb_files python3-bx > "$tmp/have"
	ok "deb: python3-bx holds the package bx, py.typed and its dist-info" \
		diff -u "$tmp/want" "$tmp/have"
	py_deps() {
		local d
		d=$(dpkg-deb -f "$tmp/deb/python3-bx_0.1.0_all.deb" Depends)
		echo "# python3-bx: Depends: $d"
		grep -q 'libbx0 (>= 0.1.0)' <<< "$d" && grep -q 'python3' <<< "$d"
	}
	ok "deb: python3-bx depends on libbx0 and python3" py_deps
	if command -v lintian > /dev/null; then
		ok "deb: lintian finds no errors" \
			lintian --fail-on error "$tmp"/deb/bx_0.1.0_*.changes
	else
		skip "deb: lintian finds no errors" "no lintian"
	fi
else
	skip "deb: dpkg-buildpackage -b" "no dpkg-buildpackage or dh-dkms"
fi

echo "1..$n"
totals
