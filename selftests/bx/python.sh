#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The Python package (python/, staged as /opt/bx/python) over bx, on two
# guests. It needs the guests' python3 with numpy (run.sh -p: the host's
# /usr, read-only over 9p) and skips without it.
#
#   binding   the host tests (tests/test_binding.py) on each guest: real
#             libbx with /dev/bx there, the fake library for buffers,
#             futures and closing
#   guests    guest 0 serves a service with tests/guest_server.py
#             (recv_async, reply); guest 1 runs tests/test_guest.py:
#             pushes and pulls of 0 B to 4 MiB, 64 of each in flight by
#             futures, a torch tensor as a request, no such service, a
#             timeout, a handle closed with operations in flight; every
#             byte checked, the server's "bad" count 0
. "$(dirname "$0")/lib.sh"

PYDIR=${BX_PYTHON_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/python}
SVC=4242
ID=${BXRIG_ID:-0}
SERVER=${BXRIG_PEER0:-192.0.2.1}

if [ "${BXRIG_N:-1}" -lt 2 ]; then
	echo "1..0 # SKIP needs two rig guests"
	exit $KSFT_SKIP
fi
if ! python3 -c 'import numpy, pytest' > /dev/null 2>&1; then
	echo "1..0 # SKIP no python3 with numpy and pytest (run.sh -p)"
	exit $KSFT_SKIP
fi
if [ ! -f "$PYDIR/bx/__init__.py" ]; then
	echo "1..0 # SKIP no Python package at $PYDIR"
	exit $KSFT_SKIP
fi
export PYTHONPATH="$PYDIR:$PYDIR/tests"

b() { rig_barrier "python.$1" "$2"; }

pytest_run() {
	(cd /tmp && python3 -m pytest -q -p no:cacheprovider -o console_output_style=classic \
		-rs "$@" 2>&1) | sed 's/^/# /'
}

case_binding() {
	pytest_run "$PYDIR/tests/test_binding.py" > /tmp/pyb.out
	cat /tmp/pyb.out
	grep -q " passed" /tmp/pyb.out && ! grep -q -E " (failed|error)" /tmp/pyb.out ||
		fail "binding tests"
}

case_guests() {
	ERR=
	if [ "$ID" -eq 0 ]; then
		: > /tmp/pysrv.out
		python3 "$PYDIR/tests/guest_server.py" -s $SVC >> /tmp/pysrv.out 2>&1 &
		srv=$!
		try check wait_until 120 grep -q ready /tmp/pysrv.out
		b up 180
		b done 240
		kill -TERM $srv 2>/dev/null || true
		try check wait_until 60 pid_gone $srv
		rc=0
		wait $srv || rc=$?
		sed 's/^/# server: /' /tmp/pysrv.out
		[ $rc -eq 0 ] && grep -q "^python serve: .* bad 0 " /tmp/pysrv.out ||
			{ echo "# FAIL: server exit status $rc"; ERR=1; }
	elif [ "$ID" -eq 1 ]; then
		b up 180
		BX_PY_SERVER=$SERVER BX_PY_SERVICE=$SVC \
			pytest_run "$PYDIR/tests/test_guest.py" > /tmp/pyg.out
		cat /tmp/pyg.out
		grep -q " passed" /tmp/pyg.out &&
			! grep -q -E " (failed|error|skipped)" /tmp/pyg.out ||
			{ echo "# FAIL: client tests"; ERR=1; }
		b done 240
	else
		b up 180
		b done 240
	fi
	result
}

ktap_plan 2
run_test binding case_binding
run_test guests case_guests
ktap_finish
