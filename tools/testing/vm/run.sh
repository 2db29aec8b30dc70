#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot N bx guests under qemu TCG on one virtual L2 segment and run a
# command in each.
#
#   run.sh [-n N] [-k FLAVOR] [-t SECS] [-m MB] [-c CPUS] [-o DIR]
#          [-f FABRIC] [-g I:SCRIPT]... [-e VAR=VAL]... [-p] [--] CMD
#
#   -n N        number of guests, 1 to 4 (default 2)
#   -k FLAVOR   kernel: stock (Debian's) or debug (default stock); the
#               kernel and base initramfs come from $BX_BUILD/vm/FLAVOR/env
#   -t SECS     per-guest timeout (default 300)
#   -m MB       memory per guest (default 512)
#   -c CPUS     vCPUs per guest (default 2 for up to two guests, else 1)
#   -o DIR      keep logs here (default: a new dir under $BX_BUILD/vm/runs)
#   -f FABRIC   three or four guests' switch: lossy (vde_switch, the
#               default) or lossless (bxswitch, pauses like PFC)
#   -g I:FILE   guest I runs this script instead of CMD
#   -e VAR=VAL  exported to the command in every guest
#   -p          share the host's /usr read-only (virtio 9p, mounted at
#               /host/usr): the guests' /bin/python3 runs the host's
#               python3 with its packages (numpy, torch, pytest). Off by
#               default: the tests that need no Python boot without it.
#
# Guest i gets address 192.0.2.(i+1)/24 and MAC 52:54:00:b0:00:0(i+1) on
# eth0, an rxe device rxe0, and bx loaded. Two guests are joined by a qemu
# stream netdev on a unix socket; three or four by a switch on a unix
# socket: vde_switch, which drops a frame when its destination's socket
# is full, or with -f lossless ./bxswitch, which stops reading the
# sender instead (its counters in DIR/switch.log; DIR/switch.pid takes
# SIGUSR1 for a report). Nothing touches the host network.
#
# The command's output comes back on the guest's second serial port
# (GUEST/result.log, printed here prefixed with "gI| "); the console goes
# to GUEST/console.log. The run fails if a guest does not report, exits
# non-zero, times out, panics, or if any kernel splat (see ./splats)
# appears on a console. Exit status: 0 all passed; 3 failed, with a guest
# whose first splat ran rxe's code alone and no guest whose first splat
# had a bx frame (the known rxe instability, ../shared/PLATFORM.md:
# callers run the set again); 4 failed, with a guest whose link check
# failed before RDMA or bx were started (/init: "setup failed: rig
# network"; callers run the set again) and no bx splat; 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
BX_BUILD=${BX_BUILD:-$top/build}

n=2 flavor=stock tmo=300 mem=512 cpus= outdir= envs=() gcmds=() fabric=lossy
hostusr=0
while getopts "n:k:t:m:c:o:f:g:e:p" opt; do
	case $opt in
	n) n=$OPTARG ;;
	k) flavor=$OPTARG ;;
	t) tmo=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	o) outdir=$OPTARG ;;
	f) fabric=$OPTARG ;;
	g) gcmds+=("$OPTARG") ;;
	e) envs+=("$OPTARG") ;;
	p) hostusr=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
cmd="$*"
[[ $n =~ ^[1-4]$ ]] || { echo "run.sh: -n must be 1..4" >&2; exit 2; }
case $fabric in
lossy|lossless) ;;
*) echo "run.sh: -f must be lossy or lossless" >&2; exit 2 ;;
esac
[ -n "$cpus" ] || { [ "$n" -le 2 ] && cpus=2 || cpus=1; }

envf=$BX_BUILD/vm/$flavor/env
[ -f "$envf" ] || { echo "run.sh: $envf missing (make vm)" >&2; exit 2; }
# shellcheck source=/dev/null
. "$envf"	# KERNEL, INITRD, KVER

if [ -z "$outdir" ]; then
	mkdir -p "$BX_BUILD/vm/runs"
	outdir=$(mktemp -d "$BX_BUILD/vm/runs/$(date +%H%M%S)-XXXX")
fi
mkdir -p "$outdir"
sock=$(mktemp -d /tmp/bxrig-sock.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$sock/switch.pid" ] && kill "$(cat "$sock/switch.pid")" 2>/dev/null
	if [ -n "${bxswitch:-}" ]; then
		# SIGTERM: its last report, then it exits.
		{ kill "$bxswitch" && wait "$bxswitch"; } 2>/dev/null || true
		rm -f "$outdir/switch.pid"
	fi
	rm -rf "$sock"
}
trap cleanup EXIT

mac() { printf '52:54:00:b0:00:%02x' $(($1 + 1)); }

# Per-guest initramfs: the base image plus a small cpio with /rig/{cmd,env}.
mkimage() {
	local i=$1 d=$outdir/g$i rig
	rig=$(mktemp -d)
	mkdir -p "$rig/rig"
	local script=
	for g in "${gcmds[@]}"; do
		[ "${g%%:*}" = "$i" ] && script=${g#*:}
	done
	if [ -n "$script" ]; then
		cp "$script" "$rig/rig/cmd"
	else
		printf '%s\n' "$cmd" > "$rig/rig/cmd"
	fi
	{
		echo "BXRIG_ID=$i"
		echo "BXRIG_N=$n"
		echo "BXRIG_FLAVOR=$flavor"
		echo "BXRIG_COORD=192.0.2.1"
		echo "BXRIG_HOSTUSR=$hostusr"
		for e in "${envs[@]}"; do
			printf 'export %q\n' "$e"
		done
	} > "$rig/rig/env"
	cp "$INITRD" "$d/initrd.img"
	# A cpio appended to a gzipped one must start 4-byte aligned.
	local sz
	sz=$(stat -c %s "$d/initrd.img")
	[ $((sz % 4)) -eq 0 ] ||
		head -c $((4 - sz % 4)) /dev/zero >> "$d/initrd.img"
	(cd "$rig" && find rig | cpio -o -H newc --quiet) >> "$d/initrd.img"
	rm -rf "$rig"
}

netdev() {
	local i=$1
	if [ "$n" -eq 1 ]; then
		# A lone guest's frames come back to itself: a peerless hub
		# port never completes TX and trips the netdev watchdog.
		echo "-netdev dgram,id=n0,local.type=unix,local.path=$sock/self,remote.type=unix,remote.path=$sock/self"
	elif [ "$n" -eq 2 ]; then
		local srv=off
		[ "$i" -eq 0 ] && srv=on
		echo "-netdev stream,id=n0,server=$srv,addr.type=unix,addr.path=$sock/link"
	elif [ "$fabric" = lossless ]; then
		echo "-netdev stream,id=n0,server=off,addr.type=unix,addr.path=$sock/bxswitch"
	else
		echo "-netdev vde,id=n0,sock=$sock/switch"
	fi
}

append="console=ttyS0 panic=-1 panic_on_warn=1 oops=panic"
append+=" loglevel=7 printk.devkmsg=on rdinit=/init"
# Emulated CPUs stall when the host is busy: report RCU CPU stalls only
# past two minutes (a real one outlasts that); RCU misuse stays fatal.
append+=" rcupdate.rcu_cpu_stall_timeout=120"
# On a loaded host the emulated timer misses check_timer()'s window and
# boot panics ("IO-APIC + timer doesn't work!"); the check is pointless
# under qemu.
append+=" no_timer_check"
# The debug kernel runs ACPI's PCI IRQ routing under KASAN for up to a
# minute per device; legacy IRQ routing boots in seconds.
[ "$flavor" = debug ] && append+=" acpi=noirq"
append+=" ${BXRIG_APPEND:-}"

# The guest CPU has no CMPXCHG16B (-cx16). Debian's QEMU 7.2 runs it
# through a helper that reads the lazily tracked condition codes without
# syncing them first; the flags it leaves can hold a register's value
# (a kernel pointer), which the next interrupt saves as RFLAGS and IRET
# loads: a #DB from TF, or a double fault. Seven of the eight such
# crashes whose logs were kept were at the top of SLUB's lockless
# allocation loop, with RFLAGS = RDI's low 32 bits | 0x2 or 0x202
# (Documentation/testing.rst, "The guest CPU"). Without the feature SLUB
# takes its locked path instead.
CPU=${BXRIG_CPU:-qemu64,-cx16}

# -p: the host's /usr, read-only, for the guests' /bin/python3 (/init).
virtfs=()
[ "$hostusr" -eq 1 ] &&
	virtfs=(-virtfs local,path=/usr,mount_tag=hostusr,security_model=none,readonly=on)

start_guest() {
	local i=$1 d=$outdir/g$i
	# shellcheck disable=SC2046
	timeout -k 5 "$tmo" qemu-system-x86_64 -accel tcg,thread=single -m "$mem" \
		-cpu "$CPU" -smp "$cpus" -nodefaults -display none -no-reboot \
		-kernel "$KERNEL" -initrd "$d/initrd.img" -append "$append" \
		-serial "file:$d/console.log" -serial "file:$d/result.log" \
		-device "virtio-net-pci,netdev=n0,mac=$(mac "$i")" \
		$(netdev "$i") -device virtio-rng-pci "${virtfs[@]}" \
		> "$d/qemu.log" 2>&1 &
	pids+=($!)
}

wait_for_socket() {
	local path=$1 k=0
	until [ -S "$path" ]; do
		k=$((k + 1))
		[ $k -gt 200 ] && { echo "run.sh: $path never appeared" >&2; exit 1; }
		sleep 0.05
	done
}

for ((i = 0; i < n; i++)); do
	mkdir -p "$outdir/g$i"
	mkimage "$i"
done

if [ "$n" -ge 3 ] && [ "$fabric" = lossless ]; then
	[ -x "$BX_BUILD/bin/bxswitch" ] ||
		{ echo "run.sh: $BX_BUILD/bin/bxswitch missing (make tools)" >&2; exit 2; }
	"$BX_BUILD/bin/bxswitch" "$sock/bxswitch" >> "$outdir/switch.log" 2>&1 &
	bxswitch=$!
	echo "$bxswitch" > "$outdir/switch.pid"
	wait_for_socket "$sock/bxswitch"
elif [ "$n" -ge 3 ]; then
	vde_switch --sock "$sock/switch" --daemon --pidfile "$sock/switch.pid" \
		> "$outdir/switch.log" 2>&1
	wait_for_socket "$sock/switch/ctl"
fi
start=$(date +%s)
for ((i = 0; i < n; i++)); do
	start_guest "$i"
	# The listening end of a stream link must exist before the other.
	[ "$n" -eq 2 ] && [ "$i" -eq 0 ] && wait_for_socket "$sock/link"
done

# A guest that ends without its report (a panic: the guests reboot on
# one, and qemu exits) leaves its peers waiting for it at their next
# barrier until their timeout, up to 40 minutes in the debug lane. Give
# them BXRIG_PEER_GRACE seconds (default 60) to finish and report what
# they saw, then stop them.
grace=${BXRIG_PEER_GRACE:-60}
reported() { grep -a -q '^bxrig: exit [0-9]' "$outdir/g$1/result.log" 2>/dev/null; }
rcs=() stopped=() killer=
for ((i = 0; i < n; i++)); do rcs+=(""); stopped+=(""); done
for ((left = n; left > 0; left--)); do
	live=()
	for ((i = 0; i < n; i++)); do
		[ -n "${rcs[$i]}" ] || live+=("${pids[$i]}")
	done
	rc=0 pid=
	wait -n -p pid "${live[@]}" || rc=$?
	for ((i = 0; i < n; i++)); do
		[ "${pids[$i]}" = "$pid" ] && break
	done
	rcs[$i]=$rc
	if [ -z "$killer" ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] &&
	   ! reported "$i" && [ "$left" -gt 1 ]; then
		live=()
		for ((j = 0; j < n; j++)); do
			[ -n "${rcs[$j]}" ] && continue
			live+=("${pids[$j]}")
			stopped[$j]=$i
		done
		echo "run.sh: guest $i ended without a report; its peers get ${grace}s"
		# (Its own output elsewhere: a sleep left behind by the kill
		# below must not hold our caller's pipe open.)
		{ sleep "$grace"; kill "${live[@]}"; } > /dev/null 2>&1 &
		killer=$!
	fi
done
if [ -n "$killer" ]; then
	kill "$killer" 2>/dev/null || true
	wait "$killer" 2>/dev/null || true
fi
pids=()

fail=0 rxecrash=0 bxsplat=0 rignet=0
for ((i = 0; i < n; i++)); do
	d=$outdir/g$i
	touch "$d/result.log"
	sed "s/^/g$i| /" "$d/result.log" | tr -d '\r'
	grc=$(tr -d '\r' < "$d/result.log" | sed -n 's/^bxrig: exit \([0-9]*\)$/\1/p' | tail -1)
	why=
	if [ "${rcs[$i]}" -eq 124 ] || [ "${rcs[$i]}" -eq 137 ]; then
		why="timed out after ${tmo}s"
	elif [ -n "${stopped[$i]}" ] && [ -z "$grc" ]; then
		why="stopped ${grace}s after guest ${stopped[$i]} ended without a report"
	elif [ -z "$grc" ]; then
		why="did not report (panic or crash?)"
	elif [ "$grc" -ne 0 ]; then
		why="command exited $grc"
	fi
	if grep -a -q 'bxrig: setup failed: rig network' "$d/result.log"; then
		why="$why; its link check failed before RDMA started"
		rignet=1
	fi
	if grep -a -n -E -f "$here/splats" "$d/console.log" > "$d/splats.log"; then
		# Name the test that was running: the last marker before it.
		first=$(head -1 "$d/splats.log" | cut -d: -f1)
		# (No marker: a splat before the first test; grep fails.)
		t=$(head -n "$first" "$d/console.log" |
			{ grep -a -o 'bxtest-begin:[^:]*' || true; } |
			tail -1 | cut -d: -f2)
		why="${why:+$why; }kernel splat on console${t:+ during $t}"
		# Whose code was running (./splat-owner).
		case $("$here/splat-owner" "$d/console.log" || true) in
		bx)	why="$why (bx in the call trace)"; bxsplat=1 ;;
		rxe)	why="$why (only rxe frames in the call trace: rxe bug)"
			rxecrash=1 ;;
		esac
		sed 's/^/  /' "$d/splats.log" | head -5 || true
	fi
	if [ -n "$why" ]; then
		fail=1
		echo "run.sh: guest $i FAILED: $why (logs in $d)"
		echo "--- guest $i console (last 40 lines) ---"
		tail -n 40 "$d/console.log" | tr -d '\r'
		echo "---"
	else
		echo "run.sh: guest $i ok"
		rm -f "$d/initrd.img"
	fi
done
echo "run.sh: $n guest(s), $(($(date +%s) - start))s, logs in $outdir"
if [ "$fail" -eq 1 ] && [ "$rxecrash" -eq 1 ] && [ "$bxsplat" -eq 0 ]; then
	echo "run.sh: a guest crashed in rxe alone (known, PLATFORM.md)"
	exit 3
fi
if [ "$fail" -eq 1 ] && [ "$rignet" -eq 1 ] && [ "$bxsplat" -eq 0 ]; then
	echo "run.sh: the rig's network failed before RDMA started (/init)"
	exit 4
fi
exit $fail
