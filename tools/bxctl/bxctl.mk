# bxctl (issue #5): included by the top-level Makefile after TOOLS is
# defined; appends $(O)/bin/bxctl to TOOLS.
#
# bxctl needs no library: its netlink client is the header-only
# tools/bxctl/bxnl.h (GPL-2.0, like bxctl), which selftests/bx/nl_test.c
# and netns_test.c include too (the selftest rule knows only the .c file,
# so the header dependency of nl_test is added here). libbx does not use
# it: its event watcher is on libmnl.

BXCTL_HDRS := tools/bxctl/bxnl.h uapi/linux/bx_netlink.h

TOOLS += $(O)/bin/bxctl

# "bxctl keys derive" derives pair keys with the module's own auth.c,
# compiled in user space against the kernel's SHA-256 API as the unit
# tests' shim provides it.
BXCTL_AUTH := kmod/auth.c kmod/auth.h kmod/wire.h \
	tools/testing/unit/shim/crypto/sha2.h

$(O)/bin/bxctl: tools/bxctl/bxctl.c $(BXCTL_HDRS) $(BXCTL_AUTH)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Itools/testing/unit/shim -Ikmod -o $@ $< kmod/auth.c

$(O)/selftests/bx/nl_test: $(BXCTL_HDRS)
