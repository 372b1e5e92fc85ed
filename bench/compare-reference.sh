#!/usr/bin/env bash
# Checks mitbench's reference (machine_states.reference.ticks: the machine's
# own speed, read by work no mitigation touches) against the same chain of
# multiply-adds written in C, on the same CPU in the same minute: C,
# mitbench, C again (so drift shows), then mitbench's figure over the C
# loop's median readings (mean of the two C runs).
#
# usage: bench/compare-reference.sh [CPU]  (default: the highest CPU allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

cc -O2 -o "$work/reference_ref" bench/reference_ref.c

"$work/reference_ref" "$cpu" | tee "$work/before.txt" >&2
./target/release/mitbench run --quick --quiet --no-history --probe os/getpid --cpu "$cpu" \
    --json "$work/run.json" >/dev/null
"$work/reference_ref" "$cpu" | tee "$work/after.txt" >&2

python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
def median(path):
    return float(re.search(r"median ([0-9.]+)", open(path).read())[1])
c = (median(f"{work}/before.txt") + median(f"{work}/after.txt")) / 2
doc = json.load(open(f"{work}/run.json"))
reference = (doc["machine_states"].get("reference") or {}).get("ticks")
if reference is None:
    sys.exit("the run read no reference")
print(f"mitbench reference {reference:.4f} ticks a step, C loop {c:.4f}: ratio {reference / c:.4f}")
PY
