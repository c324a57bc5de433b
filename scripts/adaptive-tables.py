#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Adaptive against the other durable policies, from one run of

  commitlog bench --policies batch,group:2ms,group:10ms,adaptive --engines commitlog,raw \\
    --producers ... --repeat N --format csv --out adaptive.csv 2> adaptive.log

usage: scripts/adaptive-tables.py adaptive.csv adaptive.log
       scripts/adaptive-tables.py --pool adaptive.log [adaptive.log ...]

The first table is the bench's rows (the median round by ops/s of each point) with adaptive's
ops/s over the best of the others and its p99 over the lowest of theirs; the second gives those
two ratios round by round, and adaptive's p50 over raw's, read from the progress lines on stderr
("[round:point/points] engine, T x F, ...: N ops/s, ..., p50 X µs, p99 Y µs").

With --pool it reads the progress lines of several runs and gives each point's ratios on each
policy's median ops/s and median p99 over all their rounds: steadier than one run's median round.
"""
import collections
import csv
import re
import statistics
import sys

OTHERS = ["commitlog batch", "commitlog group:2ms", "commitlog group:10ms"]
ADAPTIVE = "commitlog adaptive"


def number(x):
    x = float(x)
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def shape(threads, fibers):
    return threads if fibers == "1" else f"{threads} x {fibers}"


def medians(path):
    """Point -> engine label -> CSV row, and the points in order."""
    by, order = collections.defaultdict(dict), []
    for r in csv.DictReader(open(path)):
        name = f"commitlog {r['policy']}" if r["engine"] == "commitlog" else r["engine"]
        key = shape(r["threads"], r["fibers"])
        if key not in order:
            order.append(key)
        by[key][name] = r
    return by, order


def rounds(path):
    """Point -> engine label -> round -> (ops/s, p50, p99)."""
    line = re.compile(r"^\[(\d+):\d+/\d+\] (.+?), (\d+) x (\d+), .*?: (\d+) ops/s, .*? p50 (\d+) µs, p99 (\d+) µs")
    out = collections.defaultdict(lambda: collections.defaultdict(dict))
    for text in open(path):
        m = line.match(text)
        if m:
            rnd, name, threads, fibers, ops, p50, p99 = m.groups()
            out[shape(threads, fibers)][name][int(rnd)] = (float(ops), float(p50), float(p99))
    return out


def round_ratios(d, i):
    """Round i of one point: adaptive's ops/s over the best other's, its p99 over the lowest other's."""
    return (d[ADAPTIVE][i][0] / max(d[o][i][0] for o in OTHERS),
            d[ADAPTIVE][i][2] / min(d[o][i][2] for o in OTHERS))


def main(csv_path, log_path):
    by, order = medians(csv_path)
    print("| producers | batch ops/s | group:2ms | group:10ms | adaptive | raw | adaptive ÷ best "
          "| batch p99 µs | group:2ms | group:10ms | adaptive | adaptive ÷ lowest "
          "| ops/fsync b / g2 / g10 / a |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for key in order:
        d = by[key]
        ops = float(d[ADAPTIVE]["ops_per_s"]) / max(float(d[o]["ops_per_s"]) for o in OTHERS)
        p99 = float(d[ADAPTIVE]["p99_us"]) / min(float(d[o]["p99_us"]) for o in OTHERS)
        print(f"| {key} | " + " | ".join(number(d[n]["ops_per_s"]) for n in OTHERS + [ADAPTIVE, "raw"])
              + f" | {ops:.2f}x | " + " | ".join(number(d[n]["p99_us"]) for n in OTHERS + [ADAPTIVE])
              + f" | {p99:.2f}x | " + " / ".join(number(d[n]["ops_per_fsync"]) for n in OTHERS + [ADAPTIVE])
              + " |")
    print()

    per_round = rounds(log_path)
    print("| producers | ops/s ÷ best other, per round | median | p99 ÷ lowest other, per round "
          "| median | adaptive p50 ÷ raw p50, per round |")
    print("|---|---|---:|---|---:|---|")
    for key in order:
        d = per_round[key]
        ids = sorted(d[ADAPTIVE])
        ops, p99 = map(list, zip(*(round_ratios(d, i) for i in ids)))
        p50 = [d[ADAPTIVE][i][1] / d["raw"][i][1] for i in ids]
        print(f"| {key} | {' '.join(f'{x:.2f}' for x in ops)} | {statistics.median(ops):.2f}x "
              f"| {' '.join(f'{x:.2f}' for x in p99)} | {statistics.median(p99):.2f}x "
              f"| {' '.join(f'{x:.2f}' for x in p50)} |")


def pool(log_paths):
    runs = [rounds(path) for path in log_paths]
    order = list(runs[0])
    print("| producers | rounds | adaptive ops/s ÷ best other | p99 ÷ lowest other "
          "| ops/s ratio, lowest round | p99 ratio, highest round | p50 ÷ raw p50 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in order:
        samples, ops_rounds, p99_rounds = collections.defaultdict(list), [], []
        for run in runs:
            d = run[key]
            for i in d[ADAPTIVE]:
                for name in d:
                    samples[name].append(d[name][i])
                ops_ratio, p99_ratio = round_ratios(d, i)
                ops_rounds.append(ops_ratio)
                p99_rounds.append(p99_ratio)
        med = {name: [statistics.median(x[k] for x in v) for k in range(3)] for name, v in samples.items()}
        ops = med[ADAPTIVE][0] / max(med[o][0] for o in OTHERS)
        p99 = med[ADAPTIVE][2] / min(med[o][2] for o in OTHERS)
        p50 = med[ADAPTIVE][1] / med["raw"][1]
        print(f"| {key} | {len(ops_rounds)} | {ops:.3f}x | {p99:.3f}x "
              f"| {min(ops_rounds):.2f}x | {max(p99_rounds):.2f}x | {p50:.3f}x |")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--pool":
        pool(sys.argv[2:])
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
