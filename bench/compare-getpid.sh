#!/usr/bin/env bash
# Checks mitbench's os/getpid (syscall and libc variants) against an
# independent C loop on the same CPU within the same minute: C, mitbench, C
# again (so drift shows), then mitbench's cost.ticks against the C loop's
# quiet figure (mean of the two C runs), and the libc/syscall ratios.
#
# usage: bench/compare-getpid.sh [CPU]     (default: the highest CPU allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

cc -O2 -o "$work/getpid_ref" bench/getpid_ref.c

"$work/getpid_ref" "$cpu" | tee "$work/before.txt" >&2
./target/release/mitbench run --quiet --probe os/getpid --cpu "$cpu" --json "$work/run.json" >/dev/null
"$work/getpid_ref" "$cpu" | tee "$work/after.txt" >&2

python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
def quiet(path):
    text = open(path).read()
    return {m[0]: float(m[1]) for m in re.findall(r"^(\w+): quiet ([0-9.]+)", text, re.M)}
before, after = quiet(f"{work}/before.txt"), quiet(f"{work}/after.txt")
doc = json.load(open(f"{work}/run.json"))
costs = {}
for variant in ("syscall", "libc"):
    r = next(r for r in doc["results"] if r["id"] == "os/getpid" and r["variant"] == variant)
    c = (before[variant] + after[variant]) / 2
    cost = r["cost"]
    m = cost["ticks"]
    lo, hi = cost["ci95_ticks"]
    costs[variant] = m
    print(f"mitbench os/getpid {variant}: {m:.2f} ticks, 95% CI [{lo:.2f}, {hi:.2f}] "
          f"(±{cost['ci_half_width_pct']:.2f}%), {cost['rounds_used']}/{r['rounds']['total']} rounds")
    print(f"  C quiet figure (mean of runs before and after): {c:.2f} ticks; difference {100 * (m - c) / c:+.2f}%")
print(f"libc/syscall: mitbench {costs['libc'] / costs['syscall']:.4f}, "
      f"C {(before['libc'] + after['libc']) / (before['syscall'] + after['syscall']):.4f}")
print(doc["machine_states"]["summary"])
PY
