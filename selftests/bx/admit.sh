#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Peer admission across two guests (admit.c): the cluster secret, the
# allow-list and the refusal of a peer after a violation. Each case
# starts from a fresh bx on both guests (no connection, no secret, no
# allow-list) and leaves it that way.
#
#   secret        the same secret on both: pushes and pulls both ways
#                 verify, and each side's connection is authenticated
#   secret_wrong  different secrets: the initiator finds the acceptor's
#                 proof wrong (a failed proof and a violation, counted),
#                 no operation goes through; the acceptor, which never
#                 got the initiator's proof, took the connection for
#                 nothing (no connection stays up)
#   secret_one    a secret on one side only: refused at connect, both
#                 ways (the one with the secret wants a proof, the other
#                 refuses one it cannot check), counted, the operation
#                 fails with ECONNREFUSED
#   refuse        after that violation, the peer's own connect requests
#                 are refused for refuse_ms; afterwards it connects
#   allow         an allow-list without the peer: its connect request is
#                 refused (counted) and this side does not connect to it
#                 (EACCES); with it, both work; the module parameter
#                 shows and sets the same list; a network with host bits
#                 set and a bad secret length are refused
. "$(dirname "$0")/lib.sh"

PP=$(dirname "$0")/bx_pp
SVC=7
ID=${BXRIG_ID:-0}
G0=${BXRIG_PEER0:-192.0.2.1}
G1=${BXRIG_PEER1:-192.0.2.2}
PARAMS=/sys/module/bx/parameters

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi

b() { rig_barrier "admit.$1" 120; }
other() { [ "$ID" -eq 0 ] && echo "$G1" || echo "$G0"; }

printf 'bx admit.sh secret A 0123456789' > /tmp/secA
printf 'bx admit.sh secret B 9876543210' > /tmp/secB

# A fresh bx: no connection, no secret, no allow-list.
fresh() {
	rmmod bx 2>/dev/null || true
	modprobe bx
}

# admit_of KEY: a counter of "bxctl -j admit".
admit_of() {
	bxctl -j admit | sed -n "s/.*\"$1\":\\([0-9]*\\).*/\\1/p"
}

# One verified push and pull to the other guest's server.
client() {
	"$PP" client -a "$(other)" -s $SVC -z 4096,65536,1048576 -i 2 -q 2 \
		-m both "$@" 2>&1
}

# A client that must fail, with errno text $1 among its errors.
client_fails() {
	out=$("$PP" client -a "$(other)" -s $SVC -z 65536 -i 1 -q 1 -m pull 2>&1) &&
		{ echo "# FAIL: client succeeded: $out"; return 1; }
	echo "$out" | grep -q "$1" ||
		{ echo "# FAIL: client failed without \"$1\": $out"; return 1; }
	echo "# client failed as it should: $(echo "$out" | grep -m1 "$1")"
}

case_secret() {
	fresh
	try check bxctl secret /tmp/secA
	try check [ "$(admit_of secret-on)" = 1 ]
	serve_start -n 16 -b 2 -r 40
	b secret.up
	# Guest 1 connects first, then guest 0 uses that connection too.
	if [ "$ID" -eq 1 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b secret.one
	if [ "$ID" -eq 0 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b secret.both
	bxctl -j conn | tr '}' '\n' | grep '"state":"up"' > /tmp/up.json || true
	try check grep -q '"auth":true' /tmp/up.json
	try check sh -c "! grep -q '\"auth\":false' /tmp/up.json"
	try check [ "$(admit_of auth-failures)" = 0 ]
	try check [ "$(admit_of violations)" = 0 ]
	try serve_stop
	b secret.done
	fresh
	result
}

case_secret_wrong() {
	fresh
	if [ "$ID" -eq 0 ]; then
		try check bxctl secret /tmp/secA
		serve_start -n 16 -b 2 -r 40
	else
		try check bxctl secret /tmp/secB
	fi
	b wrong.up
	if [ "$ID" -eq 1 ]; then
		# The acceptor's proof does not check out with our secret.
		try client_fails "Connection refused\|Permission denied\|Protocol error\|Connection reset"
		try check [ "$(admit_of auth-failures)" -ge 1 ]
		try check [ "$(admit_of violations)" -ge 1 ]
	fi
	b wrong.tried
	if [ "$ID" -eq 0 ]; then
		# The half-made connection ends at connect_timeout_ms at the
		# latest; nothing may stay up.
		try check wait_until 30 sh -c "! bxctl -j conn | grep -q '\"state\":\"up\"'"
		try serve_stop errors-ok
	fi
	b wrong.done
	fresh
	result
}

case_secret_one() {
	fresh
	if [ "$ID" -eq 0 ]; then
		try check bxctl secret /tmp/secA
	fi
	serve_start -n 16 -b 2 -r 40
	r0=$(admit_of refused)
	b one.up
	# Guest 1 (no secret) connects to guest 0 (secret): no proof offered.
	if [ "$ID" -eq 1 ]; then
		try client_fails "Connection refused"
	fi
	b one.a
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of refused)" -gt "$r0" ]
		# Guest 0 offers a proof guest 1 cannot check.
		try client_fails "Connection refused"
	fi
	b one.b
	if [ "$ID" -eq 1 ]; then
		try check [ "$(admit_of refused)" -gt "$r0" ]
	fi
	try serve_stop errors-ok
	b one.done
	fresh
	result
}

case_refuse() {
	fresh
	echo 4000 > $PARAMS/refuse_ms
	if [ "$ID" -eq 0 ]; then
		try check bxctl secret /tmp/secA
	else
		try check bxctl secret /tmp/secB
	fi
	serve_start -n 16 -b 2 -r 40
	b refuse.up
	# Guest 1 finds guest 0's proof wrong: a violation of guest 0.
	[ "$ID" -ne 1 ] || try client_fails "refused\|denied\|Protocol\|reset"
	r0=$(admit_of refused)
	b refuse.violated
	if [ "$ID" -eq 0 ]; then
		# Same secret now: still refused, for what guest 0 did.
		try check bxctl secret /tmp/secB
		try client_fails "Connection refused"
	fi
	b refuse.refused
	if [ "$ID" -eq 1 ]; then
		try check [ "$(admit_of refused)" -gt "$r0" ]
		bxctl -d conn | sed 's/^/# /'
	fi
	b refuse.counted
	if [ "$ID" -eq 0 ]; then
		# refuse_ms later, guest 0 gets in.
		sleep 5
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b refuse.later
	try serve_stop errors-ok
	b refuse.done
	echo 1000 > $PARAMS/refuse_ms
	fresh
	result
}

case_allow() {
	fresh
	serve_start -n 16 -b 2 -r 40
	r0=$(admit_of refused)
	if [ "$ID" -eq 0 ]; then
		try check bxctl allow 198.51.100.0/24 2001:db8::/32
		try check sh -c "bxctl admit | grep -q '^allow 198.51.100.0/24 2001:db8::/32'"
		try check [ "$(cat $PARAMS/allow)" = "198.51.100.0/24,2001:db8::/32" ]
	fi
	b allow.set
	if [ "$ID" -eq 1 ]; then
		# Not in guest 0's list: refused at connect.
		try client_fails "Connection refused"
	fi
	b allow.refused
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of refused)" -gt "$r0" ]
		# Nor does guest 0 connect to it.
		try client_fails "Permission denied"
		# The parameter sets the same list; guest 1 alone.
		echo "$G1,198.51.100.0/24" > $PARAMS/allow
		try check sh -c "bxctl admit | grep -q '^allow $G1/32 198.51.100.0/24'"
		# Host bits past the prefix, or a secret of the wrong length.
		try check sh -c "! bxctl allow 192.0.2.1/24 2>/dev/null"
		try check sh -c "! echo 192.0.2.1/24 > $PARAMS/allow 2>/dev/null"
		try check sh -c "! echo nonsense > $PARAMS/allow 2>/dev/null"
		head -c 15 /tmp/secA > /tmp/short
		try check sh -c "! bxctl secret /tmp/short 2>/dev/null"
		try check [ "$(cat $PARAMS/allow)" = "$G1/32,198.51.100.0/24" ]
	fi
	b allow.fixed
	if [ "$ID" -eq 1 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b allow.ok
	if [ "$ID" -eq 0 ]; then
		try check bxctl allow any
		try check sh -c "bxctl admit | grep -q '^allow any'"
		try check [ "$(cat $PARAMS/allow)" = "" ]
	fi
	try serve_stop errors-ok
	b allow.done
	fresh
	result
}

ktap_plan 5
run_test secret case_secret
run_test secret_wrong case_secret_wrong
run_test secret_one case_secret_one
run_test refuse case_refuse
run_test allow case_allow
ktap_finish
