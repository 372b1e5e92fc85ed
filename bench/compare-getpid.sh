#!/usr/bin/env bash
# Checks mitbench's os/getpid (syscall and libc variants) against an
# independent C loop on the same CPU within the same minute: C, mitbench, C
# again (so drift shows), then mitbench's figures against the C loop's:
# - the raw headline (cost.ticks) against the C loop's quiet figure (its 2nd
#   percentile, mean of the two C runs) and its median (the same statistic
#   as mitbench's, which a machine whose speed wanders within the C loop's
#   2 s keeps apart from the 2nd percentile);
# - the figure at the run's reference speed (cost.speed_normalized_ticks)
#   against the C loop read at that same reference speed: each C sample's
#   log regressed on the log of the reference read beside it, the median
#   sample carried to mitbench's reference. On a guest whose whole CPU
#   speed wanders this is the like-for-like check; the quiet figure picks
#   the machine's fastest moments.
# and the libc/syscall ratios.
#
# usage: bench/compare-getpid.sh [CPU]     (default: the highest CPU allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

cc -O2 -o "$work/getpid_ref" bench/getpid_ref.c

"$work/getpid_ref" "$cpu" "$work/before.samples" | tee "$work/before.txt" >&2
./target/release/mitbench run --quiet --no-history --probe os/getpid --cpu "$cpu" --json "$work/run.json" >/dev/null
"$work/getpid_ref" "$cpu" "$work/after.samples" | tee "$work/after.txt" >&2

python3 - "$work" <<'PY'
import json, math, re, statistics, sys
work = sys.argv[1]
def quiet(path):
    text = open(path).read()
    return {m[0]: float(m[1]) for m in re.findall(r"^(\w+): quiet ([0-9.]+)", text, re.M)}
def median(path):
    text = open(path).read()
    return {m[0]: float(m[1]) for m in re.findall(r"^(\w+): quiet [0-9.]+ median ([0-9.]+)", text, re.M)}
def samples():
    rows = []
    for name in ("before", "after"):
        rows += [tuple(map(float, line.split())) for line in open(f"{work}/{name}.samples")]
    return rows
def at_reference(rows, column, reference):
    """The C loop's median sample carried to `reference` ticks a step, on
    the slope of log ticks per call against log reference (least squares)."""
    xs = [math.log(r[0]) for r in rows]
    ys = [math.log(r[column]) for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    carried = [y + slope * (math.log(reference) - x) for x, y in zip(xs, ys)]
    return math.exp(statistics.median(carried)), slope
before, after = quiet(f"{work}/before.txt"), quiet(f"{work}/after.txt")
medians = [median(f"{work}/{name}.txt") for name in ("before", "after")]
doc = json.load(open(f"{work}/run.json"))
reference = (doc["machine_states"].get("reference") or {}).get("ticks")
rows = samples()
sys.path.insert(0, "bench")
import costs as cost_fields
costs = {}
for column, variant in ((1, "syscall"), (2, "libc")):
    r = next(r for r in doc["results"] if r["id"] == "os/getpid" and r["variant"] == variant)
    c = (before[variant] + after[variant]) / 2
    cost = r["cost"]
    # The interval printed for the next run where the run has one (a run
    # of one fork or one round may have none).
    m, interval = cost_fields.raw(cost)
    costs[variant] = m
    half = cost_fields.half_width_pct(m, interval)
    shown = (f"95% CI [{interval[0]:.2f}, {interval[1]:.2f}] (±{half:.2f}%)"
             if interval and half is not None else "no interval")
    print(f"mitbench os/getpid {variant}: {m:.2f} ticks, {shown}, "
          f"{cost['rounds_used']}/{r['rounds']['total']} rounds")
    print(f"  C quiet figure (mean of runs before and after): {c:.2f} ticks; difference {100 * (m - c) / c:+.2f}%")
    cm = statistics.fmean(run[variant] for run in medians)
    print(f"  C median (mean of runs before and after): {cm:.2f} ticks; difference {100 * (m - cm) / cm:+.2f}%")
    normalized = (cost_fields.at_reference(cost) or (None,))[0]
    if reference and normalized:
        at, slope = at_reference(rows, column, reference)
        print(f"  at the run's reference speed ({reference:.4f} ticks a step): mitbench {normalized:.2f}, "
              f"C loop {at:.2f} (slope {slope:.2f}); difference {100 * (normalized - at) / at:+.2f}%")
print(f"libc/syscall: mitbench {costs['libc'] / costs['syscall']:.4f}, "
      f"C {(before['libc'] + after['libc']) / (before['syscall'] + after['syscall']):.4f}")
print(doc["machine_states"]["summary"])
PY
