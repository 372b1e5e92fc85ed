#!/usr/bin/env bash
# Checks what os/syscall-return's refill variants win back and leave of the
# return toll against bench/return_after_ref.c, a C loop sharing no code
# with mitbench whose shapes alternate pass by pass: one mitbench run, then
# K runs of the C loop with direct calls (as the probe's) and K with calls
# through a pointer (as ../shared/tools/return-refill.c's), in turns.
#
# The C loop reads each difference three ways (of its 2nd percentiles, the
# median within passes, that median over the passes its canary classes
# quiet at the mitbench run's quiet level); all three are printed beside
# the probe's figure, in TSC ticks, with the C runs' range.
#
# usage: bench/compare-refill.sh [CPU] [K]   (defaults: the highest CPU allowed, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs=${2:-5}

cc -O2 -mno-red-zone -o "$work/return_after_ref" bench/return_after_ref.c
./target/release/mitbench run --quiet --no-history --probe os/syscall-return --cpu "$cpu" \
    --json "$work/run.json" >/dev/null
level=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["machine_states"]["quiet_canary"])' "$work/run.json")
for i in $(seq 1 "$runs"); do
    for calls in direct indirect; do
        "$work/return_after_ref" "$cpu" "$calls" "$level" > "$work/c-$calls-$i.txt"
    done
done

python3 - "$work" <<'PY'
import glob, json, re, sys
work = sys.argv[1]
doc = json.load(open(f"{work}/run.json"))
ns_per_tick = next(r for r in doc["results"] if r.get("cost"))["cost"]["ns_per_tick"]
summary = {s["crossing"]: s for s in doc["summary"].get("syscall_return", [])}
READINGS = ("of the 2nd percentiles", "median within passes", "quiet passes")

def c_run(path):
    """{syscall: {difference: (p2, within, quiet or None), "quiet": passes}}"""
    out, name = {}, None
    for line in open(path):
        head = re.match(r"^(\S+), 2nd percentile:", line)
        if head:
            name = "close-bad-fd" if head[1] == "close(-1)" else head[1]
            out[name] = {}
            continue
        diff = re.match(r"^\s+(.+?)\s+([-+0-9.]+) of the 2nd percentiles,\s+([-+0-9.]+) median within "
                        r"passes,\s+(?:([-+0-9.]+) in the (\d+) quiet|no quiet pass)", line)
        if diff and name:
            quiet = float(diff[4]) if diff[4] else None
            out[name][diff[1]] = (float(diff[2]), float(diff[3]), quiet)
            out[name]["quiet"] = int(diff[5] or 0)
    return out

def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "none"
    return f"{min(values):.1f}" if len(values) == 1 else f"{min(values):.1f} to {max(values):.1f}"

print(doc["machine_states"]["summary"])
for calls in ("direct", "indirect"):
    runs = [c_run(p) for p in sorted(glob.glob(f"{work}/c-{calls}-*.txt"))]
    print(f"\nC loop, {calls} calls, {len(runs)} runs at the quiet level "
          f"{doc['machine_states']['quiet_canary']:.1f} ticks a getpid")
    for syscall, s in summary.items():
        if not s.get("extra_ns"):
            continue
        quiet = ", ".join(str(run[syscall]["quiet"]) for run in runs)
        print(f"{syscall} (quiet passes of 300: {quiet})")
        figures = [("toll", s["extra_ns"])]
        for r in s.get("refills", []):
            figures += [(f"refill-{r['entries']} won", r["won_back_ns"]),
                        (f"refill-{r['entries']} left", r["left_ns"])]
        for what, figure in figures:
            if not figure:
                continue
            probe = figure["value"] / ns_per_tick
            c = "; ".join(f"{reading} {spread([run[syscall][what][k] for run in runs])}"
                          for k, reading in enumerate(READINGS))
            print(f"  {what:15s} probe {probe:7.1f}   C: {c}")
PY
