# bxctl (issue #5): included by the top-level Makefile after TOOLS is
# defined; appends $(O)/bin/bxctl to TOOLS.
#
# bxctl speaks netlink through bx's client generated from the spec
# (tools/lib/ynl/bx-user.[ch], tools/nl-regen.sh) on the kernel's YNL
# library (tools/lib/ynl/ynl.[ch], README.md there), both compiled in:
# no library to install. selftests/bx/nl_test.c and netns_test.c use
# them too.

YNL_DIR  := tools/lib/ynl
YNL_HDRS := $(YNL_DIR)/ynl.h $(YNL_DIR)/ynl-priv.h $(YNL_DIR)/bx-user.h \
	uapi/linux/bx_netlink.h
YNL_OBJS := $(O)/ynl/ynl.o $(O)/ynl/bx-user.o

# The library's own warnings are off, as its Makefile in the kernel tree
# has them (README.md there); not for its callers.
$(O)/ynl/%.o: $(YNL_DIR)/%.c $(YNL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -I$(YNL_DIR) -Wno-unused-parameter \
		-Wno-format-truncation -c -o $@ $<

TOOLS += $(O)/bin/bxctl

# "bxctl keys derive" derives pair keys with the module's own auth.c,
# compiled in user space against the kernel's SHA-256 API as the unit
# tests' shim provides it.
BXCTL_AUTH := kmod/auth.c kmod/auth.h kmod/wire.h \
	tools/testing/unit/shim/crypto/sha2.h

$(O)/bin/bxctl: tools/bxctl/bxctl.c $(YNL_OBJS) $(YNL_HDRS) $(BXCTL_AUTH)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -I$(YNL_DIR) -Itools/testing/unit/shim -Ikmod -o $@ \
		$< kmod/auth.c $(YNL_OBJS)
