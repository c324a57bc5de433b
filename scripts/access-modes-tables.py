#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables from the CSV of `commitlog bench` runs made by scripts/access-modes-bench.sh.

usage: scripts/access-modes-tables.py TABLE.csv
       scripts/access-modes-tables.py --ab A1.csv A2.csv ... -- B1.csv B2.csv ...

One file: a row per point (its median round), with ops/s and p99 as ratios to the raw
references of the same load: raw-overwrite (write+fdatasync on a pre-written file) and
raw-direct (O_DIRECT+O_DSYNC on one). Points of 1 MiB and more also get MB/s by thread count,
one column per access mode and route.
--ab: every point's median ops/s, CPU µs/op and p99 over the A files and over the B files, and A/B.
"""
import collections
import csv
import statistics
import sys


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def label(r):
    parts = [r["engine"], r["policy"], r["compression"], r["access_mode"], r["large_path"]]
    return " ".join(p for p in parts if p)


def load(r):
    shape = r["threads"] if r["fibers"] == "1" else f'{r["threads"]} x {r["fibers"]}'
    return (int(r["size_bytes"]), int(r["threads"]) * int(r["fibers"]), shape, r["payload"])


def num(x):
    x = float(x)
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"


def ratio(a, b):
    return f"{float(a) / float(b):.2f}" if a and b and float(b) > 0 else "-"


def point_table(rows):
    refs = {(load(r), r["engine"]): r for r in rows if r["engine"].startswith("raw")}
    out = ["| engine | producers | size | ops/s | p50 µs | p99 µs | CPU µs/op | x raw-overwrite | "
           "p99 / raw-overwrite's | x raw-direct |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (load(r)[0], load(r)[1], label(r))):
        over = refs.get((load(r), "raw-overwrite"), {})
        direct = refs.get((load(r), "raw-direct"), {})
        out.append(f'| {label(r)} | {load(r)[2]} | {r["size_bytes"]} | {num(r["ops_per_s"])} | '
                   f'{num(r["p50_us"])} | {num(r["p99_us"])} | {num(r["cpu_us_per_op"])} | '
                   f'{ratio(r["ops_per_s"], over.get("ops_per_s"))} | '
                   f'{ratio(r["p99_us"], over.get("p99_us"))} | {ratio(r["ops_per_s"], direct.get("ops_per_s"))} |')
    return "\n".join(out)


def large_table(rows, size):
    cells = {(int(r["threads"]), label(r)): r["mb_per_s"] for r in rows
             if int(r["size_bytes"]) == size and r["fibers"] == "1"}
    columns = sorted({c for _, c in cells}, key=lambda c: (c.startswith("raw"), c))
    threads = sorted({t for t, _ in cells})
    ref = next((c for c in columns if c == "raw-direct"), None)
    out = [f"MB/s, {size >> 20} MiB mutations (x raw-direct)", "",
           "| threads | " + " | ".join(columns) + " |", "|---:|" + "---:|" * len(columns)]
    for t in threads:
        def cell(c):
            v = cells.get((t, c))
            if v is None:
                return "-"
            return num(v) if c == ref or ref is None else f"{num(v)} ({ratio(v, cells.get((t, ref)))})"
        out.append(f"| {t} | " + " | ".join(cell(c) for c in columns) + " |")
    return "\n".join(out)


def ab_table(a_files, b_files):
    fields = ("ops_per_s", "cpu_us_per_op", "p99_us")

    def pooled(files):
        by_point = collections.defaultdict(list)
        for path in files:
            for r in rows_of(path):
                by_point[(label(r), load(r))].append(r)
        return {k: [statistics.median(float(r[f]) for r in v) for f in fields] for k, v in by_point.items()}
    a, b = pooled(a_files), pooled(b_files)
    out = ["| engine | producers | size | A ops/s | B ops/s | A/B | A CPU µs/op | B CPU µs/op "
           "| A p99 µs | B p99 µs |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key in sorted(a.keys() & b.keys(), key=lambda k: (k[1][0], k[1][1], k[0])):
        (ao, ac, ap), (bo, bc, bp) = a[key], b[key]
        out.append(f"| {key[0]} | {key[1][2]} | {key[1][0]} | {num(ao)} | {num(bo)} | {ratio(ao, bo)} | "
                   f"{ac:.1f} | {bc:.1f} | {num(ap)} | {num(bp)} |")
    return "\n".join(out)


def main(argv):
    if len(argv) >= 4 and argv[1] == "--ab" and "--" in argv:
        split = argv.index("--")
        print(ab_table(argv[2:split], argv[split + 1:]))
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows = rows_of(argv[1])
    print(point_table(rows))
    for size in sorted({int(r["size_bytes"]) for r in rows if int(r["size_bytes"]) >= 1 << 20}):
        print("\n" + large_table(rows, size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
