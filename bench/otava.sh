#!/usr/bin/env bash
# Compares mitbench's change points with Apache Otava's on the same
# synthetic series (issue 75's cases: stationary, steps of 1.5, 2 and 3
# spreads, a drift, one outlier run), written as CSV by
# examples/change_series.rs and read by Otava from PyPI (apache-otava) in a
# virtual environment of its own. Not a CI step: it downloads from PyPI.
#
# usage: bench/otava.sh [TRIALS] [RUNS]     (100 series a case of 40 runs)
# OTAVA_VENV=DIR reuses a virtual environment with apache-otava installed.
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-100}"
runs="${2:-40}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="${OTAVA_VENV:-$work/venv}"
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c 'import otava' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet apache-otava
fi
echo "apache-otava $("$venv/bin/pip" show apache-otava | awk '/^Version/ { print $2 }')"
cargo run --release --quiet --example change_series -- "$work/series" "$trials" "$runs"
"$venv/bin/python3" bench/otava_compare.py "$work/series"
