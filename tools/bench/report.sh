#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The report of a `make bench` run: tables in DIR/report.md, data in
# DIR/data/, plots in DIR/*.png (gnuplot); report.py does it, see there
# and tools/bench/README.md.
#
#   tools/bench/report.sh DIR [--update-doc FILE]
#
# Exit status 1 if the run is missing, a guest reported a failure or a
# cell is missing; 2 if --update-doc could not put the summary into FILE.
exec python3 "$(dirname "$0")/report.py" "$@"
