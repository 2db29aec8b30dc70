# bxctl (issue #5): included by the top-level Makefile after TOOLS is
# defined; appends $(O)/bin/bxctl to TOOLS.
#
# bxctl needs no library: its netlink client is the header-only
# libbx/bxnl.h, which libbx and selftests/bx/nl_test.c include too (the
# selftest rule knows only the .c file, so the header dependency of
# nl_test is added here).

BXCTL_HDRS := libbx/bxnl.h uapi/linux/bx_netlink.h

TOOLS += $(O)/bin/bxctl

$(O)/bin/bxctl: tools/bxctl/bxctl.c $(BXCTL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $<

$(O)/selftests/bx/nl_test: $(BXCTL_HDRS)
