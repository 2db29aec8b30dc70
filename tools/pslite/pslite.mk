# ps-lite's API over bx (issue #35): included by the top-level Makefile.
# Programs written against ps-lite's public API, built against bx's
# <ps/ps.h> (libbx/ps/) and staged into every guest (selftests/bx/pslite.sh).

PSLITE_HDRS := $(wildcard libbx/ps/*.h libbx/ps/internal/*.h) libbx/bxps.h
PSLITE_CXXFLAGS := -std=c++11 -Wall -Wextra $(WERROR) -O2 -g -I$(CURDIR)/libbx -pthread

TOOLS += $(O)/bin/pslite_test $(O)/bin/pslite_bench

$(O)/bin/pslite_%: tools/pslite/pslite_%.cc $(PSLITE_HDRS) tools/bench/benchrec.h $(LIBBX_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(PSLITE_CXXFLAGS) -o $@ $< -L$(O)/lib -lbx -Wl,-rpath,'$$ORIGIN/../lib'
