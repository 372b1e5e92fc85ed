#!/usr/bin/env bash
# Checks kernel/sequences' replays of Zen 1/2's return-thunk sequences
# (retbleed's untraining and return thunk, SRSO's plain untraining and
# return thunk) and of Intel's call-depth tracking against
# bench/untrain_ref.c, the same bytes written by a C loop that shares no
# code with mitbench: one mitbench run of the probe, then K runs of the C
# loop. Per sequence: the probe's difference from
# call+ret (ticks, with the interval the next run's may land in), each C
# run's, and whether the C runs' median lies within 10% of the probe's (the
# issue's tolerance, fixed before the runs). KEEP=DIR keeps the outputs.
#
# usage: bench/compare-untrain.sh [CPU] [K]   (defaults: the highest CPU allowed, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs=${2:-3}

cc -O2 -o "$work/untrain_ref" bench/untrain_ref.c
./target/release/mitbench run --quiet --no-history --probe kernel/sequences --cpu "$cpu" \
    --json "$work/run.json" >/dev/null
for i in $(seq 1 "$runs"); do
    "$work/untrain_ref" "$cpu" > "$work/c-$i.txt"
done

python3 - "$work" <<'PY'
import glob, json, re, statistics, sys
work = sys.argv[1]
WITHIN = 0.10
doc = json.load(open(f"{work}/run.json"))
print(doc["machine_states"]["summary"])
c_runs = []
for path in sorted(glob.glob(f"{work}/c-*.txt")):
    run = {}
    for line in open(path):
        m = re.match(r"^(\S+)\s+[0-9.]+ ticks,\s+([-+0-9.]+) over call\+ret", line)
        if m:
            run[m[1]] = float(m[2])
    c_runs.append(run)
for name in ["retbleed-untrain", "retbleed-return-thunk", "srso-untrain-zen1-2",
             "srso-return-thunk-zen1-2", "call-depth-accounting", "call-depth-stuffing"]:
    row = next(r for r in doc["results"] if r["id"] == "kernel/sequences" and r["variant"] == name)
    vs = row["vs_baseline"]
    nxt = vs.get("next_run_delta_ticks") or {"value": vs["delta_ticks"], "ci95": None}
    lo, hi = nxt["ci95"] or (float("nan"),) * 2
    c = [run[name] for run in c_runs]
    mid = statistics.median(c)
    ok = abs(mid / nxt["value"] - 1) <= WITHIN if nxt["value"] else False
    print(f"{name:26s} probe {nxt['value']:+7.2f} [{lo:+.2f}, {hi:+.2f}]  C "
          + " ".join(f"{x:+7.2f}" for x in c)
          + f"  median {mid:+.2f}: {'within' if ok else 'NOT within'} {WITHIN:.0%}")
PY
