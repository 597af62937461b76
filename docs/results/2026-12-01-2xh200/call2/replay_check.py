#!/usr/bin/env python3
"""replay_check.py A.h B.h A.db B.db: agreement of two thresholds tables on
compare-headers' grid (8 points per octave, 1 KiB..256 MiB, sm 0 rows left
out), each differing point judged on both databases' sweep medians (log-log
between measured sizes, as compare-headers --db does), and each table's
regret on its own job's sweep: at every grid size the before pass measured,
the median of the path the table chooses over the fastest path's median.
agreement-replay.md uses it; tune compare-headers gives the same agreement
figure judged on one database."""
import math
import re
import sqlite3
import sys

ALIGN = {'16': 'align16', 'ANY': 'unaligned', 'REG': 'reg16'}
ROW = re.compile(r'\s*\{(\d+), \d+, DC_TOPO_\w+, DC_OP_(\w+), DC_DTYPE_(\w+), DC_ALIGN_(\w+), '
                 r'DC_MODE_(\w+), \d+, \d+, \{(.*)\}\},')


def table(path):
    rows = {}
    for line in open(path):
        m = ROW.match(line)
        if not m or m.group(1) == '0':
            continue
        segs = [(2**63 if b == 'DC_BYTES_MAX' else int(b), p.lower())
                for b, p in re.findall(r'\{(\w+), DC_PATH_(\w+)\}', m.group(6))]
        rows[(m.group(2).lower(), m.group(3).lower(), ALIGN[m.group(4)], m.group(5).lower())] = segs
    return rows


def path_at(segs, b):
    return next(p for mb, p in segs if b <= mb)


def sweep(db):
    """{(op, dtype, align, mode, path): [(bytes, median)]} of the sweep runs."""
    out = {}
    for op, dt, al, mode, p, b, m in sqlite3.connect(db).execute(
            "SELECT c.op, c.dtype, c.align, c.mode, c.path, c.bytes, avg(c.median_ns) FROM configs c"
            " JOIN runs r ON r.id = c.run_id WHERE r.kind = 'sweep' AND c.skew_ns = 0"
            " AND c.wrong_elems = 0 GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 6"):
        out.setdefault((op, dt, al, mode, p), []).append((b, m))
    return out


def at(series, b):
    lo = max((x for x in series if x[0] <= b), default=None)
    hi = min((x for x in series if x[0] >= b), default=None)
    if lo is None or hi is None:
        return None
    if lo[0] == hi[0]:
        return lo[1]
    t = math.log(b / lo[0]) / math.log(hi[0] / lo[0])
    return math.exp(math.log(lo[1]) + t * (math.log(hi[1]) - math.log(lo[1])))


def agreement(ta, tb, sweeps):
    n = same = 0
    apart = [0] * (len(sweeps) + 1)
    for key in sorted(set(ta) & set(tb)):
        for k in range(18 * 8 + 1):
            b = int(round(1024 * 2 ** (k / 8)))
            n += 1
            pa, pb = path_at(ta[key], b), path_at(tb[key], b)
            if pa == pb:
                same += 1
                continue
            far = []
            for s in sweeps:
                x, y = at(s.get(key + (pa,), []), b), at(s.get(key + (pb,), []), b)
                far.append(not x or not y or max(x, y) / min(x, y) > 1.03)
            for i, f in enumerate(far):
                apart[i] += f
            apart[-1] += any(far)
    return n, same, apart


def regret(t, db):
    grid = {b for (b,) in sqlite3.connect(db).execute(
        "SELECT DISTINCT c.bytes FROM configs c JOIN runs r ON r.id = c.run_id WHERE r.kind = 'before'")}
    med = {}
    for (op, dt, al, mode, p), series in sweep(db).items():
        for b, m in series:
            if b in grid:
                med.setdefault((op, dt, al, mode, b), {})[p] = m
    r = sorted((d.get(path_at(t[k[:4]], k[4]), math.inf) / min(d.values()))
               for k, d in med.items() if k[:4] in t)
    return len(r), sum(x <= 1.03 for x in r), r[-1]


def main():
    ha, hb, da, db = sys.argv[1:5]
    ta, tb = table(ha), table(hb)
    n, same, apart = agreement(ta, tb, [sweep(da), sweep(db)])
    print('agreement: %d of %d points (%.2f%%); %d differ, not within 1.03 of each other in '
          '%s: %d, in %s: %d, in either: %d' % (same, n, 100 * same / n, n - same, da, apart[0], db,
                                                 apart[1], apart[2]))
    for h, t, d in ((ha, ta, da), (hb, tb, db)):
        sizes, ok, worst = regret(t, d)
        print('regret of %s on %s: at most 1.03 at %d of %d sizes (%.2f%%), max %.3f' %
              (h, d, ok, sizes, 100 * ok / sizes, worst))


if __name__ == '__main__':
    main()
