#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Programs built as users build theirs -- against an installed libbx,
# through pkg-config, shared and static (make's bx_consumer targets) --
# open /dev/bx, set up a region, allocate, bind and unbind.
. "$(dirname "$0")/lib.sh"

consumer_runs() {	# PROGRAM
	p=$(command -v "$1") || { echo "# no $1 in PATH"; return 4; }
	out=$("$p" 2>&1) || fail "$1: $out"
	echo "# $out"
	case $out in "consumer: ok"*) ;; *) fail "$1: $out" ;; esac
}

shared() { consumer_runs bx_consumer; }
static() { consumer_runs bx_consumer_static; }

ktap_plan 2
run_test shared shared
run_test static static
ktap_finish
