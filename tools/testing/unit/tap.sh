# SPDX-License-Identifier: GPL-2.0
#
# TAP for the host tests written in bash (sourced; $tmp must be a
# scratch directory): ok DESCRIPTION COMMAND... runs COMMAND and reports
# it, its output shown as diagnostics only when it fails; skip
# DESCRIPTION REASON; totals prints the KTAP totals line and fails if
# anything did.
n=0 pass=0 fail=0 skip=0

ok() {	# DESCRIPTION COMMAND...
	local d=$1
	shift
	n=$((n + 1))
	if "$@" > "$tmp/tap.out" 2>&1; then
		pass=$((pass + 1))
		echo "ok $n $d"
	else
		fail=$((fail + 1))
		echo "not ok $n $d"
		tail -n 30 "$tmp/tap.out" | sed 's/^/# /'
	fi
}

skip() {	# DESCRIPTION REASON
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n $1 # SKIP $2"
}

totals() {
	echo "# Totals: pass:$pass fail:$fail skip:$skip"
	[ "$fail" -eq 0 ]
}
