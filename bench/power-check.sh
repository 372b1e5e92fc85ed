#!/usr/bin/env bash
# The live check of `detectable` with fresh noise: `compare A B` prints each
# row's detectable change; run D is made dearer row by row by that change
# (its figures and rounds scaled, as if the row had moved so much) and
# compared against C, a run whose noise the printed figure never saw. The
# share of rows marked slower should be about 80% one row at a time (each
# row moved alone: a comparison each) and more with every row moved at
# once (the false discovery control's step-up cut is laxer then).
#
# usage: bench/power-check.sh A.json B.json C.json D.json [mitbench compare ARGS...]
#   e.g. bench/power-check.sh run-1.json run-2.json run-3.json run-4.json --history h.sqlite
# The four documents come from `mitbench run --json`, back to back, one
# selection; A/B and C/D neighbours.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 4 ]; then
    echo "usage: $0 A.json B.json C.json D.json [mitbench compare ARGS...]" >&2
    exit 2
fi
a=$1 b=$2 c=$3 d=$4
shift 4
for f in "$a" "$b" "$c" "$d"; do
    [ -r "$f" ] || { echo "cannot read $f" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
mitbench=$root/target/release/mitbench

"$mitbench" compare "$@" --json "$a" "$b" >"$work/printed.json"

# Scales run D's rows by their printed detectable change: all of them, or
# the one row named.
move() { # OUT [ROW]
    python3 - "$root/bench" "$d" "$work/printed.json" "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv.pop(1))
import costs
run, printed, out = sys.argv[1:4]
only = sys.argv[4] if len(sys.argv) > 4 else None
doc = json.load(open(run))
change = {(r["id"], r["variant"]): r.get("smallest_detectable_pct")
          for r in json.load(open(printed))["rows"]}

for r in doc["results"]:
    key = (r["id"], r["variant"])
    if only and f"{key[0]} {key[1]}" != only:
        continue
    pct = change.get(key)
    if pct is None or not r.get("cost"):
        continue
    by = 1 + pct / 100
    costs.scale(r["cost"], by)
    for each in r["rounds"].get("each", []):
        each["ticks"] *= by
json.dump(doc, open(out, "w"))
PY
}

marked_slower() { # [ROW]: of the printed rows (or the row), how many the last judgement marks slower
    python3 - "$work/printed.json" "$work/judged.json" "${1:-}" <<'PY'
import json, sys
printed, judged, only = sys.argv[1], sys.argv[2], sys.argv[3]
want = {(r["id"], r["variant"]) for r in json.load(open(printed))["rows"]
        if r.get("smallest_detectable_pct") is not None}
if only:
    want = {k for k in want if f"{k[0]} {k[1]}" == only}
rows = [r for r in json.load(open(judged))["rows"] if (r["id"], r["variant"]) in want]
print(sum(r["verdict"] == "slower" for r in rows), len(rows))
PY
}

judge() { # MOVED
    "$mitbench" compare "${compare_args[@]}" --json "$c" "$1" >"$work/judged.json"
}
compare_args=("$@")

move "$work/all.json"
judge "$work/all.json"
read -r all rows < <(marked_slower)
echo "every row moved at once: $all of $rows marked slower"

one=0 tried=0
while IFS= read -r row; do
    move "$work/one.json" "$row"
    judge "$work/one.json"
    read -r hit _ < <(marked_slower "$row")
    one=$((one + hit))
    tried=$((tried + 1))
done < <(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r.get("smallest_detectable_pct") is not None:
        print(r["id"], r["variant"])' "$work/printed.json")
echo "one row moved at a time: $one of $tried marked slower"
