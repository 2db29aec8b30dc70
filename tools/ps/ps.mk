# Parameter server (issue #6): included by the top-level Makefile after
# TOOLS is defined; appends binaries built into $(O)/bin (staged into
# every guest).
#
# bxps links libbx like the selftests do; the rpath finds it next to the
# binary both in $(O) (bin/ and lib/) and in a guest (/opt/bx/bin and
# /opt/bx/lib), so LD_LIBRARY_PATH is not needed on the host.

PS_SRCS := tools/ps/ps.c tools/ps/ps_bx.c tools/ps/ps_tcp.c \
	$(TOOLS_LIB_SRCS)
PS_HDRS := tools/ps/ps.h libbx/libbx.h uapi/linux/bx.h $(TOOLS_LIB_HDRS)

TOOLS += $(O)/bin/bxps

$(O)/bin/bxps: $(PS_SRCS) $(PS_HDRS) $(LIBBX_SO)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) $(TOOLS_LIB_CFLAGS) -pthread -o $@ $(PS_SRCS) -L$(O)/lib -lbx \
		-Wl,-rpath,'$$ORIGIN/../lib' -lpthread -lm
