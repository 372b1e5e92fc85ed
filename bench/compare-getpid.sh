#!/usr/bin/env bash
# Checks mitbench's os/getpid against an independent C loop on the same CPU
# within the same minute: C, mitbench, C again (so drift shows), then the
# difference between mitbench's median and the mean of the two C medians.
#
# usage: bench/compare-getpid.sh [CPU]     (default: the highest CPU allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=${1:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cc -O2 -o "$work/getpid_ref" bench/getpid_ref.c
cargo build --release --quiet

c_median() { "$work/getpid_ref" "$cpu" | tee /dev/stderr | sed -E 's/.*median ([0-9.]+).*/\1/'; }
before=$(c_median)
./target/release/mitbench run --quiet --probe os/getpid --cpu "$cpu" --json "$work/run.json" >/dev/null
after=$(c_median)

python3 - "$work/run.json" "$before" "$after" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = next(r for r in doc["results"] if r["id"] == "os/getpid" and r["variant"] == "syscall")
c = (float(sys.argv[2]) + float(sys.argv[3])) / 2
m = r["median_ticks"]
lo, hi = r["ci95_ticks"]
print(f"mitbench os/getpid syscall: median {m:.2f} ticks, 95% CI [{lo:.2f}, {hi:.2f}] (±{r['ci_half_width_pct']:.2f}%), n={r['n']}")
print(f"C reference (mean of runs before and after): {c:.2f} ticks")
print(f"difference: {100 * (m - c) / c:+.2f}%")
PY
