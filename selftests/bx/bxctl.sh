#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bxctl, bx's netlink tool: tables and JSON for every object, tunables set
# by root and refused to nobody and out of range (with the kernel's
# message), and events: dev-add/dev-del for an rxe device created and
# deleted here (also after bx was reloaded under the monitor), and
# conn-up/conn-down across guests (guest 1 pushes to guest 0, then
# unloads bx). Every guest runs this script; the cross-guest case
# synchronizes with bxrig barriers and skips with fewer than two guests.
. "$(dirname "$0")/lib.sh"

BXCTL=$(command -v bxctl || true)
PP=$(dirname "$0")/bx_pp
IP=/usr/sbin/ip
ID=${BXRIG_ID:-0}
N=${BXRIG_N:-1}
P=/sys/module/bx/parameters
SVC=9

[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root"; exit $KSFT_SKIP; }
[ -n "$BXCTL" ] || { echo "1..0 # SKIP no bxctl in PATH"; exit $KSFT_SKIP; }
[ -d /sys/module/bx ] || { echo "1..0 # SKIP bx not loaded"; exit $KSFT_SKIP; }

# A minimal JSON check (no jq or python in the guests): strings closed,
# brackets balanced and matched, one top-level value.
json_ok() {
	awk '
	BEGIN { depth = 0; instr = 0; esc = 0; tops = 0; bad = 0 }
	{
		n = length($0)
		for (i = 1; i <= n; i++) {
			c = substr($0, i, 1)
			if (instr) {
				if (esc) esc = 0
				else if (c == "\\") esc = 1
				else if (c == "\"") instr = 0
				continue
			}
			if (c == "\"") { instr = 1; if (depth == 0) tops++; continue }
			if (c == "{" || c == "[") {
				if (depth == 0) tops++
				st[++depth] = c
			} else if (c == "}" || c == "]") {
				if (depth == 0) { bad = 1; exit }
				if ((c == "}" && st[depth] != "{") ||
				    (c == "]" && st[depth] != "[")) { bad = 1; exit }
				depth--
			}
		}
	}
	END { exit (bad || instr || depth != 0 || tops != 1) }'
}

# mon_wait PID SECS: wait for a monitor to exit; kill it after SECS.
mon_wait() {
	if ! wait_until "$2" sh -c "! kill -0 $1 2>/dev/null"; then
		kill "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		return 1
	fi
	wait "$1"
}

dev_show() {
	out=$($BXCTL dev)
	echo "$out" | sed 's/^/# /'
	echo "$out" | head -1 | grep -q '^NAME  *PORT  *NETDEV$' || fail "no header"
	echo "$out" | grep -q '^rxe0  *1  *eth0$' || fail "no rxe0 line"
	[ "$($BXCTL dev show)" = "$out" ] || fail "dev show differs"
	$BXCTL -d dev | grep -q '^name rxe0 port 1 netdev eth0$' || fail "dev -d"
	# Everything else prints too.
	$BXCTL conn > /dev/null || fail "conn"
	$BXCTL proc > /dev/null || fail "proc"
	$BXCTL stats | grep -q '^conns  *[0-9][0-9]*$' || fail "stats"
}

json() {
	for obj in dev conn proc stats tunables; do
		out=$($BXCTL -j $obj) || fail "bxctl -j $obj failed"
		echo "$out" | json_ok || fail "bxctl -j $obj: not JSON: $out"
		[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "bxctl -j $obj: not one line"
	done
	out=$($BXCTL -j dev)
	echo "# $out"
	case $out in \[*\]) ;; *) fail "dev: not an array" ;; esac
	echo "$out" | grep -q '{"name":"rxe0","port":1,"netdev":"eth0"}' || fail "dev: no rxe0"
	case $($BXCTL -j conn) in \[*\]) ;; *) fail "conn: not an array" ;; esac
	case $($BXCTL -j proc) in \[*\]) ;; *) fail "proc: not an array" ;; esac
	out=$($BXCTL -j stats)
	echo "# $out"
	for k in conns ops-inflight mrs-inuse region-bytes copied-bytes \
		 tx-bytes-inflight tx-peak-bytes rx-bytes-inflight rx-peak-bytes \
		 busy-retries rnr-events tx-small-inflight; do
		echo "$out" | grep -q "\"$k\":[0-9]" || fail "stats: no $k"
	done
	out=$($BXCTL -j tunables)
	echo "# $out"
	echo "$out" | grep -q "\"wnd-kb\":$(cat $P/wnd_kb)[,}]" || fail "tunables: wnd-kb"
	echo "$out" | grep -q "\"drr-quantum\":$(cat $P/drr_quantum)[,}]" ||
		fail "tunables: drr-quantum"
}

tunables() {
	out=$($BXCTL tunables)
	echo "$out" | sed 's/^/# /'
	for t in wnd_kb wnd_ops host_wnd_kb host_wnd_ops rx_wnd_kb rd_max \
		 credit_batch rdv_threshold drr_quantum piece_kb \
		 connect_timeout_ms ack_timeout recover_ms rd_depth; do
		name=$(echo $t | tr _ -)
		echo "$out" | grep -q "^$name  *$(cat $P/$t)\$" || fail "$name"
	done
	fc=$(cat $P/flow_control)
	[ "$fc" = Y ] && fc=1 || fc=0
	echo "$out" | grep -q "^flow-control  *$fc\$" || fail "flow-control"
}

set_root() {
	wk=$(cat $P/wnd_kb) wo=$(cat $P/wnd_ops) fc=$(cat $P/flow_control)
	$BXCTL set wnd-kb 512 wnd_ops 77 flow-control off || fail "set"
	[ "$(cat $P/wnd_kb)" = 512 ] && [ "$(cat $P/wnd_ops)" = 77 ] &&
		[ "$(cat $P/flow_control)" = N ] ||
		fail "not applied: $(cat $P/wnd_kb) $(cat $P/wnd_ops) $(cat $P/flow_control)"
	$BXCTL -j tunables | grep -q '"wnd-kb":512,"wnd-ops":77,' || fail "tunables after set"
	$BXCTL tunables set wnd-kb "$wk" wnd-ops "$wo" flow-control "$fc" || fail "restore"
	[ "$(cat $P/wnd_kb)" = "$wk" ] && [ "$(cat $P/wnd_ops)" = "$wo" ] &&
		[ "$(cat $P/flow_control)" = "$fc" ] || fail "not restored"
}

set_errors() {
	wk=$(cat $P/wnd_kb) wo=$(cat $P/wnd_ops)
	rc=0
	$BXCTL set wnd-ops 99 wnd-kb 1 2> /tmp/bxctl.err || rc=$?
	echo "# $(cat /tmp/bxctl.err)"
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	grep -q 'wnd-kb: .*out of range' /tmp/bxctl.err || fail "no range message"
	grep -q 'Numerical result out of range\|Invalid argument' /tmp/bxctl.err ||
		fail "no errno text"
	[ "$(cat $P/wnd_kb)" = "$wk" ] && [ "$(cat $P/wnd_ops)" = "$wo" ] ||
		fail "changed"
	rc=0
	$BXCTL set flow-control 2 2> /tmp/bxctl.err || rc=$?
	[ $rc -eq 1 ] || fail "flow-control 2: exit $rc"
	rc=0
	$BXCTL set nosuch 1 2> /tmp/bxctl.err || rc=$?
	[ $rc -eq 1 ] && grep -q 'unknown tunable' /tmp/bxctl.err || fail "nosuch"
	rc=0
	$BXCTL set 2> /dev/null || rc=$?
	[ $rc -eq 1 ] || fail "set without arguments: exit $rc"
	rc=0
	$BXCTL conn show peer 4000000 2> /tmp/bxctl.err || rc=$?
	echo "# $(cat /tmp/bxctl.err)"
	[ $rc -eq 1 ] && grep -q 'No such file or directory' /tmp/bxctl.err ||
		fail "conn show of no peer"
}

set_nobody() {
	grep -q '^nobody:' /etc/passwd ||
		echo "nobody:x:65534:65534:nobody:/tmp:/bin/sh" >> /etc/passwd
	grep -q '^nogroup:' /etc/group || echo "nogroup:x:65534:" >> /etc/group
	wk=$(cat $P/wnd_kb)
	[ "$wk" != 512 ] || { $BXCTL set wnd-kb 1024; wk=1024; }
	rc=0
	su -s /bin/sh nobody -c "$BXCTL set wnd-kb 512" 2> /tmp/bxctl.err || rc=$?
	echo "# $(cat /tmp/bxctl.err)"
	[ $rc -ne 0 ] || fail "nobody could set"
	grep -q 'Operation not permitted' /tmp/bxctl.err || fail "not EPERM"
	[ "$(cat $P/wnd_kb)" = "$wk" ] || fail "changed by nobody"
	# Reading needs no privilege.
	su -s /bin/sh nobody -c "$BXCTL dev" | grep -q '^rxe0 ' || fail "nobody: dev"
	su -s /bin/sh nobody -c "$BXCTL -j tunables" | grep -q '"wnd-kb":' ||
		fail "nobody: tunables"
	# As root it works.
	$BXCTL set wnd-kb 512 && [ "$(cat $P/wnd_kb)" = 512 ] || fail "root"
	$BXCTL set wnd-kb "$wk"
}

# What the udev rule runs whenever bx loads: bxctl apply DIR sets the
# allow-list, the secret and the tunables of DIR on a fresh bx; with
# nothing there it changes nothing and warns that bx is open; a secret
# others may read is refused.
apply() {
	d=/tmp/etcbx
	rm -rf $d
	mkdir -p $d
	echo "192.0.2.0/24 198.51.100.7" > $d/allow
	printf 'bxctl.sh apply secret: 32 bytes!' > $d/secret
	chmod 600 $d/secret
	printf '# a comment\nuser-wnd-pct 40\n' > $d/tunables
	rmmod bx && modprobe bx || fail "reload"
	$BXCTL apply $d 2> /tmp/apply.err || fail "apply: $(cat /tmp/apply.err)"
	! grep -q warning /tmp/apply.err || fail "warned though closed"
	$BXCTL admit | grep -q '^allow 192.0.2.0/24 198.51.100.7/32' ||
		fail "allow-list not applied: $($BXCTL admit)"
	$BXCTL -j admit | grep -q '"secret-on":1' || fail "secret not applied"
	[ "$(cat $P/user_wnd_pct)" = 40 ] || fail "tunable not applied"
	rmmod bx && modprobe bx || fail "reload"
	$BXCTL apply /nonexistent 2> /tmp/apply.err || fail "apply of nothing"
	grep -q "warning: bx accepts connections from any host" /tmp/apply.err ||
		fail "no warning when open: $(cat /tmp/apply.err)"
	chmod 644 $d/secret
	! $BXCTL apply $d 2> /tmp/apply.err || fail "took a secret others may read"
	grep -q "chmod 600" /tmp/apply.err || fail "why: $(cat /tmp/apply.err)"
	rmmod bx && modprobe bx || fail "reload"
	wait_until 5 bx_has_dev rxe0 || fail "rxe0 not bound again"
}

monitor_dev() {
	$IP link del bxc0 2> /dev/null || true
	$IP link add bxc0 type veth peer name bxc1
	$IP link set bxc0 up
	$BXCTL -j monitor -c 2 > /tmp/mon.json 2>&1 &
	mj=$!
	$BXCTL monitor -c 2 > /tmp/mon.txt 2>&1 &
	mt=$!
	wait_until 10 mon_ready $mj || fail "json monitor not subscribed"
	wait_until 10 mon_ready $mt || fail "text monitor not subscribed"
	rdma link add rxe_ctl type rxe netdev bxc0
	wait_until 5 bx_has_dev rxe_ctl || fail "rxe_ctl not bound"
	$BXCTL dev | grep -q '^rxe_ctl  *1  *bxc0$' || fail "rxe_ctl not in bxctl dev"
	rdma link delete rxe_ctl
	$IP link del bxc0
	rc=0
	mon_wait $mj 20 || rc=1
	mon_wait $mt 20 || rc=1
	sed 's/^/# /' /tmp/mon.json /tmp/mon.txt
	[ $rc -eq 0 ] || fail "a monitor did not see two events"
	sed -n 1p /tmp/mon.json |
		grep -q '^{"event":"dev-add","name":"rxe_ctl","port":1,"netdev":"bxc0"}$' ||
		fail "json dev-add"
	sed -n 2p /tmp/mon.json | grep -q '^{"event":"dev-del","name":"rxe_ctl","port":1' ||
		fail "json dev-del"
	[ "$(wc -l < /tmp/mon.json)" -eq 2 ] || fail "json: not two lines"
	while read -r l; do echo "$l" | json_ok || fail "not JSON: $l"; done < /tmp/mon.json
	sed -n 1p /tmp/mon.txt | grep -q '^dev-add name rxe_ctl port 1 netdev bxc0$' ||
		fail "text dev-add"
	sed -n 2p /tmp/mon.txt | grep -q '^dev-del name rxe_ctl port 1' || fail "text dev-del"
}

# bx unloaded and loaded under a running monitor: unloading releases
# rxe0 (dev-del), and the monitor follows the family to its new ids and
# sees the next dev-add (the rxe0 bound while loading may come before it
# rejoined, so devices are added until one shows).
monitor_reload() {
	# Connection events (of connections left by earlier tests) may come
	# too: count device events only.
	$BXCTL -j monitor > /tmp/mon.reload 2>&1 &
	mon=$!
	wait_until 10 mon_ready $mon || fail "monitor not subscribed"
	rmmod bx
	modprobe bx
	wait_until 10 bx_has_dev rxe0 || fail "rxe0 not bound after reload"
	$IP link del bxr0 2> /dev/null || true
	$IP link add bxr0 type veth peer name bxr1
	$IP link set bxr0 up
	i=0
	while [ "$(grep -c '"event":"dev-' /tmp/mon.reload)" -lt 2 ] &&
	      [ $i -lt 10 ]; do
		rdma link add rxe_rl type rxe netdev bxr0
		rdma link delete rxe_rl
		i=$((i + 1))
		sleep 0.2
	done
	$IP link del bxr0
	kill $mon
	wait $mon 2>/dev/null || true
	sed 's/^/# /' /tmp/mon.reload
	grep '"event":"dev-' /tmp/mon.reload > /tmp/mon.devs
	sed -n 1p /tmp/mon.devs |
		grep -q '^{"event":"dev-del","name":"rxe0","port":1' || fail "no dev-del at unload"
	sed -n 2p /tmp/mon.devs |
		grep -q '^{"event":"dev-add","name":"rxe[_0-9a-z]*","port":1' ||
		fail "no dev-add after the reload"
}

# Cross-guest: guest 1 pushes to guest 0, so both see conn-up; then guest
# 1 unloads bx, so guest 0 sees conn-down (the peer went) and guest 1 too
# (its own teardown). A step failing does not skip the barriers.
# (lib.sh's try, but saying which step failed.)
try() { "$@" || { echo "# FAIL: $*"; ERR=1; }; }
has() { echo "$1" | grep -q "$2"; }
json_ok_str() { echo "$1" | json_ok; }
b() { rig_barrier "bxctl.$1" 120; }

conn_events() {
	if [ "$N" -lt 2 ]; then
		echo "# needs two rig guests"
		return $KSFT_SKIP
	fi
	if [ "$ID" -eq 0 ]; then
		serve_start -n 8 -b 0 -r 8
	fi
	if [ "$ID" -le 1 ]; then
		$BXCTL -j monitor -c 2 > /tmp/mon.conn 2>&1 &
		mon=$!
		try wait_until 10 mon_ready $mon
	fi
	b ready
	if [ "$ID" -eq 1 ]; then
		out=$($PP client -a "${BXRIG_PEER0:-192.0.2.1}" -s $SVC -z 100 -i 1 -q 1 -m push 2>&1) ||
			{ echo "# FAIL: push: $out"; ERR=1; }
	fi
	b pushed
	if [ "$ID" -eq 0 ]; then
		out=$($BXCTL conn)
		echo "$out" | sed 's/^/# /'
		try has "$out" '^[0-9][0-9]*  *192\.0\.2\.2  *0  *up  *in  *rxe0 '
		js=$($BXCTL -j conn)
		try has "$js" '"peer-addr":"192.0.2.2","lane":0,"state":"up","active":false,"dev-name":"rxe0"'
		id=$(echo "$js" | sed -n 's/.*"peer-id":\([0-9]*\),"peer-addr":"192.0.2.2".*/\1/p')
		one=$($BXCTL -j conn show peer "${id:-0}")
		try has "$one" "^{\"peer-id\":$id,\"peer-addr\":\"192.0.2.2\",.*}\$"
		try json_ok_str "$one"
		$BXCTL conn show peer "${id:-0}" | sed 's/^/# /'
		try has "$($BXCTL proc)" "^$SRV "
	elif [ "$ID" -eq 1 ]; then
		out=$($BXCTL conn)
		echo "$out" | sed 's/^/# /'
		try has "$out" '^[0-9][0-9]*  *192\.0\.2\.1  *0  *up  *out  *rxe0 '
	fi
	b checked
	if [ "$ID" -eq 1 ]; then
		try rmmod bx
		try mon_wait $mon 30
		sed 's/^/# /' /tmp/mon.conn
		try grep -q '^{"event":"conn-up","peer-id":[0-9]*,"peer-addr":"192.0.2.1","lane":0,"state":"up","active":true,' /tmp/mon.conn
		try grep -q '^{"event":"conn-down",.*"peer-addr":"192.0.2.1","lane":0,"state":"down","active":true,.*"err":-[0-9]' /tmp/mon.conn
		modprobe bx
		try wait_until 10 bx_has_dev rxe0
	elif [ "$ID" -eq 0 ]; then
		try mon_wait $mon 60
		sed 's/^/# /' /tmp/mon.conn
		try grep -q '^{"event":"conn-up","peer-id":[0-9]*,"peer-addr":"192.0.2.2","lane":0,"state":"up","active":false,' /tmp/mon.conn
		try grep -q '^{"event":"conn-down",.*"peer-addr":"192.0.2.2","lane":0,"state":"down","active":false,.*"err":-[0-9]' /tmp/mon.conn
		[ "$(sed -n 1p /tmp/mon.conn | cut -c1-19)" = '{"event":"conn-up",' ] ||
			{ echo "# FAIL: conn-up not first"; ERR=1; }
	fi
	try b done
	[ "$ID" -ne 0 ] || try serve_stop errors-ok
	result
}

# Cross-guest: guest 1 keeps 2 x 8 asynchronous pushes and pulls in flight
# to guest 0 while guest 0's rxe device is deleted and re-created. Guest
# 1's bx parks what was on the connection, reconnects and sends it again:
# its monitor sees "recovering" then "recovered" for guest 0, with
# operations sent again and none failed, and every operation of the
# client completes.
recovery_events() {
	if [ "$N" -lt 2 ]; then
		echo "# needs two rig guests"
		return $KSFT_SKIP
	fi
	if [ "$ID" -eq 0 ]; then
		serve_start -n 32 -b 0 -r 32
	elif [ "$ID" -eq 1 ]; then
		try mon_start /tmp/mon.rec
	fi
	b rec.ready
	if [ "$ID" -eq 1 ]; then
		$PP client -a "${BXRIG_PEER0:-192.0.2.1}" -s $SVC -z 100,65536 \
			-i 1000000 -q 8 -P 2 -m both -t 15 > /tmp/rec.out 2>&1 &
		cl=$!
	fi
	b rec.load
	if [ "$ID" -eq 0 ]; then
		sleep 4
		rdma link delete rxe0
		sleep 2
		rdma link add rxe0 type rxe netdev eth0
		try wait_until 10 bx_has_dev rxe0
	elif [ "$ID" -eq 1 ]; then
		rc=0
		wait $cl || rc=$?
		sed 's/^/# /' /tmp/rec.out
		try [ $rc -eq 0 ]
		try wait_until 30 grep -q '"event":"recovered"' /tmp/mon.rec
		mon_stop
		grep '"event":"recover' /tmp/mon.rec | sed 's/^/# /'
		try grep -q '^{"event":"recovering","peer-id":[0-9]*,"peer-addr":"192.0.2.1",' /tmp/mon.rec
		try grep -q '^{"event":"recovered",.*"peer-addr":"192.0.2.1",.*"recovered-ops":[1-9][0-9]*,"recover-failed":0' /tmp/mon.rec
		try has "$($BXCTL -j stats)" '"recover-failed":0'
	fi
	try b rec.done
	[ "$ID" -ne 0 ] || try serve_stop errors-ok
	result
}

ktap_plan 11
run_test dev_show dev_show
run_test json json
run_test tunables tunables
run_test set_root set_root
run_test set_errors set_errors
run_test set_nobody set_nobody
run_test apply apply
run_test monitor_dev monitor_dev
run_test monitor_reload monitor_reload
run_test conn_events conn_events
run_test recovery_events recovery_events
ktap_finish
