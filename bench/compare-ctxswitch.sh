#!/usr/bin/env bash
# Checks mitbench's os/ctxswitch pipe/same-cpu against `perf bench sched pipe
# -T` (two threads passing a byte back and forth over two pipes) on the same
# CPU within the same minute: three perf runs, mitbench, two perf runs, then
# mitbench's cost against the fastest perf run. One perf op and one mitbench
# item are both a round trip: two wake-ups, two context switches.
#
# usage: bench/compare-ctxswitch.sh [CPU]     (default: the highest CPU allowed)
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=${1:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}

if ! perf bench sched pipe -l 1000 >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -q >/dev/null && apt-get install -y -q linux-perf >/dev/null
    fi
    if ! perf bench sched pipe -l 1000 >/dev/null 2>&1; then
        echo "unsupported: perf bench is not available (install linux-perf as root)" >&2
        exit 1
    fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet

perf_usecs() {
    taskset -c "$cpu" perf bench sched pipe -T -l 200000 | sed -nE 's/^ *([0-9.]+) usecs\/op.*/\1/p'
}
results=()
for _ in 1 2 3; do results+=("$(perf_usecs)"); done
./target/release/mitbench run --quiet --no-history --probe os/ctxswitch --cpu "$cpu" --json "$work/run.json" >/dev/null
for _ in 1 2; do results+=("$(perf_usecs)"); done

python3 - "$work/run.json" "${results[@]}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
perf_ns = [float(u) * 1000 for u in sys.argv[2:]]
r = next(r for r in doc["results"] if r["id"] == "os/ctxswitch" and r["variant"] == "pipe/same-cpu")
if r.get("cost") is None:
    sys.exit(f"mitbench did not measure pipe/same-cpu: {r.get('unsupported')}")
sys.path.insert(0, "bench")
import costs
c = r["cost"]
ticks, interval = costs.rounds(c)
ns = costs.ns(c)
lo, hi = (t * ns / ticks for t in interval)
fastest = min(perf_ns)
print("perf bench sched pipe -T, ns per round trip:", ", ".join(f"{p:,.0f}" for p in perf_ns))
print(f"mitbench os/ctxswitch pipe/same-cpu: {ns:,.0f} ns, 95% CI [{lo:,.0f}, {hi:,.0f}], "
      f"{c['rounds_used']}/{r['rounds']['total']} rounds ({c['estimator']})")
counting = r["counters"].get("counting_round_ticks")
if counting is not None:
    print(f"  (its counting round, perf counters attached: {counting * 1000 / doc['inventory']['tsc_mhz']:,.0f} ns)")
print(f"difference from the fastest perf run: {100 * (ns - fastest) / fastest:+.1f}%")
print(doc["machine_states"]["summary"])
PY
