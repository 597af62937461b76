#!/usr/bin/env python3
"""new against old2 in this folder's bench tables (run it here): per row
(table kind, op, size, path) the lower of each build's two rounds, the
ratio new/old2; every large row, the small rows more than 3% apart, and
the geometric mean of the small rows."""
import collections
import glob
import math

d = collections.defaultdict(list)
for f in glob.glob("*-r[12].txt"):
    v = f.split("-")[0]
    kind = f[len(v) + 1:-7]
    for line in open(f):
        x = line.split()
        if x and x[0] in ("all_gather", "all_reduce", "reduce_scatter"):
            d[(kind, x[0], int(x[1]), x[7])].append((v, float(x[8])))
rows = []
for k, vals in sorted(d.items()):
    o = [t for v, t in vals if v == "old2"]
    n = [t for v, t in vals if v == "new"]
    if len(o) == 2 and len(n) == 2:
        rows.append((k, min(o), min(n), min(n) / min(o)))
for k, o, n, r in rows:
    if k[0] != "small" or abs(r - 1) > 0.03:
        print("%-12s %-14s %10d %-22s old2 %9.2f new %9.2f  %.3f" % (k + (o, n, r)))
sm = [r for k, o, n, r in rows if k[0] == "small"]
print("small rows: %d, geometric mean new/old2 %.4f, min %.3f, max %.3f"
      % (len(sm), math.exp(sum(math.log(r) for r in sm) / len(sm)), min(sm), max(sm)))
