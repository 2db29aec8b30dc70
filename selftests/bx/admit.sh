#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Peer admission across two guests (admit.c): the cluster secret, the
# allow-list and the refusal of a peer after a violation. Each case
# starts from a fresh bx on both guests (no connection, no secret, no
# allow-list) and leaves it that way.
#
#   secret        the same secret on both: pushes and pulls both ways
#                 verify, and each side's connection is authenticated;
#                 every connection began with a challenge
#   secret_wrong  different secrets: the challenge names a secret the
#                 initiator does not hold, so it gives up (EACCES); the
#                 acceptor made no connection, counted its challenges
#   secret_one    a secret on one side only: given up at the challenge,
#                 both ways (EACCES), nothing made on either side
#   keys          no secret, each host its pair keys for the other
#                 (bxctl keys derive): authenticated connections; a
#                 host's keys file others may read is refused
#   rotate        a new secret on guest 0 while guest 1 keeps the old:
#                 both ways work while the old one overlaps
#                 (secret_overlap_ms); after it, guest 1 is given up on
#                 until it has the new one too
#   refuse        a wrong proof (guest 1's pair key for guest 0 is wrong)
#                 is guest 1's violation: its connect requests are
#                 refused for refuse_ms, even with the right key; after
#                 it, it connects
#   allow         an allow-list without the peer: its connect request is
#                 refused (counted) and this side does not connect to it
#                 (EACCES); with it, both work; the module parameter
#                 shows and sets the same list; a network with host bits
#                 set and a secret of the wrong length are refused
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

# Two secrets of exactly 32 bytes, the same on both guests, mode 0600
# (bxctl refuses a secret others may read).
printf 'bx admit.sh secret A 0123456789a' > /tmp/secA
printf 'bx admit.sh secret B 9876543210a' > /tmp/secB
printf 'bx admit.sh secret C 1357924680a' > /tmp/secC
chmod 600 /tmp/secA /tmp/secB /tmp/secC

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
	c0=$(admit_of challenges)
	b wrong.up
	if [ "$ID" -eq 1 ]; then
		# Guest 0's challenge names a secret guest 1 does not hold.
		try client_fails "Permission denied"
		try check [ "$(admit_of violations)" = 0 ]
	fi
	b wrong.tried
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of challenges)" -gt "$c0" ]
		# Nothing was made for a host that proved nothing.
		try check [ "$(bxctl -j conn)" = "[]" ]
		try check [ "$(stat_of peers)" = 0 ]
		try check [ "$(admit_of violations)" = 0 ]
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
	c0=$(admit_of challenges)
	b one.up
	# Guest 1 (no secret) gives up at guest 0's challenge (a secret).
	if [ "$ID" -eq 1 ]; then
		try client_fails "Permission denied"
	fi
	b one.a
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of challenges)" -gt "$c0" ]
		try check [ "$(stat_of conns)" = 0 ]
		# Guest 0 (a secret) gives up at guest 1's (none).
		try client_fails "Permission denied"
	fi
	b one.b
	if [ "$ID" -eq 1 ]; then
		try check [ "$(admit_of challenges)" -gt "$c0" ]
		try check [ "$(stat_of conns)" = 0 ]
	fi
	try serve_stop errors-ok
	b one.done
	fresh
	result
}

# keys_for FILE: this guest's pair key for the other, from secret C.
keys_for() {
	rm -f "$1"
	bxctl keys derive /tmp/secC "$(self)" "$1" "$(other)"
}
self() { [ "$ID" -eq 0 ] && echo "$G0" || echo "$G1"; }

case_keys() {
	fresh
	try check keys_for /tmp/keys
	try check bxctl keys /tmp/keys
	try check [ "$(admit_of pairkeys)" = 1 ]
	try check [ "$(admit_of secret-on)" = 0 ]
	# A keys file others may read is not taken.
	cp /tmp/keys /tmp/keys.open
	chmod 644 /tmp/keys.open
	try check sh -c "! bxctl keys /tmp/keys.open 2>/dev/null"
	serve_start -n 16 -b 2 -r 40
	b keys.up
	if [ "$ID" -eq 1 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b keys.one
	bxctl -j conn | tr '}' '\n' | grep '"state":"up"' > /tmp/up.json || true
	try check grep -q '"auth":true' /tmp/up.json
	try check [ "$(admit_of violations)" = 0 ]
	try serve_stop
	b keys.done
	fresh
	result
}

case_rotate() {
	fresh
	echo 4000 > $PARAMS/secret_overlap_ms
	try check bxctl secret /tmp/secA
	serve_start -n 16 -b 2 -r 40
	b rotate.up
	# Guest 0 changes to B; A stays good beside it for 4 s.
	if [ "$ID" -eq 0 ]; then
		try check bxctl secret /tmp/secB
		try check [ "$(admit_of secret-prev)" = 1 ]
	fi
	b rotate.changed
	# Both ways, each side proving A, the secret both hold.
	if [ "$ID" -eq 1 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b rotate.g1
	if [ "$ID" -eq 0 ]; then
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b rotate.g0
	try serve_stop errors-ok
	b rotate.stopped
	# The overlap over, guest 1 (A alone) is given up on...
	if [ "$ID" -eq 0 ]; then
		try check wait_until 10 sh -c "[ \"\$(bxctl -j admit | sed -n 's/.*\"secret-prev\":\([0-9]\).*/\1/p')\" = 0 ]"
		serve_start -n 16 -b 2 -r 40
	fi
	b rotate.over
	if [ "$ID" -eq 1 ]; then
		# A new handshake: no connection, no cookie kept.
		fresh
		try check bxctl secret /tmp/secA
		try client_fails "Permission denied"
		# ...until it has B too.
		try check bxctl secret /tmp/secB
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b rotate.later
	try check [ "$(admit_of violations)" = 0 ]
	[ "$ID" -ne 0 ] || try serve_stop errors-ok
	b rotate.done
	echo 600000 > $PARAMS/secret_overlap_ms
	fresh
	result
}

case_refuse() {
	fresh
	echo 4000 > $PARAMS/refuse_ms
	if [ "$ID" -eq 0 ]; then
		try check bxctl secret /tmp/secA
	else
		# A pair key under A's name, with a key that is not A's.
		rm -f /tmp/good /tmp/bad
		bxctl keys derive /tmp/secA "$G1" /tmp/good "$G0"
		awk '{ print $1, $2, "00" substr($3, 3) }' /tmp/good > /tmp/bad
		chmod 600 /tmp/bad
		try check bxctl keys /tmp/bad
	fi
	serve_start -n 16 -b 2 -r 40
	b refuse.up
	# Guest 1's proof is wrong: its violation at guest 0.
	[ "$ID" -ne 1 ] || try client_fails "refused\|denied\|Protocol\|reset"
	b refuse.violated
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of violations)" -ge 1 ]
		try check [ "$(admit_of auth-failures)" -ge 1 ]
		r0=$(admit_of refused)
	fi
	b refuse.counted
	if [ "$ID" -eq 1 ]; then
		# The right key now: still refused, for what it did.
		try check bxctl keys /tmp/good
		try client_fails "Connection refused"
	fi
	b refuse.refused
	if [ "$ID" -eq 0 ]; then
		try check [ "$(admit_of refused)" -gt "$r0" ]
		bxctl -d admit | sed 's/^/# /'
	fi
	b refuse.later
	if [ "$ID" -eq 1 ]; then
		# refuse_ms later, it gets in.
		sleep 5
		out=$(client) || try check false "$out"
		echo "# $(echo "$out" | head -1)"
	fi
	b refuse.in
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
		head -c 31 /tmp/secA > /tmp/short
		chmod 600 /tmp/short
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

ktap_plan 7
run_test secret case_secret
run_test secret_wrong case_secret_wrong
run_test secret_one case_secret_one
run_test keys case_keys
run_test rotate case_rotate
run_test refuse case_refuse
run_test allow case_allow
ktap_finish
