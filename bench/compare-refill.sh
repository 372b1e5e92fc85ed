#!/usr/bin/env bash
# Checks what os/syscall-return's refill variants win back and leave of the
# return toll against bench/return_after_ref.c, a C loop sharing no code
# with mitbench whose shapes alternate pass by pass: one mitbench run, then
# K runs of the C loop with direct calls (as the probe's) and K with calls
# through a pointer (as ../shared/tools/return-refill.c's), in turns.
#
# The toll sits at one of two levels on a busy host (getpid about 100 or
# 170 ticks on the Zen 3 guest), and a C run lands on one of them as a
# whole, which its canary does not see. So each C run is printed on its
# own line (its 2nd percentiles, the C tool's reading), and is at the
# probe's level where its toll lies within 25% of the probe's (the
# issue's own tolerance, fixed before the runs); over those runs the last
# line counts how many wins lie within 25% of the probe's and how many
# leave within 5 ticks of what the probe's leaves. Figures in TSC ticks,
# the probe's with its interval and the pairs of rounds it stands on
# (`quiet`, or `all` where too few were quiet). KEEP=DIR keeps the run's JSON and the C
# loop's outputs there (bench/lib.sh).
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
LEVEL, WIN, LEFT = 0.25, 0.25, 5.0
doc = json.load(open(f"{work}/run.json"))
ns_per_tick = next(r for r in doc["results"] if r.get("cost"))["cost"]["ns_per_tick"]
summary = {s["crossing"]: s for s in doc["summary"].get("syscall_return", [])}

def c_run(path):
    """{syscall: {difference: its 2nd percentiles' reading}}"""
    out, name = {}, None
    for line in open(path):
        head = re.match(r"^(\S+), 2nd percentile:", line)
        if head:
            name = "close-bad-fd" if head[1] == "close(-1)" else head[1]
            out[name] = {}
            continue
        diff = re.match(r"^\s+(.+?)\s+([-+0-9.]+) of the 2nd percentiles", line)
        if diff and name:
            out[name][diff[1]] = float(diff[2])
    return out

def ticks(figure, pairs):
    """(value, lo, hi, what the pairs were) in ticks."""
    lo, hi = (x / ns_per_tick for x in figure.get("ci95") or [float("nan")] * 2)
    return figure["value"] / ns_per_tick, lo, hi, (pairs or {}).get("basis", "rows")

runs = [(path.split("c-")[-1][:-4], c_run(path)) for path in sorted(glob.glob(f"{work}/c-*.txt"))]
print(doc["machine_states"]["summary"])
for syscall, s in summary.items():
    if not s.get("extra_ns"):
        continue
    probe = {"toll": ticks(s["extra_ns"], s.get("from_pairs"))}
    for r in s.get("refills", []):
        probe[f"refill-{r['entries']} won"] = ticks(r["won_back_ns"], r.get("from_pairs"))
        probe[f"refill-{r['entries']} left"] = ticks(r["left_ns"], r.get("from_pairs"))
    names = list(probe)
    print(f"\n{syscall}: " + "  ".join(names))
    print("  probe        " + "  ".join(f"{v:.1f} [{lo:.1f}, {hi:.1f}] {basis}"
                                        for v, lo, hi, basis in probe.values()))
    level = [run for _, run in runs if abs(run[syscall]["toll"] / probe["toll"][0] - 1) <= LEVEL]
    for label, run in runs:
        mark = "at the probe's level" if any(run is r for r in level) else "another level"
        print(f"  C {label:11s}" + "  ".join(f"{run[syscall][n]:.1f}" for n in names) + f"   ({mark})")
    for entries in (2, 4, 16):
        won, left = f"refill-{entries} won", f"refill-{entries} left"
        if won not in probe:
            continue
        wins = sum(abs(r[syscall][won] / probe[won][0] - 1) <= WIN for r in level)
        lefts = sum(abs(r[syscall][left] - probe[left][0]) <= LEFT for r in level)
        print(f"  {entries} entries, over the {len(level)} of {len(runs)} C runs at the probe's level: "
              f"win within {WIN:.0%} in {wins}, left within {LEFT:.0f} ticks in {lefts}")
PY
