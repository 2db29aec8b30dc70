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

$(O)/bin/bxctl: tools/bxctl/bxctl.c $(BXCTL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $<

$(O)/selftests/bx/nl_test: $(BXCTL_HDRS)
