# SPDX-License-Identifier: GPL-2.0
#
# bx top-level build. The kernel module is built by Kbuild (see ./Kbuild);
# everything else (libbx, tools, selftests, host unit tests, guest images)
# is built here into $(O).
#
#   make            bx.ko, libbx (shared + static), tools, selftests
#   make check      host unit tests + selftests in qemu guests; prints
#                   "N passed, N failed, N skipped"
#   make demo       the main job: the PyTorch example over bx and over
#                   torch RPC (three guests); make demo-ps: the C bxps
#   make style      checkpatch.pl --strict on the kernel sources
#   make sparse     sparse (C=2 W=1) on the module
#
# bx.ko is built against the running kernel's build dir when it has one
# (kernel convention), else against the guests' kernel; override with
# KVER=... or KDIR=... . The test rig's guests boot the newest installed
# Debian 6.12 kernel (GUEST_KVER) and, in the "old" lane, Debian 12's
# default 6.1 kernel (OLD_KVER); each gets bx.ko built for it.

MAKEFLAGS += --no-print-directory

newest_kver = $(shell ls -d /lib/modules/$(1).*-amd64 2>/dev/null | sort -V | tail -1 | xargs -r basename)
GUEST_KVER ?= $(call newest_kver,6.12)
OLD_KVER ?= $(call newest_kver,6.1)
RUNNING_KVER := $(shell uname -r)
KVER	?= $(if $(wildcard /lib/modules/$(RUNNING_KVER)/build),$(RUNNING_KVER),$(GUEST_KVER))
KDIR	?= /lib/modules/$(KVER)/build
O	?= $(CURDIR)/build
KSRC_TAR ?= /usr/src/linux-source-6.12.tar.xz
KSRC_TOP := linux-source-6.12

CC	?= gcc
CFLAGS	?= -O2 -g
# -Werror is for bx's own builds and CI; packagers may set WERROR=.
WERROR	?= -Werror
WFLAGS	:= -Wall -Wextra $(WERROR)
UCFLAGS	:= -std=gnu11 $(WFLAGS) $(CPPFLAGS) $(CFLAGS) -I$(CURDIR)/uapi -I$(CURDIR)/libbx

LIBBX_VERSION := 0.1.0
LIBBX_SONAME  := libbx.so.0

# make install: GNU-style directories; DESTDIR is prepended to all.
PREFIX	?= /usr/local
LIBDIR	?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
DOCDIR	?= $(PREFIX)/share/doc/bx
SYSCONFDIR ?= /etc
UDEVDIR	?= /lib/udev/rules.d
INSTALL	?= install

KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h uapi/linux/*.h) Kbuild

# Files taken from linux-source at build time (never committed).
# The kselftest frame (lib.mk, the selftests Makefile that builds and
# installs a TARGETS=bx, the runner run_kselftest.sh) is among them.
KSRC_FILES := scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch scripts/subarch.include \
	tools/testing/selftests/kselftest_harness.h \
	tools/testing/selftests/kselftest.h \
	tools/testing/selftests/lib.mk tools/testing/selftests/Makefile \
	tools/testing/selftests/run_kselftest.sh \
	tools/testing/selftests/kselftest \
	tools/net/ynl/ynl-gen-c.py tools/net/ynl/lib \
	Documentation/netlink/genetlink.yaml
KSRC_OUT := $(addprefix $(O)/ksrc/,$(KSRC_FILES))

.PHONY: all module lib tools selftests ksft-install stage vm vm-old vm-debug \
	debug-kernel check check-run unit style sparse demo demo-run demo-ps \
	demo-ps-run clean deps \
	FORCE

all: module lib tools selftests

deps:
	tools/install-deps.sh

# ---- kernel module --------------------------------------------------------

module: bx.ko

bx.ko: $(KMOD_SRCS)
	@test -d "$(KDIR)" || { echo "KDIR=$(KDIR) not found (make deps)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) KCFLAGS=-Werror modules

# C=2 checks every source file whether or not it is rebuilt. No "clean"
# here: it would walk into $(O) and gut the cached debug kernel.
sparse:
	@mkdir -p $(O)
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 W=1 KCFLAGS=-Werror modules 2>&1 | tee $(O)/sparse.log
	@! grep -E "warning:|error:" $(O)/sparse.log || { echo "sparse: not clean"; exit 1; }
	@echo "sparse: clean"

# The stamp lists what was extracted: a longer KSRC_FILES extracts again.
$(O)/ksrc/.stamp: $(KSRC_TAR) $(if $(filter-out $(file < $(O)/ksrc/.stamp),$(KSRC_FILES)),FORCE)
	@mkdir -p $(O)/ksrc
	tar -xf $(KSRC_TAR) -C $(O)/ksrc --strip-components=1 \
		$(addprefix $(KSRC_TOP)/,$(KSRC_FILES))
	@echo '$(KSRC_FILES)' > $@

FORCE:

$(KSRC_OUT): $(O)/ksrc/.stamp

CHECKPATCH := $(O)/ksrc/scripts/checkpatch.pl --strict --no-tree --terse \
	--show-types --ignore FILE_PATH_CHANGES

# nl-gen.[ch] are generated (tools/nl-regen.sh): checked for being up to
# date with the spec instead. layers.py: kmod/'s layers and call cycles,
# read from the built objects' symbols (hence bx.ko first);
# tunables.sh: the tunables' one declaration against the spec and the docs.
# params.[ch] expand the tunables' list (an X-macro), which checkpatch's
# rules for function-like macros do not fit: those rules are off there.
XMACRO_IGNORE := COMPLEX_MACRO,MACRO_ARG_UNUSED,MACRO_ARG_REUSE,TRAILING_SEMICOLON,LONG_LINE
# trace.h has the layout of the kernel's own trace headers, which
# checkpatch's rules on alignment and lines ending in "(" do not fit;
# its peer macro reads a pointer twice, and define_trace.h needs the
# file's own name (TRACE_INCLUDE_FILE).
TRACE_IGNORE := PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE,MACRO_ARG_REUSE,EMBEDDED_FILENAME
style: $(O)/ksrc/.stamp bx.ko
	$(CHECKPATCH) -f $(filter-out kmod/nl-gen.% kmod/params.% kmod/trace.h,$(filter %.c %.h,$(KMOD_SRCS)))
	$(CHECKPATCH) --ignore $(XMACRO_IGNORE) -f kmod/params.c kmod/params.h
	$(CHECKPATCH) --ignore $(TRACE_IGNORE) -f kmod/trace.h
	tools/nl-regen.sh $(O)/ksrc --check
	tools/layers.py
	tools/tunables.sh
	@echo "style: clean"

# ---- libbx ----------------------------------------------------------------

LIBBX_SO := $(O)/lib/libbx.so.$(LIBBX_VERSION)
LIBBX_A  := $(O)/lib/libbx.a

lib: $(LIBBX_SO) $(LIBBX_A) $(O)/lib/libbx.pc $(O)/lib/bx-pslite.pc

$(O)/libbx/%.pic.o: libbx/%.c $(wildcard libbx/*.h) uapi/linux/bx.h
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -fPIC -c -o $@ $<

$(O)/libbx/%.o: libbx/%.c $(wildcard libbx/*.h) uapi/linux/bx.h
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -c -o $@ $<

LIBBX_SRCS := $(wildcard libbx/*.c)

$(LIBBX_SO): $(patsubst libbx/%.c,$(O)/libbx/%.pic.o,$(LIBBX_SRCS)) libbx/libbx.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIBBX_SONAME) -Wl,--version-script=libbx/libbx.map -pthread \
		-Wl,--no-undefined -o $@ $(filter %.o,$^) -lmnl
	ln -sf libbx.so.$(LIBBX_VERSION) $(O)/lib/$(LIBBX_SONAME)
	ln -sf $(LIBBX_SONAME) $(O)/lib/libbx.so

$(LIBBX_A): $(patsubst libbx/%.c,$(O)/libbx/%.o,$(LIBBX_SRCS))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

# Written again whenever PREFIX, LIBDIR or INCLUDEDIR change.
PC_VARS := $(PREFIX) $(LIBDIR) $(INCLUDEDIR) $(LIBBX_VERSION)
# bx-pslite.pc: ps-lite's C++ API (libbx/ps/, Documentation/pslite.rst).
$(O)/lib/%.pc: libbx/%.pc.in $(if $(filter-out $(file < $(O)/lib/.pc-vars),$(PC_VARS)),FORCE)
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(LIBBX_VERSION)|' $< > $@
	@echo '$(PC_VARS)' > $(O)/lib/.pc-vars

# ---- tools ----------------------------------------------------------------

TOOLS := $(O)/bin/bxrig $(O)/bin/bxswitch
include tools/lib/lib.mk
include tools/ps/ps.mk
include tools/pslite/pslite.mk
include tools/bench/bench.mk
include tools/bxctl/bxctl.mk
include man/man.mk
include python/python.mk

tools: $(TOOLS)

$(O)/bin/bxrig: tools/testing/vm/bxrig.c
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $<

# The rig's lossless switch (host side).
$(O)/bin/bxswitch: tools/testing/vm/bxswitch.c
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $<

# ---- selftests (run inside guests) ----------------------------------------
#
# selftests/bx is a kselftest directory on the kernel's lib.mk; its
# Makefile lists the tests. It is built and installed the kernel's way:
# linux-source's tools/testing/selftests/Makefile with TARGETS=bx, run in
# $(O)/ksrc, where selftests/bx appears as tools/testing/selftests/bx (a
# directory of symlinks to its files, made again when a file comes or
# goes). Objects go to $(O)/kselftest/bx; "make stage" installs the tests
# with the kernel's runner (run_kselftest.sh, kselftest-list.txt) into
# $(STAGE)/selftests, which the guests have as /opt/bx/selftests.

KSFT := $(O)/ksrc/tools/testing/selftests
KSFT_INST := $(O)/kselftest/install
KSFT_MAKE = $(MAKE) -C $(KSFT) TARGETS=bx FORCE_TARGETS=1 O=$(O) \
	BX_TOP=$(CURDIR) LIBBX_DIR=$(O)/lib USERCFLAGS="-Werror $(CFLAGS)"
# Our command-line variables stay up here: a CFLAGS=... would override
# the CFLAGS of lib.mk and selftests/bx/Makefile (it goes down as
# USERCFLAGS).
selftests ksft-install: MAKEOVERRIDES :=

$(KSFT)/.bx.stamp: $(O)/ksrc/.stamp selftests/bx
	rm -rf $(KSFT)/bx && mkdir -p $(KSFT)/bx
	cp -as $(CURDIR)/selftests/bx/. $(KSFT)/bx/
	@touch $@

selftests: $(KSFT)/.bx.stamp $(LIBBX_SO)
	+$(KSFT_MAKE) all

ksft-install: selftests
	rm -rf $(KSFT_INST)
	+$(KSFT_MAKE) KSFT_INSTALL_PATH=$(KSFT_INST) install

# ---- host unit tests (pure kernel code, compiled in user space) ---------
#
# Each tools/testing/unit/NAME_test.c links the kmod/ (or pure libbx/)
# files listed in UNIT_SRCS_NAME, built against the shims in
# tools/testing/unit/shim, with ASan and UBSan (any report aborts the
# test). fuzz_NAME.c are libFuzzer targets over the same files, built
# with clang.

UNIT_DIR    := tools/testing/unit
UNIT_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all \
	       -fno-omit-frame-pointer
UNIT_CFLAGS := -std=gnu11 $(WFLAGS) -O1 -g $(UNIT_SAN) \
	       -I$(UNIT_DIR)/shim -I$(CURDIR)/uapi
UNIT_SRCS_wire  := kmod/wire.c
UNIT_SRCS_alloc := libbx/alloc.c
UNIT_SRCS_flow  := kmod/flow.c
UNIT_SRCS_replay := kmod/replay.c
UNIT_SRCS_span  := kmod/span.c
UNIT_SRCS_opstate := kmod/opstate.c
UNIT_SRCS_auth  := kmod/auth.c kmod/wire.c
UNIT_SRCS_kv    := libbx/kv_wire.c
UNIT_SRCS_ps    := libbx/ps_wire.c

UNIT_TESTS := $(patsubst $(UNIT_DIR)/%_test.c,$(O)/unit/%_test,$(wildcard $(UNIT_DIR)/*_test.c)) \
	      $(patsubst $(UNIT_DIR)/%_test.sh,$(O)/unit/%_test,$(wildcard $(UNIT_DIR)/*_test.sh))
FUZZERS    := $(patsubst $(UNIT_DIR)/fuzz_%.c,$(O)/unit/fuzz_%,$(wildcard $(UNIT_DIR)/fuzz_*.c))

unit: $(UNIT_TESTS) $(FUZZERS)

.SECONDEXPANSION:
$(O)/unit/%_test: $(UNIT_DIR)/%_test.c $$(UNIT_SRCS_$$*) $(UNIT_DIR)/unit.h \
		$(wildcard kmod/*.h libbx/*.h tools/bench/benchrec.h $(UNIT_DIR)/shim/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_SRCS_$*) -lpthread

# A NAME_test.sh tests a script of the tree (report_test: the bench
# report's verdicts); check.sh runs it from here like the others.
$(O)/unit/%_test: $(UNIT_DIR)/%_test.sh
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec bash %s "$$@"\n' '$(CURDIR)/$<' > $@
	chmod +x $@

# switch_test runs the rig's switch, built next to it with the sanitizers.
$(O)/unit/switch_test: $(O)/unit/bxswitch

$(O)/unit/bxswitch: tools/testing/vm/bxswitch.c
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $<

$(O)/unit/fuzz_%: $(UNIT_DIR)/fuzz_%.c $$(UNIT_SRCS_$$*) kmod/wire.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 $(WFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -I$(UNIT_DIR)/shim -I$(CURDIR)/uapi \
		-o $@ $< $(UNIT_SRCS_$*)

# ---- guest images ---------------------------------------------------------

STAGE := $(O)/stage

stage: all ksft-install
	rm -rf $(STAGE) && mkdir -p $(STAGE)/bin $(STAGE)/lib
	cp -a $(O)/bin/. $(STAGE)/bin/
	cp tools/bench/ftrace_prof.sh $(STAGE)/bin/
	cp -a $(O)/lib/*.so* $(STAGE)/lib/
	cp -a $(KSFT_INST) $(STAGE)/selftests
	# The Python package and its tests (selftests/bx/python.sh).
	$(call py_install,$(STAGE)/python)
	$(INSTALL) -d $(STAGE)/python/tests $(STAGE)/python/examples
	$(INSTALL) -m 0644 $(PY_TESTS) $(STAGE)/python/tests/
	$(INSTALL) -m 0755 $(PY_EXAMPLES) $(STAGE)/python/examples/
	# make bench BENCH_BASE=REF: the module of another revision too.
	if [ -n "$(BENCH_BASE)" ] && [ -f $(O)/bench-base/bx.ko ]; then \
		mkdir -p $(STAGE)/bench && \
		cp $(O)/bench-base/bx.ko $(STAGE)/bench/bx-base.ko; fi

# bx.ko for another kernel than KDIR's, from a copy of the sources (so
# that the main build is untouched): $(call kmod_for,KDIR,OUTDIR[,CFLAGS]).
kmod_for = rm -rf $(2) && mkdir -p $(2)/kmod $(2)/uapi/linux && \
	cp Kbuild $(2)/ && cp kmod/*.c kmod/*.h $(2)/kmod/ && \
	cp uapi/linux/*.h $(2)/uapi/linux/ && \
	$(MAKE) -C $(1) M=$(2) KCFLAGS="-Werror $(3)" modules

# A guest image of Debian kernel $(1) with bx.ko $(2) in $(O)/vm/$(3).
vm_image = mkdir -p $(O)/vm/$(3) && \
	tools/testing/vm/mkinitramfs.sh -o $(O)/vm/$(3)/initramfs.cpio.gz \
		-k $(1) -r / -b $(2) -s $(STAGE) && \
	printf 'KERNEL=%s\nINITRD=%s\nKVER=%s\n' /boot/vmlinuz-$(1) \
		$(O)/vm/$(3)/initramfs.cpio.gz $(1) > $(O)/vm/$(3)/env

GUEST_KO := $(if $(filter $(KVER),$(GUEST_KVER)),bx.ko,$(O)/kmod-stock/bx.ko)

vm: stage $(GUEST_KO)
	$(call vm_image,$(GUEST_KVER),$(GUEST_KO),stock)

$(O)/kmod-stock/bx.ko: $(KMOD_SRCS)
	$(call kmod_for,/lib/modules/$(GUEST_KVER)/build,$(O)/kmod-stock)

# The "old" lane: Debian 12's default kernel (6.1).
vm-old: stage $(O)/kmod-old/bx.ko
	$(call vm_image,$(OLD_KVER),$(O)/kmod-old/bx.ko,old)

$(O)/kmod-old/bx.ko: $(KMOD_SRCS)
	@test -n "$(OLD_KVER)" || { echo "no 6.1 kernel (make deps)"; exit 1; }
	$(call kmod_for,/lib/modules/$(OLD_KVER)/build,$(O)/kmod-old)

# The debug lane: a small kernel with KASAN, lockdep, kmemleak and fault
# injection, built from linux-source-6.12 and cached under $(O)/debug-kernel
# by a hash of source version, config fragment and compiler. bx.ko is built
# against it from a copy of the sources, so the stock build is untouched.

DEBUG_OUT := $(O)/debug-kernel

debug-kernel:
	tools/testing/vm/debug-kernel/build.sh $(DEBUG_OUT)

# fault.sh's load sweep fails each allocation of a load in turn, those of
# the tracing core that creates a module's events too, which WARNs on
# them (kernel/trace/trace_events.c): the sweep loads bx built with
# NOTRACE (the kernel's switch: no events), /opt/bx/kmod/bx-notrace.ko.
vm-debug: stage debug-kernel
	@mkdir -p $(O)/vm/debug
	rm -rf $(O)/stage-debug && cp -a $(STAGE) $(O)/stage-debug && \
	mkdir -p $(O)/stage-debug/kmod && \
	. $(DEBUG_OUT)/current/env && \
	$(call kmod_for,$$DBG_KDIR,$(O)/kmod-debug) && \
	$(call kmod_for,$$DBG_KDIR,$(O)/kmod-debug-notrace,-DNOTRACE) && \
	cp $(O)/kmod-debug-notrace/bx.ko $(O)/stage-debug/kmod/bx-notrace.ko && \
	tools/testing/vm/mkinitramfs.sh -o $(O)/vm/debug/initramfs.cpio.gz \
		-k $$DBG_KVER -r $${DBG_MODDIR%/lib/modules/*} \
		-b $(O)/kmod-debug/bx.ko -s $(O)/stage-debug && \
	printf 'KERNEL=%s\nINITRD=%s\nKVER=%s\n' $$DBG_BZIMAGE \
		$(O)/vm/debug/initramfs.cpio.gz $$DBG_KVER > $(O)/vm/debug/env

# ---- install ----------------------------------------------------------------
#
#   make install          libbx (shared, static, headers under bx/, .pc),
#                         bxctl, the udev rule, the modprobe.d example,
#                         the man pages, the Python package (where
#                         Debian's python3 imports it: python/python.mk);
#                         then ldconfig, unless DESTDIR is set; DESTDIR,
#                         PREFIX, LIBDIR, INCLUDEDIR, SBINDIR, MANDIR,
#                         SYSCONFDIR, UDEVDIR, PYTHONDIR
#   make modules_install  bx.ko into /lib/modules/KVER/updates (DESTDIR)
#   make install-dkms     the module's sources into /usr/src/bx-VERSION
#                         with dkms.conf, for "dkms build bx/VERSION"

DKMS_SRC := /usr/src/bx-$(LIBBX_VERSION)

$(O)/dist/bx.conf: kmod/params.h tools/modprobe-conf.sh
	@mkdir -p $(dir $@)
	tools/modprobe-conf.sh $< > $@

.PHONY: install install-lib install-tools install-dkms modules_install
# ldconfig, for libbx.so.0 to be found at once (bx's Python package loads
# it by its soname), unless installing into a DESTDIR (a package build).
install: install-lib install-tools install-man install-python
	$(if $(DESTDIR),,@if [ "$$(id -u)" -eq 0 ]; then echo ldconfig; ldconfig; \
		else echo "make install: run ldconfig as root, for libbx.so.0 in $(LIBDIR)"; fi)

install-lib: lib
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/bx/linux
	$(INSTALL) -m 0644 $(LIBBX_SO) $(LIBBX_A) $(DESTDIR)$(LIBDIR)/
	ln -sf libbx.so.$(LIBBX_VERSION) $(DESTDIR)$(LIBDIR)/$(LIBBX_SONAME)
	ln -sf $(LIBBX_SONAME) $(DESTDIR)$(LIBDIR)/libbx.so
	$(INSTALL) -m 0644 $(O)/lib/libbx.pc $(O)/lib/bx-pslite.pc \
		$(DESTDIR)$(LIBDIR)/pkgconfig/
	$(INSTALL) -m 0644 libbx/libbx.h libbx/bxkv.h libbx/bxps.h \
		$(DESTDIR)$(INCLUDEDIR)/bx/
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/bx/ps/internal
	$(INSTALL) -m 0644 $(wildcard libbx/ps/*.h) $(DESTDIR)$(INCLUDEDIR)/bx/ps/
	$(INSTALL) -m 0644 $(wildcard libbx/ps/internal/*.h) \
		$(DESTDIR)$(INCLUDEDIR)/bx/ps/internal/
	$(INSTALL) -m 0644 uapi/linux/bx.h uapi/linux/bx_netlink.h \
		$(DESTDIR)$(INCLUDEDIR)/bx/linux/

# /etc/bx's templates are installed only where none is: they are the
# admin's. The secret and keys files are never installed (mode 0600,
# per host: bxctl secret generate, bxctl keys derive).
install-tools: $(O)/bin/bxctl $(O)/dist/bx.conf
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UDEVDIR) \
		$(DESTDIR)$(SYSCONFDIR)/modprobe.d $(DESTDIR)$(SYSCONFDIR)/bx
	$(INSTALL) -m 0755 $(O)/bin/bxctl $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0644 dist/60-bx.rules $(DESTDIR)$(UDEVDIR)/
	sed 's|@SBINDIR@|$(SBINDIR)|' dist/61-bx-apply.rules.in > \
		$(DESTDIR)$(UDEVDIR)/61-bx-apply.rules
	chmod 0644 $(DESTDIR)$(UDEVDIR)/61-bx-apply.rules
	$(INSTALL) -m 0644 $(O)/dist/bx.conf $(DESTDIR)$(SYSCONFDIR)/modprobe.d/
	for f in allow tunables; do \
		[ -e $(DESTDIR)$(SYSCONFDIR)/bx/$$f ] || \
		$(INSTALL) -m 0644 dist/bx/$$f $(DESTDIR)$(SYSCONFDIR)/bx/; \
	done

install-dkms:
	$(INSTALL) -d $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/uapi/linux
	$(INSTALL) -m 0644 Kbuild dkms.conf $(DESTDIR)$(DKMS_SRC)/
	$(INSTALL) -m 0644 kmod/*.c kmod/*.h $(DESTDIR)$(DKMS_SRC)/kmod/
	$(INSTALL) -m 0644 uapi/linux/*.h $(DESTDIR)$(DKMS_SRC)/uapi/linux/

modules_install: bx.ko
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install

# A user's program built against an installed libbx (make install with
# PREFIX=$(O)/inst) through pkg-config, shared and static; staged into
# the guests, where selftests/bx/install.sh runs both.
INST := $(O)/inst
INST_PC := PKG_CONFIG_PATH=$(INST)/lib/pkgconfig pkg-config

$(INST)/.stamp: $(LIBBX_SO) $(LIBBX_A) libbx/libbx.h libbx/bxkv.h uapi/linux/bx.h
	+$(MAKE) install-lib PREFIX=$(INST) LIBDIR=$(INST)/lib \
		INCLUDEDIR=$(INST)/include
	@touch $@

$(O)/bin/bx_consumer: tools/testing/install/consumer.c $(INST)/.stamp
	$(CC) -std=c11 $(WFLAGS) $(CFLAGS) $$($(INST_PC) --cflags libbx) \
		-o $@ $< $$($(INST_PC) --libs libbx)

# Debian ships no static libmnl: libbx.a (-l:libbx.a) with the rest of
# what --static lists (libmnl, -pthread) shared.
$(O)/bin/bx_consumer_static: tools/testing/install/consumer.c $(INST)/.stamp
	$(CC) -std=c11 $(WFLAGS) $(CFLAGS) $$($(INST_PC) --cflags libbx) \
		-o $@ $< $$($(INST_PC) --static --libs libbx | sed 's/-lbx\b/-l:libbx.a/')

TOOLS += $(O)/bin/bx_consumer $(O)/bin/bx_consumer_static
# (tools: above read TOOLS before this line.)
tools: $(O)/bin/bx_consumer $(O)/bin/bx_consumer_static

# ---- tests ----------------------------------------------------------------

# The README's two commands. Each first installs what is missing, then
# re-enters make so that KVER/KDIR see the freshly installed kernel.
check: deps
	$(MAKE) check-run

demo: deps
	$(MAKE) demo-run

demo-ps: deps
	$(MAKE) demo-ps-run

# LANES selects the guest lanes: all three by default, or some of "stock",
# "old" (Debian 12's 6.1 kernel) and "debug". The debug lane (KASAN,
# lockdep, kmemleak, fault injection) needs its kernel, built once and
# cached in build/debug-kernel: check.sh builds it at nice 19 while the
# other tiers run, and its image just before the debug lane.
LANES ?= stock old debug

check-run: all unit vm $(if $(filter old,$(LANES)),vm-old)
	TIERS="unit fuzz $(LANES)" \
	$(if $(filter debug,$(LANES)),DEBUG_KERNEL="$(MAKE) -s debug-kernel" \
		DEBUG_IMAGE="$(MAKE) vm-debug") tools/testing/check.sh

# The main job: the PyTorch example (python/examples/embedding_ps.py), a
# sparse-embedding model on two server guests trained from a third, over
# bx and over torch.distributed.rpc, side by side (tools/ps/torch_job.sh).
demo-run: all vm
	tools/ps/torch_job.sh

# The C parameter server bxps on guest 0, workers on the others, over bx
# and over kernel TCP, side by side (tools/ps/README.md).
demo-ps-run: all vm
	tools/ps/ps_job.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(O)
