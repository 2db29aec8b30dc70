# SPDX-License-Identifier: GPL-2.0
#
# Manual pages (issue #29). Included by the top-level Makefile, or run
# from the top of the tree with "make -f man/man.mk TARGET".
#
#   MAN_PAGES     every page, relative to the top of the tree; a page
#                 that only holds ".so man3/OTHER.3" is a link to OTHER
#   man-check     render every page with man(1); any warning fails
#   install-man   install into $(DESTDIR)$(MANDIR)/manN (MANDIR defaults
#                 to $(PREFIX)/share/man, PREFIX to /usr/local)
#
# tools/testing/unit/man_test.sh checks the same and more (a page for
# every function of libbx/libbx.map, this list against man/).

MAN_PAGES := \
	man/man3/libbx.3 \
	man/man3/bx_open.3 man/man3/bx_close.3 man/man3/bx_fd.3 \
	man/man3/bx_get_info.3 \
	man/man3/bx_setup.3 man/man3/bx_region.3 man/man3/bx_region_size.3 \
	man/man3/bx_eager_max.3 \
	man/man3/bx_buf_alloc.3 man/man3/bx_buf_free.3 \
	man/man3/bx_peer.3 \
	man/man3/bx_bind.3 man/man3/bx_unbind.3 \
	man/man3/bx_push.3 man/man3/bx_push_async.3 man/man3/bx_prep_push.3 \
	man/man3/bx_pull.3 man/man3/bx_pull_async.3 man/man3/bx_prep_pull.3 \
	man/man3/bx_recv.3 man/man3/bx_recv_async.3 man/man3/bx_prep_recv.3 \
	man/man3/bx_reply.3 man/man3/bx_reply_async.3 \
	man/man3/bx_prep_reply.3 \
	man/man3/bx_submit.3 man/man3/bx_submit_wait.3 \
	man/man3/bx_reap.3 \
	man/man3/bxkv.3 man/man3/bxkv_server_create.3 \
	man/man3/bxkv_server_destroy.3 man/man3/bxkv_server_value.3 \
	man/man3/bxkv_server_poll.3 man/man3/bxkv_server_set_handle.3 \
	man/man3/bxkv_server_start.3 \
	man/man3/bxkv_server_stop.3 man/man3/bxkv_server_stats.3 \
	man/man3/bxkv_worker_create.3 man/man3/bxkv_worker_destroy.3 \
	man/man3/bxkv_buf_alloc.3 man/man3/bxkv_buf_free.3 \
	man/man3/bxkv_push.3 man/man3/bxkv_pull.3 man/man3/bxkv_last_error.3 \
	man/man3/bxkv_push_lens.3 man/man3/bxkv_pull_lens.3 \
	man/man3/bxkv_server_value_len.3 \
	man/man3/bxps.3 man/man3/bxps_alloc.3 man/man3/bxps_barrier.3 man/man3/bxps_cfg_env.3 man/man3/bxps_dtype_size.3 man/man3/bxps_finalize.3 man/man3/bxps_free.3 man/man3/bxps_handle_sum.3 man/man3/bxps_id.3 man/man3/bxps_in_region.3 man/man3/bxps_node_dead.3 man/man3/bxps_node_ids.3 man/man3/bxps_num_servers.3 man/man3/bxps_num_workers.3 man/man3/bxps_pull.3 man/man3/bxps_push.3 man/man3/bxps_pushpull.3 man/man3/bxps_rank.3 man/man3/bxps_region.3 man/man3/bxps_req_release.3 man/man3/bxps_request.3 man/man3/bxps_respond.3 man/man3/bxps_respond_err.3 man/man3/bxps_result.3 man/man3/bxps_role.3 man/man3/bxps_server_range.3 man/man3/bxps_set_handler.3 man/man3/bxps_sliced.3 man/man3/bxps_start.3 man/man3/bxps_stats.3 man/man3/bxps_store_create.3 man/man3/bxps_store_destroy.3 man/man3/bxps_store_handle.3 man/man3/bxps_test.3 man/man3/bxps_wait.3 \
	man/man4/bx.4 \
	man/man8/bxctl.8

PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man

MAN_SECTIONS := $(sort $(notdir $(patsubst %/,%,$(dir $(MAN_PAGES)))))

.PHONY: man-check install-man

# From man/, so that man(1) finds the targets of ".so manN/PAGE.N".
man-check:
	@fail=0; \
	for p in $(patsubst man/%,%,$(MAN_PAGES)); do \
		err=$$(cd man && LC_ALL=C.UTF-8 MANWIDTH=80 \
			man --warnings -l "$$p" 2>&1 > /dev/null) || \
			err="$${err:-man exited non-zero}"; \
		if [ -n "$$err" ]; then \
			echo "man-check: $$p:"; echo "$$err" | sed 's/^/  /'; \
			fail=1; \
		fi; \
	done; \
	[ $$fail -eq 0 ] && echo "man-check: $(words $(MAN_PAGES)) pages, no warnings"

install-man:
	$(foreach s,$(MAN_SECTIONS), \
		install -d '$(DESTDIR)$(MANDIR)/$(s)' && \
		install -m 0644 $(filter man/$(s)/%,$(MAN_PAGES)) \
			'$(DESTDIR)$(MANDIR)/$(s)/' &&) true
