#!/usr/bin/env python3
"""ab.py: 716c89e's kernels (rounds 1 and 4, *-old) against this commit's (rounds 2 and 3, *-new), DC_PDL
unset. Per op, mode, size and path: each round's median, new/old of the adjacent pairs (2/1 and 3/4) and of
the means; per mode the geometric mean of new/old; the rows over 1.05 in both pairs (issue 11's
virtual-rank target: no size more than 5% slower); and the launch floor of each round."""
import glob, math, re, collections
t = collections.defaultdict(dict)
floor = {}
for f in sorted(glob.glob('round*-*.txt')):
    r = int(re.search(r'round(\d+)-(old|new)\.txt', f).group(1))
    for line in open(f):
        p = line.split()
        if line.startswith('# launch floor'):
            floor[r] = line.split(': ', 1)[1].strip()
        if len(p) < 9 or p[0].startswith('#') or not p[1].isdigit(): continue
        t[(p[0], p[6], int(p[1]), p[7])][r] = float(p[8])
for r in sorted(floor): print('round %d launch floor: %s' % (r, floor[r]))
geo = collections.defaultdict(list); over = []
print('%-15s %-5s %10s %-24s %8s %8s %8s %8s %6s %6s %7s' % ('op', 'mode', 'bytes', 'path', 'r1_old', 'r2_new',
      'r3_new', 'r4_old', '2/1', '3/4', 'new/old'))
for k in sorted(t):
    v = t[k]
    if len(v) < 4: continue
    a, b = (v[1] + v[4]) / 2, (v[2] + v[3]) / 2
    pa, pb = v[2] / v[1], v[3] / v[4]
    geo[k[1]].append(math.log(b / a))
    if min(pa, pb) > 1.05: over.append((k, a, b, pa, pb))
    print('%-15s %-5s %10d %-24s %8.2f %8.2f %8.2f %8.2f %6.3f %6.3f %7.3f' % (k + (v[1], v[2], v[3], v[4], pa, pb, b / a)))
for m, x in sorted(geo.items()):
    print('%s: geometric mean new/old %.3f over %d rows, min %.3f, max %.3f' % (m, math.exp(sum(x) / len(x)), len(x), math.exp(min(x)), math.exp(max(x))))
print('rows over 1.05 in both pairs: %d' % len(over))
for k, a, b, pa, pb in over: print('  %s %s %d %s: %.2f -> %.2f us (pairs %.3f, %.3f)' % (k + (a, b, pa, pb)))
