# Benchmarks (issue #6): included by the top-level Makefile after
# tools/ps/ps.mk. Appends bxperf to TOOLS (built into $(O)/bin, staged
# into every guest) and defines:
#
#   make bench           the whole matrix in 4 guests (with ps-lite's
#                        API over bx against TCP, phase pslite), the PyTorch
#                        example over bx and over torch RPC, uv and
#                        ibv (3 guests), tensor conversions (host),
#                        the fast path's instruction counts, the
#                        report: $(O)/bench/
#   make bench-fastpath  only the instruction counts (host, callgrind);
#                        FASTPATH_BASE=REF adds REF's counts beside them
#   make bench-report    only the report again, from the kept run
#
# Both write the run's figures into BENCH_DOC (performance-figures.rst),
# group by group.
#
# BENCH_ARGS passes options to tools/bench/bench.sh (e.g. "-s 5 -I 30",
# "-P torch" for the PyTorch example alone); BENCH_TORCH_STEPS and
# BENCH_TORCH_WORKERS (default 200 and 2) size that example's run.
# See tools/bench/README.md.

BXPERF_SRCS := tools/bench/bxperf.c tools/bench/bxperf_bx.c \
	tools/bench/bxperf_tcp.c $(TOOLS_LIB_SRCS)
BXPERF_HDRS := tools/bench/bxperf.h tools/bench/benchrec.h libbx/libbx.h uapi/linux/bx.h \
	$(TOOLS_LIB_HDRS)

TOOLS += $(O)/bin/bxperf $(O)/bin/rds_pp

# Linked like bxps: libbx.so found next to the binary through the rpath,
# both in $(O) and in a guest (/opt/bx/bin, /opt/bx/lib).
$(O)/bin/bxperf: $(BXPERF_SRCS) $(BXPERF_HDRS) $(LIBBX_SO)
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) $(TOOLS_LIB_CFLAGS) -pthread -o $@ $(BXPERF_SRCS) -L$(O)/lib -lbx \
		-Wl,-rpath,'$$ORIGIN/../lib' -lpthread -lm

$(O)/bin/rds_pp: tools/bench/rds_pp.c tools/bench/benchrec.h
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -o $@ $<

# The fast path on the host: the kernel's pure files through the unit
# tests' shims (as for make unit), but -O2 and no sanitizers, so that
# callgrind counts what the module runs.
FASTPATH_SRCS := tools/bench/fastpath.c kmod/wire.c kmod/flow.c libbx/alloc.c
FASTPATH_DEPS := $(FASTPATH_SRCS) kmod/wire.h kmod/flow.h libbx/alloc.h \
	$(wildcard tools/testing/unit/shim/*/*.h)
BENCH_DIR := $(O)/bench

$(BENCH_DIR)/fastpath: $(FASTPATH_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WFLAGS) -O2 -g -Itools/testing/unit/shim \
		-I$(CURDIR)/uapi -o $@ $(FASTPATH_SRCS) -lpthread

.PHONY: bench bench-run bench-fastpath bench-report

bench-fastpath: $(BENCH_DIR)/fastpath
	CC="$(CC)" FASTPATH_BASE="$(FASTPATH_BASE)" tools/bench/fastpath.sh $< $(BENCH_DIR)

# Like check and demo: install what is missing, then re-enter make.
bench: deps
	$(MAKE) bench-run

# BENCH_BASE=REF: bx.ko at git REF goes into the guests too, as the
# bw phase's setting "base" (A/B in the same rounds: BENCH_BW_SETS=base).
BENCH_BASE ?=
BENCH_BASE_KO := $(O)/bench-base/bx.ko

# The run's figures go into BENCH_DOC (each group between its
# bench-summary markers) whatever the verdicts; bench.sh's status is make's.
BENCH_DOC ?= Documentation/performance-figures.rst

bench-run: $(if $(BENCH_BASE),bench-base) all vm bench-fastpath
	BENCH_BW_SETS="$(BENCH_BW_SETS)$(if $(BENCH_BASE), base)" \
		tools/bench/bench.sh -o $(BENCH_DIR) $(BENCH_ARGS); st=$$?; \
	tools/bench/report.sh $(BENCH_DIR) --update-doc $(BENCH_DOC) \
		> /dev/null || st=1; exit $$st

.PHONY: bench-base
bench-base:
	tools/bench/base-ko.sh $(BENCH_BASE) $(KDIR) $(BENCH_BASE_KO)

bench-report:
	tools/bench/report.sh $(BENCH_DIR) --update-doc $(BENCH_DOC)
