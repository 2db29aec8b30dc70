# Code shared by the tools (included by the top-level Makefile before
# tools/ps/ps.mk and tools/bench/bench.mk, which link it in):
#
#   rpc_tcp.[ch]  the kernel-TCP RPC that bxps and bxperf measure bx
#                 against (framing, epoll server, blocking and pipelined
#                 clients)

TOOLS_LIB_SRCS := tools/lib/rpc_tcp.c
TOOLS_LIB_HDRS := tools/lib/rpc_tcp.h
TOOLS_LIB_CFLAGS := -Itools/lib
