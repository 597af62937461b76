#!/usr/bin/env python3
"""summarize.py POINTS.txt: points.py's differing points (two databases) by kind: each job's
data favours its own header's path (a swing between the jobs, ratio_db0 > 1 > ratio_db1),
both paths within 1.03 in both jobs' data, or otherwise; and the swing's size, ratio_db0 /
ratio_db1 (how far the two jobs' measurements of the same two paths moved apart)."""
import sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
kinds = {'swing': [], 'tie': [], 'other': []}
for r in rows:
    a, b = float(r[8]), float(r[9])
    k = 'tie' if max(a, 1 / a, b, 1 / b) <= 1.03 else 'swing' if a >= 1 >= b else 'other'
    kinds[k].append(a / b)
print('%d differing points' % len(rows))
for k, v in kinds.items():
    if v:
        v.sort()
        print('  %-5s %3d  swing ratio_db0/ratio_db1: median %.3f, max %.3f' % (k, len(v), v[len(v) // 2], v[-1]))
    else:
        print('  %-5s   0' % k)
