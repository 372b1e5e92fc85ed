#!/usr/bin/env bash
# Runs mitbench N times back to back with the same arguments and says how
# well each run's figures predict the others': per row, the run-to-run
# spread of cost.ticks against the printed interval; over all rows, how often
# another run's cost lands inside this run's 95% interval (coverage), how
# many rows move by more than 3 printed half-widths, and each run's
# machine-state line; then the same coverage at one machine speed (each
# run's figure at its reference speed, another run's carried to it).
#
# usage: bench/repeat.sh N -- [mitbench run ARGS...]
#   e.g. bench/repeat.sh 5 -- --probe os --probe indirect/call --cpu 1
# Set KEEP=DIR to keep the JSON documents there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ] || [ "$2" != "--" ]; then
    echo "usage: $0 N -- [mitbench run ARGS...]" >&2
    exit 2
fi
runs=$1
shift 2
case $runs in '' | *[!0-9]*) echo "N must be a whole number" >&2; exit 2 ;; esac
[ "$runs" -ge 2 ] || { echo "N must be at least 2" >&2; exit 2; }

work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cargo build --release --quiet

for i in $(seq 1 "$runs"); do
    start=$(date +%s.%N)
    ./target/release/mitbench run --quiet "$@" --json "$work/run-$i.json" >/dev/null
    end=$(date +%s.%N)
    echo "run $i: $(python3 -c "print(f'{$end - $start:.1f}')") s" >&2
done

python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
sys.path.insert(0, "bench")
import costs
work, runs = sys.argv[1], int(sys.argv[2])
docs = [json.load(open(f"{work}/run-{i}.json")) for i in range(1, runs + 1)]
rows = {}
for k, doc in enumerate(docs):
    for r in doc["results"]:
        if r.get("cost") is None:
            continue
        rows.setdefault((r["id"], r["variant"]), {})[k] = r["cost"]

# The interval the table prints for the raw figure: the next run's (rounds
# and machine drift) where the document has it, else the rounds' own.
def printed_interval(cost):
    return costs.raw(cost)[1]

def printed_half_width(cost):
    return costs.half_width_pct(*costs.raw(cost))

def ticks(cost):
    return costs.raw(cost)[0]

covered = pairs = 0
moved, spreads, half_widths = [], [], []
print(f"{'probe':28} {'variant':24} {'cost.ticks per run':>40} {'spread':>8} {'±CI':>7} {'moves':>6}")
for (pid, variant), by_run in rows.items():
    if len(by_run) < 2:
        continue
    figures = [ticks(by_run[k]) for k in sorted(by_run)]
    med = statistics.median(figures)
    spread = (max(figures) - min(figures)) / med * 100 if med else 0.0
    spreads.append(spread)
    worst_move = 0.0
    for i, ri in by_run.items():
        ci = printed_interval(ri)
        if ci is None:
            continue
        lo, hi = ci
        hw = max(ticks(ri) - lo, hi - ticks(ri))
        half_widths.append(printed_half_width(ri))
        for j, rj in by_run.items():
            if i == j:
                continue
            pairs += 1
            covered += lo <= ticks(rj) <= hi
            if hw > 0:
                worst_move = max(worst_move, abs(ticks(rj) - ticks(ri)) / hw)
    moved.append(worst_move > 3)
    hw_med = statistics.median([printed_half_width(r) or 0 for r in by_run.values()])
    shown = " ".join(f"{c:.4g}" for c in figures)
    print(f"{pid:28} {variant:24} {shown:>40} {spread:7.2f}% {hw_med:6.2f}% {worst_move:6.1f}")

# The same at one machine speed: this run's figure at its reference speed
# and interval against another run's figure carried to this run's reference
# speed by this run's coefficient (the row's slope on the reference). A run
# without a reference or a row without a coefficient is left out.
def reference_ticks(doc):
    return ((doc.get("machine_states") or {}).get("reference") or {}).get("ticks")

at_speed_covered = at_speed_pairs = 0
at_speed_half_widths = []
for (pid, variant), by_run in rows.items():
    for i, ri in by_run.items():
        at_i, ref_i = costs.at_reference(ri), reference_ticks(docs[i])
        if at_i is None or at_i[1] is None or at_i[2] is None or not ref_i:
            continue
        value, ci, coef = at_i
        at_speed_half_widths.append(costs.half_width_pct(value, ci))
        for j, rj in by_run.items():
            at_j, ref_j = costs.at_reference(rj), reference_ticks(docs[j])
            if i == j or at_j is None or not ref_j:
                continue
            carried = at_j[0] * (ref_i / ref_j) ** coef
            at_speed_pairs += 1
            at_speed_covered += ci[0] <= carried <= ci[1]

print()
for k, doc in enumerate(docs):
    print(f"run {k + 1}: {doc['machine_states']['summary']}")
print()
if pairs:
    print(f"another run's cost inside this run's 95% interval: {covered / pairs * 100:.0f}% of {pairs} pairs")
print(f"rows moving more than 3 printed half-widths: {sum(moved)} of {len(moved)} ({sum(moved) / max(len(moved), 1) * 100:.1f}%)")
if spreads:
    print(f"run-to-run spread (max-min)/median: median row {statistics.median(spreads):.2f}%, worst row {max(spreads):.2f}%")
if half_widths:
    print(f"printed half-width: median {statistics.median(half_widths):.2f}%")
if at_speed_pairs:
    print(f"at one reference speed: another run's figure inside this run's interval in "
          f"{at_speed_covered / at_speed_pairs * 100:.0f}% of {at_speed_pairs} pairs; "
          f"half-width median {statistics.median(at_speed_half_widths):.2f}%")
PY
