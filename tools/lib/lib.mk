# Code shared by the tools (included by the top-level Makefile before
# tools/ps/ps.mk and tools/bench/bench.mk, which link it in):
#
#   rpc_tcp.[ch]  the kernel-TCP RPC that bxps and bxperf measure bx
#                 against (framing, epoll server, blocking and pipelined
#                 clients)
#   rpc_bx.[ch]   what both do the same way over libbx (handles, receive
#                 services, batched submission)
#   workload.[ch] the push/pull load of bxperf, bxps and the selftests'
#                 bx_pp (which compiles it in): workers that start
#                 together, operations in flight, stop rules, warm-up,
#                 Poisson arrivals, latencies, CPU time

TOOLS_LIB_SRCS := tools/lib/rpc_tcp.c tools/lib/rpc_bx.c tools/lib/workload.c
TOOLS_LIB_HDRS := tools/lib/rpc_tcp.h tools/lib/rpc_bx.h tools/lib/workload.h
TOOLS_LIB_CFLAGS := -Itools/lib
