# Benchmarks (issue #6): included by the top-level Makefile after
# tools/ps/ps.mk; may append to TOOLS and defines `make bench`.
