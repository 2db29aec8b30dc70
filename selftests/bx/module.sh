#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Module lifetime and device binding: load/unload cycles, devices created
# and deleted while loaded, rmmod refused while /dev/bx is open.
# Runs as root in a rig guest where rxe0 exists on eth0 and bx is loaded.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root"; exit $KSFT_SKIP; }
[ -e /sys/class/infiniband/rxe0 ] || { echo "1..0 # SKIP no rxe0"; exit $KSFT_SKIP; }

refcnt() { cat /sys/module/ib_core/refcnt; }

# Every cycle binds rxe0 and, once unloaded, leaves nothing behind: no
# module, no debugfs dir, no /dev/bx, no reference on ib_core.
load_unload_cycles() {
	rmmod bx
	base=$(refcnt)
	for i in $(seq 1 20); do
		modprobe bx
		bx_has_dev rxe0 || fail "cycle $i: rxe0 not bound"
		[ -c /dev/bx ] || fail "cycle $i: no /dev/bx"
		[ "$(refcnt)" -gt "$base" ] || fail "cycle $i: no ib_core ref"
		rmmod bx
		[ ! -e /sys/module/bx ] || fail "cycle $i: module still there"
		[ ! -e /sys/kernel/debug/bx ] || fail "cycle $i: debugfs left"
		[ ! -e /dev/bx ] || fail "cycle $i: /dev/bx left"
		[ "$(refcnt)" -eq "$base" ] || fail "cycle $i: ib_core refcnt $(refcnt) != $base"
	done
	modprobe bx
	# The device bx bound and released twenty times is still usable.
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
}

# A device created while bx is loaded is bound; deleting it releases it,
# also while a /dev/bx file is open.
hotplug() {
	IP=/usr/sbin/ip
	$IP link add bxv0 type veth peer name bxv1
	$IP link set bxv0 up
	$IP link set bxv1 up
	exec 3<>/dev/bx
	rdma link add rxe_hp type rxe netdev bxv0
	wait_until 5 bx_has_dev rxe_hp || fail "rxe_hp not bound"
	rdma link delete rxe_hp
	wait_until 5 bx_lacks_dev rxe_hp || fail "rxe_hp not released"
	exec 3<&-
	$IP link del bxv0
	bx_has_dev rxe0 || fail "rxe0 lost"
	dmesg | grep -q "bx: bound rxe_hp" || fail "no bind message"
	dmesg | grep -q "bx: released rxe_hp" || fail "no release message"
}

# Several devices at once, then removed in another order.
hotplug_many() {
	IP=/usr/sbin/ip
	for i in 0 1 2; do
		$IP link add bxm$i type veth peer name bxp$i
		$IP link set bxm$i up
		rdma link add rxe_m$i type rxe netdev bxm$i
	done
	for i in 0 1 2; do
		wait_until 5 bx_has_dev rxe_m$i || fail "rxe_m$i not bound"
	done
	[ "$(bx_devices | awk '{print $1}' | sort -u | wc -l)" -eq 4 ] ||
		fail "expected 4 devices: $(bx_devices)"
	for i in 1 2 0; do
		rdma link delete rxe_m$i
		wait_until 5 bx_lacks_dev rxe_m$i || fail "rxe_m$i not released"
		$IP link del bxm$i
	done
	[ "$(bx_devices | wc -l)" -eq 1 ] || fail "left: $(bx_devices)"
}

# Unloading with a device present and loading with none works too.
load_without_devices() {
	rmmod bx
	rdma link delete rxe0
	modprobe bx
	[ -z "$(bx_devices)" ] || fail "devices without rxe: $(bx_devices)"
	rdma link add rxe0 type rxe netdev eth0
	wait_until 5 bx_has_dev rxe0 || fail "rxe0 not bound after re-add"
	wait_until 10 grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
}

rmmod_while_open() {
	exec 3<>/dev/bx
	if rmmod bx 2>/dev/null; then
		fail "rmmod succeeded with /dev/bx open"
	fi
	[ -e /sys/module/bx ] || fail "module gone"
	bx_has_dev rxe0 || fail "rxe0 not listed after refused rmmod"
	exec 3<&-
	rmmod bx
	modprobe bx
	bx_has_dev rxe0
}

# /sys/class/misc/bx/: the host's incarnation (new at every load), bound
# devices, connections, peers recovering and open files.
sysfs_state() {
	S=/sys/class/misc/bx
	for a in epoch devices conns recovering files; do
		[ -r $S/$a ] || fail "no $S/$a"
	done
	e1=$(cat $S/epoch)
	echo "$e1" | grep -q '^[0-9a-f]\{16\}$' || fail "epoch '$e1'"
	[ "$(cat $S/devices)" = 1 ] || fail "devices $(cat $S/devices)"
	[ "$(cat $S/recovering)" = 0 ] || fail "recovering $(cat $S/recovering)"
	n=$(cat $S/files)
	exec 3<>/dev/bx
	[ "$(cat $S/files)" = $((n + 1)) ] || fail "files $(cat $S/files), want $((n + 1))"
	exec 3<&-
	[ "$(cat $S/files)" = "$n" ] || fail "files $(cat $S/files) after close"
	(echo 1 > $S/epoch) 2>/dev/null && fail "epoch writable"
	rmmod bx
	modprobe bx
	wait_until 5 bx_has_dev rxe0 || fail "rxe0 not bound after reload"
	[ "$(cat $S/epoch)" != "$e1" ] || fail "same epoch after reload"
}

ktap_plan 6
run_test load_unload_cycles load_unload_cycles
run_test hotplug hotplug
run_test hotplug_many hotplug_many
run_test load_without_devices load_without_devices
run_test rmmod_while_open rmmod_while_open
run_test sysfs_state sysfs_state
ktap_finish
