"""Reads the series examples/change_series.rs wrote (DIR/<case>-<trial>.csv)
with Apache Otava's change point detection (otava.analysis, as `otava
analyze` runs it: window 50, p < 0.001, no minimum magnitude) and compares
its change points with mitbench's (DIR/mitbench.tsv).

A series agrees where every change point of each tool has one of the
other's within one run (both finding none agrees). Prints per case the
share of series that agree and each tool's mean count of change points.

usage: python3 bench/otava_compare.py DIR
"""
import csv
import sys
from collections import defaultdict

from otava.analysis import compute_change_points


def series_of(path):
    with open(path, newline="") as f:
        return [float(row["value"]) for row in csv.DictReader(f)]


def near(ours, theirs):
    return all(any(abs(a - b) <= 1 for b in theirs) for a in ours)


def main(directory):
    found = {}
    with open(f"{directory}/mitbench.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            points = [int(p) for p in row["change_points"].split(",") if p]
            found[(row["case"], int(row["trial"]))] = points
    cases = defaultdict(lambda: [0, 0, 0, 0])
    for (case, trial), ours in sorted(found.items()):
        series = series_of(f"{directory}/{case}-{trial}.csv")
        points, _ = compute_change_points(series, window_len=50, max_pvalue=0.001)
        theirs = [p.index for p in points]
        tally = cases[case]
        tally[0] += 1
        tally[1] += near(ours, theirs) and near(theirs, ours)
        tally[2] += len(ours)
        tally[3] += len(theirs)
    total = [0, 0]
    print(f"{'case':<20} {'series':>6} {'agree':>7} {'mitbench cps':>13} {'otava cps':>10}")
    for case, (n, agree, ours, theirs) in cases.items():
        print(f"{case:<20} {n:>6} {agree / n:>7.1%} {ours / n:>13.2f} {theirs / n:>10.2f}")
        total[0] += n
        total[1] += agree
    print(f"{'all':<20} {total[0]:>6} {total[1] / total[0]:>7.1%}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
